"""Fixtures of the account tests: a private keyring (fake_keyring.py on the session bus that
run.sh starts with dbus-run-session), an Inkling Server on loopback, the binaries.

The server is the real `inkling-server` when INKLING_SERVER names one (or one is built next to
the other binaries) — SQLite in a temporary folder, a fake upstream — and otherwise
fake_inkling_server.py, which implements the same API."""

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("INKLING_BIN") or os.path.join(REPO, ".build", "release")
WAIT = 20.0
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
SCHEMA = "org.freedesktop.ibus.engine.inkling.account"
PASSWORD = "correct horse battery staple"


def wait_until(predicate, timeout=WAIT, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)


def binary(name):
    return os.path.join(BIN, name)


class Keyring:
    """fake_keyring.py, owning org.freedesktop.secrets on the test's session bus."""

    def __init__(self):
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            pytest.skip("no session bus: run Tests/Account/run.sh (dbus-run-session)")
        self.state = tempfile.mktemp(prefix="inkling-keyring-", suffix=".json")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_keyring.py"), "--state", self.state],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "READY", "the fake keyring did not start"

    def items(self):
        with open(self.state) as f:
            return [r for r in json.load(f) if r["attributes"].get("xdg:schema") == SCHEMA]

    def record(self, server):
        found = [r for r in self.items() if r["attributes"].get("server") == server]
        assert len(found) <= 1, "more than one keyring item for one server"
        return json.loads(found[0]["secret"]) if found else None

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        os.unlink(self.state)


class FakeServer:
    def __init__(self, grace=600, token_lifetime=30 * 86400):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(HERE, "fake_inkling_server.py"), "--user", "ada:" + PASSWORD,
             "--user", "bob:" + PASSWORD, "--grace", str(grace), "--lifetime-token", str(token_lifetime)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), "the fake server did not start"
        self.url = "http://127.0.0.1:%d" % int(line.split()[1])

    def call(self, method, path, payload=None, token=None):
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", "Bearer " + token)
        try:
            with DIRECT.open(request, timeout=10) as response:
                body = response.read()
                return response.status, (json.loads(body) if body else None)
        except urllib.error.HTTPError as error:
            return error.code, None

    def control(self, **command):
        return self.call("POST", "/_control", command)[1]

    def stats(self):
        return self.call("GET", "/_stats")[1]

    def token_works(self, token):
        status, _ = self.call("POST", "/v1/check", {"sentence": "Hi.", "language": "en", "flags": []}, token=token)
        return status == 200

    def advance(self, seconds):
        self.control(advance=seconds)

    def stop(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


@pytest.fixture(scope="module")
def keyring():
    k = Keyring()
    yield k
    k.stop()


@pytest.fixture
def server():
    s = FakeServer(grace=30)
    yield s
    s.stop()


def environment(**extra):
    env = dict(os.environ, GSETTINGS_BACKEND="memory", LC_ALL="C.UTF-8")
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(name, None)
    env.update(extra)
    return env


def inkling(*arguments, password=None):
    """Runs `inkling` with `password` (a line) on standard input, which is not a terminal."""
    return subprocess.run([binary("inkling"), *arguments], capture_output=True, text=True, env=environment(),
                          input=(password + "\n") if password is not None else "", timeout=60)


def login(server, user="ada", password=PASSWORD, device="laptop"):
    return inkling("account", "login", "--server", server.url, "--user", user, "--device", device, password=password)
