"""One language's pack inputs from its entry of data/languages.json. Writes into OUT:

  wordfreq.tsv   word<TAB>frequency   the wordfreq 3.1.1 list "wordfreq" (every word, or only
                                      words of "script"), frequency 10**(-bin/100) as %.6g;
                                      most frequent first, then by word.
  case.tsv       form<TAB>count       case-sensitive counts of the corpus's word forms plus the
                                      onboard-data unigrams of "onboard" (raw counts summed as
                                      they are). Most frequent first, then by form.
  bigrams.tsv    w1<TAB>w2<TAB>count  lowercase; symspellpy's "symspellBigrams" list (if any)
                                      plus the onboard bigrams, integer counts summed without
                                      rescaling. Most frequent first, then w1, then w2.
  hunspell.txt   spelling             the "hunspell" dictionary's stems, and every form of the
                                      candidate words (wordfreq.tsv's and case.tsv's) that hunspell
                                      accepts (through Debian's libhunspell: affix rules, compounds,
                                      case), sorted, unique.
  corpus.txt     one document a line  cleaned running text of the "corpus" sources, in order.
  dev.txt        one document a line  with "devEvery": every N-th cleaned document, never
                                      written to corpus.txt (the language's held-out text).
  stats.txt      per-source document and word counts, and the other outputs' sizes.

Words are what the benchmark harness counts (text.WORD_RE), and "’" is written as "'" in every
output. Everything is sorted or in source order, with fixed number formatting and no
timestamps, so the output is byte-identical on every run.
"""

import collections
import json
import os

from . import corpora, lexicons, wordfreq
from .fortunes import fortune_files
from .text import WORD_RE, clean_documents, decoder, normalizer, words, write_lines


def language_config(path, code):
    """The entry of `code` in the languages file at `path`; KeyError when there is none."""
    with open(path, encoding="utf-8") as f:
        for entry in json.load(f)["languages"]:
            if entry["code"] == code:
                return entry
    raise KeyError(code)


def split_corpus(sources, normalize, every):
    """Cleans the (name, raw documents) sources in order: (corpus documents, dev documents,
    stats rows). With `every`, every N-th cleaned document goes to dev instead."""
    seen = set()
    docs, dev, stats = [], [], []
    index = 0
    for name, documents in sources:
        counts = collections.Counter()
        n_docs = n_words = n_dev = n_dev_words = 0
        for doc, nw in clean_documents(documents, normalize, seen, counts):
            index += 1
            if every and index % every == 0:
                dev.append(doc)
                n_dev += 1
                n_dev_words += nw
                continue
            docs.append(doc)
            n_docs += 1
            n_words += nw
        stats.append((name, n_docs, n_words, n_dev, n_dev_words,
                      counts["raw"], counts["short"], counts["junk"], counts["dup"]))
    return docs, dev, stats


def case_rows(docs, onboard_unigrams):
    """case.tsv rows: every word form of the documents plus onboard's unigrams, most frequent
    first. Returns (rows, onboard forms added)."""
    case = collections.Counter()
    for doc in docs:
        case.update(words(doc))
    n_onboard = 0
    for form, count in onboard_unigrams.items():
        if WORD_RE.fullmatch(form):
            case[form] += count
            n_onboard += 1
    return sorted(case.items(), key=lambda kv: (-kv[1], kv[0])), n_onboard


def bigram_rows(symspell_pairs, onboard_bigrams):
    """bigrams.tsv rows from symspellpy's pairs and onboard's bigrams (lowercased), most frequent
    first. Returns (rows, symspellpy pairs used, onboard pairs used)."""
    bigrams = collections.Counter()
    n_symspell = n_onboard = 0
    for pair, count in symspell_pairs:
        bigrams[pair] += count
        n_symspell += 1
    for (w1, w2), count in onboard_bigrams.items():
        w1, w2 = w1.lower(), w2.lower()
        if WORD_RE.fullmatch(w1) and WORD_RE.fullmatch(w2):
            bigrams[(w1, w2)] += count
            n_onboard += 1
    return sorted(bigrams.items(), key=lambda kv: (-kv[1], kv[0])), n_symspell, n_onboard


def prepare(ex, config, outdir):
    """Writes the pack inputs of the language `config` (its languages.json entry) from the
    extracted sources under `ex` into `outdir`; returns the lines of stats.txt."""
    code = config["code"]
    read = decoder(config.get("fallbackEncoding", "latin-1"))
    normalize = normalizer(config.get("foldModifierApostrophe", False))
    every = config.get("devEvery")
    out = lambda name: os.path.join(outdir, name)  # noqa: E731

    sources = [(name, corpora.READERS[name](ex, config, read)) for name in config["corpus"]]
    docs, dev, stats = split_corpus(sources, normalize, every)
    write_lines(out("corpus.txt"), docs)
    if every:
        write_lines(out("dev.txt"), dev)

    onboard_uni, onboard_bi = lexicons.onboard_models(ex, config.get("onboard", []))
    rows, n_onboard_uni = case_rows(docs, onboard_uni)
    write_lines(out("case.tsv"), ("%s\t%d" % kv for kv in rows))
    n_case = len(rows)
    case_forms = [form for form, _ in rows]

    symspell = config.get("symspellBigrams")
    pairs = lexicons.symspell_bigrams(ex, symspell) if symspell else []
    rows, n_symspell, n_onboard_bi = bigram_rows(pairs, onboard_bi)
    write_lines(out("bigrams.tsv"), ("%s\t%s\t%d" % (a, b, c) for (a, b), c in rows))
    n_bigrams = len(rows)

    script = config.get("script")
    wf_lines, n_wf = wordfreq.frequency_lines(ex, config["wordfreq"], keep=wordfreq.script_filter(script))
    write_lines(out("wordfreq.tsv"), wf_lines)

    # The .dic lists stems with affix rules (`connect/AEDVGS`: `disconnect`, `connects`, …); the
    # stems alone left a third of the English vocabulary (`solution`, `disclosure`) unvouched for
    # and proper names' possessives (`Mexico's`) shown in lower case. hunspell decides the rest.
    stems, encoding = lexicons.hunspell(ex, config["hunspell"], normalize)
    checker = lexicons.hunspell_checker(ex, config["hunspell"], encoding)
    try:
        candidates = [line.split("\t", 1)[0] for line in wf_lines] + case_forms
        accepted = lexicons.accepted_forms(checker, candidates)
    finally:
        checker.close()
    write_lines(out("hunspell.txt"), sorted(stems | accepted))

    held_out = " and dev.txt (every %d-th document)" % every if every else ""
    lines = ["# %s corpus.txt%s: documents and words per source, after cleaning" % (code, held_out),
             "# source\tdocs\twords\tdev_docs\tdev_words\traw\tdropped_short\tdropped_nonprose\tdropped_dup"]
    for row in stats:
        lines.append("%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d" % row)
    lines.append("TOTAL\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d" % tuple(sum(s[i] for s in stats) for i in range(1, 9)))
    lines.append("")
    lines.append("# other outputs")
    lines.append("fortune files\t%s" % " ".join("%s/%s" % (p, n) for p, n, _ in
                                                fortune_files(ex, config.get("fortunes", []))))
    lines.append("wordfreq.tsv words\t%d (%s, script %s)" % (n_wf, config["wordfreq"], script or "any"))
    lines.append("case.tsv forms\t%d (onboard unigram forms added: %d from %s)"
                 % (n_case, n_onboard_uni, ",".join(config.get("onboard", [])) or "none"))
    lines.append("bigrams.tsv pairs\t%d (symspellpy pairs: %d, onboard pairs: %d)"
                 % (n_bigrams, n_symspell, n_onboard_bi))
    lines.append("hunspell.txt spellings\t%d (%d stems of %s.dic, %s; %d accepted forms of candidate words)"
                 % (len(stems | accepted), len(stems), config["hunspell"]["dic"], encoding, len(accepted)))
    write_lines(out("stats.txt"), lines)
    return lines
