#!/bin/bash
# The neural re-ranker on text the pack never saw (issue 17; the README's held-out figures):
# after `make pack`, types the held-out documents that neither network trained on (every 5th of
# each half: the window network's test fold) through a pack built without any held-out document,
# with typesim K = 3, for n-grams, + character 6-gram and + neural re-ranker.
# Usage: heldout_bench.sh [WORK (default .cache/nn/pack)] [BENCH (default ../shared/bench)]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:-$ROOT/.cache/nn/pack}
BENCH=${2:-$ROOT/../shared/bench}
INKLING=${INKLING:-$ROOT/.build/release/inkling}
for f in prepared/corpus.txt heldout-a.txt heldout-b.txt wordlm.ngru reranker.nrrk; do
    [ -e "$WORK/$f" ] || { echo "heldout_bench: $WORK/$f is missing (run make pack first)" >&2; exit 1; }
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# Document ids as train_reranker.py counts them: line index % 5 == 0 is fold 0's test set.
awk 'FNR % 5 == 1' "$WORK/heldout-a.txt" "$WORK/heldout-b.txt" > "$OUT/test-fold0.txt"
"$INKLING" pack build --prepared "$WORK/prepared" -o "$OUT/heldout-free.inkpack" \
    --word-model "$WORK/wordlm.ngru" --reranker-network "$WORK/reranker.nrrk" 2>/dev/null
for row in "n-grams:--no-rerank" "+ character 6-gram:--no-neural" "+ neural re-ranker:"; do
    python3 "$BENCH/typesim.py" --predictor "$INKLING predict --stdio --pack $OUT/heldout-free.inkpack ${row#*:}" \
        --text "$OUT/test-fold0.txt" -k 3 --json "$OUT/result.json" --quiet >/dev/null
    python3 - "$OUT/result.json" "${row%%:*}" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:20} KSS {100 * j['kss']:6.2f} %   next-word top-3 {100 * j['next_word']['topk_acc']:6.2f} %"
      f"   ({j['words']} words)")
PY
done
