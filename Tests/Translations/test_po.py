"""The translations in po/: the POT matches the sources, every message has a German translation,
and every translation keeps its message's {placeholders} (InklingCore's Translation fills them by name).

Needs Debian's gettext (xgettext, msgfmt, msgattrib)."""
import os
import re
import shutil
import subprocess
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PO = os.path.join(ROOT, "po")


def entries(path):
    """(msgid, [(translation, its English form)], fuzzy) of every message but the header, read in
    msgcat's normal form; a message with a plural has two translations (German: one, many)."""
    text = subprocess.run(["msgcat", "--no-wrap", "--no-location", path], check=True,
                          capture_output=True, text=True).stdout
    found = []
    for block in text.split("\n\n"):
        msgid = re.search(r'^msgid "(.*)"$', block, re.M)
        if not msgid or not msgid.group(1) or block.lstrip().startswith("#~"):
            continue
        plural = re.search(r'^msgid_plural "(.*)"$', block, re.M)
        if plural:
            forms = [msgid.group(1), plural.group(1)]
            strings = [re.search(r'^msgstr\[%d\] "(.*)"$' % n, block, re.M) for n in range(2)]
        else:
            forms = [msgid.group(1)]
            strings = [re.search(r'^msgstr "(.*)"$', block, re.M)]
        translations = [(m.group(1) if m else "", english) for m, english in zip(strings, forms)]
        found.append((msgid.group(1), translations, "#, fuzzy" in block))
    return found


def placeholders(text):
    return sorted(re.findall(r"\{(\w+)\}", text))


def test_pot_matches_the_sources():
    """po/update.sh run on a copy gives the committed POT: no tr("…") message is missing from it."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "repo")
        shutil.copytree(os.path.join(ROOT, "Sources"), os.path.join(copy, "Sources"))
        shutil.copytree(PO, os.path.join(copy, "po"))
        subprocess.run(["bash", os.path.join(copy, "po", "update.sh")], check=True)
        with open(os.path.join(copy, "po", "inkling.pot"), encoding="utf-8") as fresh, \
                open(os.path.join(PO, "inkling.pot"), encoding="utf-8") as committed:
            assert fresh.read() == committed.read(), "po/inkling.pot is out of date: run po/update.sh"


def test_every_message_has_a_german_translation():
    template = [msgid for msgid, _, _ in entries(os.path.join(PO, "inkling.pot"))]
    assert len(template) > 100
    german = {msgid: (translations, fuzzy) for msgid, translations, fuzzy in entries(os.path.join(PO, "de.po"))}
    untranslated = [m for m in template
                    if m not in german or german[m][1] or not all(text for text, _ in german[m][0])]
    assert untranslated == []


def test_translations_keep_their_placeholders():
    for msgid, translations, _ in entries(os.path.join(PO, "de.po")):
        for text, english in translations:
            assert placeholders(text) == placeholders(english), msgid


def test_catalogues_compile():
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(["bash", os.path.join(PO, "build.sh"), out], check=True)
        assert os.path.getsize(os.path.join(out, "de", "LC_MESSAGES", "inkling.mo")) > 1000
