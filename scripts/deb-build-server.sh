#!/bin/bash
# Builds build/inkling-server_<version>_<arch>.deb from an existing release build.
#
#   scripts/deb-build-server.sh     (make deb-server: after `swift build -c release --static-swift-stdlib`)
#
# Environment: BIN_DIR (default .build/release), OUT_DIR (default build). The version comes from
# packaging/changelog (the same as ibus-inkling's); Depends from dpkg-shlibdeps.
# Contents: /usr/bin/inkling-server, the hardened systemd unit, /etc/inkling/server.conf
# (a conffile), docs. No maintainer scripts: the service is enabled by the administrator once
# the upstream is configured (README, "Run your own Inkling Server").
set -euo pipefail

cd "$(dirname "$0")/.."
BIN_DIR=${BIN_DIR:-.build/release}
OUT_DIR=${OUT_DIR:-build}
PACKAGE=inkling-server

die() { echo "deb-build-server: $*" >&2; exit 1; }
for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip gzip; do
    command -v "$tool" >/dev/null || die "$tool is missing (run 'make deps')"
done
[ -x "$BIN_DIR/inkling-server" ] || die "$BIN_DIR/inkling-server not found: build first (make build)"

VERSION=$(dpkg-parsechangelog -l packaging/changelog -S Version)
ARCH=$(dpkg --print-architecture)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l packaging/changelog -S Timestamp)}

umask 022
mkdir -p "$OUT_DIR"
OUT_DIR=$(realpath "$OUT_DIR")
STAGE=$OUT_DIR/deb-stage-server
ROOT=$STAGE/root
rm -rf "$STAGE"
mkdir -p "$ROOT/DEBIAN"

install -D -m 0755 "$BIN_DIR/inkling-server" "$ROOT/usr/bin/inkling-server"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$ROOT/usr/bin/inkling-server"
install -D -m 0644 packaging/server/inkling-server.service "$ROOT/lib/systemd/system/inkling-server.service"
install -D -m 0644 packaging/server/server.conf "$ROOT/etc/inkling/server.conf"
DOC=$ROOT/usr/share/doc/$PACKAGE
install -D -m 0644 packaging/copyright "$DOC/copyright"
install -D -m 0644 packaging/server/README.server "$DOC/README.server"
gzip -9n -c packaging/changelog >"$DOC/changelog.Debian.gz"
chmod 0644 "$DOC/changelog.Debian.gz"
install -D -m 0644 packaging/server/lintian-overrides "$ROOT/usr/share/lintian/overrides/$PACKAGE"

mkdir -p "$STAGE/src/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: %s\n' "$PACKAGE" "$PACKAGE" "$ARCH" >"$STAGE/src/debian/control"
DEPENDS=$(cd "$STAGE/src" && dpkg-shlibdeps -O "-e$ROOT/usr/bin/inkling-server" 2>"$STAGE/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p') ||
    { cat "$STAGE/shlibdeps.log" >&2; die "dpkg-shlibdeps failed"; }
[ -n "$DEPENDS" ] || { cat "$STAGE/shlibdeps.log" >&2; die "dpkg-shlibdeps found no dependencies"; }

find "$ROOT" -type d -exec chmod 0755 {} +
find "$ROOT" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
INSTALLED_SIZE=$(cd "$ROOT" && find etc lib usr \( -type f -printf '%s\n' \) -o \( ! -type f -printf '1024\n' \) |
    awk '{ total += int(($1 + 1023) / 1024) } END { print total }')
sed -e "s|@VERSION@|$VERSION|" -e "s|@INSTALLED_SIZE@|$INSTALLED_SIZE|" -e "s|@DEPENDS@|$DEPENDS|" \
    packaging/server/control.in >"$ROOT/DEBIAN/control"
echo /etc/inkling/server.conf >"$ROOT/DEBIAN/conffiles"
(cd "$ROOT" && find lib usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums" "$ROOT/DEBIAN/conffiles"
touch -d "@$SOURCE_DATE_EPOCH" "$ROOT/DEBIAN" "$ROOT/DEBIAN/"*

rm -f "$OUT_DIR/${PACKAGE}"_*.deb
DEB=$OUT_DIR/${PACKAGE}_${VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null
rm -rf "$STAGE"
echo "deb-build-server: $DEB"
echo "deb-build-server: Depends: $DEPENDS"
