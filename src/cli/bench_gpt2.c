// bench_gpt2.c: `bench --only gpt2`. GPT-2 small's configuration (12 layers, 12 heads, 768 wide,
// 3072-wide MLP, 1024 positions, 50257 tokens) with random weights, written once as a hub folder
// (config.json, model.safetensors, F32) that both sides read: stepformer opens it as a user's
// download opens, scripts/bench_torch.py (gpt2-forward, gpt2-generate) with Hugging Face's
// formulas. Each of stepformer's measurements runs in a child process (bench.h).
#include <cjson/cJSON.h>
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

enum { VIEWS_AT = 12, GPT2_WINDOW_VALUES = VIEWS_AT + 2 * UI_BENCH_VIEWS };

typedef struct {
    const char *dir;
    int len, trace_mb;
    bool pause;
} WindowCase;

// The child's side of window_in_child, which says what each v[] is.
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
    r->v[9] = f.click_median, r->v[10] = f.click_max, r->v[11] = f.clicks;
    for (int k = 0; k < UI_BENCH_VIEWS; k++) r->v[VIEWS_AT + 2 * k] = f.view_median[k], r->v[VIEWS_AT + 1 + 2 * k] = f.view_p99[k];
}

// The window on the folder at `len` tokens (a prompt of len ids, one token generated) under a
// --trace-mb budget, in a child process (ui_bench_open): v[0] opening, v[1] the pass traced, v[2..4]
// a step to its frame's median, p99 and slowest (ms), v[5] the steps, v[6] MB the trace held at the
// end, v[7] the first frame (the one opening draws, not a step), v[8] with `pause` (each step
// after a reader's pause, in which the idle window readies the next stage) the steps it
// readied, v[9..11] a click on each block of the map to its frame: the median, the slowest (ms)
// and the clicks; then for each view of ui_bench_view_names redrawn on it, v[VIEWS_AT + 2k] its
// median frame and v[VIEWS_AT + 1 + 2k] its slowest (ms); *rss_mb the child's peak. False with why.
static bool window_in_child(const char *dir, int len, int trace_mb, bool pause, double v[GPT2_WINDOW_VALUES],
                            double *rss_mb, char *why, size_t n) {
    const WindowCase w = {dir, len, trace_mb, pause};
    BenchReply r;
    if (!bench_in_child(task_window, &w, &r, rss_mb)) return snprintf(why, n, "%s", r.why), false;
    memcpy(v, r.v, sizeof(double) * GPT2_WINDOW_VALUES);
    return true;
}

// Each view redrawn on the GPT-2 window (window_in_child's v[VIEWS_AT..]: a median and a slowest frame
// each, 0: not drawn), against the target of a frame in 16 ms.
enum { VIEW_TARGET_MS = 16 };
static void view_text(const double *v) {
    bool met = true;
    printf("its views, each redrawn 30 times with the pointer moving (target %d ms a frame):\n", VIEW_TARGET_MS);
    for (int k = 0; k < UI_BENCH_VIEWS; k++) {
        if (v[2 * k] <= 0) continue;
        printf("  %-48s median %6.2f ms   slowest %6.2f ms\n", ui_bench_view_names[k], v[2 * k], v[2 * k + 1]);
        met = met && v[2 * k + 1] <= VIEW_TARGET_MS;
    }
    printf("  every frame within %d ms: %s\n", VIEW_TARGET_MS, met ? "met" : "NOT met");
}

static void view_json(const double *v, cJSON *o) {
    cJSON *views = cJSON_AddObjectToObject(o, "views");
    bool met = true;
    for (int k = 0; k < UI_BENCH_VIEWS; k++) {
        if (v[2 * k] <= 0) continue;
        cJSON *one = cJSON_AddObjectToObject(views, ui_bench_view_names[k]);
        cJSON_AddNumberToObject(one, "frame_median_ms", v[2 * k]);
        cJSON_AddNumberToObject(one, "frame_max_ms", v[2 * k + 1]);
        met = met && v[2 * k + 1] <= VIEW_TARGET_MS;
    }
    cJSON_AddBoolToObject(o, "view_frame_target_met", met);
}

// The window on GPT-2 small at 1023 tokens under a trace budget: each step to its frame
// (recomputing what the budget let go), against the target of 50 ms a step. Two budgets: 512 MB,
// the for `run`, and 2048 MB, the default on a machine of 8 GB (a quarter of its memory).
// With `pause`, each step follows a reader's pause, in which the idle window readies the next stage.
static void gpt2_window(const char *dir, int budget_mb, bool pause, const char *note, cJSON *json) {
    enum { LEN = 1023, STEP_TARGET_MS = 50 };
    double v[GPT2_WINDOW_VALUES], rss = 0;
    char why[256], key[80];
    const bool ok = window_in_child(dir, LEN, budget_mb, pause, v, &rss, why, sizeof why);
    if (json) {
        snprintf(key, sizeof key, "gpt2_window_1023_tokens_%d_mb%s", budget_mb, pause ? "_after_a_pause" : "");
        cJSON *o = cJSON_AddObjectToObject(json, key);
        if (!ok) return (void)cJSON_AddStringToObject(o, "error", why);
        static const char *const names[] = {"open_ms", "trace_ms", "step_median_ms", "step_p99_ms", "step_max_ms", "steps",
                                            "trace_held_mb", "first_frame_ms", "steps_readied_in_the_pause"};
        for (int k = 0; k < (pause ? 9 : 8); k++) cJSON_AddNumberToObject(o, names[k], v[k]);
        cJSON_AddNumberToObject(o, "trace_mb", budget_mb), cJSON_AddNumberToObject(o, "peak_rss_mb", rss);
        cJSON_AddBoolToObject(o, "step_target_met", v[4] <= STEP_TARGET_MS);
        if (v[11] > 0) {
            cJSON_AddNumberToObject(o, "map_clicks", v[11]);
            cJSON_AddNumberToObject(o, "map_click_median_ms", v[9]), cJSON_AddNumberToObject(o, "map_click_max_ms", v[10]);
            cJSON_AddBoolToObject(o, "map_click_target_met", v[10] <= STEP_TARGET_MS);
        }
        if (!pause) view_json(v + VIEWS_AT, o);
        return;
    }
    if (!ok) return (void)printf("\nthe window on GPT-2 small could not run: %s\n", why);
    const char *met = v[4] <= STEP_TARGET_MS ? "met" : "NOT met";
    if (pause) {
        printf("\nthe same at --trace-mb %d, each step after a pause on the stage before, as a reader's (the idle\n"
               "window readies the next stage: %.0f of the %.0f were recomputed then): median %.1f ms, p99 %.1f ms,\n"
               "slowest %.1f ms (target %d ms: %s); the process %.0f MB at its peak\n",
               budget_mb, v[8], v[5], v[2], v[3], v[4], STEP_TARGET_MS, met, rss);
        return;
    }
    printf("\nthe window on GPT-2 small, a %d-token prompt, --trace-mb %d (1920x1080, off screen): opened in\n"
           "%.0f ms, the pass traced in %.0f ms, its first frame drawn in %.0f ms; then a step to its frame, over\n"
           "the other %.0f stages in their views, recomputing what the budget let go: median %.1f ms, p99 %.1f ms,\n"
           "slowest %.1f ms (target %d ms: %s);\n"
           "the trace held %.0f MB at the end, the process %.0f MB at its peak%s\n",
           LEN, budget_mb, v[0], v[1], v[7], v[5], v[2], v[3], v[4], STEP_TARGET_MS, met, v[6], rss, note);
    if (v[11] > 0)
        printf("then a click on each of the map's %.0f blocks, about the pass, to its frame: median %.1f ms, slowest\n"
               "%.1f ms (target %d ms: %s)\n", v[11], v[9], v[10], STEP_TARGET_MS, v[10] <= STEP_TARGET_MS ? "met" : "NOT met");
    view_text(v + VIEWS_AT);
}

void bench_gpt2_windows(const char *dir, cJSON *json) {
    gpt2_window(dir, 512, false, "", json);
    gpt2_window(dir, 512, true, "", json);
    gpt2_window(dir, 2048, false, " (2048 MB: the default budget with 8 GB of memory)", json);
}
