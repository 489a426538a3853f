// colormap.c: piecewise-linear colour maps through published anchor colours.
#include "colormap.h"

#include <math.h>

#include "par.h"

const Rgba cmap_masked = {150, 150, 150, 255};

// ColorBrewer RdBu, 11 classes, reversed so that negative is blue: colour-blind safe.
static const Rgba diverging[] = {
    {5, 48, 97, 255},    {33, 102, 172, 255}, {67, 147, 195, 255}, {146, 197, 222, 255},
    {209, 229, 240, 255}, {247, 247, 247, 255}, {253, 219, 199, 255}, {244, 165, 130, 255},
    {214, 96, 77, 255},  {178, 24, 43, 255},  {103, 0, 31, 255}};

// Viridis sampled at 0, 1/8, ..., 1.
static const Rgba sequential[] = {
    {68, 1, 84, 255},    {71, 45, 123, 255}, {59, 82, 139, 255}, {44, 114, 142, 255},
    {33, 145, 140, 255}, {40, 174, 128, 255}, {94, 201, 98, 255}, {173, 220, 48, 255},
    {253, 231, 37, 255}};

// lroundf(x) for 0 <= x < 256, the same integer (checked over every float there), without
// the library call: a heat map colours millions of pixels.
static inline uint8_t round_channel(float x) { return x < 0.5f ? 0 : (uint8_t)(int)(x + 0.5f); }

static Rgba lerp(const Rgba *stops, int n, float t) {
    if (!(t > 0.0f)) t = 0.0f;  // NaN goes to the start
    if (t > 1.0f) t = 1.0f;
    float x = t * (float)(n - 1);
    int i = (int)x;
    if (i >= n - 1) return stops[n - 1];
    float f = x - (float)i;
    const Rgba a = stops[i], b = stops[i + 1];
    return (Rgba){round_channel(a.r + f * (b.r - a.r)), round_channel(a.g + f * (b.g - a.g)),
                  round_channel(a.b + f * (b.b - a.b)), 255};
}

Rgba cmap_at(Colormap m, float t) {
    return m == CMAP_DIVERGING ? lerp(diverging, 11, t) : lerp(sequential, 9, t);
}

Rgba cmap_value(Colormap m, float v, float lo, float hi) {
    if (v == -INFINITY) return cmap_masked;
    if (m == CMAP_DIVERGING) return cmap_at(m, hi > 0 ? 0.5f + 0.5f * v / hi : 0.5f);
    return cmap_at(m, hi > lo ? (v - lo) / (hi - lo) : 0.0f);
}

// The least and the most finite value of x[0, n), into *mn and *mx (left as they are where
// none is finite): four at a time in vectors (SSE2's and WebAssembly's width), a value that is
// not finite (NaN, an infinity) never taken. Branch-free selects, so the compiler keeps it in
// vector registers (eight-wide vectors on SSE2 came out as scalar compares).
static void finite_span(const float *x, size_t n, float *mn, float *mx) {
    typedef float v4 __attribute__((vector_size(16)));
    typedef float v4u __attribute__((vector_size(16), aligned(4)));
    typedef int v4i __attribute__((vector_size(16)));
    const v4 inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    v4 lo = inf, hi = -inf;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const v4 v = *(const v4u *)(x + i);
        const v4i fin = (v < inf) & (v > -inf);  // all ones where finite (NaN compares false)
        const v4i take_lo = fin & (v < lo), take_hi = fin & (v > hi);
        lo = (v4)((take_lo & (v4i)v) | (~take_lo & (v4i)lo));
        hi = (v4)((take_hi & (v4i)v) | (~take_hi & (v4i)hi));
    }
    float a = *mn, b = *mx;
    for (int k = 0; k < 4; k++) a = lo[k] < a ? lo[k] : a, b = hi[k] > b ? hi[k] : b;
    for (; i < n; i++)
        if (isfinite(x[i])) a = x[i] < a ? x[i] : a, b = x[i] > b ? x[i] : b;
    *mn = a, *mx = b;
}

void cmap_range(Colormap m, const float *x, size_t n, float *lo, float *hi, float *bar_lo, float *bar_hi) {
    enum { CHUNK = 1 << 16 };
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    float mn = INFINITY, mx = -INFINITY;
    // Over the cores once it is long (12 heads of 1024 x 1024 are 12 million values): the least
    // and the most are the same in any order, but for the sign of a zero, which is made +0.
    PAR_LOOP(PAR_N(n), "omp parallel for reduction(min : mn) reduction(max : mx)",
        for (size_t c = 0; c < chunks; c++) {
            float a = INFINITY, b = -INFINITY;
            finite_span(x + c * CHUNK, n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK, &a, &b);
            mn = a < mn ? a : mn;
            mx = b > mx ? b : mx;
        }
    );
    if (mn == 0.0f) mn = 0.0f;
    if (mx == 0.0f) mx = 0.0f;
    if (mn > mx) {  // nothing finite
        *lo = *bar_lo = 0.0f, *hi = *bar_hi = 1.0f;
        return;
    }
    if (m == CMAP_DIVERGING) {
        float a = fmaxf(fabsf(mn), fabsf(mx));
        *lo = a > 0.0f ? -a : 0.0f, *hi = a;  // all zeros: 0 to 0, not -0 (a bar would read "-0.0000")
        *bar_lo = mn < 0.0f ? *lo : 0.0f, *bar_hi = mx > 0.0f ? *hi : 0.0f;
    } else {
        *lo = *bar_lo = mn, *hi = *bar_hi = mx;
    }
}
