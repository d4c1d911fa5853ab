#!/bin/bash
# The settings app (inkling-setup) under Xvfb, driven through AT-SPI with a real ibus-daemon and
# engine: GSettings followed both ways, a pack downloaded from a loopback server, a learned word
# forgotten, the heartbeat shown; a screenshot of every page. Then GNOME Settings' and ibus-setup's
# Preferences buttons, as those programs run them, open the app (test_preferences_button.py).
#
#   Tests/Setup/run.sh [pytest arguments]
#
# Needs the release build (.build/release: inkling-setup, inkling, ibus-engine-inkling).
# INKLING_SCREENSHOT_DIR keeps the screenshots (default: a temporary folder, removed).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BIN=${INKLING_BIN_DIR:-$ROOT/.build/release}
for f in inkling-setup inkling ibus-engine-inkling; do
    [ -x "$BIN/$f" ] || { echo "setup-app: no $BIN/$f (build first: swift build -c release)" >&2; echo "0 passed, 1 failed"; exit 1; }
done
for tool in Xvfb dbus-run-session glib-compile-schemas gsettings xdotool; do
    command -v "$tool" >/dev/null || { echo "setup-app: $tool missing (scripts/install-deps.sh)" >&2; echo "0 passed, 1 failed"; exit 1; }
done
export INKLING_BIN_DIR=$BIN INKLING_ENGINE=${INKLING_ENGINE:-$BIN/ibus-engine-inkling}
export PYTHONDONTWRITEBYTECODE=1
unset IBUS_ADDRESS DISPLAY WAYLAND_DISPLAY GTK_IM_MODULE QT_IM_MODULE XMODIFIERS DBUS_SESSION_BUS_ADDRESS
cd "$HERE" || exit 1
# A private session bus: the accessibility bus (at-spi2-core) is started on it by activation.
# Each file in its own process and bus: IBus's client library keeps the first daemon's address
# for the whole process. Status 5 is "no test selected" (a -k that picks the other file's tests).
status=0
for file in test_setup_app.py test_preferences_button.py; do
    dbus-run-session -- /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE "$@" "$file"
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ] || status=1
done
exit $status
