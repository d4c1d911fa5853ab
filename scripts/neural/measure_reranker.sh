#!/bin/bash
# Learning-to-rank re-ranker of the predictor's window (issue 17), measured on held-out text.
# Needs scripts/neural/measure.sh's held-out pack and text (.cache/nn/heldout-free.inkpack,
# heldout.txt). Dumps the window with the predictor's features for every prefix of every
# held-out word (two processes, one per half), then trains and reports train_reranker.py for a
# features-only MLP and one that also reads measure.sh's word GRU. Usage: measure_reranker.sh [MAX_WORDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAX_WORDS=${1:-40000}
WORK=$ROOT/.cache/nn
VENV=$ROOT/.cache/torch-venv
INKLING=$ROOT/.build/release/inkling
[ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -r "$ROOT/scripts/neural/requirements.txt"; }
[ -f "$WORK/heldout-free.inkpack" ] || { echo "run scripts/neural/measure.sh first (held-out pack)" >&2; exit 1; }
half=$(( ($(wc -l < "$WORK/heldout.txt") + 1) / 2 ))
head -n "$half" "$WORK/heldout.txt" > "$WORK/heldout-a.txt"
tail -n +"$((half + 1))" "$WORK/heldout.txt" > "$WORK/heldout-b.txt"
for part in a b; do
    python3 "$ROOT/scripts/neural/dump_candidates.py" --inkling "$INKLING" --pack "$WORK/heldout-free.inkpack" \
        --text "$WORK/heldout-$part.txt" --out "$WORK/feat-dump-$part.jsonl" --max-words "$((MAX_WORDS / 2))" --features &
done
wait
cd "$ROOT/scripts/neural"
DUMPS=(--dump "$WORK/feat-dump-a.jsonl" --dump "$WORK/feat-dump-b.jsonl:100000")
"$VENV/bin/python" train_reranker.py "${DUMPS[@]}" --epochs 12 --out "$WORK/reranker-features.pt" | tail -n 1
# With measure.sh's word GRU as one more input (its log-probability of each candidate).
"$VENV/bin/python" train_reranker.py "${DUMPS[@]}" --epochs 10 --lm "$WORK/wordgru.pt" --out "$WORK/reranker-lm.pt" | tail -n 1
