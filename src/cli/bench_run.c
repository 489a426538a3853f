// bench_run.c: stepformer's side of `bench`, each case in a child process (see bench.h).
// The parent never runs a kernel itself, so every child starts with OpenMP untouched.
#define _DEFAULT_SOURCE  // wait4: the peak memory of one child
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "rng.h"
#include "train.h"


double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

bool bench_in_child(void (*task)(const void *, BenchReply *), const void *arg, BenchReply *r, double *rss_mb) {
    int fd[2];
    memset(r, 0, sizeof *r);
    fflush(stdout), fflush(stderr);
    if (pipe(fd) != 0) return snprintf(r->why, sizeof r->why, "cannot make a pipe"), false;
    const pid_t pid = fork();
    if (pid < 0) return close(fd[0]), close(fd[1]), snprintf(r->why, sizeof r->why, "cannot fork"), false;
    if (pid == 0) {
        close(fd[0]);
        BenchReply mine;
        memset(&mine, 0, sizeof mine);
        task(arg, &mine);
        const ssize_t w = write(fd[1], &mine, sizeof mine);
        _exit(w == (ssize_t)sizeof mine ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t k;
    while (got < sizeof *r && (k = read(fd[0], (char *)r + got, sizeof *r - got)) > 0) got += (size_t)k;
    close(fd[0]);
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || got != sizeof *r || !WIFEXITED(status) || WEXITSTATUS(status)) {
        snprintf(r->why, sizeof r->why, "the measuring process failed (%s)",
                 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "no reply");
        return false;
    }
    *rss_mb = (double)ru.ru_maxrss / 1024.0;
    return r->ok;
}

// ---- a model of the base configuration (or a scaled one) on the built-in program ----

typedef struct {
    Lesson lesson;
    Model model;
    ModelConfig cfg;
} Bench;

static bool bench_open(Bench *b, const BenchCase *c, int positions, BenchReply *r) {
    Err e = {{0}};
    b->cfg = config_base();
    if (c->d_model) b->cfg.d_model = c->d_model;
    if (c->layers) b->cfg.num_encoder_layers = b->cfg.num_decoder_layers = c->layers;
    if (positions > b->cfg.max_positions) b->cfg.max_positions = positions;
    b->cfg.eos_id.set = false;  // greedy runs every round it is asked for, as the peer does
    if (!lesson_parse(&b->lesson, "forward-pass.md", session_builtin_lesson("forward-pass.md", NULL), &e))
        return snprintf(r->why, sizeof r->why, "%s", e.msg), false;
    if (!model_init_config(&b->model, &b->lesson.program, &b->cfg, 1, &e)) {
        lesson_free(&b->lesson);
        return snprintf(r->why, sizeof r->why, "%s", e.msg), false;
    }
    snprintf(r->about, sizeof r->about, "%d OpenMP threads, gemm micro-kernel %s", omp_get_max_threads(),
             sgemm_kernel_name());
    return true;
}

static void bench_close(Bench *b) {
    model_free(&b->model);
    lesson_free(&b->lesson);
}

static void random_ids(float *ids, int n, int vocab, Rng *rng) {
    for (int i = 0; i < n; i++) ids[i] = (float)(4 + rng_below(rng, (uint32_t)(vocab - 4)));
}

double bench_pass_flops(const Interp *it) {
    double f = 0;
    for (int i = 0; i < interp_n_stages(it); i++) f += op_flops(interp_stage(it, i));
    return f;
}

// v[0] median ms, v[1] min ms, v[2] GFLOP of one pass.
static void task_forward(const void *arg, BenchReply *r) {
    const BenchCase *c = arg;
    Bench b;
    if (!bench_open(&b, c, c->len, r)) return;
    const int L = c->len, runs = c->runs ? c->runs : 20;
    float *ids = malloc(sizeof(float) * 2 * (size_t)L);
    double *t = calloc((size_t)runs, sizeof *t);
    Rng rng = {42};
    Err e = {{0}};
    Interp *it = NULL;
    if (ids && t) {
        random_ids(ids, 2 * L, b.cfg.src_vocab_size, &rng);
        ids[L] = 2.0f;  // bos
        RunSpec spec = {ids, L, ids + L, L, 0, 1, true};
        it = interp_new(&b.lesson.program, &b.model, &spec, &e);
    }
    r->ok = it != NULL;
    for (int k = -2; k < runs && r->ok; k++) {  // two warm-up runs
        interp_rewind(it, 0);
        const double t0 = bench_now();
        r->ok = interp_run(it, &e);
        if (k >= 0) t[k] = (bench_now() - t0) * 1e3;
    }
    if (r->ok) r->v[0] = bench_median(t, runs), r->v[1] = t[0], r->v[2] = bench_pass_flops(it) * 1e-9;
    else snprintf(r->why, sizeof r->why, "%s", e.code != ERR_NONE ? e.msg : "out of memory");
    interp_free(it);
    free(t), free(ids);
    bench_close(&b);
}

// v[0] median ms, v[1] min ms, v[2] GFLOP of one decoding (all rounds).
static void task_greedy(const void *arg, BenchReply *r) {
    const BenchCase *c = arg;
    Bench b;
    if (!bench_open(&b, c, (c->src_len > c->new_tokens ? c->src_len : c->new_tokens) + 1, r)) return;
    const int runs = c->runs ? c->runs : 3;
    float *src = malloc(sizeof(float) * (size_t)c->src_len);
    double *t = calloc((size_t)runs, sizeof *t), gflop = 0;
    int rounds = 0, fewer = 0;  // over the timed runs: rounds timed by the thread tuner, and on fewer threads
    Rng rng = {7};
    Err e = {{0}};
    r->ok = src && t;
    if (r->ok) random_ids(src, c->src_len, b.cfg.src_vocab_size, &rng);
    for (int k = -1; k < runs && r->ok; k++) {  // one warm-up run
        RunSpec spec = {src, c->src_len, NULL, 0, c->new_tokens, 1, true, c->cached};
        const double t0 = bench_now();
        Interp *it = interp_new(&b.lesson.program, &b.model, &spec, &e);
        r->ok = it && interp_run(it, &e);
        if (k >= 0) t[k] = (bench_now() - t0) * 1e3;
        if (r->ok && !c->cached) gflop = bench_pass_flops(it) * 1e-9;  // the cached decoder does less than the stages say
        if (r->ok && k >= 0) {
            int n, f;
            interp_threads_used(it, &n, &f);
            rounds += n, fewer += f;
        }
        interp_free(it);
    }
    if (r->ok && rounds > 0 && fewer > 0)
        snprintf(r->about + strlen(r->about), sizeof r->about - strlen(r->about), "; %d of %d rounds on fewer threads",
                 fewer, rounds);
    if (r->ok) r->v[0] = bench_median(t, runs), r->v[1] = t[0], r->v[2] = gflop;
    else snprintf(r->why, sizeof r->why, "%s", e.code != ERR_NONE ? e.msg : "out of memory");
    free(t), free(src);
    bench_close(&b);
}

// One training step of the tiny configuration: v[0] median ms, v[1] min ms, v[2] GFLOP of
// matrix products in a step (forward and backward).
static void task_train(const void *arg, BenchReply *r) {
    const BenchCase *c = arg;
    enum { B = 64, L = 16 };
    const int steps = c->runs ? c->runs : 50;
    ModelConfig cfg = config_base();
    cfg.d_model = 64, cfg.nhead = 4, cfg.num_encoder_layers = cfg.num_decoder_layers = 2, cfg.dim_feedforward = 256;
    cfg.src_vocab_size = cfg.tgt_vocab_size = 32, cfg.max_positions = 32;
    Err e = {{0}};
    Model m;
    Lesson l;
    if (!lesson_parse(&l, "forward-pass.md", session_builtin_lesson("forward-pass.md", NULL), &e))
        return (void)snprintf(r->why, sizeof r->why, "%s", e.msg);
    if (!model_init_config(&m, &l.program, &cfg, 1, &e))
        return lesson_free(&l), (void)snprintf(r->why, sizeof r->why, "%s", e.msg);
    StepConfig sc = {B, L, L, 0.1f, 0.9f, 0.98f, 1e-9f};
    TrainState *ts = train_state_new(&m, &l.program, &sc, &e);
    static float src[B * L], tin[B * L], tout[B * L];
    Rng rng = {3};
    random_ids(src, B * L, 32, &rng), random_ids(tin, B * L, 32, &rng), random_ids(tout, B * L, 32, &rng);
    double *t = calloc((size_t)steps, sizeof *t);
    StepStats s;
    r->ok = ts && t;
    for (int i = -5; i < steps && r->ok; i++) {
        const double t0 = bench_now();
        r->ok = train_state_step(ts, src, tin, tout, &s, &e);
        train_state_update(ts, 1e-3f);
        if (i >= 0) t[i] = (bench_now() - t0) * 1e3;
    }
    if (r->ok) {
        r->v[0] = bench_median(t, steps), r->v[1] = t[0];
        RunSpec spec = {src, L, tin, L, 0, B};  // the pass's products, three times: forward and backward
        Interp *it = interp_new(&l.program, &m, &spec, &e);
        for (int i = 0; it && i < interp_n_stages(it); i++)
            if (stage_is_product(interp_stage(it, i)))
                r->v[2] += 3 * op_flops(interp_stage(it, i)) * B * 1e-9;
        interp_free(it);
        snprintf(r->about, sizeof r->about, "%d OpenMP threads, gemm micro-kernel %s", omp_get_max_threads(),
                 sgemm_kernel_name());
    } else snprintf(r->why, sizeof r->why, "%s", e.code != ERR_NONE ? e.msg : "out of memory");
    free(t);
    train_state_free(ts);
    lesson_free(&l);
    model_free(&m);
}

bool bench_ours(const BenchCase *c, Figure *out, char *why, size_t n) {
    static void (*const tasks[PATH_COUNT])(const void *, BenchReply *) = {
        task_forward, task_greedy, task_train, bench_task_gpt2_forward, bench_task_gpt2_generate};
    BenchReply r;
    memset(out, 0, sizeof *out);
    if (!bench_in_child(tasks[c->path], c, &r, &out->rss_mb)) return snprintf(why, n, "%s", r.why), false;
    out->ok = true, out->median_ms = r.v[0], out->min_ms = r.v[1], out->gflop = r.v[2];
    if (c->path == PATH_GPT2_FORWARD) out->products_ms = r.v[3], out->products_gflop = r.v[4];
    snprintf(out->about, sizeof out->about, "%s", r.about);
    return true;
}

// ---- matmul shapes ----

int bench_gemm_shapes(int len, GemmShape *out, int cap) {
    const ModelConfig b = config_base();
    const int d = b.d_model, f = b.dim_feedforward, h = b.nhead, dk = d / h;
    const int enc = b.num_encoder_layers, dec = b.num_decoder_layers;
    const GemmShape all[] = {
        {"linear", 1, len, d, d, true, 4 * enc + 8 * dec},  // q, k, v, out of every attention
        {"linear", 1, len, f, d, true, enc + dec},          // feed-forward in
        {"linear", 1, len, d, f, true, enc + dec},          // feed-forward out
        {"linear", 1, len, b.tgt_vocab_size, d, true, 1},   // generator
        {"matmul", h, len, len, dk, true, enc + 2 * dec},   // Q Kᵀ
        {"matmul", h, len, dk, len, false, enc + 2 * dec},  // weights V
    };
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof *all && n < cap; i++) out[n++] = all[i];
    return n;
}

typedef struct {
    const GemmShape *s;
    int n;
} ShapeList;

bool bench_operands(const GemmShape *s, unsigned long long seed, float **a, float **b, float **c) {
    const size_t na = (size_t)s->M * s->K * s->batch, nb = (size_t)s->K * s->N * s->batch;
    *a = malloc(na * 4), *b = malloc(nb * 4), *c = malloc((size_t)s->M * s->N * s->batch * 4);
    if (!*a || !*b || !*c) {
        free(*a), free(*b), free(*c);
        *a = *b = *c = NULL;
        return false;
    }
    Rng rng = {seed};
    for (size_t k = 0; k < na; k++) (*a)[k] = rng_uniform(&rng) - 0.5f;
    for (size_t k = 0; k < nb; k++) (*b)[k] = rng_uniform(&rng) - 0.5f;
    return true;
}

static void task_gemm(const void *arg, BenchReply *r) {
    const ShapeList *l = arg;
    r->ok = true;
    for (int i = 0; i < l->n && i < BENCH_VALUES && r->ok; i++) {
        const GemmShape *s = &l->s[i];
        float *a, *b, *c;
        r->ok = bench_operands(s, 5 + (unsigned)i, &a, &b, &c);
        // A linear's weight is packed once, as a run does (RunSpec.pack_weights); matmul's
        // operands are activations, packed on every call.
        const bool weight = !strcmp(s->op, "linear");
        float *pk = weight && r->ok ? sgemm_packed_new(s->N, s->K) : NULL;
        if (pk) sgemm_pack(pk, b, s->K, s->N, s->K, true);
        r->ok = r->ok && (!weight || pk);
        int reps = 0;
        const double t0 = bench_now();
        double el = 0;
        while (r->ok && (el = bench_now() - t0) < 0.2) {  // as the forward runs it (matmul: heads side by side)
            if (pk) sgemm_prepacked(c, s->N, a, s->K, pk, NULL, s->M, s->N, s->K);
            else matmul_forward(c, a, b, s->batch, s->M, s->N, s->K, s->bt);
            reps++;
        }
        free(pk);
        if (r->ok) r->v[i] = 2.0 * s->M * s->N * s->K * s->batch * reps / el * 1e-9;
        free(a), free(b), free(c);
    }
    if (!r->ok) snprintf(r->why, sizeof r->why, "out of memory");
}

bool bench_gemm_ours(const GemmShape *s, int n, double *gflops, char *why, size_t wn) {
    const ShapeList l = {s, n};
    BenchReply r;
    double rss;
    if (!bench_in_child(task_gemm, &l, &r, &rss)) return snprintf(why, wn, "%s", r.why), false;
    for (int i = 0; i < n && i < BENCH_VALUES; i++) gflops[i] = r.v[i];
    return true;
}
