// bench_peak.c: this machine's arithmetic peak, measured the way the brief asks: a loop of
// independent fused multiply-adds as wide as the CPU's vectors (the level sgemm uses), on one
// core and on all of them. `bench` prints it beside each path's figures, so a reader sees how
// close a time is to what the machine can do at all.
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "simd.h"

enum { CHAINS = 12, ITERS = 1 << 21 };  // 12 chains cover a multiply-add's latency on any core here

// Flops of one call: CHAINS vectors of W lanes, ITERS times, 2 flops a lane (SSE2 has no fused
// multiply-add, so its a * b + c is two operations, counted as the same 2 flops).
#define DEFINE_PEAK_LOOP(NAME, W, TARGET)                                                       \
    TARGET static double NAME(float seed) {                                                     \
        typedef float vf __attribute__((vector_size((W) * 4)));                                 \
        vf acc[CHAINS];                                                                         \
        const vf m = (vf){0} + 0.999999f, add = (vf){0} + 1e-7f;                                \
        for (int c = 0; c < CHAINS; c++) acc[c] = (vf){0} + seed + (float)c;                    \
        for (int i = 0; i < ITERS; i++)                                                         \
            for (int c = 0; c < CHAINS; c++) acc[c] = acc[c] * m + add;                         \
        float s = 0;                                                                            \
        for (int c = 0; c < CHAINS; c++)                                                        \
            for (int l = 0; l < (W); l++) s += acc[c][l];                                       \
        __asm__ volatile("" : : "g"(s)); /* the result is used, so the loop is not removed */   \
        return 2.0 * (W) * CHAINS * (double)ITERS;                                              \
    }
DEFINE_PEAK_LOOP(peak_avx512, 16, __attribute__((target("avx512f,fma"))))
DEFINE_PEAK_LOOP(peak_avx2, 8, __attribute__((target("avx2,fma"))))
DEFINE_PEAK_LOOP(peak_base, 4, )
// Four floats with fused multiply-adds: the browser page's vectors (WebAssembly SIMD128 with its
// relaxed multiply-add, which the CPU fuses where it has FMA), run natively.
DEFINE_PEAK_LOOP(peak_fma4, 4, __attribute__((target("avx2,fma"))))

typedef double (*PeakLoop)(float);

static PeakLoop level_loop(void) {
    static const PeakLoop loops[] = {[SIMD_BASE] = peak_base, [SIMD_AVX2] = peak_avx2, [SIMD_AVX512] = peak_avx512};
    return loops[simd_level()];
}

// GFLOP/s on `threads` threads: the best of ten rounds, each every thread running the loop once
// (a neighbour on a shared machine can slow a round; the best is the machine's). The rounds are
// PEAK_GAP_NS apart, so they sample a fifth of a second rather than the 40 ms they take: a
// neighbour busy for that long had slowed all ten, and a path measured after them ran at
// "105%" of the peak.
enum { PEAK_GAP_NS = 15 * 1000 * 1000 };
static double peak_on(int threads, PeakLoop loop) {
    double best = 0;
    for (int round = 0; round < 10; round++) {
        if (round) nanosleep(&(struct timespec){0, PEAK_GAP_NS}, NULL);
        double flops = 0;
        const double t0 = bench_now();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
        flops += loop(1.0f);
        const double rate = flops / (bench_now() - t0) * 1e-9;
        if (rate > best) best = rate;
    }
    return best;
}

// v[0]: one core, v[1]: every core.
static void task_peak(const void *arg, BenchReply *r) {
    (void)arg;
    r->v[0] = peak_on(1, level_loop());
    r->v[1] = peak_on(omp_get_max_threads(), level_loop());
    r->ok = r->v[0] > 0 && r->v[1] > 0;
    if (!r->ok) snprintf(r->why, sizeof r->why, "the peak loop took no time");
}

bool bench_peak(double *one_core, double *all_cores) {
    BenchReply r;
    double rss;
    *one_core = *all_cores = 0;
    if (!bench_in_child(task_peak, NULL, &r, &rss)) return false;
    *one_core = r.v[0], *all_cores = r.v[1];
    return true;
}

// v[0]: one core at the kernels' level, v[1]: one core four floats wide with FMA (0 without FMA).
static void task_peak_page(const void *arg, BenchReply *r) {
    (void)arg;
    r->v[0] = peak_on(1, level_loop());
    r->v[1] = simd_level() >= SIMD_AVX2 ? peak_on(1, peak_fma4) : 0;
    r->ok = r->v[0] > 0;
    if (!r->ok) snprintf(r->why, sizeof r->why, "the peak loop took no time");
}

bool bench_peak_page(double *native, double *four_wide) {
    BenchReply r;
    double rss;
    *native = *four_wide = 0;
    if (!bench_in_child(task_peak_page, NULL, &r, &rss)) return false;
    *native = r.v[0], *four_wide = r.v[1];
    return true;
}

void bench_cpu_name(char *out, size_t n) {
    snprintf(out, n, "an unnamed CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !colon) continue;
        colon += 1 + strspn(colon + 1, " \t");
        snprintf(out, n, "%.*s", (int)strcspn(colon, "\n"), colon);
        break;
    }
    if (f) fclose(f);
}
