#!/usr/bin/env bash
# Build the downloadable language packs and their manifest.
#
#   scripts/build-packs.sh [--url-base URL] [--out DIR] [--skip-fetch] [LANG...]
#
# LANG defaults to every language of data/languages.json that is not bundled
# (de fr es ru uk pl; English is committed in data/packs/ and built by
# `make pack`). For each: scripts/fetch-data.sh (pinned, SHA-256-checked
# downloads), scripts/prepare_data.py --lang LANG (-> .cache/prepared/LANG/,
# with dev.txt held out of corpus.txt), then
#   inkling pack build --prepared .cache/prepared/LANG -o OUT/LANG.inkpack
#       --language LANG --name NAME [build flags from data/languages.json]
# with, for a language whose entry has "neuralDim", the neural re-ranker that
# scripts/neural/train_pack.sh trains first (CPU; 3-65 minutes a language),
# checked against scripts/neural/golden-LANG.json where it exists (PACK_NEURAL=0: none),
# and finally OUT/manifest.json (packaging/make-manifest.py) listing every
# non-bundled pack present in OUT, with url = URL_BASE/LANG.inkpack (empty
# without --url-base). OUT defaults to build/packs (not committed).
# The CLI is $INKLING (default .build/release/inkling: run `make build`).
# Packs over 12 MB are an error. Output is deterministic (same bytes on
# every run).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"

URL_BASE=""
OUT=build/packs
SKIP_FETCH=0
DATA_CACHE="${DATA_CACHE:-.cache/data}"
INKLING="${INKLING:-.build/release/inkling}"
PY=/usr/bin/python3
[ -x "$PY" ] || PY="$(command -v python3)"
MAX_BYTES=$((12 * 1024 * 1024))

die() { echo "build-packs: error: $*" >&2; exit 1; }
log() { echo "build-packs: $*" >&2; }

LANGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --url-base) URL_BASE="$2"; shift 2 ;;
        --url-base=*) URL_BASE="${1#*=}"; shift ;;
        --out) OUT="$2"; shift 2 ;;
        --skip-fetch) SKIP_FETCH=1; shift ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) LANGS+=("$1"); shift ;;
    esac
done

# lang_field CODE FIELD -> value from data/languages.json ("" if absent); "build" gives the flags.
lang_field() {
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
code, field = sys.argv[1], sys.argv[2]
for entry in json.load(open("data/languages.json", encoding="utf-8"))["languages"]:
    if entry["code"] == code:
        value = entry.get(field, "")
        print(" ".join(value) if isinstance(value, list) else value)
        break
else:
    sys.exit("build-packs: language %r is not in data/languages.json" % code)
EOF
}

ALL_LANGS=$("$PY" -c 'import json; print(" ".join(e["code"] for e in json.load(open("data/languages.json", encoding="utf-8"))["languages"] if not e.get("bundled")))')
if [ ${#LANGS[@]} -eq 0 ]; then read -r -a LANGS <<<"$ALL_LANGS"; fi

[ -x "$INKLING" ] || die "$INKLING not found: build the CLI first (make build), or set INKLING"
mkdir -p "$OUT"

if [ "$SKIP_FETCH" = 0 ]; then
    bash scripts/fetch-data.sh "$DATA_CACHE"
fi

for lang in "${LANGS[@]}"; do
    name="$(lang_field "$lang" name)"
    [ -n "$name" ] || die "no name for $lang"
    [ "$(lang_field "$lang" bundled)" != "True" ] || die "$lang is bundled (data/packs): use 'make pack'"
    read -r -a flags <<<"$(lang_field "$lang" build)"
    log "$lang ($name): prepare"
    "$PY" scripts/prepare_data.py --cache "$DATA_CACHE" --lang "$lang" --out ".cache/prepared/$lang" >/dev/null
    # The neural re-ranker (issue 17) for a language whose entry has "neuralDim" (the word GRU's
    # size, chosen by held-out perplexity: scripts/neural/README.md); PACK_NEURAL=0 skips it.
    dim="$(lang_field "$lang" neuralDim)"
    neural=()
    if [ -n "$dim" ] && [ "${PACK_NEURAL:-1}" = 1 ]; then
        golden="scripts/neural/golden-$lang.json"
        [ -f "$golden" ] || golden=""
        log "$lang ($name): neural re-ranker (scripts/neural/train_pack.sh, GRU dimension $dim)"
        # neuralSteps (with dropout, a small corpus trains past the default cap of 8 passes)
        # replaces both the default 14,000 steps and that cap; neuralDropout defaults to 0.
        steps="$(lang_field "$lang" neuralSteps)"
        NEURAL_GRU_DIM="$dim" NEURAL_GRU_DROPOUT="$(lang_field "$lang" neuralDropout)" \
            NEURAL_HOLDOUT_EVERY="$(lang_field "$lang" neuralHoldoutEvery)" \
            NEURAL_GRU_VOCAB="$(lang_field "$lang" neuralVocab)" \
            NEURAL_GRU_PUNCTUATION="$([ "$(lang_field "$lang" neuralPunctuation)" = True ] && echo 1 || echo 0)" \
            NEURAL_GRU_STEPS="$steps" NEURAL_GRU_EPOCHS="${steps:+0}" NEURAL_PACK_FLAGS="--language $lang --name $name ${flags[*]:-}" INKLING="$(realpath "$INKLING")" \
            bash scripts/neural/train_pack.sh ".cache/prepared/$lang" ".cache/nn/$lang" ${golden:+"$golden"}
        neural=(--word-model ".cache/nn/$lang/wordlm.ngru" --reranker-network ".cache/nn/$lang/reranker.nrrk")
    fi
    log "$lang ($name): pack build ${flags[*]:-} ${neural[*]:-}"
    "$INKLING" pack build --prepared ".cache/prepared/$lang" -o "$OUT/$lang.inkpack" \
        --language "$lang" --name "$name" "${flags[@]}" "${neural[@]}" 2> >(grep -E 'vocabulary:|wrote' >&2)
    size=$(stat -c %s "$OUT/$lang.inkpack")
    [ "$size" -le "$MAX_BYTES" ] || die "$OUT/$lang.inkpack is $size bytes (> 12 MB): lower its --vocabulary, --char-table-bytes or neuralDim in data/languages.json"
done

# Manifest: every non-bundled pack present in OUT.
MIN_ENGINE="0.1.0"
if command -v dpkg-parsechangelog >/dev/null && [ -f packaging/changelog ]; then
    v="$(dpkg-parsechangelog -l packaging/changelog -S Version)"
    MIN_ENGINE="${v%-*}"
fi
PACKS=()
for lang in $ALL_LANGS; do
    [ -f "$OUT/$lang.inkpack" ] && PACKS+=("$OUT/$lang.inkpack")
done
"$PY" packaging/make-manifest.py --inkling "$INKLING" --min-engine-version "$MIN_ENGINE" \
    --url-base "$URL_BASE" "$OUT/manifest.json" "${PACKS[@]}"
log "wrote $OUT/manifest.json (${#PACKS[@]} packs, minimum engine $MIN_ENGINE)"
ls -l "${PACKS[@]}" >&2
