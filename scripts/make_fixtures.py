#!/usr/bin/python3
"""Generate PyTorch reference fixtures for stepformer's C tests.

Writes small safetensors files into tests/fixtures/:

  NAME.safetensors        a randomized encoder-decoder model (state dict with
                          the key names of the PyTorch "Seq2SeqTransformer")
  NAME.caseK.safetensors  inputs and expected outputs for one example
  pe_d8.safetensors       the sinusoidal positional-encoding table, d_model 8

Run with the system interpreter (it has python3-torch and python3-numpy):

  /usr/bin/python3 scripts/make_fixtures.py          # generate, then check
  /usr/bin/python3 scripts/make_fixtures.py --check  # only re-read and check

Everything is seeded and single-threaded, so a rerun gives identical bytes.
"""

import argparse
import json
import math
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

UNK_ID, PAD_ID, BOS_ID, EOS_ID = 0, 1, 2, 3
SPECIALS = ["<unk>", "<pad>", "<bos>", "<eos>"]
FIRST_WORD_ID = 4

# Two disjoint word lists; a vocabulary of size V uses the first V - 4 words.
SRC_WORDS = [
    "cat", "dog", "bird", "fish", "tree", "river", "stone", "hill", "cloud",
    "rain", "snow", "wind", "sun", "moon", "star", "leaf", "root", "seed",
    "frog", "bear", "wolf", "deer", "goat", "lake", "sand", "fire", "rock",
    "fox", "owl", "grass",
]
TGT_WORDS = [
    "book", "chair", "table", "door", "lamp", "cup", "plate", "bread", "milk",
    "salt", "spoon", "knife", "bed", "wall", "roof", "floor", "key", "box",
    "bag", "coat", "shoe", "hat", "pen", "ink", "clock", "soap", "rug",
    "sofa", "desk", "fork",
]
assert not set(SRC_WORDS) & set(TGT_WORDS)

PE_MAXLEN = 64        # rows of positional_encoding.pos_embedding in the model files
GREEDY_MAX_LEN = 8    # greedy decoding steps
MIN_GAP = 1e-3        # required top-1 minus top-2 logit gap at every greedy step
MAX_ATTEMPTS = 200    # src re-draws allowed per case

# Case "stop" = required greedy_stop ("eos" / "max_len"), or None for either.
# Model seeds were picked (once, by hand) so that each case has such a draw
# within a few attempts; see make_case for the full acceptance rule.

# name, seed, model kind and hyper-parameters.
CONFIGS = [
    dict(name="post_2x2", seed=2101, kind="torch", d_model=32, nhead=4,
         n_enc=2, n_dec=2, d_ff=64, src_vocab=23, tgt_vocab=29,
         activation="relu", norm_first=False, eps=1e-5, metadata=True,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop="max_len"),
                dict(src_len=9, tgt_len=5, n_pad=2, stop="eos")]),
    dict(name="pre_1x3_gelu", seed=1202, kind="torch", d_model=24, nhead=6,
         n_enc=1, n_dec=3, d_ff=40, src_vocab=17, tgt_vocab=19,
         activation="gelu", norm_first=True, eps=1e-5, metadata=True,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop=None),
                dict(src_len=1, tgt_len=1, n_pad=0, stop=None)]),
    dict(name="post_dk2", seed=2303, kind="torch", d_model=16, nhead=8,
         n_enc=3, n_dec=1, d_ff=48, src_vocab=31, tgt_vocab=13,
         activation="relu", norm_first=False, eps=1e-5, metadata=True,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop=None)]),
    dict(name="annotated", seed=2404, kind="annotated", d_model=32, nhead=4,
         n_enc=2, n_dec=2, d_ff=64, src_vocab=21, tgt_vocab=21,
         activation="relu", norm_first=True, eps=1e-6, metadata=True,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop="eos")]),
    dict(name="nometa", seed=505, kind="torch", d_model=32, nhead=4,
         n_enc=2, n_dec=2, d_ff=64, src_vocab=23, tgt_vocab=29,
         activation="relu", norm_first=False, eps=1e-5, metadata=False,
         cases=[dict(src_len=7, tgt_len=6, n_pad=0, stop="eos")]),
]


# --------------------------------------------------------------------------
# safetensors writer and an independent reader/checker
# --------------------------------------------------------------------------

def write_safetensors(path, tensors, metadata=None):
    """Write F32 tensors (sorted by name, contiguous) plus optional metadata."""
    header = {}
    if metadata is not None:
        for k, v in metadata.items():
            assert isinstance(k, str) and isinstance(v, str), (k, v)
        header["__metadata__"] = dict(metadata)
    chunks = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        assert t.dtype == torch.float32, (name, t.dtype)
        assert bool(torch.isfinite(t).all()), "non-finite values in " + name
        arr = np.ascontiguousarray(t.detach().cpu().numpy()).astype("<f4", copy=False)
        raw = arr.tobytes(order="C")
        header[name] = {"dtype": "F32", "shape": [int(s) for s in arr.shape],
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    js = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode("utf-8")
    js += b" " * ((-(8 + len(js))) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for raw in chunks:
            f.write(raw)


def check_safetensors(path):
    """Parse a file from scratch (struct/json/numpy only) and validate it.

    Returns (file size, metadata dict or None, {name: numpy array})."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(path + ": too short")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(path + ": header length out of range")
    if (8 + n) % 8 != 0:
        raise ValueError(path + ": 8 + header length is not a multiple of 8")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", None)
    if meta is not None:
        for k, v in meta.items():
            if not isinstance(v, str):
                raise ValueError("%s: metadata %s is not a string" % (path, k))
    entries = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
    pos = 0
    arrays = {}
    for name, e in entries:
        if e["dtype"] != "F32":
            raise ValueError("%s: %s has dtype %s" % (path, name, e["dtype"]))
        begin, end = e["data_offsets"]
        numel = 1
        for s in e["shape"]:
            if not isinstance(s, int) or s < 0:
                raise ValueError("%s: %s bad shape" % (path, name))
            numel *= s
        if begin != pos:
            raise ValueError("%s: %s not contiguous (%d != %d)" % (path, name, begin, pos))
        if end - begin != 4 * numel or end > len(data):
            raise ValueError("%s: %s bad data_offsets" % (path, name))
        a = np.frombuffer(data[begin:end], dtype="<f4").reshape(e["shape"])
        if not np.isfinite(a).all():
            raise ValueError("%s: %s has non-finite values" % (path, name))
        arrays[name] = a
        pos = end
    if pos != len(data):
        raise ValueError("%s: %d trailing bytes after last tensor" % (path, len(data) - pos))
    return len(blob), meta, arrays


# --------------------------------------------------------------------------
# shared pieces
# --------------------------------------------------------------------------

def sinusoid_table(d_model, maxlen):
    """[maxlen, 1, d_model] float32 table, computed as in the PyTorch tutorial."""
    den = torch.exp(-torch.arange(0, d_model, 2) * math.log(10000) / d_model)
    pos = torch.arange(0, maxlen).reshape(maxlen, 1)
    table = torch.zeros((maxlen, d_model))
    table[:, 0::2] = torch.sin(pos * den)
    table[:, 1::2] = torch.cos(pos * den)
    table = table.unsqueeze(-2)
    assert table.dtype == torch.float32
    return table


def causal_mask(n):
    """Float mask: 0 on and below the diagonal, -inf above."""
    return torch.full((n, n), float("-inf")).triu(1)


class TokenEmbedding(nn.Module):
    def __init__(self, vocab, d_model):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.scale = math.sqrt(d_model)

    def forward(self, ids):
        return self.embedding(ids.long()) * self.scale


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, maxlen):
        super().__init__()
        self.register_buffer("pos_embedding", sinusoid_table(d_model, maxlen))

    def forward(self, x):
        # x is [L, 1, d] (Seq2Seq) or [L, d] (annotated)
        pe = self.pos_embedding[:x.size(0)]
        return x + (pe if x.dim() == 3 else pe[:, 0, :])


# --------------------------------------------------------------------------
# model 1: nn.Transformer based (sequence-first, batch of 1)
# --------------------------------------------------------------------------

class Seq2SeqTransformer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d = cfg["d_model"]
        self.src_tok_emb = TokenEmbedding(cfg["src_vocab"], d)
        self.tgt_tok_emb = TokenEmbedding(cfg["tgt_vocab"], d)
        self.positional_encoding = PositionalEncoding(d, PE_MAXLEN)
        self.transformer = nn.Transformer(
            d_model=d, nhead=cfg["nhead"],
            num_encoder_layers=cfg["n_enc"], num_decoder_layers=cfg["n_dec"],
            dim_feedforward=cfg["d_ff"], dropout=0.0,
            activation=cfg["activation"], norm_first=cfg["norm_first"],
            layer_norm_eps=cfg["eps"])
        self.generator = nn.Linear(d, cfg["tgt_vocab"])

    def _embed_src(self, src):
        return self.positional_encoding(self.src_tok_emb(src.view(-1, 1)))

    def _embed_tgt(self, tgt):
        return self.positional_encoding(self.tgt_tok_emb(tgt.view(-1, 1)))

    def forward(self, src, tgt):
        """Whole teacher-forced pass through nn.Transformer.forward -> [T, V]."""
        out = self.transformer(
            self._embed_src(src), self._embed_tgt(tgt),
            src_mask=None, tgt_mask=causal_mask(tgt.numel()), memory_mask=None,
            src_key_padding_mask=(src == PAD_ID).view(1, -1),
            tgt_key_padding_mask=(tgt == PAD_ID).view(1, -1),
            memory_key_padding_mask=(src == PAD_ID).view(1, -1))
        return self.generator(out)[:, 0, :]

    def encode(self, src):
        """[S, d] memory (after the final encoder norm)."""
        mem = self.transformer.encoder(
            self._embed_src(src), mask=None,
            src_key_padding_mask=(src == PAD_ID).view(1, -1))
        return mem[:, 0, :]

    def decode(self, tgt, memory, src, tgt_padding=True):
        """[T, V] logits for every target position."""
        out = self.transformer.decoder(
            self._embed_tgt(tgt), memory.unsqueeze(1),
            tgt_mask=causal_mask(tgt.numel()), memory_mask=None,
            tgt_key_padding_mask=(tgt == PAD_ID).view(1, -1) if tgt_padding else None,
            memory_key_padding_mask=(src == PAD_ID).view(1, -1))
        return self.generator(out)[:, 0, :]

    def export_state(self):
        return {k: v.detach().clone() for k, v in self.state_dict().items()}

    def teacher_forced(self, src, tgt):
        """memory, logits and per-head attention maps of one teacher-forced pass.

        Forward hooks capture the (query, key, value) and output of every
        nn.MultiheadAttention call; each module is then re-called on the same
        inputs and masks with need_weights=True, and the re-call's output is
        asserted equal to the captured one."""
        names = {}
        for i, layer in enumerate(self.transformer.encoder.layers):
            names[layer.self_attn] = ("encoder.layers.%d.self_attn" % i, "enc")
        for i, layer in enumerate(self.transformer.decoder.layers):
            names[layer.self_attn] = ("decoder.layers.%d.self_attn" % i, "dec_self")
            names[layer.multihead_attn] = ("decoder.layers.%d.cross_attn" % i, "cross")
        calls = []

        def hook(module, args, output):
            calls.append((module, tuple(a.detach().clone() for a in args),
                          output[0].detach().clone()))

        handles = [m.register_forward_hook(hook) for m in names]
        try:
            memory = self.encode(src)
            logits = self.decode(tgt, memory, src)
        finally:
            for h in handles:
                h.remove()
        assert len(calls) == len(names), (len(calls), len(names))

        # the split encode/decode path must equal nn.Transformer.forward
        full = self.forward(src, tgt)
        assert torch.equal(full, logits), "encode+decode differs from forward"

        src_pad = (src == PAD_ID).view(1, -1)
        tgt_pad = (tgt == PAD_ID).view(1, -1)
        masks = {"enc": (None, src_pad),
                 "dec_self": (causal_mask(tgt.numel()), tgt_pad),
                 "cross": (None, src_pad)}
        attn = {}
        for module, (q, k, v), used in calls:
            name, kind = names[module]
            attn_mask, kpm = masks[kind]
            out, w = module(q, k, v, attn_mask=attn_mask, key_padding_mask=kpm,
                            need_weights=True, average_attn_weights=False)
            assert torch.allclose(out, used, rtol=1e-6, atol=1e-6), name
            assert name + ".weights" not in attn, name
            attn[name + ".weights"] = w[0].detach().clone()   # [nhead, Lq, Lk]
        return memory, logits, attn


# --------------------------------------------------------------------------
# model 2: the Annotated Transformer variant (own modules, unbatched [L, d])
# --------------------------------------------------------------------------

class AnnotatedLayerNorm(nn.Module):
    """a * (x - mean) / (std + eps) + b with the unbiased std.

    mode="torch" switches to nn.LayerNorm's formula; used only for the
    self-check that compares this module tree with nn.Transformer."""

    def __init__(self, d, eps, mode="annotated"):
        super().__init__()
        self.a_2 = nn.Parameter(torch.ones(d))
        self.b_2 = nn.Parameter(torch.zeros(d))
        self.eps = eps
        self.mode = mode

    def forward(self, x):
        if self.mode == "torch":
            return F.layer_norm(x, (x.size(-1),), self.a_2, self.b_2, self.eps)
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return self.a_2 * (x - mean) / (std + self.eps) + self.b_2


class AnnotatedAttention(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        assert d % h == 0
        self.h, self.d_k = h, d // h
        self.linear_q = nn.Linear(d, d)
        self.linear_k = nn.Linear(d, d)
        self.linear_v = nn.Linear(d, d)
        self.linear_out = nn.Linear(d, d)
        self.last_weights = None

    def forward(self, query, key, value, blocked):
        """query [Lq, d], key/value [Lk, d]; blocked: bool, True = masked out,
        broadcastable to [Lq, Lk]."""
        lq, lk = query.size(0), key.size(0)
        q = self.linear_q(query).view(lq, self.h, self.d_k).transpose(0, 1)
        k = self.linear_k(key).view(lk, self.h, self.d_k).transpose(0, 1)
        v = self.linear_v(value).view(lk, self.h, self.d_k).transpose(0, 1)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)
        scores = scores.masked_fill(blocked, float("-inf"))
        p = scores.softmax(dim=-1)                                  # [h, Lq, Lk]
        self.last_weights = p.detach().clone()
        ctx = torch.matmul(p, v).transpose(0, 1).contiguous().view(lq, -1)
        return self.linear_out(ctx)


class AnnotatedFeedForward(nn.Module):
    def __init__(self, d, d_ff):
        super().__init__()
        self.w_1 = nn.Linear(d, d_ff)
        self.w_2 = nn.Linear(d_ff, d)

    def forward(self, x):
        return self.w_2(self.w_1(x).relu())


class AnnotatedEncoderLayer(nn.Module):
    def __init__(self, d, h, d_ff, eps, mode):
        super().__init__()
        self.self_attn = AnnotatedAttention(d, h)
        self.feed_forward = AnnotatedFeedForward(d, d_ff)
        self.norms = nn.ModuleList([AnnotatedLayerNorm(d, eps, mode) for _ in range(2)])

    def forward(self, x, src_blocked):
        y = self.norms[0](x)
        x = x + self.self_attn(y, y, y, src_blocked)
        return x + self.feed_forward(self.norms[1](x))


class AnnotatedDecoderLayer(nn.Module):
    def __init__(self, d, h, d_ff, eps, mode):
        super().__init__()
        self.self_attn = AnnotatedAttention(d, h)
        self.src_attn = AnnotatedAttention(d, h)
        self.feed_forward = AnnotatedFeedForward(d, d_ff)
        self.norms = nn.ModuleList([AnnotatedLayerNorm(d, eps, mode) for _ in range(3)])

    def forward(self, x, memory, src_blocked, tgt_blocked):
        y = self.norms[0](x)
        x = x + self.self_attn(y, y, y, tgt_blocked)
        y = self.norms[1](x)
        x = x + self.src_attn(y, memory, memory, src_blocked)
        return x + self.feed_forward(self.norms[2](x))


class AnnotatedTransformer(nn.Module):
    def __init__(self, cfg, mode="annotated"):
        super().__init__()
        d, h, ff, eps = cfg["d_model"], cfg["nhead"], cfg["d_ff"], cfg["eps"]
        assert cfg["activation"] == "relu" and cfg["norm_first"]
        self.src_embed = TokenEmbedding(cfg["src_vocab"], d)
        self.tgt_embed = TokenEmbedding(cfg["tgt_vocab"], d)
        self.position = PositionalEncoding(d, PE_MAXLEN)
        self.enc_layers = nn.ModuleList(
            [AnnotatedEncoderLayer(d, h, ff, eps, mode) for _ in range(cfg["n_enc"])])
        self.enc_norm = AnnotatedLayerNorm(d, eps, mode)
        self.dec_layers = nn.ModuleList(
            [AnnotatedDecoderLayer(d, h, ff, eps, mode) for _ in range(cfg["n_dec"])])
        self.dec_norm = AnnotatedLayerNorm(d, eps, mode)
        self.generator = nn.Linear(d, cfg["tgt_vocab"])

    def encode(self, src):
        x = self.position(self.src_embed(src))
        blocked = (src == PAD_ID).view(1, -1)
        for layer in self.enc_layers:
            x = layer(x, blocked)
        return self.enc_norm(x)

    def decode(self, tgt, memory, src, tgt_padding=True):
        x = self.position(self.tgt_embed(tgt))
        src_blocked = (src == PAD_ID).view(1, -1)
        tgt_blocked = torch.ones(tgt.numel(), tgt.numel(), dtype=torch.bool).triu(1)
        if tgt_padding:
            tgt_blocked = tgt_blocked | (tgt == PAD_ID).view(1, -1)
        for layer in self.dec_layers:
            x = layer(x, memory, src_blocked, tgt_blocked)
        return self.generator(self.dec_norm(x))

    def teacher_forced(self, src, tgt):
        memory = self.encode(src)
        logits = self.decode(tgt, memory, src)
        attn = {}
        for i, layer in enumerate(self.enc_layers):
            attn["encoder.layers.%d.self_attn.weights" % i] = layer.self_attn.last_weights
        for i, layer in enumerate(self.dec_layers):
            attn["decoder.layers.%d.self_attn.weights" % i] = layer.self_attn.last_weights
            attn["decoder.layers.%d.cross_attn.weights" % i] = layer.src_attn.last_weights
        return memory, logits, attn

    def export_state(self):
        """State dict under the Seq2SeqTransformer / nn.Transformer key names."""
        out = {}

        def put(key, t):
            assert key not in out, key
            out[key] = t.detach().clone()

        def put_attn(prefix, a):
            put(prefix + ".in_proj_weight", torch.cat(
                [a.linear_q.weight, a.linear_k.weight, a.linear_v.weight], 0))
            put(prefix + ".in_proj_bias", torch.cat(
                [a.linear_q.bias, a.linear_k.bias, a.linear_v.bias], 0))
            put(prefix + ".out_proj.weight", a.linear_out.weight)
            put(prefix + ".out_proj.bias", a.linear_out.bias)

        def put_norm(prefix, n):
            put(prefix + ".weight", n.a_2)
            put(prefix + ".bias", n.b_2)

        def put_ff(prefix, ff):
            put(prefix + ".linear1.weight", ff.w_1.weight)
            put(prefix + ".linear1.bias", ff.w_1.bias)
            put(prefix + ".linear2.weight", ff.w_2.weight)
            put(prefix + ".linear2.bias", ff.w_2.bias)

        put("src_tok_emb.embedding.weight", self.src_embed.embedding.weight)
        put("tgt_tok_emb.embedding.weight", self.tgt_embed.embedding.weight)
        put("positional_encoding.pos_embedding", self.position.pos_embedding)
        for i, layer in enumerate(self.enc_layers):
            p = "transformer.encoder.layers.%d" % i
            put_attn(p + ".self_attn", layer.self_attn)
            put_ff(p, layer.feed_forward)
            for j, n in enumerate(layer.norms):
                put_norm("%s.norm%d" % (p, j + 1), n)
        put_norm("transformer.encoder.norm", self.enc_norm)
        for i, layer in enumerate(self.dec_layers):
            p = "transformer.decoder.layers.%d" % i
            put_attn(p + ".self_attn", layer.self_attn)
            put_attn(p + ".multihead_attn", layer.src_attn)
            put_ff(p, layer.feed_forward)
            for j, n in enumerate(layer.norms):
                put_norm("%s.norm%d" % (p, j + 1), n)
        put_norm("transformer.decoder.norm", self.dec_norm)
        put("generator.weight", self.generator.weight)
        put("generator.bias", self.generator.bias)
        return out


# --------------------------------------------------------------------------
# randomization, cases, greedy decoding
# --------------------------------------------------------------------------

def randomize(model):
    """Xavier-uniform for every matrix (as the tutorial does), then noisy
    biases and LayerNorm parameters. Uses the global torch RNG."""
    norm_params = set()
    for m in model.modules():
        if isinstance(m, nn.LayerNorm):
            norm_params.update([id(m.weight), id(m.bias)])
        elif isinstance(m, AnnotatedLayerNorm):
            norm_params.update([id(m.a_2), id(m.b_2)])
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.copy_(1.0 + 0.1 * torch.randn_like(m.weight))
                m.bias.copy_(0.1 * torch.randn_like(m.bias))
            elif isinstance(m, AnnotatedLayerNorm):
                m.a_2.copy_(1.0 + 0.1 * torch.randn_like(m.a_2))
                m.b_2.copy_(0.1 * torch.randn_like(m.b_2))
        for name, p in model.named_parameters():
            if p.dim() == 1 and id(p) not in norm_params:
                assert name.endswith("bias"), name
                p.copy_(0.1 * torch.randn_like(p))


def build_model(cfg, mode="annotated"):
    torch.manual_seed(cfg["seed"])
    if cfg["kind"] == "torch":
        model = Seq2SeqTransformer(cfg)
    else:
        model = AnnotatedTransformer(cfg, mode)
    randomize(model)
    model.eval()
    return model


def model_metadata(cfg):
    src_tokens = SPECIALS + SRC_WORDS[:cfg["src_vocab"] - FIRST_WORD_ID]
    tgt_tokens = SPECIALS + TGT_WORDS[:cfg["tgt_vocab"] - FIRST_WORD_ID]
    assert len(src_tokens) == cfg["src_vocab"] and len(tgt_tokens) == cfg["tgt_vocab"]
    return {
        "d_model": str(cfg["d_model"]),
        "nhead": str(cfg["nhead"]),
        "num_encoder_layers": str(cfg["n_enc"]),
        "num_decoder_layers": str(cfg["n_dec"]),
        "dim_feedforward": str(cfg["d_ff"]),
        "src_vocab_size": str(cfg["src_vocab"]),
        "tgt_vocab_size": str(cfg["tgt_vocab"]),
        "norm_first": "true" if cfg["norm_first"] else "false",
        "layer_norm_eps": str(cfg["eps"]),
        "activation": cfg["activation"],
        "layer_norm": "annotated" if cfg["kind"] == "annotated" else "torch",
        "src_tokens": json.dumps(src_tokens, separators=(",", ":")),
        "tgt_tokens": json.dumps(tgt_tokens, separators=(",", ":")),
        "bos_id": str(BOS_ID),
        "eos_id": str(EOS_ID),
        "pad_id": str(PAD_ID),
        "unk_id": str(UNK_ID),
    }


def greedy_decode(model, src, memory):
    """Returns (appended ids, stop reason, smallest top-1/top-2 gap seen)."""
    ys = [BOS_ID]
    out = []
    min_gap = float("inf")
    stop = "max_len"
    for _ in range(GREEDY_MAX_LEN):
        # as in the tutorial's greedy_decode: causal mask + memory padding mask,
        # no target padding mask
        logits = model.decode(torch.tensor(ys), memory, src, tgt_padding=False)
        assert bool(torch.isfinite(logits).all())
        last = logits[-1]
        top2 = torch.topk(last, 2).values
        min_gap = min(min_gap, float(top2[0] - top2[1]))
        nxt = int(torch.argmax(last))
        if nxt == EOS_ID:
            stop = "eos"
            break
        ys.append(nxt)
        out.append(nxt)
    return out, stop, min_gap


def make_case(model, cfg, case_index, spec):
    """Draw src/tgt and compute all expected tensors.

    The draw (src and tgt together) is repeated with the next seed until
      - every greedy step has a top-1 / top-2 logit gap >= MIN_GAP,
      - greedy decoding appends at least one token and none of them is a
        special id (unk/pad/bos), so no padding or special-token handling
        question arises on the C side, and
      - the stop reason is the one the case asks for (if any)."""
    src_len, tgt_len, n_pad = spec["src_len"], spec["tgt_len"], spec["n_pad"]
    base = cfg["seed"] * 1000 + case_index * 100
    for attempt in range(MAX_ATTEMPTS):
        g = torch.Generator().manual_seed(base + attempt)
        words = torch.randint(FIRST_WORD_ID, cfg["src_vocab"], (src_len - n_pad,), generator=g)
        src = torch.cat([words, torch.full((n_pad,), PAD_ID, dtype=torch.long)])
        tgt_words = torch.randint(FIRST_WORD_ID, cfg["tgt_vocab"], (tgt_len - 1,), generator=g)
        tgt = torch.cat([torch.tensor([BOS_ID]), tgt_words])
        memory = model.encode(src)
        greedy, stop, gap = greedy_decode(model, src, memory)
        if (gap >= MIN_GAP and len(greedy) >= 1
                and all(t >= FIRST_WORD_ID for t in greedy)
                and spec["stop"] in (None, stop)):
            break
    else:
        raise RuntimeError("no acceptable src draw for %s case %d"
                           % (cfg["name"], case_index))

    memory, logits, attn = model.teacher_forced(src, tgt)
    S, T, H = src.numel(), tgt.numel(), cfg["nhead"]
    assert memory.shape == (S, cfg["d_model"])
    assert logits.shape == (T, cfg["tgt_vocab"])
    for name, w in attn.items():
        lq, lk = (S, S) if name.startswith("encoder") else \
                 (T, T) if ".self_attn." in name else (T, S)
        assert w.shape == (H, lq, lk), (name, w.shape)
        assert torch.allclose(w.sum(-1), torch.ones(H, lq), atol=1e-5), name
        keys_are_src = name.startswith("encoder") or ".cross_attn." in name
        if n_pad and keys_are_src:
            # keys at padded source positions must get exactly zero weight
            assert float(w[..., S - n_pad:].abs().max()) == 0.0, name
    tensors = {"src_ids": src.float(), "tgt_ids": tgt.float(),
               "memory": memory.detach(), "logits": logits.detach(),
               "greedy_ids": torch.tensor(greedy, dtype=torch.float32)}
    tensors.update(attn)
    meta = {"max_len": str(GREEDY_MAX_LEN), "greedy_stop": stop}
    info = dict(attempts=attempt + 1, gap=gap, greedy=greedy, stop=stop, src=src.tolist(),
                tgt=tgt.tolist())
    return tensors, meta, info


def self_check_annotated(cfg, model, state):
    """The export mapping must make nn.Transformer (norm_first, same eps) agree
    with the annotated tree once its LayerNorm uses the torch formula."""
    twin = build_model(cfg, mode="torch")
    for a, b in zip(model.parameters(), twin.parameters()):
        assert torch.equal(a, b)
    ref_cfg = dict(cfg, kind="torch")
    ref = Seq2SeqTransformer(ref_cfg)
    ref.load_state_dict(state, strict=True)
    ref.eval()
    g = torch.Generator().manual_seed(cfg["seed"])
    src = torch.cat([torch.randint(FIRST_WORD_ID, cfg["src_vocab"], (6,), generator=g),
                     torch.tensor([PAD_ID, PAD_ID])])
    tgt = torch.cat([torch.tensor([BOS_ID]),
                     torch.randint(FIRST_WORD_ID, cfg["tgt_vocab"], (4,), generator=g)])
    m1, l1, a1 = twin.teacher_forced(src, tgt)
    m2, l2, a2 = ref.teacher_forced(src, tgt)
    assert torch.allclose(m1, m2, atol=1e-5), "annotated export: memory mismatch"
    assert torch.allclose(l1, l2, atol=1e-5), "annotated export: logits mismatch"
    assert a1.keys() == a2.keys()
    for k in a1:
        assert torch.allclose(a1[k], a2[k], atol=1e-5), "annotated export: " + k
    # and the real (unbiased-std) LayerNorm must actually make a difference
    assert not torch.allclose(model.teacher_forced(src, tgt)[1], l1, atol=1e-5)


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def generate(out_dir):
    written = []

    pe = sinusoid_table(8, 6)[:, 0, :].contiguous()
    path = os.path.join(out_dir, "pe_d8.safetensors")
    write_safetensors(path, {"pe": pe})
    written.append(path)

    for cfg in CONFIGS:
        model = build_model(cfg)
        state = model.export_state()
        assert all(t.dtype == torch.float32 for t in state.values())
        if cfg["kind"] == "annotated":
            self_check_annotated(cfg, model, state)
        else:
            assert set(state) == set(model.state_dict())
        path = os.path.join(out_dir, cfg["name"] + ".safetensors")
        write_safetensors(path, state, model_metadata(cfg) if cfg["metadata"] else None)
        written.append(path)
        for k, spec in enumerate(cfg["cases"]):
            tensors, meta, info = make_case(model, cfg, k, spec)
            path = os.path.join(out_dir, "%s.case%d.safetensors" % (cfg["name"], k))
            write_safetensors(path, tensors, meta)
            written.append(path)
            print("%-34s src=%s tgt=%s greedy=%s stop=%s min_gap=%.4g attempts=%d"
                  % (os.path.basename(path), info["src"], info["tgt"], info["greedy"],
                     info["stop"], info["gap"], info["attempts"]))
    return written


def check_all(paths):
    total = 0
    for path in paths:
        size, meta, arrays = check_safetensors(path)
        total += size
        print("ok %-34s %7d bytes  %3d tensors  %s" % (
            os.path.basename(path), size, len(arrays),
            "metadata" if meta is not None else "no metadata"))
    print("total %d bytes in %d files" % (total, len(paths)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "fixtures"),
                    help="output directory (default: tests/fixtures)")
    ap.add_argument("--check", action="store_true",
                    help="only re-read and validate the *.safetensors files in --out")
    args = ap.parse_args()
    out_dir = os.path.normpath(args.out)

    t0 = time.time()
    if args.check:
        paths = sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir)
                       if f.endswith(".safetensors"))
    else:
        torch.set_num_threads(1)
        torch.use_deterministic_algorithms(True)
        os.makedirs(out_dir, exist_ok=True)
        with torch.no_grad():
            paths = generate(out_dir)
    check_all(paths)
    print("done in %.2f s" % (time.time() - t0))


if __name__ == "__main__":
    main()
