"""Types into a real application under Xvfb, through a private IBus with the real engine.

    dbus-run-session -- /usr/bin/python3 desktop_driver.py --app writer|firefox|chromium
        [--control | --ibus-control] [--sync-mode] [--case NAME ...] [--delay MS]

Starts Xvfb, a private ibus-daemon with Inkling as its global engine and a panel recorder (as
Tests/Integration/e2e does), then the application with GTK_IM_MODULE=ibus. With --control there
is no IBus at all (GTK's own simple input method): the same keys, to tell the application's
quirks from the engine's; with --ibus-control, IBus runs its own pass-through engine
(xkb:us::eng) instead of Inkling, to tell IBus's quirks from the engine's. Keys go in with xdotool;
Returns are pressed as the Return key (`xdotool type` sends Linefeed for "\\n", which Writer ignores).
The last line of stdout is a JSON report: {"case": {"ok": bool, "outcome": ..., "expected": ..., "got": ..., ...}, ...}.
"""

import argparse
import difflib
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(os.path.dirname(HERE), "Integration")
sys.path.insert(0, os.path.dirname(HERE))  # Tests/: process_support
sys.path.insert(0, INTEGRATION)
sys.path.insert(0, os.path.join(INTEGRATION, "e2e"))
sys.path.insert(0, HERE)

from ibus_harness import Daemon, Timeout, pump_for, pump_until  # noqa: E402
import e2e_driver  # noqa: E402  (Xvfb, PanelRecorder, the small GTK window App)
import apps  # noqa: E402

# About 120 words of ordinary prose, in lines ended by Return. No quotes or dashes: Writer's
# AutoCorrect is off in the test profile, but the browsers' and Writer's handling of those is
# not what is measured here.
PROSE = [
    "The weather was cold, so we stayed inside and talked about the plans for the summer.",
    "My sister wants to visit the mountains; I would rather spend a week by the sea.",
    "In the end we agreed on both: first the coast, then two days in the hills.",
    "Could you send me the list of hotels? I will check the prices tonight.",
    "We should book the train early, because the tickets get expensive in July.",
    "Thanks again for your help (and for the maps). See you on Friday!",
]


class Panel(e2e_driver.PanelRecorder):
    """The panel recorder, also keeping the auxiliary text (chips and notices)."""

    def __init__(self, bus):
        super().__init__(bus)
        self.aux = []
        self.service.connect("update-auxiliary-text", self.on_aux)
        # A chip withdrawn goes this way: recorded as "", so `chip_shown` sees what is on screen.
        self.service.connect("hide-auxiliary-text", lambda service: self.aux.append(""))

    def on_aux(self, service, text, visible):
        self.aux.append(text.get_text() if visible else "")

    def chip_shown(self, chip):
        """Whether the auxiliary text on screen now shows `chip` (not only showed it once)."""
        return bool(self.aux) and chip in self.aux[-1]


def press(env, *keys, delay=30):
    apps.xdotool(env, "key", "--delay", str(delay), *keys)


def type_text(env, text, delay=30):
    """Types text; each newline is a press of Return."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line:
            # `xdotool type --delay N` types a character every N/2 ms: measured, 100 characters in
            # 1.6 s at `--delay 30` and 3.1 s at `--delay 60` (xdotool 3.20160805, Xvfb), while
            # `xdotool key --delay 30` takes 3.1 s for 100 keys. Until 2026-12-02 (fourth
            # session) the prose went in at 16 ms a character, not the 30 ms it claimed.
            apps.xdotool(env, "type", "--delay", str(2 * delay), line)
        if index < len(lines) - 1:
            press(env, "Return", delay=delay)


def describe_difference(expected, got):
    if got is None:
        return "nothing read back"
    lost = []
    extra = []
    for op, a1, a2, b1, b2 in difflib.SequenceMatcher(None, expected, got, autojunk=False).get_opcodes():
        if op in ("delete", "replace"):
            lost.append(repr(expected[max(0, a1 - 8):a2 + 2]))
        if op in ("insert", "replace"):
            extra.append(repr(got[max(0, b1 - 8):b2 + 2]))
    return "lost around: %s; extra around: %s" % (", ".join(lost) or "-", ", ".join(extra) or "-")


def case_prose(ctx):
    expected = "\n".join(PROSE)
    type_text(ctx.env, expected, ctx.delay)
    got = ctx.app.wait_for("main", expected, "the typed prose", timeout=30)
    if got != expected:
        got = ctx.app.settle()
    result = {"ok": got == expected, "expected_chars": len(expected)}
    if got != expected:
        result.update(got=got, detail=describe_difference(expected, got))
    return result


def select(ctx, word):
    candidates = ctx.panel.tables[-1]
    index = candidates.index(word)
    keys = ["Next"] * (index // ctx.panel.page_size) + ["F%d" % (index % ctx.panel.page_size + 1)]
    press(ctx.env, *keys)


def case_select(ctx):
    """`recomm`, then the F-key of `recommend` in the candidate table (F1…F5, Page_Down)."""
    type_text(ctx.env, "I would like to recomm", ctx.delay)
    try:
        ctx.panel.wait_for(lambda c: "recommend" in c, "recommend among the candidates")
    except Timeout:
        return {"ok": False, "detail": "no table with recommend; last tables: %s" % ctx.panel.tables[-3:],
                "got": ctx.app.settle()}
    # The F-key picks by place in the engine's current table: wait until the engine has stopped
    # sending tables (it sends a newer one after a late key or after the application's
    # surrounding-text report), so that the table read here is the one the F-key meets
    # (before, Writer and the browsers got `recommenced` on a loaded machine).
    apps.settle(lambda: len(ctx.panel.tables), 1.5, 20)
    if "recommend" not in ctx.panel.tables[-1]:
        return {"ok": False, "detail": "recommend not in the last table: %s" % ctx.panel.tables[-1],
                "got": ctx.app.settle()}
    select(ctx, "recommend")
    type_text(ctx.env, " it.", ctx.delay)
    expected = "I would like to recommend it."
    got = ctx.app.wait_for("main", expected, "the completed sentence")
    return {"ok": got == expected, "expected": expected, "got": got}


def case_fix(ctx, typed="I saw teh cat"):
    """`teh` is flagged; Ctrl+Alt+Return applies the fix, or refuses it with a reason."""
    type_text(ctx.env, typed, ctx.delay)
    try:
        # On screen when the fix key goes: a chip shown and withdrawn again leaves nothing to
        # apply, and the key would reach the application (KWrite, 2026-12-03: a newline).
        pump_until(lambda: ctx.panel.chip_shown("teh \u2192 the"), what="the chip teh → the")
    except Timeout:
        return {"ok": False, "detail": "no chip; aux: %s" % ctx.panel.aux[-5:], "got": ctx.app.settle()}
    before = len(ctx.panel.aux)
    press(ctx.env, "ctrl+alt+Return")
    fixed = typed.replace("teh", "the")

    def answered():
        return ctx.app.value_now() == fixed or any(a.startswith("fix not applied") for a in ctx.panel.aux[before:])

    try:
        pump_until(answered, what="the fix or its refusal")
    except Timeout:
        pass
    got = ctx.app.settle(quiet=1.0)
    refusals = [a for a in ctx.panel.aux[before:] if a.startswith("fix not applied")]
    if got == fixed:
        return {"ok": True, "outcome": "applied", "got": got}
    if refusals and got == typed:
        return {"ok": True, "outcome": "refused: " + refusals[-1], "got": got}
    return {"ok": False, "outcome": "wrong", "got": got, "aux": ctx.panel.aux[before:]}


def case_fix_after_space(ctx):
    """The same after `cat. `: the space before the cursor must be proven too."""
    return case_fix(ctx, "I saw teh cat. ")


EMOJI_BEFORE = "\U0001F468\u200D\U0001F469\u200D\U0001F467 \U0001F44D\U0001F3FD "


def case_fix_after_emoji(ctx):
    """After a ZWJ family and an emoji with a skin tone (put there by the application, not
    typed): the fix is exact, or refused with the reason; never a cut."""
    ctx.app.set(EMOJI_BEFORE)
    result = case_fix(ctx, "I saw teh cat")
    typed, fixed = EMOJI_BEFORE + "I saw teh cat", EMOJI_BEFORE + "I saw the cat"
    got = result.get("got")
    if got == fixed:
        return dict(result, ok=True, outcome="applied")
    refusals = [a for a in ctx.panel.aux if a.startswith("fix not applied")]
    if got == typed and refusals:
        return dict(result, ok=True, outcome="refused: " + refusals[-1])
    return dict(result, ok=False)


def case_fix_after_script_edit(ctx):
    """The page's script changes the field after `teh` was typed (no key, no click, no focus
    change: on X11 nothing of it reaches the engine). A fix deleting backward from the cursor on
    the engine's own record would cut the page's text; it must be exact or refused."""
    typed = "I saw teh cat "
    type_text(ctx.env, typed, ctx.delay)
    try:
        pump_until(lambda: ctx.panel.chip_shown("teh \u2192 the"), what="the chip teh → the")
    except Timeout:
        return {"ok": False, "detail": "no chip; aux: %s" % ctx.panel.aux[-5:], "got": ctx.app.settle()}
    ctx.app.wait_for("main", typed, "the typed text")
    edited = typed + "and a dog"
    ctx.app.set(edited)  # textarea.value: the caret goes to the end
    before = len(ctx.panel.aux)
    press(ctx.env, "ctrl+alt+Return")
    fixed = edited.replace("teh", "the")

    def answered():
        return ctx.app.value_now() != edited or any(a.startswith("fix not applied") for a in ctx.panel.aux[before:])

    try:
        pump_until(answered, what="the fix or its refusal")
    except Timeout:
        pass
    got = ctx.app.settle(quiet=1.0)
    refusals = [a for a in ctx.panel.aux[before:] if a.startswith("fix not applied")]
    if got == fixed:
        return {"ok": True, "outcome": "applied", "got": got}
    if got == edited and refusals:
        return {"ok": True, "outcome": "refused: " + refusals[-1], "got": got}
    return {"ok": False, "outcome": "wrong", "got": got, "aux": ctx.panel.aux[before:]}


def case_focus(ctx):
    """A word still composing when the focus moves to another field or window is neither lost
    nor doubled: once the focus is back and a space is typed, the field holds it exactly once
    (Writer and GTK commit it when the focus leaves; a Qt window loses it, and the engine shows
    it again as the composing word when the focus returns)."""
    type_text(ctx.env, "We saw hel", ctx.delay)
    if ctx.panel is not None:
        try:
            ctx.panel.wait_for(lambda c: bool(c), "completions of hel")
        except Timeout:
            pass
    # The focus moves once the application shows the word composing (Writer, the browsers: their
    # text holds the preedit), not merely once the engine has answered: on a loaded machine
    # Writer could still have the preedit queued when its window lost the focus, and then had
    # nothing to commit (`We saw  `). KWrite's saved file holds no preedit.
    composing_shown = None
    if ctx.panel is not None and getattr(ctx.app, "shows_preedit", True):
        composing_shown = ctx.app.wait_for("main", "We saw hel", "the word composing", timeout=10) == "We saw hel"
    mark = engine_mark(ctx)
    other = ctx.app.focus_other()
    # Type into the other field once the input method has seen the focus move (the engine's
    # trace: the browsers send reset, focus-out and focus-in, several times, when the browser
    # process learns of the new field, a little after the page reports it): keys typed before
    # that still go to the old field's context, and Chromium drops the composed one (`x` lost).
    focus_seen = wait_for_focus_change(ctx, mark)
    probe = "x "
    probe_mark = engine_mark(ctx)
    type_text(ctx.env, probe, ctx.delay)
    got_other = other.wait(probe)
    # Whether the engine committed the probe, whole, to the newly focused context (its trace:
    # no focus change between the probe's keys and a commit of its length): tells a probe the
    # application dropped from one the engine lost.
    probe_events = engine_events(ctx, probe_mark)
    committed_probe = None
    if ctx.store is not None:
        committed_probe = False
        for event in probe_events:
            if event.startswith(("focus-", "reset")):
                break
            if event == "commit scalars=%d" % len(probe):
                committed_probe = True
                break
    while_away = ctx.app.value_now()
    ctx.app.focus_back()
    type_text(ctx.env, " ", ctx.delay)
    expected = "We saw hel "
    got = ctx.app.wait_for("main", expected, "the word exactly once")
    if got != expected:
        got = ctx.app.settle(quiet=1.0)
    return {"ok": got == expected and got_other == probe, "expected": expected, "got": got, "other": got_other,
            "while_away": while_away, "composing_shown": composing_shown, "focus_seen": focus_seen,
            "engine_committed_probe": committed_probe}


def engine_mark(ctx):
    """A place in the engine's trace (the daemon's log): `engine_events(ctx, mark)` returns what
    came after it."""
    if ctx.daemon is None:
        return 0
    try:
        return os.path.getsize(ctx.daemon.stderr_path)
    except OSError:
        return 0


def engine_events(ctx, mark):
    """The engine's traced events (names and numbers, never text) since `mark`."""
    if ctx.daemon is None:
        return []
    try:
        with open(ctx.daemon.stderr_path, "rb") as f:
            f.seek(mark)
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    return [line.split(" ", 3)[3] for line in data.splitlines()
            if " event engine=" in line and len(line.split(" ", 3)) == 4]


def wait_for_focus_change(ctx, mark):
    """Waits until the engine has seen a focus change since `mark` and its events have stopped
    for a moment (a focus change is a burst: reset, focus-out, focus-in, capabilities; a browser
    takes its context away for a password field: focus-out only); True when it saw one. Without
    an engine (the control runs) there is nothing to wait for."""
    if ctx.daemon is None or ctx.store is None:
        return None
    try:
        pump_until(lambda: any(e.startswith(("focus-in", "focus-out")) for e in engine_events(ctx, mark)),
                   timeout=15, what="the engine to see the focus move")
    except Timeout:
        return False
    apps.settle(lambda: len(engine_events(ctx, mark)), 0.5, 10)
    return True


def case_password(ctx):
    """A password field: every key reaches the page untouched, no candidates, nothing kept."""
    known_before = learned_keys(ctx, "zebrafish")
    mark = engine_mark(ctx)
    ctx.app.focus("password")
    # Keys typed before the browser process has moved its input context still go to the text
    # field's context as free text (Chromium then drops the composed one: a key lost).
    wait_for_focus_change(ctx, mark)
    tables = len(ctx.panel.tables) if ctx.panel is not None else 0
    typed = "hunter2 teh secret"
    type_text(ctx.env, typed, ctx.delay)
    got = ctx.app.wait_for("password", typed, "the password")
    # The daemon replays a context's (empty) table to the panel on focus changes: only tables
    # with candidates count.
    shown = [t for t in ctx.panel.tables[tables:] if t] if ctx.panel is not None else []
    learned = learned_words(ctx, typed, known_before)
    return {
        "ok": got == typed and not shown and not learned, "got_length": len(got or ""), "tables_shown": len(shown),
        "learned_from_password": len(learned),
    }


def store_keys(ctx):
    """The words in the engine's user store now."""
    if ctx.store is None or not os.path.exists(ctx.store):
        return set()
    import sqlite3

    with sqlite3.connect("file:%s?mode=ro" % ctx.store, uri=True, timeout=10) as db:
        return {row[0] for row in db.execute("SELECT key FROM entries")}


def learned_keys(ctx, marker):
    """The words in the engine's user store once everything typed so far is written: types a
    marker word in the main field and waits until the store holds it (the engine hands changes
    to its writer in order), instead of sleeping for a guessed time."""
    if ctx.store is None:
        return set()
    moves = ctx.app.focused() != "main"
    mark = engine_mark(ctx)
    ctx.app.focus("main")
    if moves:
        wait_for_focus_change(ctx, mark)
    type_text(ctx.env, marker + " ", ctx.delay)
    pump_until(lambda: marker in store_keys(ctx), timeout=30, what="the marker word in the user store")
    return store_keys(ctx)


def learned_words(ctx, typed, known_before):
    """The words of `typed` (and their prefixes) that the store learned since `known_before`: a
    word of a password must never be learned, even from keys that reached the engine before the
    browser knew the field (other cases type some of the same words)."""
    candidates = {word[:n].lower() for word in typed.split() for n in range(2, len(word) + 1)}
    return sorted(candidates & (learned_keys(ctx, "walrus") - known_before))


def warm_up(ctx):
    """Types `.` and deletes it once the field shows it: the input path is live (the first keys
    after a window gets focus may otherwise go before its IBus context is ready)."""
    for attempt in range(3):
        press(ctx.env, "period")
        if ctx.app.wait_for("main", ".", "the warm-up key", timeout=10) == ".":
            break
        ctx.app.clear()
    press(ctx.env, "BackSpace")
    ctx.app.wait_for("main", "", "the warm-up key deleted", timeout=10)
    # A person's pause before the case's text: after a key passed on (the BackSpace) the engine
    # passes the following keys on too, in a client that does not report its text (the browsers
    # on X11) until typing pauses for `PassedKeyOrdering.pauseMilliseconds` (500 ms), so that
    # they keep their order; without this pause a case typed at once would see no candidates.
    pump_for(1.0)
    if ctx.panel is not None:
        ctx.panel.tables.clear()
        ctx.panel.aux.clear()


# US-International dead keys, the way people type accents on a US keyboard.
DEAD_KEY_WORDS = "café naïve señor "
DEAD_KEYS = ["c", "a", "f", "dead_acute", "e", "space", "n", "a", "dead_diaeresis", "i", "v", "e", "space",
             "s", "e", "dead_tilde", "n", "o", "r", "space"]


def dead_keys_outcome(app):
    """The dead-key case's verdict from the application's text (this driver's and the GNOME one's):
    every accented letter arrives once, nothing of the dead keys themselves."""
    got = app.wait_for("main", DEAD_KEY_WORDS, "the words typed with dead keys")
    if got != DEAD_KEY_WORDS:
        got = app.settle()
    result = {"ok": got == DEAD_KEY_WORDS, "expected": DEAD_KEY_WORDS, "got": got}
    if got != DEAD_KEY_WORDS:
        result["detail"] = describe_difference(DEAD_KEY_WORDS, got)
    return result


def case_dead_keys(ctx):
    """US-International dead keys (`setxkbmap us intl` for the case) compose inside the word."""

    def typing():
        press(ctx.env, *DEAD_KEYS, delay=ctx.delay)
        return dead_keys_outcome(ctx.app)

    return e2e_driver.with_layout(ctx.env, "us", "intl", typing)


CASES = {
    "prose": case_prose, "select": case_select, "fix": case_fix, "fix-after-space": case_fix_after_space,
    "fix-after-emoji": case_fix_after_emoji, "fix-after-script-edit": case_fix_after_script_edit,
    "focus": case_focus, "password": case_password, "dead-keys": case_dead_keys,
}
NEEDS_ENGINE = {"select", "fix", "fix-after-space", "fix-after-emoji", "fix-after-script-edit"}
APPS = {"writer": ["prose", "select", "fix", "fix-after-space", "fix-after-emoji", "focus", "dead-keys"],
        "kwrite": ["prose", "select", "fix", "fix-after-space", "fix-after-emoji", "focus", "dead-keys"],
        "firefox": list(CASES), "chromium": list(CASES)}


class Context:
    pass


class BrowserApp:
    def __init__(self, browser):
        self.browser = browser

    def clear(self):
        self.browser.clear()

    def wait_for(self, field, expected, what, timeout=20):
        return self.browser.wait_for(field, expected, what, timeout)

    def settle(self, quiet=1.5):
        return self.browser.settle("main", quiet)

    def value_now(self):
        return self.browser.value("main")

    def set(self, text):
        self.browser.server.command(set=text, focus="main")
        pump_until(lambda: self.browser.value("main") == text, what="the page's text set")

    def focus(self, field):
        self.browser.focus(field)

    def focused(self):
        return self.browser.server.focused

    def focus_other(self):
        self.browser.focus("other")
        browser = self.browser

        class Other:
            def wait(self, expected):
                return browser.wait_for("other", expected, "text in the other field")

        return Other()

    def focus_back(self):
        self.browser.focus("main")

    def stop(self):
        self.browser.stop()


class WriterApp:
    """Writer, plus the small GTK window of the e2e tests as the place focus moves to."""

    def __init__(self, writer, helper):
        self.writer = writer
        self.helper = helper

    def clear(self):
        self.writer.clear()
        apps.xdotool(self.writer.env, "windowfocus", "--sync", self.writer.window)

    def wait_for(self, field, expected, what, timeout=20):
        return self.writer.wait_for(field, expected, what, timeout)

    def settle(self, quiet=1.5):
        return self.writer.settle("main", quiet)

    def value_now(self):
        return self.writer.text()

    def set(self, text):
        self.writer.document.getText().setString(text)
        self.writer.document.getCurrentController().getViewCursor().gotoEnd(False)
        pump_until(lambda: self.writer.text() == text, what="the document's text set")

    def focus_other(self):
        self.helper.request("clear")
        self.helper.request("focus main")
        apps.xdotool(self.writer.env, "windowfocus", "--sync", self.helper_window)
        helper = self.helper

        class Other:
            def wait(self, expected):
                return helper.wait_for_text("main", expected, "text in the other window")

        return Other()

    def focus_back(self):
        apps.xdotool(self.writer.env, "windowfocus", "--sync", self.writer.window)

    def stop(self):
        self.writer.stop()
        if self.helper is not None:
            self.helper.stop()


class KWriteApp(WriterApp):
    """KWrite, plus the small GTK window of the e2e tests as the place focus moves to."""

    shows_preedit = False  # the file saved to read it back holds no preedit

    def clear(self):
        self.writer.clear()
        apps.xdotool(self.writer.env, "windowfocus", "--sync", self.writer.window)

    def value_now(self):
        return self.writer.text()

    def set(self, text):
        self.writer.set(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", choices=sorted(APPS), required=True)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--control", action="store_true", help="no IBus: the application alone")
    parser.add_argument(
        "--ibus-control", action="store_true",
        help="IBus with its own pass-through engine (xkb:us::eng) instead of Inkling:"
             " tells IBus's quirks from the engine's")
    parser.add_argument(
        "--sync-mode", action="store_true",
        help="IBUS_ENABLE_SYNC_MODE=1 in the application's environment: ibus-gtk3 waits for the engine's answer"
             " to each key and handles a reset synchronously (tells ibus-gtk3's asynchronous reset from the engine)")
    parser.add_argument("--delay", type=int, default=int(os.environ.get("INKLING_DESKTOP_DELAY", "30")))
    parser.add_argument(
        "--repeat", type=int, default=1,
        help="runs the cases N times in one application; a case's report counts its runs and keeps its failures")
    parser.add_argument(
        "--trace", metavar="PATH",
        help="the engine traces the IBus events it receives (INKLING_DEBUG_EVENTS=1: names and numbers, never text); "
        "the daemon's log is copied to PATH")
    args = parser.parse_args()
    if not args.control and not args.ibus_control:
        # The engine's trace (names and numbers, never text): the focus case waits on it.
        os.environ["INKLING_DEBUG_EVENTS"] = "1"
    cases = [c for c in (args.case or APPS[args.app]) if c in APPS[args.app]]
    if args.control or args.ibus_control:
        cases = [c for c in cases if c not in NEEDS_ENGINE]

    # Autorepeat off (a delay of 10 minutes): on a loaded machine xdotool's release of a key can
    # come later than the server's repeat delay (660 ms), and the key would be repeated.
    xvfb = e2e_driver.Xvfb(extra_args=["-ardelay", "600000", "-arinterval", "600000"])
    logs = tempfile.mkdtemp(prefix="inkling-desktop-logs-")
    locale_env = {"LC_ALL": "en_US.UTF-8", "LC_CTYPE": "en_US.UTF-8", "LANG": "en_US.UTF-8"}
    daemon = panel = None
    if args.control:
        env = dict(os.environ)
        env.update(locale_env)
        env["GTK_IM_MODULE"] = "gtk-im-context-simple"
        env.pop("IBUS_ADDRESS", None)
    else:
        components = None
        engine_name = "inkling"
        if args.ibus_control:
            with open("/usr/share/ibus/component/simple.xml") as f:
                components = {"simple.xml": f.read()}
            engine_name = "xkb:us::eng"
        daemon = Daemon(
            components=components, global_engine=engine_name,
            env=dict(locale_env, DISPLAY=xvfb.display),
            verbose=bool(os.environ.get("INKLING_DEBUG_EVENTS")) or bool(args.trace),
        ).start()
        panel = Panel(daemon.bus)
        env = dict(daemon.env)
        env["GTK_IM_MODULE"] = "ibus"
    env.update({"DISPLAY": xvfb.display, "GDK_BACKEND": "x11", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none",
                "QT_IM_MODULE": env["GTK_IM_MODULE"]})
    env.pop("WAYLAND_DISPLAY", None)
    if args.sync_mode:
        env["IBUS_ENABLE_SYNC_MODE"] = "1"
    report = {}
    app = None
    try:
        log = os.path.join(logs, "app.log")
        if args.app == "writer":
            helper = e2e_driver.App("gtk3", env, os.path.join(logs, "helper.log"))
            app = WriterApp(None, helper)
            app.helper_window = apps.find_window(env, "^%s$" % helper.ready["title"])
            app.writer = apps.Writer(env, log)
        elif args.app == "kwrite":
            helper = e2e_driver.App("gtk3", env, os.path.join(logs, "helper.log"))
            app = KWriteApp(None, helper)
            app.helper_window = apps.find_window(env, "^%s$" % helper.ready["title"])
            app.writer = apps.KWrite(env, log)
        else:
            app = BrowserApp(apps.Browser(args.app, env, log))
        ctx = Context()
        ctx.app, ctx.env, ctx.panel, ctx.delay, ctx.daemon = app, env, panel, args.delay, daemon
        # The engine's learned words (XDG_DATA_HOME of the private daemon), for the password case.
        ctx.store = None
        if daemon is not None and not args.ibus_control:
            ctx.store = os.path.join(daemon.root, "data", "inkling", "user.sqlite3")
        for run in range(args.repeat):
            for name in cases:
                app.clear()
                warm_up(ctx)
                if panel is not None:
                    panel.tables.clear()
                    panel.aux.clear()
                if daemon is not None and args.trace:
                    # A line in the daemon's log (the engine's stderr goes there too) between cases.
                    daemon.stderr.write("desktop: case %s run %d\n" % (name, run + 1))
                    daemon.stderr.flush()
                try:
                    outcome = CASES[name](ctx)
                except Exception as error:  # report and go on with the next case
                    outcome = {"ok": False, "detail": "%s: %s" % (type(error).__name__, error)}
                if not outcome["ok"] and daemon is not None:
                    outcome["daemon_log"] = daemon.log()[-3000:]
                if args.repeat == 1:
                    report[name] = outcome
                else:
                    summary = report.setdefault(name, {"ok": True, "runs": 0, "failed": 0, "failures": []})
                    summary["runs"] += 1
                    if not outcome["ok"]:
                        outcome["run"] = run + 1
                        summary.update(ok=False, failed=summary["failed"] + 1)
                        summary["failures"].append(outcome)
                # Leave the field empty and its IBus state fresh for the next case.
                if isinstance(app, BrowserApp):
                    app.focus("other")
                    app.focus("main")
    except Exception as error:
        report["__error__"] = "%s: %s" % (type(error).__name__, error)
        try:
            with open(os.path.join(logs, "app.log")) as f:
                report["app_log"] = f.read()[-3000:]
        except OSError:
            pass
    finally:
        if app is not None:
            try:
                app.stop()
            except Exception:
                pass
        if daemon is not None:
            if args.trace:
                with open(args.trace, "w") as f:
                    f.write(daemon.log())
            daemon.stop()
        xvfb.stop()
        shutil.rmtree(logs, ignore_errors=True)
    print(json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    main()
