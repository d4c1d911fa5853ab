#!/usr/bin/env python3
"""Trains a small word-level GRU language model for re-ranking the predictor's candidates.

Experimental (issue 17): CPU only, one thread, fixed seeds and deterministic algorithms so a
rerun on the same inputs gives the same weights. Reads prepared running text (one document per
line), lower-cases and splits words like the typing benchmark, and stops after --minutes.
"""
import argparse
import collections
import json
import os
import time

import torch

from wordtokens import (  # noqa: F401 (re-exported)
    BOS, PUNCTUATION_TOKENS, UNK, WORD, context_key, key, separator_token, tokens, words)

LEARNING_RATE = 3e-3


class WordGRU(torch.nn.Module):
    def __init__(self, vocab, dim, dropout=0.0):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.gru = torch.nn.GRU(dim, dim, batch_first=True)
        self.out_bias = torch.nn.Parameter(torch.zeros(vocab))
        # Training only (no weights): 0 leaves the arithmetic, and so the pack's bytes, unchanged.
        self.dropout = dropout

    def forward(self, ids, state=None):
        inputs = self.embed(ids)
        if self.dropout and self.training:
            inputs = torch.nn.functional.dropout(inputs, self.dropout)
        hidden, state = self.gru(inputs, state)
        if self.dropout and self.training:
            hidden = torch.nn.functional.dropout(hidden, self.dropout)
        # Output weights tied to the embedding: half the parameters, better on little text.
        return hidden @ self.embed.weight.t() + self.out_bias, state


def load_checkpoint(path):
    """The model of a checkpoint this script wrote, in evaluation mode, and its vocabulary (by id)."""
    checkpoint = torch.load(path)
    model = WordGRU(len(checkpoint["itos"]), checkpoint["dim"])
    model.load_state_dict(checkpoint["state"])
    model.eval()
    return model, checkpoint["itos"]


def uses_punctuation(path):
    """Whether a checkpoint's GRU reads punctuation tokens (train_wordlm.py --punctuation)."""
    return bool(torch.load(path).get("punctuation", False))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--vocab", type=int, default=10000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--minutes", type=float, default=15)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=35)
    ap.add_argument("--max-steps", type=int, default=0,
                    help="stop after this many steps (reproducible; --minutes is only a cap)")
    ap.add_argument("--resume", help="continue from this checkpoint, after the text it has seen")
    ap.add_argument("--case-reachable", action="store_true",
                    help="no loss for a document's first word written in lower case (a fragment such as "
                         "a dictionary's usage example): it teaches <s> that \"the\", \"a\" and \"he\" start messages")
    ap.add_argument("--decay-to", type=float, default=1.0,
                    help="learning rate at --max-steps as a fraction of the first (linear decay; 1: constant)")
    ap.add_argument("--max-epochs", type=float, default=0,
                    help="stop after this many passes over the corpus if that comes before --max-steps "
                         "(a small corpus: German, Russian); the decay then ends there")
    ap.add_argument("--dropout", type=float, default=0.0,
                    help="dropout on the GRU's input and output while training (0: none, the shipped model)")
    ap.add_argument("--punctuation", action="store_true",
                    help="punctuation between words as tokens (sentence end, comma, colon): see separator_token")
    ap.add_argument("--no-punctuation-loss", dest="punctuation_loss", action="store_false",
                    help="with --punctuation, no loss on the punctuation tokens: the GRU reads them and "
                         "spends nothing on predicting them")
    ap.add_argument("--device", default="cpu",
                    help="cuda: for a sweep on a GPU machine (not byte-identical to the CPU build the pack uses)")
    args = ap.parse_args()
    if args.device != "cpu":
        # cuBLAS is deterministic only with a fixed workspace.
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.manual_seed(17)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    lines = open(args.corpus, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    docs = [tokens(line, args.punctuation) for line in lines]
    fragment = [bool(d) and WORD.search(line).group(0)[:1].islower() for d, line in zip(docs, lines)]
    counts = collections.Counter(w for d in docs for w in d)
    counts.pop(UNK, None)  # numbers, with --punctuation: already id 1
    itos = [BOS, UNK] + [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: args.vocab - 2]]
    stoi = {w: i for i, w in enumerate(itos)}
    stream, unreachable = [], []
    for d, frag in zip(docs, fragment):
        stream.append(0)
        if frag and args.case_reachable:
            unreachable.append(len(stream))  # the target after this <s>
        stream.extend(stoi.get(w, 1) for w in d)
    data = torch.tensor(stream, dtype=torch.long, device=args.device)
    n = (len(data) - 1) // args.batch
    inputs = data[: n * args.batch].view(args.batch, n)
    shifted = data.clone()
    shifted[unreachable] = -100  # CrossEntropyLoss's ignore_index
    if args.punctuation and not args.punctuation_loss:
        for token in PUNCTUATION_TOKENS:  # read, never predicted (the predictor offers words)
            shifted[data == stoi[token]] = -100
    targets = shifted[1:n * args.batch + 1].view(args.batch, n)
    if args.max_epochs:
        epoch_steps = len(range(0, n - 1, args.steps))
        args.max_steps = min(args.max_steps or 1 << 62, max(1, int(args.max_epochs * epoch_steps)))
    print(f"tokens {len(data)}  vocab {len(itos)}  unk {float((data == 1).float().mean()):.3f}", flush=True)

    model = WordGRU(len(itos), args.dim, args.dropout).to(args.device)
    first_pos, seen = 0, 0
    if args.resume:
        model.load_state_dict(torch.load(args.resume, map_location=args.device)["state"])
        seen = json.load(open(args.resume + ".json"))["steps"]
        first_pos = (seen * args.steps) % (n - 1)
    opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)

    def learning_rate_factor(done):
        # Linear from 1 to --decay-to over --max-steps: a final low rate settles the weights.
        if not args.max_steps or args.decay_to == 1.0:
            return 1.0
        return 1.0 - (1.0 - args.decay_to) * min(1.0, done / args.max_steps)
    loss_fn = torch.nn.CrossEntropyLoss()
    start, step, epoch = time.time(), seen, 0
    deadline = start + 60 * args.minutes
    while time.time() < deadline:
        state = None
        for pos in range(first_pos, n - 1, args.steps):
            if time.time() >= deadline or (args.max_steps and step >= args.max_steps):
                deadline = 0
                break
            first_pos = 0
            x, y = inputs[:, pos:pos + args.steps], targets[:, pos:pos + args.steps]
            if state is not None:
                state = state.detach()
            logits, state = model(x, state)
            loss = loss_fn(logits.reshape(-1, len(itos)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            for group in opt.param_groups:
                group["lr"] = LEARNING_RATE * learning_rate_factor(step)
            opt.step()
            step += 1
            if step % 200 == 0:
                print(f"epoch {epoch} step {step} pos {pos}/{n} loss {loss.item():.3f} "
                      f"{time.time() - start:.0f}s", flush=True)
        epoch += 1
    torch.save({"state": model.to("cpu").state_dict(), "itos": itos, "dim": args.dim,
                "punctuation": args.punctuation}, args.out)
    json.dump({"steps": step, "epochs_started": epoch, "seconds": time.time() - start},
              open(args.out + ".json", "w"))


if __name__ == "__main__":
    main()
