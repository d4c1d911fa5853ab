"""Fixtures for the Inkling Server's integration tests: the real `inkling-server` on loopback,
over SQLite and over a PostgreSQL cluster the tests start themselves (Debian's `postgresql`
package, a temporary data directory), with the fake OpenAI-compatible upstream of the cloud
helper's tests in front of it."""

import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SERVER = os.environ.get("INKLING_SERVER", os.path.join(REPO, ".build", "release", "inkling-server"))
FAKE_UPSTREAM = os.path.join(REPO, "Tests", "Cloud", "fake_llm_server.py")
PG_BIN = os.environ.get("INKLING_PG_BIN", "/usr/lib/postgresql/15/bin")
UPSTREAM_KEY = "sk-upstream-key-of-the-server-1234567890"
PASSWORDS = {"ann": "ann-pass-Quokka7", "bob": "bob-pass-Wombat9"}

BACKENDS = ["sqlite", "postgresql"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Upstream:
    def __init__(self):
        self.process = subprocess.Popen(
            [sys.executable, FAKE_UPSTREAM, "--lifetime", "600"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=os.path.join(REPO, "Tests", "Cloud"))
        line = self.process.stdout.readline().decode()
        assert line.startswith("PORT "), line
        self.port = int(line.split()[1])
        self.url = "http://127.0.0.1:%d/v1" % self.port

    def control(self, **body):
        request = urllib.request.Request("http://127.0.0.1:%d/_control" % self.port, data=json.dumps(body).encode(), method="POST")
        urllib.request.urlopen(request, timeout=5).read()

    def stats(self):
        return json.loads(urllib.request.urlopen("http://127.0.0.1:%d/_stats" % self.port, timeout=5).read())

    def stop(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


@pytest.fixture(scope="session")
def upstream():
    up = Upstream()
    yield up
    up.stop()


def run_as_postgres_user():
    """initdb refuses root: under root the cluster runs as `nobody`."""
    if os.geteuid() != 0:
        return [], None
    entry = pwd.getpwnam("nobody")
    return ["setpriv", "--reuid=%d" % entry.pw_uid, "--regid=%d" % entry.pw_gid, "--clear-groups"], entry


class PostgresCluster:
    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="inkling-pg-")
        prefix, entry = run_as_postgres_user()
        self.prefix = prefix
        os.chmod(self.directory, 0o755)
        data = os.path.join(self.directory, "data")
        os.mkdir(data, 0o700)
        if entry:
            os.chown(data, entry.pw_uid, entry.pw_gid)
            os.chown(self.directory, entry.pw_uid, entry.pw_gid)
        subprocess.run(prefix + [os.path.join(PG_BIN, "initdb"), "-D", data, "-U", "inkling", "--auth=trust", "-E", "UTF8", "--no-sync"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.port = free_port()
        self.log = open(os.path.join(self.directory, "postgres.log"), "wb")
        self.process = subprocess.Popen(
            prefix + [os.path.join(PG_BIN, "postgres"), "-D", data, "-p", str(self.port), "-k", self.directory,
                      "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=300",
                      "-c", "shared_buffers=64MB"],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.psql("postgres", "SELECT 1", check=False).returncode == 0:
                break
            time.sleep(0.2)
        else:
            raise RuntimeError("postgres did not start")
        self.count = 0

    def psql(self, database, sql, check=True):
        return subprocess.run(
            [os.path.join(PG_BIN, "psql") if os.path.exists(os.path.join(PG_BIN, "psql")) else "psql",
             "-h", "127.0.0.1", "-p", str(self.port), "-U", "inkling", "-d", database, "-v", "ON_ERROR_STOP=1", "-qAt", "-c", sql],
            check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def new_database(self):
        self.count += 1
        name = "inkling_test_%d" % self.count
        self.psql("postgres", "CREATE DATABASE %s" % name)
        return "postgresql://inkling@127.0.0.1:%d/%s" % (self.port, name)

    def dump(self, url):
        database = url.rsplit("/", 1)[1]
        return subprocess.run(
            ["pg_dump", "-h", "127.0.0.1", "-p", str(self.port), "-U", "inkling", database],
            check=True, stdout=subprocess.PIPE).stdout

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    cluster = PostgresCluster()
    yield cluster
    cluster.stop()


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)


class Server:
    """One `inkling-server serve` process and its configuration."""

    def __init__(self, directory, database, upstream, settings=None, users=("ann", "bob")):
        self.directory = directory
        self.database = database
        self.key_file = os.path.join(directory, "upstream-key")
        with open(self.key_file, "w") as f:
            f.write(UPSTREAM_KEY + "\n")
        os.chmod(self.key_file, 0o600)
        groups = {
            "server": {"listen": "127.0.0.1:0", "threads": "4", "idle_timeout": "5", "request_timeout": "30", "log_requests": "true"},
            "database": {"url": database},
            "upstream": {"endpoint": upstream.url, "model": "fake-model", "key_file": self.key_file, "timeout_ms": "3000", "breaker_ms": "200"},
            "tokens": {},
            "limits": {"checks_per_minute": "1000", "checks_per_day": "100000"},
            "passwords": {"argon2_iterations": "1", "argon2_memory_kib": "1024"},
        }
        for name, values in (settings or {}).items():
            groups.setdefault(name, {}).update(values)
        self.config = os.path.join(directory, "server-%d.conf" % id(self))
        with open(self.config, "w") as f:
            for name, values in groups.items():
                f.write("[%s]\n" % name)
                for key, value in values.items():
                    f.write("%s=%s\n" % (key, value))
        for user in users:
            self.admin("user", "add", user, input=PASSWORDS[user] + "\n")
        self.log_path = os.path.join(directory, "server-%d.log" % id(self))
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen([SERVER, "--config", self.config, "serve"], stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        deadline = time.time() + 20
        self.port = None
        while time.time() < deadline and self.port is None:
            with open(self.log_path, "rb") as f:
                for line in f.read().decode(errors="replace").splitlines():
                    if "listening port=" in line:
                        self.port = int(line.split("listening port=")[1].split()[0])
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        assert self.port, "server did not start: " + self.log_text()

    def admin(self, *arguments, input=None, check=True):
        return subprocess.run([SERVER, "--config", self.config] + list(arguments), input=(input or "").encode(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=check, timeout=60)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def request(self, method, path, body=None, token=None, headers=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", "Bearer " + token)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=20) as response:
                return Response(response.status, response.headers, response.read())
        except urllib.error.HTTPError as error:
            return Response(error.code, error.headers, error.read())

    def sign_in(self, user="ann", password=None, device="laptop"):
        return self.request("POST", "/v1/devices", {"username": user, "password": password if password is not None else PASSWORDS[user], "device_name": device})

    def token(self, user="ann", device="laptop"):
        response = self.sign_in(user, device=device)
        assert response.status == 201, response.body
        return response.json()["token"]

    def check(self, token, sentence="I saw teh cat.", flags=None):
        if flags is None:
            flags = [{"start": 6, "end": 9, "word": "teh", "replacements": ["the"]}]
        return self.request("POST", "/v1/check", {"sentence": sentence, "language": "en", "flags": flags}, token=token)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


@pytest.fixture
def make_server(request, upstream, tmp_path):
    """Starts servers on the backend the test is parametrised with (`backend`)."""
    started = []
    backend = request.node.callspec.params.get("backend", "sqlite") if hasattr(request.node, "callspec") else "sqlite"
    cluster = request.getfixturevalue("postgres") if backend == "postgresql" else None

    def make(settings=None, database=None, users=("ann", "bob")):
        if database is None:
            database = cluster.new_database() if cluster else str(tmp_path / ("inkling-%d.db" % len(started)))
        server = Server(str(tmp_path), database, upstream, settings, users)
        server.cluster = cluster
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


def dump_database(server):
    """Every byte the database holds (SQLite file, WAL and journal; or pg_dump)."""
    if server.cluster:
        return server.cluster.dump(server.database)
    data = b""
    for suffix in ("", "-wal", "-shm", "-journal"):
        path = server.database + suffix
        if os.path.exists(path):
            with open(path, "rb") as f:
                data += f.read()
    return data
