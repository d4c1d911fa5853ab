#!/usr/bin/env python3
"""How often a corpus writes the next word in capitals after one or two words in capitals.

The predictor offers next words in capitals after two words in capitals with only spaces between
and after them (`DocumentCache.lastWordsInCapitals`); this counts, over word pairs separated by a
single space, the next word (digits aside) in capitals or not after a word in capitals (two letters
or more), split by whether the word before that was one too.

    python3 scripts/neural/capitals_after_capitals.py .cache/prepared/en/corpus.txt
"""
import collections
import re
import sys

WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")


def in_capitals(word, least=2):
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= least and all(c.isupper() for c in letters)


counts = collections.Counter()
for line in open(sys.argv[1], encoding="utf-8"):
    matches = list(WORD.finditer(line))
    for i in range(1, len(matches)):
        if line[matches[i - 1].end():matches[i].start()] != " ":
            continue
        previous, word = matches[i - 1].group(0), matches[i].group(0)
        if any(c.isdigit() for c in word) or not in_capitals(previous):
            continue
        two = (i >= 2 and in_capitals(matches[i - 2].group(0))
               and line[matches[i - 2].end():matches[i - 1].start()] == " ")
        counts[("after two" if two else "after one only", in_capitals(word, least=1))] += 1
for label in ("after two", "after one only"):
    yes, no = counts[(label, True)], counts[(label, False)]
    print(f"{label:15} next word in capitals {yes:,} of {yes + no:,}")
