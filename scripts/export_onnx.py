#!/usr/bin/python3
"""export_onnx.py: the browser benchmark's peer models, exported to ONNX by PyTorch.

  /usr/bin/python3 scripts/export_onnx.py --out DIR --stepformer build/stepformer

The browser benchmark (tests/web/bench_page.py) times, in one page load, stepformer's two passes
and ONNX Runtime Web running the same models. This writes those models:

  dates_encoder.onnx   the dates model (assets/models/dates.safetensors, lessons/forward-pass.md)
                       as PyTorch's tutorial builds it: src ids [1, S] -> memory [S, 1, d_model]
  dates_decoder.onnx   tgt ids [1, T], memory [S, 1, d_model] -> logits of the last position
                       [1, vocab]: the tutorial's greedy_decode runs it once a round
  base_forward.onnx    the base configuration (d_model 512, 8 heads, 6+6 layers, d_ff 2048,
                       vocabulary 1000, random weights): src and tgt ids [1, 32] -> logits
                       [32, 1, 1000], teacher forcing with the causal mask
  gpt2_forward.onnx    GPT-2 small (12 layers, 12 heads, 768 wide, 50257 tokens) with the random
                       weights `stepformer init --seed 1` writes, which the page's own pass makes
                       too (pass_timing.c), in Hugging Face's formulas (scripts/hf_gpt2.py):
                       ids [1, 128] -> logits [1, 128, 50257]
  manifest.json        the ids each pass reads, and the tokens stepformer's greedy decoding of
                       the lesson's input gives, so the page can check ONNX Runtime's answer;
                       for GPT-2, the token stepformer's `run` on the same folder and ids picks

The dates model in PyTorch is checked against stepformer before it is exported: its greedy
answer must be the tokens `stepformer run` gives for the lesson's input; GPT-2's next token
after its 128 ids must be the one `stepformer run` gives on the same folder.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
from torch import nn

from hf_gpt2 import GPT2, read_folder
from make_seed_fixtures import read_safetensors  # the checked reader the seed fixtures use

LESSON_INPUT = "22 November 2026"  # lessons/forward-pass.md's input
MAX_LEN = 12                        # and its max_len
BASE = {"d_model": 512, "nhead": 8, "layers": 6, "d_ff": 2048, "vocab": 1000}
BASE_LEN = 32
# GPT-2 small, as pass_timing.c builds it in the page (the same seed: the same weights).
GPT2_SMALL = "n_layer=12 n_head=12 n_embd=768 n_inner=3072 n_positions=1024 vocab_size=50257"
GPT2_SEED = 1
GPT2_LEN = 128


class TokenEmbedding(nn.Module):
    def __init__(self, vocab, d):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.scale = math.sqrt(d)

    def forward(self, ids):  # [1, L] -> [L, 1, d]
        return self.embedding(ids.t()) * self.scale


class PositionalEncoding(nn.Module):
    def __init__(self, d, maxlen):
        super().__init__()
        den = torch.exp(-torch.arange(0, d, 2) * math.log(10000) / d)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pe = torch.zeros((maxlen, d))
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * den), torch.cos(pos * den)
        self.register_buffer("pos_embedding", pe.unsqueeze(1))

    def forward(self, x):
        return x + self.pos_embedding[:x.size(0)]


def causal_mask(n):
    """-inf above the diagonal, built from comparisons so that n may vary in the exported graph."""
    i = torch.arange(n)
    return torch.zeros(n, n).masked_fill(i.unsqueeze(0) > i.unsqueeze(1), float("-inf"))


class Seq2SeqTransformer(nn.Module):
    """The module of PyTorch's tutorial "Language Translation with nn.Transformer", with the
    names the dates model's weights have."""

    def __init__(self, d, nhead, enc, dec, d_ff, vocab_src, vocab_tgt, maxlen):
        super().__init__()
        self.transformer = nn.Transformer(d, nhead, enc, dec, d_ff, dropout=0.0)
        self.generator = nn.Linear(d, vocab_tgt)
        self.src_tok_emb = TokenEmbedding(vocab_src, d)
        self.tgt_tok_emb = TokenEmbedding(vocab_tgt, d)
        self.positional_encoding = PositionalEncoding(d, maxlen)

    def encode(self, src):
        return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)))

    def decode(self, tgt, memory):
        x = self.positional_encoding(self.tgt_tok_emb(tgt))
        return self.transformer.decoder(x, memory, tgt_mask=causal_mask(tgt.size(1)))

    def forward(self, src, tgt):
        return self.generator(self.decode(tgt, self.encode(src)))


class LastLogits(nn.Module):
    """One round of greedy decoding: the logits of the prefix's last position."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tgt, memory):
        return self.model.generator(self.model.decode(tgt, memory)[-1])


class Encoder(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, src):
        return self.model.encode(src)


def stepformer_json(stepformer, *args):
    r = subprocess.run([stepformer, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{stepformer} {' '.join(args)}: {r.stderr.strip()}")
    return json.loads(r.stdout)


def dates_model(root):
    _, meta, arrays = read_safetensors(os.path.join(root, "assets/models/dates.safetensors"))
    tensors = {name: torch.from_numpy(a.astype(np.float32)) for name, a in arrays.items()}  # float64 holds each float
    c = {k: int(meta[k]) for k in ("d_model", "nhead", "num_encoder_layers", "num_decoder_layers",
                                   "dim_feedforward", "src_vocab_size", "tgt_vocab_size", "max_positions")}
    model = Seq2SeqTransformer(c["d_model"], c["nhead"], c["num_encoder_layers"], c["num_decoder_layers"],
                               c["dim_feedforward"], c["src_vocab_size"], c["tgt_vocab_size"], c["max_positions"])
    model.load_state_dict(tensors, strict=True)
    tokens = json.loads(meta["src_tokens"])
    src = [tokens.index(ch) for ch in LESSON_INPUT]  # the lesson's vocabulary is one token a character
    return model.eval(), src, int(meta["bos_id"]), int(meta["eos_id"])


def greedy(model, src, bos, eos):
    with torch.inference_mode():
        memory = model.encode(torch.tensor([src]))
        ys = [bos]
        for _ in range(MAX_LEN):
            nxt = int(torch.argmax(model.generator(model.decode(torch.tensor([ys]), memory)[-1]), dim=1)[0])
            ys.append(nxt)
            if nxt == eos:
                break
    return ys[1:]


def export(module, args, path, names, outputs, dynamic):
    # The shapes are fixed, so what the tracer warns of (Python numbers taken as constants) is meant.
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    torch.onnx.export(module, args, path, input_names=names, output_names=outputs, dynamic_axes=dynamic,
                      opset_version=14, do_constant_folding=True)


class LogitsOnly(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids)


def gpt2(stepformer, root, out):
    """GPT-2 small's forward at GPT2_LEN tokens, exported; its ids and stepformer's next token."""
    d = tempfile.mkdtemp(prefix="stepformer-onnx-gpt2-")
    try:
        subprocess.run([stepformer, "init", "--program", os.path.join(root, "lessons/gpt2.md"), "--config", GPT2_SMALL,
                        "--seed", str(GPT2_SEED), "--out", d + "/"], check=True, capture_output=True)
        conf, w = read_folder(d)
        model = GPT2(conf, w).eval()
        ids = torch.randint(0, conf["vocab_size"], (1, GPT2_LEN), generator=torch.Generator().manual_seed(3))
        with torch.no_grad():
            theirs = int(model(ids)[0, -1].argmax())
        ours = stepformer_json(stepformer, "run", "--model", d, "--src-ids", ",".join(map(str, ids[0].tolist())),
                               "--max-len", "1", "--json")["output_ids"][0]
        if theirs != ours:
            raise SystemExit(f"GPT-2 in PyTorch picks {theirs} after its {GPT2_LEN} ids, stepformer {ours}: not the same model")
        with torch.no_grad():
            export(LogitsOnly(model), (ids,), os.path.join(out, "gpt2_forward.onnx"), ["ids"], ["logits"], None)
        return {"ids": ids[0].tolist(), "expect": ours}
    finally:
        shutil.rmtree(d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--stepformer", required=True)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(1)

    model, src, bos, eos = dates_model(root)
    theirs = greedy(model, src, bos, eos)
    ours = stepformer_json(args.stepformer, "run", "--program", os.path.join(root, "lessons/forward-pass.md"),
                           "--input", LESSON_INPUT, "--max-len", str(MAX_LEN), "--json")
    want = ours["output_ids"] + ([eos] if ours.get("stop") == "eos" else [])
    if theirs != want:
        raise SystemExit(f"the dates model in PyTorch answers {theirs}, stepformer {want}: not the same model")
    with torch.no_grad():
        memory = model.encode(torch.tensor([src]))
        export(Encoder(model), (torch.tensor([src]),), os.path.join(args.out, "dates_encoder.onnx"), ["src"],
               ["memory"], {"src": {1: "S"}, "memory": {0: "S"}})
        export(LastLogits(model), (torch.tensor([[bos, 11, 9]]), memory),
               os.path.join(args.out, "dates_decoder.onnx"), ["tgt", "memory"], ["logits"],
               {"tgt": {1: "T"}, "memory": {0: "S"}})

        base = Seq2SeqTransformer(BASE["d_model"], BASE["nhead"], BASE["layers"], BASE["layers"], BASE["d_ff"],
                                  BASE["vocab"], BASE["vocab"], 128).eval()
        g = torch.Generator().manual_seed(2)
        b_src = torch.randint(4, BASE["vocab"], (1, BASE_LEN), generator=g)
        b_tgt = torch.randint(4, BASE["vocab"], (1, BASE_LEN), generator=g)
        b_tgt[0, 0] = 2
        export(base, (b_src, b_tgt), os.path.join(args.out, "base_forward.onnx"), ["src", "tgt"], ["logits"], None)

    manifest = {
        "dates": {"src": src, "bos": bos, "eos": eos, "max_len": MAX_LEN, "expect": want},
        "base": {"src": b_src[0].tolist(), "tgt": b_tgt[0].tolist()},
        "gpt2": gpt2(args.stepformer, root, args.out),
        "torch": torch.__version__,
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    print(f"exported to {args.out}: the dates model answers {want} in PyTorch and in stepformer", file=sys.stderr)


if __name__ == "__main__":
    main()
