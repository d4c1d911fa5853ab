"""Fixtures: one private headless ibus-daemon per test process, a fresh focused client per test.

libibus keeps one IBusBus per process, so a process talks to one daemon; tests that need
another daemon (for example an engine without a language pack) run a helper script.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ibus_harness import Client, Daemon, engine_path  # noqa: E402


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
