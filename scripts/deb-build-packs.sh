#!/bin/bash
# Builds one `Architecture: all` .deb per downloadable language pack (inkling-lang-de, …), so a
# language can be installed, verified (dpkg --verify) and removed with apt as well as downloaded.
#
#   scripts/deb-build-packs.sh [PACKS_DIR]     (make packs runs it; default build/packs)
#
# Reads PACKS_DIR/manifest.json and PACKS_DIR/<lang>.inkpack (scripts/build-packs.sh) and writes
# PACKS_DIR/debs/inkling-lang-<lang>_<version>_all.deb holding
#   /usr/share/inkling/packs/<lang>.inkpack       the pack (the folder of the bundled English pack)
#   /usr/share/inkling/manifests/<lang>.json      its manifest entry (url empty: nothing to fetch),
#                                                 against which engine and CLI check size and SHA-256
# The package version is the Inkling release's (packaging/changelog) with the pack's own version.
set -euo pipefail

cd "$(dirname "$0")/.."
PACKS_DIR=${1:-build/packs}
die() { echo "deb-build-packs: $*" >&2; exit 1; }
for tool in dpkg-deb dpkg-parsechangelog gzip python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (run 'make deps')"
done
[ -f "$PACKS_DIR/manifest.json" ] || die "$PACKS_DIR/manifest.json not found (make packs builds it)"

RELEASE=$(dpkg-parsechangelog -l packaging/changelog -S Version)
MAINTAINER=$(sed -n 's/^Maintainer: //p' packaging/control.in)
# The home page is set in one place, deb-build.sh (its HOMEPAGE= line).
# shellcheck disable=SC2016
HOMEPAGE=${HOMEPAGE:-$(sed -n 's/^HOMEPAGE=\${HOMEPAGE:-\(.*\)}$/\1/p' scripts/deb-build.sh)}
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -l packaging/changelog -S Timestamp)}
umask 022
OUT=$PACKS_DIR/debs
mkdir -p "$OUT"
rm -f "$OUT"/inkling-lang-*_all.deb

# One line per pack: language, display name, pack version, file name (from the manifest).
python3 - "$PACKS_DIR/manifest.json" >"$OUT/.packs" <<'PY'
import json, sys
for pack in json.load(open(sys.argv[1], encoding="utf-8"))["packs"]:
    print("\t".join([pack["language"], pack["displayName"], pack["version"], pack["file"].rsplit("/", 1)[-1]]))
PY

while IFS=$'\t' read -r lang name pack_version file; do
    [ -f "$PACKS_DIR/$file" ] || die "$PACKS_DIR/$file (in the manifest) not found"
    package=inkling-lang-$(echo "$lang" | tr 'A-Z_' 'a-z-')
    version="$RELEASE+pack$(echo "$pack_version" | tr -c 'A-Za-z0-9.+~\n' '.')"
    stage=$(mktemp -d)
    root=$stage/root
    install -D -m 0644 "$PACKS_DIR/$file" "$root/usr/share/inkling/packs/$lang.inkpack"
    install -d "$root/usr/share/inkling/manifests"
    python3 - "$PACKS_DIR/manifest.json" "$lang" "$root/usr/share/inkling/manifests/$lang.json" <<'PY'
import json, sys
manifest = json.load(open(sys.argv[1], encoding="utf-8"))
entry = dict(next(p for p in manifest["packs"] if p["language"] == sys.argv[2]), url="")
with open(sys.argv[3], "w", encoding="utf-8") as out:
    json.dump({"formatVersion": manifest["formatVersion"], "packs": [entry]}, out, indent=2, ensure_ascii=False)
    out.write("\n")
PY
    chmod 0644 "$root/usr/share/inkling/manifests/$lang.json"
    doc=$root/usr/share/doc/$package
    install -D -m 0644 packaging/copyright "$doc/copyright"
    [ ! -f data/ATTRIBUTION.md ] || install -m 0644 data/ATTRIBUTION.md "$doc/ATTRIBUTION.md"
    gzip -9n -c packaging/changelog >"$doc/changelog.Debian.gz"
    chmod 0644 "$doc/changelog.Debian.gz"
    mkdir -p "$root/DEBIAN"
    installed_size=$(cd "$root" && find usr \( -type f -printf '%s\n' \) -o \( ! -type f -printf '1024\n' \) |
        awk '{ total += int(($1 + 1023) / 1024) } END { print total }')
    cat >"$root/DEBIAN/control" <<CONTROL
Package: $package
Version: $version
Architecture: all
Maintainer: $MAINTAINER
Installed-Size: $installed_size
Enhances: ibus-inkling
Homepage: $HOMEPAGE
Section: localization
Priority: optional
Multi-Arch: foreign
Description: $name language pack for the Inkling input method
 The word list and models Inkling uses to suggest, predict and check words
 in $name ($lang). Inkling finds the pack by itself once the package is
 installed; choose the language in the input-source menu or in Inkling
 Preferences.
CONTROL
    (cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
    chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
    find "$root" -type d -exec chmod 0755 {} +
    find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
    dpkg-deb --root-owner-group -Zxz --build "$root" "$OUT/${package}_${version}_all.deb" >/dev/null
    rm -rf "$stage"
    echo "deb-build-packs: $OUT/${package}_${version}_all.deb"
done <"$OUT/.packs"
rm -f "$OUT/.packs"
