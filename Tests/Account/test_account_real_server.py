"""The client side against the real `inkling-server` (over SQLite and over PostgreSQL, a fake
upstream) on loopback: `inkling account` signs in and out, `inkling-cloud` checks with the device
token, stops on 401 and keeps rotating past the grace period. Run by run.sh under
dbus-run-session (the keyring)."""

import importlib.util
import json
import os

import pytest

from conftest import REAL_USERS, RealServer, inkling, wait_until
from test_account import Helper, result_of, statuses


def server_fixtures():
    """Tests/Server/conftest.py (its PostgreSQL cluster), loaded under another name than ours."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Server", "conftest.py")
    spec = importlib.util.spec_from_file_location("inkling_server_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL cluster for this module, started as Tests/Server starts its own."""
    cluster = server_fixtures().PostgresCluster()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def real(request, upstream):
    servers = []
    cluster = request.getfixturevalue("postgres") if request.param == "postgresql" else None

    def start(**tokens):
        database = cluster.new_database() if cluster else None
        s = RealServer(upstream, tokens={k: str(v) for k, v in tokens.items()}, database=database)
        servers.append(s)
        return s

    yield start
    for s in servers:
        log = s.log_text()
        s.stop()
        # The server's log holds no token and no sentence.
        assert "ink_" not in log and "teh" not in log


@pytest.fixture
def helpers():
    started = []

    def start(url):
        h = Helper(url)
        started.append(h)
        return h

    yield start
    for h in started:
        log = h.stop()
        assert "ink_" not in log and "teh" not in log


def sign_in(server, user="ada", device="laptop"):
    return inkling("account", "login", "--server", server.url, "--user", user, "--device", device,
                   password=REAL_USERS[user])


def test_login_check_and_logout_with_the_real_server(keyring, real, upstream, helpers):
    server = real()
    done = sign_in(server)
    assert done.returncode == 0, done.stderr
    token = keyring.record(server.url)["token"]
    assert token.startswith("ink_") and server.token_works(token)
    assert inkling("account", "status", "--server", server.url).returncode == 0

    helper = helpers(server.url)
    before = upstream.stats()["requests"]
    reply = result_of(helper.check("I saw teh cat."))
    assert reply["type"] == "result" and [v["verdict"] for v in reply["verdicts"]] == ["agree"], reply
    stats = upstream.stats()
    # The upstream saw the server's key, never the device token.
    assert stats["requests"] == before + 1
    assert stats["authorizations"][-1] == "Bearer sk-upstream-key-of-the-server"
    assert token not in json.dumps(stats)

    done = inkling("account", "logout", "--server", server.url)
    assert done.returncode == 0, done.stderr
    assert keyring.record(server.url) is None
    assert not server.token_works(token)
    lines = helper.check("I saw teh dog.")
    assert statuses(lines) == ["sign-in-required"] and result_of(lines)["message"] == "sign-in required"
    lines = helper.check("I saw teh owl.")
    assert statuses(lines) == [] and upstream.stats()["requests"] == before + 1


def test_a_wrong_password_is_refused_by_the_real_server(keyring, real):
    server = real()
    done = inkling("account", "login", "--server", server.url, "--user", "ada", password="not it")
    assert done.returncode == 1 and "wrong user name or password" in done.stderr
    assert keyring.record(server.url) is None


def test_logout_everywhere_with_the_real_server(keyring, real):
    server = real()
    status, answer = server.call("POST", "/v1/devices",
                                 {"username": "ada", "password": REAL_USERS["ada"], "device_name": "phone"})
    assert status == 201
    phone = answer["token"]
    status, answer = server.call("POST", "/v1/devices",
                                 {"username": "bob", "password": REAL_USERS["bob"], "device_name": "desk"})
    bobs = answer["token"]
    assert sign_in(server).returncode == 0
    laptop = keyring.record(server.url)["token"]
    done = inkling("account", "logout", "--server", server.url, "--everywhere")
    assert done.returncode == 0, done.stderr
    assert not server.token_works(laptop) and not server.token_works(phone)
    assert server.token_works(bobs)
    assert keyring.record(server.url) is None


def test_rotation_keeps_working_past_the_grace_period_with_the_real_server(keyring, real, helpers):
    # The server asks for rotation once a token is a second old; the old one dies a second later.
    server = real(rotate_after=1, grace=1, lifetime=3600)
    assert sign_in(server).returncode == 0
    first = keyring.record(server.url)["token"]
    helper = helpers(server.url)
    count = [0]

    def rotated():
        count[0] += 1
        lines = helper.check("I saw teh ant %d." % count[0])
        assert result_of(lines)["type"] == "result", lines
        return keyring.record(server.url)["token"] != first

    wait_until(rotated, what="the helper to rotate its token")
    # The old token is refused once its grace has passed; the helper's checks keep working.
    wait_until(lambda: not server.token_works(first), what="the old token's grace to end")
    for n in range(3):
        lines = helper.check("I saw teh bee %d." % n)
        assert result_of(lines)["type"] == "result" and statuses(lines) == [], lines
    current = keyring.record(server.url)["token"]
    assert server.token_works(current)
    # A new helper (the engine restarted) starts from the keyring's token.
    again = helpers(server.url)
    assert result_of(again.check("I saw teh yak."))["type"] == "result"
