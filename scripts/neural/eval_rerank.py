#!/usr/bin/env python3
"""Offline re-ranking measurement (issue 17): interpolates a word LM's log-probability with the
predictor's own ranking of its top-32 candidates and reports a keystroke-savings proxy.

Proxy: per word, the user selects at the first prefix where the word is in the top K (cost
prefix length + 1), else types it in full; KSS proxy = 1 - cost / letters (separators ignored).
Parameters are tuned on the first half of the dump and reported on the second half.
"""
import argparse
import json
import math

import torch

from train_wordlm import context_key, load_checkpoint, separator_token, uses_punctuation


def quantise_rows(weight):
    """Round-trips a tensor through symmetric int8 with one scale per row (what a pack would hold)."""
    rows = weight.reshape(weight.shape[0], -1) if weight.dim() > 1 else weight.reshape(1, -1)
    scale = rows.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127
    return (torch.round(rows / scale).clamp(-127, 127) * scale).reshape(weight.shape)


def match(c, w, ss):
    return c == w or (ss and c[:1].upper() + c[1:] == w)


def cost(rec, order_fn, k):
    for i, cands in enumerate(rec["q"]):
        top = order_fn(rec, i, cands)[:k]
        if any(match(c, rec["w"], rec["ss"]) for c in top):
            return i + 1, i == 0
    return len(rec["w"]), False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("-k", type=int, default=3)
    ap.add_argument("--int8", action="store_true", help="score with per-row int8-quantised weights")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model, itos = load_checkpoint(args.model)
    stoi = {w: i for i, w in enumerate(itos)}
    punctuation = uses_punctuation(args.model)  # then the dump must have "sep" (dump_candidates.py)
    if args.int8:
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(quantise_rows(p))
    recs = [json.loads(line) for line in open(args.dump)]
    # Log-probabilities of every vocabulary word at every word position, documents in order.
    with torch.no_grad():
        lps, doc, state = [], None, None
        for r in recs:
            if r["doc"] != doc:
                doc, state = r["doc"], None
                logits, state = model(torch.tensor([[0]]), state)
            elif punctuation and separator_token(r["sep"]):  # the mark before the word, as the engine gives it
                logits, state = model(torch.tensor([[stoi[separator_token(r["sep"])]]]), state)
            lp = torch.log_softmax(logits[0, -1], -1)
            lps.append(lp)
            wid = stoi.get(context_key(r["w"]) if punctuation else r["w"].lower().replace("\u2019", "'"), 1)
            logits, state = model(torch.tensor([[wid]]), state)
    # Look every candidate up once (plain floats), so the parameter sweep below stays cheap.
    target_ids = [stoi.get(r["w"].lower().replace("\u2019", "'"), 1) for r in recs]
    nll = -sum(float(lp[i]) for lp, i in zip(lps, target_ids)) / len(recs)
    for r, lp in zip(recs, lps):
        keys = {c.lower().replace("\u2019", "'") for q in r["q"] for c in q}
        ids = [stoi.get(k, 1) for k in keys]
        r["nn"] = dict(zip(keys, lp[ids].tolist()))

    def nn_lp(r, c):
        return r["nn"][c.lower().replace("\u2019", "'")]

    def baseline(r, i, cands):
        return cands

    def make(beta, unk_pen, w):
        def order(r, i, cands):
            scored = []
            for rank, c in enumerate(cands):
                key = c.lower().replace("\u2019", "'")
                lp = nn_lp(r, c) - (unk_pen if key not in stoi else 0.0)
                scored.append((w * lp - beta * math.log(1 + rank), -rank, c))
            scored.sort(reverse=True)
            return [c for _, _, c in scored]
        return order

    def evaluate(subset, fn):
        letters = sum(len(r["w"]) for r in subset)
        total, nw = 0, 0
        for r in subset:
            c, first = cost(r, fn, args.k)
            total += c
            nw += first
        return 1 - total / letters, nw / len(subset)

    half = len(recs) // 2
    tune, test = recs[:half], recs[half:]
    best = None
    for beta in (1.0, 2.0, 3.0, 5.0, 8.0):
        for unk_pen in (0.0, 2.0, 5.0):
            for w in (0.25, 0.5, 1.0):
                kss, nw = evaluate(tune, make(beta, unk_pen, w))
                if best is None or kss > best[0]:
                    best = (kss, beta, unk_pen, w)
    _, beta, unk_pen, w = best
    b_tune, b_test = evaluate(tune, baseline), evaluate(test, baseline)
    n_tune, n_test = evaluate(tune, make(beta, unk_pen, w)), evaluate(test, make(beta, unk_pen, w))
    print(json.dumps({"words": len(recs),
                      "heldout_perplexity_unk_folded": math.exp(nll),
                      "beta": beta, "unk_penalty": unk_pen, "nn_weight": w,
                      "tune": {"baseline": b_tune, "rerank": n_tune},
                      "test": {"baseline": b_test, "rerank": n_test}}, indent=1))


if __name__ == "__main__":
    main()
