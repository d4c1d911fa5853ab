"""wordfreq's frequency lists (cBpack: gzip'd msgpack), read without wordfreq itself."""

import gzip
import os
import struct
import unicodedata

from .text import WORD_RE


class MsgpackReader:
    """Minimal msgpack decoder: just what wordfreq's cBpack files use (arrays, maps, strings,
    small integers), plus the other scalar types for safety."""

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


ALPHABETS = {
    "cyrillic-ru": set("абвгдеёжзийклмнопрстуфхцчшщъыьэюя"),
    "cyrillic-uk": set("абвгґдеєжзиіїйклмнопрстуфхцчшщьюя"),
}


def script_filter(script):
    """word -> folded word, or None when it is not written in `script` ("latin", a key of
    ALPHABETS, or None for every word unchanged)."""
    if script is None:
        return None
    alphabet = ALPHABETS.get(script)

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


def frequency_lines(ex, listname, keep=None):
    """wordfreq's get_frequency_dict(lang, 'large'), reimplemented: "word<TAB>frequency" lines,
    frequency 10**(-bin/100) as %.6g, most frequent first, then by word. `keep` (word ->
    normalised word or None) filters and folds entries. Returns (lines, count)."""
    path = os.path.join(ex, "wordfreq/wordfreq/data/%s.msgpack.gz" % listname)
    with gzip.open(path, "rb") as f:
        data = MsgpackReader(f.read()).read()
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
