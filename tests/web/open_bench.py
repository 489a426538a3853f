"""open_bench.py: how long the page takes to open a real model's size from the user's disk, and
what memory it takes (issue 45's page targets), measured in headless Chromium, never asserted:

  /usr/bin/python3 tests/web/open_bench.py --site build-web/site --stepformer build/stepformer

- GPT-2 small's configuration (F32, 498 MB, random weights `stepformer init` writes) and
  SmolLM2-135M's (BF16, 269 MB), each given to the page's file input as a user picks a folder:
  the time from the files given to the first frame of the model ("stepformer: ready");
- GPT-2 small through a `model=` link on the same local server with 256 ids: the time to its
  first frame, and the page's memory then (WebAssembly's memory, and the largest peak resident
  memory of Chromium's processes).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, Server, site_with  # noqa: E402

GPT2 = "n_layer=12 n_head=12 n_embd=768 n_inner=3072 n_positions=1024 vocab_size=50257"
SMOLLM2 = ("vocab_size=49152 hidden_size=576 intermediate_size=1536 num_hidden_layers=30 num_attention_heads=9 "
           "num_key_value_heads=3 max_position_embeddings=8192 tie_word_embeddings=1 rope_theta=100000 rms_norm_eps=1e-5")


def folder(stepformer, root, name, program, config, dtype):
    d = os.path.join(root, name)
    subprocess.run([stepformer, "init", "--program", program, "--config", config, "--dtype", dtype, "--out", d + "/"],
                   check=True, capture_output=True)
    return d


def first_frame(b, t0):
    """The page's title once the model's first frame is drawn (or it failed), the seconds since
    t0, WebAssembly's memory (MB) and Chromium's largest peak RSS (MB)."""
    title = b.wait_title(["stepformer: ready", "stepformer: error"], timeout=300)
    took = time.time() - t0
    wasm = b.eval("Module.HEAP8 ? Module.HEAP8.length / 1048576 : 0") or 0
    return title, took, wasm, b.peak_rss_mb()


def picked(site, d):
    """The page given the folder's files as a user picks them."""
    srv = Server(site)
    b = Browser(1280, 720)
    try:
        b.open(srv.base + "index.html?size=1280x720")
        b.wait_title(["stepformer: ready", "stepformer: error"])
        t0 = time.time()
        b.give_files([os.path.join(d, f) for f in sorted(os.listdir(d))])
        b.wait_title(["stepformer: opening"], timeout=120)
        return first_frame(b, t0)
    finally:
        b.close()
        srv.close()


def linked(site, d, n):
    """The same through index.html?model=...&ids=... (n ids) on the same server."""
    root = site_with(site, {"models/gpt2": d})
    srv = Server(root)
    b = Browser(1280, 720)
    try:
        ids = ",".join(str((i * 131) % 50257) for i in range(n))
        t0 = time.time()
        b.open(srv.base + f"index.html?size=1280x720&model=models/gpt2/&ids={ids}")
        return first_frame(b, t0)
    finally:
        b.close()
        srv.close()
        shutil.rmtree(root)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", required=True)
    ap.add_argument("--stepformer", required=True)
    args = ap.parse_args()
    stepformer = os.path.abspath(args.stepformer)
    with tempfile.TemporaryDirectory(prefix="stepformer-open-") as tmp:
        gpt2 = folder(stepformer, tmp, "gpt2", "lessons/gpt2.md", GPT2, "f32")
        smol = folder(stepformer, tmp, "smollm2", "lessons/llama.md", SMOLLM2, "bf16")
        rows = [("GPT-2 small (F32, 498 MB), picked from the disk", picked(args.site, gpt2)),
                ("SmolLM2-135M (BF16, 269 MB), picked from the disk", picked(args.site, smol)),
                ("GPT-2 small, model= link, 256 ids", linked(args.site, gpt2, 256))]
    print(f"{'':52s} {'first frame':>12s} {'wasm memory':>12s} {'peak RSS':>10s}")
    for name, (title, took, wasm, rss) in rows:
        state = "" if title.startswith("stepformer: ready") else f"  ({title[:80]})"
        print(f"{name:52s} {took:10.1f} s {wasm:9.0f} MB {rss:7.0f} MB{state}")


if __name__ == "__main__":
    main()
