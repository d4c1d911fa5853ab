#!/bin/bash
# What learning brings and what the user store costs: typesim (K = 3, --commit-events) on the dev
# set with learning off, learning during one pass (fresh store), and the second half of the
# documents after `inkling learn` on the first half; then the store's size after learning the dev
# set ten times, and latency with full stores. Release build required.
#   INKLING=path/to/inkling  PACK=…/en.inkpack  BENCH=path/to/bench  scripts/bench-learning.sh
# BENCH (default ../shared/bench beside the checkout) is where typesim.py and dev-en.txt live.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH=${BENCH:-$ROOT/../shared/bench}
TEXT=${TEXT:-$BENCH/dev-en.txt}
INKLING=${INKLING:-$ROOT/.build/release/inkling}
PACK=${PACK:-$ROOT/data/packs/en.inkpack}
CORPUS=${CORPUS:-$ROOT/.cache/prepared/en/corpus.txt}
OUT=$(mktemp -d /tmp/inkling-bench-learning-XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# Documents are non-blank lines: the first half is learned, the second half measured.
grep -v '^[[:space:]]*$' "$TEXT" >"$OUT/all.txt"
half=$(($(wc -l <"$OUT/all.txt") / 2))
head -n "$half" "$OUT/all.txt" >"$OUT/first.txt"
tail -n +"$((half + 1))" "$OUT/all.txt" >"$OUT/second.txt"
# The dev set's halves are different genres (debates, then IRC chat): also odd lines learned,
# even lines measured.
awk 'NR % 2 == 1' "$OUT/all.txt" >"$OUT/odd.txt"
awk 'NR % 2 == 0' "$OUT/all.txt" >"$OUT/even.txt"

sim() { # name text predictor-flags
    python3 "$BENCH/typesim.py" --predictor "$INKLING predict --stdio --pack $PACK $3" --text "$2" -k 3 \
        --commit-events --json "$OUT/$1.json" >/dev/null
}
entries() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from entries").fetchone()[0])' "$1"; }

sim off "$OUT/all.txt" ""
sim pass "$OUT/all.txt" "--learn --user-db $OUT/pass.sqlite3"
sim half_off "$OUT/second.txt" ""
"$INKLING" learn "$OUT/first.txt" --db "$OUT/first.sqlite3" --pack "$PACK" >/dev/null
sim half_store "$OUT/second.txt" "--user-db $OUT/first.sqlite3"
cp "$OUT/first.sqlite3" "$OUT/first-learn.sqlite3"
sim half_store_learn "$OUT/second.txt" "--learn --user-db $OUT/first-learn.sqlite3"
sim half_learn "$OUT/second.txt" "--learn --user-db $OUT/second-pass.sqlite3"
sim even_off "$OUT/even.txt" ""
"$INKLING" learn "$OUT/odd.txt" --db "$OUT/odd.sqlite3" --pack "$PACK" >/dev/null
sim even_store "$OUT/even.txt" "--user-db $OUT/odd.sqlite3"

start=$(date +%s%N)
for _ in 1 2 3 4 5 6 7 8 9 10; do "$INKLING" learn "$OUT/all.txt" --db "$OUT/ten.sqlite3" --pack "$PACK" >/dev/null; done
ten_ms=$((($(date +%s%N) - start) / 1000000))
sim ten_store "$OUT/all.txt" "--user-db $OUT/ten.sqlite3"
full_rows=""
if [ -f "$CORPUS" ]; then
    # A store at the model's capacity (UserModel.capacity entries) from 20k lines of the pack's training corpus.
    head -n 20000 "$CORPUS" >"$OUT/corpus.txt"
    "$INKLING" learn "$OUT/corpus.txt" --db "$OUT/full.sqlite3" --pack "$PACK" >/dev/null
    sim full_store "$OUT/all.txt" "--user-db $OUT/full.sqlite3"
    full_rows="full_store"
fi
open_ms=$(python3 - "$INKLING" "$OUT/${full_rows:-ten}.sqlite3" <<'PY'
import subprocess, sys, time
best = 1e9
for _ in range(5):
    t = time.monotonic(); subprocess.run([sys.argv[1], "learned", "list", "--limit", "1", "--db", sys.argv[2]], capture_output=True, check=True)
    best = min(best, time.monotonic() - t)
print(f"{best * 1000:.0f}")
PY
)

python3 - "$OUT" "$full_rows" <<'PY'
import json, os, sys
out, full = sys.argv[1], sys.argv[2]
rows = [
    ("dev set, learning off", "off"),
    ("dev set, learning during one pass (fresh store)", "pass"),
    ("2nd half, learning off, no store", "half_off"),
    ("2nd half, store from `learn` on 1st half", "half_store"),
    ("2nd half, that store + learning during the pass", "half_store_learn"),
    ("2nd half, fresh store + learning during the pass", "half_learn"),
    ("even lines, learning off, no store", "even_off"),
    ("even lines, store from `learn` on odd lines", "even_store"),
    ("dev set, store = dev set learned x10 (latency)", "ten_store"),
]
if full:
    rows.append(("dev set, store at capacity (latency)", "full_store"))
print(f"{'run':50} {'KSS':>7} {'WPR':>7} {'nw top1':>8} {'p50 ms':>7} {'p99 ms':>7} {'RSS MiB':>8}")
for label, name in rows:
    j = json.load(open(os.path.join(out, name + ".json")))
    print(f"{label:50} {100*j['kss']:6.2f}% {100*j['wpr']:6.2f}% {100*j['next_word']['top1_acc']:7.2f}% "
          f"{j['latency_ms']['p50']:7.3f} {j['latency_ms']['p99']:7.3f} {j['rss_peak_kib']/1024:8.1f}")
PY
for store in pass first odd ten ${full_rows:+full}; do
    printf '%-6s store: %8d entries, %6d KiB\n' "$store" "$(entries "$OUT/$store.sqlite3")" "$(($(stat -c %s "$OUT/$store.sqlite3") / 1024))"
done
echo "inkling learn of the dev set x10: ${ten_ms} ms in all; open + quick_check + list of the largest store: ${open_ms} ms"
