"""fortune(6) cookie files: which files of a language are read, and each cookie as one document
with attributions, quoted-mail and IRC-nick prefixes, ASCII art and code removed."""

import os
import re

from .text import indent_of, non_prose_line, read_text, strip_overstrike

_ATTRIB_RE = re.compile(r"^\s*(--|—|―|~~)\s*\S")
_MAIL_QUOTE_RE = re.compile(r"^\s*(?:>\s*)+")
_IRC_NICK_RE = re.compile(r"^\s*<[ @+%]?[^<>\s]{1,24}>\s+")
# IRC log lines: "[23:37:39] <nick> text", "11:29:59 <@nick> text", "Aug 08 17:20:49 <nick> text"
IRC_TIME_RE = re.compile(
    r"^\s*(?:#\S+\s+)?(?:[A-Z][a-z]{2} \d{1,2} )?\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s+(?=[<\[*-]|\S+:)")

_INLINE_ATTRIB_RE = re.compile(r"""^(.*[.!?"')\]])\s+(?:--|—|―)\s*[A-Z][^.!?]{0,80}[.]?\s*$""")
_INLINE_ATTRIB_ANY_RE = re.compile(r"""^(.*[.!?"')\]»])\s+--\s*(\w)[^.!?]{0,80}[.]?\s*$""")


def inline_attrib_dash(line):
    """'"..." -- Yogi Berra' (or an em or horizontal-bar dash) at a cookie's end: the quote."""
    return _INLINE_ATTRIB_RE.sub(r"\1", line)


def inline_attrib_any(line):
    """'... -- Name' at a cookie's end, for names in any script ("--" only:
    a single dash or an em dash opens dialogue in these languages)."""
    m = _INLINE_ATTRIB_ANY_RE.match(line)
    return m.group(1) if m and m.group(2).isupper() else line


# data/languages.json "fortuneAttribution": how a trailing attribution is written.
INLINE_ATTRIBUTIONS = {"dash": inline_attrib_dash, "double-dash-any-script": inline_attrib_any}


def fortune_files(ex, specs):
    """(package, name, path) of every cookie file of `specs` (languages.json "fortunes": package,
    dir, suffix, exclude), in order; index files, .u8 links and folders skipped."""
    out = []
    for spec in specs:
        base = os.path.join(ex, spec["package"], "usr/share/games/fortunes", spec.get("dir", ""))
        for name in sorted(os.listdir(base)):
            path = os.path.join(base, name)
            if name.endswith((".dat", ".u8")) or os.path.islink(path) or not os.path.isfile(path):
                continue  # index files, .u8 links (fortunes-pl: empty .u8 files), off/
            if not name.endswith(spec.get("suffix", "")) or name in spec.get("exclude", []):
                continue
            out.append((spec["package"], name, path))
    return out


def fortune_cookies(path, read=read_text, inline_attrib=inline_attrib_dash, line_prefix=None):
    """The cookies of one fortune file, attribution lines dropped. `line_prefix`:
    a regex removed from the start of every line first (IRC timestamps)."""
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
            kept[-1] = inline_attrib(kept[-1])
        yield " ".join(kept)
        cookie = []
