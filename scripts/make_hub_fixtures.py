#!/usr/bin/python3
"""Generate model folders in exactly the Hugging Face hub's layout, with PyTorch's answers.

The modules below are written here from the structure of Hugging Face's GPT2LMHeadModel and
LlamaForCausalLM / Qwen2ForCausalLM (they copy no code): GPT-2's Conv1D layers (weight stored
[in, out], y = x W + b), its fused c_attn, gelu_new and tied head; LLaMA's RMSNorm computed in
float32, rotary positions with rotate_half (column i paired with i + D/2, inv_freq in float32),
repeat_kv for grouped-query attention, SwiGLU, and a head tied or not. Their state_dict() keys
are the hub's.

Weights are random at a scale where activations are O(1) (a weight of fan-in n has standard
deviation 1/sqrt(n), GPT-2's MLP 2.5 and 2 times that, norms' gains 1 + 0.3 N(0, 1)), so that the exact GELU in place of the tanh
one, the adjacent RoPE pairing in place of rotate_half, or a Conv1D weight read [out, in] each
move the logits by far more than the 1e-4 the tests allow (tests/test_hub.c shows that they do).
A model stored as F16 or BF16 is computed in float32 from the weights as stored (each rounded
to the file's type, then widened), as Hugging Face computes with torch_dtype=float32.

Writes tests/fixtures/hub/NAME/ for each case:

  config.json                   as the hub's files have it (model_type, architectures, ...)
  model.safetensors             or model-0000K-of-0000N.safetensors and the index
  case.safetensors              `ids` [T] the prompt, `logits` [T, V] PyTorch's, `generated` [N]
                                the greedy ids (argmax of the last position, appended), `labels`
                                [T] the next ids (the prompt's, then the first generated), and
                                metadata max_new_tokens
  grads.safetensors             PyTorch autograd's gradient of the mean cross-entropy of the
                                logits against `labels`, for every weight, under the names the
                                folder's family gives them (a tied weight once: the sum)

And, for the models lessons/gpt2.md and lessons/llama.md run (assets/models/*-licences, made in
C by scripts/train_hub_models.sh), PyTorch's answers on each lesson's prompt, computed by the same
modules from the folder's own config.json and model.safetensors:

  lesson-NAME.safetensors       `ids` [T] the lesson's src_ids, `logits` [T, V], `generated` [N]

and for lessons/marian.md's folder (scripts/train_marian_model.sh), the module above loading it:

  lesson-marian-gettext-en-de.safetensors   `src` the lesson's src_ids, `generated` the greedy ids
                                (pad never chosen, stopping after eos), `tgt` the start id and
                                those ids but the last, `logits` [len(tgt), V]

  /usr/bin/python3 scripts/make_hub_fixtures.py

Seeds are fixed and torch runs on one thread. Needs Debian's python3-torch.
"""

import copy
import glob
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

torch.set_num_threads(1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "hub")

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def write_safetensors(path, tensors, dtype="F32", metadata=None):
    """Tensors packed in name order after a JSON header (8-byte aligned data)."""
    head = {}
    if metadata:
        head["__metadata__"] = dict(metadata)
    blobs, pos = [], 0
    for key in sorted(tensors):
        t = tensors[key].detach().to(DTYPES[dtype]).contiguous()
        raw = (t.view(torch.int16) if dtype != "F32" else t).numpy().tobytes(order="C")
        head[key] = {"dtype": dtype, "shape": list(map(int, t.shape)), "data_offsets": [pos, pos + len(raw)]}
        blobs.append(raw)
        pos += len(raw)
    text = json.dumps(head, separators=(",", ":")).encode("ascii")
    text += b" " * ((8 - (len(text) + 8) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


# ---------------------------------------------------------------- GPT-2

class Conv1D(torch.nn.Module):
    """GPT-2's linear layer: weight [in, out], y = x W + b."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(n_in, n_out))
        self.bias = torch.nn.Parameter(torch.empty(n_out))

    def forward(self, x):
        return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight).reshape(*x.shape[:-1], -1)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPT2Attention(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        n, p = c["n_embd"], c["n_positions"]
        self.h, self.c_attn, self.c_proj = c["n_head"], Conv1D(n, 3 * n), Conv1D(n, n)
        self.register_buffer("bias", torch.tril(torch.ones(p, p, dtype=torch.bool)).view(1, 1, p, p))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def forward(self, x):
        T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=1)
        q, k, v = (t.view(T, self.h, C // self.h).transpose(0, 1) for t in (q, k, v))
        w = q @ k.transpose(-1, -2) / torch.full([], v.size(-1) ** 0.5)
        w = torch.where(self.bias[0, 0, :T, :T], w, torch.tensor(torch.finfo(w.dtype).min))
        w = torch.softmax(w, dim=-1)
        return self.c_proj((w @ v).transpose(0, 1).reshape(T, C))


class GPT2MLP(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        inner = c.get("n_inner") or 4 * c["n_embd"]
        self.c_fc, self.c_proj = Conv1D(c["n_embd"], inner), Conv1D(inner, c["n_embd"])

    def forward(self, x):
        return self.c_proj(gelu_new(self.c_fc(x)))


class GPT2Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        eps = c["layer_norm_epsilon"]
        self.ln_1, self.attn = torch.nn.LayerNorm(c["n_embd"], eps=eps), GPT2Attention(c)
        self.ln_2, self.mlp = torch.nn.LayerNorm(c["n_embd"], eps=eps), GPT2MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = torch.nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = torch.nn.Embedding(c["n_positions"], c["n_embd"])
        self.h = torch.nn.ModuleList(GPT2Block(c) for _ in range(c["n_layer"]))
        self.ln_f = torch.nn.LayerNorm(c["n_embd"], eps=c["layer_norm_epsilon"])

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(len(ids)))
        for b in self.h:
            x = b(x)
        return self.ln_f(x)


class GPT2LMHeadModel(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = GPT2Model(c)
        self.lm_head = torch.nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # tied

    def forward(self, ids):
        return self.lm_head(self.transformer(ids))


def gpt2_config(**kw):
    c = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
         "bos_token_id": 0, "embd_pdrop": 0.1, "eos_token_id": 0, "initializer_range": 0.02,
         "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 32, "n_embd": 32, "n_head": 4,
         "n_inner": None, "n_layer": 2, "n_positions": 32, "reorder_and_upcast_attn": False,
         "resid_pdrop": 0.1, "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True,
         "summary_activation": None, "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
         "summary_type": "cls_index", "summary_use_proj": True, "task_specific_params": {"text-generation":
         {"do_sample": True, "max_length": 50}}, "use_cache": True, "vocab_size": 96,
         "_name_or_path": "stepformer/tiny-gpt2"}
    c.update(kw)
    return c


# ---------------------------------------------------------------- LLaMA, Qwen2

class RMSNorm(torch.nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight, self.eps = torch.nn.Parameter(torch.ones(n)), eps

    def forward(self, x):
        x32 = x.to(torch.float32)
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope_cos_sin(T, dim, theta):
    inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    freqs = torch.arange(T, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class LlamaAttention(torch.nn.Module):
    def __init__(self, c, qkv_bias, o_bias):
        super().__init__()
        C, H, KV = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        D = c.get("head_dim") or C // H
        self.H, self.KV, self.D, self.theta = H, KV, D, c["rope_theta"]
        self.q_proj = torch.nn.Linear(C, H * D, bias=qkv_bias)
        self.k_proj = torch.nn.Linear(C, KV * D, bias=qkv_bias)
        self.v_proj = torch.nn.Linear(C, KV * D, bias=qkv_bias)
        self.o_proj = torch.nn.Linear(H * D, C, bias=o_bias)

    def forward(self, x):
        T = x.shape[0]
        q = self.q_proj(x).view(T, self.H, self.D).transpose(0, 1)
        k = self.k_proj(x).view(T, self.KV, self.D).transpose(0, 1)
        v = self.v_proj(x).view(T, self.KV, self.D).transpose(0, 1)
        cos, sin = rope_cos_sin(T, self.D, self.theta)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.H // self.KV  # repeat_kv: each key/value head serves rep query heads in a row
        k = k[:, None].expand(self.KV, rep, T, self.D).reshape(self.H, T, self.D)
        v = v[:, None].expand(self.KV, rep, T, self.D).reshape(self.H, T, self.D)
        w = (q @ k.transpose(-1, -2)) * self.D ** -0.5
        w = w + torch.triu(torch.full((T, T), torch.finfo(torch.float32).min), diagonal=1)
        w = torch.softmax(w, dim=-1, dtype=torch.float32)
        return self.o_proj((w @ v).transpose(0, 1).reshape(T, self.H * self.D))


class LlamaMLP(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        C, F, bias = c["hidden_size"], c["intermediate_size"], c.get("mlp_bias", False)
        self.gate_proj = torch.nn.Linear(C, F, bias=bias)
        self.up_proj = torch.nn.Linear(C, F, bias=bias)
        self.down_proj = torch.nn.Linear(F, C, bias=bias)

    def forward(self, x):
        return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaDecoderLayer(torch.nn.Module):
    def __init__(self, c, qkv_bias, o_bias):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.self_attn = LlamaAttention(c, qkv_bias, o_bias)
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.mlp = LlamaMLP(c)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(torch.nn.Module):
    def __init__(self, c, qkv_bias, o_bias):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = torch.nn.ModuleList(LlamaDecoderLayer(c, qkv_bias, o_bias) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class LlamaForCausalLM(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        qwen = c["model_type"] == "qwen2"
        bias = c.get("attention_bias", False)
        self.model = LlamaModel(c, qwen or bias, bias and not qwen)
        self.lm_head = torch.nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        if c.get("tie_word_embeddings"):
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, ids):
        return self.lm_head(self.model(ids))


def llama_config(**kw):
    c = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
         "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "hidden_size": 32,
         "initializer_range": 0.02, "intermediate_size": 64, "max_position_embeddings": 32,
         "mlp_bias": False, "model_type": "llama", "num_attention_heads": 4, "num_hidden_layers": 2,
         "num_key_value_heads": 2, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": None,
         "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "float32",
         "transformers_version": "4.46.0", "use_cache": True, "vocab_size": 96,
         "_name_or_path": "stepformer/tiny-llama"}
    c.update(kw)
    return c


# ---------------------------------------------------------------- Marian

def sinusoid_halves(n_pos, dim):
    """MarianSinusoidalPositionalEmbedding's table: sin in the first half of the columns, cos in
    the second, built in numpy float64 and rounded once."""
    enc = np.array([[pos / np.power(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n_pos)])
    out = np.zeros((n_pos, dim))
    half = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out[:, 0:half] = np.sin(enc[:, 0::2])
    out[:, half:] = np.cos(enc[:, 1::2])
    return torch.tensor(out, dtype=torch.float32)


class MarianAttention(torch.nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.h, self.scaling = heads, (d // heads) ** -0.5
        self.q_proj, self.k_proj = torch.nn.Linear(d, d), torch.nn.Linear(d, d)
        self.v_proj, self.out_proj = torch.nn.Linear(d, d), torch.nn.Linear(d, d)

    def forward(self, x, kv, key_pad=None, causal=False):
        T, C = x.shape
        S = kv.shape[0]
        q = (self.q_proj(x) * self.scaling).view(T, self.h, -1).transpose(0, 1)
        k = self.k_proj(kv).view(S, self.h, -1).transpose(0, 1)
        v = self.v_proj(kv).view(S, self.h, -1).transpose(0, 1)
        w = q @ k.transpose(-1, -2)
        lowest = torch.finfo(w.dtype).min
        if causal:
            w = w + torch.triu(torch.full((T, S), lowest), diagonal=1)
        if key_pad is not None:
            w = w.masked_fill(key_pad[None, None, :], lowest)
        w = torch.softmax(w, dim=-1)
        return self.out_proj((w @ v).transpose(0, 1).reshape(T, C))


class MarianEncoderLayer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MarianAttention(d, c["encoder_attention_heads"])
        self.self_attn_layer_norm = torch.nn.LayerNorm(d)
        self.fc1, self.fc2 = torch.nn.Linear(d, c["encoder_ffn_dim"]), torch.nn.Linear(c["encoder_ffn_dim"], d)
        self.final_layer_norm = torch.nn.LayerNorm(d)

    def forward(self, x, pad):
        x = self.self_attn_layer_norm(x + self.self_attn(x, x, pad))
        return self.final_layer_norm(x + self.fc2(torch.nn.functional.silu(self.fc1(x))))


class MarianDecoderLayer(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.self_attn = MarianAttention(d, c["decoder_attention_heads"])
        self.self_attn_layer_norm = torch.nn.LayerNorm(d)
        self.encoder_attn = MarianAttention(d, c["decoder_attention_heads"])
        self.encoder_attn_layer_norm = torch.nn.LayerNorm(d)
        self.fc1, self.fc2 = torch.nn.Linear(d, c["decoder_ffn_dim"]), torch.nn.Linear(c["decoder_ffn_dim"], d)
        self.final_layer_norm = torch.nn.LayerNorm(d)

    def forward(self, x, memory, pad):
        x = self.self_attn_layer_norm(x + self.self_attn(x, x, causal=True))
        x = self.encoder_attn_layer_norm(x + self.encoder_attn(x, memory, pad))
        return self.final_layer_norm(x + self.fc2(torch.nn.functional.silu(self.fc1(x))))


class MarianStack(torch.nn.Module):
    def __init__(self, c, layer, n, shared):
        super().__init__()
        self.embed_tokens = shared
        self.embed_positions = torch.nn.Embedding(c["max_position_embeddings"], c["d_model"])
        self.embed_positions.weight = torch.nn.Parameter(sinusoid_halves(c["max_position_embeddings"], c["d_model"]),
                                                         requires_grad=False)
        self.layers = torch.nn.ModuleList(layer(c) for _ in range(n))
        self.scale = math.sqrt(c["d_model"]) if c.get("scale_embedding") else 1.0

    def embed(self, ids):
        return self.embed_tokens(ids) * self.scale + self.embed_positions(torch.arange(len(ids)))


class MarianInner(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        shared = torch.nn.Embedding(c["vocab_size"], c["d_model"])
        if c["share_encoder_decoder_embeddings"]:
            self.shared = shared
            enc = dec = shared
        else:  # as transformers: two copies of the shared table, and no model.shared
            self.shared = None
            enc, dec = copy.deepcopy(shared), copy.deepcopy(shared)
        self.encoder = MarianStack(c, MarianEncoderLayer, c["encoder_layers"], enc)
        self.decoder = MarianStack(c, MarianDecoderLayer, c["decoder_layers"], dec)


class MarianMTModel(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.model = MarianInner(c)
        target = c["vocab_size"] if c["share_encoder_decoder_embeddings"] else c["decoder_vocab_size"]
        self.lm_head = torch.nn.Linear(c["d_model"], target, bias=False)
        if c.get("tie_word_embeddings", True):
            self.lm_head.weight = self.model.decoder.embed_tokens.weight  # tied to the decoder's table
        self.register_buffer("final_logits_bias", torch.zeros(1, target))

    def forward(self, src, tgt):
        pad = src == self.c["pad_token_id"]
        x = self.model.encoder.embed(src)
        for layer in self.model.encoder.layers:
            x = layer(x, pad)
        y = self.model.decoder.embed(tgt)
        for layer in self.model.decoder.layers:
            y = layer(y, x, pad)
        return self.lm_head(y) + self.final_logits_bias


def marian_config(**kw):
    c = {"_name_or_path": "stepformer/tiny-marian", "activation_dropout": 0.0, "activation_function": "swish",
         "add_bias_logits": False, "add_final_layer_norm": False, "architectures": ["MarianMTModel"],
         "attention_dropout": 0.0, "bos_token_id": 0, "classif_dropout": 0.0, "classifier_dropout": 0.0,
         "d_model": 32, "decoder_attention_heads": 4, "decoder_ffn_dim": 64, "decoder_layerdrop": 0.0,
         "decoder_layers": 2, "decoder_start_token_id": 95, "decoder_vocab_size": 96, "dropout": 0.1,
         "encoder_attention_heads": 4, "encoder_ffn_dim": 64, "encoder_layerdrop": 0.0, "encoder_layers": 2,
         "eos_token_id": 0, "forced_eos_token_id": 0, "init_std": 0.02, "is_encoder_decoder": True,
         "max_length": 512, "max_position_embeddings": 64, "model_type": "marian", "normalize_before": False,
         "normalize_embedding": False, "num_beams": 4, "num_hidden_layers": 2, "pad_token_id": 95,
         "scale_embedding": True, "share_encoder_decoder_embeddings": True, "static_position_embeddings": True,
         "torch_dtype": "float32", "transformers_version": "4.46.0", "use_cache": True, "vocab_size": 96}
    c.update(kw)
    return c


def marian_greedy(model, src, n, pad, eos, start):
    """Greedy as generate() with bad_words_ids [[pad]]: pad never chosen; stops after eos."""
    ids = [start]
    with torch.no_grad():
        for _ in range(n):
            z = model(src, torch.tensor(ids))[-1].clone()
            z[pad] = -float("inf")
            nxt = int(z.argmax())
            ids.append(nxt)
            if nxt == eos:
                break
    return ids[1:]


def make_marian(name, config, seed, T=6, S=7, N=6, keys="all", src=None, extra=None):
    """keys: "all" (every name of state_dict()), "shared" (model.shared.weight alone for the three
    tied tables, as save_pretrained writes them) or "untied-head" (lm_head left out, tied to the
    decoder's table). src: the source ids, else random. extra: files copied into the folder."""
    gen = torch.Generator().manual_seed(seed)
    model = MarianMTModel(config)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if "embed_positions" in pname:
                continue
            if p.ndim == 2 and ("shared" in pname or "embed_tokens" in pname):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))  # scaled by sqrt(d_model) when embedded
            elif p.ndim == 2:
                p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(p.shape[1]))
            elif pname.endswith("bias"):
                p.copy_(0.2 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
        model.final_logits_bias.copy_(torch.randn(model.final_logits_bias.shape, generator=gen))
        # The pad id the likeliest token unless it is banned: greedy must never write it.
        model.final_logits_bias[0, config["pad_token_id"]] = 12.0
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    tensors = {k: v for k, v in model.state_dict().items()}
    if keys == "shared":
        for k in ("model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight", "lm_head.weight"):
            del tensors[k]
    if keys == "untied-head":
        del tensors["lm_head.weight"]
    write_safetensors(os.path.join(folder, "model.safetensors"), tensors, "F32", {"format": "pt"})
    for f in extra or []:
        shutil.copy(f, folder)
    pad, eos = config["pad_token_id"], config["eos_token_id"]
    if src is None:
        src = torch.cat([torch.randint(3, config["vocab_size"] - 1, (S - 1,), generator=gen), torch.tensor([eos])])
    else:
        src = torch.tensor(src)
    tgt = torch.cat([torch.tensor([config["decoder_start_token_id"]]),
                     torch.randint(3, config["vocab_size"] - 1, (T - 1,), generator=gen)])
    with torch.no_grad():
        logits = model(src, tgt)
    generated = marian_greedy(model, src, N, pad, eos, config["decoder_start_token_id"])
    write_safetensors(os.path.join(folder, "case.safetensors"),
                      {"src": src.to(torch.float32), "tgt": tgt.to(torch.float32), "logits": logits,
                       "generated": torch.tensor(generated, dtype=torch.float32)},
                      "F32", {"max_new_tokens": str(N)})
    print("%-24s F32  max|logit| %.2f  generated %s" % (name, float(logits.abs().max()), generated))


MARIAN_TEXT = "The black cat sleeps."


def spm_pieces(model, lines):
    out = subprocess.run(["spm_encode", "--model=" + model], input="".join(s + "\n" for s in lines),
                         capture_output=True, text=True, check=True).stdout
    return [line.split(" ") if line else [] for line in out.split("\n")[:len(lines)]]


def marian_tokenizer_case():
    """marian-tok: a Marian folder with its tokenizer as the hub ships one. source.spm (Unigram, the
    default nmt_nfkc rules) and target.spm (BPE) are trained by spm_train on the licence texts; vocab.json
    numbers </s> 0, <unk> 1, the source's pieces, the target's, <pad> last, and leaves out one source
    piece (so a piece it lacks is read as <unk>). reference.json holds, for the hard strings and a few
    sentences, the ids MarianTokenizer gives: spm_encode's pieces through vocab.json, </s> appended (`ids`
    by source.spm; `target_ids` by target.spm, as text_target= would give them). unigram-tokenizer.json is
    source.spm as a tokenizer.json of type Unigram (scripts/tokenizers/spm_to_unigram_json.py), and `spm_ids`
    the library's own ids for the strings, </s> (0) appended, which that file must give."""
    work = tempfile.mkdtemp()
    corpus = os.path.join(work, "corpus.txt")
    with open(corpus, "wb") as out:
        for f in sorted(glob.glob("/usr/share/common-licenses/*")):
            if os.path.isfile(f) and not os.path.islink(f):
                out.write(open(f, "rb").read())
    common = ["--input=" + corpus, "--vocab_size=300", "--num_threads=1", "--random_seed=1", "--unk_id=1",
              "--eos_id=0", "--bos_id=-1", "--pad_id=-1", "--character_coverage=0.999"]
    for side, kind in (("source", "unigram"), ("target", "bpe")):
        subprocess.run(["spm_train", "--model_prefix=" + os.path.join(work, side), "--model_type=" + kind] + common,
                       check=True, capture_output=True)
        os.replace(os.path.join(work, side + ".model"), os.path.join(work, side + ".spm"))
    vocab = {"</s>": 0, "<unk>": 1}
    left_out = None
    for side in ("source", "target"):
        for line in open(os.path.join(work, side + ".vocab"), encoding="utf-8"):
            piece = line.split("\t")[0]
            if piece in ("<unk>", "<s>", "</s>"):
                continue
            if side == "source" and left_out is None and piece == "▁the":
                left_out = piece
                continue
            vocab.setdefault(piece, len(vocab))
    vocab["<pad>"] = len(vocab)
    with open(os.path.join(work, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False, indent=1)
    hard = json.load(open(os.path.join(ROOT, "scripts", "tokenizers", "hard_strings.json"), encoding="utf-8"))
    strings = [s for s in hard if s.strip() and "\n" not in s and "</s>" not in s and "<unk>" not in s and "<pad>" not in s]
    strings += [MARIAN_TEXT, "Every number on screen must be right.", "Füße  straße ﬁ ①② Ｈｅｌｌｏ　world",
                "the THE The", "x" * 200]
    unk, eos = vocab["<unk>"], vocab["</s>"]
    ids = [[vocab.get(p, unk) for p in ps] + [eos] for ps in spm_pieces(os.path.join(work, "source.spm"), strings)]
    target_ids = [[vocab.get(p, unk) for p in ps] + [eos] for ps in spm_pieces(os.path.join(work, "target.spm"), strings)]
    pad = vocab["<pad>"]
    config = marian_config(vocab_size=len(vocab), decoder_vocab_size=len(vocab), pad_token_id=pad,
                           decoder_start_token_id=pad, max_position_embeddings=128,
                           _name_or_path="stepformer/tiny-marian-tok")
    files = [os.path.join(work, n) for n in ("source.spm", "target.spm", "vocab.json")]
    make_marian("marian-tok", config, 10, src=ids[strings.index(MARIAN_TEXT)], extra=files)
    # The source model as a tokenizer.json of type Unigram (as converted copies ship it), and the
    # ids the sentencepiece library gives (its own ids, </s> appended), which that file must give.
    source = os.path.join(work, "source.spm")
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "tokenizers", "spm_to_unigram_json.py"), source,
                    os.path.join(OUT, "marian-tok", "unigram-tokenizer.json")], check=True)
    out = subprocess.run(["spm_encode", "--model=" + source, "--output_format=id"],
                         input="".join(s + "\n" for s in strings), capture_output=True, text=True, check=True).stdout
    spm_ids = [[int(x) for x in line.split()] + [0] for line in out.split("\n")[:len(strings)]]
    with open(os.path.join(OUT, "marian-tok", "reference.json"), "w", encoding="utf-8") as f:
        json.dump({"left_out": left_out, "strings": strings, "ids": ids, "target_ids": target_ids, "spm_ids": spm_ids}, f,
                  ensure_ascii=False, indent=0)
    shutil.rmtree(work)


# ---------------------------------------------------------------- making a case

def randomize(model, gen):
    """Weights at a scale where activations are O(1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 2 and ("wte" in name or "wpe" in name or "embed_tokens" in name):
                p.copy_(torch.randn(p.shape, generator=gen))
            elif p.ndim == 2:
                fan_in = p.shape[0] if isinstance(dict(model.named_modules()).get(name.rsplit(".", 1)[0]), Conv1D) \
                    else p.shape[1]
                # The feed-forward's first map larger: its activation then works where the exact
                # GELU and the tanh one differ most (|x| about 2), and its second map passes that on.
                gain = 2.5 if "mlp.c_fc" in name else 2.0 if "mlp.c_proj" in name else 1.0
                p.copy_(gain * torch.randn(p.shape, generator=gen) / math.sqrt(fan_in))
            elif name.endswith("bias"):
                p.copy_(0.2 * torch.randn(p.shape, generator=gen))
            else:  # a norm's gain
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))


def round_to(model, dtype):
    """The weights as the file stores them, widened back to float32."""
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(DTYPES[dtype]).to(torch.float32))


def state(model, drop_prefix, keep_lm_head):
    out = {}
    for k, v in model.state_dict().items():
        if k == "lm_head.weight" and not keep_lm_head:
            continue
        if v.dtype == torch.bool:
            v = v.to(torch.float32)  # GPT-2's attn.bias is stored as a float mask by older files
        out[k[len(drop_prefix):] if drop_prefix and k.startswith(drop_prefix) else k] = v
    return out


def greedy(model, ids, n):
    ids = list(ids)
    out = []
    with torch.no_grad():
        for _ in range(n):
            nxt = int(model(torch.tensor(ids)).argmax(-1)[-1])
            out.append(nxt)
            ids.append(nxt)
    return out


def make(name, config, model_class, seed, dtype="F32", drop_prefix="", keep_lm_head=False, shards=1, T=7, N=5):
    gen = torch.Generator().manual_seed(seed)
    model = model_class(config)
    randomize(model, gen)
    round_to(model, dtype)
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    conf = dict(config)
    conf["torch_dtype"] = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(conf, f, indent=2)
    tensors = state(model, drop_prefix, keep_lm_head)
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), tensors, dtype, {"format": "pt"})
    else:
        names = sorted(tensors)
        weight_map = {}
        for s in range(shards):
            file = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
            part = {k: tensors[k] for k in names[s::shards]}
            write_safetensors(os.path.join(folder, file), part, dtype, {"format": "pt"})
            weight_map.update({k: file for k in part})
        with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f, indent=2)
    ids = torch.randint(3, config["vocab_size"], (T,), generator=gen)
    with torch.no_grad():
        logits = model(ids)
    generated = greedy(model, ids.tolist(), N)
    labels = torch.cat([ids[1:], torch.tensor(generated[:1])])
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(ids), labels).backward()
    grads = {}
    for k, p in model.named_parameters():  # a tied tensor once, under its first name
        key = k[len("transformer."):] if k.startswith("transformer.") else k
        grads[key] = p.grad.detach().clone()
    write_safetensors(os.path.join(folder, "grads.safetensors"), grads)
    write_safetensors(os.path.join(folder, "case.safetensors"),
                      {"ids": ids.to(torch.float32), "logits": logits,
                       "generated": torch.tensor(generated, dtype=torch.float32), "labels": labels.to(torch.float32)},
                      "F32", {"max_new_tokens": str(N)})
    print("%-24s %s  max|logit| %.2f  generated %s" % (name, dtype, float(logits.abs().max()), generated))


def read_safetensors(path):
    """A safetensors file's tensors as float32 (F16 and BF16 widened)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for k, v in head.items():
        if k == "__metadata__":
            continue
        b, e = v["data_offsets"]
        data = raw[8 + n + b:8 + n + e]
        if v["dtype"] == "F32":
            a = np.frombuffer(data, dtype="<f4")
        elif v["dtype"] == "F16":
            a = np.frombuffer(data, dtype="<f2").astype(np.float32)
        else:
            a = (np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        out[k] = torch.from_numpy(a.copy()).reshape(v["shape"])
    return out


def lesson_ids(lesson):
    with open(os.path.join(ROOT, "lessons", lesson)) as f:
        for line in f:
            if line.startswith("src_ids:"):
                return [int(x) for x in line.split(":", 1)[1].split(",")]
    raise SystemExit("%s has no src_ids" % lesson)


def lesson_case(name, lesson, N=8):
    """PyTorch's logits and greedy ids for a lesson's model folder, on the lesson's prompt."""
    folder = os.path.join(ROOT, "assets", "models", name)
    with open(os.path.join(folder, "config.json")) as f:
        conf = json.load(f)
    gpt2 = conf["model_type"] == "gpt2"
    model = (GPT2LMHeadModel if gpt2 else LlamaForCausalLM)((gpt2_config if gpt2 else llama_config)(**conf))
    tensors = read_safetensors(os.path.join(folder, "model.safetensors"))
    if gpt2:
        tensors = {("transformer." + k if not k.startswith("lm_head.") else k): v for k, v in tensors.items()}
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    allowed = {"lm_head.weight"} if gpt2 or conf.get("tie_word_embeddings") else set()
    missing = [k for k in missing if k not in allowed and not k.endswith(("attn.bias", "attn.masked_bias"))]
    if missing or unexpected:
        raise SystemExit("%s: missing %s, unexpected %s" % (name, missing, unexpected))
    ids = torch.tensor(lesson_ids(lesson))
    with torch.no_grad():
        logits = model(ids)
    generated = greedy(model, ids.tolist(), N)
    write_safetensors(os.path.join(OUT, "lesson-%s.safetensors" % name),
                      {"ids": ids.to(torch.float32), "logits": logits,
                       "generated": torch.tensor(generated, dtype=torch.float32)})
    print("lesson-%-17s max|logit| %.2f  generated %s" % (name, float(logits.abs().max()), generated))


def marian_lesson_case(name, lesson, N=16):
    """PyTorch's greedy ids for a lesson's Marian folder on the lesson's source ids, and its logits with the
    decoder fed the start id and those ids (`src`, `tgt`, `logits`, `generated`)."""
    folder = os.path.join(ROOT, "assets", "models", name)
    with open(os.path.join(folder, "config.json")) as f:
        conf = json.load(f)
    model = MarianMTModel(marian_config(**conf))
    tensors = read_safetensors(os.path.join(folder, "model.safetensors"))
    if "model.shared.weight" not in tensors:  # the folder keeps the first of the tied tables
        tensors["model.shared.weight"] = tensors["model.encoder.embed_tokens.weight"]
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    allowed = {"model.decoder.embed_tokens.weight", "lm_head.weight", "model.encoder.embed_tokens.weight"}
    missing = [k for k in missing if k not in allowed]
    if missing or unexpected:
        raise SystemExit("%s: missing %s, unexpected %s" % (name, missing, unexpected))
    src = torch.tensor(lesson_ids(lesson))
    start = conf["decoder_start_token_id"]
    generated = marian_greedy(model, src, N, conf["pad_token_id"], conf["eos_token_id"], start)
    tgt = torch.tensor([start] + generated[:-1])
    with torch.no_grad():
        logits = model(src, tgt)
    write_safetensors(os.path.join(OUT, "lesson-%s.safetensors" % name),
                      {"src": src.to(torch.float32), "tgt": tgt.to(torch.float32), "logits": logits,
                       "generated": torch.tensor(generated, dtype=torch.float32)}, "F32", {"max_new_tokens": str(N)})
    print("lesson-%-17s max|logit| %.2f  generated %s" % (name, float(logits.abs().max()), generated))


def main():
    make("gpt2", gpt2_config(), GPT2LMHeadModel, 1, drop_prefix="transformer.")
    make("gpt2-prefixed-f16", gpt2_config(n_layer=3, _name_or_path="stepformer/tiny-gpt2-f16"), GPT2LMHeadModel, 2,
         dtype="F16", keep_lm_head=True)
    make("llama-gqa-bf16", llama_config(), LlamaForCausalLM, 3, dtype="BF16", keep_lm_head=True, shards=2)
    make("llama-mha-tied", llama_config(num_key_value_heads=4, tie_word_embeddings=True, rope_theta=500000.0,
                                        _name_or_path="stepformer/tiny-llama-tied"), LlamaForCausalLM, 4)
    make("llama-mlp-bias", llama_config(mlp_bias=True, attention_bias=True, num_key_value_heads=1,
                                        _name_or_path="stepformer/tiny-llama-biases"), LlamaForCausalLM, 6, keep_lm_head=True)
    make("qwen2", llama_config(model_type="qwen2", architectures=["Qwen2ForCausalLM"], tie_word_embeddings=True,
                               rope_theta=1000000.0, use_sliding_window=False, sliding_window=32,
                               max_window_layers=2, _name_or_path="stepformer/tiny-qwen2"), LlamaForCausalLM, 5)
    make_marian("marian", marian_config(), 7)
    make_marian("marian-shared-only", marian_config(), 8, keys="shared")
    make_marian("marian-separate", marian_config(share_encoder_decoder_embeddings=False), 9, keys="untied-head")
    marian_tokenizer_case()
    lesson_case("gpt2-licences", "gpt2.md")
    lesson_case("llama-licences", "llama.md")
    marian_lesson_case("marian-gettext-en-de", "marian.md")


if __name__ == "__main__":
    sys.exit(main())
