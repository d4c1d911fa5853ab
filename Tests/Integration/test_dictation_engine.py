"""Dictation through the real daemon: a private ibus-daemon, the real engine, and the real
`inkling-dictate` helper it starts, reading synthesised speech (--audio-file) instead of a
microphone.

Runs in its own pytest process (libibus talks to one daemon per process; run.sh does this). The
engine learns what to start from variables meant for tests, which the daemon passes on:
    INKLING_DICTATION=1  INKLING_DICTATE_HELPER=<wrapper>
The wrapper reads a mode file at each start: `real <wav>` runs the real helper on that file
paced like a microphone; `hang` answers nothing (a hung helper).
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from ibus_harness import CONTROL, IBus, Timeout, executable_script, helper_binary, pump_for, pump_until

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Dictate"))
import speech  # noqa: E402

SCHEMA = "org.freedesktop.ibus.engine.inkling"
WAIT = 90.0  # generous: the recogniser runs slower than real time on a loaded 2-core machine
ALT = int(IBus.ModifierType.MOD1_MASK)
LISTENING = "\U0001F399 listening\u2026"
FAILED = "\U0001F399 dictation stopped: the speech helper failed"
REFUSED = "\U0001F399 no dictation in password fields"

WRAPPER = '''#!/usr/bin/python3
import os, sys, time
mode = open(os.environ["INKLING_TEST_DICTATE_MODE"]).read().split()
with open(os.environ["INKLING_TEST_DICTATE_MODE"] + ".argv", "w") as f:
    f.write(" ".join(sys.argv[1:]))
if mode[0] == "real":
    os.execv(os.environ["INKLING_TEST_REAL_DICTATE"], ["inkling-dictate", "--audio-file", mode[1]] + sys.argv[1:])
sys.stdout.write('{"type":"hello","v":1}\\n')
sys.stdout.flush()
while sys.stdin.buffer.read(4096):
    pass
time.sleep(60)
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if not speech.available():
        pytest.skip("espeak-ng or sox missing")
    root = tmp_path_factory.mktemp("dictation")
    wrapper = executable_script(root, "fake_dictate.py", WRAPPER)
    short = speech.speak("the weather is nice today", str(root / "short.wav"), after=1.0)
    long = speech.speak(" ".join(speech.SENTENCES[:4]), str(root / "long.wav"), speed=140, after=0.5)
    return {"wrapper": wrapper, "mode": str(root / "mode"), "short": short, "long": long}


@pytest.fixture(scope="module")
def daemon(own_daemon, files):
    helper = helper_binary("inkling-dictate")
    schemas = tempfile.mkdtemp(prefix="inkling-schema-")
    source = os.path.join(os.path.dirname(os.path.dirname(HERE)), "data", "gschema", SCHEMA + ".gschema.xml")
    subprocess.run(["cp", source, schemas], check=True)
    subprocess.run(["glib-compile-schemas", schemas], check=True)
    return own_daemon({
        # Real GSettings (keyfile), so that `gsettings set` reaches the running engine.
        "GSETTINGS_SCHEMA_DIR": schemas,
        "GSETTINGS_BACKEND": "keyfile",
        "INKLING_DICTATION": "1",
        "INKLING_DICTATE_HELPER": files["wrapper"],
        "INKLING_TEST_DICTATE_MODE": files["mode"],
        "INKLING_TEST_REAL_DICTATE": helper,
        "INKLING_DEBUG_EVENTS": "1",
    })


@pytest.fixture
def client(aux_client):
    aux_client.set_surrounding("")
    aux_client.commits.clear()
    return aux_client


def set_mode(files, mode, wav=None):
    with open(files["mode"], "w") as f:
        f.write(mode + (" " + files[wav] if wav else ""))


def dictation_key(client):
    return client.key(ord("m"), CONTROL | ALT)


def helper_pids(daemon):
    return daemon.helpers()


def kill_helpers(daemon):
    for pid in helper_pids(daemon):
        os.kill(pid, signal.SIGKILL)
    pump_until(lambda: not helper_pids(daemon), timeout=WAIT, what="the helpers to go")


def expected_finals(files, wav):
    events, _ = speech.run_helper(files[wav])
    return speech.finals(events)


def test_the_final_is_committed_exactly_once_and_partials_never(client, daemon, files):
    finals = expected_finals(files, "short")
    assert finals, "the helper recognises something in the test speech"
    set_mode(files, "real", "short")
    assert dictation_key(client)
    pump_until(lambda: client.aux_now.startswith(LISTENING), timeout=WAIT, what="the listening label")
    # The file ends: the helper finalises and stops; the label goes.
    pump_until(lambda: client.commits and not client.aux_now, timeout=WAIT,
               what="the final and the end of listening (aux %r)" % client.aux_now)
    pump_for(0.5)
    committed = "".join(client.commits)
    # As typed: the pronoun I in capitals (the first letter's case depends on whether the
    # engine knows the field's text; the unit tests cover it).
    expected = " ".join("I" + w[1:] if w == "i" or w.startswith("i'") else w for w in " ".join(finals).split())
    assert committed[1:] == expected[1:] and committed[0].lower() == expected[0].lower(), (client.commits, finals)
    partials = [aux[len(LISTENING) + 1:] for aux in client.aux_history if aux.startswith(LISTENING + " ")]
    assert partials, "partials were shown in the auxiliary text"
    # A pending space follows the dictated words, as after a picked word.
    assert client.preedit[0] == " "
    client.type("ok ")
    assert client.text == committed + " ok "


def test_typing_goes_on_while_listening_and_escape_cancels(client, daemon, files):
    set_mode(files, "real", "long")
    assert dictation_key(client)
    pump_until(lambda: client.aux_now.startswith(LISTENING + " "), timeout=WAIT, what="a partial")
    assert client.key(IBus.KEY_Escape)
    pump_until(lambda: not client.aux_now, timeout=WAIT, what="the label to go")
    pump_for(1.0)
    assert client.commits == []
    client.type("Hello ")
    assert client.text == "Hello "


def test_helper_killed_mid_utterance_inserts_nothing_and_typing_is_unaffected(client, daemon, files):
    set_mode(files, "real", "long")
    assert dictation_key(client)
    pump_until(lambda: client.aux_now.startswith(LISTENING + " "), timeout=WAIT, what="a partial")
    kill_helpers(daemon)
    pump_until(lambda: client.aux_now == FAILED, timeout=WAIT, what="the failure notice (aux %r)" % client.aux_now)
    pump_for(1.0)
    assert client.commits == []
    start = time.monotonic()
    client.type("Typing works ")
    assert time.monotonic() - start < 10
    assert client.text == "Typing works "


def test_a_hung_helper_is_killed_and_typing_is_unaffected(client, daemon, files):
    kill_helpers(daemon)
    set_mode(files, "hang")
    pump_for(1.0)  # past the restart backoff of the previous test's kill
    assert dictation_key(client)
    client.type("Still typing ")
    assert client.text == "Still typing "
    # The start is never answered: after the start timeout the helper is killed.
    pump_until(lambda: client.aux_now == FAILED, timeout=WAIT, what="the failure notice")
    pump_until(lambda: not helper_pids(daemon), timeout=WAIT, what="the hung helper to be killed")


def test_password_field_refuses_dictation(client, daemon, files):
    kill_helpers(daemon)
    set_mode(files, "real", "short")
    client.set_content_type(IBus.InputPurpose.PASSWORD)
    assert dictation_key(client)
    pump_until(lambda: client.aux_now == REFUSED, timeout=WAIT, what="the refusal")
    pump_for(1.5)
    assert helper_pids(daemon) == []
    assert client.commits == []


def test_focus_out_stops_listening_and_nothing_arrives_later(client, daemon, files):
    pump_for(1.0)
    set_mode(files, "real", "short")
    assert dictation_key(client)
    pump_until(lambda: client.aux_now.startswith(LISTENING), timeout=WAIT, what="the listening label")
    client.focus_out()
    pump_for(3.0)
    assert client.commits == []
    client.focus_in()


def test_nothing_heard_reaches_the_log(daemon, files):
    finals = expected_finals(files, "short") + expected_finals(files, "long")
    log = daemon.log()
    for word in set(" ".join(finals).split()):
        if len(word) > 4:
            assert word not in log, "a recognised word reached the daemon log"


def test_the_chosen_microphone_reaches_the_helper_as_device(client, daemon, files):
    """GSettings `dictation-device` (the Settings app's Dictation page) is passed to the helper
    as --device; the running engine follows a change at the next start."""
    set_mode(files, "real", "short")
    subprocess.run(["gsettings", "set", SCHEMA, "dictation-device", "inkling_test_mic"], env=daemon.env, check=True,
                   timeout=20)
    try:
        # The keyfile backend tells the engine a moment later: listen until a start carries it
        # (the engine asks an idle helper started for the old choice to exit; no kill, no backoff).
        def argv():
            try:
                with open(files["mode"] + ".argv") as f:
                    return f.read().split()
            except OSError:
                return None

        expected = ["--device", "inkling_test_mic"]
        end = time.monotonic() + WAIT
        while argv() != expected and time.monotonic() < end:
            assert dictation_key(client)
            pump_until(lambda: client.aux_now.startswith(LISTENING), timeout=WAIT, what="the listening label")
            try:
                pump_until(lambda: argv() == expected, timeout=5, what="a helper started with --device")
            except Timeout:
                pass
            # The file ends: listening stops by itself.
            pump_until(lambda: not client.aux_now, timeout=WAIT, what="the end of listening")
        assert argv() == expected
    finally:
        subprocess.run(["gsettings", "reset", SCHEMA, "dictation-device"], env=daemon.env, check=True, timeout=20)
