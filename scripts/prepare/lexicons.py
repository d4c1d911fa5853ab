"""Readers of word lists: onboard-data's language models, symspellpy's bigram list and hunspell
dictionaries (their stems, and the word forms hunspell itself accepts, through Debian's
libhunspell).

onboard-data's .lm files (/usr/share/onboard/models/<variant>.lm) are ARPA-like text WITHOUT
probabilities: a "\\data\\" header with "ngram N=count" lines, then "\\1-grams:" and "\\2-grams:"
sections whose lines are "<count> <word>" and "<count> <word1> <word2>" (plain integer counts,
case-sensitive, one line per distinct form; e.g. "83800117 the", "689761 I", "2605 ABC News"), and
"\\end\\". The unigram section starts with the pseudo words <unk> <s> </s> <num>, which are
skipped. A language's variants (en_US, en_GB, …) share one set of counts (a form present in
several files has the same count in each; they differ only in which spellings are kept), so
their union is taken with one count per form, not a sum. The bigrams are mostly capitalised name
pairs ("Bruce Springsteen"); they are lowercased for bigrams.tsv.
"""

import ctypes
import glob
import os
import re

from .text import WORD_RE, norm, norm_folding_modifier_apostrophe, read_text


def onboard_models(ex, variants):
    """Union of the given onboard .lm files: ({form: count}, {(w1, w2): count}), the largest
    count where variants disagree. Forms are normalised with U+02BC folded in every language."""
    fold = norm_folding_modifier_apostrophe
    uni, bi = {}, {}
    for variant in variants:
        path = os.path.join(ex, "onboard-data/usr/share/onboard/models/%s.lm" % variant)
        section = None
        for line in read_text(path).split("\n"):
            line = line.strip()
            if not line:
                continue
            if line.startswith("\\"):
                section = line
                continue
            if section == "\\1-grams:":
                count, form = line.split(" ", 1)
                if form.startswith("<") and form.endswith(">"):
                    continue
                form = fold(form)
                uni[form] = max(uni.get(form, 0), int(count))
            elif section == "\\2-grams:":
                parts = line.split(" ")
                if len(parts) != 3:
                    continue
                key = (fold(parts[1]), fold(parts[2]))
                bi[key] = max(bi.get(key, 0), int(parts[0]))
    return uni, bi


def symspell_bigrams(ex, name):
    """symspellpy's "w1 w2 count" lines as ((w1, w2) lowercased, count) pairs of words."""
    path = os.path.join(ex, "symspellpy/symspellpy", name)
    for line in read_text(path).split("\n"):
        parts = line.split()
        if len(parts) != 3:
            continue
        w1, w2 = (norm(w).lower() for w in parts[:2])
        if WORD_RE.fullmatch(w1) and WORD_RE.fullmatch(w2):
            yield (w1, w2), int(parts[2])


def aff_encoding(aff_path):
    """Python codec of a hunspell .aff's SET line (UTF-8 when absent)."""
    with open(aff_path, "rb") as f:
        for raw in f:
            line = raw.decode("latin-1").strip()
            if line.startswith("SET "):
                enc = line.split()[1].lower()
                enc = enc.replace("microsoft-", "")
                return {"utf-8": "utf-8", "koi8-r": "koi8_r", "koi8-u": "koi8_u"}.get(enc, enc)
    return "utf-8"


def dic_stems(text, normalize=norm):
    """The stems of a hunspell .dic's text: flags (after an unescaped "/") and morphological
    fields dropped, normalised, words only. The first line (the entry count), comments and
    indented lines (de_DE: tab-indented comments) are skipped."""
    stems = set()
    for i, line in enumerate(text.split("\n")):
        if i == 0 or not line.strip() or line[:1].isspace() or line.startswith("#"):
            continue
        entry = re.split(r"[\t ]", line.strip(), maxsplit=1)[0]
        stem = re.split(r"(?<!\\)/", entry, maxsplit=1)[0].replace("\\/", "/")
        stem = normalize(stem)
        if stem and WORD_RE.fullmatch(stem):
            stems.add(stem)
    return stems


def hunspell(ex, spec, normalize=norm):
    """(stems, encoding) of languages.json "hunspell" {package, dic}."""
    base = os.path.join(ex, spec["package"], "usr/share/hunspell", spec["dic"])
    encoding = aff_encoding(base + ".aff")
    with open(base + ".dic", "rb") as f:
        text = f.read().decode(encoding)
    return dic_stems(text, normalize), encoding


LIBHUNSPELL_PACKAGE = "libhunspell-1.7-0"


def libhunspell_path(ex):
    """The pinned libhunspell that scripts/fetch-data.sh extracted (Debian's libhunspell-1.7-0)."""
    found = sorted(glob.glob(os.path.join(ex, LIBHUNSPELL_PACKAGE, "usr/lib/*/libhunspell-1.7.so.0")))
    if not found:
        raise FileNotFoundError("%s is not extracted under %s (run scripts/fetch-data.sh)" % (LIBHUNSPELL_PACKAGE, ex))
    return found[0]


class HunspellChecker:
    """A hunspell dictionary as hunspell applies it (affix rules, compounds, case): Debian's
    libhunspell through ctypes, so that the pipeline's answer is the spell checker's own."""

    def __init__(self, library, aff, dic, encoding):
        lib = ctypes.CDLL(library)
        lib.Hunspell_create.restype = ctypes.c_void_p
        lib.Hunspell_create.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.Hunspell_spell.restype = ctypes.c_int
        lib.Hunspell_spell.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.Hunspell_destroy.argtypes = [ctypes.c_void_p]
        self._lib = lib
        self._encoding = encoding
        self._handle = lib.Hunspell_create(os.fsencode(aff), os.fsencode(dic))
        if not self._handle:
            raise OSError("libhunspell could not open %s" % dic)

    def accepts(self, word):
        """Whether hunspell spells `word` correctly; a word its encoding cannot hold is not."""
        try:
            data = word.encode(self._encoding)
        except UnicodeEncodeError:
            return False
        return bool(self._lib.Hunspell_spell(self._handle, data))

    def close(self):
        if self._handle:
            self._lib.Hunspell_destroy(self._handle)
            self._handle = None


def hunspell_checker(ex, spec, encoding):
    """A HunspellChecker of languages.json "hunspell" {package, dic}."""
    base = os.path.join(ex, spec["package"], "usr/share/hunspell", spec["dic"])
    return HunspellChecker(libhunspell_path(ex), base + ".aff", base + ".dic", encoding)


def accepted_forms(checker, words):
    """The spellings hunspell accepts among `words` (the pack's candidate words, any case): a
    word's lower-case form when accepted (`solution`, `disconnect`: stems with affix rules, which
    the .dic does not list), else its capitalised form (`Mexico's`), and a mixed-case form as it
    is (`McDonald's`). All-caps forms are not checked: hunspell accepts any word in capitals."""
    accepted = set()
    decided = set()  # lower-case forms already checked
    mixed = set()  # mixed-case forms already checked
    for word in words:
        lower = word.lower()
        capital = lower[:1].upper() + lower[1:]
        if lower not in decided:
            decided.add(lower)
            if checker.accepts(lower):
                accepted.add(lower)
            elif checker.accepts(capital):
                accepted.add(capital)
        if word not in (lower, capital) and not word.isupper() and word not in mixed:
            mixed.add(word)
            if checker.accepts(word):
                accepted.add(word)
    return accepted
