"""Fixtures of the account tests: a private keyring (Tests/fake_secret_service.py on the session
bus that run.sh starts with dbus-run-session), an Inkling Server on loopback, the binaries.

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
FAKE_SECRET_SERVICE = os.path.join(os.path.dirname(HERE), "fake_secret_service.py")


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
    """Tests/fake_secret_service.py, owning org.freedesktop.secrets on the test's session bus."""

    def __init__(self):
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            pytest.skip("no session bus: run Tests/Account/run.sh (dbus-run-session)")
        self.state = tempfile.mktemp(prefix="inkling-keyring-", suffix=".json")
        self.proc = subprocess.Popen([sys.executable, FAKE_SECRET_SERVICE, "--state", self.state],
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


# No API key file of the person running the tests (the helper would use it instead of looking
# for a sign-in).
CONFIG_HOME = tempfile.mkdtemp(prefix="inkling-account-config-")


def environment(**extra):
    env = dict(os.environ, GSETTINGS_BACKEND="memory", LC_ALL="C.UTF-8", XDG_CONFIG_HOME=CONFIG_HOME)
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


# -- the real inkling-server ---------------------------------------------------------------------

REAL_USERS = {"ada": PASSWORD, "bob": PASSWORD + " too"}


def server_binary():
    return os.environ.get("INKLING_SERVER") or binary("inkling-server")


class Upstream:
    """The cloud helper tests' fake chat-completions server, as the real server's upstream."""

    def __init__(self):
        cloud = os.path.join(os.path.dirname(HERE), "Cloud")
        self.proc = subprocess.Popen([sys.executable, os.path.join(cloud, "fake_llm_server.py"), "--lifetime", "600"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cloud)
        line = self.proc.stdout.readline()
        assert line.startswith("PORT "), "the fake upstream did not start"
        self.port = int(line.split()[1])
        self.url = "http://127.0.0.1:%d/v1" % self.port

    def stats(self):
        with DIRECT.open("http://127.0.0.1:%d/_stats" % self.port, timeout=10) as response:
            return json.loads(response.read())

    def stop(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


class RealServer:
    """`inkling-server serve` on loopback with `ada` and `bob`, over SQLite in a temporary folder
    or over the PostgreSQL `database` URL."""

    def __init__(self, upstream, tokens=None, database=None):
        self.directory = tempfile.mkdtemp(prefix="inkling-account-server-")
        key_file = os.path.join(self.directory, "upstream-key")
        with open(key_file, "w") as f:
            f.write("sk-upstream-key-of-the-server\n")
        os.chmod(key_file, 0o600)
        groups = {
            "server": {"listen": "127.0.0.1:0", "threads": "4", "idle_timeout": "5", "request_timeout": "30"},
            "database": {"url": database or os.path.join(self.directory, "inkling.db")},
            "upstream": {"endpoint": upstream.url, "model": "fake-model", "key_file": key_file, "timeout_ms": "3000"},
            "tokens": tokens or {},
            "limits": {"checks_per_minute": "1000"},
            "passwords": {"argon2_iterations": "1", "argon2_memory_kib": "1024"},
        }
        self.config = os.path.join(self.directory, "server.conf")
        with open(self.config, "w") as f:
            for name, values in groups.items():
                f.write("[%s]\n" % name + "".join("%s=%s\n" % item for item in values.items()))
        for user, password in REAL_USERS.items():
            subprocess.run([server_binary(), "--config", self.config, "user", "add", user], input=password + "\n",
                           text=True, check=True, capture_output=True, timeout=60)
        self.log_path = os.path.join(self.directory, "server.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([server_binary(), "--config", self.config, "serve"], stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log)

        def port():
            with open(self.log_path, "rb") as f:
                for line in f.read().decode(errors="replace").splitlines():
                    if "listening port=" in line:
                        return int(line.split("listening port=")[1].split()[0])
            assert self.proc.poll() is None, "inkling-server exited: " + self.log_text()
            return None

        self.url = "http://127.0.0.1:%d" % wait_until(port, what="inkling-server to listen")

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    call = FakeServer.call
    token_works = FakeServer.token_works

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


@pytest.fixture(scope="module")
def upstream():
    if not os.access(server_binary(), os.X_OK):
        pytest.skip("no inkling-server at %s (build it, or set INKLING_SERVER)" % server_binary())
    u = Upstream()
    yield u
    u.stop()
