#!/usr/bin/env python3
"""Crash safety of the user store: kill -9 a writer at random points, then check the store.

The writer is `inkling learned _stress --db PATH --start S`: it records made-up words
(zq + base-26 letters of the word's number, as LearnFromText.stressWord), hands batches to the
engine's UserStoreWriter every 10 ms, which commits every 100 ms, and prints `committed N`
after each COMMIT (words S ..< S+N are on disk). After every kill the store must pass
`PRAGMA integrity_check`, open with Inkling itself (not moved aside as damaged), and hold every
word reported committed by any run since the store was created. Most runs reuse the store
(recovery of a crashed WAL each time); every tenth starts a fresh one (kills during creation).

usage: crash_test.py --inkling BIN [--iterations 60] [--seed 8] [--dir DIR]
Prints one line per failure and finally `N passed, N failed`; exit 1 on a failure.
"""

import argparse
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time


def stress_word(index: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    word = "zq"
    while True:
        word += letters[index % 26]
        index //= 26
        if index == 0:
            return word


def check(inkling: str, db: str, expected: set[str]) -> str | None:
    """None if the store is healthy and complete, else what is wrong."""
    connection = sqlite3.connect(db)
    try:
        integrity = connection.execute("PRAGMA integrity_check").fetchall()
        if integrity != [("ok",)]:
            return f"integrity_check: {integrity[:3]}"
        # Killed before the schema was created: an empty database, which Inkling completes.
        if connection.execute("SELECT count(*) FROM sqlite_master WHERE name = 'entries'").fetchone()[0] == 0:
            keys = set()
        else:
            keys = {row[0] for row in connection.execute("SELECT key FROM entries WHERE context = ''")}
    except sqlite3.Error as error:
        return f"sqlite: {error}"
    finally:
        connection.close()
    missing = expected - keys
    if missing:
        return f"{len(missing)} committed words missing (e.g. {sorted(missing)[:3]})"
    result = subprocess.run([inkling, "learned", "list", "--limit", "1", "--db", db],
                            capture_output=True, text=True, timeout=30)
    if result.returncode != 0 or "damaged" in result.stderr:
        return f"inkling cannot open it: {result.stderr.strip()[:200]}"
    if os.stat(db).st_mode & 0o777 != 0o600:
        return f"mode {oct(os.stat(db).st_mode & 0o777)}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inkling", required=True)
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--dir")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    folder = args.dir or tempfile.mkdtemp(prefix="inkling-crash-")
    passed = failed = 0
    expected: set[str] = set()
    db = ""
    committed_total = 0
    for iteration in range(args.iterations):
        if iteration % 10 == 0:
            db = os.path.join(folder, f"store-{iteration}", "user.sqlite3")
            expected = set()
        start = iteration * 1_000_000
        # A fifth of the kills come early (opening, creating the schema), the rest anywhere.
        delay = rng.uniform(0.0, 0.06) if rng.random() < 0.2 else rng.uniform(0.06, 0.9)
        process = subprocess.Popen(
            [args.inkling, "learned", "_stress", "--db", db, "--start", str(start), "--seconds", "30"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        out, err = process.communicate()
        committed = 0
        for line in out.decode().splitlines():
            if line.startswith("committed "):
                committed = max(committed, int(line.split()[1]))
        if process.returncode != -signal.SIGKILL:
            failed += 1
            print(f"iteration {iteration}: writer ended by itself ({process.returncode}): {err.decode()[:200]}")
            continue
        expected |= {stress_word(start + index) for index in range(committed)}
        committed_total += committed
        problem = check(args.inkling, db, expected) if os.path.exists(db) else None
        if problem:
            failed += 1
            print(f"iteration {iteration} (killed after {delay * 1000:.0f} ms, {committed} committed): {problem}")
        else:
            passed += 1
    print(f"crash test: {args.iterations} kills, {committed_total} committed words verified")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
