"""Shared pytest set-up for every Python process test under Tests/: the helpers of
process_support.py (binary discovery, wait_until, stop_process, the fake chat-completions server)
importable from any suite, and fixtures built on them. Suites add their own conftest.py below
(Tests/Integration: the private ibus-daemon and its client).
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from process_support import FakeLLMServer  # noqa: E402


@pytest.fixture(scope="module")
def fake_llm_server():
    """One fake chat-completions server per test module; tests reset it to the mode they need."""
    server = FakeLLMServer(lifetime=600, hang_max=60)
    yield server
    server.stop()
