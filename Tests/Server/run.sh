#!/bin/bash
# Integration and security tests of inkling-server on loopback, over SQLite and over a
# PostgreSQL cluster started here in a temporary directory (Debian's postgresql package).
#   Tests/Server/run.sh [pytest arguments, e.g. -k sqlite]
# Uses $INKLING_SERVER, else <repo>/.build/release/inkling-server (built if missing).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"
binary="${INKLING_SERVER:-$repo/.build/release/inkling-server}"

if [ ! -x "$binary" ]; then
    echo "run.sh: building inkling-server (release)"
    if ! (cd "$repo" && swift build -c release --static-swift-stdlib --product inkling-server); then
        echo "0 passed, 1 failed"
        exit 1
    fi
fi

export INKLING_SERVER="$binary"
cd "$here" && timeout --kill-after=10 600 /usr/bin/python3 -m pytest -q -p no:cacheprovider "$@" test_server.py
status=$?
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then echo "run.sh: the suite timed out"; fi
exit "$status"
