#!/usr/bin/env python3
"""Writes the neural re-ranker's pack sections (issue 17) and the Swift parity fixture.

- NGRU: the word GRU of train_wordlm.py (WordLanguageModel in InklingCore): version, vocabulary
  size, dimension, key-blob length, CRC-32 of the rest; keys (newline-ended, padded to 4); per
  matrix (embedding, GRU input and hidden weights) float row scales + int8 rows; float biases.
- NRRK: the window MLP of train_reranker.py (RerankerNetwork): version, input and layer counts,
  shapes, mean and inverse scale of the inputs, per layer row scales, biases and int8 rows.

Both use symmetric int8 with one scale per row (max |w| / 127), as eval_rerank.py --int8.

  export_sections.py --wordlm wordgru.pt --ngru OUT.ngru [--reranker rr.pt --nrrk OUT.nrrk]
  export_sections.py --neutral-nrrk OUT.nrrk
  export_sections.py --swift-fixture Tests/InklingCoreTests/Model/NeuralFixture.swift

The fixture (pass it through `swift format -i`) is a tiny random model (seed 17) with the
outputs Python computes in float64 from the dequantised weights; the Swift tests check
InklingCore's inference against them.
"""
import argparse
import hashlib
import json
import struct
import sys
import zlib

import torch

NF = 15  # RerankFeature.count


def quantise(weight):
    """(scales [rows], int8 [rows, columns]) of a 2-D tensor."""
    rows = weight.detach().double().reshape(weight.shape[0], -1)
    scale = rows.abs().amax(dim=1).clamp(min=1e-12) / 127
    q = torch.round(rows / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return scale.float(), q


def dequantise(scale, q):
    return q.double() * scale.double()[:, None]


def f32(values):
    values = values.detach().tolist() if isinstance(values, torch.Tensor) else values
    return b"".join(struct.pack("<f", float(v)) for v in values)


def i8(q):
    raw = q.flatten().numpy().tobytes()
    return raw + b"\0" * (-len(raw) % 4)


def ngru_section(state, itos):
    """The NGRU section bytes and the dequantised float64 tensors Swift will compute with."""
    dim = state["embed.weight"].shape[1]
    blob = "".join(k + "\n" for k in itos).encode("utf-8")
    body = blob + b"\0" * (-len(blob) % 4)
    deq = {}
    for name in ("embed.weight", "gru.weight_ih_l0", "gru.weight_hh_l0"):
        scale, q = quantise(state[name])
        body += f32(scale) + i8(q)
        deq[name] = dequantise(scale, q)
    for name in ("gru.bias_ih_l0", "gru.bias_hh_l0", "out_bias"):
        body += f32(state[name].flatten())
        deq[name] = state[name].detach().float().double()
    header = struct.pack("<5I", 1, len(itos), dim, len(blob), zlib.crc32(body))
    return header + body, deq


def nrrk_section(state):
    """The NRRK section bytes and (mean, inverse scale, [(W, b)]) dequantised."""
    layers = sorted({k.split(".")[1] for k in state if k.startswith("mlp.")}, key=int)
    weights = [state[f"mlp.{i}.weight"] for i in layers]
    mean, inv = state["mean"].float(), 1 / state["std"].float()
    out = struct.pack("<3I", 1, weights[0].shape[1], len(weights))
    for w in weights:
        out += struct.pack("<2I", w.shape[0], w.shape[1])
    out += f32(mean) + f32(inv)
    deq = []
    for i, w in zip(layers, weights):
        scale, q = quantise(w)
        bias = state[f"mlp.{i}.bias"].float()
        out += f32(scale) + f32(bias) + i8(q)
        deq.append((dequantise(scale, q), bias.double()))
    return out, (mean.double(), inv.double(), deq)


class Float64GRU:
    """The Swift inference, in float64 torch: start state after <s>, one step per word."""

    def __init__(self, deq, itos):
        self.d = deq
        self.stoi = {w: i for i, w in enumerate(itos)}
        dim = deq["embed.weight"].shape[1]
        self.gru = torch.nn.GRU(dim, dim, batch_first=True).double()
        with torch.no_grad():
            self.gru.weight_ih_l0.copy_(deq["gru.weight_ih_l0"])
            self.gru.weight_hh_l0.copy_(deq["gru.weight_hh_l0"])
            self.gru.bias_ih_l0.copy_(deq["gru.bias_ih_l0"])
            self.gru.bias_hh_l0.copy_(deq["gru.bias_hh_l0"])

    def step(self, state, key):
        wid = 0 if key is None else self.stoi.get(key, 1)
        with torch.no_grad():
            out, state = self.gru(self.d["embed.weight"][wid].view(1, 1, -1), state)
            logits = out[0, 0] @ self.d["embed.weight"].t() + self.d["out_bias"]
        return state, torch.log_softmax(logits, -1)


def mlp_score(net, features):
    mean, inv, layers = net
    x = (torch.tensor(features, dtype=torch.float64) - mean) * inv
    for n, (w, b) in enumerate(layers):
        x = w @ x + b
        if n < len(layers) - 1:
            x = torch.tanh(x)
    return float(x[0])


def swift_bytes(name, data):
    rows = [", ".join(str(b) for b in data[i:i + 24]) for i in range(0, len(data), 24)]
    return f"    static let {name}: [UInt8] = [\n" + "".join(f"        {r},\n" for r in rows) + "    ]\n"


def swift_floats(values):
    return "[" + ", ".join(f"{v:.7g}" for v in values) + "]"


def fixture(path):
    torch.manual_seed(17)
    itos = ["<s>", "<unk>", "the", "cat", "sat", "on", "mat", "a", "dog", "ran", "and", "it"]
    dim = 8
    gru = torch.nn.GRU(dim, dim)
    state = {"embed.weight": torch.randn(len(itos), dim) * 0.8,
             "gru.weight_ih_l0": gru.weight_ih_l0 * 4, "gru.weight_hh_l0": gru.weight_hh_l0 * 4,
             "gru.bias_ih_l0": gru.bias_ih_l0, "gru.bias_hh_l0": gru.bias_hh_l0,
             "out_bias": torch.randn(len(itos)) * 0.5}
    ngru, deq = ngru_section(state, itos)
    width = NF + 2
    mlp = {"mean": torch.randn(width) * 0.5, "std": torch.rand(width) + 0.5,
           "mlp.0.weight": torch.randn(4, width), "mlp.0.bias": torch.randn(4) * 0.3,
           "mlp.2.weight": torch.randn(1, 4), "mlp.2.bias": torch.randn(1) * 0.3}
    nrrk, net = nrrk_section(mlp)
    model = Float64GRU(deq, itos)
    words = ["the", "cat", "sat", "zebra", "on", "the"]
    queries = itos[2:] + ["zebra"]
    st, lp = model.step(None, None)
    expected = [[float(lp[model.stoi.get(q, 1)]) for q in queries]]
    for w in words:
        st, lp = model.step(st, w)
        expected.append([float(lp[model.stoi.get(q, 1)]) for q in queries])
    # One window after "the cat": features 0.1·(i+1)·(−1)^i, the candidate's GRU inputs appended.
    features = [0.1 * (i + 1) * (-1) ** i for i in range(NF)]
    st, lp = model.step(None, None)
    for w in ["the", "cat"]:
        st, lp = model.step(st, w)
    window = ["sat", "zebra", "mat"]
    scores = [1.5 + mlp_score(net, features + [float(lp[model.stoi.get(c, 1)]), float(c not in model.stoi)])
              for c in window]
    with open(path, "w", encoding="utf-8") as out:
        out.write("// Generated by scripts/neural/export_sections.py --swift-fixture; do not edit.\n")
        out.write("// A tiny word GRU (12 words, 8 dimensions) and a 17→4→1 window network, seed 17, with the\n")
        out.write("// outputs PyTorch computes in float64 from the dequantised int8 weights.\n\n")
        out.write("enum NeuralFixture {\n")
        out.write(swift_bytes("wordModelSection", ngru))
        out.write(swift_bytes("rerankerSection", nrrk))
        out.write(f"    static let words: [String] = {words!r}\n".replace("'", '"'))
        out.write(f"    static let queries: [String] = {queries!r}\n".replace("'", '"'))
        out.write("    /// log P(query) at the document start, then after each of `words`.\n")
        out.write("    static let logProbabilities: [[Float]] = [\n")
        for row in expected:
            out.write(f"        {swift_floats(row)},\n")
        out.write("    ]\n")
        out.write(f"    static let windowFeatures: [Float] = {swift_floats(features)}\n")
        out.write(f"    static let window: [String] = {window!r}\n".replace("'", '"'))
        out.write("    /// Scores of `window` after \"the cat\" with predictor score 1.5 and `windowFeatures`.\n")
        out.write(f"    static let windowScores: [Float] = {swift_floats(scores)}\n")
        out.write("}\n")


def summary(sections, states):
    """SHA-256 of each section and (sum, L2 norm) of every trained tensor, for the golden check."""
    tensors = {f"{prefix}.{name}": [float(t.detach().double().sum()), float(t.detach().double().norm())]
               for prefix, state in states.items() for name, t in sorted(state.items())}
    return {"sha256": {tag: hashlib.sha256(data).hexdigest() for tag, data in sections.items()}, "tensors": tensors}


def check_golden(got, golden, tolerance=1e-3):
    """Same bytes, or every tensor's sum and norm within a relative tolerance (another CPU's
    float rounding); anything else is a different model: returns the problems."""
    if got["sha256"] == golden["sha256"]:
        print("golden check: sections identical to the golden build")
        return []
    problems = []
    for name, want in golden["tensors"].items():
        have = got["tensors"].get(name)
        if have is None:
            problems.append(f"{name}: missing")
            continue
        for h, w, what in zip(have, want, ("sum", "norm")):
            if abs(h - w) > tolerance * max(1.0, abs(w)):
                problems.append(f"{name} {what}: {h:.6g}, golden {w:.6g}")
    if not problems:
        print("golden check: bytes differ, every tensor within the tolerance")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wordlm", help="train_wordlm.py checkpoint")
    ap.add_argument("--ngru", help="write the NGRU section here")
    ap.add_argument("--reranker", help="train_reranker.py --lm checkpoint")
    ap.add_argument("--nrrk", help="write the NRRK section here")
    ap.add_argument("--neutral-nrrk", help="write a window network that changes no score here (its last layer "
                    "is zero, as train_reranker.py starts it): a pack with the word model and it gives the "
                    "predictor's window with the word model's likely words, for dump_candidates.py")
    ap.add_argument("--swift-fixture", help="write the Swift parity fixture here")
    ap.add_argument("--parity", help="with --wordlm: write PyTorch's log-probabilities of --parity-queries after "
                    "each word of --parity-words here (JSON), for WordLanguageModelTests' real-model check")
    ap.add_argument("--parity-words", default="i think that the government should not be able to tell us what")
    ap.add_argument("--parity-queries", default="the a to be of and is it that this zzqx government people")
    ap.add_argument("--summary", help="write the sections' hashes and the weights' sums here (JSON)")
    ap.add_argument("--golden", help="compare with this summary: same bytes or within tolerance, else fail")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.swift_fixture:
        fixture(args.swift_fixture)
    sections, states = {}, {}
    if args.wordlm and args.ngru:
        ck = torch.load(args.wordlm)
        sections["NGRU"], states["wordlm"] = ngru_section(ck["state"], ck["itos"])[0], ck["state"]
        with open(args.ngru, "wb") as out:
            out.write(sections["NGRU"])
    if args.neutral_nrrk:
        from train_reranker import Reranker
        torch.manual_seed(17)
        with open(args.neutral_nrrk, "wb") as out:
            out.write(nrrk_section(Reranker(32, 4096, 0, NF + 2).state_dict())[0])
    if args.reranker and args.nrrk:
        ck = torch.load(args.reranker)
        sections["NRRK"], states["reranker"] = nrrk_section(ck["state"])[0], ck["state"]
        with open(args.nrrk, "wb") as out:
            out.write(sections["NRRK"])
    if args.parity and "NGRU" in sections:
        ck = torch.load(args.wordlm)
        model = Float64GRU(ngru_section(ck["state"], ck["itos"])[1], ck["itos"])
        words, queries = args.parity_words.split(), args.parity_queries.split()
        st, lp = model.step(None, None)
        rows = [[float(lp[model.stoi.get(q, 1)]) for q in queries]]
        for w in words:
            st, lp = model.step(st, w)
            rows.append([float(lp[model.stoi.get(q, 1)]) for q in queries])
        with open(args.parity, "w") as out:
            json.dump({"words": words, "queries": queries, "logProbabilities": rows}, out)
    if args.summary or args.golden:
        got = summary(sections, states)
        if args.summary:
            with open(args.summary, "w") as out:
                json.dump(got, out, indent=1, sort_keys=True)
        if args.golden:
            problems = check_golden(got, json.load(open(args.golden)))
            if problems:
                sys.exit("golden check failed (not the golden model):\n  " + "\n  ".join(problems))


if __name__ == "__main__":
    main()
