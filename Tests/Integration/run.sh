#!/bin/bash
# Integration tests of ibus-engine-inkling: a private headless ibus-daemon with a real IBus
# client (test_engine.py), and real GTK 3 / GTK 4 / Qt 5 windows under Xvfb (test_e2e.py).
#
#   Tests/Integration/run.sh [pytest arguments]
#
# The release build must exist (swift build -c release); INKLING_ENGINE overrides the engine
# binary (default: <repo>/.build/release/ibus-engine-inkling). Prints "N passed, N failed" last.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export INKLING_ENGINE=${INKLING_ENGINE:-$ROOT/.build/release/ibus-engine-inkling}
if [ ! -x "$INKLING_ENGINE" ]; then
    echo "integration: no engine binary at $INKLING_ENGINE (build first: swift build -c release)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
if ! /usr/bin/python3 -c "import pytest, gi" 2>/dev/null; then
    echo "integration: /usr/bin/python3 lacks pytest or gi (run scripts/install-deps.sh)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
# Keep the session's own IBus, display and bus out of the tests.
export PYTHONDONTWRITEBYTECODE=1
unset IBUS_ADDRESS DISPLAY WAYLAND_DISPLAY GTK_IM_MODULE QT_IM_MODULE XMODIFIERS
REPORT=$(mktemp --suffix=.xml)
trap 'rm -f "$REPORT"' EXIT
cd "$HERE"
/usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE --junitxml="$REPORT" "$@" test_*.py
status=$?
/usr/bin/python3 - "$REPORT" "$status" <<'PY'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
except Exception:
    tests, failed, skipped = 0, 1, 0
if int(sys.argv[2]) != 0 and failed == 0:
    failed = 1
line = "%d passed, %d failed" % (tests - failed - skipped, failed)
print(line + (", %d skipped" % skipped if skipped else ""))
PY
exit $status
