#!/bin/bash
# Language-pack download tests against a loopback server (needs the release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 Tests/Packs/test_packs.py
