#!/usr/bin/env python3
"""Learning-to-rank re-ranker of the predictor's candidate window (issue 17), measured offline.

Input: dumps from `dump_candidates.py --features` on text held out from the pack (every prefix
of every word: the window of up to 32 candidates, each a key and the predictor's features in
`RerankFeature` order). A small MLP scores every candidate from its features (plus, optionally,
hashed embeddings of the candidate and the previous word); trained with a listwise softmax loss
(the typed word's probability within the window). Documents are split train / valid / test by
id; the KSS proxy (letters; select at the first prefix where the word is in the top K) is
reported on the test documents for the predictor's order and the re-ranked order.

CPU only, one thread, fixed seed, deterministic algorithms.
"""
import argparse
import json
import os
import time
import zlib

import numpy as np
import torch

from train_wordlm import context_key, separator_token, uses_punctuation

NF = 15  # RerankFeature.count
TOTAL = 0
WINDOW_RANK = 12  # RerankFeature.windowRank: the rank by word score over the typing window (32)


def key(word):
    return word.lower().replace("\u2019", "'")


def bucket(text, buckets):
    return zlib.crc32(text.encode("utf-8")) % buckets if text else 0


LM_READS_PUNCTUATION = False  # set by word_lm: the GRU reads punctuation keys between words


def word_lm(path):
    """A word GRU from train_wordlm.py: returns (stoi, step) where step(word or None) gives the
    log-probabilities of the next word after feeding it (None: start of a document)."""
    from train_wordlm import load_checkpoint
    model, itos = load_checkpoint(path)
    global LM_READS_PUNCTUATION
    LM_READS_PUNCTUATION = uses_punctuation(path)
    stoi = {w: i for i, w in enumerate(itos)}
    state = [None]

    def step(word):
        with torch.no_grad():
            if word is None:
                state[0] = None
            logits, state[0] = model(torch.tensor([[0 if word is None else stoi.get(word, 1)]]), state[0])
            return torch.log_softmax(logits[0, -1], -1).numpy()
    return stoi, step


def load(paths, buckets, lm=None, window=32, next_window=32):
    """Queries as arrays: features [Q, W, NF (+2 with a word LM)], mask, target index (-1:
    absent), hashed candidate and previous-word ids. A word's first query (the next word) keeps
    `next_window` candidates, the others `window`; W is the larger."""
    stoi, step = word_lm(lm) if lm else (None, None)
    width = NF + (2 if lm else 0)
    size = max(window, next_window)
    feats, masks, targets, cand_ids, prev_ids, word_of_query = [], [], [], [], [], []
    words = []  # (doc, letters, first query index, number of queries)
    current_doc, lp = None, None
    for path, doc_offset in paths:
        for line in open(path, encoding="utf-8"):
            rec = json.loads(line)
            if step and (rec["doc"] + doc_offset) != current_doc:
                current_doc = rec["doc"] + doc_offset
                lp = step(None)
            target = key(rec["w"])
            if step and LM_READS_PUNCTUATION and rec["ctx"]:
                if "sep" not in rec:
                    raise SystemExit(f"{path}: the dump has no separators, which a GRU that reads punctuation "
                                     "needs: dump it again with this dump_candidates.py")
                mark = separator_token(rec["sep"])  # as the predictor gives it (DocumentCache)
                if mark:
                    lp = step(mark)
            prev = key(rec["ctx"][-1]) if rec["ctx"] and not rec["ss"] else ""
            first = len(targets)
            for prefix, rows in enumerate(rec["win"]):
                f = np.zeros((size, width), np.float32)
                m = np.zeros(size, bool)
                c = np.zeros(size, np.int64)
                t = -1
                if prefix == 0:  # a dump's wider window holds the narrower one: its best by word score
                    rows = [row for row in rows if round(row[1 + WINDOW_RANK] * 32) < next_window]
                for j, row in enumerate(rows[:next_window if prefix == 0 else window]):
                    f[j, :NF] = row[1:1 + NF]
                    if step:
                        wid = stoi.get(row[0], 1)
                        f[j, NF], f[j, NF + 1] = lp[wid], wid == 1
                    m[j] = True
                    c[j] = bucket(row[0], buckets)
                    if row[0] == target and t < 0:
                        t = j
                feats.append(f)
                masks.append(m)
                targets.append(t)
                cand_ids.append(c)
                prev_ids.append(bucket(prev, buckets))
                word_of_query.append(len(words))
            words.append((rec["doc"] + doc_offset, len(rec["w"]), first, len(targets) - first))
            if step:
                lp = step(context_key(rec["w"]) if LM_READS_PUNCTUATION else target)
    return (np.stack(feats), np.stack(masks), np.array(targets), np.stack(cand_ids),
            np.array(prev_ids), words)


def without_unreachable_starts(paths, words, targets):
    """The targets with the first query of every lower-case word at a sentence start removed (-1).

    At a sentence start the engine offers capitals, which never match such a word, however it is
    ranked: learning to rank it there only teaches the network that "the", "a" and "he" start
    messages (dictionary usage examples are lower-case fragments)."""
    targets = targets.copy()
    index = 0
    for path, _ in paths:
        for line in open(path, encoding="utf-8"):
            rec = json.loads(line)
            _, _, first, count = words[index]
            if rec["ss"] and rec["w"][:1].islower() and count:
                targets[first] = -1
            index += 1
    assert index == len(words)
    return targets


def with_relative_features(f, m):
    """Appends, per candidate, its predictor score and (with a word LM) its GRU log-probability
    minus the best of its window: how far it is from the window's leader, which a per-candidate
    MLP cannot see otherwise."""
    cols = [TOTAL] + ([NF] if f.shape[-1] > NF else [])
    extra = []
    for col in cols:
        v = np.where(m, f[..., col], -np.inf)
        extra.append(np.where(m, f[..., col] - v.max(1, keepdims=True), 0).astype(np.float32))
    return np.concatenate([f] + [e[..., None] for e in extra], -1)


class Reranker(torch.nn.Module):
    """score = predictor's total + MLP(normalised features [, candidate ⊙ previous-word embedding])."""

    def __init__(self, hidden, buckets, dim, width=NF):
        super().__init__()
        self.dim = dim
        extra = dim if dim else 0
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width + extra, hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, 1))
        torch.nn.init.zeros_(self.mlp[-1].weight)
        torch.nn.init.zeros_(self.mlp[-1].bias)
        self.register_buffer("mean", torch.zeros(width))
        self.register_buffer("std", torch.ones(width))
        if dim:
            self.cand = torch.nn.Embedding(buckets, dim)
            self.prev = torch.nn.Embedding(buckets, dim)
            torch.nn.init.normal_(self.cand.weight, std=0.1)
            torch.nn.init.normal_(self.prev.weight, std=0.1)

    def forward(self, f, c, p):
        x = (f - self.mean) / self.std
        if self.dim:
            x = torch.cat([x, self.cand(c) * self.prev(p)[:, None, :]], -1)
        return f[..., TOTAL] + self.mlp(x).squeeze(-1)


def kss(words, scores, masks, targets, k):
    """KSS proxy on the given words: select at the first prefix whose top k holds the word."""
    letters = typed = 0
    first_hits = 0
    for _, n, first, count in words:
        letters += n
        cost = n
        for i in range(count):
            q = first + i
            t = targets[q]
            if t >= 0:
                s = np.where(masks[q], scores[q], -np.inf)
                rank = int((s > s[t]).sum())
                if rank < k:
                    cost = i + 1
                    first_hits += i == 0
                    break
        typed += cost
    return 1 - typed / letters, first_hits / max(1, len(words))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", action="append", required=True, help="PATH[:DOC_OFFSET]")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--dim", type=int, default=0, help="hashed embedding size (0: features only)")
    ap.add_argument("--buckets", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("-k", type=int, default=3)
    ap.add_argument("--lm", help="word GRU checkpoint (train_wordlm.py): adds its log-probability as a feature")
    ap.add_argument("--fold", type=int, default=0, help="which fifth of the documents is the test set")
    ap.add_argument("--out")
    ap.add_argument("--cache", help="npz of the loaded dumps (written if missing, read if present)")
    ap.add_argument("--case-reachable", action="store_true",
                    help="a sentence-start word written in lower case (a fragment: \"the dog barked\") is no "
                         "target before its first letter: the engine shows sentence starts capitalised")
    ap.add_argument("--relative", action="store_true",
                    help="add window-relative inputs: the score and the GRU log-probability minus the window's best")
    ap.add_argument("--window", type=int, default=32, help="candidates per query while a word is typed")
    ap.add_argument("--next-window", type=int, default=32,
                    help="candidates of the next-word query (the dump must hold as many: dump_candidates.py "
                         "--next-window)")
    ap.add_argument("--weight", choices=("none", "remaining"), default="none",
                    help="per-prefix loss weight: none, or the letters a selection there saves")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(17)
    torch.use_deterministic_algorithms(True)
    paths = [(p.split(":")[0], int(p.split(":")[1]) if ":" in p else 0) for p in args.dump]
    if args.cache and os.path.exists(args.cache):
        with np.load(args.cache) as z:
            f, m, t, c, p = z["f"], z["m"], z["t"], z["c"], z["p"]
            words = [tuple(int(x) for x in row) for row in z["words"]]
    else:
        f, m, t, c, p, words = load(paths, args.buckets, args.lm, args.window, args.next_window)
        if args.cache:
            np.savez(args.cache, f=f, m=m, t=t, c=c, p=p, words=np.array(words, np.int64))
    if args.case_reachable:
        t = without_unreachable_starts(paths, words, t)
    if args.relative:
        f = with_relative_features(f, m)
    # Fold f: documents with id % 5 == f test, f + 1 validation, the rest training.
    split = np.array([(w[0] - args.fold) % 5 for w in words])  # 0: test, 1: valid, else train
    qsplit = np.zeros(len(t), np.int64)
    for (_, _, first, count), s in zip(words, split):
        qsplit[first:first + count] = s
    train_q = np.where((qsplit >= 2) & (t >= 0))[0]
    model = Reranker(args.hidden, args.buckets, args.dim, f.shape[-1])
    ft = torch.from_numpy(f)
    with torch.no_grad():
        rows = ft[train_q][torch.from_numpy(m[train_q])]
        model.mean.copy_(rows.mean(0))
        model.std.copy_(rows.std(0).clamp(min=1e-3))
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-5)
    mt, ct, pt, tt = torch.from_numpy(m), torch.from_numpy(c), torch.from_numpy(p), torch.from_numpy(t)
    sets = {name: [w for w, s in zip(words, split) if s in ids] for name, ids in
            (("test", (0,)), ("valid", (1,)), ("train", (2, 3, 4)))}

    def scores_all():
        with torch.no_grad():
            return torch.cat([model(ft[i:i + 8192], ct[i:i + 8192], pt[i:i + 8192])
                              for i in range(0, len(t), 8192)]).numpy()

    base = f[..., TOTAL]
    report = {"queries": len(t), "words": {k: len(v) for k, v in sets.items()},
              "baseline": {k: kss(v, base, m, t, args.k) for k, v in sets.items() if k != "train"},
              "oracle_window_hit": float((t >= 0).mean())}
    print(json.dumps(report), flush=True)
    # KSS counts letters: a hit at a prefix saves the letters still to type there (the word's
    # length minus the prefix), so with --weight remaining those prefixes weigh more.
    weights = np.ones(len(t), np.float32)
    if args.weight == "remaining":
        for _, n, first, count in words:
            weights[first:first + count] = np.maximum(1, n - np.arange(count))
    wt = torch.from_numpy(weights)
    gen = torch.Generator().manual_seed(17)
    best = None
    start = time.time()
    for epoch in range(args.epochs):
        order = train_q[torch.randperm(len(train_q), generator=gen).numpy()]
        total = 0.0
        for i in range(0, len(order), 256):
            b = torch.from_numpy(order[i:i + 256])
            s = model(ft[b], ct[b], pt[b]).masked_fill(~mt[b], -1e9)
            if args.weight == "none":  # the shipped model's exact arithmetic (golden check)
                loss = torch.nn.functional.cross_entropy(s, tt[b])
            else:
                loss = (torch.nn.functional.cross_entropy(s, tt[b], reduction="none") * wt[b]).sum() / wt[b].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        sc = scores_all()
        v = kss(sets["valid"], sc, m, t, args.k)
        print(json.dumps({"epoch": epoch, "loss": total / len(order), "valid": v,
                          "seconds": round(time.time() - start)}), flush=True)
        if best is None or v[0] > best[0]:
            best = (v[0], epoch, {k2: v2.clone() for k2, v2 in model.state_dict().items()})
    model.load_state_dict(best[2])
    sc = scores_all()
    reranked = {k: kss(v, sc, m, t, args.k) for k, v in sets.items() if k != "train"}
    report.update({"best_epoch": best[1], "reranked": reranked,
                   "hidden": args.hidden, "dim": args.dim, "lm": bool(args.lm), "fold": args.fold,
                   "parameters": sum(x.numel() for x in model.parameters())})
    print(json.dumps(report), flush=True)
    if args.out:
        torch.save({"state": model.state_dict(), "hidden": args.hidden, "dim": args.dim,
                    "buckets": args.buckets}, args.out)


if __name__ == "__main__":
    main()
