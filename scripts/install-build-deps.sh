#!/bin/sh
# Installs the Debian packages that building, packaging and running Inkling need — what
# `make install` needs on a fresh machine, and no more (the test tools are in install-deps.sh,
# which `make test` runs). The Swift toolchain itself comes first, from swift.org (README).
# Idempotent: packages already present are skipped without touching apt.
set -eu

# Libraries the binaries link against (their -dev packages for building), by part:
#   engine and CLI: GLib/GIO, IBus, xkbcommon (Compose; libx11-data holds the Compose tables),
#   SQLite (learned words), libcurl (downloads, cloud check), libsecret (keyring);
#   inkling-setup: GTK 4 and libadwaita; inkling-server: libmicrohttpd, argon2, libpq;
#   inkling-dictate: PocketSphinx (with its English model) and libpulse.
# Packaging the .deb: dpkg-dev (dpkg-shlibdeps), gettext (msgfmt, xgettext for po/), fakeroot, binutils (strip), python3.
# Running: ibus.
PACKAGES="
pkg-config
libglib2.0-dev
libibus-1.0-dev
libxkbcommon-dev
libx11-data
libsqlite3-dev
libcurl4-openssl-dev
libsecret-1-dev
libgtk-4-dev
libadwaita-1-dev
libmicrohttpd-dev
libargon2-dev
libpq-dev
libpocketsphinx-dev
pocketsphinx-en-us
libpulse-dev
dpkg-dev
gettext
fakeroot
binutils
python3
ibus
"

# shellcheck disable=SC2086
exec sh "$(dirname "$0")/apt-install-missing.sh" install-build-deps $PACKAGES
