"""The account mode end to end through the engine: a real ibus-daemon, the real engine, the real
`inkling-cloud` it starts, the keyring on the private session bus and an Inkling Server on
loopback. A chip is confirmed through the server with the device token; after the token is
revoked the engine says once, in the auxiliary text, that the cloud check needs a new sign-in.

Runs in its own pytest process (libibus talks to one daemon per process; run.sh does this)."""

import os
import sys
import time

import pytest

from conftest import REAL_USERS, WAIT, inkling, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Integration"))
from ibus_harness import AuxClient, Daemon, engine_path, focused, pump_until  # noqa: E402

NOTICE = "cloud check paused: sign in again (inkling account login)"
HINT = "\u2601 checking"


@pytest.fixture(scope="module")
def account_server():
    """The real inkling-server (SQLite, a fake upstream) when it is built, else the fake server:
    one daemon per process, so one of them."""
    from conftest import FakeServer, RealServer, Upstream, server_binary
    if os.access(server_binary(), os.X_OK):
        upstream = Upstream()
        s = RealServer(upstream)
        s.checks_seen = lambda: upstream.stats()["requests"]
        s.upstream = upstream
    else:
        s = FakeServer()
        s.checks_seen = lambda: len(checks(s))
        s.upstream = None
    yield s
    s.stop()
    if s.upstream:
        s.upstream.stop()


@pytest.fixture(scope="module")
def daemon(account_server, keyring):
    engine = engine_path()
    helper = os.path.join(os.path.dirname(engine), "inkling-cloud")
    if not os.access(engine, os.X_OK) or not os.access(helper, os.X_OK):
        pytest.skip("no engine and helper at %s" % os.path.dirname(engine))
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        os.environ.pop(name, None)
    signed_in = inkling("account", "login", "--server", account_server.url, "--user", "ada", password=REAL_USERS["ada"])
    assert signed_in.returncode == 0, signed_in.stderr
    d = Daemon(env={
        "INKLING_CLOUD_CHECK": "1",
        "INKLING_CLOUD_ENDPOINT": account_server.url,
        # No model: an Inkling Server needs none (an empty cloud-model must not keep the check off).
        "INKLING_CLOUD_TIMEOUT_MS": "3000",
        "NO_PROXY": "127.0.0.1,localhost",
    }).start()
    yield d
    d.stop()


@pytest.fixture
def client(daemon):
    with focused(AuxClient(daemon)) as c:
        yield c


def checks(server):
    return [r for r in server.stats()["requests"] if r["path"] == "/v1/check"]


def test_a_chip_is_confirmed_through_the_server_then_a_revoked_token_is_noticed_once(client, account_server, keyring):
    token = keyring.record(account_server.url)["token"]
    client.type("I saw teh ")
    pump_until(lambda: "teh \u2192 the" in client.aux_now, timeout=WAIT, what="the local chip")
    client.type("cat.")
    pump_until(lambda: account_server.checks_seen() >= 1, timeout=WAIT, what="the check at the server")
    if account_server.upstream is None:
        assert checks(account_server)[-1]["auth"] == "Bearer " + token
    else:
        assert account_server.upstream.stats()["authorizations"][-1] == "Bearer sk-upstream-key-of-the-server"
    # The server agrees: the hint goes, the chip stays.
    pump_until(lambda: HINT not in client.aux_now and "teh \u2192 the" in client.aux_now, timeout=WAIT,
               what="the confirmed chip (aux %r)" % client.aux_now)

    # Signed out (here: from the command line): the next check is refused with 401.
    assert inkling("account", "logout", "--server", account_server.url).returncode == 0
    client.type(" We saw teh dog.")
    pump_until(lambda: NOTICE in client.aux_now, timeout=WAIT, what="the sign-in notice (aux %r)" % client.aux_now)
    shown = sum(1 for text in client.aux_history if NOTICE in text)
    sent = account_server.checks_seen()

    # Later sentences: no request reaches the server, and the notice does not come back.
    client.type(" They saw teh bird.")
    wait_until(lambda: HINT not in client.aux_now, what="the refused check to be answered")
    client.type(" And teh fox.")
    pump_until(lambda: HINT in client.aux_now or "fox" in client.text, timeout=WAIT, what="typing")
    # Where the point is that nothing arrives: the main loop runs for a while.
    end = time.monotonic() + 3
    pump_until(lambda: time.monotonic() > end, timeout=10, what="time to pass")
    assert account_server.checks_seen() == sent
    assert NOTICE not in client.aux_now
    assert sum(1 for text in client.aux_history if NOTICE in text) == shown
