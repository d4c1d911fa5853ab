#!/bin/bash
# Trains the neural re-ranker of a language pack (issue 17) and writes its two pack sections,
# for `inkling pack build --word-model WORK/wordlm.ngru --reranker-network WORK/reranker.nrrk`.
#
# 1. Every 50th document of the prepared corpus (NEURAL_HOLDOUT_EVERY) is held out.
# 2. A word GRU (train_wordlm.py) learns the held-out-free corpus for a fixed number of steps.
# 3. The predictor's window with its features is dumped for every prefix of the held-out words,
#    from a pack built without the held-out documents, with the GRU and a neutral window network:
#    the window then holds the GRU's likely next words as the engine's does
#    (PredictorOptions.nextWordProposals).
# 4. The window MLP (train_reranker.py --lm) learns to re-order it with the GRU's score.
# 5. Both are exported as int8 sections; their SHA-256 is compared with GOLDEN (if it exists),
#    and the weights' summary with a tolerance (same seeds, threads and PyTorch: same bytes).
# CPU only, one thread per process, seed 17, deterministic algorithms; PyTorch pinned in
# requirements.txt. Usage: train_pack.sh PREPARED_DIR WORK_DIR [GOLDEN.json]
# Scale (defaults: the shipped English model): NEURAL_GRU_STEPS, NEURAL_GRU_EPOCHS (at most this
# many passes over the corpus: fewer steps for a small one; 0: no cap), NEURAL_GRU_DIM,
# NEURAL_GRU_VOCAB, NEURAL_GRU_DROPOUT (0: none, English's; a small corpus overfits without it),
# NEURAL_GRU_DECAY, NEURAL_GRU_PUNCTUATION, NEURAL_DUMP_WORDS, NEURAL_EPOCHS (the window network's), NEURAL_HOLDOUT_EVERY.
# NEURAL_PACK_FLAGS: more `inkling pack build` flags for the held-out-free pack (another
# language's, from build-packs.sh). NEURAL_REUSE_GRU=1: keep WORK/wordgru.pt if it is there (the
# same corpus and settings give the same GRU: after a change to the predictor, only the dumps and
# the window network need to be made again).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# Absolute paths: the training steps run from scripts/neural.
PREPARED=$(cd "$1" && pwd)
WORK=$(mkdir -p "$2" && cd "$2" && pwd)
GOLDEN=${3:+$(cd "$(dirname "$3")" && pwd)/$(basename "$3")}
STEPS=${NEURAL_GRU_STEPS:-14000}
# The learning rate falls linearly to this fraction of its first value by the last step
# (held-out perplexity 355 with 4,000 steps at a constant rate; with the decay 312 after 6,000,
# 265 after 10,000, 255 after 14,000, 245 after 18,000: scripts/neural/sweep_wordlm_gpu.sh).
DECAY=${NEURAL_GRU_DECAY:-0.05}
# English: 14,000 steps are 7.7 passes; 8 passes cap a smaller corpus (Spanish: 2,448 steps).
# A language with its own step count (neuralSteps: German, Russian) passes 0: no cap.
GRU_EPOCHS=${NEURAL_GRU_EPOCHS:-8}
DIM=${NEURAL_GRU_DIM:-128}
# The GRU's vocabulary: the corpus's most frequent words (others are one unknown word). An
# inflected language has many more forms (unknown: 18 % of Russian's tokens at 10,000).
VOCAB=${NEURAL_GRU_VOCAB:-10000}
DROPOUT=${NEURAL_GRU_DROPOUT:-0}
# 1: the GRU reads the punctuation between words as tokens (train_wordlm.py --punctuation:
# sentence end, question, exclamation, comma, colon), so it knows where a sentence or clause
# ended; the predictor gives them when the pack's GRU has them. 0 (default): words only.
PUNCTUATION=${NEURAL_GRU_PUNCTUATION:-0}
# With punctuation, 0: no loss on the punctuation tokens (read, never predicted).
PUNCTUATION_LOSS=${NEURAL_GRU_PUNCTUATION_LOSS:-1}
WORDS=${NEURAL_DUMP_WORDS:-40000}
EPOCHS=${NEURAL_EPOCHS:-10}
# The window network learns from the held-out documents only (the GRU must not have seen them):
# a small corpus holds out more (neuralHoldoutEvery) so the network has enough queries.
HOLDOUT_EVERY=${NEURAL_HOLDOUT_EVERY:-50}
VENV=${NEURAL_VENV:-$ROOT/.cache/torch-venv}
INKLING=${INKLING:-$ROOT/.build/release/inkling}
mkdir -p "$WORK/prepared"
[ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -r "$ROOT/scripts/neural/requirements.txt"; }
for f in bigrams.tsv case.tsv hunspell.txt wordfreq.tsv; do
    [ -f "$PREPARED/$f" ] && cp "$PREPARED/$f" "$WORK/prepared/"
done
awk -v held="$WORK/heldout.txt" -v kept="$WORK/prepared/corpus.txt" -v every="$HOLDOUT_EVERY" \
    'NR % every == 7 % every { print > held; next } { print > kept }' "$PREPARED/corpus.txt"
read -r -a pack_flags <<<"${NEURAL_PACK_FLAGS:-}"
cd "$ROOT/scripts/neural"
punctuation_flags=()
if [ "$PUNCTUATION" = 1 ]; then
    punctuation_flags+=(--punctuation)
    [ "$PUNCTUATION_LOSS" = 1 ] || punctuation_flags+=(--no-punctuation-loss)
fi
if [ "${NEURAL_REUSE_GRU:-0}" = 1 ] && [ -f "$WORK/wordgru.pt" ]; then
    echo "train_pack: keeping $WORK/wordgru.pt (NEURAL_REUSE_GRU=1)" >&2
else
    # --case-reachable: no loss for a lower-case first word after <s> (corpus fragments; issue 17).
    "$VENV/bin/python" train_wordlm.py --case-reachable --corpus "$WORK/prepared/corpus.txt" --out "$WORK/wordgru.pt" \
        --max-steps "$STEPS" --decay-to "$DECAY" --minutes 1e9 --max-epochs "$GRU_EPOCHS" --dim "$DIM" --vocab "$VOCAB" --dropout "$DROPOUT" \
        "${punctuation_flags[@]}" >"$WORK/wordlm.log"
fi
# The dumps need the GRU (its likely words join the next word's window): the held-out-free pack
# again, with the GRU and a window network that changes no score.
"$VENV/bin/python" export_sections.py --wordlm "$WORK/wordgru.pt" --ngru "$WORK/wordlm.ngru" --neutral-nrrk "$WORK/neutral.nrrk"
"$INKLING" pack build --prepared "$WORK/prepared" -o "$WORK/dump.inkpack" "${pack_flags[@]}" \
    --word-model "$WORK/wordlm.ngru" --reranker-network "$WORK/neutral.nrrk" 2>"$WORK/packbuild.log"
half=$(( ($(wc -l < "$WORK/heldout.txt") + 1) / 2 ))
head -n "$half" "$WORK/heldout.txt" > "$WORK/heldout-a.txt"
tail -n +"$((half + 1))" "$WORK/heldout.txt" > "$WORK/heldout-b.txt"
dumps=()
for part in a b; do
    python3 dump_candidates.py --inkling "$INKLING" --pack "$WORK/dump.inkpack" \
        --text "$WORK/heldout-$part.txt" --out "$WORK/feat-dump-$part.jsonl" --max-words "$((WORDS / 2))" --features &
    dumps+=($!)
done
for pid in "${dumps[@]}"; do wait "$pid"; done
# --next-window 40: the dictionary's 32 and up to 8 of the GRU's likely words.
"$VENV/bin/python" train_reranker.py --dump "$WORK/feat-dump-a.jsonl" --dump "$WORK/feat-dump-b.jsonl:100000" \
    --epochs "$EPOCHS" --lm "$WORK/wordgru.pt" --next-window 40 --out "$WORK/reranker.pt" >"$WORK/reranker.log"
tail -n 1 "$WORK/reranker.log"
"$VENV/bin/python" export_sections.py --wordlm "$WORK/wordgru.pt" --ngru "$WORK/wordlm.ngru" \
    --reranker "$WORK/reranker.pt" --nrrk "$WORK/reranker.nrrk" --summary "$WORK/summary.json" \
    ${GOLDEN:+--golden "$GOLDEN"}
