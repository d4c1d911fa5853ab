#!/bin/sh
# Installs the real applications the desktop tests type into (Tests/Desktop): LibreOffice Writer
# with its GTK 3 plugin and UNO for Python, Firefox ESR and Chromium. Not part of install-deps.sh:
# they are large and only `make desktop-test` needs them. Idempotent.
set -eu

PACKAGES="
libreoffice-writer
libreoffice-gtk3
python3-uno
firefox-esr
chromium
fonts-dejavu-core
"

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "install-desktop-deps: all packages present"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
echo "install-desktop-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-desktop-deps: done"
