#!/usr/bin/python3
"""Engine memory and start time, through a real headless ibus-daemon (issue 18).

    /usr/bin/python3 bench/engine_memory.py [--text FILE] [--keys N] [--learned-cap] [--settle S] [--smaps]

Starts the release engine with English, types the text (default: the dev text, all of it, or
its first N letters), waits for the engine to settle and reads the engine's VmRSS and
/proc/PID/smaps_rollup: what is anonymous (the engine's own heap and stacks) and what is
file-backed (the binary, shared libraries, a mapped pack). `--learned-cap` first fills the
user store with as many learned entries as the model keeps (30,000: words, word pairs, word
triples from the text), so that the learned model is at its cap. The start figures come from
the engine's own `startup` log line (INKLING_DEBUG_MEMORY): opening the pack, start to the main
loop, and start to the first table (the main loop plus the first key's work). A first start
(unmeasured) leaves the pack's verification record, as any first use after an install does;
`--cold` measures a start without one. `--smaps` lists every mapping with resident pages
(/proc/PID/smaps: size, Rss, Anonymous).
Bars (issue 18): VmRSS ≤ 25 MB with the learned store at its cap; start to first table ≤ 50 ms.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Integration"))

from ibus_harness import ALL_CAPS, SHIFT, RELEASE, Client, Daemon, IBus, cli_path, pump_for, pump_until  # noqa: E402

CAP = 30_000


def learned_entries(text, cap):
    """`cap` learned entries (context, key, display) from the words of `text`: every distinct
    word, then word pairs, then triples, made up where the text runs out."""
    words = [w for w in re.findall(r"[A-Za-z]+(?:'[a-z]+)?", text)]
    keys = [w.lower() for w in words]
    entries, seen = [], set()

    def add(context, word):
        key = word.lower()
        if (context, key) not in seen and len(entries) < cap:
            seen.add((context, key))
            entries.append((context, key, word))

    for word in words:
        add("", word)
    for first, second in zip(keys, words[1:]):
        add(first, second)
    for first, second, third in zip(keys, keys[1:], words[2:]):
        add(first + " " + second, third)
    n = 0
    while len(entries) < cap:  # a short text: invented pairs (letters only, as learned words are)
        invented, m = "", n
        while True:
            invented, m = chr(97 + m % 26) + invented, m // 26
            if not m:
                break
        add(keys[n % len(keys)], "zq" + invented)
        n += 1
    return entries


def smaps_rollup(pid):
    result = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[-1] == "kB":
                result[parts[0].rstrip(":")] = int(parts[1])
    return result


def smaps_mappings(pid):
    """Every mapping: [name, permissions, size kB, Rss kB, Anonymous kB] ("[anon]" for unnamed)."""
    result = []
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if re.match(r"^[0-9a-f]+-[0-9a-f]+$", parts[0]):
                start, end = (int(x, 16) for x in parts[0].split("-"))
                result.append([parts[5] if len(parts) > 5 else "[anon]", parts[1], (end - start) // 1024, 0, 0])
            elif parts[0] == "Rss:":
                result[-1][3] += int(parts[1])
            elif parts[0] == "Anonymous:":
                result[-1][4] += int(parts[1])
    return result


def smaps_by_file(mappings):
    """Resident and anonymous kB per mapped file ("[heap]", "[anon]" for unnamed mappings)."""
    result = {}
    for name, _, _, rss, anonymous in mappings:
        total = result.setdefault(name, [0, 0])
        total[0] += rss
        total[1] += anonymous
    return result


def status(pid):
    with open("/proc/%d/status" % pid) as f:
        return {line.split(":")[0]: int(line.split()[1]) for line in f if line.startswith(("VmRSS", "VmHWM"))}


def prime(data_home):
    """Starts the engine once with `data_home` and waits for the pack's verification record."""
    first = Daemon(env={"XDG_DATA_HOME": data_home}, verbose=True)
    first.start()
    try:
        client = Client(first, caps=ALL_CAPS, name="engine-memory")
        client.focus_in()
        record = os.path.join(data_home, "inkling", "verified", "en")
        pump_until(lambda: os.path.exists(record), timeout=60, what="the pack's verification record")
    finally:
        first.stop()


def pack_residency(pid):
    """Resident kB of the mapped English pack by section (from /proc/PID/pagemap; needs root),
    or None when the pack is not mapped."""
    import struct
    with open("/proc/%d/maps" % pid) as f:
        mapping = next((line.split() for line in f if line.rstrip().endswith("en.inkpack")), None)
    if not mapping:
        return None
    start, end = (int(x, 16) for x in mapping[0].split("-"))
    with open(mapping[-1], "rb") as f:
        data = f.read(4096)
    count = struct.unpack_from("<I", data, 12)[0]
    sections = [struct.unpack_from("<4sIII", data, 32 + 16 * i) for i in range(count)]
    resident = {}
    with open("/proc/%d/pagemap" % pid, "rb") as f:
        f.seek((start // 4096) * 8)
        entries = f.read(((end - start) // 4096) * 8)
    for page in range((end - start) // 4096):
        if struct.unpack_from("<Q", entries, page * 8)[0] >> 63:
            offset = page * 4096
            tag = next((t.decode() for t, _, o, n in sections if o <= offset < o + n + 4096 and n), "?")
            resident[tag] = resident.get(tag, 0) + 4
    return resident


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--text", default=os.path.join(ROOT, "..", "shared", "bench", "dev-en.txt"))
    parser.add_argument("--keys", type=int, default=0, help="stop after N letters (0: the whole text)")
    parser.add_argument("--learned-cap", action="store_true", help="fill the learned store to its cap first")
    parser.add_argument("--cold", action="store_true",
                        help="no verification record: the pack is verified in full at the measured start")
    parser.add_argument("--prime", help=argparse.SUPPRESS)
    parser.add_argument("--settle", type=float, default=8.0, help="seconds to wait after typing before reading")
    parser.add_argument("--smaps", action="store_true",
                        help="print every mapping with resident memory (/proc/PID/smaps: Rss, Anonymous)")
    args = parser.parse_args()
    with open(args.text, encoding="utf-8") as f:
        text = whole = f.read()
    if args.keys:
        letters, end = 0, len(text)
        for index, ch in enumerate(text):
            letters += ch.isalpha()
            if letters >= args.keys:
                end = index + 1
                break
        text = text[:end]

    if args.prime:
        prime(args.prime)
        return
    data_home = tempfile.mkdtemp(prefix="engine-memory-data-")
    if not args.cold:
        # A first start verifies the pack and records it (as after the first use following an
        # install); the measured start then opens it on that record. Its own process: libibus
        # keeps one bus per process.
        subprocess.run([sys.executable, os.path.abspath(__file__), "--prime", data_home], check=True)
    # One memory line, at the last key (the engine counts key presses): the heap right after typing.
    daemon = Daemon(env={"INKLING_DEBUG_MEMORY": str(len(text)), "XDG_DATA_HOME": data_home}, verbose=True)
    if args.learned_cap:
        lines = "".join("%s\t%s\t%s\t2\t1700000000\n" % e for e in learned_entries(whole, CAP))
        db = os.path.join(daemon.env["XDG_DATA_HOME"], "inkling", "user.sqlite3")
        os.makedirs(os.path.dirname(db), exist_ok=True)
        subprocess.run([cli_path(), "learned", "import", "-", "--db", db], input=lines, text=True, check=True,
                       env=daemon.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    daemon.start()
    try:
        client = Client(daemon, caps=ALL_CAPS, name="engine-memory")
        client.focus_in()
        pump_until(lambda: daemon.engine_pid() is not None, timeout=60, what="the engine")
        pid = daemon.engine_pid()
        started = time.monotonic()
        for ch in text:
            if ch == "\n":
                ch = " "
            keyval = IBus.KEY_space if ch == " " else IBus.unicode_to_keyval(ch)
            state = SHIFT if ch.isupper() else 0
            if not client.ic.process_key_event(keyval, 0, state):
                client._apply_unhandled(keyval, state)
            client.ic.process_key_event(keyval, 0, state | RELEASE)
            pump_for(0.0005)
        pump_for(args.settle)
        rollup, vm, mappings = smaps_rollup(pid), status(pid), smaps_mappings(pid)
        by_file = smaps_by_file(mappings)
        residency = pack_residency(pid)
        log = daemon.log().splitlines()
        startup = [line for line in log if "startup pack_open_us=" in line]
        learned_ready = [line for line in log if "startup learned_ready_us=" in line]
        memory = [line for line in log if " memory keys=" in line]
    finally:
        daemon.stop()
    anonymous = rollup.get("Anonymous", 0)
    capped = ", learned store at its cap" if args.learned_cap else ""
    print("typed             %d characters in %.0f s%s" % (len(text), time.monotonic() - started, capped))
    print("engine VmRSS      %.1f MB (peak %.1f MB)" % (vm.get("VmRSS", 0) / 1024, vm.get("VmHWM", 0) / 1024))
    print("  anonymous       %.1f MB" % (anonymous / 1024))
    print("  file-backed     %.1f MB (Rss %.1f MB less anonymous and shared memory)"
          % ((rollup.get("Rss", 0) - anonymous - rollup.get("Shmem", 0) if "Shmem" in rollup else
              rollup.get("Rss", 0) - anonymous) / 1024, rollup.get("Rss", 0) / 1024))
    if residency is not None:
        print("  mapped pack     %.1f MB resident: %s" % (sum(residency.values()) / 1024, ", ".join(
            "%s %d kB" % item for item in sorted(residency.items(), key=lambda item: -item[1]))))
    if memory:
        fields = dict(f.split("=", 1) for f in memory[-1].split() if "=" in f)
        print("  C heap at the last key: %.1f MB in use, %.1f MB held (RSS then %.1f MB)"
              % (int(fields.get("heap_in_use_kb", 0)) / 1024, int(fields.get("heap_held_kb", 0)) / 1024,
                 int(fields.get("rss_kb", 0)) / 1024))
    print("  largest mappings (resident / anonymous kB): " + ", ".join(
        "%s %d/%d" % (os.path.basename(name) or name, rss, anon)
        for name, (rss, anon) in sorted(by_file.items(), key=lambda item: -item[1][0])[:8]))
    if args.smaps:
        print("  mappings with resident pages (size / Rss / Anonymous kB, permissions):")
        for name, permissions, size, rss, anonymous in sorted(mappings, key=lambda m: -m[3]):
            if rss:
                print("    %7d %6d %6d  %s %s" % (size, rss, anonymous, permissions, name))
    if learned_ready:
        fields = dict(f.split("=", 1) for f in learned_ready[-1].split() if "=" in f)
        print("learned model     %s entries read in the background, joined %.1f ms after the start of learning"
              % (fields.get("learned_entries", "?"), int(fields.get("learned_ready_us", 0)) / 1000))
    if startup:
        fields = dict(f.split("=", 1) for f in startup[-1].split() if "=" in f)
        us = {k: int(v) for k, v in fields.items() if v.isdigit()}
        print("engine start ms   pack open %.1f, to the main loop %.1f, first table's work %.1f;"
              " start to first table %.1f"
              % (us.get("pack_open_us", 0) / 1000, us.get("ready_us", 0) / 1000, us.get("first_work_us", 0) / 1000,
                 (us.get("ready_us", 0) + us.get("first_work_us", 0)) / 1000))


if __name__ == "__main__":
    main()
