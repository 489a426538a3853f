#!/usr/bin/python3
"""Generate reference fixtures for four well-known Transformer codebases.

The reference notes in /work/shared/seeds describe four PyTorch
implementations that our users meet. Each one is rebuilt here as a small
module tree whose state_dict() keys are exactly those of the original, so a
state dict saved from the original loads into stepformer unchanged. The known
mistakes of the notes are fixed (see tests/fixtures/seeds/README.md).

Writes into tests/fixtures/seeds/:

  NAME.safetensors        the randomized state dict, with the configuration
                          in __metadata__ (jadore_nometa: no metadata)
  NAME.caseK.safetensors  one example: inputs, encoder output, logits,
                          every attention map, greedy decoding

for NAME in annotated, scratch_encoder, jadore, jadore_nometa, bloem.

Run with the system interpreter (Debian's python3-torch 1.13 and numpy):

  /usr/bin/python3 scripts/make_seed_fixtures.py          # generate, then check
  /usr/bin/python3 scripts/make_seed_fixtures.py --check  # only re-read and check

The check re-reads every file with a parser of its own and recomputes every
case in float64 NumPy straight from the files. Seeds are fixed and torch runs
on one thread, so a rerun writes identical bytes.
"""

import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

UNK_ID, PAD_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
FIRST_WORD_ID = 4
MASK_FILL = -1e9          # value written into masked scores (all four models)
GREEDY_MAX_LEN = 8
MIN_GAP = 1e-3            # top-1 minus top-2 logit gap required
MAX_ATTEMPTS = 300        # input re-draws allowed per case
MAX_FILE_BYTES = 200 * 1024
REF_ATOL = 2e-5           # float64 NumPy re-computation vs the torch float32 dumps

# One entry per model file. "kind" selects the module tree; "cases" lists the
# examples: src length, tgt length, how many of the src positions at the end
# are <pad>, and for the encoder-decoders the greedy stop reason wanted
# (None = either). Seeds were chosen once so every case has a draw that meets
# the acceptance rule within a few attempts.
CONFIGS = [
    dict(name="annotated", kind="annotated", seed=4105, metadata=True,
         d_model=32, nhead=4, n_enc=2, n_dec=2, d_ff=64,
         src_vocab=23, tgt_vocab=29, max_positions=40,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop="max_len"),
                dict(src_len=9, tgt_len=5, n_pad=2, stop="eos")]),
    dict(name="scratch_encoder", kind="scratch", seed=4202, metadata=True,
         d_model=24, nhead=4, n_enc=3, n_dec=0, d_ff=40, src_vocab=19,
         cases=[dict(src_len=7, n_pad=0),
                dict(src_len=9, n_pad=2)]),
    dict(name="jadore", kind="jadore", seed=4312, metadata=True,
         d_model=32, nhead=4, d_k=6, d_v=10, n_enc=2, n_dec=2, d_ff=48,
         src_vocab=27, tgt_vocab=27, max_positions=50,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop=None),
                dict(src_len=8, tgt_len=5, n_pad=2, stop=None)]),
    dict(name="jadore_nometa", kind="jadore", seed=4404, metadata=False,
         d_model=32, nhead=4, d_k=6, d_v=10, n_enc=2, n_dec=2, d_ff=48,
         src_vocab=27, tgt_vocab=27, max_positions=50,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop=None)]),
    dict(name="bloem", kind="bloem", seed=4505, metadata=True,
         d_model=32, nhead=4, n_enc=2, n_dec=0, d_ff=128, src_vocab=26,
         max_positions=16, num_classes=5,
         cases=[dict(src_len=9, n_pad=0),
                dict(src_len=16, n_pad=0)]),
]


# ==========================================================================
# safetensors: a writer, and a separate from-scratch parser for checking
# ==========================================================================

def write_safetensors(path, tensors, metadata=None):
    """Store float32 tensors packed in name order after a JSON header whose
    length makes the data start on an 8-byte boundary."""
    head = {}
    if metadata is not None:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
        head["__metadata__"] = dict(metadata)
    blobs = []
    pos = 0
    for key in sorted(tensors):
        t = tensors[key].detach()
        assert t.dtype == torch.float32, (key, t.dtype)
        assert bool(torch.isfinite(t).all()), key + " holds NaN or Inf"
        raw = np.ascontiguousarray(t.cpu().numpy(), dtype="<f4").tobytes(order="C")
        head[key] = {"dtype": "F32", "shape": list(map(int, t.shape)),
                     "data_offsets": [pos, pos + len(raw)]}
        blobs.append(raw)
        pos += len(raw)
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=True).encode("ascii")
    pad = (8 - (len(text) + 8) % 8) % 8
    text += b" " * pad
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """Parse and validate a file using only struct, json and numpy.

    Returns (size in bytes, metadata dict or None, {name: float64 array})."""
    with open(path, "rb") as f:
        data = f.read()
    where = os.path.basename(path)
    if len(data) < 8:
        raise ValueError(where + ": shorter than the length prefix")
    hlen = struct.unpack("<Q", data[:8])[0]
    if hlen > len(data) - 8:
        raise ValueError(where + ": header runs past the end")
    if (8 + hlen) % 8:
        raise ValueError(where + ": data does not start on an 8-byte boundary")
    header = json.loads(data[8:8 + hlen].decode("ascii"))
    body = data[8 + hlen:]
    meta = header.pop("__metadata__", None)
    if meta is not None and not all(isinstance(v, str) for v in meta.values()):
        raise ValueError(where + ": a metadata value is not a string")
    out = {}
    expect = 0
    for name, info in sorted(header.items(), key=lambda item: item[1]["data_offsets"][0]):
        if info["dtype"] != "F32":
            raise ValueError("%s: %s is %s, not F32" % (where, name, info["dtype"]))
        shape = info["shape"]
        if not all(isinstance(s, int) and s >= 0 for s in shape):
            raise ValueError("%s: %s has a bad shape %r" % (where, name, shape))
        lo, hi = info["data_offsets"]
        if lo != expect:
            raise ValueError("%s: gap or overlap before %s" % (where, name))
        if hi - lo != 4 * int(np.prod(shape, dtype=np.int64)) or hi > len(body):
            raise ValueError("%s: %s size does not match its shape" % (where, name))
        arr = np.frombuffer(body, dtype="<f4", count=(hi - lo) // 4, offset=lo)
        arr = arr.reshape(shape).astype(np.float64)
        if not np.isfinite(arr).all():
            raise ValueError("%s: %s holds NaN or Inf" % (where, name))
        out[name] = arr
        expect = hi
    if expect != len(body):
        raise ValueError("%s: %d stray bytes after the last tensor" % (where, len(body) - expect))
    return len(data), meta, out


# ==========================================================================
# positional tables
# ==========================================================================

def sinusoid_float32(rows, d_model):
    """[rows, d_model] table the Annotated Transformer way, all in float32:
    frequency exp(2i * -(ln 10000 / d)), sin on even columns, cos on odd."""
    freq = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
    angle = torch.arange(0, rows).unsqueeze(1) * freq
    table = torch.zeros(rows, d_model)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    assert table.dtype == torch.float32
    return table


def sinusoid_float64_then_32(rows, d_model):
    """[1, rows, d_model] table the jadore801120 way: pos / 10000^(2*(j//2)/d)
    evaluated in float64 by NumPy, sin/cos, then rounded to float32."""
    col = np.arange(d_model)
    denom = np.power(10000, 2 * (col // 2) / d_model)
    angle = np.arange(rows, dtype=np.float64)[:, None] / denom[None, :]
    angle[:, 0::2] = np.sin(angle[:, 0::2])
    angle[:, 1::2] = np.cos(angle[:, 1::2])
    return torch.from_numpy(angle.astype(np.float32)).unsqueeze(0)


# ==========================================================================
# 1. The Annotated Transformer (note 000), batch first
# ==========================================================================

class AnnLayerNorm(nn.Module):
    """gain * (x - mean) / (unbiased std + eps) + bias."""

    def __init__(self, features, eps=1e-6):
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(features))
        self.b_2 = nn.Parameter(torch.zeros(features))
        self.eps = eps

    def forward(self, x):
        centre = x.mean(-1, keepdim=True)
        spread = x.std(-1, keepdim=True)
        return self.a_2 * (x - centre) / (spread + self.eps) + self.b_2


class AnnSublayerConnection(nn.Module):
    """Pre-norm residual: x + f(norm(x)). Dropout is 0 here."""

    def __init__(self, size):
        super().__init__()
        self.norm = AnnLayerNorm(size)

    def forward(self, x, fn):
        return x + fn(self.norm(x))


def ann_scaled_attention(q, k, v, mask):
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, MASK_FILL)
    probs = scores.softmax(dim=-1)
    return torch.matmul(probs, v), probs


class AnnMultiHeadedAttention(nn.Module):
    def __init__(self, h, d_model):
        super().__init__()
        assert d_model % h == 0
        self.h = h
        self.d_k = d_model // h
        # q, k, v and output projections, in that order
        self.linears = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(4)])
        self.attn = None

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask = mask.unsqueeze(1)              # one mask for every head
        nb = query.size(0)
        heads = []
        for proj, inp in zip(self.linears[:3], (query, key, value)):
            heads.append(proj(inp).view(nb, -1, self.h, self.d_k).transpose(1, 2))
        ctx, self.attn = ann_scaled_attention(heads[0], heads[1], heads[2], mask)
        ctx = ctx.transpose(1, 2).contiguous().view(nb, -1, self.h * self.d_k)
        return self.linears[3](ctx)


class AnnPositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.w_2(self.w_1(x).relu())


class AnnEncoderLayer(nn.Module):
    def __init__(self, size, h, d_ff):
        super().__init__()
        self.self_attn = AnnMultiHeadedAttention(h, size)
        self.feed_forward = AnnPositionwiseFeedForward(size, d_ff)
        self.sublayer = nn.ModuleList([AnnSublayerConnection(size) for _ in range(2)])
        self.size = size

    def forward(self, x, mask):
        x = self.sublayer[0](x, lambda y: self.self_attn(y, y, y, mask))
        return self.sublayer[1](x, self.feed_forward)


class AnnEncoder(nn.Module):
    def __init__(self, size, h, d_ff, n):
        super().__init__()
        self.layers = nn.ModuleList([AnnEncoderLayer(size, h, d_ff) for _ in range(n)])
        self.norm = AnnLayerNorm(size)

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class AnnDecoderLayer(nn.Module):
    def __init__(self, size, h, d_ff):
        super().__init__()
        self.size = size
        self.self_attn = AnnMultiHeadedAttention(h, size)
        self.src_attn = AnnMultiHeadedAttention(h, size)
        self.feed_forward = AnnPositionwiseFeedForward(size, d_ff)
        self.sublayer = nn.ModuleList([AnnSublayerConnection(size) for _ in range(3)])

    def forward(self, x, memory, src_mask, tgt_mask):
        x = self.sublayer[0](x, lambda y: self.self_attn(y, y, y, tgt_mask))
        # cross-attention on the encoder output (the note calls self_attn here)
        x = self.sublayer[1](x, lambda y: self.src_attn(y, memory, memory, src_mask))
        return self.sublayer[2](x, self.feed_forward)


class AnnDecoder(nn.Module):
    def __init__(self, size, h, d_ff, n):
        super().__init__()
        self.layers = nn.ModuleList([AnnDecoderLayer(size, h, d_ff) for _ in range(n)])
        self.norm = AnnLayerNorm(size)

    def forward(self, x, memory, src_mask, tgt_mask):
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        return self.norm(x)


class AnnEmbeddings(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.lut = nn.Embedding(vocab, d_model)
        self.d_model = d_model

    def forward(self, ids):
        return self.lut(ids) * math.sqrt(self.d_model)


class AnnPositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        self.register_buffer("pe", sinusoid_float32(max_len, d_model).unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, :x.size(1)].detach()


class AnnGenerator(nn.Module):
    def __init__(self, d_model, vocab):
        super().__init__()
        self.proj = nn.Linear(d_model, vocab)

    def forward(self, x):
        return F.log_softmax(self.proj(x), dim=-1)


class AnnEncoderDecoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, h, ff = cfg["d_model"], cfg["nhead"], cfg["d_ff"]
        self.encoder = AnnEncoder(d, h, ff, cfg["n_enc"])
        self.decoder = AnnDecoder(d, h, ff, cfg["n_dec"])
        self.src_embed = nn.Sequential(AnnEmbeddings(d, cfg["src_vocab"]),
                                       AnnPositionalEncoding(d, cfg["max_positions"]))
        self.tgt_embed = nn.Sequential(AnnEmbeddings(d, cfg["tgt_vocab"]),
                                       AnnPositionalEncoding(d, cfg["max_positions"]))
        self.generator = AnnGenerator(d, cfg["tgt_vocab"])

    def forward(self, src, tgt, src_mask, tgt_mask):
        return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)

    def encode(self, src, src_mask):
        return self.encoder(self.src_embed(src), src_mask)

    def decode(self, memory, src_mask, tgt, tgt_mask):
        return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)


def later_positions_hidden(n):
    """[1, n, n] bool, True where query i may look at key j (j <= i)."""
    return torch.triu(torch.ones(1, n, n, dtype=torch.uint8), diagonal=1) == 0


def ann_masks(src, tgt):
    src_mask = (src != PAD_ID).unsqueeze(-2)
    tgt_mask = (tgt != PAD_ID).unsqueeze(-2) & later_positions_hidden(tgt.size(-1))
    return src_mask, tgt_mask


def annotated_keys(cfg):
    keys = []
    for side in ("src", "tgt"):
        keys += ["%s_embed.0.lut.weight" % side, "%s_embed.1.pe" % side]

    def attn(prefix):
        return ["%s.linears.%d.%s" % (prefix, j, w) for j in range(4) for w in ("weight", "bias")]

    def ff(prefix):
        return ["%s.feed_forward.%s.%s" % (prefix, lin, w)
                for lin in ("w_1", "w_2") for w in ("weight", "bias")]

    def norms(prefix, count):
        return ["%s.sublayer.%d.norm.%s" % (prefix, j, w)
                for j in range(count) for w in ("a_2", "b_2")]

    for i in range(cfg["n_enc"]):
        p = "encoder.layers.%d" % i
        keys += attn(p + ".self_attn") + ff(p) + norms(p, 2)
    keys += ["encoder.norm.a_2", "encoder.norm.b_2"]
    for i in range(cfg["n_dec"]):
        p = "decoder.layers.%d" % i
        keys += attn(p + ".self_attn") + attn(p + ".src_attn") + ff(p) + norms(p, 3)
    keys += ["decoder.norm.a_2", "decoder.norm.b_2"]
    keys += ["generator.proj.weight", "generator.proj.bias"]
    return keys


# ==========================================================================
# 2. The from-scratch encoder (note 001), with an embedding in front
# ==========================================================================

class ScratchLayerNormalisation(nn.Module):
    """gamma * (x - mean) / sqrt(biased var + eps) + beta over the last dims."""

    def __init__(self, parameters_shape, eps=1e-5):
        super().__init__()
        self.parameters_shape = list(parameters_shape)
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(self.parameters_shape))
        self.beta = nn.Parameter(torch.zeros(self.parameters_shape))

    def forward(self, x):
        axes = tuple(range(-len(self.parameters_shape), 0))
        centre = x.mean(dim=axes, keepdim=True)
        var = ((x - centre) ** 2).mean(dim=axes, keepdim=True)
        return self.gamma * ((x - centre) / (var + self.eps).sqrt()) + self.beta


def scratch_attention(q, k, v, additive_mask):
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    if additive_mask is not None:
        scores = scores + additive_mask
    probs = F.softmax(scores, dim=-1)
    return torch.matmul(probs, v), probs


class ScratchMultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.d_model = d_model
        self.n_head = n_head
        self.d_head = d_model // n_head
        self.qkv_layer = nn.Linear(d_model, 3 * d_model)
        self.linear_layer = nn.Linear(d_model, d_model)
        self.attention = None

    def forward(self, x, mask=None):
        nb, length, _ = x.size()
        # per head, 3*d_head consecutive outputs: its q, then k, then v
        qkv = self.qkv_layer(x).reshape(nb, length, self.n_head, 3 * self.d_head)
        qkv = qkv.permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        values, self.attention = scratch_attention(q, k, v, mask)
        # fixed: bring the head axis back next to d_head before merging
        values = values.permute(0, 2, 1, 3).reshape(nb, length, self.d_model)
        return self.linear_layer(values)


class ScratchFeedForward(nn.Module):
    def __init__(self, d_model, hidden):
        super().__init__()
        self.linear1 = nn.Linear(d_model, hidden)
        self.linear2 = nn.Linear(hidden, d_model)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.linear2(self.relu(self.linear1(x)))


class ScratchEncoderLayer(nn.Module):
    def __init__(self, d_model, hidden, n_head):
        super().__init__()
        self.attention = ScratchMultiHeadAttention(d_model, n_head)
        self.norm1 = ScratchLayerNormalisation([d_model])
        self.ffn = ScratchFeedForward(d_model, hidden)
        self.norm2 = ScratchLayerNormalisation([d_model])

    def forward(self, x, mask):
        x = self.norm1(self.attention(x, mask=mask) + x)
        # fixed: the second residual is the output of the first add & norm
        return self.norm2(self.ffn(x) + x)


class ScratchEncoderModel(nn.Module):
    """Token embedding * sqrt(d) + sinusoid, then the post-norm layers."""

    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.d_model = d
        self.embedding = nn.Embedding(cfg["src_vocab"], d)
        self.layers = nn.ModuleList(
            [ScratchEncoderLayer(d, cfg["d_ff"], cfg["nhead"]) for _ in range(cfg["n_enc"])])

    def forward(self, src):
        nb, length = src.size()
        x = self.embedding(src) * math.sqrt(self.d_model)
        x = x + sinusoid_float32(length, self.d_model).unsqueeze(0)
        hidden = (src == PAD_ID).view(nb, 1, 1, length)
        mask = torch.zeros(nb, 1, 1, length).masked_fill(hidden, MASK_FILL)
        for layer in self.layers:
            x = layer(x, mask)
        return x


def scratch_keys(cfg):
    keys = ["embedding.weight"]
    for i in range(cfg["n_enc"]):
        p = "layers.%d." % i
        for sub in ("attention.qkv_layer", "attention.linear_layer", "ffn.linear1", "ffn.linear2"):
            keys += [p + sub + ".weight", p + sub + ".bias"]
        for norm in ("norm1", "norm2"):
            keys += [p + norm + ".gamma", p + norm + ".beta"]
    return keys


# ==========================================================================
# 3. jadore801120/attention-is-all-you-need-pytorch (note 003)
# ==========================================================================

class JadScaledDotProductAttention(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, q, k, v, mask=None):
        scores = torch.matmul(q / self.temperature, k.transpose(2, 3))
        if mask is not None:
            scores = scores.masked_fill(mask == 0, MASK_FILL)
        probs = F.softmax(scores, dim=-1)
        return torch.matmul(probs, v), probs


class JadMultiHeadAttention(nn.Module):
    """Bias-free projections, then residual add and LayerNorm inside."""

    def __init__(self, n_head, d_model, d_k, d_v):
        super().__init__()
        self.n_head, self.d_k, self.d_v = n_head, d_k, d_v
        self.w_qs = nn.Linear(d_model, n_head * d_k, bias=False)
        self.w_ks = nn.Linear(d_model, n_head * d_k, bias=False)
        self.w_vs = nn.Linear(d_model, n_head * d_v, bias=False)
        self.fc = nn.Linear(n_head * d_v, d_model, bias=False)
        self.attention = JadScaledDotProductAttention(temperature=d_k ** 0.5)
        self.layer_norm = nn.LayerNorm(d_model, eps=1e-6)

    def forward(self, q, k, v, mask=None):
        nb, lq, lk, lv = q.size(0), q.size(1), k.size(1), v.size(1)
        residual = q
        q = self.w_qs(q).view(nb, lq, self.n_head, self.d_k).transpose(1, 2)
        k = self.w_ks(k).view(nb, lk, self.n_head, self.d_k).transpose(1, 2)
        v = self.w_vs(v).view(nb, lv, self.n_head, self.d_v).transpose(1, 2)
        if mask is not None:
            mask = mask.unsqueeze(1)
        out, attn = self.attention(q, k, v, mask=mask)
        out = out.transpose(1, 2).contiguous().view(nb, lq, -1)
        out = self.fc(out) + residual
        return self.layer_norm(out), attn


class JadPositionwiseFeedForward(nn.Module):
    def __init__(self, d_in, d_hid):
        super().__init__()
        self.w_1 = nn.Linear(d_in, d_hid)
        self.w_2 = nn.Linear(d_hid, d_in)
        self.layer_norm = nn.LayerNorm(d_in, eps=1e-6)

    def forward(self, x):
        return self.layer_norm(self.w_2(F.relu(self.w_1(x))) + x)


class JadEncoderLayer(nn.Module):
    def __init__(self, d_model, d_inner, n_head, d_k, d_v):
        super().__init__()
        self.slf_attn = JadMultiHeadAttention(n_head, d_model, d_k, d_v)
        self.pos_ffn = JadPositionwiseFeedForward(d_model, d_inner)

    def forward(self, x, slf_attn_mask=None):
        x, attn = self.slf_attn(x, x, x, mask=slf_attn_mask)
        return self.pos_ffn(x), attn


class JadDecoderLayer(nn.Module):
    def __init__(self, d_model, d_inner, n_head, d_k, d_v):
        super().__init__()
        self.slf_attn = JadMultiHeadAttention(n_head, d_model, d_k, d_v)
        self.enc_attn = JadMultiHeadAttention(n_head, d_model, d_k, d_v)
        self.pos_ffn = JadPositionwiseFeedForward(d_model, d_inner)

    def forward(self, x, enc_output, slf_attn_mask=None, dec_enc_attn_mask=None):
        x, self_map = self.slf_attn(x, x, x, mask=slf_attn_mask)
        x, cross_map = self.enc_attn(x, enc_output, enc_output, mask=dec_enc_attn_mask)
        return self.pos_ffn(x), self_map, cross_map


class JadPositionalEncoding(nn.Module):
    def __init__(self, d_hid, n_position):
        super().__init__()
        self.register_buffer("pos_table", sinusoid_float64_then_32(n_position, d_hid))

    def forward(self, x):
        return x + self.pos_table[:, :x.size(1)].clone().detach()


class JadEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.src_word_emb = nn.Embedding(cfg["src_vocab"], d, padding_idx=PAD_ID)
        self.position_enc = JadPositionalEncoding(d, cfg["max_positions"])
        self.layer_stack = nn.ModuleList([
            JadEncoderLayer(d, cfg["d_ff"], cfg["nhead"], cfg["d_k"], cfg["d_v"])
            for _ in range(cfg["n_enc"])])
        self.layer_norm = nn.LayerNorm(d, eps=1e-6)

    def forward(self, src_seq, src_mask, return_attns=False):
        x = self.layer_norm(self.position_enc(self.src_word_emb(src_seq)))
        maps = []
        for layer in self.layer_stack:
            x, attn = layer(x, slf_attn_mask=src_mask)
            maps.append(attn)
        return (x, maps) if return_attns else (x,)


class JadDecoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.trg_word_emb = nn.Embedding(cfg["tgt_vocab"], d, padding_idx=PAD_ID)
        self.position_enc = JadPositionalEncoding(d, cfg["max_positions"])
        self.layer_stack = nn.ModuleList([
            JadDecoderLayer(d, cfg["d_ff"], cfg["nhead"], cfg["d_k"], cfg["d_v"])
            for _ in range(cfg["n_dec"])])
        self.layer_norm = nn.LayerNorm(d, eps=1e-6)

    def forward(self, trg_seq, trg_mask, enc_output, src_mask, return_attns=False):
        x = self.layer_norm(self.position_enc(self.trg_word_emb(trg_seq)))
        self_maps, cross_maps = [], []
        for layer in self.layer_stack:
            x, a, b = layer(x, enc_output, slf_attn_mask=trg_mask, dec_enc_attn_mask=src_mask)
            self_maps.append(a)
            cross_maps.append(b)
        return (x, self_maps, cross_maps) if return_attns else (x,)


def jad_pad_mask(seq):
    return (seq != PAD_ID).unsqueeze(-2)


def jad_subsequent_mask(seq):
    n = seq.size(1)
    return (1 - torch.triu(torch.ones((1, n, n)), diagonal=1)).bool()


class JadTransformer(nn.Module):
    """Repository defaults: both weight sharings on, scale_emb_or_prj='prj'."""

    def __init__(self, cfg):
        super().__init__()
        assert cfg["src_vocab"] == cfg["tgt_vocab"]
        self.d_model = cfg["d_model"]
        self.encoder = JadEncoder(cfg)
        self.decoder = JadDecoder(cfg)
        self.trg_word_prj = nn.Linear(cfg["d_model"], cfg["tgt_vocab"], bias=False)
        self.trg_word_prj.weight = self.decoder.trg_word_emb.weight
        self.encoder.src_word_emb.weight = self.decoder.trg_word_emb.weight

    def forward(self, src_seq, trg_seq):
        src_mask = jad_pad_mask(src_seq)
        trg_mask = jad_pad_mask(trg_seq) & jad_subsequent_mask(trg_seq)
        enc_output, *_ = self.encoder(src_seq, src_mask)
        dec_output, *_ = self.decoder(trg_seq, trg_mask, enc_output, src_mask)
        seq_logit = self.trg_word_prj(dec_output) * self.d_model ** -0.5
        return seq_logit.view(-1, seq_logit.size(2))


def jadore_keys(cfg):
    def attn(prefix):
        return ["%s.%s.weight" % (prefix, w) for w in ("w_qs", "w_ks", "w_vs", "fc")] + \
               [prefix + ".layer_norm.weight", prefix + ".layer_norm.bias"]

    def ffn(prefix):
        return ["%s.pos_ffn.%s.%s" % (prefix, part, w)
                for part in ("w_1", "w_2", "layer_norm") for w in ("weight", "bias")]

    keys = ["encoder.src_word_emb.weight", "encoder.position_enc.pos_table",
            "encoder.layer_norm.weight", "encoder.layer_norm.bias"]
    for i in range(cfg["n_enc"]):
        p = "encoder.layer_stack.%d" % i
        keys += attn(p + ".slf_attn") + ffn(p)
    keys += ["decoder.trg_word_emb.weight", "decoder.position_enc.pos_table",
             "decoder.layer_norm.weight", "decoder.layer_norm.bias"]
    for i in range(cfg["n_dec"]):
        p = "decoder.layer_stack.%d" % i
        keys += attn(p + ".slf_attn") + attn(p + ".enc_attn") + ffn(p)
    keys += ["trg_word_prj.weight"]
    return keys


JADORE_SHARED = ["encoder.src_word_emb.weight", "decoder.trg_word_emb.weight",
                 "trg_word_prj.weight"]


# ==========================================================================
# 4. Peter Bloem's classifier built from the note-004 block
# ==========================================================================

class BloemSelfAttention(nn.Module):
    def __init__(self, k, heads):
        super().__init__()
        assert k % heads == 0
        self.k, self.heads = k, heads
        self.to_keys = nn.Linear(k, k, bias=False)
        self.to_queries = nn.Linear(k, k, bias=False)
        self.to_values = nn.Linear(k, k, bias=False)
        self.unify_heads = nn.Linear(k, k)
        self.last_weights = None

    def forward(self, x):
        b, t, k = x.size()
        h = self.heads
        s = k // h

        def fold(y):          # [b, t, k] -> [b*h, t, s], head-major
            return y.view(b, t, h, s).transpose(1, 2).contiguous().view(b * h, t, s)

        keys = fold(self.to_keys(x))
        queries = fold(self.to_queries(x))
        values = fold(self.to_values(x))
        dot = torch.bmm(queries, keys.transpose(1, 2)) / (k ** 0.5)
        dot = F.softmax(dot, dim=2)
        self.last_weights = dot.view(b, h, t, t)
        out = torch.bmm(dot, values).view(b, h, t, s)
        out = out.transpose(1, 2).contiguous().view(b, t, s * h)
        return self.unify_heads(out)


class BloemTransformerBlock(nn.Module):
    def __init__(self, k, heads):
        super().__init__()
        self.attention = BloemSelfAttention(k, heads)
        self.norm_1 = nn.LayerNorm(k)
        self.norm_2 = nn.LayerNorm(k)
        self.ff = nn.Sequential(nn.Linear(k, 4 * k), nn.ReLU(), nn.Linear(4 * k, k))

    def forward(self, x):
        x = self.norm_1(self.attention(x) + x)
        return self.norm_2(self.ff(x) + x)


class BloemClassifier(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        k = cfg["d_model"]
        self.token_embedding = nn.Embedding(cfg["src_vocab"], k)
        self.pos_embedding = nn.Embedding(cfg["max_positions"], k)
        self.tblocks = nn.Sequential(
            *[BloemTransformerBlock(k, cfg["nhead"]) for _ in range(cfg["n_enc"])])
        self.toprobs = nn.Linear(k, cfg["num_classes"])

    def class_scores(self, x):
        tokens = self.token_embedding(x)
        b, t, k = tokens.size()
        positions = self.pos_embedding(torch.arange(t))[None, :, :].expand(b, t, k)
        h = self.tblocks(tokens + positions)
        return self.toprobs(h.max(dim=1)[0])

    def forward(self, x):
        return F.log_softmax(self.class_scores(x), dim=1)


def bloem_keys(cfg):
    keys = ["token_embedding.weight", "pos_embedding.weight"]
    for i in range(cfg["n_enc"]):
        p = "tblocks.%d." % i
        keys += [p + "attention.%s.weight" % w for w in ("to_keys", "to_queries", "to_values")]
        keys += [p + "attention.unify_heads.weight", p + "attention.unify_heads.bias"]
        for sub in ("norm_1", "norm_2", "ff.0", "ff.2"):
            keys += [p + sub + ".weight", p + sub + ".bias"]
    keys += ["toprobs.weight", "toprobs.bias"]
    return keys


KEY_TEMPLATES = {"annotated": annotated_keys, "scratch": scratch_keys,
                 "jadore": jadore_keys, "bloem": bloem_keys}
MODEL_CLASSES = {"annotated": AnnEncoderDecoder, "scratch": ScratchEncoderModel,
                 "jadore": JadTransformer, "bloem": BloemClassifier}
ENC_DEC = ("annotated", "jadore")


# ==========================================================================
# randomization and metadata
# ==========================================================================

def randomize(model):
    """Embeddings N(0, 1); other matrices xavier-uniform; biases N(0, 0.1);
    norm gains 1 + N(0, 0.1) and norm biases N(0, 0.1). The global torch RNG
    is consumed in named_parameters() order (shared weights once)."""
    role = {}
    for m in model.modules():
        own = dict(m.named_parameters(recurse=False))
        if isinstance(m, nn.Embedding):
            role[id(m.weight)] = "embedding"
        elif isinstance(m, nn.Linear):
            role.setdefault(id(m.weight), "matrix")
            if m.bias is not None:
                role[id(m.bias)] = "bias"
        elif isinstance(m, nn.LayerNorm):
            role[id(m.weight)], role[id(m.bias)] = "gain", "bias"
        elif isinstance(m, AnnLayerNorm):
            role[id(m.a_2)], role[id(m.b_2)] = "gain", "bias"
        elif isinstance(m, ScratchLayerNormalisation):
            role[id(m.gamma)], role[id(m.beta)] = "gain", "bias"
        else:
            assert not own, (type(m).__name__, list(own))
    with torch.no_grad():
        for name, p in model.named_parameters():
            kind = role[id(p)]
            if kind == "embedding":
                p.normal_(0.0, 1.0)
            elif kind == "matrix":
                nn.init.xavier_uniform_(p)
            elif kind == "gain":
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(0.1 * torch.randn_like(p))


def build_model(cfg):
    torch.manual_seed(cfg["seed"])
    model = MODEL_CLASSES[cfg["kind"]](cfg)
    randomize(model)
    model.eval()
    return model


def model_metadata(cfg):
    meta = {
        "d_model": cfg["d_model"],
        "nhead": cfg["nhead"],
        "num_encoder_layers": cfg["n_enc"],
        "num_decoder_layers": cfg["n_dec"],
        "dim_feedforward": cfg["d_ff"],
        "src_vocab_size": cfg["src_vocab"],
    }
    if cfg["kind"] in ENC_DEC:
        meta["tgt_vocab_size"] = cfg["tgt_vocab"]
    if "max_positions" in cfg:
        meta["max_positions"] = cfg["max_positions"]
    if cfg["kind"] == "jadore":
        meta["d_k"], meta["d_v"] = cfg["d_k"], cfg["d_v"]
    if cfg["kind"] == "bloem":
        meta["num_classes"] = cfg["num_classes"]
    if cfg["kind"] in ENC_DEC:
        meta.update(unk_id=UNK_ID, pad_id=PAD_ID, bos_id=BOS_ID, eos_id=EOS_ID)
    if cfg["kind"] == "scratch":
        meta["pad_id"] = PAD_ID
    return {k: str(v) for k, v in meta.items()}


def check_state_keys(cfg, names):
    want = KEY_TEMPLATES[cfg["kind"]](cfg)
    assert len(want) == len(set(want)), "duplicate key in the template"
    assert sorted(names) == sorted(want), (
        cfg["name"], sorted(set(names) ^ set(want)))


# ==========================================================================
# running the torch models on one example (batch of 1)
# ==========================================================================

def layer_map_name(side, i, what):
    return "%s.layers.%d.%s.weights" % (side, i, what)


def torch_case_annotated(model, src, tgt):
    s, t = src.unsqueeze(0), tgt.unsqueeze(0)
    src_mask, tgt_mask = ann_masks(s, t)
    memory = model.encode(s, src_mask)
    hidden = model.decode(memory, src_mask, t, tgt_mask)
    logits = model.generator.proj(hidden)
    log_probs = model.generator(hidden)
    out = {"memory": memory[0], "logits": logits[0], "log_probs": log_probs[0]}
    for i, layer in enumerate(model.encoder.layers):
        out[layer_map_name("encoder", i, "self_attn")] = layer.self_attn.attn[0]
    for i, layer in enumerate(model.decoder.layers):
        out[layer_map_name("decoder", i, "self_attn")] = layer.self_attn.attn[0]
        out[layer_map_name("decoder", i, "cross_attn")] = layer.src_attn.attn[0]
    out = {k: v.detach().clone() for k, v in out.items()}
    # the whole EncoderDecoder call must give the same bits
    full = model.generator(model(s, tgt=t, src_mask=src_mask, tgt_mask=tgt_mask))
    assert torch.equal(full[0], out["log_probs"]), "annotated: split path != forward"
    return out


def torch_next_annotated(model, src, memory_cache):
    s = src.unsqueeze(0)
    src_mask = (s != PAD_ID).unsqueeze(-2)
    if "memory" not in memory_cache:
        memory_cache["memory"] = model.encode(s, src_mask)
    memory = memory_cache["memory"]

    def step(ys):
        y = torch.tensor([ys])
        hidden = model.decode(memory, src_mask, y, later_positions_hidden(len(ys)))
        return model.generator.proj(hidden[:, -1])[0]
    return step


def torch_case_jadore(model, src, tgt):
    s, t = src.unsqueeze(0), tgt.unsqueeze(0)
    src_mask = jad_pad_mask(s)
    trg_mask = jad_pad_mask(t) & jad_subsequent_mask(t)
    memory, enc_maps = model.encoder(s, src_mask, return_attns=True)
    hidden, self_maps, cross_maps = model.decoder(t, trg_mask, memory, src_mask,
                                                  return_attns=True)
    logits = model.trg_word_prj(hidden) * model.d_model ** -0.5
    out = {"memory": memory[0], "logits": logits[0]}
    for i, m in enumerate(enc_maps):
        out[layer_map_name("encoder", i, "self_attn")] = m[0]
    for i, (a, b) in enumerate(zip(self_maps, cross_maps)):
        out[layer_map_name("decoder", i, "self_attn")] = a[0]
        out[layer_map_name("decoder", i, "cross_attn")] = b[0]
    out = {k: v.detach().clone() for k, v in out.items()}
    full = model(s, t)
    assert torch.equal(full, out["logits"]), "jadore: split path != forward"
    return out


def torch_next_jadore(model, src, memory_cache):
    s = src.unsqueeze(0)
    src_mask = jad_pad_mask(s)
    if "memory" not in memory_cache:
        memory_cache["memory"] = model.encoder(s, src_mask)[0]
    memory = memory_cache["memory"]

    def step(ys):
        y = torch.tensor([ys])
        trg_mask = jad_pad_mask(y) & jad_subsequent_mask(y)
        hidden = model.decoder(y, trg_mask, memory, src_mask)[0]
        return (model.trg_word_prj(hidden) * model.d_model ** -0.5)[0, -1]
    return step


def torch_case_scratch(model, src):
    memory = model(src.unsqueeze(0))
    out = {"memory": memory[0]}
    for i, layer in enumerate(model.layers):
        out[layer_map_name("encoder", i, "self_attn")] = layer.attention.attention[0]
    return {k: v.detach().clone() for k, v in out.items()}


def torch_case_bloem(model, src):
    x = src.unsqueeze(0)
    logits = model.class_scores(x)
    out = {"logits": logits[0], "log_probs": F.log_softmax(logits, dim=1)[0]}
    for i, block in enumerate(model.tblocks):
        out[layer_map_name("encoder", i, "self_attn")] = block.attention.last_weights[0]
    out = {k: v.detach().clone() for k, v in out.items()}
    assert torch.equal(model(x)[0], out["log_probs"]), "bloem: forward differs"
    return out


def greedy(step):
    """step(ys) -> scores of the next token. Returns (appended ids, stop
    reason, smallest top-1 minus top-2 gap)."""
    ys = [BOS_ID]
    smallest = float("inf")
    for _ in range(GREEDY_MAX_LEN):
        row = np.asarray(step(ys), dtype=np.float64)
        top = np.sort(row)[::-1]
        smallest = min(smallest, float(top[0] - top[1]))
        nxt = int(np.argmax(row))
        if nxt == EOS_ID:
            return ys[1:], "eos", smallest
        ys.append(nxt)
    return ys[1:], "max_len", smallest


def top_gap(row):
    top = np.sort(np.asarray(row, dtype=np.float64))[::-1]
    return float(top[0] - top[1])


# ==========================================================================
# an independent float64 NumPy re-computation from the files alone
# ==========================================================================

def np_linear(x, p, name, bias=True):
    y = x @ p[name + ".weight"].T
    return y + p[name + ".bias"] if bias else y


def np_softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_log_softmax(s):
    z = s - s.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def np_torch_norm(x, gain, bias, eps):
    c = x - x.mean(-1, keepdims=True)
    return gain * c / np.sqrt((c * c).mean(-1, keepdims=True) + eps) + bias


def np_ann_norm(x, gain, bias):
    c = x - x.mean(-1, keepdims=True)
    std = np.sqrt((c * c).sum(-1, keepdims=True) / (x.shape[-1] - 1))
    return gain * c / (std + 1e-6) + bias


def np_heads(q, k, v, nh, dk, dv, scale, allowed):
    """Plain per-head attention; allowed [Lq, Lk] bool. Returns (concat, maps)."""
    outs, maps = [], []
    for h in range(nh):
        qh, kh, vh = q[:, h * dk:(h + 1) * dk], k[:, h * dk:(h + 1) * dk], v[:, h * dv:(h + 1) * dv]
        s = np.where(allowed, (qh @ kh.T) * scale, MASK_FILL)
        a = np_softmax(s)
        maps.append(a)
        outs.append(a @ vh)
    return np.concatenate(outs, axis=1), np.stack(maps)


def np_sinusoid(rows, d):
    pos = np.arange(rows, dtype=np.float64)[:, None]
    freq = np.exp(np.arange(0, d, 2) * -(math.log(10000.0) / d))
    table = np.zeros((rows, d))
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq)
    return table


class NumpyAnnotated:
    def __init__(self, cfg, p):
        self.c, self.p = cfg, p

    def attn(self, prefix, xq, xkv, allowed, maps, name):
        d, nh = self.c["d_model"], self.c["nhead"]
        dk = d // nh
        lin = [prefix + ".linears.%d" % j for j in range(4)]
        q, k, v = (np_linear(x, self.p, n) for x, n in zip((xq, xkv, xkv), lin[:3]))
        ctx, a = np_heads(q, k, v, nh, dk, dk, 1.0 / math.sqrt(dk), allowed)
        maps[name] = a
        return np_linear(ctx, self.p, lin[3])

    def norm(self, prefix, x):
        return np_ann_norm(x, self.p[prefix + ".a_2"], self.p[prefix + ".b_2"])

    def ff(self, prefix, x):
        h = np.maximum(np_linear(x, self.p, prefix + ".w_1"), 0.0)
        return np_linear(h, self.p, prefix + ".w_2")

    def embed(self, side, ids):
        d = self.c["d_model"]
        return self.p[side + "_embed.0.lut.weight"][ids] * math.sqrt(d) + \
            self.p[side + "_embed.1.pe"][0, :len(ids)]

    def encode(self, src, maps):
        x = self.embed("src", src)
        keep = np.broadcast_to(src != PAD_ID, (len(src), len(src)))
        for i in range(self.c["n_enc"]):
            p = "encoder.layers.%d" % i
            y = self.norm(p + ".sublayer.0.norm", x)
            x = x + self.attn(p + ".self_attn", y, y, keep, maps,
                              layer_map_name("encoder", i, "self_attn"))
            x = x + self.ff(p + ".feed_forward", self.norm(p + ".sublayer.1.norm", x))
        return self.norm("encoder.norm", x)

    def decode(self, tgt, memory, src, maps):
        x = self.embed("tgt", tgt)
        t = len(tgt)
        causal = np.tril(np.ones((t, t), dtype=bool)) & (tgt != PAD_ID)[None, :]
        cross = np.broadcast_to(src != PAD_ID, (t, len(src)))
        for i in range(self.c["n_dec"]):
            p = "decoder.layers.%d" % i
            y = self.norm(p + ".sublayer.0.norm", x)
            x = x + self.attn(p + ".self_attn", y, y, causal, maps,
                              layer_map_name("decoder", i, "self_attn"))
            y = self.norm(p + ".sublayer.1.norm", x)
            x = x + self.attn(p + ".src_attn", y, memory, cross, maps,
                              layer_map_name("decoder", i, "cross_attn"))
            x = x + self.ff(p + ".feed_forward", self.norm(p + ".sublayer.2.norm", x))
        return np_linear(self.norm("decoder.norm", x), self.p, "generator.proj")


class NumpyJadore:
    def __init__(self, cfg, p):
        self.c, self.p = cfg, p

    def block(self, prefix, xq, xkv, allowed, maps, name):
        c = self.c
        q = np_linear(xq, self.p, prefix + ".w_qs", bias=False)
        k = np_linear(xkv, self.p, prefix + ".w_ks", bias=False)
        v = np_linear(xkv, self.p, prefix + ".w_vs", bias=False)
        ctx, a = np_heads(q, k, v, c["nhead"], c["d_k"], c["d_v"], 1.0 / math.sqrt(c["d_k"]),
                          allowed)
        maps[name] = a
        y = np_linear(ctx, self.p, prefix + ".fc", bias=False) + xq
        return self.norm(prefix + ".layer_norm", y)

    def norm(self, prefix, x):
        return np_torch_norm(x, self.p[prefix + ".weight"], self.p[prefix + ".bias"], 1e-6)

    def ffn(self, prefix, x):
        h = np.maximum(np_linear(x, self.p, prefix + ".w_1"), 0.0)
        return self.norm(prefix + ".layer_norm", np_linear(h, self.p, prefix + ".w_2") + x)

    def encode(self, src, maps):
        x = self.p["encoder.src_word_emb.weight"][src] + \
            self.p["encoder.position_enc.pos_table"][0, :len(src)]
        x = self.norm("encoder.layer_norm", x)
        keep = np.broadcast_to(src != PAD_ID, (len(src), len(src)))
        for i in range(self.c["n_enc"]):
            p = "encoder.layer_stack.%d" % i
            x = self.block(p + ".slf_attn", x, x, keep, maps,
                           layer_map_name("encoder", i, "self_attn"))
            x = self.ffn(p + ".pos_ffn", x)
        return x

    def decode(self, tgt, memory, src, maps):
        t = len(tgt)
        x = self.p["decoder.trg_word_emb.weight"][tgt] + \
            self.p["decoder.position_enc.pos_table"][0, :t]
        x = self.norm("decoder.layer_norm", x)
        causal = np.tril(np.ones((t, t), dtype=bool)) & (tgt != PAD_ID)[None, :]
        cross = np.broadcast_to(src != PAD_ID, (t, len(src)))
        for i in range(self.c["n_dec"]):
            p = "decoder.layer_stack.%d" % i
            x = self.block(p + ".slf_attn", x, x, causal, maps,
                           layer_map_name("decoder", i, "self_attn"))
            x = self.block(p + ".enc_attn", x, memory, cross, maps,
                           layer_map_name("decoder", i, "cross_attn"))
            x = self.ffn(p + ".pos_ffn", x)
        return (x @ self.p["trg_word_prj.weight"].T) * self.c["d_model"] ** -0.5


def numpy_scratch(cfg, p, src):
    d, nh = cfg["d_model"], cfg["nhead"]
    dh = d // nh
    x = p["embedding.weight"][src] * math.sqrt(d) + np_sinusoid(len(src), d)
    keep = np.broadcast_to(src != PAD_ID, (len(src), len(src)))
    maps = {}
    for i in range(cfg["n_enc"]):
        pre = "layers.%d." % i
        qkv = np_linear(x, p, pre + "attention.qkv_layer")
        # head h owns columns [3*dh*h, 3*dh*(h+1)): q, k, v in that order
        split = [qkv[:, 3 * dh * h:3 * dh * (h + 1)] for h in range(nh)]
        q = np.concatenate([blk[:, :dh] for blk in split], axis=1)
        k = np.concatenate([blk[:, dh:2 * dh] for blk in split], axis=1)
        v = np.concatenate([blk[:, 2 * dh:] for blk in split], axis=1)
        ctx, a = np_heads(q, k, v, nh, dh, dh, 1.0 / math.sqrt(dh), keep)
        maps[layer_map_name("encoder", i, "self_attn")] = a
        y = np_linear(ctx, p, pre + "attention.linear_layer") + x
        x = np_torch_norm(y, p[pre + "norm1.gamma"], p[pre + "norm1.beta"], 1e-5)
        h = np.maximum(np_linear(x, p, pre + "ffn.linear1"), 0.0)
        y = np_linear(h, p, pre + "ffn.linear2") + x
        x = np_torch_norm(y, p[pre + "norm2.gamma"], p[pre + "norm2.beta"], 1e-5)
    return x, maps


def numpy_bloem(cfg, p, src):
    k, nh = cfg["d_model"], cfg["nhead"]
    s = k // nh
    x = p["token_embedding.weight"][src] + p["pos_embedding.weight"][:len(src)]
    everything = np.ones((len(src), len(src)), dtype=bool)
    maps = {}
    for i in range(cfg["n_enc"]):
        pre = "tblocks.%d." % i
        q = np_linear(x, p, pre + "attention.to_queries", bias=False)
        kk = np_linear(x, p, pre + "attention.to_keys", bias=False)
        v = np_linear(x, p, pre + "attention.to_values", bias=False)
        ctx, a = np_heads(q, kk, v, nh, s, s, 1.0 / math.sqrt(k), everything)
        maps[layer_map_name("encoder", i, "self_attn")] = a
        y = np_linear(ctx, p, pre + "attention.unify_heads") + x
        x = np_torch_norm(y, p[pre + "norm_1.weight"], p[pre + "norm_1.bias"], 1e-5)
        h = np.maximum(np_linear(x, p, pre + "ff.0"), 0.0)
        y = np_linear(h, p, pre + "ff.2") + x
        x = np_torch_norm(y, p[pre + "norm_2.weight"], p[pre + "norm_2.bias"], 1e-5)
    return np_linear(x.max(axis=0), p, "toprobs"), maps


def numpy_case(cfg, p, case):
    """Everything a case file should hold, recomputed in float64."""
    src = case["src_ids"].astype(np.int64)
    got = {}
    if cfg["kind"] in ENC_DEC:
        ref = (NumpyAnnotated if cfg["kind"] == "annotated" else NumpyJadore)(cfg, p)
        tgt = case["tgt_ids"].astype(np.int64)
        memory = ref.encode(src, got)
        got["memory"] = memory
        got["logits"] = ref.decode(tgt, memory, src, got)
        if cfg["kind"] == "annotated":
            got["log_probs"] = np_log_softmax(got["logits"])
        ids, stop, gap = greedy(lambda ys: ref.decode(np.array(ys), memory, src, {})[-1])
        got["greedy_ids"] = np.array(ids, dtype=np.float64)
        return got, stop, gap
    if cfg["kind"] == "scratch":
        got["memory"], maps = numpy_scratch(cfg, p, src)
        got.update(maps)
        return got, None, None
    logits, maps = numpy_bloem(cfg, p, src)
    got.update(maps)
    got["logits"] = logits
    got["log_probs"] = np_log_softmax(logits)
    return got, None, top_gap(logits)


# ==========================================================================
# case generation
# ==========================================================================

def draw_ids(gen, low, high, n):
    return torch.randint(low, high, (n,), generator=gen)


def make_case(model, cfg, index, spec):
    kind = cfg["kind"]
    n, n_pad = spec["src_len"], spec["n_pad"]
    base = cfg["seed"] * 1000 + index * 100
    for attempt in range(MAX_ATTEMPTS):
        gen = torch.Generator().manual_seed(base + attempt)
        low = 0 if kind == "bloem" else FIRST_WORD_ID
        src = torch.cat([draw_ids(gen, low, cfg["src_vocab"], n - n_pad),
                         torch.full((n_pad,), PAD_ID, dtype=torch.long)])
        meta = None
        if kind == "scratch":
            out = torch_case_scratch(model, src)
            break
        if kind == "bloem":
            out = torch_case_bloem(model, src)
            gap = top_gap(out["logits"].numpy())
            if gap >= MIN_GAP:
                break
            continue
        tgt = torch.cat([torch.tensor([BOS_ID]),
                         draw_ids(gen, FIRST_WORD_ID, cfg["tgt_vocab"], spec["tgt_len"] - 1)])
        stepper = torch_next_annotated if kind == "annotated" else torch_next_jadore
        ids, stop, gap = greedy(stepper(model, src, {}))
        if (gap >= MIN_GAP and ids and all(t >= FIRST_WORD_ID for t in ids)
                and spec["stop"] in (None, stop)):
            out = (torch_case_annotated if kind == "annotated" else torch_case_jadore)(
                model, src, tgt)
            out["tgt_ids"] = tgt.float()
            out["greedy_ids"] = torch.tensor(ids, dtype=torch.float32)
            meta = {"max_len": str(GREEDY_MAX_LEN), "greedy_stop": stop}
            break
    else:
        raise RuntimeError("%s case %d: no acceptable draw" % (cfg["name"], index))
    out["src_ids"] = src.float()
    out = {k: v.contiguous() for k, v in out.items()}
    check_case_tensors(cfg, spec, {k: v.double().numpy() for k, v in out.items()})
    return out, meta, attempt + 1


def check_case_tensors(cfg, spec, t):
    """Shapes, attention rows summing to 1 and padded keys getting 0 weight."""
    kind, d, h = cfg["kind"], cfg["d_model"], cfg["nhead"]
    s = spec["src_len"]
    n_pad = spec["n_pad"]
    want = {"src_ids": (s,)}
    for i in range(cfg["n_enc"]):
        want[layer_map_name("encoder", i, "self_attn")] = (h, s, s)
    if kind in ENC_DEC:
        tl, v = spec["tgt_len"], cfg["tgt_vocab"]
        want.update(tgt_ids=(tl,), memory=(s, d), logits=(tl, v))
        want["greedy_ids"] = (len(t.get("greedy_ids", ())),)
        for i in range(cfg["n_dec"]):
            want[layer_map_name("decoder", i, "self_attn")] = (h, tl, tl)
            want[layer_map_name("decoder", i, "cross_attn")] = (h, tl, s)
        if kind == "annotated":
            want["log_probs"] = (tl, v)
    elif kind == "scratch":
        want["memory"] = (s, d)
    else:
        want["logits"] = want["log_probs"] = (cfg["num_classes"],)
    assert set(t) == set(want), (cfg["name"], sorted(set(t) ^ set(want)))
    for name, shape in want.items():
        assert t[name].shape == shape, (cfg["name"], name, t[name].shape, shape)
        assert np.isfinite(t[name]).all(), name
        if name.endswith(".weights"):
            w = t[name]
            assert np.abs(w.sum(-1) - 1.0).max() < 1e-5, (cfg["name"], name)
            assert (w >= 0).all()
            if n_pad and (name.startswith("encoder") or "cross_attn" in name):
                assert w[..., s - n_pad:].max() == 0.0, (cfg["name"], name)
            if ".self_attn." in name and name.startswith("decoder"):
                assert np.triu(w, 1).max() == 0.0, (cfg["name"], name)
    src = t["src_ids"]
    if kind != "bloem":       # the classifier has no padding: any id may occur
        assert (src[s - n_pad:] == PAD_ID).all() and (src[:s - n_pad] != PAD_ID).all()
    if kind in ENC_DEC:
        assert t["tgt_ids"][0] == BOS_ID and (t["tgt_ids"][1:] >= FIRST_WORD_ID).all()
        assert (src[:s - n_pad] >= FIRST_WORD_ID).all()
        assert len(t["greedy_ids"]) >= 1 and (t["greedy_ids"] >= FIRST_WORD_ID).all()
    if "log_probs" in t:
        assert np.abs(np.exp(t["log_probs"]).sum(-1) - 1.0).max() < 1e-5


# ==========================================================================
# main
# ==========================================================================

def case_specs():
    for cfg in CONFIGS:
        for k, spec in enumerate(cfg["cases"]):
            yield cfg, k, spec


def expected_files():
    names = []
    for cfg in CONFIGS:
        names.append(cfg["name"] + ".safetensors")
        names += ["%s.case%d.safetensors" % (cfg["name"], k) for k in range(len(cfg["cases"]))]
    return names


def reload_case(model, cfg, tensors):
    """Recompute a case's torch tensors (not greedy) with another model object."""
    src = tensors["src_ids"].long()
    if cfg["kind"] == "annotated":
        return torch_case_annotated(model, src, tensors["tgt_ids"].long())
    if cfg["kind"] == "jadore":
        return torch_case_jadore(model, src, tensors["tgt_ids"].long())
    if cfg["kind"] == "scratch":
        return torch_case_scratch(model, src)
    return torch_case_bloem(model, src)


def generate(out_dir):
    for cfg in CONFIGS:
        model = build_model(cfg)
        state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
        check_state_keys(cfg, list(state))
        if cfg["kind"] == "jadore":
            first = state[JADORE_SHARED[0]]
            assert all(torch.equal(state[k], first) for k in JADORE_SHARED)
        meta = model_metadata(cfg) if cfg["metadata"] else None
        write_safetensors(os.path.join(out_dir, cfg["name"] + ".safetensors"), state, meta)
        # a fresh module tree must take the written state dict with strict=True
        # (jadore: three keys, one shared tensor) and compute the same bits
        reloaded = MODEL_CLASSES[cfg["kind"]](cfg)
        _, _, arrays = read_safetensors(os.path.join(out_dir, cfg["name"] + ".safetensors"))
        reloaded.load_state_dict({k: torch.from_numpy(v.astype(np.float32))
                                  for k, v in arrays.items()}, strict=True)
        reloaded.eval()
        for k, spec in enumerate(cfg["cases"]):
            tensors, meta, attempts = make_case(model, cfg, k, spec)
            again = reload_case(reloaded, cfg, tensors)
            for name, value in again.items():
                assert torch.equal(value, tensors[name]), (cfg["name"], k, name)
            fname = "%s.case%d.safetensors" % (cfg["name"], k)
            write_safetensors(os.path.join(out_dir, fname), tensors, meta)
            extra = ""
            if "greedy_ids" in tensors:
                extra = " greedy=%s stop=%s" % (
                    [int(x) for x in tensors["greedy_ids"]], meta["greedy_stop"])
            print("%-34s src=%s%s attempts=%d" % (
                fname, [int(x) for x in tensors["src_ids"]], extra, attempts))


def check_all(out_dir):
    present = sorted(f for f in os.listdir(out_dir) if f.endswith(".safetensors"))
    assert present == sorted(expected_files()), (
        "unexpected file set", sorted(set(present) ^ set(expected_files())))
    total = 0
    models = {}
    for cfg in CONFIGS:
        size, meta, arrays = read_safetensors(os.path.join(out_dir, cfg["name"] + ".safetensors"))
        check_state_keys(cfg, list(arrays))
        assert size < MAX_FILE_BYTES, (cfg["name"], size)
        if cfg["metadata"]:
            assert meta == model_metadata(cfg), (cfg["name"], meta)
        else:
            assert meta is None, cfg["name"]
        if cfg["kind"] == "jadore":
            for k in JADORE_SHARED[1:]:
                assert np.array_equal(arrays[k], arrays[JADORE_SHARED[0]]), k
            table = sinusoid_float64_then_32(cfg["max_positions"], cfg["d_model"]).double().numpy()
            for k in ("encoder.position_enc.pos_table", "decoder.position_enc.pos_table"):
                assert np.array_equal(arrays[k], table), k
        if cfg["kind"] == "annotated":
            table = sinusoid_float32(cfg["max_positions"], cfg["d_model"]).double().numpy()
            for k in ("src_embed.1.pe", "tgt_embed.1.pe"):
                assert np.array_equal(arrays[k][0], table), k
                assert np.abs(arrays[k][0] - np_sinusoid(cfg["max_positions"],
                                                         cfg["d_model"])).max() < 1e-5
        models[cfg["name"]] = arrays
        total += size
        print("ok %-34s %7d bytes %3d tensors  %s" % (
            cfg["name"] + ".safetensors", size, len(arrays),
            "metadata" if meta else "no metadata"))
    worst = 0.0
    for cfg, k, spec in case_specs():
        fname = "%s.case%d.safetensors" % (cfg["name"], k)
        size, meta, t = read_safetensors(os.path.join(out_dir, fname))
        assert size < MAX_FILE_BYTES, (fname, size)
        check_case_tensors(cfg, spec, t)
        got, stop, gap = numpy_case(cfg, models[cfg["name"]], t)
        for name, value in got.items():
            if name == "greedy_ids":
                assert np.array_equal(value, t[name]), (fname, value, t[name])
                continue
            err = float(np.abs(value - t[name]).max())
            worst = max(worst, err)
            assert err < REF_ATOL, (fname, name, err)
        if cfg["kind"] in ENC_DEC:
            assert meta == {"max_len": str(GREEDY_MAX_LEN), "greedy_stop": stop}, (fname, meta)
        else:
            assert meta is None, fname
        if gap is not None:
            assert gap >= MIN_GAP * 0.99, (fname, gap)
        total += size
        print("ok %-34s %7d bytes %3d tensors  float64 re-computation agrees" % (
            fname, size, len(t)))
    print("largest float64-vs-file difference %.2e; %d bytes in %d files"
          % (worst, total, len(present)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "fixtures", "seeds"),
                    help="output directory (default: tests/fixtures/seeds)")
    ap.add_argument("--check", action="store_true",
                    help="only re-read and validate the files already in --out")
    args = ap.parse_args()
    out_dir = os.path.normpath(args.out)
    start = time.time()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    if not args.check:
        os.makedirs(out_dir, exist_ok=True)
        with torch.no_grad():
            generate(out_dir)
    check_all(out_dir)
    print("done in %.2f s" % (time.time() - start))
    return 0


if __name__ == "__main__":
    sys.exit(main())
