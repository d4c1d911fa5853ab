#!/bin/sh
# Installs every Debian package that building and testing Inkling needs.
# Idempotent: packages already present are skipped without touching apt.
set -eu

PACKAGES="
pkg-config
libglib2.0-dev
libibus-1.0-dev
libxkbcommon-dev
libx11-data
ibus
gir1.2-ibus-1.0
python3-gi
xvfb
xdotool
x11-xkb-utils
dbus
dbus-x11
gir1.2-gtk-3.0
gir1.2-gtk-4.0
libsqlite3-dev
libcurl4-openssl-dev
libsecret-1-dev
dpkg-dev
fakeroot
ibus-gtk3
ibus-gtk4
python3-pytest
python3-pyqt5
debootstrap
lintian
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done"
