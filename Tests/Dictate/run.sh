#!/bin/bash
# Tests of the `inkling-dictate` helper on synthesised speech (espeak-ng + sox, --audio-file).
#   Tests/Dictate/run.sh [pytest arguments]
# Uses $INKLING_DICTATE, else <repo>/.build/release/inkling-dictate (built if missing). The
# helper's pure parts are unit-tested by `swift test` (InklingDictateTests, Tests/Dictate/Unit);
# the engine side through the real daemon in Tests/Integration/test_dictation_engine.py.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"
binary="${INKLING_DICTATE:-$repo/.build/release/inkling-dictate}"
if [ ! -x "$binary" ]; then
    echo "run.sh: building inkling-dictate (release)"
    if ! (cd "$repo" && swift build -c release --static-swift-stdlib --product inkling-dictate); then
        echo "0 passed, 1 failed"
        exit 1
    fi
fi
export INKLING_DICTATE="$binary"
export PYTHONDONTWRITEBYTECODE=1
timeout --kill-after=5 900 /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE "$here/test_dictate_helper.py" "$here/test_sound_server.py" "$@"
