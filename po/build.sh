#!/bin/bash
# Compiles po/<lang>.po into <out>/<lang>/LC_MESSAGES/inkling.mo (the layout of /usr/share/locale).
#   po/build.sh OUT_DIR
# msgfmt --check refuses a translation whose format differs from its msgid.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: po/build.sh OUT_DIR}
for po in po/*.po; do
    lang=$(basename "$po" .po)
    mkdir -p "$out/$lang/LC_MESSAGES"
    msgfmt --check --output-file="$out/$lang/LC_MESSAGES/inkling.mo" "$po"
done
