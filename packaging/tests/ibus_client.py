#!/usr/bin/python3
"""Types a word through a real IBus client into the installed Inkling engine.

usage: ibus_client.py [--daemon] [--list-engine] [--word WORD] [--component-path DIR]

--daemon          start a private, headless ibus-daemon first (private XDG folders, no panel, no
                  config, no cache), stopped again at exit; otherwise use IBUS_ADDRESS
--list-engine     require `ibus list-engine` to show the inkling engine
--component-path  IBUS_COMPONENT_PATH for the private daemon (default: the system folder,
                  /usr/share/ibus/component, i.e. what the package installed)

Checks that typing WORD (default "thank") into a focused input context with Inkling gives a
preedit and a lookup table with at least one candidate, and that Space commits the word.
Prints what it saw and exits 0 on success, 1 on failure.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ENGINE = "inkling"


def start_daemon(args):
    base = tempfile.mkdtemp(prefix="inkling-ibus-")
    for name in ("config", "cache", "runtime"):
        os.makedirs(os.path.join(base, name), mode=0o700)
    address = "unix:path=" + os.path.join(base, "ibus.sock")
    os.environ.update({
        "XDG_CONFIG_HOME": os.path.join(base, "config"),
        "XDG_CACHE_HOME": os.path.join(base, "cache"),
        "XDG_RUNTIME_DIR": os.path.join(base, "runtime"),
        "GSETTINGS_BACKEND": "memory",
        "IBUS_ADDRESS": address,
    })
    os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
    if args.component_path:
        os.environ["IBUS_COMPONENT_PATH"] = args.component_path
    daemon = subprocess.Popen(
        ["ibus-daemon", "--panel=disable", "--emoji-extension=disable", "--config=disable", "--cache=none",
         "--address=" + address],
        stdout=subprocess.DEVNULL, stderr=open(os.path.join(base, "daemon.log"), "w"))
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(base, "ibus.sock")):
        if daemon.poll() is not None or time.monotonic() > deadline:
            print(open(os.path.join(base, "daemon.log")).read(), file=sys.stderr)
            sys.exit("ibus-daemon did not start")
        time.sleep(0.01)
    return daemon, base


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--daemon", action="store_true")
    parser.add_argument("--list-engine", action="store_true")
    parser.add_argument("--word", default="thank")
    parser.add_argument("--component-path")
    args = parser.parse_args()

    daemon = base = None
    if args.daemon:
        daemon, base = start_daemon(args)
    try:
        return run(args)
    finally:
        if daemon is not None:
            daemon.terminate()
            try:
                daemon.wait(5)
            except subprocess.TimeoutExpired:
                daemon.kill()
            shutil.rmtree(base, ignore_errors=True)


def run(args):
    ok = True
    if args.list_engine:
        listing = subprocess.run(["ibus", "list-engine"], capture_output=True, text=True, timeout=20)
        found = any(line.split()[0:1] == [ENGINE] or line.strip().startswith(ENGINE + " ")
                    for line in listing.stdout.splitlines())
        print(f"ibus list-engine: {'inkling listed' if found else 'inkling MISSING'}")
        if not found:
            print(listing.stdout[-2000:], listing.stderr[-2000:], file=sys.stderr)
            return 1

    import gi
    gi.require_version("IBus", "1.0")
    from gi.repository import GLib, IBus

    IBus.init()
    bus = IBus.Bus()
    if not bus.is_connected():
        print("cannot connect to IBus at", os.environ.get("IBUS_ADDRESS"), file=sys.stderr)
        return 1
    context = GLib.MainContext.default()

    def pump(seconds, until=None):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            while context.pending():
                context.iteration(False)
            if until is not None and until():
                return True
            time.sleep(0.005)
        return until() if until is not None else True

    ic = bus.create_input_context("inkling-cleanroom")
    seen = {"commits": [], "preedit": None, "tables": []}
    ic.connect("commit-text", lambda _ic, text: seen["commits"].append(text.get_text()))
    ic.connect("update-preedit-text", lambda _ic, text, _cursor, visible: seen.__setitem__(
        "preedit", text.get_text() if visible else None))

    def on_table(_ic, table, visible):
        n = table.get_number_of_candidates()
        seen["tables"].append([table.get_candidate(i).get_text() for i in range(n)] if visible else [])

    ic.connect("update-lookup-table", on_table)
    caps = (IBus.Capabilite.PREEDIT_TEXT | IBus.Capabilite.LOOKUP_TABLE | IBus.Capabilite.FOCUS
            | IBus.Capabilite.SURROUNDING_TEXT)
    ic.set_capabilities(caps)
    ic.focus_in()
    ic.set_engine(ENGINE)

    def engine_set():
        desc = ic.get_engine()
        return desc is not None and desc.get_name() == ENGINE

    if not pump(10, engine_set):
        print("the input context never got the inkling engine", file=sys.stderr)
        return 1
    ic.set_surrounding_text(IBus.Text.new_from_string(""), 0, 0)
    pump(0.2)

    def key(keyval):
        ic.process_key_event(keyval, 0, 0)
        ic.process_key_event(keyval, 0, IBus.ModifierType.RELEASE_MASK)

    start = time.monotonic()
    for ch in args.word:
        key(ord(ch))
        pump(0.05)
    got_table = pump(5, lambda: any(t for t in seen["tables"]))
    candidates = next((t for t in reversed(seen["tables"]) if t), [])
    print(f"typed {args.word!r}: preedit {seen['preedit']!r}, candidates {candidates[:5]}"
          f" ({(time.monotonic() - start) * 1000:.0f} ms)")
    if not got_table:
        print("FAIL: no lookup table with candidates", file=sys.stderr)
        ok = False
    if seen["preedit"] != args.word:
        print(f"FAIL: preedit is {seen['preedit']!r}, expected {args.word!r}", file=sys.stderr)
        ok = False

    key(IBus.KEY_space)
    committed = pump(5, lambda: args.word in "".join(seen["commits"]))
    print(f"after Space: commits {seen['commits']!r}")
    if not committed:
        print(f"FAIL: {args.word!r} was not committed", file=sys.stderr)
        ok = False
    ic.focus_out()
    pump(0.1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
