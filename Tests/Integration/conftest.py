"""Fixtures: one private headless ibus-daemon per test process, a fresh focused client per test.

libibus keeps one IBusBus per process, so a process talks to one daemon; tests that need
another daemon (for example an engine without a language pack) run a helper script. A test file
whose engine needs settings of its own (the cloud check, dictation) starts its daemon with
`own_daemon` and runs in a pytest process of its own (run.sh does this).
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ibus_harness import AuxClient, Client, Daemon, engine_path, focused  # noqa: E402


def pytest_configure(config):
    engine = engine_path()
    if not os.access(engine, os.X_OK):
        raise pytest.UsageError(
            "engine binary not found at %s: build it (swift build -c release) or set INKLING_ENGINE" % engine
        )


@pytest.fixture(scope="session")
def daemon():
    d = Daemon().start()
    yield d
    d.stop()


@pytest.fixture
def client(daemon):
    """A focused client with all capabilities and the inkling engine."""
    c = Client(daemon)
    c.focus_in()
    c.set_engine("inkling")
    c.commits.clear()
    c.events.clear()
    c.tables.clear()
    c.preedit_updates.clear()
    yield c
    c.focus_out()
    c.destroy()


@pytest.fixture(scope="module")
def own_daemon(request):
    """`own_daemon(env)` starts this module's private daemon, whose engine gets the variables in
    `env` (the daemon passes them on) and whose engine's and helpers' logs are kept (`log()`);
    it is stopped after the module. libibus keeps one bus per process, so the module must run in
    a pytest process of its own: next to other files, or under another daemon, it is skipped."""
    module = os.path.basename(str(request.fspath))
    started = []

    def start(env):
        others = {item.fspath.basename for item in request.session.items} - {module}
        if others or os.environ.get("IBUS_ADDRESS"):
            pytest.skip("run %s in its own pytest process (as run.sh does): libibus talks to one daemon per "
                        "process" % module)
        daemon = Daemon(env=env, verbose=True).start()
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        daemon.stop()


@pytest.fixture
def aux_client(daemon):
    """A focused client with all capabilities and the inkling engine that also follows the
    auxiliary text; the engine has asked for the field's text."""
    with focused(AuxClient(daemon)) as c:
        yield c
