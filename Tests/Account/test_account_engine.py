"""The account mode end to end through the engine: a real ibus-daemon, the real engine, the real
`inkling-cloud` it starts, the keyring on the private session bus and an Inkling Server on
loopback. A chip is confirmed through the server with the device token; after the token is
revoked the engine says once, in the auxiliary text, that the cloud check needs a new sign-in.

Runs in its own pytest process (libibus talks to one daemon per process; run.sh does this)."""

import os
import sys

import pytest

from conftest import WAIT, inkling, login, wait_until

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Integration"))
from ibus_harness import Client, Daemon, engine_path, pump_until  # noqa: E402

NOTICE = "cloud check paused: sign in again (inkling account login)"
HINT = "\u2601 checking"


class AuxClient(Client):
    """A client that also follows the auxiliary text."""

    def __init__(self, daemon, **kw):
        super().__init__(daemon, **kw)
        self.aux_text = ""
        self.aux_visible = False
        self.aux_history = []
        self._connect("update-auxiliary-text", self._on_aux)
        self._connect("show-auxiliary-text", lambda ic: setattr(self, "aux_visible", True))
        self._connect("hide-auxiliary-text", lambda ic: setattr(self, "aux_visible", False))

    def _on_aux(self, ic, text, visible):
        self.aux_text = text.get_text()
        self.aux_visible = bool(visible)
        self.aux_history.append(self.aux_text)

    @property
    def aux_now(self):
        return self.aux_text if self.aux_visible else ""


@pytest.fixture(scope="module")
def account_server():
    from conftest import FakeServer
    s = FakeServer()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def daemon(account_server, keyring):
    engine = engine_path()
    helper = os.path.join(os.path.dirname(engine), "inkling-cloud")
    if not os.access(engine, os.X_OK) or not os.access(helper, os.X_OK):
        pytest.skip("no engine and helper at %s" % os.path.dirname(engine))
    for name in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        os.environ.pop(name, None)
    assert login(account_server).returncode == 0
    d = Daemon(env={
        "INKLING_CLOUD_CHECK": "1",
        "INKLING_CLOUD_ENDPOINT": account_server.url,
        "INKLING_CLOUD_MODEL": "unused",
        "INKLING_CLOUD_TIMEOUT_MS": "3000",
        "NO_PROXY": "127.0.0.1,localhost",
    }).start()
    yield d
    d.stop()


@pytest.fixture
def client(daemon):
    c = AuxClient(daemon)
    c.focus_in()
    c.set_engine("inkling")
    c.wait_for_surrounding_request()
    yield c
    c.focus_out()
    c.destroy()


def checks(server):
    return [r for r in server.stats()["requests"] if r["path"] == "/v1/check"]


def test_a_chip_is_confirmed_through_the_server_then_a_revoked_token_is_noticed_once(client, account_server, keyring):
    token = keyring.record(account_server.url)["token"]
    client.type("I saw teh ")
    pump_until(lambda: "teh \u2192 the" in client.aux_now, timeout=WAIT, what="the local chip")
    client.type("cat.")
    pump_until(lambda: len(checks(account_server)) >= 1, timeout=WAIT, what="the check at the server")
    assert checks(account_server)[-1]["auth"] == "Bearer " + token
    # The server agrees: the hint goes, the chip stays.
    pump_until(lambda: HINT not in client.aux_now and "teh \u2192 the" in client.aux_now, timeout=WAIT,
               what="the confirmed chip (aux %r)" % client.aux_now)

    # Signed out (here: from the command line): the next check is refused with 401.
    assert inkling("account", "logout", "--server", account_server.url).returncode == 0
    client.type(" We saw teh dog.")
    pump_until(lambda: NOTICE in client.aux_now, timeout=WAIT, what="the sign-in notice (aux %r)" % client.aux_now)
    assert client.aux_history.count(client.aux_now) >= 1
    shown = sum(1 for text in client.aux_history if NOTICE in text)
    sent = len(checks(account_server))

    # Later sentences: no request reaches the server, and the notice does not come back.
    client.type(" They saw teh bird.")
    wait_until(lambda: HINT not in client.aux_now, what="the refused check to be answered")
    client.type(" And teh fox.")
    pump_until(lambda: HINT in client.aux_now or "fox" in client.text, timeout=WAIT, what="typing")
    end = __import__("time").monotonic() + 3
    pump_until(lambda: __import__("time").monotonic() > end, timeout=10, what="time to pass")
    assert len(checks(account_server)) == sent
    assert NOTICE not in client.aux_now
    assert sum(1 for text in client.aux_history if NOTICE in text) == shown
