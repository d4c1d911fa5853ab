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
CLOUD_REPORT=$(mktemp --suffix=.xml)
trap 'rm -f "$REPORT" "$CLOUD_REPORT"' EXIT
cd "$HERE" || exit 1
FILES=()
for file in test_*.py; do
    if [ "$file" != test_cloud_engine.py ]; then FILES+=("$file"); fi
done
/usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE --junitxml="$REPORT" "$@" "${FILES[@]}"
status=$?
# The cloud-check tests need a daemon whose engine has the cloud enabled, and libibus talks to
# one daemon per process: their own pytest process (exit 5 = nothing selected by the arguments).
/usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE --junitxml="$CLOUD_REPORT" "$@" test_cloud_engine.py
cloud_status=$?
if [ "$cloud_status" -ne 0 ] && [ "$cloud_status" -ne 5 ]; then status=$cloud_status; fi
/usr/bin/python3 - "$REPORT" "$status" "$CLOUD_REPORT" <<'PY'
import sys
import xml.etree.ElementTree as ET
tests = failed = skipped = 0
for path in [sys.argv[1]] + sys.argv[3:]:
    try:
        root = ET.parse(path).getroot()
        suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
        tests += sum(int(s.get("tests", 0)) for s in suites)
        failed += sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
        skipped += sum(int(s.get("skipped", 0)) for s in suites)
    except Exception:
        failed += 1
if int(sys.argv[2]) != 0 and failed == 0:
    failed = 1
line = "%d passed, %d failed" % (tests - failed - skipped, failed)
print(line + (", %d skipped" % skipped if skipped else ""))
PY
exit $status
