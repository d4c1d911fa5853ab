#!/bin/bash
# Clean-room install test for the Inkling .deb.
#
#   scripts/cleanroom-test.sh [path/to/ibus-inkling_VERSION_amd64.deb]
#
# 1. debootstraps a minimal Debian 12 root (--variant=minbase) into .cache/cleanroom/bookworm-minbase,
#    once; later runs reuse it (and the downloaded .debs in .cache/cleanroom/apt-archives);
# 2. makes a throw-away copy of it (overlayfs, or cp -a where overlayfs is unavailable);
# 3. installs the .deb there with `apt-get install ./ibus-inkling_*.deb` (only what the package's
#    Depends pull in, so a missing dependency fails here) and checks the installed files, the
#    compiled GSettings schema (the glib trigger) and the CLI;
# 4. installs python3-gi + gir1.2-ibus-1.0 (test only), starts a private headless ibus-daemon in the
#    root, checks `ibus list-engine` lists inkling, and types a word through a real IBus client
#    (packaging/tests/ibus_client.py): it must get a lookup table and a commit;
# 5. runs the desktop steps of `make install` (scripts/enable-inkling.sh) headless, then against a
#    simulated desktop user (session bus, dconf, the user's ibus-daemon: packaging/tests/
#    desktop_session_test.sh);
# 6. uninstalls as `make uninstall` does and checks nothing of the package is left.
#
# Needs root (chroot, mounts). Environment: CLEANROOM_CACHE (cache folder), CLEANROOM_MIRROR
# (Debian mirror; default: the first bookworm one in /etc/apt/sources.list{,.d}),
# CLEANROOM_RECOMMENDS=1 (install Recommends too, as a default apt does), CLEANROOM_KEEP=1 (keep
# the throw-away root for inspection). Prints `N passed, N failed` and exits non-zero on failure.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$PWD
SUITE=bookworm
CACHE=${CLEANROOM_CACHE:-$REPO/.cache/cleanroom}
BASE=$CACHE/$SUITE-minbase
ARCHIVES=$CACHE/apt-archives
LISTS=$CACHE/apt-lists
WORK=$CACHE/run
ROOT=$WORK/root
START=$(date +%s)

log() { printf '[cleanroom %4ds] %s\n' "$(($(date +%s) - START))" "$*"; }
die() { log "ERROR: $*"; exit 1; }


# The first Debian mirror the host uses for a suite ("bookworm" or "bookworm-security"), read from
# the machine's own apt sources (APT_ETC, default /etc/apt): the repository names no archive host.
APT_ETC=${APT_ETC:-/etc/apt}
host_mirror() {
    local want=$1 f
    for f in "$APT_ETC"/sources.list "$APT_ETC"/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        awk -v s="$want" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                           if ($(i + 1) == s) { print $i; exit } }' "$f"
    done
    for f in "$APT_ETC"/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v s="$want" 'BEGIN { RS = ""; FS = "\n" }
            { uri = ""; ok = 0; deb = 0
              for (j = 1; j <= NF; j++) {
                  if ($j ~ /^URIs:/) { split($j, a, /[ \t]+/); uri = a[2] }
                  if ($j ~ /^Types:/ && $j ~ /[ \t]deb([ \t]|$)/) deb = 1
                  if ($j ~ /^Suites:/) { n = split($j, b, /[ \t]+/); for (k = 2; k <= n; k++) if (b[k] == s) ok = 1 }
              }
              if (ok && deb && uri != "") { print uri; exit } }' "$f"
    done
}
MIRROR=${CLEANROOM_MIRROR:-$(host_mirror $SUITE | head -1)}
SECURITY=$(host_mirror $SUITE-security | head -1)
if [ "${1:-}" = --print-mirrors ]; then
    printf 'mirror=%s\nsecurity=%s\n' "$MIRROR" "$SECURITY"
    exit 0
fi
[ -n "$MIRROR" ] || die "no $SUITE mirror in $APT_ETC/sources.list{,.d}; set CLEANROOM_MIRROR"
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, mounts)"
if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

DEB=${1:-}
if [ -z "$DEB" ]; then
    # The newest by time; the names are ours (ibus-inkling_<version>_amd64.deb), plain ASCII.
    # shellcheck disable=SC2012
    DEB=$(ls -t build/ibus-inkling_*_amd64.deb 2>/dev/null | head -1 || true)
fi
if [ -z "$DEB" ] || [ ! -f "$DEB" ]; then die "no .deb given and none in build/ (run 'make deb' first)"; fi
DEB=$(realpath "$DEB")

# --- mounts and cleanup -----------------------------------------------------------------------
MOUNTS=()
mount_add() { mount "$@"; MOUNTS+=("${@: -1}"); }
cleanup() {
    local status=$? pid root
    # Processes still running inside the throw-away root (a daemon, an engine): end them by id.
    for pid in /proc/[0-9]*; do
        pid=${pid#/proc/}
        root=$(readlink "/proc/$pid/root" 2>/dev/null || true)
        if [ -n "$root" ] && [ "$root" = "$ROOT" ]; then kill -9 "$pid" 2>/dev/null || true; fi
    done
    local i
    for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${MOUNTS[$i]}" 2>/dev/null || umount -l "${MOUNTS[$i]}" 2>/dev/null || true
    done
    if [ "${CLEANROOM_KEEP:-0}" != 1 ]; then rm -rf "$WORK"; fi
    exit $status
}
trap cleanup EXIT INT TERM

# --- 1. the cached minimal root ---------------------------------------------------------------
mkdir -p "$CACHE" "$ARCHIVES/partial" "$LISTS/partial"
if [ ! -f "$BASE/.inkling-complete" ]; then
    log "debootstrap --variant=minbase $SUITE from $MIRROR (first run; cached afterwards)"
    rm -rf "$BASE"
    debootstrap --variant=minbase --cache-dir="$ARCHIVES" $SUITE "$BASE" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
        { tail -20 "$CACHE/debootstrap.log"; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
    {
        echo "deb $MIRROR $SUITE main"
        echo "deb $MIRROR $SUITE-updates main"
        if [ -n "$SECURITY" ]; then echo "deb $SECURITY $SUITE-security main"; fi
    } >"$BASE/etc/apt/sources.list"
    # No services start inside the root.
    printf '#!/bin/sh\nexit 101\n' >"$BASE/usr/sbin/policy-rc.d"
    chmod 755 "$BASE/usr/sbin/policy-rc.d"
    # Keep downloaded packages (they live in the shared, bind-mounted archive cache).
    echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >"$BASE/etc/apt/apt.conf.d/90keep"
    rm -f "$BASE/etc/apt/apt.conf.d/docker-clean"
    touch "$BASE/.inkling-complete"
    log "base root ready ($(du -sh "$BASE" | cut -f1))"
else
    log "reusing cached base root $BASE"
fi

# --- 2. a throw-away copy ---------------------------------------------------------------------
rm -rf "$WORK"
mkdir -p "$WORK/upper" "$WORK/work" "$ROOT"
if mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$WORK/upper,workdir=$WORK/work" "$ROOT" 2>/dev/null; then
    MOUNTS+=("$ROOT")
    log "throw-away root: overlayfs on the base"
else
    cp -a "$BASE/." "$ROOT/"
    log "throw-away root: copy of the base"
fi
mount_add -t proc proc "$ROOT/proc"
mount_add --bind /dev "$ROOT/dev"
mount_add --bind /dev/pts "$ROOT/dev/pts"
mount_add -t tmpfs tmpfs "$ROOT/tmp"
mount_add --bind "$ARCHIVES" "$ROOT/var/cache/apt/archives"
mount_add --bind "$LISTS" "$ROOT/var/lib/apt/lists"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$ROOT/tmp/inkling"
cp "$DEB" "$ROOT/tmp/inkling/"
cp packaging/tests/ibus_client.py packaging/tests/desktop_session_test.sh scripts/enable-inkling.sh "$ROOT/tmp/inkling/"
DEBNAME=$(basename "$DEB")

in_root() {
    chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}

PASSED=0
FAILED=0
check() { # check NAME COMMAND...
    local name=$1
    shift
    if "$@"; then
        PASSED=$((PASSED + 1))
        log "PASS $name"
    else
        FAILED=$((FAILED + 1))
        log "FAIL $name"
    fi
}

APT_OPTS=(-y -q -o Dpkg::Use-Pty=0)
if [ "${CLEANROOM_RECOMMENDS:-0}" != 1 ]; then APT_OPTS+=(--no-install-recommends); fi

# --- 3. install the package -------------------------------------------------------------------
log "apt-get update"
in_root apt-get update -q >"$WORK/apt-update.log" 2>&1 || { cat "$WORK/apt-update.log"; die "apt-get update failed"; }
T0=$(date +%s)
install_deb() { in_root apt-get install "${APT_OPTS[@]}" "/tmp/inkling/$DEBNAME" >"$WORK/apt-install.log" 2>&1; }
check "apt-get install ./$DEBNAME (Depends resolve in a minimal bookworm)" install_deb
log "package installed in $(($(date +%s) - T0))s"
# shellcheck disable=SC2016  # ${Status} is dpkg-query's field, not a shell variable
if ! in_root dpkg-query -W -f='${Status}\n' ibus-inkling 2>/dev/null | grep -q "install ok installed"; then
    tail -30 "$WORK/apt-install.log"
    die "ibus-inkling is not installed"
fi

installed_files() {
    local f
    for f in /usr/libexec/ibus-engine-inkling /usr/bin/inkling /usr/share/ibus/component/inkling.xml \
        /usr/share/inkling/packs/en.inkpack /usr/share/inkling/manifest.json \
        /usr/share/glib-2.0/schemas/org.freedesktop.ibus.engine.inkling.gschema.xml \
        /usr/share/doc/ibus-inkling/copyright /usr/share/doc/ibus-inkling/changelog.Debian.gz \
        /usr/share/man/man1/inkling.1.gz; do
        [ -e "$ROOT$f" ] || { echo "missing $f"; return 1; }
    done
}
check "installed files in place" installed_files
check "engine and CLI load (all shared libraries found)" \
    in_root sh -c '! ldd /usr/libexec/ibus-engine-inkling /usr/bin/inkling | grep -q "not found"'
check "component XML points at /usr/libexec/ibus-engine-inkling" \
    grep -q '<exec>/usr/libexec/ibus-engine-inkling' "$ROOT/usr/share/ibus/component/inkling.xml"
check "GSettings schema compiled by the glib trigger" \
    grep -q 'org.freedesktop.ibus.engine.inkling' "$ROOT/usr/share/glib-2.0/schemas/gschemas.compiled"
check "inkling config list reads the installed schema" \
    in_root sh -c 'GSETTINGS_BACKEND=memory inkling config list | grep -q "^page-size "'
# shellcheck disable=SC2016  # expanded by the shell inside the root, not here
check "inkling suggest finds the installed pack" \
    in_root sh -c 'test -n "$(inkling suggest "thank")"'

# --- 4. a real IBus, headless -----------------------------------------------------------------
log "installing the test client's packages (python3-gi, gir1.2-ibus-1.0)"
T0=$(date +%s)
in_root apt-get install "${APT_OPTS[@]}" python3-gi gir1.2-ibus-1.0 >"$WORK/apt-client.log" 2>&1 ||
    { tail -20 "$WORK/apt-client.log"; die "could not install the test client"; }
log "client packages installed in $(($(date +%s) - T0))s"

check "ibus list-engine shows inkling and a real client types through it (prediction + commit)" \
    in_root /usr/bin/python3 /tmp/inkling/ibus_client.py --daemon --list-engine

# --- 5. the desktop steps of make install / make uninstall -----------------------------------
log "installing a simulated desktop session's packages (procps, dbus, dconf, gsettings-desktop-schemas)"
T0=$(date +%s)
in_root apt-get install "${APT_OPTS[@]}" procps dbus dconf-gsettings-backend gsettings-desktop-schemas \
    libglib2.0-bin >"$WORK/apt-desktop.log" 2>&1 ||
    { tail -20 "$WORK/apt-desktop.log"; die "could not install the desktop session packages"; }
log "desktop session packages installed in $(($(date +%s) - T0))s"
check "enable-inkling.sh: skipped headless; with a desktop user restarts IBus and edits the input sources" \
    in_root bash /tmp/inkling/desktop_session_test.sh /tmp/inkling/enable-inkling.sh

# --- 6. removal (as make uninstall does it) leaves nothing -------------------------------------
check "enable-inkling.sh uninstall (apt-get purge ibus-inkling)" \
    sh -c "chroot '$ROOT' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root DEBIAN_FRONTEND=noninteractive \
        bash /tmp/inkling/enable-inkling.sh uninstall >'$WORK/uninstall.log' 2>&1"
nothing_left() {
    local f left=0
    for f in /usr/libexec/ibus-engine-inkling /usr/bin/inkling /usr/share/ibus/component/inkling.xml \
        /usr/share/inkling /usr/share/glib-2.0/schemas/org.freedesktop.ibus.engine.inkling.gschema.xml \
        /usr/share/doc/ibus-inkling /usr/share/man/man1/inkling.1.gz; do
        if [ -e "$ROOT$f" ]; then echo "left behind: $f"; left=1; fi
    done
    if grep -q 'org.freedesktop.ibus.engine.inkling' "$ROOT/usr/share/glib-2.0/schemas/gschemas.compiled"; then
        echo "schema still compiled in gschemas.compiled"
        left=1
    fi
    return $left
}
check "nothing left after purge" nothing_left

log "done in $(($(date +%s) - START))s"
echo "cleanroom: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
