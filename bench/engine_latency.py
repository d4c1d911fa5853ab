#!/usr/bin/python3
"""Key → lookup-table latency of an IBus engine, through a real headless ibus-daemon and client.

    /usr/bin/python3 bench/engine_latency.py inkling [--text FILE] [--keys N]
    /usr/bin/python3 bench/engine_latency.py typing-booster [--text FILE] [--candidate-delay MS]

For every letter typed, the time from sending the key to the client receiving the next
non-empty update-lookup-table (the user sees candidates), and the key's own answer time
(process_key_event round trip). Reports p50/p95/p99 and the engine process's VmRSS/VmHWM after
loading and after the run. Other keys (space, punctuation) are typed too but not timed; after
them the client waits until the engine has been quiet for 20 ms, so that a late table from one
key is never credited to the next.

Typing Booster (Debian's ibus-typing-booster) runs with a GSettings keyfile backend setting its
dictionary to en_US; if its schema has a candidate-delay key (newer versions), --candidate-delay
sets it (default: the schema's default; 0 shows candidates at once).
Bars for Inkling: p99 ≤ 5 ms, RSS ≤ 40 MB.
"""

import argparse
import json
import os
import sys
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


def setup(engine_name, args):
    """Components, environment and the process pattern for the engine under test."""
    if engine_name == "inkling":
        engine = os.path.realpath(args.engine or engine_path())
        return {"inkling.xml": component_xml(engine)}, {}, os.path.basename(engine), None
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
    sys.exit("unknown engine %s (inkling or typing-booster)" % engine_name)


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engine_name", choices=["inkling", "typing-booster"])
    parser.add_argument("--text", help="text file to type (default: a built-in paragraph)")
    parser.add_argument("--keys", type=int, default=0, help="stop after this many timed keys")
    parser.add_argument("--engine", help="Inkling engine binary (default: $INKLING_ENGINE or .build/release)")
    parser.add_argument("--candidate-delay", type=int, help="Typing Booster's candidate delay in ms, if it has one")
    parser.add_argument("--miss-timeout", type=float, default=1.0, help="seconds to wait for a table")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    text = open(args.text).read() if args.text else DEFAULT_TEXT
    text = " ".join(text.split())
    components, env, pattern, tb = setup(args.engine_name, args)

    warmup = "warm up "
    if args.engine_name == "inkling":
        # One diagnostics line at the last key press: the engine's own time, apart from D-Bus.
        total = len(warmup) + (min(len(text), args.keys * 2) if args.keys else len(text))
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
        client.ic.set_engine(args.engine_name)
        pump_until(
            lambda: client.ic.get_engine() is not None and client.ic.get_engine().get_name() == args.engine_name,
            timeout=60,
            what="the engine",
        )
        pid = find_pid(daemon, pattern)
        # Warm up: the first word loads whatever the engine loads lazily.
        for ch in warmup:
            client.key(IBus.KEY_space if ch == " " else ord(ch))
            wait_quiet(client)
        loaded = status_kb(pid) if pid else {}

        table_ms, answer_ms, misses, timed = [], [], 0, 0
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

                try:
                    pump_until(table_arrived, timeout=args.miss_timeout, what="table")
                    table_ms.append((time.perf_counter() - t0) * 1000)
                except Timeout:
                    misses += 1
                timed += 1
            if not handled:
                client._apply_unhandled(keyval, state)
            client.ic.process_key_event(keyval, 0, state | RELEASE)
            wait_quiet(client)
        after = status_kb(pid) if pid else {}
        result = {
            "engine": args.engine_name,
            "keys_timed": timed,
            "tables": len(table_ms),
            "misses": misses,
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
                for k in ("key_us_p50", "key_us_max", "suggest_us_p50", "suggest_us_p99", "suggest_us_max")
                if k in fields
            }
    finally:
        daemon.stop()

    print("engine            %s%s" % (result["engine"], "  (%s)" % result["setting"] if tb else ""))
    print("keys timed        %d letters, %d tables, %d without a table" % (timed, len(table_ms), misses))
    print("key → table ms    p50 %(p50).2f  p95 %(p95).2f  p99 %(p99).2f" % result["key_to_table_ms"])
    print("key answer ms     p50 %(p50).2f  p95 %(p95).2f  p99 %(p99).2f" % result["key_answer_ms"])
    print(
        "engine RSS        %.1f MB after load, %.1f MB after the run (peak %.1f MB)"
        % ((result["rss_kb_after_load"] or 0) / 1024, (result["rss_kb_after_run"] or 0) / 1024,
           (result["hwm_kb_after_run"] or 0) / 1024)
    )
    if "engine_internal_us" in result:
        i = result["engine_internal_us"]
        print(
            "inside the engine key answer p50 %d µs (max %d); suggestions p50 %d µs, p99 %d µs (max %d)"
            % (i["key_us_p50"], i["key_us_max"], i["suggest_us_p50"], i["suggest_us_p99"], i["suggest_us_max"])
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
