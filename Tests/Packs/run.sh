#!/bin/bash
# Language-pack download tests against a loopback server, and packs changed on disk while in
# use (needs the release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONDONTWRITEBYTECODE=1
status=0
/usr/bin/python3 Tests/Packs/test_packs.py || status=1
# A pack rewritten or truncated on disk while `inkling predict --stdio` uses it.
/usr/bin/python3 Tests/Packs/test_pack_in_use.py || status=1
exit $status
