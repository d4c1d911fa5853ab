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
import sys
import time

import pytest

from ibus_harness import CONTROL, Client, Daemon, IBus, engine_path, pump_until

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Dictate"))
import speech  # noqa: E402

WAIT = 90.0  # generous: the recogniser runs slower than real time on a loaded 2-core machine
ALT = int(IBus.ModifierType.MOD1_MASK)
LISTENING = "\U0001F399 listening\u2026"
FAILED = "\U0001F399 dictation stopped: the speech helper failed"
REFUSED = "\U0001F399 no dictation in password fields"

WRAPPER = '''#!/usr/bin/python3
import os, sys, time
mode = open(os.environ["INKLING_TEST_DICTATE_MODE"]).read().split()
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
    wrapper = root / "fake_dictate.py"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    short = speech.speak("the weather is nice today", str(root / "short.wav"), after=1.0)
    long = speech.speak(" ".join(speech.SENTENCES[:4]), str(root / "long.wav"), speed=140, after=0.5)
    return {"wrapper": str(wrapper), "mode": str(root / "mode"), "short": short, "long": long}


@pytest.fixture(scope="module")
def daemon(request, files):
    others = {item.fspath.basename for item in request.session.items} - {os.path.basename(__file__)}
    if others or os.environ.get("IBUS_ADDRESS"):
        pytest.skip("run test_dictation_engine.py in its own pytest process (as run.sh does)")
    helper = os.path.join(os.path.dirname(engine_path()), "inkling-dictate")
    if not os.access(helper, os.X_OK):
        pytest.skip("no inkling-dictate next to the engine (%s)" % helper)
    d = Daemon(env={
        "INKLING_DICTATION": "1",
        "INKLING_DICTATE_HELPER": files["wrapper"],
        "INKLING_TEST_DICTATE_MODE": files["mode"],
        "INKLING_TEST_REAL_DICTATE": helper,
        "INKLING_DEBUG_EVENTS": "1",
    }, verbose=True).start()
    yield d
    d.stop()


class AuxClient(Client):
    """A client that also records the auxiliary text."""

    def __init__(self, daemon, **kw):
        super().__init__(daemon, **kw)
        self.aux_text = ""
        self.aux_visible = False
        self.aux_history = []
        self._connect("update-auxiliary-text", self._on_aux)
        self._connect("show-auxiliary-text", lambda ic: self._aux_shown(True))
        self._connect("hide-auxiliary-text", lambda ic: self._aux_shown(False))

    def _on_aux(self, ic, text, visible):
        self.aux_text = text.get_text()
        self.aux_visible = bool(visible)
        self.aux_history.append(self.aux_now)

    def _aux_shown(self, visible):
        self.aux_visible = visible
        self.aux_history.append(self.aux_now)

    @property
    def aux_now(self):
        return self.aux_text if self.aux_visible else ""


@pytest.fixture
def client(daemon):
    c = AuxClient(daemon)
    c.focus_in()
    c.set_engine("inkling")
    c.wait_for_surrounding_request()
    c.set_surrounding("")
    c.commits.clear()
    yield c
    c.focus_out()
    c.destroy()


def set_mode(files, mode, wav=None):
    with open(files["mode"], "w") as f:
        f.write(mode + (" " + files[wav] if wav else ""))


def dictation_key(client):
    return client.key(ord("m"), CONTROL | ALT)


def helper_pids(daemon):
    engine = daemon.engine_pid()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[1]) == engine and fields[0] != "Z":
                pids.append(int(entry))
        except (OSError, ValueError):
            continue
    return pids


def kill_helpers(daemon):
    for pid in helper_pids(daemon):
        os.kill(pid, signal.SIGKILL)
    pump_until(lambda: not helper_pids(daemon), timeout=WAIT, what="the helpers to go")


def pump_for(seconds):
    end = time.monotonic() + seconds
    pump_until(lambda: time.monotonic() >= end, timeout=seconds + 5, what="time to pass")


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
