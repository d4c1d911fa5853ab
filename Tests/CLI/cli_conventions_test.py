#!/usr/bin/env python3
"""Command-line conventions of the executables, through the real binaries.

usage: cli_conventions_test.py --bin DIR --pack PACK --man packaging/inkling.1
DIR holds inkling, ibus-engine-inkling, inkling-cloud, inkling-dictate, inkling-setup and
inkling-server (a release or debug build).
Prints PASS/FAIL per test and finally `N passed, N failed`; exit 1 on a failure.

Covers: --help/-h and --version on every command and subcommand, unknown options (exit 2 and
a usage line), the man page against the --help texts (every command, subcommand and option in
both), `inkling suggest` with learned words, `learned wipe` confirmation, and the predict
server's limits (a count that is a surrogate code point, a 100 MB line).
"""

import argparse
import json
import os
import pty
import re
import select
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback

ARGS = argparse.Namespace()
TESTS = []
USAGE_EXIT = 2
STANDARD_OPTIONS = {"-h", "--help", "--version"}


def test(function):
    TESTS.append(function)
    return function


def binary(name):
    return os.path.join(ARGS.bin, name)


def run(program, *arguments, env=None, input=None):
    return subprocess.run([binary(program), *arguments], capture_output=True, text=True, env=env, input=input,
                          stdin=None if input is not None else subprocess.DEVNULL, timeout=120)


def inkling(*arguments, **kwargs):
    return run("inkling", *arguments, **kwargs)


def private_env():
    """An environment whose default user store is a fresh, empty folder."""
    home = tempfile.mkdtemp(prefix="inkling-conv-")
    return dict(os.environ, XDG_DATA_HOME=os.path.join(home, "data"), HOME=os.path.join(home, "home")), home


# -- the --help tree ----------------------------------------------------------------------------


def section(text, title):
    """The indented lines after `title:` up to the next blank line."""
    lines = text.split("\n")
    if title + ":" not in lines:
        return []
    start = lines.index(title + ":") + 1
    out = []
    for line in lines[start:]:
        if not line.strip():
            break
        out.append(line)
    return out


def help_options(text):
    """Option names in the `options:` section of a --help text."""
    names = set()
    for line in section(text, "options"):
        if line.startswith("  -"):
            label = line.strip().split("  ")[0]
            names.update(token.rstrip(",") for token in label.split() if token.startswith("-"))
    return names


def help_commands(text):
    return [line.split()[0] for line in section(text, "commands")
            if line.startswith("  ") and not line.startswith("   ")]


def help_tree(program="inkling", words=()):
    """{(program, words...): help text} for the program and all its commands and subcommands."""
    result = run(program, *words, "--help")
    assert result.returncode == 0, (program, words, result.stderr)
    tree = {(program, *words): result.stdout}
    for command in help_commands(result.stdout):
        tree.update(help_tree(program, (*words, command)))
    return tree


TREE = {}
# The programs beside `inkling` whose command lines follow the same conventions (CommandSpec).
HELPERS_AND_APPS = ("ibus-engine-inkling", "inkling-cloud", "inkling-dictate", "inkling-setup")


def tree():
    if not TREE:
        TREE.update(help_tree())
        for program in HELPERS_AND_APPS:
            TREE[(program,)] = run(program, "--help").stdout
    return TREE


@test
def every_command_and_subcommand_has_help_with_exit_statuses():
    commands = tree()
    assert ("inkling", "suggest") in commands and ("inkling", "learned", "wipe") in commands, sorted(commands)
    assert len(commands) >= 25, sorted(commands)
    for path in commands:
        for flag in ("-h", "--help"):
            result = run(path[0], *path[1:], flag)
            assert result.returncode == 0, (path, flag, result.returncode, result.stderr)
            assert result.stdout.startswith("usage: " + " ".join(path)), (path, flag, result.stdout[:200])
            assert "exit status: 0 success, 1 failure, 2 usage error" in result.stdout, (path, flag)
            assert result.stderr == "", (path, flag, result.stderr)
    # `suggest -h` is help, not suggestions for the text "-h"; `--` makes it text.
    assert inkling("suggest", "-h").stdout.startswith("usage: inkling suggest")
    text = inkling("suggest", "--no-learned", "--pack", ARGS.pack, "--", "-h")
    assert text.returncode == 0 and "usage" not in text.stdout, text
    assert inkling("help", "learned").stdout == inkling("learned", "--help").stdout


@test
def every_program_prints_its_version():
    for program, words in (("inkling", ()), ("inkling", ("suggest",)), ("inkling", ("learned", "wipe")),
                           *((program, ()) for program in HELPERS_AND_APPS + ("inkling-server",))):
        result = run(program, *words, "--version")
        assert result.returncode == 0, (program, words, result)
        assert re.fullmatch(re.escape(program) + r" \d+\.\d+\.\d+\n", result.stdout), (program, words, result.stdout)


@test
def unknown_options_are_usage_errors_everywhere():
    for path in tree():
        result = run(path[0], *path[1:], "--no-such-option")
        assert result.returncode == USAGE_EXIT, (path, result.returncode, result.stdout[:200], result.stderr)
        assert "unknown option '--no-such-option'" in result.stderr, (path, result.stderr)
        assert "usage: " in result.stderr and result.stdout == "", (path, result.stderr, result.stdout[:200])
    for words in (("frobnicate",), (), ("learned",), ("learned", "frobnicate"), ("learned", "forget"),
                  ("learned", "forget", "a", "b"), ("packs", "install"), ("suggest", "-n"), ("suggest", "-n", "x"),
                  ("predict",), ("pack", "build")):
        result = inkling(*words)
        assert result.returncode == USAGE_EXIT, (words, result.returncode, result.stderr)
        assert "usage: " in result.stderr, (words, result.stderr)
        first = result.stderr.split("\n")[0]
        assert first.startswith("inkling"), (words, first)
    assert run("ibus-engine-inkling", "--xml", "--ibus").returncode == USAGE_EXIT


def expect_usage_error(program, arguments, first_line):
    """A usage error: exit 2, nothing on stdout; on stderr the sentence, the usage and the hint."""
    result = run(program, *arguments)
    assert result.returncode == USAGE_EXIT, (program, arguments, result.returncode, result.stderr)
    assert result.stdout == "", (program, arguments, result.stdout[:200])
    lines = result.stderr.split("\n")
    assert lines[0] == "%s: %s" % (program, first_line), (program, arguments, result.stderr)
    assert lines[1].startswith("usage: %s " % program), (program, arguments, result.stderr)
    assert lines[2:] == ["Run '%s --help' for more." % program, ""], (program, arguments, result.stderr)


@test
def every_program_answers_help_version_and_bad_options_on_the_right_stream():
    """Help and version on stdout with exit 0; usage errors, from the parser or from a program's
    own checks of its values, on stderr with exit 2, in the same three-part form everywhere."""
    for program in HELPERS_AND_APPS:
        for flag in ("-h", "--help"):
            result = run(program, flag)
            assert result.returncode == 0 and result.stderr == "", (program, flag, result)
            assert result.stdout.startswith("usage: %s" % program), (program, flag, result.stdout[:200])
        version = run(program, "--version")
        assert version.returncode == 0 and version.stderr == "", (program, version)
        assert re.fullmatch(re.escape(program) + r" \d+\.\d+\.\d+\n", version.stdout), (program, version.stdout)
        expect_usage_error(program, ["--no-such-option"], "unknown option '--no-such-option'")
    # The helpers' own checks of their values (Options.init) are usage errors of the same form.
    expect_usage_error("inkling-dictate", ["--fast"], "--fast needs --audio-file")
    expect_usage_error("inkling-cloud", [], "--endpoint is required")
    expect_usage_error("inkling-cloud", ["--endpoint", "http://example.com"],
                       "--endpoint uses http:// to a host that is not this machine; use https://")
    expect_usage_error("inkling-cloud", ["--endpoint", "https://e", "--timeout-ms", "5"],
                       "--timeout-ms takes a whole number from 100 to 120000")
    # The helpers never quote an argument (it could be a secret pasted in the wrong place).
    expect_usage_error("inkling-cloud", ["--endpoint", "https://e", "sk-secret"], "unexpected argument")
    expect_usage_error("inkling-setup", ["--page"], "--page needs a value (PAGE)")
    # inkling-server has a usage of its own (commands after an optional --config), same streams.
    for flag in ("-h", "--help"):
        result = run("inkling-server", flag)
        assert result.returncode == 0 and result.stderr == "", (flag, result)
        assert result.stdout.startswith("Usage: inkling-server"), (flag, result.stdout[:200])
    for arguments, first_line in ((["--config"], "--config needs a path"), ([], "a command is required")):
        result = run("inkling-server", *arguments)
        assert result.returncode == USAGE_EXIT and result.stdout == "", (arguments, result)
        # Named once (the log adds the name; it used to say `inkling-server: inkling-server: …`).
        assert result.stderr.split("\n")[0] == "inkling-server: " + first_line, (arguments, result.stderr)
        assert "Usage: inkling-server" in result.stderr, (arguments, result.stderr)


# -- the man page -------------------------------------------------------------------------------


def man_sections():
    """{title: [item lines]} of the man page's `.SS` sections, roff escapes removed."""
    text = open(ARGS.man, encoding="utf-8").read()
    sections = {}
    current = None
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.startswith(".SH"):
            current = None
        elif line.startswith(".SS"):
            current = plain(line[3:])
            sections[current] = []
        elif current and line.startswith((".TP", ".TQ")) and index + 1 < len(lines):
            sections[current].append(plain(lines[index + 1]))
    return sections


def plain(roff):
    text = re.sub(r"^\.[A-Z]+\s*", "", roff.strip())
    text = text.replace("\\-", "-").replace("\\fR", "").replace("\\fP", "").replace("\\fI", "").replace("\\fB", "")
    return text.replace('"', "").strip()


def man_item_names(items):
    """(subcommands, options) named by the items of a section."""
    subcommands, options = set(), set()
    for item in items:
        tokens = re.findall(r"(?<![\w-])-{1,2}[a-zA-Z][\w-]*", item)
        if item.startswith("-"):
            options.update(tokens)
        else:
            subcommands.add(item.split()[0])
    return subcommands, options


@test
def man_page_and_help_agree_on_every_command_subcommand_and_option():
    helps = tree()
    sections = man_sections()
    top = {path[1] for path in helps if path[0] == "inkling" and len(path) == 2}
    man_top = {title.split(" ", 1)[1] for title in sections if title.startswith("inkling ")}
    assert top == man_top, \
        f"commands only in --help: {sorted(top - man_top)}; only in the man page: {sorted(man_top - top)}"
    for title, items in sections.items():
        words = tuple(title.split())
        path = words if words[0] != "inkling" else words
        help_paths = [p for p in helps if p[: len(path)] == path]
        assert help_paths, f"man page section {title!r} has no --help"
        help_subcommands = {p[len(path)] for p in help_paths if len(p) == len(path) + 1}
        help_option_names = set().union(*(help_options(helps[p]) for p in help_paths)) - STANDARD_OPTIONS
        man_subcommands, man_options = man_item_names(items)
        assert help_subcommands == man_subcommands, (
            f"{title}: subcommands only in --help {sorted(help_subcommands - man_subcommands)}, "
            f"only in the man page {sorted(man_subcommands - help_subcommands)}")
        assert help_option_names == man_options, (
            f"{title}: options only in --help {sorted(help_option_names - man_options)}, "
            f"only in the man page {sorted(man_options - help_option_names)}")
    text = open(ARGS.man, encoding="utf-8").read()
    for needed in (".SH KEYS", ".SH EXIT STATUS", "\\-\\-version", "\\-\\-help", "Ctrl+Alt+Return", "Escape", "F1"):
        assert needed in text, needed


@test
def the_man_page_check_notices_a_missing_option():
    """The comparison above is real: dropping one option from the page makes it fail."""
    original = ARGS.man
    text = open(original, encoding="utf-8").read()
    broken = text.replace(".B \\-\\-no\\-learned\n", ".B \\-\\-no\\-leaned\n", 1)
    assert broken != text
    path = os.path.join(tempfile.mkdtemp(prefix="inkling-man-"), "inkling.1")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(broken)
    ARGS.man = path
    try:
        man_page_and_help_agree_on_every_command_subcommand_and_option()
    except AssertionError as error:
        assert "--no-learned" in str(error), error
    else:
        raise AssertionError("a man page without --no-learned passed the check")
    finally:
        ARGS.man = original


# -- suggest and the learned words --------------------------------------------------------------


@test
def pack_info_counts_the_words_the_spelling_dictionary_vouches_for():
    result = inkling("pack", "info", ARGS.pack)
    assert result.returncode == 0, result
    words = int(re.search(r"^vocabulary: (\d+) words$", result.stdout, re.M).group(1))
    line = re.search(r"^spelled: (\d+) words \(([\d.]+) %\), (\d+) in lower case \(([\d.]+) %\); "
                     r"shown capitalised: (\d+)$", result.stdout, re.M)
    assert line, result.stdout
    spelled, spelled_share, lower, lower_share, capitalised = line.groups()
    assert 0 < int(lower) <= int(spelled) <= words and 0 < int(capitalised) < words, line.group(0)
    assert abs(float(spelled_share) - 100 * int(spelled) / words) < 0.06, line.group(0)
    assert abs(float(lower_share) - 100 * int(lower) / words) < 0.06, line.group(0)


@test
def pack_info_names_the_neural_re_ranker_and_predict_can_leave_it_out():
    result = inkling("pack", "info", ARGS.pack)
    assert result.returncode == 0, result
    model = re.search(r"^word model: GRU, (\d+) words, (\d+) dimensions$", result.stdout, re.M)
    network = re.search(r"^reranker network: (\d+)→[\d→]+→1 \(re-ranks the window\)$", result.stdout, re.M)
    assert model and network, result.stdout
    assert int(model.group(1)) > 1000 and int(model.group(2)) % 8 == 0, model.group(0)
    # --no-neural gives the n-gram order, --no-rerank the dictionary's alone: three different answers.
    request = '{"id": 1, "before": "I went back to the ", "n": 10}\n'
    answers = [inkling("predict", "--stdio", "--pack", ARGS.pack, *flags, input=request)
               for flags in ([], ["--no-neural"], ["--no-rerank"])]
    assert all(a.returncode == 0 for a in answers), answers
    words = [json.loads(a.stdout)["words"] for a in answers]
    assert words[0] != words[1] and words[1] != words[2], words


@test
def suggest_uses_the_learned_words_as_the_engine_does():
    env, home = private_env()
    store = os.path.join(home, "data", "inkling", "user.sqlite3")
    before = inkling("suggest", "--pack", ARGS.pack, "I saw Zorb", env=env)
    assert before.returncode == 0 and "Zorblaxqua" not in before.stdout, before
    assert not os.path.exists(store), "suggest created a user store"
    learned = inkling("learn", "-", "--pack", ARGS.pack, env=env,
                      input="I saw Zorblaxqua there.\nWe met Zorblaxqua again.\n")
    assert learned.returncode == 0, learned.stderr
    after = inkling("suggest", "--pack", ARGS.pack, "I saw Zorb", env=env)
    assert after.returncode == 0 and "Zorblaxqua" in after.stdout.split(), after
    ignored = inkling("suggest", "--pack", ARGS.pack, "--no-learned", "I saw Zorb", env=env)
    assert "Zorblaxqua" not in ignored.stdout, ignored.stdout
    explicit = inkling("suggest", "--pack", ARGS.pack, "--db", store, "I saw Zorb")
    assert explicit.stdout == after.stdout, (explicit.stdout, after.stdout)
    # The same answers as the predictor loaded from the store (the engine's way).
    served = inkling("predict", "--stdio", "--pack", ARGS.pack, "--user-db", store,
                     input='{"id":1,"before":"I saw Zorb","n":5}\n')
    expected_words = ",".join(f'"{w}"' for w in after.stdout.split())
    assert served.stdout.strip() == '{"id":1,"words":[%s]}' % expected_words, served.stdout
    missing = inkling("suggest", "--pack", ARGS.pack, "--db", os.path.join(home, "nothing.sqlite3"), "I saw")
    assert missing.returncode == 1 and "nothing.sqlite3" in missing.stderr, missing


# -- learned wipe -------------------------------------------------------------------------------


def count_entries(db):
    connection = sqlite3.connect(db)
    try:
        return connection.execute("SELECT count(*) FROM entries").fetchone()[0]
    finally:
        connection.close()


def store_with_words():
    env, home = private_env()
    db = os.path.join(home, "store.sqlite3")
    result = inkling("learn", "-", "--db", db, "--pack", ARGS.pack, input="The cat sat on the mat.\n")
    assert result.returncode == 0, result.stderr
    assert count_entries(db) > 0
    return db


def wipe_on_terminal(db, answer):
    """`learned wipe` with a pseudo-terminal as standard input; returns (status, what it printed)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen([binary("inkling"), "learned", "wipe", "--db", db], stdin=terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(terminal)
    os.write(controller, answer.encode() + b"\n")
    out, err = process.communicate(timeout=60)
    os.close(controller)
    return process.returncode, out.decode() + err.decode()


@test
def learned_wipe_asks_on_a_terminal_and_refuses_without_one_unless_yes():
    db = store_with_words()
    entries = count_entries(db)
    refused = inkling("learned", "wipe", "--db", db)
    assert refused.returncode == USAGE_EXIT, refused
    assert "--yes" in refused.stderr and "nothing was wiped" in refused.stderr, refused.stderr
    assert count_entries(db) == entries
    status, printed = wipe_on_terminal(db, "n")
    assert status == 1 and "[y/N]" in printed and "nothing was wiped" in printed, (status, printed)
    assert count_entries(db) == entries
    status, printed = wipe_on_terminal(db, "y")
    assert status == 0 and f"wiped {entries} entries" in printed, (status, printed)
    assert count_entries(db) == 0
    db = store_with_words()
    done = inkling("learned", "wipe", "--yes", "--db", db)
    assert done.returncode == 0 and count_entries(db) == 0, done


# -- predict --stdio and suggest limits ----------------------------------------------------------


@test
def a_count_that_is_a_surrogate_code_point_is_refused_not_a_crash():
    env, _ = private_env()
    for count in ("55296", "57343", "0", "-1", "51", "1114112", "99999999999999999999"):
        # The command line (it died with SIGILL: a surrogate code point force-unwrapped).
        result = inkling("suggest", "--pack", ARGS.pack, "-n", count, "the qui", env=env)
        assert result.returncode == USAGE_EXIT, (count, result.returncode, result.stderr)
        assert f"'{count}'" in result.stderr and "1 to 50" in result.stderr, (count, result.stderr)
    ok = inkling("suggest", "--pack", ARGS.pack, "--no-learned", "-n", "50", "the qui")
    assert ok.returncode == 0 and len(ok.stdout.split()) > 3, ok
    requests = "".join('{"id":%d,"before":"the qui","n":%s}\n' % (i, n) for i, n in enumerate(
        ["55296", "0", "-1", "51", "1e300", '"3"', "2"]))
    served = inkling("predict", "--stdio", "--pack", ARGS.pack, input=requests)
    assert served.returncode == 0, served
    replies = [line for line in served.stdout.split("\n") if line]
    assert len(replies) == 7, replies
    assert replies[0].startswith('{"error":"n must be a whole number from 1 to 50, not 55296","id":0}'), replies[0]
    for index in range(1, 4):
        assert '"error":"n must be' in replies[index] and f'"id":{index}' in replies[index], replies[index]
    for index in (4, 5):
        assert '"error"' in replies[index] and f'"id":{index}' in replies[index], replies[index]
    assert replies[6].startswith('{"id":6,"words":['), replies[6]


@test
def predict_stdio_features_reply_with_the_window_in_final_order():
    """`"features": true` (issue 17, offline re-ranker training) adds the candidate window: keys in
    the order the words are shown, each with the predictor's 15 features; plain replies are unchanged."""
    requests = ('{"id":1,"before":"I think th","n":32,"features":true}\n'
                '{"id":2,"before":"I think th","n":32}\n')
    # Without the pack's neural re-ranker the score is the predictor's own (feature 0); with it,
    # the re-ranker's, and the window comes in its order.
    for flags in (["--no-neural"], []):
        served = inkling("predict", "--stdio", "--pack", ARGS.pack, *flags, input=requests)
        assert served.returncode == 0, served
        with_window, plain = (json.loads(line) for line in served.stdout.split("\n") if line)
        assert "window" not in plain and plain["words"] == with_window["words"], (plain, with_window)
        window = with_window["window"]
        assert 3 < len(window) <= 32, window
        for row in window:
            assert len(row["features"]) == 15 and row["key"].startswith("th"), row
            assert (row["features"][0] == row["score"]) == bool(flags), (flags, row)
        scores = [row["score"] for row in window]
        assert scores == sorted(scores, reverse=True), scores
        keys = [row["key"] for row in window]
        shown = [word.lower().replace("\u2019", "'") for word in with_window["words"]]
        assert [k for k in keys if k in shown] == shown, (keys, shown)


@test
def predict_window_options_size_the_windows_and_their_help_says_so():
    """--window sizes the typing window and --next-window the next word's (the help once called
    --window the document cache's memory, which it never was)."""
    requests = ('{"id":1,"before":"I think th","n":3,"features":true}\n'
                '{"id":2,"before":"I think ","n":3,"features":true}\n')
    served = inkling("predict", "--stdio", "--pack", ARGS.pack, "--window", "5", "--next-window", "48",
                     "--proposals", "0", input=requests)
    assert served.returncode == 0, served
    typed, next_word = (json.loads(line)["window"] for line in served.stdout.split("\n") if line)
    assert len(typed) == 5 and all(row["key"].startswith("th") for row in typed), typed
    assert 32 < len(next_word) <= 48, len(next_word)
    # --proposals: up to that many of the word GRU's likely words join the next word's window
    # (the pack's neural re-ranker), never the typing window.
    served = inkling("predict", "--stdio", "--pack", ARGS.pack, "--window", "5", "--next-window", "48",
                     "--proposals", "8", input=requests)
    assert served.returncode == 0, served
    typed_too, joined = (json.loads(line)["window"] for line in served.stdout.split("\n") if line)
    assert typed_too == typed, typed_too
    assert 48 < len(joined) <= 56, len(joined)
    assert {row["key"] for row in next_word} < {row["key"] for row in joined}
    usage = inkling("predict", "--help").stdout
    for option in ("--window", "--next-window"):
        line = next(line for line in usage.split("\n") if line.strip().startswith(option + " "))
        assert "re-ranker" in line and "cache" not in line, line


@test
def numbers_out_of_range_are_usage_errors_not_traps():
    """The same class as the surrogate count: numbers from the command line converted unchecked
    (each of these trapped on main: UInt64(-1), a negative window, prefix(-1), Int(1e300 * 1000))."""
    folder = tempfile.mkdtemp(prefix="inkling-conv-")
    text = os.path.join(folder, "text.txt")
    with open(text, "w") as handle:
        handle.write("hello world\n")
    request = '{"id":1,"before":"the qui","n":3}\n'
    for words, named in (
        (("check-bench", "--text", text, "--pack", ARGS.pack, "--seed", "-1"), "--seed"),
        (("predict", "--stdio", "--pack", ARGS.pack, "--window", "-1"), "--window"),
        (("predict", "--stdio", "--pack", ARGS.pack, "--learned-window", "-1"), "--learned-window"),
        (("predict", "--stdio", "--pack", ARGS.pack, "--char-weight", "nan"), "--char-weight"),
        (("learned", "_stress", "--seconds", "1e300", "--db", os.path.join(folder, "s.sqlite3")), "--seconds"),
        (("learned", "list", "--limit", "1e3", "--db", os.path.join(folder, "s.sqlite3")), "--limit"),
        (("check-bench", "--text", text, "--pack", ARGS.pack, "--rate", "2"), "--rate"),
    ):
        result = inkling(*words, input=request)
        assert result.returncode == USAGE_EXIT, (words, result.returncode, result.stderr[-300:])
        assert result.stderr.split("\n")[0].endswith("'") and named in result.stderr, (words, result.stderr)


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def read_line(stream, seconds=60):
    deadline = time.monotonic() + seconds
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"no reply within {seconds} s (so far {line[:200]!r})")
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            raise AssertionError(f"the server closed its output (so far {line[:200]!r})")
        line += chunk
    return line.decode()


@test
def a_100_mb_request_line_is_answered_with_an_error_without_being_held():
    process = subprocess.Popen([binary("inkling"), "predict", "--stdio", "--pack", ARGS.pack],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        process.stdin.write(b'{"id":1,"before":"I would like to ","n":3}\n')
        process.stdin.flush()
        assert read_line(process.stdout).startswith('{"id":1,"words":[')
        baseline = peak_rss_kib(process.pid)
        chunk = b"x" * (1 << 20)
        process.stdin.write(b'{"id":2,"before":"')
        for _ in range(100):
            process.stdin.write(chunk)
        process.stdin.write(b'"}\n')
        # A line just under the limit is still answered.
        near = b'{"id":3,"before":"' + b"a " * 30000 + b'the qui","n":3}\n'
        assert len(near) < 65536
        process.stdin.write(near)
        process.stdin.flush()
        error = read_line(process.stdout)
        assert error.startswith('{"error":"the request line has 104857') and '"id":null' in error, error[:300]
        assert read_line(process.stdout).startswith('{"id":3,"words":["')
        grown = peak_rss_kib(process.pid) - baseline
        assert grown < 32 * 1024, f"peak RSS grew by {grown} KiB reading a 100 MB line"
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        print(f"  (peak RSS growth over a 100 MB line: {grown} KiB)")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# -- errors name the file -----------------------------------------------------------------------


@test
def errors_are_one_sentence_naming_the_file():
    missing = "/nonexistent-inkling-folder/words.txt"
    folder = tempfile.mkdtemp(prefix="inkling-conv-")
    not_a_pack = os.path.join(folder, "words.inkpack")
    with open(not_a_pack, "w") as handle:
        handle.write("hello\n" * 100)
    for words, named in (
        (("learn", missing, "--pack", ARGS.pack), missing),
        (("learned", "import", missing), missing),
        (("check-bench", "--text", missing, "--pack", ARGS.pack), missing),
        (("check-bench", "--text", folder, "--pack", ARGS.pack), folder),
        (("suggest", "--pack", missing, "x"), missing),
        (("suggest", "--pack", not_a_pack, "x"), not_a_pack),
        (("pack", "info", missing), missing),
        (("pack", "info", not_a_pack), not_a_pack),
    ):
        result = inkling(*words)
        assert result.returncode == 1, (words, result)
        lines = [line for line in result.stderr.split("\n") if line]
        assert len(lines) == 1 and named in lines[0] and lines[0].startswith("inkling: "), (words, result.stderr)
        # A sentence from the system or the pack reader, not a dump of an error value.
        assert "Error(" not in lines[0] and "userInfo" not in lines[0], (words, lines[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--pack", required=True)
    parser.add_argument("--man", required=True)
    parser.parse_args(namespace=ARGS)
    passed = failed = 0
    only = os.environ.get("ONLY")
    for function in TESTS:
        if only and only not in function.__name__:
            continue
        try:
            function()
            print(f"PASS {function.__name__}")
            passed += 1
        except Exception:
            print(f"FAIL {function.__name__}")
            traceback.print_exc()
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
