#!/usr/bin/env python3
"""Held-out perplexity and next-word top-k accuracy of a train_wordlm.py checkpoint.

Feeds each held-out document (one per line) after <s>, as training does, and reports the
perplexity (out-of-vocabulary words scored as <unk>) and how often the GRU alone has the next
word among its top 1 / top 3 (an out-of-vocabulary word is a miss; <s> and <unk> are never
offered): a measure of the word model, not of the predictor.

  eval_wordlm.py --model WORK/wordgru.pt --text WORK/heldout.txt [--max-words N]
"""
import argparse
import json
import math

import torch

from train_wordlm import BOS, PUNCTUATION_TOKENS, UNK, load_checkpoint, tokens, uses_punctuation


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--max-words", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, itos = load_checkpoint(args.model)
    punctuation = uses_punctuation(args.model)
    stoi = {w: i for i, w in enumerate(itos)}
    marks = torch.tensor([stoi[t] for t in PUNCTUATION_TOKENS if t in stoi], dtype=torch.long)
    nll, count, top1, top3 = 0.0, 0, 0, 0
    # Words right after punctuation (a sentence end, a comma, a colon) and the others.
    after = {True: [0, 0], False: [0, 0]}  # top-3 hits, words
    with torch.no_grad():
        for line in open(args.text, encoding="utf-8"):
            # Words only are scored (the predictor offers words): a punctuation token is context,
            # and the word probabilities are renormalised without the punctuation tokens.
            line_tokens = tokens(line, True)
            ids = [stoi[BOS]] + [stoi.get(w, stoi[UNK]) for w in (line_tokens if punctuation else tokens(line))]
            if len(ids) < 2:
                continue
            logits, _ = model(torch.tensor([ids[:-1]]))
            logits = logits[0]
            if punctuation:
                logits[:, marks] = -math.inf
            logp = torch.log_softmax(logits, dim=-1)
            targets = torch.tensor(ids[1:])
            is_word = ~torch.isin(targets, marks) if punctuation else torch.ones(len(targets), dtype=torch.bool)
            follows_mark = []
            for position, token in enumerate(line_tokens):
                if token not in PUNCTUATION_TOKENS:
                    follows_mark.append(position > 0 and line_tokens[position - 1] in PUNCTUATION_TOKENS)
            logp, targets = logp[is_word], targets[is_word]
            nll -= float(logp.gather(1, targets[:, None]).sum())
            logp[:, :2] = -math.inf  # never offered
            best = logp.topk(3, dim=-1).indices
            known = targets >= 2
            top1 += int(((best[:, 0] == targets) & known).sum())
            hits = (best == targets[:, None]).any(dim=1) & known
            top3 += int(hits.sum())
            for hit, mark in zip(hits.tolist(), follows_mark):
                after[mark][0] += hit
                after[mark][1] += 1
            count += len(targets)
            if args.max_words and count >= args.max_words:
                break
    print(json.dumps({"words": count, "perplexity": round(math.exp(nll / count), 2),
                      "top1": round(top1 / count, 4), "top3": round(top3 / count, 4),
                      "top3_after_punctuation": round(after[True][0] / max(1, after[True][1]), 4),
                      "top3_elsewhere": round(after[False][0] / max(1, after[False][1]), 4),
                      "after_punctuation_share": round(after[True][1] / max(1, count), 4)}))


if __name__ == "__main__":
    main()
