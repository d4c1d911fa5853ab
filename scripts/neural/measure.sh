#!/bin/bash
# Offline headroom of a neural re-ranker (issue 17): holds out every 50th document of the prepared
# English corpus, builds a pack without them, dumps the predictor's top 32 candidates for every
# prefix of held-out words, trains a small word GRU on the rest and reports the KSS proxy with and
# without re-ranking. Never uses the dev text. Usage: scripts/neural/measure.sh [MINUTES]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MINUTES=${1:-14}
PREPARED=${PREPARED:-$ROOT/.cache/prepared/en}
WORK=$ROOT/.cache/nn
VENV=$ROOT/.cache/torch-venv
INKLING=$ROOT/.build/release/inkling
mkdir -p "$WORK/prepared"
[ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -r "$ROOT/scripts/neural/requirements.txt"; }
for f in bigrams.tsv case.tsv hunspell.txt wordfreq.tsv; do cp "$PREPARED/$f" "$WORK/prepared/"; done
awk -v held="$WORK/heldout.txt" -v kept="$WORK/prepared/corpus.txt" \
    'NR % 50 == 7 { print > held; next } { print > kept }' "$PREPARED/corpus.txt"
"$INKLING" pack build --prepared "$WORK/prepared" -o "$WORK/heldout-free.inkpack"
python3 "$ROOT/scripts/neural/dump_candidates.py" --inkling "$INKLING" --pack "$WORK/heldout-free.inkpack" \
    --text "$WORK/heldout.txt" --out "$WORK/dump.jsonl" --max-words 6000
cd "$ROOT/scripts/neural"
"$VENV/bin/python" train_wordlm.py --corpus "$WORK/prepared/corpus.txt" --out "$WORK/wordgru.pt" --minutes "$MINUTES"
"$VENV/bin/python" eval_rerank.py --dump "$WORK/dump.jsonl" --model "$WORK/wordgru.pt"
