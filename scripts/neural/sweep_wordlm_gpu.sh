#!/bin/bash
# Sweeps the word GRU's size and length on a GPU machine (the device tool), to choose what the
# CPU pipeline (train_pack.sh) should train: each configuration trains concurrently, then its
# held-out perplexity and top-1/top-3 are printed. GPU weights are not the pack's (the pack is
# trained on the CPU, byte for byte reproducible); the checkpoints named in KEEP are copied to OUT.
# Usage: sweep_wordlm_gpu.sh CORPUS HELDOUT OUT "DIM:STEPS[:DROPOUT] ..." "DIM:STEPS[:DROPOUT] ..."(KEEP)
set -uo pipefail
CORPUS=$(realpath "$1"); HELDOUT=$(realpath "$2"); OUT=$3; CONFIGS=$4; KEEP=${5:-}
cd "$(dirname "$0")" || exit 1
export CUBLAS_WORKSPACE_CONFIG=:4096:8 PYTHONUNBUFFERED=1
work=$(mktemp -d)
name() { echo "w${1//:/-}"; }  # 128:14000:0.2 -> w128-14000-0.2
for cfg in $CONFIGS; do
    IFS=: read -r dim steps dropout <<<"$cfg"
    python3 train_wordlm.py --case-reachable --corpus "$CORPUS" --out "$work/$(name "$cfg").pt" --dim "$dim" \
        --max-steps "$steps" --decay-to 0.05 --minutes 1e9 --dropout "${dropout:-0}" --device cuda \
        >"$work/$(name "$cfg").log" 2>&1 &
done
wait
for cfg in $CONFIGS; do
    echo "$cfg $(tail -n 1 "$work/$(name "$cfg").log") $(cat "$work/$(name "$cfg").pt.json" 2>/dev/null)"
    python3 eval_wordlm.py --model "$work/$(name "$cfg").pt" --text "$HELDOUT" >"$work/e-$(name "$cfg").json" 2>&1 &
done
wait
for cfg in $CONFIGS; do echo "$cfg $(cat "$work/e-$(name "$cfg").json")"; done
for cfg in $KEEP; do cp "$work/$(name "$cfg").pt" "$OUT/"; done
