#!/bin/bash
# The client side of Inkling Server accounts (issue 14): `inkling account` and `inkling-cloud`
# in account mode, against a keyring on a private session bus and a server on loopback.
#   Tests/Account/run.sh [pytest arguments]
# Uses $INKLING_BIN (a folder with inkling, inkling-cloud, ibus-engine-inkling and
# inkling-server), else <repo>/.build/release. The tests run against a fake server
# (fake_inkling_server.py) and the real inkling-server ($INKLING_SERVER overrides it).
# The pure decisions (rotation, 401) are unit-tested by `swift test` (Tests/Account/Unit).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"
export INKLING_BIN="${INKLING_BIN:-$repo/.build/release}"
for name in inkling inkling-cloud; do
    if [ ! -x "$INKLING_BIN/$name" ]; then
        echo "account: no $name in $INKLING_BIN (build first: swift build -c release)" >&2
        echo "0 passed, 1 failed"
        exit 1
    fi
done
export PYTHONDONTWRITEBYTECODE=1
cd "$here" || exit 1
# A private session bus: the tests' keyring (Tests/fake_secret_service.py) owns org.freedesktop.secrets on it.
timeout --kill-after=10 600 dbus-run-session -- /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE "$@" test_account.py test_account_real_server.py
status=$?
# The engine test needs a private ibus-daemon, and libibus talks to one daemon per process: its
# own pytest process (exit 5 = nothing selected by the arguments). INKLING_ENGINE overrides the
# engine (default: ibus-engine-inkling in $INKLING_BIN).
export INKLING_ENGINE="${INKLING_ENGINE:-$INKLING_BIN/ibus-engine-inkling}"
unset IBUS_ADDRESS DISPLAY WAYLAND_DISPLAY GTK_IM_MODULE QT_IM_MODULE XMODIFIERS
timeout --kill-after=10 300 dbus-run-session -- /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE "$@" test_account_engine.py
engine_status=$?
if [ "$engine_status" -ne 0 ] && [ "$engine_status" -ne 5 ]; then status=$engine_status; fi
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then echo "account: the suite timed out"; fi
exit "$status"
