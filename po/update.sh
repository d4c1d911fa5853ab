#!/bin/bash
# Regenerates po/inkling.pot from the Swift sources and merges it into every po/*.po.
#
# Every user-visible sentence is written tr("English text {placeholder}") (InklingCore's
# Translation); xgettext reads Swift well enough with its C parser and the keyword `tr`.
# Run after changing a message, then translate the new or fuzzy entries in po/*.po.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t sources < <(grep -rl --include='*.swift' 'tr("' Sources | LC_ALL=C sort)
xgettext --language=C --from-code=UTF-8 --keyword= --keyword=tr --keyword=trn:1,2 --add-comments=TRANSLATORS: \
    --package-name=inkling \
    --no-location --sort-output --output=po/inkling.pot "${sources[@]}"
# The POT's creation date changes on every run; keep a fixed one so the file only changes with its messages.
sed -i 's/^"POT-Creation-Date: .*"$/"POT-Creation-Date: 2026-12-01 00:00+0000\\n"/' po/inkling.pot
for po in po/*.po; do
    [ -e "$po" ] || continue
    msgmerge --quiet --no-fuzzy-matching --update --backup=none --no-location --sort-output "$po" po/inkling.pot
done
