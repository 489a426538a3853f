// bench.h: the measurements behind `stepformer bench`. Each of stepformer's runs happens in a
// child process of its own, so its peak resident memory is its own and nothing one path
// allocates or warms is seen by the next; the peers (PyTorch, OpenBLAS) are measured the same
// way, in the same run. Figures are printed, never asserted: machines here are noisy, so the
// useful numbers are the ratios within one run.
#ifndef STEPFORMER_BENCH_H
#define STEPFORMER_BENCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "interp.h"

typedef enum { PATH_FORWARD, PATH_GREEDY, PATH_TRAIN, PATH_GPT2_FORWARD, PATH_GPT2_GENERATE, PATH_COUNT } BenchPath;

// One case: a path on one configuration.
typedef struct {
    BenchPath path;
    int len;         // forward: source and target length
    int src_len;     // greedy: source length
    int new_tokens;  // greedy: tokens generated (every round runs: eos is not a stop here)
    bool cached;     // greedy: the cached decoder
    int runs;        // timed runs (0: the path's default)
    int d_model, layers;  // 0: the base configuration's (scale table)
    const char *model_dir;  // the GPT-2 paths: the hub folder both sides read (bench_gpt2_folder);
                            // len: the prompt's length, new_tokens: tokens generated after it
} BenchCase;

typedef struct {
    bool ok;
    double median_ms, min_ms;
    double rss_mb;     // peak resident memory of the process that ran it
    double gflop;      // multiply-adds x 2 of one run (stepformer's side; 0 if not counted)
    double products_ms, products_gflop;  // its matrix products alone: the median of their time in
                                         // each run, and their work (0: not timed apart)
    char about[200];   // what ran: kernel, threads, peer version and setting
} Figure;

// stepformer's side of a case, in a child process. False (with why) if it could not run.
bool bench_ours(const BenchCase *c, Figure *out, char *why, size_t n);
// PyTorch's side, from scripts/bench_torch.py run by /usr/bin/python3. False (with why: how to
// install it) when python3-torch is missing.
bool bench_torch(const BenchCase *c, Figure *out, char *why, size_t n);

// One matmul shape of the base forward: C[M, N] = A[M, K] op(B), `count` times a pass.
typedef struct {
    const char *op;  // "linear" (B is a weight, transposed) or "matmul"
    int batch, M, N, K;
    bool bt;
    int count;
} GemmShape;

// The distinct matmul shapes of the base forward at length len (at most cap).
int bench_gemm_shapes(int len, GemmShape *out, int cap);
// GFLOP/s of stepformer's sgemm on each shape (a child process); false with why.
bool bench_gemm_ours(const GemmShape *s, int n, double *gflops, char *why, size_t wn);
// OpenBLAS's best on one shape: its GFLOP/s, with `threads` threads inside each product; for
// a batch (heads), the products one after another, or `side_by_side` on every core, one thread each.
typedef struct {
    double gflops;
    int threads;
    bool side_by_side;
} BlasBest;
// OpenBLAS cblas_sgemm on each shape at its best setting (1 .. cores threads a product, and for
// a batch also its products side by side), loaded at run time (child processes); false with
// why when libopenblas is not installed.
bool bench_gemm_openblas(const GemmShape *s, int n, BlasBest *best, char *why, size_t wn);

// ---- shared by the files of bench ----
// What a child process sends back.
enum { BENCH_VALUES = 64 };
typedef struct {
    bool ok;
    char why[200];              // when !ok: what went wrong
    char about[200];            // what ran (kernel, threads)
    double v[BENCH_VALUES];     // what the child measured, as its task defines
} BenchReply;
// Runs task(arg, reply) in a child process; its reply and peak RSS (MB) come back. False if the
// child failed or said !ok (reply->why says why).
bool bench_in_child(void (*task)(const void *arg, BenchReply *r), const void *arg, BenchReply *reply,
                    double *rss_mb);
// This machine's fused multiply-add peak in GFLOP/s, on one core and on all (bench_peak.c, a
// child process); false if it could not be measured.
bool bench_peak(double *one_core, double *all_cores);
// One core's peak at the kernels' vector level, and four floats wide with fused multiply-adds
// (the browser page's vectors; 0 on a CPU without FMA): the ratio is as close to native as the
// page's products can come.
bool bench_peak_page(double *native, double *four_wide);
double bench_now(void);               // seconds, monotonic
// The CPU's model name (/proc/cpuinfo), or "an unnamed CPU".
void bench_cpu_name(char *out, size_t n);
// Random operands of shape s (every head): a [batch, M, K], b [batch, K, N], c [batch, M, N];
// false (all freed, set NULL) when memory runs out.
bool bench_operands(const GemmShape *s, unsigned long long seed, float **a, float **b, float **c);
double bench_median(double *t, int n);  // sorts t[0 .. n)
// Multiply-adds x 2 of every stage of the pass as expanded (op_flops).
double bench_pass_flops(const Interp *it);

// ---- GPT-2 small (bench_gpt2.c) ----
// Writes GPT-2 small's configuration with random weights as a hub folder in /tmp (its path into
// dir), in a child process; false with why.
bool bench_gpt2_folder(char *dir, size_t n, char *why, size_t wn);
void bench_gpt2_remove(const char *dir);  // the folder and its two files
// The children's tasks (bench_ours runs them): the forward over c->len ids; generating.
void bench_task_gpt2_forward(const void *arg, BenchReply *r);
void bench_task_gpt2_generate(const void *arg, BenchReply *r);
// The window on GPT-2 small at 1023 tokens from the folder, each in a child process: at 512 MB (its
// steps one after another, then each after a reader's pause) and at 2048 MB; every step to its
// frame, each view redrawn, peak memory. Printed, or into json.
void bench_gpt2_windows(const char *dir, cJSON *json);

#endif
