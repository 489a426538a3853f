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

void cmap_range(Colormap m, const float *x, size_t n, float *lo, float *hi, float *bar_lo, float *bar_hi) {
    float mn = INFINITY, mx = -INFINITY;
    // Over the cores once it is long (12 heads of 1024 x 1024 are 12 million values): the least
    // and the most are the same in any order.
    PAR_LOOP(PAR_N(n), "omp parallel for reduction(min : mn) reduction(max : mx)",
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(x[i])) continue;
            mn = x[i] < mn ? x[i] : mn;
            mx = x[i] > mx ? x[i] : mx;
        }
    );
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
