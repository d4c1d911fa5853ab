"""Runs a copy of the engine in its own daemon and reports, as one JSON line, what a client saw.

    check_engine.py --pack missing|corrupt|bundled --workdir DIR [--debug-memory N] [--switch N]
                    [--register]

--register: the daemon knows no component; the engine is started without options and registers
its component itself (the development mode of ibus-engine-inkling).

The copy lives in DIR/bin so that the pack it finds (DIR/data/packs/en.inkpack) is controlled:
none, a corrupt one (one byte changed), or the real one.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ibus_harness import REPO, Client, Daemon, IBus, drain, engine_path, pump_until, rss_kb  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pack", choices=["missing", "corrupt", "bundled"], required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--debug-memory", type=int, default=0)
    parser.add_argument("--switch", type=int, default=0, help="then ask for the engine again N times")
    parser.add_argument("--register", action="store_true", help="start the engine without options")
    parser.add_argument("--debug-events", action="store_true", help="INKLING_DEBUG_EVENTS=1")
    args = parser.parse_args()

    bindir = os.path.join(args.workdir, "bin")
    packs = os.path.join(args.workdir, "data", "packs")
    os.makedirs(bindir, exist_ok=True)
    engine = os.path.join(bindir, "ibus-engine-inkling")
    shutil.copy2(engine_path(), engine)
    real_pack = os.path.join(REPO, "data", "packs", "en.inkpack")
    if args.pack != "missing":
        os.makedirs(packs, exist_ok=True)
        target = os.path.join(packs, "en.inkpack")
        if args.pack == "bundled":
            os.symlink(real_pack, target)
        else:
            data = bytearray(open(real_pack, "rb").read())
            data[len(data) // 2] ^= 0xFF
            open(target, "wb").write(bytes(data))

    env = {"INKLING_DEBUG_MEMORY": str(args.debug_memory)} if args.debug_memory else {}
    if args.debug_events:
        env["INKLING_DEBUG_EVENTS"] = "1"
    if args.register:
        daemon = Daemon(components={}, engine=engine, env=env, verbose=True, global_engine=None).start()
    else:
        daemon = Daemon(engine=engine, env=env, verbose=True).start()
    registered = None
    try:
        if args.register:
            registered = subprocess.Popen([engine], env=daemon.env)
        client = Client(daemon)
        client.focus_in()
        if args.register:
            # The engine is known once it has registered; until then set_engine fails quietly.
            def attached():
                if client.ic.get_engine() is None or client.ic.get_engine().get_name() != "inkling":
                    client.ic.set_engine("inkling")
                    return False
                return True

            pump_until(attached, what="the self-registered engine")
        else:
            client.set_engine("inkling")
        client.preedit_updates.clear()
        client.tables.clear()
        client.wait_for_surrounding_request()
        client.set_surrounding("Dear quokka, ")
        handled = []
        for ch in "zebra quokka":
            keyval = IBus.KEY_space if ch == " " else IBus.unicode_to_keyval(ch)
            if client.key(keyval):
                handled.append(ch)
        for keyval in (IBus.KEY_F1, IBus.KEY_Tab, IBus.KEY_BackSpace, IBus.KEY_Return):
            if client.key(keyval):
                handled.append(keyval)
        client.key(IBus.KEY_Shift_L)  # a round trip: whatever the engine sent has arrived
        drain()
        pid = registered.pid if registered and registered.poll() is None else daemon.engine_pid()
        report = {
            "handled": handled,
            "preedit": [p for p in client.preedit_updates if p[0]],
            "tables": [t for t in client.tables if t],
            "commits": client.commits if args.pack != "bundled" else len(client.commits),
            "engine_alive": pid is not None,
        }
        if args.switch:
            # Each request makes the daemon create a new engine object and destroy the old one.
            report["rss_kb_before_switches"] = rss_kb(pid)
            for _ in range(args.switch):
                client.ic.set_engine("inkling")
                client.key(IBus.KEY_Shift_L)
            count = len(daemon.log())
            client.type("ab")
            pump_until(lambda: "memory keys=" in daemon.log()[count:], what="a diagnostics line")
            report["rss_kb_after_switches"] = rss_kb(pid)
            report["engine_pid_unchanged"] = daemon.engine_pid() == pid
        client.focus_out()
        client.destroy()
    finally:
        log = daemon.log()
        daemon.stop()
        if registered is not None:
            try:
                registered.wait(timeout=10)  # it exits when the daemon goes away
            except subprocess.TimeoutExpired:
                registered.kill()
                registered.wait()
    report["log"] = log
    print(json.dumps(report))


if __name__ == "__main__":
    main()
