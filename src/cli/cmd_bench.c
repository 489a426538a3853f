// cmd_bench.c: `bench` times a full forward pass of the base configuration and each matmul
// shape it uses. Figures are printed, never asserted: machines here are noisy, so the useful
// numbers are the ratios within one run.
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "data.h"
#include "rng.h"
#include "train.h"
#include "window.h"

static const char bench_usage[] =
    "usage: stepformer bench [--repeat N] [--ui | --train]\n"
    "\n"
    "Times the base configuration (d_model 512, 8 heads, 6+6 layers, d_ff 2048, vocab 1000,\n"
    "source and target length 32, batch 1, random weights): the median full-forward latency\n"
    "over N runs (default 20), and the GFLOP/s of every matmul shape that forward uses, next to\n"
    "a naive triple loop for scale.\n"
    "\n"
    "With --ui: draws the busiest views of the same model off screen at 1920x1080 and prints\n"
    "the median and p99 frame time of each, and the time from a step key to its frame.\n"
    "\n"
    "With --train: times one training step (forward, loss, backward, Adam) of a tiny model\n"
    "(d_model 64, 4 heads, 2+2 layers, d_ff 256, vocab 32, length 16, batch 64) and, in the same\n"
    "run, the same step in PyTorch (scripts/bench_torch_train.py with Debian's python3-torch, at\n"
    "its best settings), and prints the ratio.\n";

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    Op op;
    int B, M, N, K;
    bool bt;
    int count;
} Shape4;

static void naive_gemm(float *c, const float *a, const float *b, int M, int N, int K, bool bt) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float s = 0.0f;
            for (int k = 0; k < K; k++) s += a[(size_t)i * K + k] * (bt ? b[(size_t)j * K + k] : b[(size_t)k * N + j]);
            c[(size_t)i * N + j] = s;
        }
}

typedef struct {
    const Shape4 *s;
    const float *a, *b;
    float *c;
} GemmCall;

static void call_fast(const GemmCall *g) {
    const Shape4 *s = g->s;
    sgemm(g->c, s->N, g->a, s->K, g->b, s->bt ? s->K : s->N, NULL, s->M, s->N, s->K, s->bt);
}

static void call_naive(const GemmCall *g) {
    naive_gemm(g->c, g->a, g->b, g->s->M, g->s->N, g->s->K, g->s->bt);
}

// Seconds per call, timed over enough calls to fill about `budget` seconds.
static double time_calls(double budget, void (*fn)(const GemmCall *), const GemmCall *g) {
    int reps = 0;
    double t0 = now(), elapsed;
    do {
        fn(g);
        reps++;
    } while ((elapsed = now() - t0) < budget);
    return elapsed / reps;
}

static void bench_shape(const Shape4 *s, Rng *rng) {
    size_t na = (size_t)s->M * s->K, nb = (size_t)s->K * s->N, nc = (size_t)s->M * s->N;
    float *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc(nc * 4), *c2 = malloc(nc * 4);
    if (!a || !b || !c || !c2) return;
    for (size_t i = 0; i < na; i++) a[i] = rng_uniform(rng) - 0.5f;
    for (size_t i = 0; i < nb; i++) b[i] = rng_uniform(rng) - 0.5f;
    double flops = 2.0 * s->M * s->N * s->K;
    const GemmCall fast_call = {s, a, b, c}, naive_call = {s, a, b, c2};
    double fast = time_calls(0.05, call_fast, &fast_call);
    double slow = time_calls(0.02, call_naive, &naive_call);
    printf("  %-7s %5d %5d %5d %6s %6d  x%-4d %8.1f %8.1f %7.1fx\n", op_info[s->op].name, s->M,
           s->N, s->K, s->bt ? "B^T" : "B", s->B, s->count, flops / fast * 1e-9,
           flops / slow * 1e-9, slow / fast);
    free(a), free(b), free(c), free(c2);
}

// The distinct matmul shapes of the pass, with how often each occurs.
static int collect_shapes(const Interp *it, Shape4 *out, int cap) {
    int n = 0;
    for (int i = 0; i < interp_n_stages(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (st->op != OP_LINEAR && st->op != OP_MATMUL) continue;
        const Shape *a = &st->in_shape[0];
        Shape4 s = {st->op, a->ndim == 3 ? a->dim[0] : 1, a->dim[a->ndim - 2],
                    st->shape.dim[st->shape.ndim - 1], a->dim[a->ndim - 1],
                    st->op == OP_LINEAR || st->attr.b_transposed, 1};
        int k = 0;
        while (k < n && !(out[k].op == s.op && out[k].B == s.B && out[k].M == s.M &&
                          out[k].N == s.N && out[k].K == s.K && out[k].bt == s.bt))
            k++;
        if (k < n) out[k].count++;
        else if (n < cap) out[n++] = s;
    }
    return n;
}

// The median time of one training step of the tiny configuration, in milliseconds.
static double train_step_ms(int steps, double *flops) {
    ModelConfig c = config_base();
    c.d_model = 64, c.nhead = 4, c.num_encoder_layers = c.num_decoder_layers = 2, c.dim_feedforward = 256;
    c.src_vocab_size = c.tgt_vocab_size = 32, c.max_positions = 32;
    enum { B = 64, L = 16 };
    Err e = {{0}};
    Model m;
    Lesson l;
    if (!lesson_parse(&l, "forward-pass.md", session_builtin_lesson("forward-pass.md", NULL), &e)) return -1;
    if (!model_init_config(&m, &l.program, &c, 1, &e)) return lesson_free(&l), -1;
    StepConfig sc = {B, L, L, 0.1f, 0.9f, 0.98f, 1e-9f};
    TrainState *ts = train_state_new(&m, &l.program, &sc, &e);
    static float src[B * L], tin[B * L], tout[B * L];
    Rng r = {3};
    for (int i = 0; i < B * L; i++)
        src[i] = (float)(4 + rng_below(&r, 28)), tin[i] = (float)(4 + rng_below(&r, 28)), tout[i] = (float)(4 + rng_below(&r, 28));
    double *t = calloc((size_t)steps, sizeof *t), median = -1;
    StepStats s;
    bool ok = ts && t;
    for (int i = -5; i < steps && ok; i++) {
        double t0 = now();
        ok = train_state_step(ts, src, tin, tout, &s, &e);
        train_state_update(ts, 1e-3f);
        if (i >= 0) t[i] = (now() - t0) * 1e3;
    }
    if (ok) {
        qsort(t, (size_t)steps, sizeof *t, cmp_double);
        median = t[steps / 2];
        // Forward multiply-adds of the pass, three times over for forward and backward.
        RunSpec spec = {src, L, tin, L, 0, B};
        Interp *it = interp_new(&l.program, &m, &spec, &e);
        *flops = 0;
        for (int i = 0; it && i < interp_n_stages(it); i++)
            if (interp_stage(it, i)->op == OP_LINEAR || interp_stage(it, i)->op == OP_MATMUL)
                *flops += 3 * op_flops(interp_stage(it, i)) * B;
        interp_free(it);
    }
    free(t);
    train_state_free(ts);
    lesson_free(&l);
    model_free(&m);
    return median;
}

// Runs the PyTorch peer and reads its median; negative if it cannot run here.
static double torch_step_ms(char *about, size_t n) {
    char cmd[4600], script[4352];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' --steps 50 2>/dev/null",
             data_path("scripts/bench_torch_train.py", script, sizeof script));
    FILE *p = popen(cmd, "r");
    double ms = -1;
    char line[256] = "";
    int threads = 0;
    char version[64] = "?";
    if (p && fgets(line, sizeof line, p) &&
        sscanf(line, "torch_train_step_ms %lf threads %d torch %63s", &ms, &threads, version) >= 1)
        snprintf(about, n, "PyTorch %s, %d torch thread%s, its fastest setting", version, threads,
                 threads == 1 ? "" : "s");
    if (p) pclose(p);
    return ms;
}

static int bench_train(int steps) {
    printf("training step, d_model 64, 4 heads, 2+2 layers, d_ff 256, vocab 32, length 16, batch 64\n");
    double flops = 0;
    const double ours = train_step_ms(steps, &flops);
    if (ours < 0) return fprintf(stderr, "stepformer: the training benchmark could not run\n"), EXIT_FAIL;
    printf("  stepformer   median %7.2f ms a step  (%d steps; %.2f GFLOP of matrix products, %.0f GFLOP/s)\n", ours,
           steps, flops * 1e-9, flops / ours * 1e-6);
    char about[200] = "";
    const double torch = torch_step_ms(about, sizeof about);
    if (torch < 0) {
        printf("  PyTorch      not measured: /usr/bin/python3 with python3-torch is not installed here\n"
               "               (apt-get install python3-torch libopenblas0-pthread, then run this again)\n");
        return EXIT_OK;
    }
    printf("  PyTorch      median %7.2f ms a step  (%s)\n", torch, about);
    printf("  stepformer is %.2fx %s than PyTorch here\n", torch >= ours ? torch / ours : ours / torch,
           torch >= ours ? "faster" : "slower");
    return EXIT_OK;
}

static double total_flops(const Interp *it) {
    double f = 0;
    for (int i = 0; i < interp_n_stages(it); i++) f += op_flops(interp_stage(it, i));
    return f;
}

int cmd_bench(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, OPT_REPEAT | OPT_PROGRAM, bench_usage, &o);
    if (code >= 0) return code;
    if (o.ui_bench) return ui_bench_run(o.repeat ? o.repeat : 60);
    if (o.train_bench) return bench_train(o.repeat ? o.repeat : 50);
    const int runs = o.repeat ? o.repeat : 20;
    Err e = {{0}};
    Lesson lesson;
    Model model;
    const char *path;
    const ModelConfig cfg = config_base();
    if (!(o.spec.program_path ? lesson_load(&lesson, o.spec.program_path, &e)
                              : lesson_parse(&lesson, "forward-pass.md", session_builtin_lesson("forward-pass.md", &path), &e)))
        return cli_fail(&e);
    if (!model_init_config(&model, &lesson.program, &cfg, 1, &e)) return lesson_free(&lesson), cli_fail(&e);
    float src[32], tgt[32];
    Rng rng = {42};
    for (int i = 0; i < 32; i++) src[i] = (float)(4 + rng_below(&rng, cfg.src_vocab_size - 4));
    for (int i = 0; i < 32; i++) tgt[i] = i ? (float)(4 + rng_below(&rng, cfg.tgt_vocab_size - 4)) : 2.0f;
    const bool decoder = program_has_decoder(&lesson.program);
    RunSpec spec = {src, 32, decoder ? tgt : NULL, decoder ? 32 : 0, 0};
    Interp *it = interp_new(&lesson.program, &model, &spec, &e);
    if (!it) return model_free(&model), lesson_free(&lesson), cli_fail(&e);
    printf("stepformer bench: d_model %d, %d heads, %d+%d layers, d_ff %d, vocab %d, src %d, tgt %d, "
           "batch 1\nthreads: %d (OpenMP), gemm micro-kernel: %s\n", cfg.d_model, cfg.nhead,
           cfg.num_encoder_layers, cfg.num_decoder_layers, cfg.dim_feedforward,
           cfg.tgt_vocab_size, 32, 32, omp_get_max_threads(), sgemm_kernel_name());
    double *t = calloc((size_t)runs, sizeof *t);
    for (int r = -2; r < runs && t; r++) {  // two warm-up runs
        interp_rewind(it, 0);
        double t0 = now();
        interp_run(it, &e);
        if (r >= 0) t[r] = now() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    const double flops = total_flops(it);
    printf("full forward, teacher forcing (%d stages, %.2f GFLOP): median %.2f ms, min %.2f ms "
           "over %d runs = %.1f GFLOP/s\n", interp_n_stages(it), flops * 1e-9, t[runs / 2] * 1e3,
           t[0] * 1e3, runs, flops / t[runs / 2] * 1e-9);
    Shape4 shapes[32];
    int ns = collect_shapes(it, shapes, 32);
    printf("matmul shapes (C[M,N] = A[M,K] B), per call:\n"
           "  op          M     N     K      B  batch  count  GFLOP/s  naive   speed-up\n");
    for (int i = 0; i < ns; i++) bench_shape(&shapes[i], &rng);
    free(t);
    interp_free(it);
    model_free(&model);
    lesson_free(&lesson);
    return EXIT_OK;
}
