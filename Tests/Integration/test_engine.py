"""The engine through a real ibus-daemon and a real IBus client (headless, no X)."""

import contextlib
import json
import os
import subprocess
import sys
import time

import pytest

from ibus_harness import (
    CONTROL,
    RELEASE,
    REPO,
    Client,
    IBus,
    cli_path,
    drain,
    engine_path,
    pump_until,
    rss_kb,
)

HERE = os.path.dirname(os.path.abspath(__file__))


def wait_for_completions(client, prefix, containing=None):
    """The page shown of the completions of `prefix`; with `containing`, pages down (Page_Down)
    until that word shows: the engine sends the words of the page shown only."""

    def ok(candidates):
        return bool(candidates) and all(c.lower().startswith(prefix) for c in candidates)

    candidates = client.wait_for_table(ok, what="completions of %r" % prefix)
    for _ in range(3):
        if containing is None or containing in candidates:
            return candidates
        assert client.sent_tables[-1][-1:] == [""], "%r is on no page: %r" % (containing, client.sent_tables[-1])
        updates = len(client.tables)
        assert client.key(IBus.KEY_Page_Down)
        pump_until(lambda: len(client.tables) > updates, what="the next page of %r" % prefix)
        candidates = client.tables[-1]
        assert ok(candidates), candidates
    assert containing in candidates, (containing, candidates)
    return candidates


def select(client, word):
    """Selects `word` from the page shown with the F-key of its row."""
    index = client.tables[-1].index(word)
    before = len(client.commits)
    assert client.key(IBus.KEY_F1 + index)
    return client.commits[before:]


def sync(client):
    """A round trip through the engine: everything it sent before has arrived afterwards."""
    client.key(IBus.KEY_Shift_L)


# -- the component ------------------------------------------------------------------------------


def test_xml_is_the_template_with_the_absolute_engine_path():
    engine = engine_path()
    xml = subprocess.run([engine, "--xml"], check=True, capture_output=True, text=True).stdout
    with open(os.path.join(REPO, "ibus-component", "inkling.xml.in")) as f:
        template = f.read()
    setup = os.path.join(os.path.dirname(engine), "inkling-setup")
    assert xml == template.replace("@EXEC@", engine).replace("@SETUP@", setup)
    assert "<setup>%s</setup>" % setup in xml
    assert "<exec>%s --supervise --ibus</exec>" % engine in xml
    version = subprocess.run([engine, "--version"], check=True, capture_output=True, text=True).stdout
    assert version.startswith("ibus-engine-inkling ")


# -- composing ----------------------------------------------------------------------------------


def test_letters_build_an_underlined_preedit(client):
    for ch in "hel":
        assert client.key(ord(ch))
    assert client.preedit == ("hel", 3, True)
    assert (int(IBus.AttrType.UNDERLINE), int(IBus.AttrUnderline.SINGLE), 0, 3) in client.preedit_attrs
    assert client.commits == []
    wait_for_completions(client, "hel", "hello")


def test_the_table_arrives_whole_with_its_labels_and_settings(client):
    # The engine serializes its signals itself (IBusWire, issue 18): what the daemon hands the
    # client must be what libibus would have sent, down to the labels and the table's settings.
    client.type("hel")
    wait_for_completions(client, "hel", "hello")
    table = client.last_table
    size = table.get_page_size()
    assert size == 5
    assert [table.get_label(i).get_text() for i in range(size)] == ["F%d" % (i + 1) for i in range(size)]
    assert table.get_orientation() == int(IBus.Orientation.SYSTEM)
    assert table.is_round()
    assert not table.is_cursor_visible()
    for i in range(table.get_number_of_candidates()):
        attributes = table.get_candidate(i).get_attributes()
        assert attributes is None or attributes.get(0) is None


def test_f_key_commits_exactly_the_selected_candidate(client):
    client.type("hel")
    wait_for_completions(client, "hel", "hello")
    assert select(client, "hello") == ["hello"]
    assert client.text == "hello"
    # The pending space is shown as preedit, not underlined.
    assert client.preedit == (" ", 1, True)
    assert not [a for a in client.preedit_attrs if a[0] == int(IBus.AttrType.UNDERLINE)]
    # A letter commits it.
    assert client.key(ord("w"))
    assert client.commits == ["hello", " "]
    assert client.shown == "hello w"


def test_space_commits_the_typed_word_and_a_space(client):
    client.type("cat")
    assert client.key(IBus.KEY_space)
    assert client.commits == ["cat "]
    assert client.text == "cat "
    assert not client.preedit[2]


def test_return_commits_the_word_and_the_application_gets_the_newline(client):
    client.type("cat")
    assert not client.key(IBus.KEY_Return)
    assert client.commits == ["cat"]
    assert client.text == "cat\n"
    assert not client.preedit[2]


def test_comma_after_a_selected_candidate_has_no_space_before_it(client):
    client.type("hel")
    wait_for_completions(client, "hel", "hello")
    select(client, "hello")
    # The engine types the comma itself (keeping its order among the commits), dropping the space.
    assert client.key(ord(","))
    assert client.commits[-1] == ","
    assert client.text == "hello,"
    assert not client.preedit[2]
    client.type(" world.")
    assert client.text == "hello, world."


def test_space_after_a_selected_candidate_confirms_the_pending_space(client):
    client.type("hel")
    wait_for_completions(client, "hel", "hello")
    select(client, "hello")
    client.type(" world.")
    assert client.text == "hello world."
    assert client.commits == ["hello", " ", "world."], "the period is committed with the word"


def test_backspace_edits_the_preedit_then_passes_through(client):
    client.type("hex")
    assert client.key(IBus.KEY_BackSpace)
    assert client.preedit == ("he", 2, True)
    client.key(IBus.KEY_BackSpace)
    client.key(IBus.KEY_BackSpace)
    assert not client.preedit[2]
    assert client.commits == []
    client.text = "ab"
    assert not client.key(IBus.KEY_BackSpace)
    assert client.text == "a"


def test_tab_highlights_and_space_commits_the_highlighted_candidate(client):
    client.type("hel")
    candidates = wait_for_completions(client, "hel")
    assert client.key(IBus.KEY_Tab)
    assert client.last_table.is_cursor_visible()
    assert client.last_table.get_cursor_pos() == 0
    assert client.key(IBus.KEY_space)
    assert client.commits == [candidates[0] + " "]


@contextlib.contextmanager
def acting_as_panel(client):
    """Owns the panel's bus name (its arrows and page buttons reach the engine as signals through
    the daemon, not as keys) and moves the focus so the daemon tells this panel which context has it."""
    bus = client.daemon.bus
    panel = IBus.PanelService.new(bus.get_connection())
    bus.request_name(IBus.SERVICE_PANEL, 0)
    try:
        client.focus_out()
        client.focus_in()
        yield panel
    finally:
        bus.release_name(IBus.SERVICE_PANEL)


def test_the_panels_highlight_and_page_requests_move_the_table(client):
    # A panel's arrows and page buttons reach the engine as signals through the daemon, not as
    # keys: act as the panel (own its bus name) and send them.
    with acting_as_panel(client) as panel:
        client.type("th")
        candidates = wait_for_completions(client, "th", "the")
        assert len(candidates) == 5 and client.sent_tables[-1][5:] == [""], "a later page exists"

        def after(send, what):
            updates = len(client.tables)
            send()
            pump_until(lambda: len(client.tables) > updates, what=what)
            return client.last_table

        table = after(panel.cursor_down, "the table after the panel's cursor-down")
        assert table.is_cursor_visible() and table.get_cursor_pos() == 0
        assert after(panel.cursor_down, "a second cursor-down").get_cursor_pos() == 1
        assert after(panel.cursor_up, "cursor-up").get_cursor_pos() == 0
        table = after(panel.page_down, "page-down")
        assert table.get_cursor_pos() >= table.get_page_size(), (table.get_cursor_pos(), table.get_page_size())
        assert client.commits == [] and client.preedit[0] == "th", "moving the highlight commits nothing"


def test_only_the_shown_page_is_sent_and_page_two_is_selected_by_key_and_click(client):
    # Issue 18: the engine sends the text of the shown page only; Page_Down sends the next page
    # (placeholders before it keep the cursor a global index), F2 and a click pick its rows.
    with acting_as_panel(client) as panel:
        client.type("th")
        first = wait_for_completions(client, "th", "the")
        size = client.last_table.get_page_size()
        assert len(first) == size and client.sent_tables[-1] == first + [""], client.sent_tables[-1]
        updates = len(client.tables)
        assert client.key(IBus.KEY_Page_Down)
        pump_until(lambda: len(client.tables) > updates, what="page 2 after Page_Down")
        second = client.tables[-1]
        assert second and all(w.lower().startswith("th") for w in second), second
        assert not set(second) & set(first), (first, second)
        assert client.sent_tables[-1][:size] == [""] * size, "page 1's words are not sent again"
        assert client.last_table.get_cursor_pos() == size
        # The panel's page-up brings page 1 back, its page-down page 2 again.
        updates = len(client.tables)
        panel.page_up()
        pump_until(lambda: len(client.tables) > updates, what="page 1 after the panel's page-up")
        assert client.tables[-1] == first
        updates = len(client.tables)
        panel.page_down()
        pump_until(lambda: len(client.tables) > updates, what="page 2 after the panel's page-down")
        assert client.tables[-1] == second
        # A click on row 2 of page 2 (the panel's index is within the page).
        panel.candidate_clicked(1, 1, 0)
        pump_until(lambda: client.commits, what="the clicked candidate")
        assert client.commits == [second[1]]
        # And by key: F2 on page 2 of the next word.
        client.key(IBus.KEY_space)
        client.type("th")
        wait_for_completions(client, "th", "the")
        updates = len(client.tables)
        assert client.key(IBus.KEY_Page_Down)
        pump_until(lambda: len(client.tables) > updates, what="page 2 of the second word")
        row = client.tables[-1][1]
        before = len(client.commits)
        assert client.key(IBus.KEY_F2)
        assert client.commits[before:] == [row]


def test_escape_hides_the_table_and_keeps_the_word(client):
    client.type("hel")
    wait_for_completions(client, "hel")
    assert client.key(IBus.KEY_Escape)
    assert not client.table_visible
    assert client.preedit == ("hel", 3, True)
    client.key(IBus.KEY_space)
    assert client.text == "hel "


# -- what passes through --------------------------------------------------------------------------


def test_releases_modifiers_and_shortcuts_pass_through(client):
    assert not client.key(IBus.KEY_Shift_L, release=False)
    assert not client.key(IBus.KEY_Control_L, release=False)
    assert not client.key(ord("a"), RELEASE)
    assert not client.key(IBus.KEY_Shift_L, RELEASE)
    assert not client.key(ord("c"), CONTROL)
    assert client.preedit_updates == [] or not any(p[0] for p in client.preedit_updates)
    # Releases of typing keys are passed through too.
    client.type("ok")
    assert all(not handled for (_, state, handled) in client.handled if state & RELEASE)


def test_password_field_gets_nothing(client):
    client.set_content_type(IBus.InputPurpose.PASSWORD)
    client.preedit_updates.clear()
    client.tables.clear()
    for ch in "hunter2 secret":
        keyval = IBus.KEY_space if ch == " " else IBus.unicode_to_keyval(ch)
        assert not client.key(keyval)
    assert not client.key(IBus.KEY_F1)
    assert not client.key(IBus.KEY_Return)
    sync(client)
    drain()
    assert client.commits == []
    assert not [p for p in client.preedit_updates if p[0]]
    assert not [t for t in client.tables if t]
    assert client.text == "hunter2 secret\n"


def test_pin_field_gets_nothing(client):
    client.set_content_type(IBus.InputPurpose.PIN)
    client.tables.clear()
    for ch in "1234":
        assert not client.key(ord(ch))
    sync(client)
    assert client.commits == [] and not [t for t in client.tables if t]


# -- focus and reset -------------------------------------------------------------------------------


@pytest.mark.parametrize("client_commits", [False, True], ids=["daemon-commits", "gtk-like-client"])
def test_focus_out_delivers_the_preedit_exactly_once(daemon, client_commits):
    client = Client(daemon, client_commit=client_commits)
    try:
        client.focus_in()
        client.set_engine("inkling")
        client.type("hel")
        wait_for_completions(client, "hel")
        if client_commits:
            # The daemon passes the mode on only to clients that commit the preedit themselves.
            assert client.preedit_mode == IBus.PreeditFocusMode.COMMIT
        client.focus_out()
        pump_until(lambda: "hel" in client.text, what="the preedit to be committed on focus-out")
        client.focus_in()
        client.key(ord("x"))
        pump_until(lambda: client.preedit[0] == "x", what="the next preedit")
        assert client.text == "hel"
        assert client.shown == "helx"
    finally:
        client.focus_out()
        client.destroy()


@pytest.mark.parametrize("client_commits", [False, True], ids=["daemon-commits", "gtk-like-client"])
def test_reset_delivers_the_preedit_exactly_once(daemon, client_commits):
    client = Client(daemon, client_commit=client_commits)
    try:
        client.focus_in()
        client.set_engine("inkling")
        client.type("wor")
        client.reset()
        pump_until(lambda: "wor" in client.text, what="the preedit to be committed on reset")
        client.key(ord("x"))
        pump_until(lambda: client.preedit[0] == "x", what="the next preedit")
        assert client.text == "wor"
    finally:
        client.focus_out()
        client.destroy()


# -- surrounding text ------------------------------------------------------------------------------


def suggestions_with_the_engines_learned_words(daemon, text, shown, compared=None):
    """`inkling suggest` for `text` with the engine's own learned words: the engine learns what
    earlier tests in this daemon committed (`the`, `there's`…), which may reorder close
    candidates, so a comparison with the pack alone depended on which tests ran before. The
    engine writes its store in batches, once a second: asked again until the first `compared`
    words equal the engine's `shown` list (its last write landed) or 10 s pass; the last answer."""
    cli = cli_path()
    assert os.access(cli, os.X_OK), "the inkling CLI is built beside the engine"
    compared = compared or len(shown)
    deadline = time.monotonic() + 10
    while True:
        answer = subprocess.run([cli, "suggest", text, "-n", str(len(shown))], env=daemon.env,
                                capture_output=True, text=True, check=True).stdout.split("\n")
        if answer[:compared] == shown[:compared] or time.monotonic() > deadline:
            return answer
        time.sleep(0.1)


def test_surrounding_text_with_emoji_gives_next_word_predictions(daemon, client):
    context = "\U0001F600 I would like to "
    client.wait_for_surrounding_request()
    client.tables.clear()
    client.set_surrounding(context)
    candidates = client.wait_for_table(what="next-word predictions after the surrounding text")
    assert all(c and " " not in c for c in candidates)
    expected = suggestions_with_the_engines_learned_words(daemon, context, candidates)
    assert candidates == expected[: len(candidates)]
    # Completing the next word follows the same context.
    client.key(ord("t"))
    wait_for_completions(client, "t")


def test_the_first_word_after_a_greeting_line_is_completed_as_a_sentence_start(daemon, client):
    # A client whose surrounding text holds the lines before the cursor: the first word of a
    # message's body after `Hello,` and a blank line was completed as the word after `Hello,`
    # (There, The, That…).
    client.wait_for_surrounding_request()
    client.text = "Hello,\n\n"
    client.set_surrounding(client.text)
    client.tables.clear()
    client.type("Th")
    candidates = client.wait_for_table(
        lambda c: bool(c) and all(x.startswith("Th") for x in c), what="completions of Th after the greeting line")
    at_start = suggestions_with_the_engines_learned_words(daemon, "Th", candidates, compared=5)
    assert candidates[:5] == at_start[:5], (candidates, at_start)


def test_surrounding_text_offsets_beyond_the_text_are_ignored(client):
    client.wait_for_surrounding_request()
    client.tables.clear()
    # UTF-16 offsets (as Qt sends): the cursor lies beyond the code-point length.
    client.set_surrounding("x\U0001F600", 3, 3)
    sync(client)
    client.type("hel")
    wait_for_completions(client, "hel", "hello")


# -- memory ---------------------------------------------------------------------------------------


# Issue 18: every focus-in registers the input-source menu, whose three sentences went through
# `tr`; each `tr` call leaked about 96 bytes (a closure taken out of a Mutex), 2 kB per context.
def test_a_thousand_input_contexts_do_not_grow_the_engine(daemon):
    def cycle():
        c = Client(daemon, echo_surrounding=False)
        c.focus_in()
        if c.ic.get_engine() is None or c.ic.get_engine().get_name() != "inkling":
            c.set_engine("inkling")
        c.type("hel")
        c.key(IBus.KEY_space)
        c.focus_out()
        c.destroy()
        return c

    for _ in range(100):
        cycle()
    pid = daemon.engine_pid()
    assert pid is not None, "engine process not found"
    before = rss_kb(pid)
    for _ in range(1000):
        c = cycle()
    assert c.commits and c.commits[0] == "hel "
    assert daemon.engine_pid() == pid, "the engine process was restarted"
    after = rss_kb(pid)
    print("engine VmRSS: %d kB -> %d kB after 1000 contexts" % (before, after))
    assert after - before < 2048, "engine RSS grew by %d kB" % (after - before)


def test_a_thousand_focus_changes_and_content_types_do_not_grow_the_engine(daemon):
    """The rest of issue 18's class on one context: focus-in re-registers the menu (where the
    leak was), content-type changes and focus-out settle the session; none may keep memory."""
    c = Client(daemon, echo_surrounding=False)
    c.focus_in()
    c.set_engine("inkling")
    purposes = [IBus.InputPurpose.FREE_FORM, IBus.InputPurpose.EMAIL, IBus.InputPurpose.URL]

    def cycle(i):
        c.ic.set_content_type(purposes[i % len(purposes)], 0)
        c.type("hel")
        c.key(IBus.KEY_space)
        c.focus_out()
        c.focus_in()

    for i in range(100):
        cycle(i)
    pid = daemon.engine_pid()
    assert pid is not None, "engine process not found"
    before = rss_kb(pid)
    c.commits.clear()
    for i in range(1000):
        cycle(i)
    assert "hel " in c.commits
    after = rss_kb(pid)
    c.focus_out()
    c.destroy()
    print("engine VmRSS: %d kB -> %d kB after 1000 focus changes" % (before, after))
    # Before the fix: about 2.1 MB; after it about 0.1 MB.
    assert after - before < 1024, "engine RSS grew by %d kB" % (after - before)


# -- robustness (separate daemons) ----------------------------------------------------------------


def run_check(*args):
    result = subprocess.run(
        [sys.executable, os.path.join(HERE, "check_engine.py")] + list(args),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("pack", ["missing", "corrupt"])
def test_without_a_usable_pack_every_key_passes_through(pack, tmp_path):
    report = run_check("--pack", pack, "--workdir", str(tmp_path))
    assert report["handled"] == [], report
    assert report["preedit"] == [] and report["tables"] == [] and report["commits"] == []
    assert report["engine_alive"]
    assert "keys will pass through unchanged" in report["log"]


def test_without_options_the_engine_registers_its_component_itself(tmp_path):
    report = run_check("--pack", "bundled", "--workdir", str(tmp_path), "--register")
    assert report["engine_alive"]
    assert report["handled"], report  # letters composed: the engine, not the daemon, had them
    assert report["preedit"] and report["tables"]


def test_debug_memory_logs_numbers_and_never_text(tmp_path):
    report = run_check("--pack", "bundled", "--workdir", str(tmp_path), "--debug-memory", "5", "--debug-events")
    lines = [line for line in report["log"].splitlines() if "memory keys=" in line]
    assert len(lines) >= 2, report["log"]
    fields = dict(f.split("=", 1) for f in lines[0].split() if "=" in f)
    for name in ("keys", "rss_kb", "hwm_kb", "pack_mapped_bytes", "engines_live", "suggest_us_p50",
                 "work_cpu_us_p50", "predict_cpu_us_p50", "send_cpu_us_p50"):
        assert fields[name].isdigit(), (name, lines[0])
    assert int(fields["pack_mapped_bytes"]) > 1_000_000
    assert int(fields["rss_kb"]) > 0
    events = [line for line in report["log"].splitlines() if " event engine=" in line]
    assert any("focus-in" in line for line in events), report["log"]
    assert any("set-surrounding-text scalars=13 cursor=13" in line for line in events), events
    assert any("key handled=true" in line for line in events), events
    for word in ("zebra", "quokka", "zebr", "Dear"):
        assert word not in report["log"]


def test_engine_objects_replaced_by_the_daemon_are_freed(tmp_path):
    report = run_check("--pack", "bundled", "--workdir", str(tmp_path), "--debug-memory", "1", "--switch", "300")
    last = [line for line in report["log"].splitlines() if "memory keys=" in line][-1]
    fields = dict(f.split("=", 1) for f in last.split() if "=" in f)
    assert report["engine_pid_unchanged"]
    assert int(fields["engines_created"]) >= 300
    assert int(fields["engines_live"]) <= 2, last
    growth = report["rss_kb_after_switches"] - report["rss_kb_before_switches"]
    assert growth < 2048, "engine RSS grew by %d kB over 300 engine objects" % growth
