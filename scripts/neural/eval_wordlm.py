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

from train_wordlm import BOS, UNK, load_checkpoint, words


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--max-words", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, itos = load_checkpoint(args.model)
    stoi = {w: i for i, w in enumerate(itos)}
    nll, count, top1, top3 = 0.0, 0, 0, 0
    with torch.no_grad():
        for line in open(args.text, encoding="utf-8"):
            ids = [stoi[BOS]] + [stoi.get(w, stoi[UNK]) for w in words(line)]
            if len(ids) < 2:
                continue
            logits, _ = model(torch.tensor([ids[:-1]]))
            logp = torch.log_softmax(logits[0], dim=-1)
            targets = torch.tensor(ids[1:])
            nll -= float(logp.gather(1, targets[:, None]).sum())
            logp[:, :2] = -math.inf  # never offered
            best = logp.topk(3, dim=-1).indices
            known = targets >= 2
            top1 += int(((best[:, 0] == targets) & known).sum())
            top3 += int(((best == targets[:, None]).any(dim=1) & known).sum())
            count += len(targets)
            if args.max_words and count >= args.max_words:
                break
    print(json.dumps({"words": count, "perplexity": round(math.exp(nll / count), 2),
                      "top1": round(top1 / count, 4), "top3": round(top3 / count, 4)}))


if __name__ == "__main__":
    main()
