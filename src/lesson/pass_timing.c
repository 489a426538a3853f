// pass_timing.c: see pass_timing.h.
#include "pass_timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "session.h"

const char *const pass_timing_names[PASS_TIMINGS] = {"dates model, whole pass (greedy decoding)",
                                                     "base model, forward at 32 tokens", "GPT-2 small, forward at 128 tokens"};

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int by_value(const void *x, const void *y) {
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

// Runs the session's pass from its first stage `runs` times after warm-up runs: at least 3, and
// at least 300 ms of them, so that a browser has compiled the hot code with its optimising
// compiler (V8 starts WebAssembly on a quick baseline compiler and tiers up what runs often).
static bool time_pass(Session *s, const char *name, int runs, PassTiming *out, Err *e) {
    double *t = calloc((size_t)runs, sizeof *t);
    if (!t) return err_code(e, ERR_MEMORY, "out of memory");
    bool ok = true;
    const double warm_from = now_ms();
    for (int w = 0; ok && (w < 3 || now_ms() - warm_from < 300.0); w++) interp_rewind(s->it, 0), ok = interp_run(s->it, e);
    for (int k = 0; k < runs && ok; k++) {
        interp_rewind(s->it, 0);
        const double t0 = now_ms();
        ok = interp_run(s->it, e);
        t[k] = now_ms() - t0;
    }
    if (ok) {
        qsort(t, (size_t)runs, sizeof *t, by_value);
        *out = (PassTiming){name, runs % 2 ? t[runs / 2] : 0.5 * (t[runs / 2 - 1] + t[runs / 2]), t[0], runs,
                            interp_n_stages(s->it)};
    }
    free(t);
    return ok;
}

bool pass_timings(const char *lessons_dir, int runs, PassTiming *out, Err *e) {
    char path[1100];
    snprintf(path, sizeof path, "%s/forward-pass.md", lessons_dir);
    Session s;
    const SessionSpec spec = {.lesson_path = path};
    if (!session_open(&s, &spec, e)) return false;
    bool ok = time_pass(&s, pass_timing_names[0], runs, &out[0], e);
    session_close(&s);
    if (!ok) return false;
    const ModelConfig base = config_base();
    if (!session_open_random(&s, &base, NULL, 42, 32, 32, e)) return false;
    ok = time_pass(&s, pass_timing_names[1], runs, &out[1], e);
    session_close(&s);
    if (!ok) return false;
    if (!session_open_random_text(&s, "gpt2.md", PASS_GPT2_CONFIG, PASS_GPT2_SEED, PASS_GPT2_LEN, PASS_GPT2_LEN, e)) return false;
    ok = time_pass(&s, pass_timing_names[2], runs, &out[2], e);
    session_close(&s);
    return ok;
}
