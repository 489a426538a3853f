// bench_gpt2.c: `bench --only gpt2`. GPT-2 small's configuration (12 layers, 12 heads, 768 wide,
// 3072-wide MLP, 1024 positions, 50257 tokens) with random weights, written once as a hub folder
// (config.json, model.safetensors, F32) that both sides read: stepformer opens it as a user's
// download opens, scripts/bench_torch.py (gpt2-forward, gpt2-generate) with Hugging Face's
// formulas. Each of stepformer's measurements runs in a child process (bench.h).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "hub_save.h"
#include "pass_timing.h"
#include "rng.h"
#include "window.h"


// Writes the folder (the child's work: the parent runs no kernel and holds no weights).
static void task_write(const void *arg, BenchReply *r) {
    const char *dir = arg;
    const char *path = NULL, *text = session_builtin_lesson("gpt2.md", &path);
    Lesson l;
    Model m;
    Err e = {{0}};
    ConfSpec cs = {0};
    conf_spec_add(&cs, PASS_GPT2_CONFIG, "GPT-2 small", false);
    r->ok = text && lesson_parse(&l, path, text, &e);
    if (r->ok) {
        const bool made = model_init_random(&m, &l.program, &cs, PASS_GPT2_SEED, &e);  // the browser benchmark's weights too
        r->ok = made && hub_save(&m, &l.program, dir, ST_F32, NULL, "stepformer/bench-gpt2-small", &e);
        if (made) model_free(&m);
        lesson_free(&l);
    }
    if (!r->ok) snprintf(r->why, sizeof r->why, "%s", e.code != ERR_NONE ? e.msg : "no built-in gpt2.md");
}

bool bench_gpt2_folder(char *dir, size_t n, char *why, size_t wn) {
    snprintf(dir, n, "/tmp/stepformer-bench-gpt2-XXXXXX");
    if (!mkdtemp(dir)) return snprintf(why, wn, "cannot make a folder in /tmp for GPT-2's weights"), false;
    BenchReply r;
    double rss;
    if (bench_in_child(task_write, dir, &r, &rss)) return true;
    snprintf(why, wn, "GPT-2's weights could not be written: %s", r.why);
    bench_gpt2_remove(dir);
    return false;
}

void bench_gpt2_remove(const char *dir) {
    static const char *const files[] = {"config.json", "model.safetensors"};
    char path[4200];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

// `len` random ids, comma-separated, into ids (malloc'd), from seed.
static char *random_ids(int len, uint64_t seed) {
    char *ids = malloc((size_t)len * 7 + 1);
    Rng rng = {seed};
    for (int i = 0, k = 0; ids && i < len; i++) k += sprintf(ids + k, "%s%u", i ? "," : "", (unsigned)rng_below(&rng, 50257));
    return ids;
}

static bool open_gpt2(Session *s, const BenchCase *c, int len, bool generate, BenchReply *r, Err *e) {
    char *ids = random_ids(len, generate ? 8 : 4);
    SessionSpec spec = {.model_path = c->model_dir, .src_ids = ids, .force_prompt = !generate, .cached = generate,
                        .max_len = generate ? c->new_tokens : 0};
    const bool ok = ids && session_open(s, &spec, e);
    free(ids);
    snprintf(r->about, sizeof r->about, "%d OpenMP threads, gemm micro-kernel %s", omp_get_max_threads(),
             sgemm_kernel_name());
    return ok;
}

// One pass from the start, stage by stage (as interp_run steps a forward): its time, and in
// *products the time its matrix products took. False (with e) if a stage failed.
static bool timed_pass(Interp *it, double *ms, double *products, Err *e) {
    interp_rewind(it, 0);
    *products = 0;
    const double t0 = bench_now();
    for (;;) {
        const int i = interp_n_done(it);
        const double s0 = bench_now();
        const StepStatus st = interp_step(it, e);
        if (st != STEP_RAN) {
            *ms = (bench_now() - t0) * 1e3;
            return st == STEP_DONE;
        }
        if (stage_is_product(interp_stage(it, i))) *products += (bench_now() - s0) * 1e3;
    }
}

// v[0] median ms, v[1] min ms, v[2] GFLOP of one pass over the prompt; v[3] the median of the
// runs' time in their matrix products (ms), v[4] those products' GFLOP.
void bench_task_gpt2_forward(const void *arg, BenchReply *r) {
    const BenchCase *c = arg;
    const int runs = c->runs ? c->runs : 5;
    double *t = calloc(2 * (size_t)runs, sizeof *t), *tp = t + runs;
    Session s;
    Err e = {{0}};
    r->ok = t && open_gpt2(&s, c, c->len, false, r, &e);
    const bool opened = r->ok;
    for (int k = -1; k < runs && r->ok; k++) {  // one warm-up run
        double ms, products;
        r->ok = timed_pass(s.it, &ms, &products, &e);
        if (k >= 0) t[k] = ms, tp[k] = products;
    }
    if (r->ok) {
        r->v[0] = bench_median(t, runs), r->v[1] = t[0], r->v[2] = bench_pass_flops(s.it) * 1e-9;
        r->v[3] = bench_median(tp, runs);
        for (int i = 0; i < interp_n_stages(s.it); i++)
            if (stage_is_product(interp_stage(s.it, i))) r->v[4] += op_flops(interp_stage(s.it, i)) * 1e-9;
    } else snprintf(r->why, sizeof r->why, "%s", e.code != ERR_NONE ? e.msg : "out of memory");
    if (opened) session_close(&s);
    free(t);
}

// v[0] median ms, v[1] min ms of generating c->new_tokens after a c->len-token prompt, every
// round run (the folder's eos is not a stop here, as the peer runs every round).
void bench_task_gpt2_generate(const void *arg, BenchReply *r) {
    const BenchCase *c = arg;
    const int runs = c->runs ? c->runs : 3;
    double *t = calloc((size_t)runs, sizeof *t);
    Session s;
    Err e = {{0}};
    r->ok = t && open_gpt2(&s, c, c->len, true, r, &e);
    const bool opened = r->ok;
    if (opened) s.model.cfg.eos_id.set = false;
    for (int k = -1; k < runs && r->ok; k++) {  // one warm-up run
        const double t0 = bench_now();
        interp_free(s.it);
        s.it = interp_new(&s.lesson.program, &s.model, &s.run, &e);
        r->ok = s.it && interp_run(s.it, &e);
        if (k >= 0) t[k] = (bench_now() - t0) * 1e3;
    }
    if (r->ok) r->v[0] = bench_median(t, runs), r->v[1] = t[0];
    else snprintf(r->why, sizeof r->why, "%s", e.code != ERR_NONE ? e.msg : "out of memory");
    if (opened) session_close(&s);
    free(t);
}

typedef struct {
    const char *dir;
    int len, trace_mb;
    bool pause;
} WindowCase;

// v[0] open, v[1] trace, v[2..4] a step's median, p99, slowest, v[5] steps, v[6] MB held at the
// end, v[7] the first frame, v[8] the steps a pause readied.
static void task_window(const void *arg, BenchReply *r) {
    const WindowCase *w = arg;
    char *ids = random_ids(w->len, 6);
    const SessionSpec spec = {.model_path = w->dir, .src_ids = ids, .max_len = 1, .trace_mb = w->trace_mb};
    LongPassFigures f;
    Err e = {{0}};
    r->ok = ids && ui_bench_open(&spec, w->pause, &f, &e);
    free(ids);
    if (!r->ok) return (void)snprintf(r->why, sizeof r->why, "%s", e.code != ERR_NONE ? e.msg : "out of memory");
    r->v[0] = f.open_ms, r->v[1] = f.trace_ms, r->v[2] = f.step_median, r->v[3] = f.step_p99, r->v[4] = f.step_max;
    r->v[5] = f.steps, r->v[6] = (double)f.trace_bytes / (1 << 20), r->v[7] = f.first_ms, r->v[8] = f.readied;
}

bool bench_gpt2_window(const char *dir, int len, int trace_mb, bool pause, double v[9], double *rss_mb, char *why,
                       size_t n) {
    const WindowCase w = {dir, len, trace_mb, pause};
    BenchReply r;
    if (!bench_in_child(task_window, &w, &r, rss_mb)) return snprintf(why, n, "%s", r.why), false;
    memcpy(v, r.v, sizeof(double) * 9);
    return true;
}
