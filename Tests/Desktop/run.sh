#!/bin/bash
# Desktop tests: LibreOffice Writer, KWrite, Firefox ESR and Chromium under Xvfb, and GTK 4, GTK 3
# and Firefox on a headless GNOME Shell (Wayland), typed into through the engine, each with a
# control run without IBus (see test_desktop.py).
#
#   Tests/Desktop/run.sh [pytest arguments]
#   (INKLING_DESKTOP_APPS=writer,kwrite,firefox,chromium,gnome-gtk4,gnome-gtk3,gnome-firefox;
#    INKLING_DESKTOP_SCREENSHOTS=DIR keeps the GNOME screenshots)
#
# Needs the release build and the applications (scripts/install-desktop-deps.sh). Writes the
# results of the run to Tests/Desktop/last-run.json and prints the compatibility table.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export INKLING_ENGINE=${INKLING_ENGINE:-$ROOT/.build/release/ibus-engine-inkling}
if [ ! -x "$INKLING_ENGINE" ]; then
    echo "desktop: no engine binary at $INKLING_ENGINE (build first: swift build -c release)" >&2
    exit 1
fi
export PYTHONDONTWRITEBYTECODE=1
unset IBUS_ADDRESS DISPLAY WAYLAND_DISPLAY GTK_IM_MODULE QT_IM_MODULE XMODIFIERS
export INKLING_DESKTOP_RESULTS=${INKLING_DESKTOP_RESULTS:-$HERE/last-run.json}
rm -f "$INKLING_DESKTOP_RESULTS"
cd "$HERE" || exit 1
/usr/bin/python3 -m pytest -p no:cacheprovider -q -rfEx "$@" test_desktop.py
status=$?
[ -f "$INKLING_DESKTOP_RESULTS" ] && /usr/bin/python3 "$HERE/compatibility.py" "$INKLING_DESKTOP_RESULTS"
exit $status
