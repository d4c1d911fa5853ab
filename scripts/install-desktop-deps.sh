#!/bin/sh
# Installs the real applications the desktop tests type into (Tests/Desktop): LibreOffice Writer
# with its GTK 3 plugin and UNO for Python, Firefox ESR and Chromium, GNOME Shell (run headless on
# Wayland: gnome_session.py) and KDE's KWrite. Not part of install-deps.sh:
# they are large and only `make desktop-test` needs them. Idempotent.
set -eu

PACKAGES="
libreoffice-writer
libreoffice-gtk3
python3-uno
firefox-esr
chromium
fonts-dejavu-core
gnome-shell
kwrite
"

# shellcheck disable=SC2086
exec sh "$(dirname "$0")/apt-install-missing.sh" install-desktop-deps $PACKAGES
