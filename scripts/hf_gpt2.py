"""hf_gpt2.py: GPT-2 as Hugging Face's GPT2LMHeadModel computes it, written from its structure
(Conv1D weights [in, out], gelu_new, its eager attention with the causal mask, the head tied to
wte), on the weights of a hub folder: the peer of `stepformer bench --only gpt2`
(scripts/bench_torch.py) and of the browser benchmark (scripts/export_onnx.py).
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn


def read_folder(d):
    """config.json and model.safetensors (F32) of a hub folder, as tensors by name."""
    with open(os.path.join(d, "config.json")) as f:
        conf = json.load(f)
    with open(os.path.join(d, "model.safetensors"), "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            sys.exit("hf_gpt2: %s is %s; the benchmark's folder is F32" % (name, t["dtype"]))
        b, e = t["data_offsets"]
        out[name.removeprefix("transformer.")] = torch.from_numpy(
            np.frombuffer(data, dtype=np.float32, count=(e - b) // 4, offset=b).reshape(t["shape"]).copy())
    return conf, out


class GPT2(nn.Module):
    """GPT2LMHeadModel's forward, written from its structure; `cache` holds each layer's keys and
    values ([1, H, T, D]) for generating."""

    def __init__(self, conf, w):
        super().__init__()
        self.H, self.L, self.eps = conf["n_head"], conf["n_layer"], conf.get("layer_norm_epsilon", 1e-5)
        self.w = w
        self.head = w.get("lm_head.weight", w["wte.weight"])
        P = conf["n_positions"]
        self.causal = torch.tril(torch.ones(P, P, dtype=torch.bool))

    def ln(self, x, name):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], self.w[name + ".weight"], self.w[name + ".bias"], self.eps)

    def conv1d(self, x, name):  # Conv1D: x @ W [in, out] + b
        return torch.addmm(self.w[name + ".bias"], x.view(-1, x.size(-1)), self.w[name + ".weight"]).view(
            *x.shape[:-1], -1)

    def forward(self, ids, cache=None, start=0):
        F = torch.nn.functional
        T = ids.size(1)
        x = self.w["wte.weight"][ids] + self.w["wpe.weight"][start:start + T]
        for i in range(self.L):
            p = "h.%d." % i
            q, k, v = self.conv1d(self.ln(x, p + "ln_1"), p + "attn.c_attn").split(x.size(-1), dim=2)
            q, k, v = (t.view(1, T, self.H, -1).transpose(1, 2) for t in (q, k, v))
            if cache is not None:
                if len(cache) > i:
                    k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
                    cache[i] = (k, v)
                else:
                    cache.append((k, v))
            a = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))  # GPT2Attention._attn, eager
            if T > 1:
                a = torch.where(self.causal[:T, :T], a, torch.tensor(torch.finfo(a.dtype).min))
            a = F.softmax(a, dim=-1) @ v
            x = x + self.conv1d(a.transpose(1, 2).reshape(1, T, -1), p + "attn.c_proj")
            h = F.gelu(self.conv1d(self.ln(x, p + "ln_2"), p + "mlp.c_fc"), approximate="tanh")
            x = x + self.conv1d(h, p + "mlp.c_proj")
        return self.ln(x, "ln_f") @ self.head.t()
