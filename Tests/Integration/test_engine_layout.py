"""The engine binary's layout (issue 18): typing's functions packed together, symbols bound at
the start. Both keep memory down without changing behaviour, so nothing else would notice if a
change to Package.swift (another linker, lost flags) undid them.

The kernel maps a file's pages 64 kB around every page a fault touches: typing's ~600 kB of
code scattered over the binary's 10 MB of text kept ~7.5 MB resident, packed ~4 MB.
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ibus_harness import engine_path  # noqa: E402

ORDER = os.path.join(HERE, "..", "..", "Sources", "InklingEngine", "FunctionOrder.txt")


def functions(binary):
    """(address, size, name) of the binary's defined functions (`nm`)."""
    output = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True).stdout
    return [(int(p[0], 16), int(p[1], 16), p[3]) for p in (line.split() for line in output.splitlines())
            if len(p) == 4 and p[2] in "tTwW"]


def test_the_functions_typing_runs_lie_together():
    with open(ORDER) as f:
        listed = {line.strip()[len(".text."):] for line in f if line.startswith(".text.")}
    everything = functions(engine_path())
    if not everything:
        pytest.skip("the engine binary has no symbols (stripped, as in the package)")
    # The project's own functions move (compiled with a section each); the standard library's
    # mostly cannot, so they measure whether the order was applied.
    ours = [f for f in everything if f[2] in listed and "Inkling" in f[2]]
    assert len(ours) > 100, "FunctionOrder.txt names few of the engine's functions: write it afresh"
    start = min(address for address, _, _ in ours)
    end = max(address + size for address, size, _ in ours)
    listed_bytes = sum(size for address, size, name in everything if name in listed and start <= address < end)
    # Packed: the span holds listed functions only (and alignment); unordered, listed code was a
    # quarter of it.
    assert listed_bytes >= 0.8 * (end - start), (
        "typing's functions span %d kB, of which %d kB listed: the link order was not applied"
        % ((end - start) // 1024, listed_bytes // 1024))


def test_library_symbols_are_bound_at_the_start():
    dynamic = subprocess.run(["readelf", "-d", engine_path()], capture_output=True, text=True, check=True).stdout
    assert "BIND_NOW" in dynamic, "the engine binds library symbols lazily (linked without -z now)"
