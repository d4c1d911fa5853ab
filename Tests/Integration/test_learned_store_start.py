"""The learned store read off the main thread at start (issue 18), through a real ibus-daemon and
client: keys are answered from the pack while the store cannot be read yet (another process
holds it locked), its words join once it is read, and a damaged store is moved aside with a
message that names the file (never a word) while the engine goes on learning afresh.

Each scenario runs this file as a helper in a child process (libibus keeps one bus per process):

    test_learned_store_start.py SCENARIO   →   one JSON line {"ok": bool, "checks": [...]}
"""

import glob
import os
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import test_settings_languages_learning as scenarios  # noqa: E402
from ibus_harness import pump_for  # noqa: E402


def run(name):
    scenarios.run_helper(__file__, name, timeout=240)


def test_keys_are_answered_while_the_store_is_locked_and_its_words_join_later():
    run("locked")


def test_a_damaged_store_is_moved_aside_with_a_message_and_learning_goes_on():
    run("damaged")


def store_path(daemon):
    return os.path.join(daemon.env["XDG_DATA_HOME"], "inkling", "user.sqlite3")


def wait_for(condition, seconds):
    from ibus_harness import Timeout, pump_until

    try:
        pump_until(condition, timeout=seconds, what="condition")
        return True
    except Timeout:
        return False


def stored_words(daemon):
    db = sqlite3.connect("file:%s?mode=ro" % store_path(daemon), uri=True)
    try:
        return {row[0] for row in db.execute("SELECT display FROM entries")}
    except sqlite3.Error:
        return set()
    finally:
        db.close()


def scenario_locked(checks):
    """A store another process holds locked: the old engine read it before its main loop and
    waited out SQLite's busy timeout (5 s) before answering any key, then went on without it."""
    from ibus_harness import cli_path

    daemon = scenarios.make_daemon(settings=False)
    path = store_path(daemon)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    # A learned word, imported with the CLI (the store's own schema), then the file locked in
    # rollback-journal mode: readers wait for the lock.
    subprocess.run([cli_path(), "learned", "import", "-", "--db", path],
                   input="\tquillfeather\tQuillfeather\t5\t1700000000\n",
                   text=True, check=True, env=daemon.env, capture_output=True)
    holder = sqlite3.connect(path, isolation_level=None, timeout=10)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    daemon.start()
    try:
        client = scenarios.new_client(daemon)
        table = scenarios.table_after(client, "hel", lambda c: any(w.lower().startswith("hel") for w in c), timeout=15)
        log = daemon.log()
        checks.check("a table from the pack while the store is locked", table is not None, client.tables[-3:])
        checks.check("the store was still being read (no failure logged yet)", "cannot use the user store" not in log,
                     log[-1500:])
        holder.execute("COMMIT")
        holder.close()
        holder = None
        scenarios.erase_word(client)
        # Once the lock is gone the store is read, and its word joins the suggestions.
        found = None
        for _ in range(20):
            found = scenarios.table_after(client, "Quillf", lambda c: "Quillfeather" in c, timeout=1)
            if found is not None:
                break
            scenarios.erase_word(client)
            pump_for(0.3)
        checks.check("the stored word is offered once the store was read", found is not None, client.tables[-3:])
        scenarios.erase_word(client)
        client.type("Zorblax Zorblax ")
        checks.check("what is typed is stored", wait_for(lambda: "Zorblax" in stored_words(daemon), 8),
                     sorted(stored_words(daemon))[:20])
        checks.check("the stored word is still there", "Quillfeather" in stored_words(daemon))
        checks.check("no store failure logged", "cannot use the user store" not in daemon.log(), daemon.log()[-1500:])
        client.destroy()
    finally:
        if holder is not None:
            holder.close()
        daemon.stop()


def scenario_damaged(checks):
    daemon = scenarios.make_daemon(settings=False)
    path = store_path(daemon)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    garbage = b"this is not a SQLite database, Zorblax\n" * 200
    with open(path, "wb") as f:
        f.write(garbage)
    daemon.start()
    try:
        client = scenarios.new_client(daemon)
        pid = daemon.engine_pid()
        table = scenarios.table_after(client, "hel", lambda c: any(w.lower().startswith("hel") for w in c), timeout=10)
        checks.check("suggestions from the pack", table is not None, client.tables[-3:])
        # The store is read on a worker thread and the message logged when the main loop takes
        # the result: the pack's suggestions can come first (a loaded machine: the table was there,
        # the message not yet).
        wait_for(lambda: glob.glob(path + ".corrupt-*"), 10)
        moved = glob.glob(path + ".corrupt-*")
        checks.check("the damaged store was moved aside", len(moved) == 1, moved)
        if moved:
            with open(moved[0], "rb") as f:
                checks.check("with its content", f.read() == garbage)
        wait_for(lambda: "was damaged" in daemon.log(), 10)
        log = daemon.log()
        message = [line for line in log.splitlines() if "was damaged" in line]
        checks.check("a message names the damaged store and where it went",
                     message and path in message[0] and ".corrupt-" in message[0], message or log[-1500:])
        checks.check("the message quotes none of its content", "Zorblax" not in log)
        scenarios.erase_word(client)
        client.type("Quillfeather Quillfeather ")
        scenarios.erase_word(client)
        table = scenarios.table_after(client, "Quillf", lambda c: "Quillfeather" in c)
        checks.check("learning goes on in a fresh store", table is not None, client.tables[-3:])
        checks.check("and is saved there", wait_for(lambda: "Quillfeather" in stored_words(daemon), 8))
        checks.check("the same engine process throughout", daemon.engine_pid() == pid)
        client.destroy()
    finally:
        daemon.stop()


def helper_main(name):
    scenarios.report_scenario({"locked": scenario_locked, "damaged": scenario_damaged}, name)


if __name__ == "__main__":
    helper_main(sys.argv[1])
