#!/bin/bash
# Language-pack download tests against loopback servers (needs the release build): the normal
# install paths (test_packs.py), then hostile URLs, redirects, slow servers, language codes,
# file modes, interrupted installs and unreadable packs (test_pack_safety.py), and packs
# rewritten or truncated on disk while in use (test_pack_in_use.py).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
export PYTHONDONTWRITEBYTECODE=1
status=0
/usr/bin/python3 Tests/Packs/test_packs.py || status=1
/usr/bin/python3 Tests/Packs/test_pack_safety.py || status=1
# A pack rewritten or truncated on disk while `inkling predict --stdio` uses it.
/usr/bin/python3 Tests/Packs/test_pack_in_use.py || status=1
# Language packs as Debian packages (inkling-lang-de), installed into a private dpkg root.
/usr/bin/python3 -m pytest -p no:cacheprovider -q Tests/Packs/test_lang_debs.py || status=1
exit $status
