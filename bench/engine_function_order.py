#!/usr/bin/python3
"""Writes the engine's function order (issue 18): the functions a typing run executes.

    /usr/bin/python3 bench/engine_function_order.py [--keys N] [--out FILE]

Runs the release engine under Valgrind's callgrind through a real headless ibus-daemon (as
`engine_memory.py` does, with the learned store at its cap), types the dev text's first N
letters (default 3000) once the engine has started, and writes the functions of the engine
binary that ran while typing, one linker section name a line (`.text.<symbol>`, sorted), to
`Sources/InklingEngine/FunctionOrder.txt`. The release link places those sections first
(Package.swift, `engineLinking`), so typing's code shares a few dozen 64 kB blocks instead of
touching most of the binary. The functions that only the start ran are left where they are:
placed after typing's, they made the binary's resident share larger (~0.4 MB in the same run).
Needs `valgrind` (Debian package) and a release build; slow (the engine runs ~50 times slower
under callgrind: several minutes).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Integration"))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import engine_memory  # noqa: E402
from ibus_harness import ALL_CAPS, SHIFT, RELEASE, Client, Daemon, IBus, pump_for  # noqa: E402

WRAPPER = """#!/bin/sh
if [ "$1" = "--xml" ]; then "{real}" --xml | sed 's#{real}#{wrapper}#g'; exit; fi
exec valgrind --tool=callgrind --trace-children=yes --demangle=no --callgrind-out-file={folder}/cg.%p.out \
    "{real}" "$@" 2>>{folder}/valgrind.log
"""


def executed_functions(profile, binary):
    """Names of the functions of `binary` with a cost in a callgrind profile."""
    objects, functions, executed = {}, {}, set()
    current_object = current = None
    for line in open(profile, errors="replace"):
        match = re.match(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if match:
            kind, number, name = match.groups()
            table = objects if kind.endswith("ob") else functions
            if name:
                table[number] = name
            if kind == "ob":
                current_object = objects[number]
            elif kind == "fn":
                current = (current_object, functions[number])
            continue
        if current and current[0] == binary and re.match(r"^[+\-*0-9]", line):
            executed.add(current[1])
    return executed


def text_symbols(binary):
    """The binary's defined function symbols (`nm`)."""
    output = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    return {parts[2] for parts in (line.split() for line in output.splitlines())
            if len(parts) == 3 and parts[1] in "tTwW"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=3000, help="letters of the dev text to type")
    parser.add_argument("--text", default=os.path.join(ROOT, "..", "shared", "bench", "dev-en.txt"))
    parser.add_argument("--out", default=os.path.join(ROOT, "Sources", "InklingEngine", "FunctionOrder.txt"))
    args = parser.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("valgrind is needed (apt-get install valgrind)")
    release = os.path.join(ROOT, ".build", "release")
    folder = tempfile.mkdtemp(prefix="engine-function-order-")
    # The engine finds its pack next to itself and the bench's CLI next to the engine.
    real = os.path.join(folder, "real-engine")
    shutil.copy(os.path.join(release, "ibus-engine-inkling"), real)
    os.symlink(os.path.join(release, "inkling"), os.path.join(folder, "inkling"))
    os.makedirs(os.path.join(folder, "data"))
    os.symlink(os.path.join(ROOT, "data", "packs"), os.path.join(folder, "data", "packs"))
    wrapper = os.path.join(folder, "ibus-engine-inkling")
    with open(wrapper, "w") as f:
        f.write(WRAPPER.format(real=real, wrapper=wrapper, folder=folder))
    os.chmod(wrapper, 0o755)
    os.environ["INKLING_ENGINE"] = wrapper

    with open(args.text, encoding="utf-8") as f:
        whole = f.read()
    letters, end = 0, len(whole)
    for index, ch in enumerate(whole):
        letters += ch.isalpha()
        if letters >= args.keys:
            end = index + 1
            break
    data_home = os.path.join(folder, "data-home")
    # As engine_memory.py runs it: its one memory line at the last key is part of that run.
    daemon = Daemon(env={"INKLING_DEBUG_MEMORY": str(end), "XDG_DATA_HOME": data_home}, verbose=True)
    lines = "".join("%s\t%s\t%s\t2\t1700000000\n" % e for e in engine_memory.learned_entries(whole, engine_memory.CAP))
    db = os.path.join(data_home, "inkling", "user.sqlite3")
    os.makedirs(os.path.dirname(db), exist_ok=True)
    subprocess.run([os.path.join(release, "inkling"), "learned", "import", "-", "--db", db], input=lines, text=True,
                   check=True, env=daemon.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    daemon.start()
    try:
        client = Client(daemon, caps=ALL_CAPS, name="engine-function-order")
        client.focus_in()
        # The start's profile apart (a dump zeroes the counters): the engine gives the start's
        # pages back after it, so start-up code does not belong among typing's.
        pump_for(40)
        subprocess.run(["callgrind_control", "-d"], check=True, stdout=subprocess.DEVNULL)
        for ch in whole[:end]:
            if ch == "\n":
                ch = " "
            keyval = IBus.KEY_space if ch == " " else IBus.unicode_to_keyval(ch)
            state = SHIFT if ch.isupper() else 0
            if not client.ic.process_key_event(keyval, 0, state):
                client._apply_unhandled(keyval, state)
            client.ic.process_key_event(keyval, 0, state | RELEASE)
            pump_for(0.01)
        pump_for(60)  # the engine catches up under callgrind
        subprocess.run(["callgrind_control", "-d"], check=True, stdout=subprocess.DEVNULL)
        pump_for(10)
    finally:
        daemon.stop()
    # Per process (the supervisor and the engine): dump 1 is the start, dump 2 the typing.
    phases = {1: set(), 2: set()}
    for name in os.listdir(folder):
        match = re.match(r"cg\.\d+\.out\.(\d+)$", name)
        if match and int(match.group(1)) in phases:
            phases[int(match.group(1))] |= executed_functions(os.path.join(folder, name), real)
    typing = sorted(phases[2] & text_symbols(real))
    if not typing:
        sys.exit("no profile of the engine's typing was found in %s (see valgrind.log)" % folder)
    with open(args.out, "w") as f:
        f.write("".join(".text.%s\n" % name for name in typing if not re.search(r"[*?\[]", name)))
    print("%d functions written to %s" % (len(typing), args.out))
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
