// check.h: the few assertion macros the tests use. Every failed check prints where and why;
// check_finish() prints the tally and is the test's exit status (non-zero on any failure).
#ifndef STEPFORMER_CHECK_H
#define STEPFORMER_CHECK_H

#include <math.h>
#include <stdio.h>

static int check_total, check_failed;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        check_total++;                                                     \
        if (!(cond)) {                                                     \
            check_failed++;                                                \
            fprintf(stderr, "%s:%d: FAILED: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

// Largest |a[i] - b[i]|; NaN anywhere counts as infinitely far.
static inline double max_abs_diff(const float *a, const float *b, long n) {
    double worst = 0.0;
    for (long i = 0; i < n; i++) {
        if (isinf(a[i]) && isinf(b[i]) && (a[i] > 0) == (b[i] > 0)) continue;
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

#define CHECK_CLOSE(a, b, n, tol, what)                                                 \
    do {                                                                                \
        double d_ = max_abs_diff((a), (b), (long)(n));                                  \
        CHECK(d_ <= (tol), "%s: max abs difference %.3g > %.3g", (what), d_, (double)(tol)); \
    } while (0)

// A number a lesson's narration states with `places` decimals: the true value must round to it.
#define CHECK_STATED(value, stated, places, what)                                                \
    do {                                                                                       \
        const double v_ = (value), half_ = 0.5 * pow(10.0, -(places)) + 1e-9;                  \
        CHECK(fabs(v_ - (stated)) <= half_, "%s: %.6f does not round to %.*f", (what), v_,     \
              (int)(places), (double)(stated));                                                \
    } while (0)

static inline int check_finish(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_total - check_failed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
