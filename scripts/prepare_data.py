#!/usr/bin/python3
"""Prepare the inputs of Inkling's language-pack builder for one language.

    scripts/fetch-data.sh .cache/data
    /usr/bin/python3 scripts/prepare_data.py --cache .cache/data [--lang LANG] [--out DIR]

Reads only what scripts/fetch-data.sh extracted under CACHE/extracted/ (the whitelisted sources
of data/ATTRIBUTION.md) as the language's entry of data/languages.json says, and writes
wordfreq.tsv, case.tsv, bigrams.tsv, hunspell.txt, corpus.txt, dev.txt (where the entry has
devEvery) and stats.txt into DIR (default .cache/prepared/LANG). The pipeline is the package
scripts/prepare (pipeline.py describes the outputs).
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare.pipeline import language_config, prepare  # noqa: E402

LANGUAGES_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "languages.json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", default=".cache/data", help="CACHE_DIR given to scripts/fetch-data.sh")
    parser.add_argument("--out", help="output directory (default .cache/prepared/LANG)")
    parser.add_argument("--lang", default="en", help="language code (data/languages.json); default en")
    args = parser.parse_args()
    out = args.out or os.path.join(".cache/prepared", args.lang)
    ex = os.path.join(args.cache, "extracted")
    if not os.path.isdir(ex):
        sys.exit("prepare_data: %s missing; run scripts/fetch-data.sh first" % ex)
    try:
        config = language_config(LANGUAGES_JSON, args.lang)
    except KeyError:
        sys.exit("prepare_data: language %r is not in data/languages.json" % args.lang)
    os.makedirs(out, exist_ok=True)
    sys.stdout.write("\n".join(prepare(ex, config, out)) + "\n")


if __name__ == "__main__":
    main()
