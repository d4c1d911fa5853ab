#!/bin/bash
# Runs the typesim benchmark (K = 3) on the dev text for the full predictor and for the
# ablations (dictionary + word n-grams; + the character 6-gram; + the pack's neural re-ranker,
# the same as the row before for a pack without one; + learning), and prints one table.
# Release build required (make build).
set -euo pipefail
BENCH=${1:-../shared/bench}
TEXT=${2:-$BENCH/dev-en.txt}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
INKLING=${INKLING:-$ROOT/.build/release/inkling}
run() {
    python3 "$BENCH/typesim.py" --predictor "$INKLING predict --stdio $2" --text "$TEXT" -k 3 \
        --json "$OUT/$1.json" "${@:3}" >/dev/null
}
run dictionary "--no-rerank"
run character "--no-neural"
run reranked ""
# The engine learns committed words in real use; this row shows it (in memory, fresh each run).
run learning "--learn" "--commit-events"
python3 - "$OUT" <<'PY'
import json, sys, os
rows = [("dictionary + word n-grams", "dictionary"), ("+ character 6-gram", "character"),
        ("+ neural re-ranker", "reranked"), ("+ learning on", "learning")]
print(f"{'predictor':28} {'KSS':>7} {'WPR':>7} {'nw top1':>8} {'nw top3':>8} {'p50 ms':>7} {'p99 ms':>7} {'RSS MiB':>8}")
for label, name in rows:
    j = json.load(open(os.path.join(sys.argv[1], name + ".json")))
    print(f"{label:28} {100*j['kss']:6.2f}% {100*j['wpr']:6.2f}% {100*j['next_word']['top1_acc']:7.2f}% "
          f"{100*j['next_word']['topk_acc']:7.2f}% {j['latency_ms']['p50']:7.3f} {j['latency_ms']['p99']:7.3f} "
          f"{j['rss_peak_kib']/1024:8.1f}")
PY
