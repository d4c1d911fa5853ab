#!/bin/bash
# End-to-end tests of the `inkling-cloud` helper against a fake chat-completions server (pytest).
#   Tests/Cloud/run.sh [pytest arguments, e.g. -k cancel]
# Uses $INKLING_CLOUD, else <repo>/.build/release/inkling-cloud (built if missing).
# The pure logic (breaker, cache, parsing, options) is unit-tested by `swift test`
# (target InklingCloudTests, Tests/Cloud/Unit).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"
binary="${INKLING_CLOUD:-$repo/.build/release/inkling-cloud}"

if [ ! -x "$binary" ]; then
    if [ -n "${INKLING_CLOUD:-}" ]; then
        echo "run.sh: INKLING_CLOUD=$binary is not executable"
        echo "0 passed, 1 failed"
        exit 1
    fi
    echo "run.sh: building inkling-cloud (release)"
    if ! (cd "$repo" && swift build -c release --static-swift-stdlib --product inkling-cloud); then
        echo "0 passed, 1 failed"
        exit 1
    fi
fi

export INKLING_CLOUD="$binary"
export PYTHONDONTWRITEBYTECODE=1
timeout --kill-after=5 180 /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE "$@" "$here/test_cloud_helper.py"
status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "run.sh: the suite timed out"
    echo "0 passed, 1 failed"
fi
exit "$status"
