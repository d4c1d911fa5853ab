#!/usr/bin/env bash
# typesim (K = 3) on each language's own held-out dev text, one markdown table.
#
#   scripts/bench-languages.sh [--max-words N] [--packs DIR] [LANG...]
#
# For each LANG (default: the non-bundled languages of data/languages.json)
# runs BENCH/typesim.py with
#   inkling predict --stdio --pack DIR/LANG.inkpack
# on .cache/prepared/LANG/dev.txt (written by scripts/prepare_data.py, never
# trained on), capped at --max-words (default 8000). Needs the packs
# (scripts/build-packs.sh) and the CLI ($INKLING, default .build/release/inkling).
# BENCH (default ../shared/bench) is where typesim.py lives.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
BENCH="${BENCH:-$(cd "$REPO_ROOT/.." && pwd)/shared/bench}"
INKLING="${INKLING:-.build/release/inkling}"
PACKS=build/packs
MAX_WORDS=8000
PY=/usr/bin/python3
[ -x "$PY" ] || PY="$(command -v python3)"

LANGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --max-words) MAX_WORDS="$2"; shift 2 ;;
        --packs) PACKS="$2"; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        -*) echo "bench-languages: unknown option $1" >&2; exit 1 ;;
        *) LANGS+=("$1"); shift ;;
    esac
done
if [ ${#LANGS[@]} -eq 0 ]; then
    read -r -a LANGS <<<"$("$PY" -c 'import json; print(" ".join(e["code"] for e in json.load(open("data/languages.json", encoding="utf-8"))["languages"] if not e.get("bundled")))')"
fi
[ -x "$INKLING" ] || { echo "bench-languages: $INKLING not found (make build, or set INKLING)" >&2; exit 1; }
[ -f "$BENCH/typesim.py" ] || { echo "bench-languages: $BENCH/typesim.py not found (set BENCH)" >&2; exit 1; }

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
INKLING_ABS="$(cd "$(dirname "$INKLING")" && pwd)/$(basename "$INKLING")"
for lang in "${LANGS[@]}"; do
    pack="$PACKS/$lang.inkpack"
    dev=".cache/prepared/$lang/dev.txt"
    [ -f "$pack" ] || { echo "bench-languages: $pack missing (scripts/build-packs.sh $lang)" >&2; exit 1; }
    [ -f "$dev" ] || { echo "bench-languages: $dev missing (scripts/prepare_data.py --lang $lang)" >&2; exit 1; }
    echo "bench-languages: $lang" >&2
    "$PY" "$BENCH/typesim.py" --predictor "$INKLING_ABS predict --stdio --pack $pack" \
        --text "$dev" -k 3 --max-words "$MAX_WORDS" --json "$TMP/$lang.json" >/dev/null
done

"$PY" - "$TMP" "${LANGS[@]}" <<'EOF'
import json, os, sys
tmp, langs = sys.argv[1], sys.argv[2:]
names = {e["code"]: e["name"] for e in json.load(open("data/languages.json", encoding="utf-8"))["languages"]}
print("| language | words | KSS | WPR | next-word top-3 | p99 latency | RSS |")
print("|---|---:|---:|---:|---:|---:|---:|")
for lang in langs:
    j = json.load(open(os.path.join(tmp, lang + ".json")))
    words = j.get("words", j.get("n_words", "?"))
    print(f"| {lang} ({names.get(lang, lang)}) | {words} | {100 * j['kss']:.1f}% | {100 * j['wpr']:.1f}% "
          f"| {100 * j['next_word']['topk_acc']:.1f}% | {j['latency_ms']['p99']:.2f} ms "
          f"| {j['rss_peak_kib'] / 1024:.0f} MiB |")
EOF
