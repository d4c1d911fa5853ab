#!/usr/bin/env python3
"""Where the next word stands in the predictor's list, at every next-word position of a text.

Asks `inkling predict --stdio` for its 32 best words before each word that follows a space (the
positions typesim counts as next-word queries; a document per line, the predictor reset between
them) and writes one row per position: the word, its rank (None: not among the 32), whether it
starts a sentence, the two words before it and the top 5. Prints the share ranked 1-3, 4-5,
6-10, 11-32 and missing. With --compare OLD.json, also counts the positions that entered and left
the top 3, and those whose top 3 held the word in another case only.

    python3 scripts/neural/next_word_ranks.py --pack data/packs/en.inkpack \\
        --text ../shared/bench/dev-en.txt --out ranks.json [--compare before.json] [-- predict flags]
"""
import argparse
import collections
import json
import re
import subprocess

WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")


def sentence_start(before):
    before = before.rstrip().rstrip('"()[]\u2018\u2019\u201c\u201d')
    return before == "" or before[-1] in ".!?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inkling", default=".build/release/inkling")
    parser.add_argument("--pack", required=True)
    parser.add_argument("--text", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--compare", help="an earlier --out file of the same text")
    parser.add_argument("flags", nargs="*", help="more `inkling predict` flags (after --)")
    args = parser.parse_args()
    process = subprocess.Popen([args.inkling, "predict", "--stdio", "--pack", args.pack] + args.flags,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    request_id = 0

    def ask(request):
        nonlocal request_id
        request_id += 1
        request["id"] = request_id
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        while True:
            reply = json.loads(process.stdout.readline())
            if reply.get("id") == request_id:
                return reply

    rows = []
    for line in open(args.text, encoding="utf-8"):
        document = line.rstrip("\n")
        if not document.strip():
            continue
        ask({"reset": True})
        for match in WORD.finditer(document):
            start, word = match.start(), match.group(0)
            if start == 0 or not document[start - 1].isspace():
                continue
            words = ask({"before": document[:start][-1000:], "n": 32}).get("words", [])
            starts = sentence_start(document[:start])
            rank = next((i for i, candidate in enumerate(words)
                         if candidate == word or (starts and candidate[:1].upper() + candidate[1:] == word)), None)
            rows.append({"w": word, "rank": rank, "st": starts, "prev": WORD.findall(document[:start])[-2:],
                         "top": words[:5]})
    process.stdin.close()
    process.wait()
    json.dump(rows, open(args.out, "w"))

    def band(rank):
        if rank is None:
            return "missing"
        return "1-3" if rank < 3 else "4-5" if rank < 5 else "6-10" if rank < 10 else "11-32"

    bands = collections.Counter(band(row["rank"]) for row in rows)
    print(len(rows), "positions:", {key: round(100 * bands[key] / len(rows), 2)
                                    for key in ("1-3", "4-5", "6-10", "11-32", "missing")})
    wrong_case = sum(1 for row in rows if (row["rank"] is None or row["rank"] >= 3)
                     and row["w"].lower() in (word.lower() for word in row["top"][:3]))
    print("outside the top 3 but there in another case:", wrong_case)
    if args.compare:
        before = json.load(open(args.compare))

        def hit(row):
            return row["rank"] is not None and row["rank"] < 3

        gained = sum(1 for old, new in zip(before, rows) if hit(new) and not hit(old))
        lost = sum(1 for old, new in zip(before, rows) if hit(old) and not hit(new))
        print(f"top 3 against {args.compare}: {gained} positions gained, {lost} lost")


if __name__ == "__main__":
    main()
