#!/usr/bin/python3
"""End-to-end tests of the real `inkling-cloud` binary, driven through its pipes against
fake_llm_server.py on loopback.

    INKLING_CLOUD=/path/to/inkling-cloud /usr/bin/python3 -m pytest Tests/Cloud/test_cloud_helper.py [-k NAME]

(Tests/Cloud/run.sh does this.) No fixed sleeps: every wait is on a condition with a deadline.
The server is one fake_llm_server.py per module (Tests/conftest.py), reset before each test. The
last test audits the stderr of every helper the tests before it ran, and of its own.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from process_support import DEFAULT_WAIT as WAIT
from process_support import release_binary, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = release_binary("inkling-cloud", override="INKLING_CLOUD")

# Everything typed that the tests send; none of it may ever appear on the helper's stderr.
SECRET_WORDS = set()
SECRET_KEYS = set()
ALL_STDERR = []


@pytest.fixture
def server(fake_llm_server):
    """The module's fake server, reset to agree with every check."""
    fake_llm_server.reset()
    return fake_llm_server


class Helper:
    """One inkling-cloud process with its pipes read by background threads."""

    def __init__(self, server, *extra, key_file=None, timeout_ms=None, endpoint=None, env_extra=None, keyring=False):
        self.home = tempfile.mkdtemp(prefix="inkling-cloud-test-")
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": self.home,
            "XDG_CONFIG_HOME": os.path.join(self.home, "config"),
            "XDG_RUNTIME_DIR": os.path.join(self.home, "run"),
            "LANG": "C.UTF-8",
        }
        env.update(env_extra or {})
        os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        self.env = env
        args = [BINARY, "--endpoint", endpoint or (server.url + "/v1/"), "--model", "fake-model"]
        if not keyring:
            args.append("--no-keyring")
        if key_file:
            args += ["--key-file", key_file]
        if timeout_ms:
            args += ["--timeout-ms", str(timeout_ms)]
        args += list(extra)
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.lock = threading.Condition()
        self.replies = []
        self.raw_stdout = []
        self.stderr = bytearray()
        self.stdout_closed = False
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            with self.lock:
                self.raw_stdout.append(line)
                self.replies.append(json.loads(line))
                self.lock.notify_all()
        with self.lock:
            self.stdout_closed = True
            self.lock.notify_all()

    def _read_stderr(self):
        while True:
            chunk = self.proc.stderr.read1(65536)
            if not chunk:
                break
            with self.lock:
                self.stderr += chunk
                self.lock.notify_all()
        ALL_STDERR.append(bytes(self.stderr))

    def send_raw(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj) + "\n")

    def check(self, id, sentence, flags=(), language="en"):
        for word in sentence.split():
            SECRET_WORDS.add(word.strip(".,!?"))
        self.send({"v": 1, "type": "check", "id": id, "sentence": sentence, "language": language,
                   "flags": [dict(f) for f in flags]})

    def cancel(self, id):
        self.send({"v": 1, "type": "cancel", "id": id})

    def wait(self, predicate, timeout=WAIT, what="reply"):
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for reply in self.replies:
                    if predicate(reply):
                        return reply
                left = deadline - time.monotonic()
                if left <= 0 or self.stdout_closed:
                    raise AssertionError("no %s (replies so far: %s)" % (what, self.replies))
                self.lock.wait(left)

    def reply(self, id, timeout=WAIT):
        return self.wait(lambda r: r.get("id") == id, timeout, "reply for id %d" % id)

    def ids(self):
        with self.lock:
            return [r.get("id") for r in self.replies]

    def stderr_text(self):
        with self.lock:
            return bytes(self.stderr).decode("utf-8", "replace")

    def wait_stderr(self, text, timeout=WAIT):
        wait_until(lambda: text in self.stderr_text(), timeout, "stderr containing %r" % text)

    def close(self):
        """Shutdown request; returns the exit status."""
        try:
            self.send({"v": 1, "type": "shutdown"})
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        try:
            return self.proc.wait(timeout=WAIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            shutil.rmtree(self.home, ignore_errors=True)


def flag(start, end, word, replacements):
    return {"start": start, "end": end, "word": word, "replacements": replacements}


SENTENCE = "I saw teh quokka today."
TEH = flag(6, 9, "teh", ["the"])

# --------------------------------------------------------------------------------------------
# Tests. Each takes the shared fake server, reset to "agree" before the test.


def test_hello_then_shutdown_exits_zero(server):
    helper = Helper(server)
    assert helper.wait(lambda r: r["type"] == "hello") == {"v": 1, "type": "hello"}
    with helper.lock:
        assert helper.replies[0]["type"] == "hello"
    assert helper.close() == 0


def test_stdin_eof_exits_zero(server):
    helper = Helper(server)
    helper.wait(lambda r: r["type"] == "hello")
    helper.proc.stdin.close()
    assert helper.proc.wait(timeout=WAIT) == 0
    helper.close()


def test_agree_verdict(server):
    helper = Helper(server)
    helper.check(1, SENTENCE, [TEH])
    reply = helper.reply(1)
    assert reply["type"] == "result", reply
    assert reply["verdicts"] == [{"start": 6, "end": 9, "verdict": "agree", "explanation": "fake agree"}], reply
    assert reply["fixes"] == []
    assert server.requests == 1
    assert helper.close() == 0


def test_disagree_verdict(server):
    server.reset("disagree")
    helper = Helper(server)
    helper.check(2, "My friend Zbyszek plays chess.", [flag(10, 17, "Zbyszek", ["Zbysek"])])
    reply = helper.reply(2)
    assert [v["verdict"] for v in reply["verdicts"]] == ["disagree"], reply
    assert helper.close() == 0


def test_request_shape(server):
    helper = Helper(server)
    helper.check(3, SENTENCE, [TEH])
    helper.reply(3)
    body = server.stats()["last_body"]
    assert body["model"] == "fake-model"
    assert body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"][0]["role"] == "system" and '"verdicts"' in body["messages"][0]["content"]
    user = json.loads(body["messages"][1]["content"])
    assert user["sentence"] == SENTENCE and user["language"] == "en"
    assert user["flags"] == [{"start": 6, "end": 9, "word": "teh", "suggestions": ["the"]}]
    assert {"start": 10, "end": 16, "text": "quokka"} in user["words"]
    assert server.stats()["authorizations"] == [None], "no key: no Authorization header"
    assert helper.close() == 0


def test_extra_fix_with_emoji_offsets(server):
    # Offsets are code points: the emoji (1 code point) and the flag (2) come before the fix.
    sentence = "I 😀🇫🇷 saw teh cat adn dog."
    start = sentence.index("adn")
    server.reset("extra_fix", fix_original="adn", fix_replacement="and")
    helper = Helper(server)
    helper.check(4, sentence, [flag(sentence.index("teh"), sentence.index("teh") + 3, "teh", ["the"])])
    reply = helper.reply(4)
    assert reply["fixes"] == [{"start": start, "end": start + 3, "original": "adn", "replacement": "and",
                               "explanation": "fake fix"}], reply
    assert len(reply["verdicts"]) == 1
    assert helper.close() == 0


def test_miscounted_fix_is_relocated_when_unambiguous(server):
    sentence = "We went their yesterday."
    answer = {"verdicts": [], "fixes": [{"start": 9, "end": 14, "original": "their", "replacement": "there"}]}
    server.reset("content", content=json.dumps(answer))
    helper = Helper(server)
    helper.check(5, sentence)
    reply = helper.reply(5)
    assert reply["fixes"] == [{"start": 8, "end": 13, "original": "their", "replacement": "there"}], reply
    assert helper.close() == 0


def test_mismatching_spans_are_discarded(server):
    server.reset("bad_spans")
    helper = Helper(server)
    helper.check(6, SENTENCE, [TEH])
    reply = helper.reply(6)
    assert reply["type"] == "result" and reply["verdicts"] == [] and reply["fixes"] == [], reply
    # Ambiguous relocation (the word occurs twice) and a non-matching original are dropped too.
    answer = {"verdicts": [{"start": 0, "end": 2, "verdict": "agree"}],
              "fixes": [{"start": 1, "end": 4, "original": "teh", "replacement": "the"},
                        {"start": 0, "end": 3, "original": "The", "replacement": "The"}]}
    server.reset("content", content=json.dumps(answer))
    helper.check(7, "teh cat and teh dog.", [flag(0, 3, "teh", ["the"])])
    reply = helper.reply(7)
    assert reply["verdicts"] == [] and reply["fixes"] == [], reply
    assert helper.close() == 0


def test_code_fenced_answer_is_accepted(server):
    answer = {"verdicts": [{"start": "6", "end": 9.0, "verdict": "Agree", "explanation": "typo"}], "fixes": []}
    server.reset("content", content="```json\n" + json.dumps(answer) + "\n```")
    helper = Helper(server)
    helper.check(8, SENTENCE, [TEH])
    reply = helper.reply(8)
    assert reply["verdicts"] == [{"start": 6, "end": 9, "verdict": "agree", "explanation": "typo"}], reply
    assert helper.close() == 0


def test_malformed_model_output_gives_empty_result_and_helper_survives(server):
    server.reset("malformed")
    helper = Helper(server)
    helper.check(9, SENTENCE, [TEH])
    reply = helper.reply(9)
    assert reply == {"v": 1, "type": "result", "id": 9, "verdicts": [], "fixes": []}, reply
    server.reset("agree")
    helper.check(10, SENTENCE, [TEH])  # malformed answers are not cached
    assert helper.reply(10)["verdicts"][0]["verdict"] == "agree"
    assert server.requests == 1
    assert helper.close() == 0


def test_non_chat_body_is_an_error(server):
    server.reset("bad_body")
    helper = Helper(server)
    helper.check(11, SENTENCE, [TEH])
    assert helper.reply(11) == {"v": 1, "type": "error", "id": 11, "message": "bad response"}
    assert helper.close() == 0


def test_http_500_is_an_error(server):
    server.reset("error500")
    helper = Helper(server)
    helper.check(12, SENTENCE, [TEH])
    assert helper.reply(12) == {"v": 1, "type": "error", "id": 12, "message": "http 500"}
    assert helper.close() == 0


def test_oversized_response_is_aborted(server):
    server.reset("big")
    helper = Helper(server)
    helper.check(13, SENTENCE, [TEH])
    assert helper.reply(13)["message"] == "response too large"
    assert helper.close() == 0


def test_slow_answer_times_out(server):
    server.reset("slow", delay=20)
    helper = Helper(server, timeout_ms=1000)
    started = time.monotonic()
    helper.check(14, SENTENCE, [TEH])
    assert helper.reply(14) == {"v": 1, "type": "error", "id": 14, "message": "timeout"}
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 10, elapsed
    assert helper.close() == 0


def test_hang_then_cancel_gives_no_reply_and_next_request_works(server):
    server.reset("hang")
    helper = Helper(server)  # default timeout: 8 s
    helper.check(15, SENTENCE, [TEH])
    wait_until(lambda: server.requests == 1, what="request in flight")
    started = time.monotonic()
    helper.cancel(15)
    server.control(mode="agree")
    helper.check(16, "Another sentense here.", [flag(8, 16, "sentense", ["sentence"])])
    reply = helper.reply(16)
    assert reply["type"] == "result", reply
    assert time.monotonic() - started < 6, "cancel did not abort the transfer"
    assert 15 not in helper.ids(), helper.replies
    assert server.requests == 2
    assert helper.close() == 0
    assert 15 not in helper.ids()


def test_cancel_of_a_queued_check_is_never_sent(server):
    server.reset("hang")
    helper = Helper(server)
    helper.check(17, SENTENCE, [TEH])
    wait_until(lambda: server.requests == 1, what="request in flight")
    helper.check(18, "Queued sentance one.", [flag(7, 15, "sentance", ["sentence"])])
    helper.cancel(18)
    helper.cancel(17)
    server.control(mode="agree")
    helper.check(19, "Fresh sentance two.", [flag(6, 14, "sentance", ["sentence"])])
    assert helper.reply(19)["type"] == "result"
    assert server.requests == 2, "the cancelled queued check must not reach the server"
    assert 17 not in helper.ids() and 18 not in helper.ids()
    assert helper.close() == 0


def test_queue_is_bounded_dropping_the_oldest(server):
    server.reset("hang")
    helper = Helper(server)
    helper.check(20, "Sentence number zero.")
    wait_until(lambda: server.requests == 1, what="request in flight")
    for id in range(21, 26):  # 21..24 fill the queue, 25 pushes 21 out
        helper.check(id, "Pending sentence %d." % id)
    assert helper.reply(21) == {"v": 1, "type": "error", "id": 21, "message": "overloaded"}
    for id in (20, 22, 23, 24, 25):
        helper.cancel(id)
    server.control(mode="agree")
    helper.check(26, "Final sentence here.")
    assert helper.reply(26)["type"] == "result"
    assert set(helper.ids()) == {None, 21, 26}, helper.replies
    assert server.requests == 2
    assert helper.close() == 0


def test_circuit_opens_after_three_failures_and_closes_after_success(server):
    server.reset("error500")
    helper = Helper(server, "--breaker-ms", "400")
    for id in (30, 31, 32):
        helper.check(id, "Failing sentence %d." % id)
        assert helper.reply(id)["message"] == "http 500"
    assert server.requests == 3
    helper.check(33, "Failing sentence 33.")
    assert helper.reply(33) == {"v": 1, "type": "error", "id": 33, "message": "circuit open"}
    assert server.requests == 3, "an open circuit must not contact the server"
    # After the open period a probe goes through; success closes the circuit.
    server.control(mode="agree")
    next_id = [40]

    def probe():
        id = next_id[0]
        next_id[0] += 1
        helper.check(id, "Probe sentence %d." % id)
        return helper.reply(id)["type"] == "result"

    wait_until(probe, what="circuit to close")
    assert server.requests == 4
    # Closed again: one failure does not open it.
    server.control(mode="error500")
    helper.check(90, "Failing again once.")
    assert helper.reply(90)["message"] == "http 500"
    server.control(mode="agree")
    helper.check(91, "Working again now.")
    assert helper.reply(91)["type"] == "result"
    assert helper.close() == 0


def test_loopback_endpoint_ignores_proxy_settings(server):
    dead = "http://127.0.0.1:9"
    helper = Helper(server, env_extra={"http_proxy": dead, "HTTP_PROXY": dead, "all_proxy": dead})
    helper.check(53, SENTENCE, [TEH])
    assert helper.reply(53)["type"] == "result"
    assert helper.close() == 0


def test_cache_hit_does_not_reach_the_server(server):
    helper = Helper(server)
    helper.check(50, SENTENCE, [TEH])
    first = helper.reply(50)
    helper.check(51, SENTENCE, [TEH])
    second = helper.reply(51)
    assert dict(first, id=51) == second
    assert server.requests == 1
    helper.check(52, SENTENCE, [])  # other flags: another entry
    helper.reply(52)
    assert server.requests == 2
    assert helper.close() == 0


def test_garbage_lines_are_ignored(server):
    helper = Helper(server)
    helper.wait(lambda r: r["type"] == "hello")
    garbage = [b"not json at all\n", b"{}\n", b"[1,2,3]\n", b"\xff\xfe\x00binary\n",
               json.dumps({"v": 2, "type": "check", "id": 60, "sentence": "x", "language": "en",
                           "flags": []}).encode() + b"\n",
               json.dumps({"v": 1, "type": "check", "id": 61}).encode() + b"\n",
               json.dumps({"v": 1, "type": "dance"}).encode() + b"\n",
               b"{" + b"x" * (200 * 1024) + b"}\n"]
    for line in garbage:
        helper.send_raw(line)
    helper.check(62, SENTENCE, [TEH])
    assert helper.reply(62)["type"] == "result"
    assert not {60, 61} & set(helper.ids())
    helper.wait_stderr("count=%d" % len(garbage))
    assert "bytes=%d" % (200 * 1024 + 2) in helper.stderr_text()
    assert helper.proc.poll() is None
    assert helper.close() == 0


def test_sentence_too_long_is_refused(server):
    helper = Helper(server)
    helper.check(63, "word " * 200)
    assert helper.reply(63)["message"] == "sentence too long"
    assert server.requests == 0
    assert helper.close() == 0


def write_key(path, key, mode):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(key + "\n")
    os.chmod(path, mode)
    SECRET_KEYS.add(key)


def test_key_file_with_mode_0644_is_refused(server):
    directory = tempfile.mkdtemp(prefix="inkling-key-")
    path = os.path.join(directory, "cloud-key")
    write_key(path, "sk-test-open-0644-secret", 0o644)
    helper = Helper(server, key_file=path)
    helper.check(70, SENTENCE, [TEH])
    helper.reply(70)
    assert server.stats()["authorizations"] == [None]
    helper.wait_stderr("refusing to use the key file")
    assert "chmod 600" in helper.stderr_text()
    assert helper.close() == 0
    shutil.rmtree(directory)


def test_key_file_with_mode_0600_is_used(server):
    directory = tempfile.mkdtemp(prefix="inkling-key-")
    path = os.path.join(directory, "cloud-key")
    write_key(path, "sk-test-private-0600-secret", 0o600)
    helper = Helper(server, key_file=path)
    helper.check(71, SENTENCE, [TEH])
    helper.reply(71)
    assert server.stats()["authorizations"] == ["Bearer sk-test-private-0600-secret"]
    assert helper.close() == 0
    shutil.rmtree(directory)


def test_default_key_file_location_and_symlink_refusal(server):
    helper = Helper(server)  # XDG_CONFIG_HOME is the helper's private folder
    path = os.path.join(helper.env["XDG_CONFIG_HOME"], "inkling", "cloud-key")
    helper.close()
    write_key(path, "sk-test-default-location", 0o600)
    helper = Helper(server, env_extra={"XDG_CONFIG_HOME": os.path.dirname(os.path.dirname(path))})
    helper.check(72, SENTENCE, [TEH])
    helper.reply(72)
    assert server.stats()["authorizations"] == ["Bearer sk-test-default-location"]
    helper.close()
    link = path + "-link"
    os.symlink(path, link)
    server.reset()
    helper = Helper(server, key_file=link)
    helper.check(73, SENTENCE, [TEH])
    helper.reply(73)
    assert server.stats()["authorizations"] == [None]
    helper.wait_stderr("symbolic link")
    helper.close()
    shutil.rmtree(os.path.dirname(os.path.dirname(path)), ignore_errors=True)


class PrivateBus:
    """A private session bus (dbus-daemon child) with the fake Secret Service on it."""

    def __init__(self, endpoint, secret):
        self.procs = []
        daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.procs.append(daemon)
        self.address = daemon.stdout.readline().strip()
        assert self.address.startswith("unix:"), "dbus-daemon did not start"
        service = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(HERE), "fake_secret_service.py"), "--secret", secret,
             "--attribute", "endpoint=" + endpoint],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, DBUS_SESSION_BUS_ADDRESS=self.address))
        self.procs.append(service)
        assert service.stdout.readline().strip() == "READY", "fake secret service did not start"

    def stop(self):
        for proc in reversed(self.procs):
            proc.kill()
            proc.wait(timeout=WAIT)


def test_keyring_key_is_preferred_to_the_key_file(server):
    if not shutil.which("dbus-daemon"):
        raise AssertionError("dbus-daemon is missing (package dbus)")
    directory = tempfile.mkdtemp(prefix="inkling-key-")
    path = os.path.join(directory, "cloud-key")
    write_key(path, "sk-test-file-not-keyring", 0o600)
    SECRET_KEYS.add("sk-test-from-keyring")
    bus = PrivateBus(server.url + "/v1", "sk-test-from-keyring")
    try:
        env = {"DBUS_SESSION_BUS_ADDRESS": bus.address}
        helper = Helper(server, key_file=path, env_extra=env, keyring=True)
        helper.check(74, SENTENCE, [TEH])
        helper.reply(74)
        assert server.stats()["authorizations"] == ["Bearer sk-test-from-keyring"]
        helper.wait_stderr("from the keyring")
        assert helper.close() == 0
        # The keyring holds no key for another endpoint: the key file is used.
        server.reset()
        helper = Helper(server, key_file=path, env_extra=env, keyring=True, endpoint=server.url + "/other")
        helper.check(75, SENTENCE, [TEH])
        helper.reply(75)
        assert server.stats()["authorizations"] == ["Bearer sk-test-file-not-keyring"]
        assert helper.close() == 0
    finally:
        bus.stop()
        shutil.rmtree(directory, ignore_errors=True)


def test_insecure_or_bad_arguments_exit_with_usage(server):
    for args in (["--endpoint", "http://example.com/v1", "--model", "m"],
                 ["--model", "m"],
                 ["--endpoint", "https://user:pw@example.com/v1", "--model", "m"],
                 ["--endpoint", "https://example.com/v1", "--model", "m", "--api-key", "sk-x"]):
        proc = subprocess.run([BINARY] + args, capture_output=True, timeout=WAIT, env={"PATH": "/usr/bin:/bin"})
        assert proc.returncode == 2, (args, proc)
        assert b"usage:" in proc.stderr and proc.stdout == b""
        assert b"sk-x" not in proc.stderr and b"pw@" not in proc.stderr


def test_stderr_never_contains_typed_text_or_keys(server):
    # A verbose helper through failures and successes, then every helper's stderr so far.
    helper = Helper(server, "--verbose")
    secret = "Confidential zyzzyvas meeting tomorrow."
    helper.check(80, secret, [flag(13, 21, "zyzzyvas", ["zyzzyva"])])
    helper.reply(80)
    server.control(mode="error500")
    helper.check(81, secret + " Again.")
    helper.reply(81)
    helper.send_raw(secret + "\n")
    helper.wait_stderr("ignored an input line")
    helper.close()
    text = b"\n".join(ALL_STDERR).decode("utf-8", "replace")
    assert "check done" in text and "check failed" in text
    words = {w for w in SECRET_WORDS if len(w) >= 4} | {"Confidential", "zyzzyvas", "quokka"}
    leaked = sorted(w for w in words if w in text)
    assert not leaked, "typed text on stderr: %s" % leaked
    assert not [k for k in SECRET_KEYS if k in text], "key on stderr"
