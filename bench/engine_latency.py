#!/usr/bin/python3
"""Key → lookup-table latency of an IBus engine, through a real headless ibus-daemon and client.

    /usr/bin/python3 bench/engine_latency.py [all] [--text FILE] [--keys N]
    /usr/bin/python3 bench/engine_latency.py inkling|passthrough|typing-booster [--text FILE] [--keys N]

`all` (the default) runs the three in one go, each in its own daemon: a pass-through baseline
(the same engine binary without a pack, so every key goes straight back to the application),
Inkling, and ibus-typing-booster when it is installed; then prints how far Inkling's key → table
time is above the pass-through round trip and how many times faster it is than the peer.
For the pass-through engine no table ever comes: its figure is the key's round trip.

For every letter typed, the time from sending the key to the client receiving the next
non-empty update-lookup-table (the user sees candidates), and the key's own answer time
(process_key_event round trip). Inkling leaves out a table whose shown page would not change
(a longer prefix of the same words): when its answer came and the engine then stayed quiet for
--unchanged-quiet seconds without a table, the key counts as "table unchanged", not as a miss.
Reports p50/p95/p99 and the engine process's VmRSS/VmHWM after loading and after the run.
Other keys (space, punctuation) are typed too but not timed; after them the client waits until
the engine has been quiet for 20 ms, so that a late table from one key is never credited to the
next.

Typing Booster (Debian's ibus-typing-booster) runs with a GSettings keyfile backend setting its
dictionary to en_US; if its schema has a candidate-delay key (newer versions), --candidate-delay
sets it (default: the schema's default; 0 shows candidates at once).
Bars for Inkling (issue 18): key → table p99 within 1 ms of the pass-through round trip and
≥ 10× faster than the peer at p50 and p99; engine work per key p50 ≤ 0.25 ms, p99 ≤ 0.6 ms.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Tests", "Integration"))

from ibus_harness import (  # noqa: E402
    ALL_CAPS, RELEASE, SHIFT, Client, Daemon, IBus, Timeout, component_xml, engine_path, pump_until)

DEFAULT_TEXT = (
    "I would like to thank you for the help you gave me last week. The meeting went well and "
    "everyone agreed that the new plan is better than the old one. We will start next Monday, "
    "so please send me the report before the end of the day. If you have any questions, let me "
    "know and I will call you back as soon as I can. The weather was lovely this morning, and we "
    "walked along the river to the old bridge before lunch. My sister is coming to visit in the "
    "summer, and she wants to see the museum and the gardens. It has been a long time since we "
    "last spent a whole week together, and I am looking forward to it. Thanks again for "
    "everything, and have a great weekend."
)

TB_SCHEMA = "org.freedesktop.ibus.engine.typing-booster"
TB_SCHEMA_FILE = "/usr/share/glib-2.0/schemas/%s.gschema.xml" % TB_SCHEMA
TB_COMPONENT = "/usr/share/ibus/component/typing-booster.xml"


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def status_kb(pid):
    result = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                result[line.split(":")[0]] = int(line.split()[1])
    return result


def find_pid(daemon, pattern):
    for pid in daemon.children():
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                if pattern.encode() in f.read():
                    return pid
        except OSError:
            pass
    return None


def tb_delay_key():
    """The candidate-delay key of the installed Typing Booster, if it has one."""
    try:
        schema = open(TB_SCHEMA_FILE).read()
    except OSError:
        return None
    for name in ("candidatesdelaymilliseconds", "candidatesdelay"):
        if '<key name="%s"' % name in schema:
            return name
    return None


def setup(engine_name, args, scratch):
    """Components, environment and the process pattern for the engine under test."""
    if engine_name == "inkling":
        engine = os.path.realpath(args.engine or engine_path())
        return {"inkling.xml": component_xml(engine)}, {}, os.path.basename(engine), None
    if engine_name == "passthrough":
        # The same binary where no pack can be found: no session, every key passes through.
        engine = os.path.join(scratch, "bin", "ibus-engine-inkling")
        os.makedirs(os.path.dirname(engine), exist_ok=True)
        shutil.copy(os.path.realpath(args.engine or engine_path()), engine)
        return {"inkling.xml": component_xml(engine)}, {}, engine, None
    if engine_name == "typing-booster":
        if not os.path.exists(TB_COMPONENT):
            sys.exit("ibus-typing-booster is not installed (apt-get install ibus-typing-booster)")
        settings = ["[org/freedesktop/ibus/engine/typing-booster]", "dictionary='en_US'", "inputmethod='NoIME'"]
        key = tb_delay_key()
        note = None
        if key and args.candidate_delay is not None:
            settings.append("%s=%d" % (key, args.candidate_delay))
            note = "%s=%d" % (key, args.candidate_delay)
        elif key:
            note = "%s=default" % key
        else:
            note = "this version has no candidate-delay setting (candidates are computed in an idle callback)"
        env = {"GSETTINGS_BACKEND": "keyfile", "LANG": "C.UTF-8"}
        component = {"typing-booster.xml": open(TB_COMPONENT).read()}
        return component, env, "typing-booster", ("\n".join(settings) + "\n", note)
    sys.exit("unknown engine %s (inkling, passthrough or typing-booster)" % engine_name)


def wait_quiet(client, quiet=0.02, limit=1.0):
    """Pumps until no signal has arrived for `quiet` seconds (at most `limit`)."""
    start = time.monotonic()
    state = {"count": len(client.events), "since": time.monotonic()}

    def quiet_now():
        if len(client.events) != state["count"]:
            state["count"] = len(client.events)
            state["since"] = time.monotonic()
        now = time.monotonic()
        return now - state["since"] >= quiet or now - start >= limit

    pump_until(quiet_now, timeout=limit + 1, what="quiet")


def presses_until(text, keys):
    """Key presses sent for `text` until `keys` letters were timed (every character is a press)."""
    if not keys:
        return len(text)
    timed = 0
    for index, ch in enumerate(text):
        if timed >= keys:
            return index
        if ch.isalpha():
            timed += 1
    return len(text)


def run(engine_name, args, text):
    """Types `text` into one engine under its own daemon; returns the figures."""
    scratch = tempfile.mkdtemp(prefix="engine-latency-")
    try:
        return measure(engine_name, args, text, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def measure(engine_name, args, text, scratch):
    components, env, pattern, tb = setup(engine_name, args, scratch)
    # The IBus engine name: the pass-through engine is Inkling's binary.
    ibus_name = "inkling" if engine_name == "passthrough" else engine_name
    waits_for_table = engine_name != "passthrough"

    warmup = "warm up "
    if engine_name == "inkling":
        # One diagnostics line at the last key press: the engine's own time, apart from D-Bus.
        total = len(warmup) + presses_until(text, args.keys)
        env = dict(env, INKLING_DEBUG_MEMORY=str(total))
    # --verbose: otherwise the daemon sends its engines' stderr to /dev/null.
    daemon = Daemon(components=components, env=env, global_engine=None, verbose=True)
    if tb:
        keyfile_dir = os.path.join(daemon.root, "config", "glib-2.0", "settings")
        os.makedirs(keyfile_dir, exist_ok=True)
        with open(os.path.join(keyfile_dir, "keyfile"), "w") as f:
            f.write(tb[0])
    daemon.start()
    try:
        client = Client(daemon, caps=ALL_CAPS, echo_surrounding=True, name="engine-latency")
        client.focus_in()
        client.ic.set_engine(ibus_name)
        pump_until(
            lambda: client.ic.get_engine() is not None and client.ic.get_engine().get_name() == ibus_name,
            timeout=60,
            what="the engine",
        )
        pid = find_pid(daemon, pattern)
        # Warm up: the first word loads whatever the engine loads lazily.
        for ch in warmup:
            client.key(IBus.KEY_space if ch == " " else ord(ch))
            wait_quiet(client)
        loaded = status_kb(pid) if pid else {}

        table_ms, answer_ms, misses, unchanged, timed = [], [], 0, 0, 0
        for ch in text:
            if args.keys and timed >= args.keys:
                break
            if ch == " ":
                keyval, state = IBus.KEY_space, 0
            else:
                keyval = IBus.unicode_to_keyval(ch)
                state = SHIFT if ch.isupper() else 0
            measured = ch.isalpha()
            before = sum(1 for e in client.events if e[0] == "table" and e[1] and e[2])
            t0 = time.perf_counter()
            handled = client.ic.process_key_event(keyval, 0, state)
            t1 = time.perf_counter()
            if measured:
                answer_ms.append((t1 - t0) * 1000)

                def table_arrived():
                    return sum(1 for e in client.events if e[0] == "table" and e[1] and e[2]) > before

                # The engine sent nothing more for a while after its answer: no table is coming.
                quiet = {"count": len(client.events), "since": time.perf_counter()}

                def table_or_quiet():
                    if table_arrived():
                        return True
                    now = time.perf_counter()
                    if len(client.events) != quiet["count"]:
                        quiet["count"], quiet["since"] = len(client.events), now
                    return now - quiet["since"] >= args.unchanged_quiet

                if waits_for_table:
                    try:
                        pump_until(table_or_quiet, timeout=args.miss_timeout, what="table")
                        if table_arrived():
                            table_ms.append((time.perf_counter() - t0) * 1000)
                        else:
                            unchanged += 1
                    except Timeout:
                        misses += 1
                timed += 1
            if not handled:
                client._apply_unhandled(keyval, state)
            client.ic.process_key_event(keyval, 0, state | RELEASE)
            wait_quiet(client)
        after = status_kb(pid) if pid else {}
        result = {
            "engine": engine_name,
            "keys_timed": timed,
            "tables": len(table_ms),
            "misses": misses,
            "unchanged": unchanged,
            "key_to_table_ms": {"p%d" % p: round(percentile(table_ms, p), 3) for p in (50, 95, 99)},
            "key_answer_ms": {"p%d" % p: round(percentile(answer_ms, p), 3) for p in (50, 95, 99)},
            "rss_kb_after_load": loaded.get("VmRSS"),
            "rss_kb_after_run": after.get("VmRSS"),
            "hwm_kb_after_run": after.get("VmHWM"),
        }
        if tb:
            result["setting"] = tb[1]
        client.focus_out()
        internal = [line for line in daemon.log().splitlines() if "memory keys=" in line]
        if internal:
            fields = dict(f.split("=", 1) for f in internal[-1].split() if "=" in f)
            result["engine_internal_us"] = {
                k: int(fields[k])
                for k in ("key_us_p50", "key_us_p99", "key_us_max", "suggest_us_p50", "suggest_us_p99",
                          "suggest_us_max", "work_us_p50", "work_us_p99", "work_cpu_us_p50", "work_cpu_us_p99",
                          "predict_cpu_us_p50", "predict_cpu_us_p99", "send_cpu_us_p50", "send_cpu_us_p99",
                          "after_us_p50", "after_us_p99", "after_us_max", "after_cpu_us_p50", "after_cpu_us_p99")
                if k in fields
            }
        startup = [line for line in daemon.log().splitlines() if "startup pack_open_us=" in line]
        if startup:
            fields = dict(f.split("=", 1) for f in startup[-1].split() if "=" in f)
            result["engine_startup_us"] = {k: int(v) for k, v in fields.items() if v.isdigit()}
    finally:
        daemon.stop()
    return result


def show(result):
    print("engine            %s%s" % (result["engine"], "  (%s)" % result["setting"] if "setting" in result else ""))
    print("keys timed        %d letters, %d tables, %d with the table unchanged (none sent), %d without a table"
          % (result["keys_timed"], result["tables"], result.get("unchanged", 0), result["misses"]))
    if result["tables"]:
        print("key → table ms    p50 %(p50).2f  p95 %(p95).2f  p99 %(p99).2f" % result["key_to_table_ms"])
    print("key answer ms     p50 %(p50).2f  p95 %(p95).2f  p99 %(p99).2f" % result["key_answer_ms"])
    print(
        "engine RSS        %.1f MB after load, %.1f MB after the run (peak %.1f MB)"
        % ((result["rss_kb_after_load"] or 0) / 1024, (result["rss_kb_after_run"] or 0) / 1024,
           (result["hwm_kb_after_run"] or 0) / 1024)
    )
    if "engine_startup_us" in result:
        s = result["engine_startup_us"]
        print("engine start ms   pack open %.1f, to the main loop %.1f (CPU %.1f), first table's work %.1f;"
              " start to first table %.1f"
              % (s.get("pack_open_us", 0) / 1000, s.get("ready_us", 0) / 1000, s.get("ready_cpu_us", 0) / 1000,
                 s.get("first_work_us", 0) / 1000, (s.get("ready_us", 0) + s.get("first_work_us", 0)) / 1000))
    if "engine_internal_us" in result:
        i = result["engine_internal_us"]
        print(
            "inside the engine key answer p50 %d µs (max %d); suggestions p50 %d µs, p99 %d µs (max %d)"
            % (i["key_us_p50"], i["key_us_max"], i["suggest_us_p50"], i["suggest_us_p99"], i["suggest_us_max"])
        )
        if "work_us_p50" in i:
            print("engine work per key (answer + suggestions) p50 %d µs, p99 %d µs"
                  % (i["work_us_p50"], i["work_us_p99"]))
        if "work_cpu_us_p50" in i:
            print("  the same in CPU time of the engine thread (what a busy machine does not inflate)"
                  " p50 %d µs, p99 %d µs" % (i["work_cpu_us_p50"], i["work_cpu_us_p99"]))
        if "predict_cpu_us_p50" in i:
            print("  of the suggestions' CPU time: the table's prediction p50 %d µs, p99 %d µs; sending it"
                  " p50 %d µs, p99 %d µs" % (i["predict_cpu_us_p50"], i["predict_cpu_us_p99"],
                                             i["send_cpu_us_p50"], i["send_cpu_us_p99"]))
        if "after_us_p50" in i:
            print("after the table (the finished word's check, same idle callback) p50 %d µs, p99 %d µs (max %d);"
                  " CPU p50 %d µs, p99 %d µs"
                  % (i["after_us_p50"], i["after_us_p99"], i["after_us_max"], i.get("after_cpu_us_p50", 0),
                     i.get("after_cpu_us_p99", 0)))


def compare(results):
    """Inkling against the pass-through round trip and against the peer, same run."""
    ink = results.get("inkling")
    base = results.get("passthrough")
    peer = results.get("typing-booster")
    if not ink or not ink["tables"]:
        return
    print("comparison (same run)")
    for p in ("p50", "p99"):
        line = "  %s  Inkling key → table %.2f ms" % (p, ink["key_to_table_ms"][p])
        if base:
            line += "; pass-through round trip %.2f ms (Inkling +%.2f ms)" % (
                base["key_answer_ms"][p], ink["key_to_table_ms"][p] - base["key_answer_ms"][p])
        if peer and peer["tables"]:
            line += "; typing-booster %.2f ms (%.1f× Inkling)" % (
                peer["key_to_table_ms"][p], peer["key_to_table_ms"][p] / ink["key_to_table_ms"][p])
        print(line)
        if base and peer and peer["tables"]:
            # The 10× bar against the floor: a table cannot come sooner than a key's bare round
            # trip through the same daemon and client, which a pass-through engine measures.
            needed, floor = peer["key_to_table_ms"][p] / 10, base["key_answer_ms"][p]
            print("        10× the peer needs ≤ %.2f ms: %s the pass-through round trip (%.2f ms)" % (
                needed, "below" if needed < floor else "above", floor))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engine_name", nargs="?", default="all",
                        choices=["all", "inkling", "passthrough", "typing-booster"])
    parser.add_argument("--text", help="text file to type (default: a built-in paragraph)")
    parser.add_argument("--keys", type=int, default=0, help="stop after this many timed keys")
    parser.add_argument("--engine", help="Inkling engine binary (default: $INKLING_ENGINE or .build/release)")
    parser.add_argument("--candidate-delay", type=int, help="Typing Booster's candidate delay in ms, if it has one")
    parser.add_argument("--miss-timeout", type=float, default=1.0, help="seconds to wait for a table")
    parser.add_argument("--unchanged-quiet", type=float, default=0.05,
                        help="seconds of silence after a key that mean its table is unchanged (none sent)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    text = open(args.text).read() if args.text else DEFAULT_TEXT
    text = " ".join(text.split())
    if args.engine_name == "all":
        names = ["passthrough", "inkling"]
        if os.path.exists(TB_COMPONENT):
            names.append("typing-booster")
        else:
            print("ibus-typing-booster is not installed: no peer in this run (apt-get install ibus-typing-booster)")
    else:
        names = [args.engine_name]
    results = {}
    if len(names) == 1:
        results[names[0]] = run(names[0], args, text)
        show(results[names[0]])
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results[names[0]], f, indent=2)
        return
    else:
        # One process per engine: libibus keeps its first daemon's connection for the process.
        for name in names:
            with tempfile.NamedTemporaryFile(suffix=".json") as out:
                command = [sys.executable, os.path.abspath(__file__), name, "--json", out.name,
                           "--miss-timeout", str(args.miss_timeout), "--unchanged-quiet", str(args.unchanged_quiet)]
                for option in ("text", "keys", "engine", "candidate_delay"):
                    value = getattr(args, option)
                    if value is not None and (value != 0 or option == "candidate_delay"):
                        command += ["--" + option.replace("_", "-"), str(value)]
                print("running %s ..." % name, file=sys.stderr)
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
                results[name] = json.load(open(out.name))
    for name in names:
        show(results[name])
        print()
    compare(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
