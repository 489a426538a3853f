#!/usr/bin/python3
"""PyTorch's answers for matmul's broadcasting, repeat and concat, and for grouped-query and
multi-query attention written with them.

tests/fixtures/ops/kernels.safetensors holds, for each case, the inputs, a random R, the
output and the gradient of L = sum(output * R) for every input (autograd):

  matmul.K: a, b, r, out, da, db. torch.matmul(a, b), or with metadata matmul.K.bt = "1",
            torch.matmul(a, b.transpose(-1, -2)): b is then stored [.., N, K].
  repeat.K: x, r, out, dx. Metadata repeat.K = "times axis interleave": interleave 1 is
            torch.repeat_interleave(x, times, dim=axis), 0 is x.repeat with times on that axis.
  concat.K: x0, x1 (, x2), r, out, dx0, dx1 (, dx2). Metadata concat.K = "axis": torch.cat.

tests/fixtures/ops/attention.safetensors is a model (weights and metadata) for the program in
tests/test_broadcast.c: token embeddings; queries of 4 heads; grouped-query keys and values of
2 heads, repeated to 4 the way LLaMA's repeat_kv does (expand, then reshape: not
repeat_interleave); multi-query keys and values of 1 head that torch.matmul broadcasts; both
attentions causal; their outputs concatenated along the columns, mixed by a linear, and scored
against the embeddings. tests/fixtures/ops/attention.case.safetensors holds the input ids, the
labels, the intermediate tensors under the program's stage ids, the loss (the mean
cross-entropy) and grad.NAME for every weight.

Everything is computed in float64 from the float32 numbers that are stored, and stored as
float32. Seeds are fixed: a rerun writes the same bytes.

    /usr/bin/python3 scripts/make_op_fixtures.py          # write, then check
    /usr/bin/python3 scripts/make_op_fixtures.py --check  # only re-read and check
"""

import argparse
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_fixtures as mf  # noqa: E402

ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "fixtures", "ops")

# (a shape, b shape as stored, b transposed)
MATMULS = [
    ((4, 3, 5), (1, 5, 6), False),     # one key head for four query heads
    ((4, 3, 5), (1, 6, 5), True),      # the same with transpose(b): q kᵀ
    ((3, 5), (4, 5, 6), False),        # a without heads against four heads
    ((2, 1, 3, 5), (1, 3, 5, 4), False),  # both sides broadcast, on different axes
    ((2, 3, 3, 5), (3, 4, 5), True),   # b has fewer axes: a missing axis counts as 1
    ((4, 3, 5), (4, 5, 6), False),     # no broadcasting: one product per head
]
# (x shape, times, axis, interleave)
REPEATS = [((2, 3, 4), 3, 0, True), ((2, 3, 4), 2, 1, True), ((2, 3, 4), 3, 0, False),
           ((3, 5), 2, 1, False), ((2, 3, 4), 2, 2, True)]
# (shapes, axis)
CONCATS = [([(2, 3, 4), (1, 3, 4)], 0), ([(3, 2), (3, 5), (3, 1)], 1), ([(2, 3, 4), (2, 3, 2)], 2)]


def rand(gen, shape):
    return (torch.rand(shape, generator=gen, dtype=torch.float32) * 2 - 1)


def grads(fn, inputs, r):
    """fn's output and the gradient of sum(output * r) for each input, in float64."""
    xs = [x.double().requires_grad_(True) for x in inputs]
    out = fn(*xs)
    (out * r.double()).sum().backward()
    return out.float(), [x.grad.float() for x in xs]


def kernel_cases(gen):
    tensors, meta = {}, {}
    for k, (sa, sb, bt) in enumerate(MATMULS):
        a, b = rand(gen, sa), rand(gen, sb)
        f = (lambda x, y: torch.matmul(x, y.transpose(-1, -2))) if bt else torch.matmul
        shape = f(a, b).shape
        r = rand(gen, shape)
        out, (da, db) = grads(f, [a, b], r)
        tensors.update({"matmul.%d.%s" % (k, n): t for n, t in
                        [("a", a), ("b", b), ("r", r), ("out", out), ("da", da), ("db", db)]})
        meta["matmul.%d.bt" % k] = "1" if bt else "0"
    for k, (sx, times, axis, interleave) in enumerate(REPEATS):
        x = rand(gen, sx)
        if interleave:
            f = lambda v: torch.repeat_interleave(v, times, dim=axis)  # noqa: E731
        else:
            reps = [1] * len(sx)
            reps[axis] = times
            f = lambda v: v.repeat(*reps)  # noqa: E731
        r = rand(gen, f(x).shape)
        out, (dx,) = grads(f, [x], r)
        tensors.update({"repeat.%d.x" % k: x, "repeat.%d.r" % k: r, "repeat.%d.out" % k: out, "repeat.%d.dx" % k: dx})
        meta["repeat.%d" % k] = "%d %d %d" % (times, axis, 1 if interleave else 0)
    for k, (shapes, axis) in enumerate(CONCATS):
        xs = [rand(gen, s) for s in shapes]
        f = lambda *v: torch.cat(v, dim=axis)  # noqa: E731
        r = rand(gen, f(*xs).shape)
        out, dxs = grads(f, xs, r)
        for i, (x, dx) in enumerate(zip(xs, dxs)):
            tensors["concat.%d.x%d" % (k, i)] = x
            tensors["concat.%d.dx%d" % (k, i)] = dx
        tensors["concat.%d.r" % k], tensors["concat.%d.out" % k] = r, out
        meta["concat.%d" % k] = "%d" % axis
    return tensors, meta


# The attention model: sizes and weight names (the program in tests/test_broadcast.c).
CFG = dict(d_model=16, nhead=4, kv_heads=2, src_vocab_size=11)
IDS = [3, 7, 1, 9, 4, 10]
LABELS = [7, 1, 9, 4, 10, 2]


def repeat_kv(x, n_rep):
    """[G, T, D] -> [G * n_rep, T, D], key head g serving query heads g*n_rep .. (LLaMA's way)."""
    g, t, d = x.shape
    return x[:, None, :, :].expand(g, n_rep, t, d).reshape(g * n_rep, t, d)


def heads(x, h):
    """[T, h*D] -> [h, T, D]"""
    return x.reshape(x.shape[0], h, -1).transpose(0, 1)


def attend(q, k, v, d_k, seen, name):
    """Causal attention of q [H, T, D] over k, v ([H or 1, T, D]), recording the scores and weights."""
    t = q.shape[1]
    scores = torch.matmul(q, k.transpose(-1, -2))
    causal = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    weights = F.softmax((scores / math.sqrt(d_k)).masked_fill(causal, float("-inf")), dim=-1)
    seen[name + ".scores"], seen[name + ".weights"] = scores, weights
    return torch.matmul(weights, v)


def attention_forward(w, ids):
    d, h, g = CFG["d_model"], CFG["nhead"], CFG["kv_heads"]
    d_k = d // h
    seen = {}
    x = w["emb"][ids]
    q = heads(x @ w["wq"].T, h)
    k_g, v_g = heads(x @ w["wk"].T, g), heads(x @ w["wv"].T, g)
    seen["gqa.k_rep"] = repeat_kv(k_g, h // g)
    ctx_g = attend(q, seen["gqa.k_rep"], repeat_kv(v_g, h // g), d_k, seen, "gqa")
    k_1, v_1 = heads(x @ w["wk1"].T, 1), heads(x @ w["wv1"].T, 1)
    ctx_m = attend(q, k_1, v_1, d_k, seen, "mqa")  # torch.matmul broadcasts the one head
    seen["gqa.context"], seen["mqa.context"] = ctx_g, ctx_m
    joined = torch.cat([ctx_g.transpose(0, 1).reshape(-1, d), ctx_m.transpose(0, 1).reshape(-1, d)], dim=1)
    seen["joined"] = joined
    mixed = joined @ w["wmix"].T
    seen["logits"] = mixed @ w["emb"].T
    return seen


def attention_case(gen):
    d, g = CFG["d_model"], CFG["kv_heads"]
    d_k = d // CFG["nhead"]
    shapes = {"emb": (CFG["src_vocab_size"], d), "wq": (d, d), "wk": (g * d_k, d), "wv": (g * d_k, d),
              "wk1": (d_k, d), "wv1": (d_k, d), "wmix": (d, 2 * d)}
    weights = {n: rand(gen, s) * 0.8 for n, s in shapes.items()}
    w64 = {n: t.double().requires_grad_(True) for n, t in weights.items()}
    seen = attention_forward(w64, torch.tensor(IDS))
    loss = F.cross_entropy(seen["logits"], torch.tensor(LABELS))
    loss.backward()
    # float32 autograd agrees with the float64 reference (either is PyTorch's answer)
    w32 = {n: t.clone().requires_grad_(True) for n, t in weights.items()}
    F.cross_entropy(attention_forward(w32, torch.tensor(IDS))["logits"], torch.tensor(LABELS)).backward()
    for n in weights:
        assert torch.allclose(w32[n].grad.double(), w64[n].grad, atol=1e-5), n
    case = {name: t.detach().float() for name, t in seen.items()}
    case.update({"grad." + n: t.grad.float() for n, t in w64.items()})
    case["src_ids"] = torch.tensor(IDS, dtype=torch.float32)
    case["labels"] = torch.tensor(LABELS, dtype=torch.float32)
    case["loss"] = loss.detach().float().reshape(1)
    meta = {k: str(v) for k, v in CFG.items()}
    return weights, meta, case


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only re-read and check the files")
    args = ap.parse_args()
    torch.set_num_threads(1)
    paths = [os.path.join(OUT, n) for n in ("kernels.safetensors", "attention.safetensors", "attention.case.safetensors")]
    if not args.check:
        os.makedirs(OUT, exist_ok=True)
        gen = torch.Generator().manual_seed(23)
        tensors, meta = kernel_cases(gen)
        mf.write_safetensors(paths[0], tensors, meta)
        weights, model_meta, case = attention_case(gen)
        mf.write_safetensors(paths[1], weights, model_meta)
        mf.write_safetensors(paths[2], case, {"model": "attention.safetensors"})
    for p in paths:
        size, _, arrays = mf.check_safetensors(p)
        print("%s: %d tensors, %d bytes" % (os.path.relpath(p, ROOT), len(arrays), size))


if __name__ == "__main__":
    main()
