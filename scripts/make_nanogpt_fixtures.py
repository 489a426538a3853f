#!/usr/bin/python3
"""Generate the nanoGPT fixtures and the nanoGPT lesson's model.

karpathy/nanoGPT's model.py defines GPT with its own module names. The GPT below is written
here from that structure (it copies no code): CausalSelfAttention with one fused c_attn and
c_proj (and, in one variant, the causal mask registered as the buffer `bias`, which PyTorch
saved before it had flash attention), MLP with c_fc, exact GELU and c_proj, Block with ln_1
and ln_2, and GPT with transformer.{wte, wpe, h, ln_f} and lm_head tied to wte. Its
state_dict() keys are checked against nanoGPT's names. Generation is nanoGPT's generate()
with the sampling replaced by argmax (temperature -> 0, top_k None).

Writes:

  tests/fixtures/nanogpt/gpt_bias.safetensors      bias=True, with the attn.bias buffers: a
                                                   raw state_dict .pt converted by torch2st
  tests/fixtures/nanogpt/gpt_nobias.safetensors    bias=False: a ckpt.pt dict as train.py saves
                                                   it after torch.compile ('_orig_mod.' keys,
                                                   model_args), converted by torch2st
  tests/fixtures/nanogpt/NAME.case0.safetensors    a prompt, PyTorch's logits at every prompt
                                                   position, every attention map, and the ids
                                                   generate() appends
  assets/models/nanogpt-rhymes.safetensors         the lesson's model: the same GPT trained here
                                                   on six rhymes, a character vocabulary
  tests/fixtures/nanogpt/rhymes.case0.safetensors  the lesson's prompt on it

  /usr/bin/python3 scripts/make_nanogpt_fixtures.py          # generate, then check
  /usr/bin/python3 scripts/make_nanogpt_fixtures.py --check  # only re-read and check

The check re-reads every file with the parser of make_seed_fixtures.py and recomputes every
case in float64 NumPy from the converted weights alone. Seeds are fixed and torch runs on one
thread, so a rerun on one machine writes the same bytes. Needs Debian's python3-torch.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from make_seed_fixtures import read_safetensors, write_safetensors  # noqa: E402

OUT = os.path.join(ROOT, "tests", "fixtures", "nanogpt")
LESSON_MODEL = os.path.join(ROOT, "assets", "models", "nanogpt-rhymes.safetensors")
MIN_GAP = 1e-3      # top-1 minus top-2 logit gap at every generated step
REF_ATOL = 2e-5     # float64 NumPy against PyTorch's float32
LN_EPS = 1e-5       # nanoGPT's LayerNorm

# The random fixtures: nanoGPT's names, a small size. Prompt length and tokens generated.
FIXTURES = [
    dict(name="gpt_bias", seed=2301, n_layer=2, n_head=4, n_embd=32, block_size=16,
         vocab_size=50, bias=True, mask_buffer=True, saved="state_dict", prompt=6, new=8),
    dict(name="gpt_nobias", seed=2302, n_layer=2, n_head=4, n_embd=32, block_size=16,
         vocab_size=50, bias=False, mask_buffer=False, saved="ckpt", prompt=6, new=8),
]
# The lesson's model: six rhymes, learned by heart, one character a token.
RHYMES = ("the cat sat on the mat. the dog sat on the log. the fox sat on the box. "
          "the hen sat on the pen. the bug sat on the rug. the pig sat on the wig. ")
LESSON = dict(name="rhymes", seed=2303, n_layer=2, n_head=4, n_embd=32, block_size=48,
              bias=False, mask_buffer=False, steps=1000, batch=16, lr=3e-3, new=29)
LESSON_PROMPT = "the fox sat on the"


# ==========================================================================
# nanoGPT's GPT, module by module
# ==========================================================================

class LayerNorm(nn.Module):
    """nn.LayerNorm whose bias may be left out (PyTorch's own could not, when nanoGPT began)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, LN_EPS)


class CausalSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n_head = c["n_head"]
        self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"], bias=c["bias"])
        self.c_proj = nn.Linear(c["n_embd"], c["n_embd"], bias=c["bias"])
        self.attn_dropout = nn.Dropout(0.0)
        self.resid_dropout = nn.Dropout(0.0)
        if c["mask_buffer"]:  # what PyTorch without scaled_dot_product_attention saved
            bs = c["block_size"]
            self.register_buffer("bias", torch.tril(torch.ones(bs, bs)).view(1, 1, bs, bs))
        self.maps = None  # the last forward's attention probabilities [B, n_head, T, T]

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)  # three consecutive thirds of c_attn's rows
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        seen = (self.bias[:, :, :T, :T] if hasattr(self, "bias") and self.bias is not None
                else torch.tril(torch.ones(T, T)).view(1, 1, T, T))
        att = att.masked_fill(seen == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        self.maps = att
        y = self.attn_dropout(att) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"], bias=c["bias"])
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"], bias=c["bias"])
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = LayerNorm(c["n_embd"], c["bias"])
        self.attn = CausalSelfAttention(c)
        self.ln_2 = LayerNorm(c["n_embd"], c["bias"])
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]),
            wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            drop=nn.Dropout(0.0),
            h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
            ln_f=LayerNorm(c["n_embd"], c["bias"]),
        ))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # one tensor under two names

    def forward(self, idx):
        """Logits at every position [B, T, vocab_size] (nanoGPT's path with targets)."""
        T = idx.size(1)
        assert T <= self.c["block_size"]
        pos = torch.arange(0, T, dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens):
        """generate() with argmax for the sampling; also each step's top-1 minus top-2 gap."""
        gaps = []
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.c["block_size"] else idx[:, -self.c["block_size"]:]
            logits = self(idx_cond)[:, -1, :]
            top = torch.topk(logits[0], 2).values
            gaps.append(float(top[0] - top[1]))
            idx = torch.cat((idx, torch.argmax(logits, dim=-1, keepdim=True)), dim=1)
        return idx, gaps


def nanogpt_keys(c):
    """nanoGPT's state_dict() keys for this configuration, in its order."""
    keys = ["transformer.wte.weight", "transformer.wpe.weight"]
    for i in range(c["n_layer"]):
        p = f"transformer.h.{i}."
        keys += [p + "ln_1.weight"] + ([p + "ln_1.bias"] if c["bias"] else [])
        keys += [p + "attn.bias"] if c["mask_buffer"] else []
        for lin in ("attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"):
            if lin == "ln_2":
                keys += [p + "ln_2.weight"] + ([p + "ln_2.bias"] if c["bias"] else [])
                continue
            keys += [p + lin + ".weight"] + ([p + lin + ".bias"] if c["bias"] else [])
    keys += ["transformer.ln_f.weight"] + (["transformer.ln_f.bias"] if c["bias"] else [])
    return keys + ["lm_head.weight"]


def model_args(c):
    """train.py's model_args (dropout is 0: the model is evaluated)."""
    return dict(n_layer=c["n_layer"], n_head=c["n_head"], n_embd=c["n_embd"],
                block_size=c["block_size"], bias=c["bias"], vocab_size=c["vocab_size"], dropout=0.0)


def randomize(model):
    """Random weights large enough that attention is far from uniform and a wrong scale shows:
    matrices N(0, 1/fan_in), LayerNorm gains 1 + N(0, 0.1), biases N(0, 0.1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
                p.copy_(1 + 0.1 * torch.randn_like(p))
            elif p.dim() == 1:
                p.copy_(0.1 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[1]))


def nanogpt_init(model):
    """nanoGPT's own initialisation: N(0, 0.02), biases 0, c_proj N(0, 0.02 / sqrt(2 n_layer))."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.fill_(1.0 if name.endswith("weight") else 0.0)
            else:
                std = 0.02 / math.sqrt(2 * model.c["n_layer"]) if name.endswith("c_proj.weight") else 0.02
                p.normal_(0.0, std)


# ==========================================================================
# saving as nanoGPT does, and converting with torch2st
# ==========================================================================

def save_checkpoint(model, c, path):
    sd = model.state_dict()
    assert list(sd) == nanogpt_keys(c), f"state_dict keys {list(sd)}"
    assert sd["lm_head.weight"].data_ptr() == sd["transformer.wte.weight"].data_ptr()
    if c.get("saved") == "state_dict":
        torch.save(sd, path)
        return
    compiled = {"_orig_mod." + k: v for k, v in sd.items()}  # what torch.compile's wrapper saves
    torch.save({"model": compiled, "optimizer": {}, "model_args": model_args(c), "iter_num": 0,
                "best_val_loss": 1e9, "config": {"batch_size": 12, "learning_rate": 6e-4}}, path)


def torch2st(pt, out, *extra):
    run = subprocess.run([sys.executable, os.path.join(HERE, "torch2st.py"), pt, out, *extra],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"torch2st failed on {pt}:\n{run.stderr}")
    return run.stderr


# ==========================================================================
# cases
# ==========================================================================

def torch_case(model, c, prompt, new):
    """Tensors of one case: the prompt's logits and maps, and the ids generate() appends."""
    idx = torch.tensor([prompt])
    with torch.no_grad():
        logits = model(idx)[0]
    out = {"idx": torch.tensor(prompt, dtype=torch.float32), "logits": logits.clone()}
    for i, block in enumerate(model.transformer.h):
        out[f"decoder.layers.{i}.self_attn.weights"] = block.attn.maps[0].clone()
    full, gaps = model.generate(idx, new)
    out["generated"] = full[0, len(prompt):].to(torch.float32)
    return out, min(gaps)


def random_case(model, c, rng):
    for _ in range(200):
        prompt = [int(t) for t in rng.integers(0, c["vocab_size"], size=c["prompt"])]
        case, gap = torch_case(model, c, prompt, c["new"])
        if gap >= MIN_GAP:
            return case
    sys.exit(f"{c['name']}: no prompt with every gap >= {MIN_GAP}")


def case_metadata(c, case):
    return {"max_new_tokens": str(len(case["generated"])),
            "config": " ".join(f"{k}={int(v)}" for k, v in model_args(c).items() if k != "dropout")}


def make_random(c, tmp):
    torch.manual_seed(c["seed"])
    model = GPT(c).eval()
    randomize(model)
    pt = os.path.join(tmp, c["name"] + ".pt")
    save_checkpoint(model, c, pt)
    torch2st(pt, os.path.join(OUT, c["name"] + ".safetensors"))
    case = random_case(model, c, np.random.default_rng(c["seed"]))
    write_safetensors(os.path.join(OUT, c["name"] + ".case0.safetensors"), case, case_metadata(c, case))


def train_rhymes(c):
    chars = sorted(set(RHYMES))
    c = dict(c, vocab_size=len(chars))
    torch.manual_seed(c["seed"])
    model = GPT(c)
    nanogpt_init(model)
    data = torch.tensor([chars.index(ch) for ch in RHYMES * 3])
    opt = torch.optim.AdamW(model.parameters(), lr=c["lr"], weight_decay=0.0)
    bs = c["block_size"]
    for _ in range(c["steps"]):
        at = torch.randint(0, len(RHYMES), (c["batch"],))
        x = torch.stack([data[i:i + bs] for i in at])
        y = torch.stack([data[i + 1:i + bs + 1] for i in at])
        loss = F.cross_entropy(model(x).reshape(-1, c["vocab_size"]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"rhymes: trained {c['steps']} steps, loss {loss.item():.4f}")
    return model.eval(), c, chars


def make_lesson_model(tmp):
    model, c, chars = train_rhymes(LESSON)
    pt = os.path.join(tmp, "rhymes.pt")
    save_checkpoint(model, dict(c, saved="ckpt"), pt)
    torch2st(pt, LESSON_MODEL, "--tokens-tgt", json_list(chars))
    prompt = [chars.index(ch) for ch in LESSON_PROMPT]
    case, gap = torch_case(model, c, prompt, c["new"])
    text = "".join(chars[int(i)] for i in case["generated"])
    print(f"rhymes: '{LESSON_PROMPT}' -> '{text}' (smallest gap {gap:.3f})")
    assert gap >= MIN_GAP
    meta = dict(case_metadata(c, case), prompt=LESSON_PROMPT, generated_text=text)
    write_safetensors(os.path.join(OUT, "rhymes.case0.safetensors"), case, meta)


def json_list(tokens):
    import json
    return json.dumps(tokens)


# ==========================================================================
# the check: float64 NumPy from the converted file alone
# ==========================================================================

def np_layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + LN_EPS) * w
    return y + b if b is not None else y


def np_gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def np_gpt(W, c, ids):
    """Logits [T, V] and the maps of every layer, from the file's tensors."""
    T, C, H = len(ids), c["n_embd"], c["n_head"]
    lin = lambda x, n: x @ W[n + ".weight"].T + (W[n + ".bias"] if n + ".bias" in W else 0.0)
    x = W["transformer.wte.weight"][ids] + W["transformer.wpe.weight"][:T]
    maps = []
    for i in range(c["n_layer"]):
        p = f"transformer.h.{i}."
        h = np_layer_norm(x, W[p + "ln_1.weight"], W.get(p + "ln_1.bias"))
        q, k, v = np.split(lin(h, p + "attn.c_attn"), 3, axis=1)
        q, k, v = (t.reshape(T, H, C // H).transpose(1, 0, 2) for t in (q, k, v))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(C // H)
        s = np.where(np.tril(np.ones((T, T))) > 0, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        a = s / s.sum(-1, keepdims=True)
        maps.append(a)
        x = x + lin((a @ v).transpose(1, 0, 2).reshape(T, C), p + "attn.c_proj")
        h = np_layer_norm(x, W[p + "ln_2.weight"], W.get(p + "ln_2.bias"))
        x = x + lin(np_gelu(lin(h, p + "mlp.c_fc")), p + "mlp.c_proj")
    x = np_layer_norm(x, W["transformer.ln_f.weight"], W.get("transformer.ln_f.bias"))
    return x @ W["lm_head.weight"].T, maps


def check_model(name, model_path, case_path, c):
    _, meta, W = read_safetensors(model_path)
    _, cmeta, case = read_safetensors(case_path)
    for k in ("n_layer", "n_embd", "block_size", "vocab_size", "bias"):  # n_head: given, or model_args
        if k in meta:
            assert int(meta[k]) == int(c[k]), f"{name}: metadata {k}={meta[k]}, wanted {c[k]}"
    assert np.array_equal(W["lm_head.weight"], W["transformer.wte.weight"]), name + ": untied"
    assert c["bias"] == ("transformer.ln_f.bias" in W), name + ": biases"
    assert c["mask_buffer"] == ("transformer.h.0.attn.bias" in W), name + ": mask buffers"
    ids = [int(t) for t in case["idx"]]
    logits, maps = np_gpt(W, c, ids)
    worst = float(np.abs(logits - case["logits"]).max())
    for i, a in enumerate(maps):
        worst = max(worst, float(np.abs(a - case[f"decoder.layers.{i}.self_attn.weights"]).max()))
    assert worst <= REF_ATOL, f"{name}: NumPy differs from PyTorch by {worst:.2e}"
    seq = list(ids)
    for _ in range(int(cmeta["max_new_tokens"])):
        seq.append(int(np.argmax(np_gpt(W, c, seq[-c["block_size"]:])[0][-1])))
    assert seq[len(ids):] == [int(t) for t in case["generated"]], name + ": greedy ids differ"
    print(f"ok   {name}: logits and maps within {worst:.1e} of PyTorch, "
          f"{len(seq) - len(ids)} greedy ids the same")


def check_all():
    for c in FIXTURES:
        check_model(c["name"], os.path.join(OUT, c["name"] + ".safetensors"),
                    os.path.join(OUT, c["name"] + ".case0.safetensors"), c)
    _, meta, _ = read_safetensors(LESSON_MODEL)
    c = dict(LESSON, vocab_size=int(meta["vocab_size"]))
    check_model("rhymes", LESSON_MODEL, os.path.join(OUT, "rhymes.case0.safetensors"), c)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only re-read and check the files")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if not args.check:
        os.makedirs(OUT, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            for c in FIXTURES:
                make_random(c, tmp)
            make_lesson_model(tmp)
    check_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
