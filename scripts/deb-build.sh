#!/bin/bash
# Builds build/ibus-inkling_<version>_<arch>.deb from an existing release build.
#
#   scripts/deb-build.sh            (make deb: after `swift build -c release --static-swift-stdlib`)
#
# Environment: BIN_DIR (default .build/release: inkling, ibus-engine-inkling, optional
# inkling-cloud), OUT_DIR (default build), COMPONENT_TEMPLATE (default ibus-component/inkling.xml.in).
# The version comes from packaging/changelog; Depends from dpkg-shlibdeps, plus ibus.
# Layout and reasons: packaging/README.md.
set -euo pipefail

cd "$(dirname "$0")/.."
BIN_DIR=${BIN_DIR:-.build/release}
OUT_DIR=${OUT_DIR:-build}
TEMPLATE=${COMPONENT_TEMPLATE:-ibus-component/inkling.xml.in}
PACKAGE=ibus-inkling
ENGINE_PATH=/usr/libexec/ibus-engine-inkling
SETUP_PATH=/usr/bin/inkling-setup
APP_ID=org.freedesktop.ibus.engine.inkling
# The project's home page (Homepage:, the AppStream <url>); one place to change it.
HOMEPAGE=${HOMEPAGE:-https://inkling.a-seed-443b08b3.example/}

die() { echo "deb-build: $*" >&2; exit 1; }
for tool in dpkg-deb dpkg-shlibdeps dpkg-parsechangelog strip gzip python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (run 'make deps')"
done
[ -x "$BIN_DIR/inkling" ] || die "$BIN_DIR/inkling not found: build first (make build)"
[ -x "$BIN_DIR/ibus-engine-inkling" ] || die "$BIN_DIR/ibus-engine-inkling not found: build first (make build)"
[ -f "$TEMPLATE" ] || die "component template $TEMPLATE not found"
[ -f data/packs/en.inkpack ] || die "data/packs/en.inkpack not found"

VERSION=$(dpkg-parsechangelog -l packaging/changelog -S Version)
UPSTREAM_VERSION=${VERSION%-*}
ARCH=$(dpkg --print-architecture)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l packaging/changelog -S Timestamp)}

umask 022
mkdir -p "$OUT_DIR"
OUT_DIR=$(realpath "$OUT_DIR")
STAGE=$OUT_DIR/deb-stage
ROOT=$STAGE/root
rm -rf "$STAGE"
mkdir -p "$ROOT/DEBIAN"

# --- programs: stripped like dh_strip does -----------------------------------------------------
install_binary() { # SOURCE DEST
    install -D -m 0755 "$1" "$ROOT$2"
    strip --remove-section=.comment --remove-section=.note --strip-unneeded "$ROOT$2"
}
install_binary "$BIN_DIR/ibus-engine-inkling" "$ENGINE_PATH"
install_binary "$BIN_DIR/inkling" /usr/bin/inkling
if [ -x "$BIN_DIR/inkling-setup" ]; then
    install_binary "$BIN_DIR/inkling-setup" "$SETUP_PATH"
fi
if [ -x "$BIN_DIR/inkling-cloud" ]; then
    install_binary "$BIN_DIR/inkling-cloud" /usr/libexec/inkling-cloud
fi
# The dictation helper (issue 16); its speech model is the pocketsphinx-en-us package.
if [ -x "$BIN_DIR/inkling-dictate" ]; then
    install_binary "$BIN_DIR/inkling-dictate" /usr/libexec/inkling-dictate
fi

engine_version=$("$ROOT$ENGINE_PATH" --version 2>/dev/null | grep -Eo '[0-9]+(\.[0-9]+)+' | head -1 || true)
if [ -n "$engine_version" ] && [ "$engine_version" != "$UPSTREAM_VERSION" ]; then
    echo "deb-build: warning: the engine says version $engine_version, packaging/changelog $UPSTREAM_VERSION" >&2
fi

# --- IBus component ----------------------------------------------------------------------------
install -d "$ROOT/usr/share/ibus/component"
sed -e "s|@EXEC@|$ENGINE_PATH|g" -e "s|@SETUP@|$SETUP_PATH|g" "$TEMPLATE" >"$ROOT/usr/share/ibus/component/inkling.xml"
if grep -q '@[A-Z_]*@' "$ROOT/usr/share/ibus/component/inkling.xml"; then
    die "unfilled placeholder in $TEMPLATE: $(grep -o '@[A-Z_]*@' "$ROOT/usr/share/ibus/component/inkling.xml" | sort -u | tr '\n' ' ')"
fi
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' \
    "$ROOT/usr/share/ibus/component/inkling.xml" || die "the component XML is not well-formed"

# --- language pack and manifest ----------------------------------------------------------------
install -D -m 0644 data/packs/en.inkpack "$ROOT/usr/share/inkling/packs/en.inkpack"
python3 packaging/make-manifest.py --inkling "$ROOT/usr/bin/inkling" --min-engine-version "$UPSTREAM_VERSION" \
    "$ROOT/usr/share/inkling/manifest.json" "$ROOT/usr/share/inkling/packs/en.inkpack"

# --- Translations (po/*.po → /usr/share/locale/<lang>/LC_MESSAGES/inkling.mo, the text domain) -----
command -v msgfmt >/dev/null || die "msgfmt not found (apt install gettext)"
bash po/build.sh "$ROOT/usr/share/locale"
find "$ROOT/usr/share/locale" -type f -exec chmod 0644 {} +

# --- GSettings schema (compiled by the libglib2.0-0 trigger on /usr/share/glib-2.0/schemas) -----
SCHEMA=data/gschema/org.freedesktop.ibus.engine.inkling.gschema.xml
if command -v glib-compile-schemas >/dev/null; then
    check_dir=$(mktemp -d)
    cp "$SCHEMA" "$check_dir/"
    glib-compile-schemas --strict --dry-run "$check_dir" || { rm -rf "$check_dir"; die "$SCHEMA does not compile"; }
    rm -rf "$check_dir"
fi
install -D -m 0644 "$SCHEMA" "$ROOT/usr/share/glib-2.0/schemas/$(basename "$SCHEMA")"

# --- the settings app's desktop file, the icon, the AppStream metainfo ---------------------------
install -D -m 0644 "data/icons/$APP_ID.svg" "$ROOT/usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"
install -D -m 0644 "data/desktop/$APP_ID.Setup.desktop" "$ROOT/usr/share/applications/$APP_ID.Setup.desktop"
# GNOME Settings' Preferences button for an IBus source opens ibus-setup-<engine>.desktop (it never
# reads the component's <setup>): without this file the button does nothing.
install -D -m 0644 data/desktop/ibus-setup-inkling.desktop "$ROOT/usr/share/applications/ibus-setup-inkling.desktop"
install -d "$ROOT/usr/share/metainfo"
sed "s|@HOMEPAGE@|$HOMEPAGE|g" "data/metainfo/$APP_ID.metainfo.xml" >"$ROOT/usr/share/metainfo/$APP_ID.metainfo.xml"
if command -v appstreamcli >/dev/null; then
    appstreamcli validate --no-net --pedantic "$ROOT/usr/share/metainfo/$APP_ID.metainfo.xml" >"$STAGE/appstream.log" 2>&1 ||
        { cat "$STAGE/appstream.log" >&2; die "the AppStream metainfo does not validate"; }
fi

# --- documentation -----------------------------------------------------------------------------
DOC=$ROOT/usr/share/doc/$PACKAGE
install -D -m 0644 packaging/copyright "$DOC/copyright"
gzip -9n -c packaging/changelog >"$DOC/changelog.Debian.gz"
install -D -m 0644 packaging/lintian-overrides "$ROOT/usr/share/lintian/overrides/$PACKAGE"
install -d "$ROOT/usr/share/man/man1"
gzip -9n -c packaging/inkling.1 >"$ROOT/usr/share/man/man1/inkling.1.gz"
gzip -9n -c packaging/inkling-setup.1 >"$ROOT/usr/share/man/man1/inkling-setup.1.gz"
chmod 0644 "$DOC/changelog.Debian.gz" "$ROOT/usr/share/man/man1/inkling.1.gz" "$ROOT/usr/share/man/man1/inkling-setup.1.gz"

# --- control ----------------------------------------------------------------------------------
# dpkg-shlibdeps wants a debian/control naming the package; give it a minimal one.
mkdir -p "$STAGE/src/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: %s\n' "$PACKAGE" "$PACKAGE" "$ARCH" >"$STAGE/src/debian/control"
binaries=()
for f in "$ROOT"/usr/bin/* "$ROOT"/usr/libexec/*; do binaries+=("-e$f"); done
shlibs=$(cd "$STAGE/src" && dpkg-shlibdeps -O "${binaries[@]}" 2>"$STAGE/shlibdeps.log" | sed -n 's/^shlibs:Depends=//p') ||
    { cat "$STAGE/shlibdeps.log" >&2; die "dpkg-shlibdeps failed"; }
[ -n "$shlibs" ] || { cat "$STAGE/shlibdeps.log" >&2; die "dpkg-shlibdeps found no dependencies"; }
DEPENDS="$shlibs, ibus"
if [ -x "$ROOT/usr/libexec/inkling-dictate" ]; then DEPENDS="$DEPENDS, pocketsphinx-en-us"; fi

find "$ROOT" -type d -exec chmod 0755 {} +
find "$ROOT" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
# Installed-Size as dpkg-gencontrol counts it: KiB per file (rounded up), 1 per directory or link.
INSTALLED_SIZE=$(cd "$ROOT" && find usr \( -type f -printf '%s\n' \) -o \( ! -type f -printf '1024\n' \) |
    awk '{ total += int(($1 + 1023) / 1024) } END { print total }')
sed -e "s|@VERSION@|$VERSION|" -e "s|@INSTALLED_SIZE@|$INSTALLED_SIZE|" -e "s|@DEPENDS@|$DEPENDS|" -e "s|@HOMEPAGE@|$HOMEPAGE|" \
    packaging/control.in >"$ROOT/DEBIAN/control"
(cd "$ROOT" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums"
touch -d "@$SOURCE_DATE_EPOCH" "$ROOT/DEBIAN" "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums"
# No maintainer scripts: the schema is compiled by glib's file trigger and IBus notices new
# components by itself (packaging/README.md).

rm -f "$OUT_DIR/${PACKAGE}"_*.deb
DEB=$OUT_DIR/${PACKAGE}_${VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DEB" >/dev/null
rm -rf "$STAGE"
echo "deb-build: $DEB"
echo "deb-build: Depends: $DEPENDS"
