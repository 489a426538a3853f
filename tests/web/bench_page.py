"""bench_page.py: the browser benchmark (index.html?bench=1: the dates model's whole pass, the base
model's forward at 32 tokens, GPT-2 small's at 128) beside the same passes run natively
in the same run, on one thread: at the machine's best vector level, and at the base level (4
floats, no fused multiply-add), which does what the page's program does without relaxed SIMD
(index.html?wasm=plain, also timed: src/web/wasm_madd.js). With --ort, ONNX
Runtime Web (its WebAssembly SIMD backend, one thread) then runs the same models, exported to
ONNX by PyTorch (scripts/export_onnx.py), in the same page load (ort_bench.js), and the page's
times are printed over its: the target is at most 0.7x.

  scripts/web.sh bench

Prints a table (--json: one JSON object); the figures are measured, never asserted (machines
here are noisy). ONNX Runtime's greedy answer on the dates model must be stepformer's, or the
run fails: the two must run the same model to be compared.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, Server, site_with  # noqa: E402


def native(stepformer, simd=None):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if simd:
        env["STEPFORMER_SIMD"] = simd
    r = subprocess.run([stepformer, "bench", "--only", "browser", "--json"], capture_output=True, text=True,
                       check=True, env=env)
    out = json.loads(r.stdout)
    return {row["name"]: row["median_ms"] for row in out["browser"]}, out


def served(site, ort_dist, onnx_dir):
    """A folder the server serves: the site, and beside it ort/ and onnx/ when the peer runs."""
    return site_with(site, {"ort": ort_dist, "onnx": onnx_dir} if ort_dist else {})


def page(root, with_ort, query=""):
    """stepformer's benchmark page, then (with_ort) ONNX Runtime Web in the same page load."""
    srv = Server(root)
    b = Browser(800, 600)
    try:
        b.open(srv.base + "index.html?bench=1" + query)
        title = b.wait_title(["stepformer: bench done", "stepformer: error"], timeout=600)
        if not title.startswith("stepformer: bench done"):
            raise SystemExit(f"the benchmark page failed: {title}")
        out = json.loads(b.eval("document.getElementById('bench').textContent"))
        ort = None
        if with_ort:
            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_bench.js")) as f:
                ort = json.loads(b.eval_async(f.read()))
            if ort["dates"]["answer"] != ort["dates"]["expect"]:
                raise SystemExit(f"ONNX Runtime Web answers {ort['dates']['answer']} on the dates model, "
                                 f"stepformer {ort['dates']['expect']}: not the same model")
            if ort["gpt2"]["answer"] != ort["gpt2"]["expect"]:
                raise SystemExit(f"ONNX Runtime Web picks {ort['gpt2']['answer']} after GPT-2's ids, "
                                 f"stepformer {ort['gpt2']['expect']}: not the same model")
        return {row["name"]: row for row in out["browser"]}, out["gemm"], ort
    finally:
        b.close()
        srv.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", required=True)
    ap.add_argument("--stepformer", required=True)
    ap.add_argument("--ort", help="onnxruntime-web's dist folder: also run ONNX Runtime Web")
    ap.add_argument("--onnx", help="the folder scripts/export_onnx.py wrote (with --ort)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if bool(args.ort) != bool(args.onnx):
        ap.error("--ort and --onnx go together")
    best, about = native(args.stepformer)
    base, _ = native(args.stepformer, "base")
    root = served(args.site, args.ort, args.onnx)
    try:
        web, kernel, ort = page(root, bool(args.ort))
        plain, plain_kernel, _ = page(root, False, "&wasm=plain")  # the program for browsers without relaxed SIMD
    finally:
        shutil.rmtree(root)  # the links only
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True,
                         text=True).stdout.strip()
    peer = {}
    if ort:
        peer = {name: ort["dates"] if name.startswith("dates") else ort["gpt2"] if name.startswith("GPT-2")
                else ort["forward"] for name in web}
    if args.json:
        print(json.dumps({"cpu": cpu, "gemm": kernel, "page": web, "native": best, "native_base": base,
                          "peak_gflops_one_core": about.get("browser_peak_native_gflops"),
                          "peak_gflops_4_wide": about.get("browser_peak_4_wide_gflops"),
                          "ort": ort, "gemm_plain": plain_kernel, "page_plain": plain}))
        return
    print(f"one thread on {cpu}; medians of 10 runs after a warm-up; the page's GEMM: {kernel} "
          f"(wasm=plain: {plain_kernel})")
    head = (f"{'pass':44s} {'page':>10s} {'native':>10s} {'ratio':>7s} {'native base':>12s} {'ratio':>7s} "
            f"{'wasm=plain':>11s}")
    if ort:
        head += f" {'ONNX RT Web':>12s} {'page/ORT':>9s}"
    print(head)
    for name, row in web.items():
        ms = row["median_ms"]
        line = (f"{name:44s} {ms:8.2f}ms {best[name]:8.2f}ms {ms / best[name]:6.2f}x {base[name]:10.2f}ms "
                f"{ms / base[name]:6.2f}x {plain[name]['median_ms']:9.2f}ms")
        if ort:
            line += f" {peer[name]['median_ms']:10.2f}ms {ms / peer[name]['median_ms']:8.2f}x"
        print(line)
    print("ratio: the page's time over the native one (the target: within 2x of native on one thread)")
    peak, four = about.get("browser_peak_native_gflops", 0), about.get("browser_peak_4_wide_gflops", 0)
    if four > 0:
        print(f"one core's peak here: {peak:.1f} GFLOP/s natively, {four:.1f} four floats wide with fused multiply-adds "
              f"(the page's vectors): the page's products can at best take {peak / four:.2f}x the native time")
    print("wasm=plain: the page's program for browsers without relaxed SIMD (a multiply, then an add)")
    if ort:
        print(f"page/ORT: the page's time over ONNX Runtime Web {ort['ort']}'s (WebAssembly SIMD, one thread), "
              f"same page load, models exported by PyTorch {json.load(open(os.path.join(args.onnx, 'manifest.json')))['torch']}; "
              "the target: at most 0.70x. ONNX Runtime's greedy answer on the dates model is stepformer's, and its next "
              "token after GPT-2's ids the one stepformer picks on the same weights.")


if __name__ == "__main__":
    main()
