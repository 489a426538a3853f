"""bench_page.py: the browser benchmark (index.html?bench=1) beside the same passes run natively
in the same run, on one thread: at the machine's best vector level, and at the base level (4
floats, no fused multiply-add), which does what WebAssembly's SIMD128 does.

  scripts/web.sh bench

Prints a table; the figures are measured, never asserted (machines here are noisy).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import Browser, Server  # noqa: E402


def native(stepformer, simd=None):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if simd:
        env["STEPFORMER_SIMD"] = simd
    r = subprocess.run([stepformer, "bench", "--only", "browser", "--json"], capture_output=True, text=True,
                       check=True, env=env)
    out = json.loads(r.stdout)
    return {row["name"]: row["median_ms"] for row in out["browser"]}, out.get("cpu", "")


def page(site):
    srv = Server(site)
    b = Browser(800, 600)
    try:
        b.open(srv.base + "index.html?bench=1")
        title = b.wait_title(["stepformer: bench done", "stepformer: error"], timeout=600)
        if not title.startswith("stepformer: bench done"):
            raise SystemExit(f"the benchmark page failed: {title}")
        out = json.loads(b.eval("document.getElementById('bench').textContent"))
        return {row["name"]: row["median_ms"] for row in out["browser"]}, out["gemm"]
    finally:
        b.close()
        srv.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", required=True)
    ap.add_argument("--stepformer", required=True)
    args = ap.parse_args()
    best, _ = native(args.stepformer)
    base, _ = native(args.stepformer, "base")
    web, kernel = page(args.site)
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], capture_output=True,
                         text=True).stdout.strip()
    print(f"one thread on {cpu}; medians of 10 runs after a warm-up; the page's GEMM: {kernel}")
    print(f"{'pass':44s} {'page':>10s} {'native':>10s} {'ratio':>7s} {'native base':>12s} {'ratio':>7s}")
    for name, ms in web.items():
        print(f"{name:44s} {ms:8.2f}ms {best[name]:8.2f}ms {ms / best[name]:6.2f}x {base[name]:10.2f}ms "
              f"{ms / base[name]:6.2f}x")
    print("ratio: the page's time over the native one (the target: within 2x of native on one thread)")


if __name__ == "__main__":
    main()
