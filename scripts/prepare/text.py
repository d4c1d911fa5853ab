"""Text primitives shared by every reader: decoding, normalisation, the word definition, the
prose filters and the shared document cleaner."""

import os
import re
import unicodedata

# What the benchmark harness counts as a word; "’" is written as "'" in every output.
WORD_RE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

_CTRL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")
_WS_RE = re.compile(r"\s+")


def decoder(fallback="latin-1"):
    """path -> text: UTF-8, or `fallback` for files that are not (older fortunes, koi8 texts)."""
    def read(path):
        with open(path, "rb") as f:
            data = f.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data.decode(fallback)
    return read


read_text = decoder()


def norm(text):
    """NFC, ’ -> ', no control characters, whitespace collapsed."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("’", "'")
    text = _CTRL_RE.sub(" ", text)
    return _WS_RE.sub(" ", text).strip()


def norm_folding_modifier_apostrophe(text):
    """norm(), and the modifier letter apostrophe U+02BC (Ukrainian writes it inside words) -> '."""
    return norm(text.replace("\u02bc", "'"))


def normalizer(fold_modifier_apostrophe):
    """The normalisation of a language (data/languages.json "foldModifierApostrophe")."""
    return norm_folding_modifier_apostrophe if fold_modifier_apostrophe else norm


def words(text):
    return WORD_RE.findall(text)


_CODE_CHARS = set("{}<>[]$@#=;\\|^~/+`")
_CODE_CHARS_STRICT = set("{}<>[]$@#=;\\|^~")
_CODE_LINE_RE = re.compile(
    r"^\s*(#include|#define|#!|sub |my \$|print |printf|if ?\(|for ?\(|while ?\(|"
    r"return\b|int |void |char |\$|@|\}|\{|/\*|\*/|//|<[a-z/])"
)


def non_prose(text):
    """True for art, code and other text that is mostly not letters."""
    nonspace = [c for c in text if not c.isspace()]
    if not nonspace:
        return True
    letters = sum(1 for c in nonspace if c.isalpha())
    if letters < 0.6 * len(nonspace):
        return True
    parens = sum(1 for c in nonspace if c in "()")
    if parens >= 8 and parens > 0.06 * len(nonspace):
        return True  # Lisp, formulae
    code = sum(1 for c in nonspace if c in _CODE_CHARS_STRICT)
    if code >= 4 and code > 0.05 * len(nonspace):
        return True
    if _CODE_LINE_RE.match(text) and code >= 2:
        return True
    return False


def non_prose_line(line):
    """Laxer test for single lines inside a fortune cookie: a short line such
    as "No. 5" or "$100 invested at 7%..." is kept; art, code, lines without a letter ("1988.")
    and longer lines that are mostly not letters are not."""
    nonspace = [c for c in line if not c.isspace()]
    letters = sum(1 for c in nonspace if c.isalpha())
    if letters < 0.4 * len(nonspace):
        return len(nonspace) > 6 or letters == 0
    code = sum(1 for c in nonspace if c in _CODE_CHARS)
    if code >= 3 and code > 0.08 * len(nonspace):
        return True
    return bool(_CODE_LINE_RE.match(line)) and code >= 2


_OVERSTRIKE_RE = re.compile("[^\x08\n]\x08")


def strip_overstrike(text):
    """Underlining/bold by backspacing ("____\\b\\b\\b\\bLAST", "_\\bx"): drop
    each character that a backspace erases."""
    while "\x08" in text:
        new = _OVERSTRIKE_RE.sub("", text)
        if new == text:
            return text.replace("\x08", "")
        text = new
    return text


def indent_of(line):
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def clean_documents(documents, normalize, seen, counts):
    """Yields (document, word count) for every usable raw document: blank, short (under three
    words), non-prose and duplicate documents (across all sources, via `seen`) are skipped and
    counted in `counts` under raw, short, junk and dup."""
    for raw in documents:
        if not raw or not raw.strip():
            continue
        counts["raw"] += 1
        doc = normalize(raw)
        nw = len(words(doc))
        if nw < 3:
            counts["short"] += 1
            continue
        if non_prose(doc):
            counts["junk"] += 1
            continue
        if doc in seen:
            counts["dup"] += 1
            continue
        seen.add(doc)
        yield doc, nw


def write_lines(path, lines):
    """Writes `lines` with "\\n" endings, replacing `path` only once complete."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line)
            f.write("\n")
    os.replace(tmp, path)
