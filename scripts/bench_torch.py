#!/usr/bin/python3
"""PyTorch peer of `stepformer bench`: the same paths, timed at PyTorch's best setting.

  /usr/bin/python3 scripts/bench_torch.py forward --len 32 [--runs N]
  /usr/bin/python3 scripts/bench_torch.py greedy --src-len 87 --new 120 [--runs N]
  /usr/bin/python3 scripts/bench_torch.py train [--runs N]
  /usr/bin/python3 scripts/bench_torch.py gpt2-forward --model DIR --len 128 [--runs N]
  /usr/bin/python3 scripts/bench_torch.py gpt2-generate --model DIR --len 128 --new 32 [--runs N]

The model is the one of PyTorch's tutorial "Language Translation with nn.Transformer"
(Seq2SeqTransformer: token embedding scaled by sqrt(d_model), the sinusoidal table,
nn.Transformer, a generator Linear), with dropout 0 and random weights:
  forward  the base configuration (d_model 512, 8 heads, 6+6 layers, d_ff 2048, vocab 1000),
           batch 1, source and target of --len tokens, teacher forcing with the causal mask,
           logits of every position; under torch.inference_mode() and model.eval(), so
           PyTorch may take its fast inference path.
  greedy   the same model, the tutorial's greedy_decode: encode once, then each round re-runs
           the decoder over the whole prefix and appends the argmax of the last row. It runs
           all --new rounds (no early stop at eos), as stepformer's side does, so both do the
           same work.
  gpt2-forward   GPT-2 as Hugging Face's GPT2LMHeadModel computes it (Conv1D weights [in, out],
           gelu_new, its eager attention with the causal mask, the head tied to wte), on
           the weights of the hub folder DIR that `stepformer bench --only gpt2` wrote: logits of
           every position of --len random ids, under torch.inference_mode()
  gpt2-generate  the same model generating --new tokens greedily after a --len-token prompt with
           its key-value cache, as generate() does: the prompt once, then one position a round
  train    one training step of the tiny configuration (d_model 64, 4 heads, 2+2 layers,
           d_ff 256, vocab 32, length 16, batch 64): forward with the tutorial's masks,
           CrossEntropyLoss(label_smoothing=0.1), backward, Adam (lr 1e-3, betas
           (0.9, 0.98), eps 1e-9), zero_grad.

PyTorch at its best here: OPENBLAS_CORETYPE is removed from the environment and
OPENBLAS_NUM_THREADS set to the core count before the BLAS library loads (the script
re-executes itself for that); Debian's OpenBLAS is put first on LD_LIBRARY_PATH when it is
installed, so torch does not use the netlib reference BLAS. Then torch.set_num_threads(1)
with BLAS on every core, and every core for torch with BLAS on every core or on one, are
probed, and the fastest is timed.

stdout, one line:
  torch <path> median_ms <ms> min_ms <ms> rss_mb <peak RSS> threads <t> blas_threads <b> torch <version>
stderr: what was probed, the BLAS in use.
"""

import argparse
import math
import os
import resource
import sys
import sysconfig
import time

REEXEC_MARK = "STEPFORMER_BENCH_REEXEC"
CORES = os.cpu_count() or 1


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", choices=("forward", "greedy", "train", "gpt2-forward", "gpt2-generate"))
    ap.add_argument("--model", help="gpt2-*: the hub folder (config.json, model.safetensors F32)")
    ap.add_argument("--len", type=int, default=32, help="forward: source and target length")
    ap.add_argument("--src-len", type=int, default=87, help="greedy: source length")
    ap.add_argument("--new", type=int, default=120, help="greedy: tokens generated")
    ap.add_argument("--runs", type=int, default=0, help="timed runs of the fastest setting")
    args = ap.parse_args()
    if min(args.len, args.src_len, args.new) < 1 or args.runs < 0:
        ap.error("lengths must be >= 1 and --runs >= 0")
    if not args.runs:
        args.runs = {"forward": 20, "greedy": 3, "train": 50, "gpt2-forward": 5, "gpt2-generate": 3}[args.path]
    if args.path.startswith("gpt2") and not args.model:
        ap.error("gpt2-forward and gpt2-generate need --model DIR")
    return args


def fix_environment():
    """Re-exec with the environment the BLAS library must see when it loads."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env["OPENBLAS_NUM_THREADS"] = str(CORES)
    arch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    for flavour in ("openblas-pthread", "openblas-openmp"):
        d = os.path.join("/usr/lib", arch, flavour)
        if os.path.exists(os.path.join(d, "libblas.so.3")):
            paths = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p and p != d]
            env["LD_LIBRARY_PATH"] = ":".join([d] + paths)
            break
    keys = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "LD_LIBRARY_PATH")
    if any(os.environ.get(k) != env.get(k) for k in keys):
        if os.environ.get(REEXEC_MARK):
            sys.exit("bench_torch: the environment is still wrong after re-executing")
        env[REEXEC_MARK] = "1"
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env)


ARGS = parse_args()
fix_environment()

# only now may the BLAS library be loaded
import ctypes  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

from hf_gpt2 import GPT2, read_folder  # noqa: E402

BOS, EOS, PAD, FIRST_WORD = 2, 3, 1, 4
BASE = dict(d_model=512, nhead=8, layers=6, d_ff=2048, vocab=1000)
TINY = dict(d_model=64, nhead=4, layers=2, d_ff=256, vocab=32)


def openblas_threads_setter():
    """openblas_set_num_threads of the OpenBLAS this process mapped, and a description."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "blas" in line.split()[-1]})
    for p in paths:
        if "openblas" in os.path.realpath(p):
            try:
                lib = ctypes.CDLL(p)  # the library already loaded, not a second copy
                lib.openblas_get_corename.restype = ctypes.c_char_p
                return lib.openblas_set_num_threads, "OpenBLAS, core " + lib.openblas_get_corename().decode()
            except (OSError, AttributeError):
                return None, "OpenBLAS (" + p + ")"
    return None, ("no OpenBLAS: " + ", ".join(paths) + " (apt-get install libopenblas0-pthread)"
                  if paths else "no BLAS library mapped")


class Seq2Seq(nn.Module):
    """The tutorial's Seq2SeqTransformer, batch-first ids in, sequence-first inside."""

    def __init__(self, c, maxlen):
        super().__init__()
        d = c["d_model"]
        self.scale = math.sqrt(d)
        self.src_emb = nn.Embedding(c["vocab"], d)
        self.tgt_emb = nn.Embedding(c["vocab"], d)
        den = torch.exp(-torch.arange(0, d, 2) * math.log(10000) / d)
        pos = torch.arange(0, maxlen).reshape(maxlen, 1)
        pe = torch.zeros((maxlen, d))
        pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * den), torch.cos(pos * den)
        self.register_buffer("pe", pe.unsqueeze(1))
        self.transformer = nn.Transformer(d, c["nhead"], c["layers"], c["layers"], c["d_ff"], dropout=0.0)
        self.generator = nn.Linear(d, c["vocab"])
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def embed(self, table, ids):  # ids [B, L] -> [L, B, d]
        x = table(ids.t()) * self.scale
        return x + self.pe[:x.size(0)]

    def encode(self, src):
        return self.transformer.encoder(self.embed(self.src_emb, src))

    def decode(self, tgt, memory):
        mask = self.transformer.generate_square_subsequent_mask(tgt.size(1))
        return self.transformer.decoder(self.embed(self.tgt_emb, tgt), memory, tgt_mask=mask)

    def forward(self, src, tgt):
        t = tgt.size(1)
        src_pad, tgt_pad = src == PAD, tgt == PAD
        out = self.transformer(self.embed(self.src_emb, src), self.embed(self.tgt_emb, tgt),
                               tgt_mask=self.transformer.generate_square_subsequent_mask(t),
                               src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                               memory_key_padding_mask=src_pad)
        return self.generator(out)


def ids(g, b, n, vocab, first=None):
    x = torch.randint(FIRST_WORD, vocab, (b, n), generator=g)
    if first is not None:
        x[:, 0] = first
    return x


def build_forward():
    g = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    model = Seq2Seq(BASE, max(ARGS.len, 128)).eval()
    src, tgt = ids(g, 1, ARGS.len, BASE["vocab"]), ids(g, 1, ARGS.len, BASE["vocab"], BOS)

    def run():
        with torch.inference_mode():
            return model(src, tgt)
    return run


def build_greedy():
    g = torch.Generator().manual_seed(2)
    torch.manual_seed(2)
    model = Seq2Seq(BASE, max(ARGS.src_len, ARGS.new + 1)).eval()
    src = ids(g, 1, ARGS.src_len, BASE["vocab"])

    def run():  # the tutorial's greedy_decode, every round run
        with torch.inference_mode():
            memory = model.encode(src)
            ys = torch.full((1, 1), BOS, dtype=torch.long)
            for _ in range(ARGS.new):
                out = model.decode(ys, memory)
                prob = model.generator(out[-1])
                next_word = int(torch.argmax(prob, dim=1)[0])
                ys = torch.cat([ys, torch.full((1, 1), next_word, dtype=torch.long)], dim=1)
            return ys
    return run


def build_train():
    g = torch.Generator().manual_seed(3)
    torch.manual_seed(3)
    model = Seq2Seq(TINY, 32).train()
    src = ids(g, 64, 16, TINY["vocab"])
    tgt = ids(g, 64, 17, TINY["vocab"], BOS)
    tgt_in, tgt_out = tgt[:, :-1].contiguous(), tgt[:, 1:].contiguous()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD, label_smoothing=0.1)

    def run():
        logits = model(src, tgt_in)  # [T, B, V]
        loss = loss_fn(logits.reshape(-1, logits.size(-1)), tgt_out.t().reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss
    return run


def build_gpt2(generate):
    conf, w = read_folder(ARGS.model)
    model = GPT2(conf, w).eval()
    g = torch.Generator().manual_seed(4)
    prompt = torch.randint(0, conf["vocab_size"], (1, ARGS.len), generator=g)

    def forward():
        with torch.inference_mode():
            return model(prompt)

    def generating():  # greedy, every round run: the prompt once, then a position a round
        with torch.inference_mode():
            cache = []
            logits = model(prompt, cache)
            ids = [int(logits[0, -1].argmax())]
            for r in range(1, ARGS.new):
                logits = model(torch.tensor([[ids[-1]]]), cache, ARGS.len + r - 1)
                ids.append(int(logits[0, -1].argmax()))
            return ids
    return generating if generate else forward


def timed(run, warmup, runs):
    for _ in range(warmup):
        run()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        run()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)


def main():
    run = {"forward": build_forward, "greedy": build_greedy, "train": build_train,
           "gpt2-forward": lambda: build_gpt2(False), "gpt2-generate": lambda: build_gpt2(True)}[ARGS.path]()
    set_blas, blas = openblas_threads_setter()
    configs = [(1, CORES)]
    if CORES > 1:
        configs += [(CORES, CORES), (CORES, 1)] if set_blas else [(CORES, None)]

    def use(c):
        torch.set_num_threads(c[0])
        if set_blas and c[1] is not None:
            set_blas(c[1])

    probe_runs = 1 if ARGS.path in ("greedy", "gpt2-generate") else 3 if ARGS.path == "gpt2-forward" else 5
    probe = {}
    for c in configs:
        use(c)
        probe[c] = timed(run, 1, probe_runs)[probe_runs // 2]
    best = min(configs, key=lambda c: probe[c])
    use(best)
    times = timed(run, 1 if ARGS.path in ("greedy", "gpt2-generate", "gpt2-forward") else 3, ARGS.runs)
    median = times[len(times) // 2]
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("bench_torch %s: BLAS %s; probed (torch threads, BLAS threads): %s; fastest %s" % (
        ARGS.path, blas, ", ".join("%s %.1f ms" % (c, probe[c]) for c in configs), best),
        file=sys.stderr)
    print("torch %s median_ms %.3f min_ms %.3f rss_mb %.1f threads %d blas_threads %d torch %s" % (
        ARGS.path, median, times[0], rss_mb, best[0], best[1] or 0, torch.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
