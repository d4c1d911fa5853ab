#!/usr/bin/env python3
"""Process-level tests of the learned-words store through the `inkling` CLI.

usage: cli_test.py --inkling BIN --pack PACK
Prints PASS/FAIL per test and finally `N passed, N failed`; exit 1 on a failure.
"""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback

from crash_test import stress_word  # the words `learned _stress` writes

ARGS = argparse.Namespace()
TESTS = []


def test(function):
    TESTS.append(function)
    return function


def inkling(*arguments, env=None, input=None, check=True):
    if arguments[0] == "learn":
        arguments = (*arguments, "--pack", ARGS.pack)
    result = subprocess.run([ARGS.inkling, *arguments], capture_output=True, text=True, env=env, input=input,
                            timeout=60)
    if check and result.returncode != 0:
        raise AssertionError(f"inkling {' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def fresh_db() -> str:
    return os.path.join(tempfile.mkdtemp(prefix="inkling-cli-"), "store", "user.sqlite3")


def rows(db: str, sql: str):
    connection = sqlite3.connect(db)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def mode(path: str) -> int:
    return os.stat(path).st_mode & 0o777


@test
def default_store_is_private_under_xdg():
    home = tempfile.mkdtemp(prefix="inkling-xdg-")
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(home, "data"), HOME=os.path.join(home, "home"))
    out = inkling("learn", "-", env=env, input="Hello there, my friend.\n").stdout
    db = os.path.join(home, "data", "inkling", "user.sqlite3")
    assert "learned 4 words from 1 documents" in out, out
    assert os.path.exists(db), os.listdir(home)
    assert mode(db) == 0o600 and mode(os.path.dirname(db)) == 0o700, (oct(mode(db)), oct(mode(os.path.dirname(db))))
    del env["XDG_DATA_HOME"]
    inkling("learn", "-", env=env, input="again\n")
    assert os.path.exists(os.path.join(home, "home", ".local", "share", "inkling", "user.sqlite3"))


@test
def learn_list_forget_export_import_wipe():
    db = fresh_db()
    text = "The cat sat on the mat. The cat ran!\nA dog sat there too.\n"
    folder = os.path.dirname(db)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "texts.txt"), "w") as handle:
        handle.write(text)
    out = inkling("learn", os.path.join(folder, "texts.txt"), "--db", db).stdout
    assert "learned 14 words from 2 documents" in out, out
    listing = inkling("learned", "list", "--limit", "3", "--db", db).stdout.splitlines()
    assert listing[0].split() == ["word", "count", "last", "used"], listing
    # A capital that only marks a sentence start is not learned (the pack writes "the").
    assert [line.split()[0] for line in listing[1:]] == ["the", "cat", "sat"], listing
    assert listing[1].split()[1] == "3.0", listing
    # Sentence ends break contexts: no ("mat", "The") pair; ("the cat", "sat") exists.
    contexts = {(c, k) for c, k in rows(db, "SELECT context, key FROM entries")}
    assert ("mat", "the") not in contexts and ("the cat", "sat") in contexts and ("cat", "ran") in contexts, contexts
    out = inkling("learned", "forget", "cat", "--db", db).stdout
    assert out.startswith("forgot 'cat': removed "), out
    assert not [r for r in rows(db, "SELECT context, key FROM entries") if "cat" in r[0].split() or r[1] == "cat"]
    assert "was not learned" in inkling("learned", "forget", "cat", "--db", db).stdout
    export = os.path.join(folder, "export.tsv")
    inkling("learned", "export", export, "--db", db)
    assert mode(export) == 0o600
    exported = open(export).read()
    assert exported == inkling("learned", "export", "--db", db).stdout
    assert exported == inkling("learned", "export", "-", "--db", db).stdout
    count = len(exported.splitlines())
    assert f"wiped {count} entries" in inkling("learned", "wipe", "--yes", "--db", db).stdout
    assert rows(db, "SELECT count(*) FROM entries") == [(0,)]
    assert f"imported {count} entries" in inkling("learned", "import", export, "--db", db).stdout
    assert inkling("learned", "export", "--db", db).stdout == exported


@test
def export_never_follows_a_link_planted_at_its_temporary_name():
    """The export used to write through TARGET.tmp-PID with O_TRUNC and no O_NOFOLLOW: a link planted
    there by another user of a shared folder made it overwrite any file the user can write."""
    db = fresh_db()
    inkling("learn", "-", "--db", db, input="Tuesday gardening zorblaxqua.\n")
    folder = tempfile.mkdtemp(prefix="inkling-export-")
    victim = os.path.join(folder, "victim.txt")
    with open(victim, "w") as handle:
        handle.write("keep me\n")
    target = os.path.join(folder, "export.tsv")
    # exec keeps the shell's PID, so $$ is the PID inkling will have.
    script = 'ln -s "$1" "$2.tmp-$$" && exec "$3" learned export "$2" --db "$4"'
    result = subprocess.run(["sh", "-c", script, "sh", victim, target, ARGS.inkling, db],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert open(victim).read() == "keep me\n", "the export wrote through the planted link"
    assert "zorblaxqua" in open(target).read()
    assert not os.path.islink(target) and mode(target) == 0o600


@test
def what_the_policy_refuses_is_never_stored_or_printed():
    db = fresh_db()
    secrets = ["alice@example.com", "https://bob:hunter2@example.org/x", "sk9Fq2LmZx7Pw3Rt", "4111111111111111",
               "www.private-site.net", "QwErTyUiOpAsDfGh"]
    text = "Write to alice@example.com or visit https://bob:hunter2@example.org/x now.\n" \
           "My key is sk9Fq2LmZx7Pw3Rt and card 4111111111111111, see www.private-site.net today.\n" \
           "The token QwErTyUiOpAsDfGh expires soon.\n"
    result = inkling("learn", "-", "--db", db, input=text)
    for secret in secrets:
        assert secret not in result.stdout + result.stderr
    keys = {k for (k,) in rows(db, "SELECT key FROM entries")} | {c for (c,) in rows(db, "SELECT context FROM entries")}
    # Neither as words nor as the context of the word after them ("expires" after the token).
    for fragment in ["alice", "example", "bob", "hunter", "sk9fq2lmzx7pw3rt", "private", "site", "4111111111111111",
                     "org", "com", "net", "qwertyuiopasdfgh"]:
        assert not [k for k in keys if fragment in k], (fragment, keys)
    assert {"write", "to", "or", "visit", "now", "key", "today", "expires", "soon"} <= keys, keys
    # Nothing of them anywhere in the files either.
    inkling("learned", "list", "--db", db)
    blob = b"".join(open(p, "rb").read() for p in [db, db + "-wal"] if os.path.exists(p))
    for fragment in [b"alice", b"hunter2", b"sk9Fq2", b"private-site", b"QwErTy", b"qwerty"]:
        assert fragment not in blob, fragment


@test
def a_damaged_store_is_moved_aside():
    db = fresh_db()
    os.makedirs(os.path.dirname(db))
    with open(db, "wb") as handle:
        handle.write(os.urandom(8192))
    result = inkling("learned", "list", "--db", db)
    assert "damaged" in result.stderr and ".corrupt-" in result.stderr, result.stderr
    aside = [name for name in os.listdir(os.path.dirname(db)) if ".corrupt-" in name]
    assert len(aside) == 1, aside
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]


@test
def a_newer_schema_is_refused_and_untouched():
    db = fresh_db()
    inkling("learn", "-", "--db", db, input="hello world\n")
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA user_version = 42")
    connection.commit()
    connection.close()
    before = open(db, "rb").read()
    result = inkling("learned", "list", "--db", db, check=False)
    assert result.returncode == 1, result.stderr
    assert "schema version 42" in result.stderr and "newer Inkling" in result.stderr, result.stderr
    result = inkling("learn", "-", "--db", db, input="more words\n", check=False)
    assert result.returncode == 1
    assert open(db, "rb").read() == before
    assert not [name for name in os.listdir(os.path.dirname(db)) if ".corrupt-" in name]


def predict(db: str, requests: list[dict], *flags: str) -> list[dict]:
    lines = "".join(json.dumps(dict(request, id=index + 1)) + "\n" for index, request in enumerate(requests))
    out = inkling("predict", "--stdio", "--pack", ARGS.pack, "--user-db", db, *flags, input=lines).stdout
    return [json.loads(line) for line in out.splitlines()]


@test
def predict_learns_into_the_store_and_loads_it():
    db = fresh_db()
    commits = [{"reset": True}]
    for _ in range(3):
        commits += [{"commit": "Zorblax", "context": "meet "}, {"commit": "quintessa", "context": "meet Zorblax "}]
    predict(db, commits, "--learn")
    keys = {(c, k) for c, k in rows(db, "SELECT context, key FROM entries")}
    assert ("", "zorblax") in keys and ("zorblax", "quintessa") in keys and ("meet zorblax", "quintessa") in keys, keys
    generation = rows(db, "SELECT value FROM meta")
    replies = predict(db, [{"reset": True}, {"before": "I saw Zorb", "n": 3}, {"before": "I saw Zorblax quin", "n": 3}])
    assert "Zorblax" in replies[1]["words"], replies
    assert "quintessa" in replies[2]["words"], replies
    assert rows(db, "SELECT value FROM meta") == generation  # without --learn nothing is written


@test
def cli_and_a_running_writer_share_the_store():
    db = fresh_db()
    writer = subprocess.Popen([ARGS.inkling, "learned", "_stress", "--db", db, "--seconds", "2"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until the writer has committed a first batch (it prints a count after each commit).
    first = writer.stdout.readline()
    assert first.startswith("committed "), first
    forgot = inkling("learned", "forget", "zqa", "--db", db).stdout
    assert forgot.startswith("forgot 'zqa'"), forgot
    inkling("learned", "list", "--limit", "5", "--db", db)
    inkling("learn", "-", "--db", db, input="concurrent words here\n")
    out, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err
    keys = {(c, k) for c, k in rows(db, "SELECT context, key FROM entries")}
    # The forgotten word did not come back (the writer reloaded instead of overwriting) …
    assert not [e for e in keys if e[1] == "zqa" or "zqa" in e[0].split()], "zqa resurrected"
    # … and both writers' later words are there.
    assert ("", "concurrent") in keys and ("", "zqb") in keys, len(keys)
    assert int(out.split()[-1]) > 1000


@test
def two_writers_lose_no_word():
    """Two engine writers (`_stress`, the engine's UserStoreWriter) on one store at once: every
    word either typed is there when both are done (before: ~a quarter were discarded)."""
    db = fresh_db()
    words = 6000
    writers = [subprocess.Popen([ARGS.inkling, "learned", "_stress", "--db", db, "--start", str(start),
                                 "--words", str(words), "--seconds", "300"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for start in (0, 10_000_000)]
    # A third process writes too, as `inkling learn` would while both engines type.
    inkling("learn", "-", "--db", db, input="concurrent words here\n")
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        assert f"finished {words}" in out, out[-200:]
    keys = {k for (k,) in rows(db, "SELECT key FROM entries WHERE context = ''")}
    expected = {stress_word(start + index) for start in (0, 10_000_000) for index in range(words)}
    expected |= {"concurrent", "words", "here"}
    missing = expected - keys
    assert not missing, f"{len(missing)} of {len(expected)} words lost, e.g. {sorted(missing)[:3]}"


def damage(db: str):
    """Overwrites the SQLite header: the next open moves the file aside (with its words)."""
    with open(db, "r+b") as handle:
        handle.write(os.urandom(100))


@test
def wipe_removes_damaged_copies_that_list_and_forget_mention():
    db = fresh_db()
    folder = os.path.dirname(db)
    inkling("learn", "-", "--db", db, input="my zorblaxqua plans\n")
    inkling("learned", "list", "--db", db)  # checkpoints: the words are in the main file
    for suffix in ["-wal", "-shm"]:
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    damage(db)
    result = inkling("learned", "list", "--db", db)
    assert "moved it to" in result.stderr, result.stderr
    copies = [name for name in os.listdir(folder) if ".corrupt-" in name]
    assert copies and any(b"zorblaxqua" in open(os.path.join(folder, name), "rb").read() for name in copies), copies
    listing = inkling("learned", "list", "--db", db)
    assert "damaged copy of the store" in listing.stderr and "learned wipe" in listing.stderr, listing.stderr
    assert "zorblaxqua" not in listing.stderr  # file names only, never a word
    forgot = inkling("learned", "forget", "zorblaxqua", "--db", db)
    assert "damaged copy of the store" in forgot.stderr, forgot.stderr
    inkling("learn", "-", "--db", db, input="fresh zorblaxqua\n")
    wiped = inkling("learned", "wipe", "--yes", "--db", db).stdout
    assert "removed 1 damaged copy" in wiped, wiped
    assert not [name for name in os.listdir(folder) if ".corrupt-" in name], os.listdir(folder)
    for name in os.listdir(folder):
        assert b"zorblaxqua" not in open(os.path.join(folder, name), "rb").read(), name
    assert "damaged" not in inkling("learned", "list", "--db", db).stderr


@test
def import_refuses_hostile_values_naming_the_line():
    db = fresh_db()
    folder = os.path.dirname(db)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "hostile.tsv")
    lines = [
        b"\tcat\tcat\t1e300\t1",
        b"\tcat\tcat\t-1\t1",
        b"\tcat\tcat\tnan\t1",
        b"\tcat\tcat\t2\t1.5",
        b"\tev\x1bil\tev\x1bil\t1\t1",
        b"\tca\xfft\tca\xfft\t1\t1",
        b"\t" + b"a" * 100000 + b"\ta\t1\t1",
        b"\tdog\tdog\t3\t1700000000",
    ]
    with open(path, "wb") as handle:
        handle.write(b"\n".join(lines) + b"\n")
    result = inkling("learned", "import", path, "--db", db)
    assert "imported 1 entry from" in result.stdout and "7 lines skipped" in result.stdout, result.stdout
    for number in range(1, 8):
        assert f"line {number} not imported" in result.stderr, result.stderr
    assert "line 8 " not in result.stderr
    assert "\x1b" not in result.stderr and "aaaaaaaa" not in result.stderr
    listing = inkling("learned", "list", "--db", db)
    assert [line.split()[0] for line in listing.stdout.splitlines()[1:]] == ["dog"], listing.stdout


@test
def list_is_total_against_hostile_stored_values():
    """A store written by an older or hostile program: list, export and predict still work."""
    db = fresh_db()
    inkling("learn", "-", "--db", db, input="huge old evil negative fine\n")
    connection = sqlite3.connect(db)
    connection.execute("UPDATE entries SET count = 1e300 WHERE key = 'huge'")
    connection.execute("UPDATE entries SET count = -5 WHERE key = 'negative'")
    connection.execute("UPDATE entries SET last_used = -9223372036854775808 WHERE key = 'old'")
    connection.execute("UPDATE entries SET display = 'ev' || char(27) || ']0;pwned' || char(7) || 'il'"
                       " WHERE key = 'evil' AND context = ''")
    connection.commit()
    connection.close()
    listing = inkling("learned", "list", "--db", db)
    words = [line.split()[0] for line in listing.stdout.splitlines()[1:]]
    assert words[0] == "huge" and set(words) == {"huge", "old", "fine"}, listing.stdout
    assert "\x1b" not in listing.stdout
    exported = inkling("learned", "export", "-", "--db", db).stdout
    assert "1e+300" not in exported and "\x1b" not in exported, exported
    predict(db, [{"reset": True}, {"before": "I saw hu", "n": 3}])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inkling", required=True)
    parser.add_argument("--pack", required=True)
    parser.parse_args(namespace=ARGS)
    base = tempfile.mkdtemp(prefix="inkling-cli-tests-")
    tempfile.tempdir = base  # every test's folders go here, removed at the end
    passed = failed = 0
    for function in TESTS:
        started = time.monotonic()
        try:
            function()
            passed += 1
            print(f"PASS {function.__name__} ({time.monotonic() - started:.2f} s)")
        except Exception:
            failed += 1
            print(f"FAIL {function.__name__}\n{traceback.format_exc()}")
    shutil.rmtree(base, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
