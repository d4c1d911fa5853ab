#!/bin/sh
# Installs those of the given Debian packages that are not installed yet; touches apt only when
# something is missing. Usage: apt-install-missing.sh LABEL PACKAGE...
set -eu
label=$1
shift
missing=""
for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "$label: all packages present"
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    if ! command -v sudo >/dev/null; then
        echo "$label: missing$missing; run as root or install sudo" >&2
        exit 1
    fi
    SUDO="sudo"
fi
echo "$label: installing$missing"
# Passed through env: sudo's env_reset would drop an exported DEBIAN_FRONTEND, and debconf would
# then ask its questions on a CI machine that has no terminal.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null </dev/null
echo "$label: done"
