#!/usr/bin/env python3
"""Dumps the predictor's top-N candidates for every prefix of every word of a held-out text.

Output: JSON lines, one per word: {"doc": d, "w": word, "ctx": [previous words], "q": [[cands
for prefix 0], [cands for prefix 1], ...]}. Used to measure re-rankers offline (issue 17).
"""
import argparse
import json
import re
import subprocess

WORD = re.compile(r"[^\W_]+(?:['\u2019-][^\W_]+)*")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inkling", required=True)
    ap.add_argument("--pack", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-words", type=int, default=8000)
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("--next-window", type=int,
                    help="candidates the re-ranker sees for the next word (inkling predict --next-window)")
    ap.add_argument("--proposals", type=int,
                    help="the word GRU's likely words that join the next word's window (inkling predict --proposals)")
    ap.add_argument("--features", action="store_true",
                    help="also record the window's keys and features (\"win\": per prefix, rows of key + features)")
    ap.add_argument("--learn", action="store_true",
                    help="learn every word as typed, as the engine does (typesim's --commit-events): the "
                         "learned-word features then vary as in real use")
    args = ap.parse_args()
    command = [args.inkling, "predict", "--stdio", "--pack", args.pack] + (["--learn"] if args.learn else [])
    if args.next_window:
        command += ["--next-window", str(args.next_window)]
    if args.proposals is not None:
        command += ["--proposals", str(args.proposals)]
    proc = subprocess.Popen(command,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    rid = 0

    def ask(obj):
        nonlocal rid
        rid += 1
        obj["id"] = rid
        proc.stdin.write(json.dumps(obj) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    total = 0
    with open(args.out, "w") as out:
        for d, doc in enumerate(open(args.text, encoding="utf-8")):
            doc = doc.rstrip("\n")
            if not doc.strip():
                continue
            ask({"reset": True})
            ctx = []
            previous_end = None
            for m in WORD.finditer(doc):
                w, s = m.group(0), m.start()
                queries, windows = [], []
                for i in range(len(w)):
                    before = (doc[:s] + w[:i])[-1000:]
                    reply = ask({"before": before, "n": args.n, "features": args.features})
                    queries.append(reply.get("words", []))
                    if args.features:
                        windows.append([[row["key"]] + [round(f, 4) for f in row["features"]]
                                        for row in reply.get("window", [])])
                sent_start = re.sub(r"[\s\"()\[\]\u2018\u2019\u201c\u201d]+$", "", doc[:s])
                rec = {"doc": d, "w": w, "ctx": ctx[-40:], "q": queries,
                       "ss": sent_start == "" or sent_start[-1] in ".!?",
                       # the text since the previous word (its punctuation: a word model's context)
                       "sep": "" if previous_end is None else doc[previous_end:s]}
                previous_end = m.end()
                if args.features:
                    rec["win"] = windows
                out.write(json.dumps(rec) + "\n")
                if args.learn:  # learned after the text before it, as typesim's commit events
                    ask({"commit": w, "typed": w, "selected": False, "context": doc[:s][-1000:]})
                ctx.append(w)
                total += 1
                if total >= args.max_words:
                    proc.stdin.close()
                    return


if __name__ == "__main__":
    main()
