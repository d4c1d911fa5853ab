#!/usr/bin/env python3
"""The predictor alone on the typesim queries: CPU time and time per query, by kind of query.

Records the requests typesim sends for the dev text once (typesim, K = 3, through a tee), then
replays them into `inkling predict --stdio` several times per binary, alternating the binaries
so that they share the machine's load, and reports for each binary:
  - the process's CPU time (user + system) for the whole replay: median and range over the runs;
  - the predictor's own time per request (`INKLING_PREDICT_TIMINGS`): p50/p99 over all
    requests and per kind (next word, first letter, later letters; the predictor's answer path:
    searched, narrowed, with typo corrections, cached).

  /usr/bin/python3 bench/predictor_profile.py .build/release/inkling [OTHER/inkling ...] \\
      [--runs 5] [--learn] [--bench ../shared/bench]

--as-engine replays what the engine asks instead: the dev text typed as one document, a request
after every letter and space (n = 10), the text before the cursor trimmed as the engine trims it
(past 2,000 characters, to the last 1,000). The binaries are given --pack (default:
data/packs/en.inkpack).

--gap MS sends the requests one at a time, each after the answer to the last and a pause of MS
milliseconds, as keys reach the engine while someone types: between two keys the machine runs
other processes (the daemon, the application) and the predictor's data leaves the caches. The
replay's CPU time then includes the pauses' wake-ups; compare the per-request times.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# typesim's word: letters and digits with single inner apostrophes or hyphens.
PARTIAL = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*['\u2019-]?$")


def record(bench, text, path, learn):
    """Runs typesim once with a predictor that copies its requests to `path`."""
    inkling = os.path.join(ROOT, ".build/release/inkling")
    pack = os.path.join(ROOT, "data/packs/en.inkpack")
    flags = "--learn" if learn else ""
    command = f"sh -c 'tee {path} | {inkling} predict --stdio --pack {pack} {flags}'"
    extra = ["--commit-events"] if learn else []
    subprocess.run([sys.executable, os.path.join(bench, "typesim.py"), "--predictor", command,
                    "--text", text, "-k", "3"] + extra, check=True, stdout=subprocess.DEVNULL)


def engine_requests(text, limit):
    """The engine's requests for `text` typed as one document (first `limit` characters)."""
    typed = " ".join(open(text, encoding="utf-8").read().split())[:limit]
    lines = [json.dumps({"id": 1, "reset": True})]
    before = ""
    for character in typed:
        before += character
        if len(before) > 2000:
            before = before[-1000:]
        if character.isalpha() or character == " ":
            lines.append(json.dumps({"id": len(lines) + 1, "before": before, "n": 10}, ensure_ascii=False))
    return ("\n".join(lines) + "\n").encode()


def replay(binary, requests, pack, learn, gap_ms=0.0):
    """One replay: (CPU seconds, [(nanoseconds, path)] per suggestion request)."""
    with tempfile.NamedTemporaryFile(suffix=".timings") as timings:
        env = dict(os.environ, INKLING_PREDICT_TIMINGS=timings.name)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        command = [binary, "predict", "--stdio", "--pack", pack] + (["--learn"] if learn else [])
        if gap_ms > 0:
            paced(command, requests, env, gap_ms / 1000)
        else:
            subprocess.run(command, input=requests, stdout=subprocess.DEVNULL, env=env, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        rows = []
        for line in open(timings.name):
            nanoseconds, path = line.split()
            rows.append((int(nanoseconds), path))
        return cpu, rows


def paced(command, requests, env, gap):
    """Sends one request at a time (every request gets one answer line), pausing after each answer."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    for line in requests.splitlines():
        process.stdin.write(line + b"\n")
        process.stdin.flush()
        if not process.stdout.readline():
            raise SystemExit(f"{command[0]} stopped answering")
        time.sleep(gap)
    process.stdin.close()
    if process.wait() != 0:
        raise SystemExit(f"{command[0]} exited with {process.returncode}")


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0


def kinds_of(requests):
    """The kind of each suggestion request by the length of the word typed so far."""
    kinds = []
    for line in requests.decode().splitlines():
        request = json.loads(line)
        if "before" not in request:
            continue
        match = PARTIAL.search(request["before"])
        length = len(match.group(0)) if match else 0
        kinds.append("next word" if length == 0 else "first letter" if length == 1 else "later letters")
    return kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", help="inkling binaries to compare")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--learn", action="store_true", help="learning on (commit events)")
    parser.add_argument("--bench", default=os.path.join(ROOT, "../shared/bench"))
    parser.add_argument("--text", help="default: BENCH/dev-en.txt")
    parser.add_argument("--pack", default=os.path.join(ROOT, "data/packs/en.inkpack"))
    parser.add_argument("--requests", help="recorded requests to replay (recorded here if absent)")
    parser.add_argument("--as-engine", action="store_true", help="the engine's requests (see above)")
    parser.add_argument("--engine-chars", type=int, default=20000, help="characters typed with --as-engine")
    parser.add_argument("--gap", type=float, default=0.0, metavar="MS",
                        help="one request at a time, a pause of MS milliseconds after each answer")
    args = parser.parse_args()
    text = args.text or os.path.join(args.bench, "dev-en.txt")
    path = args.requests or os.path.join(tempfile.gettempdir(),
                                         "inkling-typesim-%s.jsonl" % ("learn" if args.learn else "plain"))
    if args.as_engine:
        requests = engine_requests(text, args.engine_chars)
    else:
        if not os.path.exists(path):
            record(args.bench, text, path, args.learn)
        requests = open(path, "rb").read()
    kinds = kinds_of(requests)
    cpu = {binary: [] for binary in args.binaries}
    times = {binary: [] for binary in args.binaries}
    for _ in range(args.runs):
        for binary in args.binaries:
            seconds, rows = replay(binary, requests, args.pack, args.learn, args.gap)
            cpu[binary].append(seconds)
            times[binary].append(rows)
    pacing = f", one at a time with {args.gap:g} ms pauses" if args.gap > 0 else ""
    print(f"{len(kinds)} suggestion requests, {args.runs} runs per binary, learning {'on' if args.learn else 'off'}"
          + pacing)
    for binary in args.binaries:
        runs = cpu[binary]
        print(f"\n{binary}\n  CPU ms: median {1000 * statistics.median(runs):.0f} "
              f"(min {1000 * min(runs):.0f}, max {1000 * max(runs):.0f})")
        # Per request: the fastest of the runs (the machine's noise only ever adds).
        rows = times[binary]
        best = [min(run[index][0] for run in rows) for index in range(len(rows[0]))]
        paths = [rows[0][index][1] for index in range(len(rows[0]))]
        groups = {"all": range(len(best))}
        for kind in ("next word", "first letter", "later letters"):
            groups[kind] = [i for i in range(len(best)) if kinds[i] == kind]
        for path in sorted(set(paths)):
            groups["path " + path] = [i for i in range(len(best)) if paths[i] == path]
        total = sum(best)
        print(f"  {'kind':22} {'queries':>8} {'share':>6} {'p50 us':>8} {'p99 us':>8} {'max us':>8}")
        for name, indices in groups.items():
            values = [best[i] / 1000 for i in indices]
            if not values:
                continue
            share = sum(best[i] for i in indices) / total
            print(f"  {name:22} {len(values):8} {100 * share:5.1f}% {percentile(values, 0.5):8.0f} "
                  f"{percentile(values, 0.99):8.0f} {max(values):8.0f}")


if __name__ == "__main__":
    main()
