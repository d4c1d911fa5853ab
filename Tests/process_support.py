"""Helpers shared by every Python process test (pytest suites and the stand-alone scripts alike):
where the binaries under test are, waiting on a condition with a deadline, ending a process,
and the fake chat-completions server of Tests/Cloud.

Standard library only (no GLib: the IBus suites pump their main loop with ibus_harness.pump_until).
Tests/conftest.py puts this folder on sys.path for pytest; a script run directly does
`sys.path.insert(0, <Tests>)` itself.
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
# A generous ceiling for any single awaited condition on a loaded 2-core machine.
DEFAULT_WAIT = float(os.environ.get("INKLING_TEST_WAIT", "15"))


class MissingBinary(RuntimeError):
    pass


def release_binary(name, override=None):
    """The binary `name` under test: the path in environment variable `override` when set, else
    the release build of this checkout. Raises MissingBinary, naming the fix, when it is not
    there: a suite that cannot run fails, it is never skipped."""
    path = (os.environ.get(override) if override else None) or os.path.join(REPO, ".build", "release", name)
    path = os.path.realpath(path)
    if not os.access(path, os.X_OK):
        how = "set %s or build it: swift build -c release --static-swift-stdlib" % override if override \
            else "build it: swift build -c release --static-swift-stdlib"
        raise MissingBinary("%s not found at %s (%s)" % (name, path, how))
    return path


def wait_until(predicate, timeout=DEFAULT_WAIT, what="condition", interval=0.01):
    """Polls `predicate()` until it returns something true, and returns that; raises
    AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(interval)


def stop_process(process, timeout=15, group=False):
    """Ends `process` (a Popen): SIGTERM, then SIGKILL after `timeout` seconds; with `group`, its
    whole process group (started with start_new_session=True). Returns the exit status."""
    def send(signal_number):
        try:
            if group:
                os.killpg(process.pid, signal_number)
            else:
                process.send_signal(signal_number)
        except ProcessLookupError:
            pass

    if process.poll() is None:
        send(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            send(signal.SIGKILL)
            process.wait()
    return process.returncode


# The fake server is on loopback: never through a proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class FakeLLMServer:
    """Tests/Cloud/fake_llm_server.py in a process of its own, and its control endpoints."""

    def __init__(self, lifetime=300, hang_max=None):
        command = [sys.executable, os.path.join(TESTS, "Cloud", "fake_llm_server.py"), "--lifetime", str(lifetime)]
        if hang_max is not None:
            command += ["--hang-max", str(hang_max)]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), "the fake server did not start"
        self.port = int(line.split()[1])
        self.url = "http://127.0.0.1:%d" % self.port

    def _call(self, path, payload=None):
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.url + path, data=data, method="POST" if data else "GET")
        with _DIRECT.open(request, timeout=10) as response:
            return json.loads(response.read())

    def control(self, **command):
        return self._call("/_control", command)

    def reset(self, mode="agree", **extra):
        return self.control(reset=True, mode=mode, **extra)

    def stats(self):
        return self._call("/_stats")

    @property
    def requests(self):
        return self.stats()["requests"]

    def stop(self):
        try:
            self.control(quit=True)
        except Exception:
            pass  # already gone: closing its stdin below ends it in any case
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()
            self.proc.wait()
