#!/bin/sh
# Installs every Debian package that building and testing Inkling needs.
# inkling-server: libmicrohttpd-dev (HTTP), libargon2-dev (password hashes), libpq-dev
# (PostgreSQL storage), postgresql (Tests/Server starts a throwaway cluster), wrk (make bench-server).
# inkling-setup (the settings app) builds against libgtk-4-dev and libadwaita-1-dev; its test
# drives it through AT-SPI (python3-pyatspi, at-spi2-core) with gnome-keyring, and checks the
# AppStream metainfo with appstreamcli (appstream).
# Idempotent: packages already present are skipped without touching apt.
# python3-flake8 and shellcheck: `make lint` (scripts/lint.sh).
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
wrk
python3-flake8
shellcheck
libmicrohttpd-dev
libargon2-dev
libpq-dev
postgresql
libgtk-4-dev
libadwaita-1-dev
python3-pyatspi
at-spi2-core
gnome-keyring
appstream
libpocketsphinx-dev
pocketsphinx-en-us
libpulse-dev
pulseaudio-utils
pulseaudio
espeak-ng
sox
libhunspell-1.7-0
"
# Dictation (issue 16): libpocketsphinx-dev + pocketsphinx-en-us (the recogniser and its English
# model) and libpulse-dev (libpulse-simple: recording from PulseAudio or PipeWire's pulse service)
# build inkling-dictate; pulseaudio-utils + pulseaudio run the headless sound-server test;
# espeak-ng + sox synthesise the test and benchmark speech.
# libhunspell-1.7-0: the data pipeline's tests (Tests/DataPipeline) ask hunspell which word forms
# a dictionary accepts; `make pack` uses the pinned copy that fetch-data.sh extracts.

# shellcheck disable=SC2086
exec sh "$(dirname "$0")/apt-install-missing.sh" install-deps $PACKAGES
