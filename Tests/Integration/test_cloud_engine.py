"""The cloud check end to end: a real ibus-daemon, the real engine, the real `inkling-cloud`
helper it starts, and the fake chat-completions server of Tests/Cloud on loopback.

Runs in its own pytest process (libibus talks to one daemon per process; run.sh does this). The
engine learns where the server is from environment variables meant for tests and development,
which the daemon passes on to the engine it spawns:
    INKLING_CLOUD_CHECK=1  INKLING_CLOUD_ENDPOINT=<url>  INKLING_CLOUD_MODEL=<name>
    INKLING_CLOUD_NO_KEYRING=1  INKLING_CLOUD_TIMEOUT_MS=<helper network timeout>

Every sentence differs from the others: the session caches answers per sentence, and one engine
object serves all the tests. No fixed sleeps except where the test is that nothing happens.
"""

import json
import os
import signal
import time

import pytest

from ibus_harness import CONTROL, IBus, drain, executable_script, helper_binary, pump_for, pump_until

WAIT = 20.0  # generous: a loaded 2-core machine, a helper to start, an HTTP round trip
HINT = "\u2601 checking"
ALT = int(IBus.ModifierType.MOD1_MASK)
HELPER_TIMEOUT_MS = 3000
# INKLING_TEST_VERBOSE=1: the engine's content-free event log goes to the daemon log.
VERBOSE = os.environ.get("INKLING_TEST_VERBOSE") == "1"


@pytest.fixture(scope="module")
def server(fake_llm_server):
    """The fake chat-completions server of Tests/Cloud (Tests/conftest.py), one for the module."""
    return fake_llm_server


# The engine starts this wrapper (INKLING_CLOUD_HELPER): it becomes the real helper, or, when the
# mode file says so, a helper that misbehaves.
WRAPPER = '''#!/usr/bin/python3
import os, sys, time
mode = open(os.environ["INKLING_TEST_HELPER_MODE"]).read().strip()
if mode == "real":
    os.execv(os.environ["INKLING_TEST_REAL_HELPER"], ["inkling-cloud"] + sys.argv[1:])
out = sys.stdout.buffer
out.write(b'{"type":"hello","v":1}\\n')
out.flush()
if mode == "flood":
    sys.stdin.buffer.readline()  # a request arrived: answer it a thousand times over
    for _ in range(1000):
        out.write(b'{"type":"hello","v":1}\\n')
    out.flush()
elif mode == "oversized":
    sys.stdin.buffer.readline()
    out.write(b"x" * (70 * 1024))
    out.flush()
# "silent" and after misbehaving: read and never answer (a hung helper)
while sys.stdin.buffer.read(4096):
    pass
time.sleep(60)
'''


@pytest.fixture(scope="module")
def helper_mode(tmp_path_factory):
    root = tmp_path_factory.mktemp("helper")
    wrapper = executable_script(root, "fake_helper.py", WRAPPER)
    mode = root / "mode"
    mode.write_text("real")
    return wrapper, mode


@pytest.fixture(scope="module")
def daemon(own_daemon, server, helper_mode):
    helper = helper_binary("inkling-cloud")
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        os.environ.pop(name, None)
    return own_daemon({
        "INKLING_CLOUD_CHECK": "1",
        "INKLING_CLOUD_ENDPOINT": server.url + "/v1",
        "INKLING_CLOUD_MODEL": "fake-model",
        "INKLING_CLOUD_NO_KEYRING": "1",
        "INKLING_CLOUD_TIMEOUT_MS": str(HELPER_TIMEOUT_MS),
        "INKLING_CLOUD_HELPER": str(helper_mode[0]),
        "INKLING_TEST_HELPER_MODE": str(helper_mode[1]),
        "INKLING_TEST_REAL_HELPER": helper,
        "NO_PROXY": "127.0.0.1,localhost",
        # The engine's and the helper's own logs (content-free by design) go to the daemon log,
        # which the last test searches for anything typed.
        "INKLING_DEBUG_EVENTS": "1",
    })


@pytest.fixture
def client(aux_client, server):
    server.reset("agree")
    return aux_client


def wait_aux(client, predicate, what, timeout=WAIT):
    pump_until(lambda: predicate(client.aux_now), timeout=timeout, what=what + " (aux now %r)" % client.aux_now)


def helper_pids(daemon, fake=False):
    """The engine's helper processes: the real ones, or (`fake`) the misbehaving wrappers."""
    return daemon.helpers("fake_helper.py" if fake else "inkling-cloud")


def timed_type(client, text):
    """Types `text`; returns the longest time the engine took to answer one key press."""
    worst = 0.0
    for ch in text:
        keyval = IBus.KEY_space if ch == " " else IBus.unicode_to_keyval(ch)
        state = int(IBus.ModifierType.SHIFT_MASK) if ch.isupper() else 0
        start = time.monotonic()
        handled = bool(client.ic.process_key_event(keyval, 0, state))
        worst = max(worst, time.monotonic() - start)
        drain()
        if not handled:
            client._apply_unhandled(keyval, state)
        client.ic.process_key_event(keyval, 0, state | int(IBus.ModifierType.RELEASE_MASK))
        drain()
    return worst


def chip(word, fix):
    return "%s \u2192 %s" % (word, fix)


# -- the local flag comes first; the cloud confirms, retracts or adds ----------------------------


def test_local_chip_shows_before_any_request_then_agree_keeps_it(client, server):
    client.type("I saw teh ")
    wait_aux(client, lambda aux: chip("teh", "the") in aux, "the local chip")
    assert server.requests == 0  # shown at once, not after the network
    client.type("cat.")
    pump_until(lambda: server.requests >= 1, timeout=WAIT, what="the check request at the server")
    body = json.dumps(server.stats()["last_body"])
    assert "teh" in body and "fake-model" in body
    # The answer (agree) arrives: the hint goes, the chip stays.
    wait_aux(client, lambda aux: HINT not in aux and chip("teh", "the") in aux, "the agreed chip without the hint")
    assert client.text == "I saw teh cat."


def test_disagree_retracts_the_chip_after_the_sentence_delay(client, server):
    server.reset("disagree")
    client.type("You saw teh dog")
    wait_aux(client, lambda aux: chip("teh", "the") in aux, "the local chip")
    start = time.monotonic()
    client.type(".")
    wait_aux(client, lambda aux: "teh" not in aux, "the chip to be retracted")
    elapsed = time.monotonic() - start
    assert elapsed >= 0.35, "retracted after %.3f s, before the 400 ms sentence delay" % elapsed
    assert server.requests == 1
    assert client.text == "You saw teh dog."


def test_extra_fix_from_the_cloud_is_applied_exactly(client, server):
    server.reset("extra_fix", fix_original="hat", fix_replacement="cat")
    client.type("They saw teh hat.")
    wait_aux(client, lambda aux: chip("hat", "cat") in aux, "the cloud's chip")
    assert chip("teh", "the") in client.aux_now
    assert client.text == "They saw teh hat."
    client.deletes.clear()
    commits_before = len(client.commits)
    assert client.key(IBus.KEY_Return, CONTROL | ALT)
    pump_until(lambda: client.text == "They saw teh cat.", timeout=WAIT,
               what="the fix in the client's text (%r)" % client.text)
    assert client.deletes == [(-4, 4)]
    assert client.commits[commits_before:] == ["cat."]
    wait_aux(client, lambda aux: "hat" not in aux, "the applied chip to go")


# -- a slow, failing or dying cloud never slows typing -------------------------------------------


def test_hanging_server_keeps_typing_fast_and_local_flags(client, server):
    server.reset("hang")
    worst = timed_type(client, "She saw teh bird.")
    pump_until(lambda: server.requests >= 1, timeout=WAIT, what="the request to hang at the server")
    wait_aux(client, lambda aux: HINT in aux, "the checking hint")
    worst = max(worst, timed_type(client, " It flew awya"))
    assert worst < 0.5, "a key took %.3f s while the cloud hung" % worst
    assert chip("teh", "the") in client.aux_now
    # The helper's own timeout ends the wait: the hint goes, the flags stay.
    wait_aux(client, lambda aux: HINT not in aux, "the hint to go after the helper's timeout")
    assert chip("teh", "the") in client.aux_now


def test_failing_server_changes_nothing_but_the_missing_verdict(client, server):
    server.reset("error500")
    worst = timed_type(client, "We saw teh fish.")
    pump_until(lambda: server.requests >= 1, timeout=WAIT, what="the request at the server")
    wait_aux(client, lambda aux: HINT not in aux and chip("teh", "the") in aux, "the local chip without the hint")
    assert worst < 0.5
    assert client.text == "We saw teh fish."


def test_killed_helper_mid_request_is_restarted_and_typing_goes_on(client, daemon, server):
    server.reset("hang")
    client.type("He saw teh moon.")
    pump_until(lambda: server.requests >= 1, timeout=WAIT, what="the request at the server")
    wait_aux(client, lambda aux: HINT in aux, "the checking hint")
    pids = helper_pids(daemon)
    assert len(pids) == 1, pids
    os.kill(pids[0], signal.SIGKILL)
    wait_aux(client, lambda aux: HINT not in aux, "the hint to go when the helper dies")
    assert chip("teh", "the") in client.aux_now
    # The engine goes on: a word composes as before.
    client.type(" Then")
    assert client.preedit[0] == "Then"
    client.type(" ")
    # The next sentence starts a new helper (after the restart backoff) and gets its answer.
    server.reset("disagree")
    client.type("she saw teh star.")
    try:
        pump_until(lambda: helper_pids(daemon) and helper_pids(daemon) != pids, timeout=WAIT, what="a new helper")
        pump_until(lambda: server.requests >= 1, timeout=WAIT, what="the request from the new helper")
        # The new sentence's flag is retracted; the first sentence's stays.
        wait_aux(client, lambda aux: aux.count(chip("teh", "the")) == 1 and HINT not in aux, "the new helper's verdict")
    finally:
        if VERBOSE:
            print("\n".join(line for line in daemon.log().splitlines() if "cloud" in line))


def test_private_field_never_contacts_the_server(client, server):
    client.set_content_type(IBus.InputPurpose.FREE_FORM, IBus.InputHints.PRIVATE)
    client.type("My saw teh secret.")
    wait_aux(client, lambda aux: chip("teh", "the") in aux, "the local chip in a private field")
    # Well past the 400 ms sentence delay: nothing may reach the server.
    pump_for(1.5)
    assert server.requests == 0
    assert HINT not in client.aux_now


@pytest.mark.parametrize("mode,reason,timeout", [
    ("flood", "it flooded its output", WAIT),
    ("oversized", "it sent an oversized line", WAIT),
    # Only the session's 15 s reply timeout (and the 1 s watchdog) ends this one.
    ("silent", "it left a request unanswered too long", 15 + WAIT),
])
def test_misbehaving_helper_is_killed_and_typing_goes_on(client, daemon, server, helper_mode, mode, reason, timeout):
    # Replace the running helper by one that misbehaves (started for the next request).
    helper_mode[1].write_text(mode)
    try:
        misbehave(client, daemon, mode, reason, timeout)
    finally:
        helper_mode[1].write_text("real")


def misbehave(client, daemon, mode, reason, timeout):
    for pid in helper_pids(daemon):
        os.kill(pid, signal.SIGKILL)
    pump_until(lambda: not helper_pids(daemon), timeout=WAIT, what="the old helper to go")
    log_before = len(daemon.log())
    sentence = {"flood": "Ann saw teh lake.", "oversized": "Bob saw teh road.", "silent": "Kim saw teh tree."}[mode]
    worst = timed_type(client, sentence)
    pump_until(lambda: reason in daemon.log()[log_before:], timeout=timeout,
               what="the bridge to stop the %s helper" % mode)
    pump_until(lambda: not helper_pids(daemon, fake=True), timeout=WAIT, what="the %s helper to be killed" % mode)
    wait_aux(client, lambda aux: HINT not in aux and chip("teh", "the") in aux, "the local chip without the hint")
    worst = max(worst, timed_type(client, " Then"))
    assert worst < 0.5, "a key took %.3f s" % worst
    assert client.preedit[0] == "Then"


def test_nothing_typed_reaches_the_logs(daemon):
    """Runs last: the engine's event log and the helper's stderr carry no typed text."""
    log = daemon.log()
    assert "cloud: helper started" in log
    for word in ("teh", "moon", "secret", "bird", "awya", "fish"):
        assert word not in log, "%r appears in the log" % word
