#!/usr/bin/python3
"""PyTorch peer of stepformer's training benchmark: the time of one train step.

One step is the tutorial's Seq2SeqTransformer forward pass with its masks,
CrossEntropyLoss(label_smoothing=0.1), backward, one Adam step
(lr 1e-3, betas (0.9, 0.98), eps 1e-9) and zero_grad.
Config: d_model 64, 4 heads, 2+2 layers, d_ff 256, vocab 32/32,
source and target length 16, batch 64, relu, post-norm, dropout 0.

Run with the system interpreter (it has python3-torch):

  /usr/bin/python3 scripts/bench_torch_train.py [--steps N] [--warmup N]

It tries to measure PyTorch at its best on this machine:
  - OPENBLAS_CORETYPE is removed from the environment and OPENBLAS_NUM_THREADS
    is set to 2. Both must be in place before the BLAS library is loaded, so
    the script re-executes itself with the fixed environment.
  - If Debian's OpenBLAS is installed (libopenblas0-pthread or -openmp), or
    --blas-dir names a directory that holds a libblas.so.3, that directory is
    put first on LD_LIBRARY_PATH, so torch loads it even when the system
    alternative is the netlib reference BLAS (which is ~10x slower here).
  - torch.set_num_threads(1) and (2) are both probed (3 warm-up + 8 timed
    steps each; with OpenBLAS, 2 torch threads are probed with 2 and with 1
    BLAS thread, set at run time). The fastest setting is then warmed up
    (--warmup) and timed (--steps), and that median is the headline number.

stdout: one line, `torch_train_step_ms <median ms> threads <n> torch <version>`.
stderr: a human summary (BLAS in use, the probe of each setting, median,
min and p90 of the headline run).
"""

import argparse
import os
import sys
import sysconfig
import time

REEXEC_MARK = "STEPFORMER_BENCH_REEXEC"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=50, help="timed steps of the headline run (50)")
    ap.add_argument("--warmup", type=int, default=10,
                    help="untimed steps before the headline run (10)")
    ap.add_argument("--blas-dir", default=None,
                    help="directory with a libblas.so.3 to load instead of the system one")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup < 0:
        ap.error("--steps must be >= 1 and --warmup >= 0")
    return args


def openblas_dir(args):
    """Directory to put first on LD_LIBRARY_PATH, or None."""
    if args.blas_dir:
        d = os.path.abspath(args.blas_dir)
        if not os.path.exists(os.path.join(d, "libblas.so.3")):
            sys.exit("bench_torch_train: no libblas.so.3 in " + d)
        return d
    arch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    for flavour in ("openblas-pthread", "openblas-openmp"):
        d = os.path.join("/usr/lib", arch, flavour)
        if os.path.exists(os.path.join(d, "libblas.so.3")):
            return d
    return None


def fix_environment(args):
    """Re-exec with the environment the BLAS library must see when it loads."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env["OPENBLAS_NUM_THREADS"] = "2"
    d = openblas_dir(args)
    if d is not None:
        paths = [p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]
        if not paths or paths[0] != d:
            env["LD_LIBRARY_PATH"] = ":".join([d] + [p for p in paths if p != d])
    keys = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "LD_LIBRARY_PATH")
    if any(os.environ.get(k) != env.get(k) for k in keys):
        if os.environ.get(REEXEC_MARK):
            sys.exit("bench_torch_train: environment still wrong after re-exec")
        env[REEXEC_MARK] = "1"
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
                  env)


ARGS = parse_args()
fix_environment(ARGS)

# only now may the BLAS library be loaded
import ctypes  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_fixtures as mf  # noqa: E402
from make_train_fixture import BatchedSeq2Seq  # noqa: E402

CFG = dict(name="bench", seed=4242, kind="torch", d_model=64, nhead=4,
           n_enc=2, n_dec=2, d_ff=256, src_vocab=32, tgt_vocab=32,
           activation="relu", norm_first=False, eps=1e-5)
SRC_LEN, TGT_LEN, BATCH = 16, 16, 64
PROBE_WARMUP, PROBE_STEPS = 3, 8


def loaded_blas():
    """(path, description, set_threads or None) of the BLAS this process has mapped.

    set_threads(n) changes OpenBLAS's thread count at run time."""
    paths = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6:
                p = parts[-1]
                base = os.path.basename(p)
                if ("blas" in base or "blis" in base or "mkl_rt" in base) and p not in paths:
                    paths.append(p)
    if not paths:
        return None, "unknown (no BLAS library mapped)", None
    for p in paths:
        if "openblas" in os.path.realpath(p):
            try:
                lib = ctypes.CDLL(p)      # the already loaded library, not a second copy
                lib.openblas_get_config.restype = ctypes.c_char_p
                lib.openblas_get_corename.restype = ctypes.c_char_p
                lib.openblas_get_num_threads.restype = ctypes.c_int
                lib.openblas_set_num_threads.argtypes = [ctypes.c_int]
                desc = "%s, core %s" % (lib.openblas_get_config().decode().strip(),
                                        lib.openblas_get_corename().decode())
                return p, desc, lib.openblas_set_num_threads
            except (OSError, AttributeError):
                return p, "OpenBLAS", None
    p = paths[0]
    real = os.path.realpath(p)
    if "/blas/" in real:
        return p, ("netlib reference BLAS (%s), about 10x slower than OpenBLAS here: "
                   "apt-get install libopenblas0-pthread" % real), None
    return p, real, None


def build():
    torch.manual_seed(CFG["seed"])
    model = BatchedSeq2Seq(CFG)
    # a positional table long enough for this config
    model.positional_encoding = mf.PositionalEncoding(CFG["d_model"],
                                                      max(SRC_LEN, TGT_LEN))
    for p in model.parameters():          # the tutorial's initialization
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    model.train()
    g = torch.Generator().manual_seed(CFG["seed"])
    # ids >= 4 everywhere: full-length sequences, the padding masks are all False
    src = torch.randint(mf.FIRST_WORD_ID, CFG["src_vocab"], (BATCH, SRC_LEN), generator=g)
    tgt = torch.randint(mf.FIRST_WORD_ID, CFG["tgt_vocab"], (BATCH, TGT_LEN + 1), generator=g)
    tgt[:, 0] = mf.BOS_ID
    tgt_in, tgt_out = tgt[:, :-1].contiguous(), tgt[:, 1:].contiguous()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98), eps=1e-9)
    loss_fn = nn.CrossEntropyLoss(ignore_index=mf.PAD_ID, label_smoothing=0.1)

    def step():
        logits = model.forward_batch(src, tgt_in)                  # [T, B, V]
        loss = loss_fn(logits.reshape(-1, logits.size(-1)),
                       tgt_out.t().reshape(-1))                    # tutorial's order
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    return step


def measure(step, warmup, steps):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step()
        times.append((time.perf_counter() - t0) * 1e3)
    assert bool(torch.isfinite(loss))
    return sorted(times)


def stats(times):
    n = len(times)
    med = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    p90 = times[min(n - 1, max(0, int(round(0.9 * n)) - 1))]
    return med, times[0], p90


def main():
    t_start = time.time()
    step = build()
    blas_path, blas, set_blas_threads = loaded_blas()

    # (torch threads, BLAS threads). OpenBLAS keeps its own thread pool next
    # to torch's OpenMP threads, so 2 + 2 oversubscribes the 2 cores; where the
    # BLAS thread count can be changed at run time, 2 torch threads are also
    # tried with 1 BLAS thread.
    if set_blas_threads is not None:
        configs = [(1, 2), (2, 2), (2, 1)]
    else:
        configs = [(1, None), (2, None)]

    def use(config):
        torch.set_num_threads(config[0])
        if config[1] is not None:
            set_blas_threads(config[1])

    # short probe of every config, then the full run of the fastest one
    probe = {}
    for c in configs:
        use(c)
        probe[c] = stats(measure(step, PROBE_WARMUP, PROBE_STEPS))
    best = min(configs, key=lambda c: probe[c][0])
    use(best)
    med, lo, p90 = stats(measure(step, ARGS.warmup, ARGS.steps))

    def name(c):
        return "torch threads %d%s" % (c[0], "" if c[1] is None else ", BLAS threads %d" % c[1])

    err = sys.stderr
    print("PyTorch %s train step: d_model %d, %d heads, %d+%d layers, d_ff %d, vocab %d/%d, "
          "src/tgt length %d/%d, batch %d" % (
              torch.__version__, CFG["d_model"], CFG["nhead"], CFG["n_enc"], CFG["n_dec"],
              CFG["d_ff"], CFG["src_vocab"], CFG["tgt_vocab"], SRC_LEN, TGT_LEN, BATCH),
          file=err)
    print("BLAS: %s%s" % (blas, "" if blas_path is None else "  [" + blas_path + "]"), file=err)
    print("env: OPENBLAS_CORETYPE %s, OPENBLAS_NUM_THREADS %s" % (
        os.environ.get("OPENBLAS_CORETYPE", "unset"), os.environ.get("OPENBLAS_NUM_THREADS")),
        file=err)
    print("probe (%d warm-up + %d timed steps each):" % (PROBE_WARMUP, PROBE_STEPS), file=err)
    for c in configs:
        m, l, p = probe[c]
        print("  %-34s median %7.2f ms  min %7.2f ms  p90 %7.2f ms%s" % (
            name(c), m, l, p, "  <- fastest" if c == best else ""), file=err)
    by_torch = {}
    for c in configs:
        by_torch[c[0]] = min(by_torch.get(c[0], float("inf")), probe[c][0])
    print("  1 vs 2 torch threads (best of each): %.2f vs %.2f ms: %d threads is %.2fx faster" % (
        by_torch[1], by_torch[2], best[0],
        max(by_torch.values()) / min(by_torch.values())), file=err)
    print("headline, %s (%d warm-up + %d timed steps): median %.2f ms  min %.2f ms  "
          "p90 %.2f ms. Total %.1f s." % (name(best), ARGS.warmup, ARGS.steps, med, lo, p90,
                                           time.time() - t_start), file=err)
    print("torch_train_step_ms %.3f threads %d torch %s" % (med, best[0], torch.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
