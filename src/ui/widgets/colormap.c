// colormap.c: piecewise-linear colour maps through published anchor colours.
#include "colormap.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "par.h"
#include "simd.h"

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

// lroundf(x) for 0 <= x < 256: x + 0.5 is exact in double, so its floor is x rounded half up,
// as lroundf rounds a positive x. No branch: a heat map colours millions of pixels, and a
// branch on each channel of a noisy map is mispredicted half the time.
static inline uint8_t round_channel(float x) { return (uint8_t)(int)((double)x + 0.5); }

// The colour at t in [0, 1] (NaN at 0) between n stops; no branch, so the same cost for any t.
static Rgba lerp(const Rgba *stops, int n, float t) {
    t = t > 0.0f ? t : 0.0f;  // NaN goes to the start
    t = t < 1.0f ? t : 1.0f;
    const float x = t * (float)(n - 1);
    int i = (int)x;
    i = i < n - 2 ? i : n - 2;  // t = 1: the last segment at f = 1, its end exactly
    const float f = x - (float)i;
    const Rgba a = stops[i], b = stops[i + 1];
    return (Rgba){round_channel(a.r + f * (b.r - a.r)), round_channel(a.g + f * (b.g - a.g)),
                  round_channel(a.b + f * (b.b - a.b)), 255};
}

#if defined(__x86_64__)
#include <immintrin.h>

// The stops as floats, a channel an array, for the vector path's gathers.
typedef struct {
    float r[11], g[11], b[11];
    int n;
} StopTable;

static StopTable stop_table(const Rgba *stops, int n) {
    StopTable s = {.n = n};
    for (int i = 0; i < n; i++) s.r[i] = stops[i].r, s.g[i] = stops[i].g, s.b[i] = stops[i].b;
    return s;
}

// Four channels rounded as round_channel does: widened to double, plus 0.5, truncated.
__attribute__((target("avx2"))) static __m256i round_channels(__m256 c) {
    const __m256d half = _mm256_set1_pd(0.5);
    const __m128i lo = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(c)), half));
    const __m128i hi = _mm256_cvttpd_epi32(_mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(c, 1)), half));
    return _mm256_set_m128i(hi, lo);
}

// cmap_value for eight values at a time: the same operations in the same order (a multiply, a
// divide, an add; no fused multiply-add), so the same bits; the stops gathered by index.
__attribute__((target("avx2"))) static int colours_avx2(Rgba *out, const float *v, int n, Colormap m, float lo,
                                                        float hi) {
    const StopTable s = m == CMAP_DIVERGING ? stop_table(diverging, 11) : stop_table(sequential, 9);
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
    const __m256 last = _mm256_set1_ps((float)(s.n - 1)), ninf = _mm256_set1_ps(-INFINITY);
    const __m256i top = _mm256_set1_epi32(s.n - 2), alpha = _mm256_set1_epi32((int)0xff000000u);
    uint32_t grey;
    memcpy(&grey, &cmap_masked, sizeof grey);
    const __m256i masked = _mm256_set1_epi32((int)grey);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(v + i);
        __m256 t;
        if (m == CMAP_DIVERGING)
            t = hi > 0 ? _mm256_add_ps(half, _mm256_div_ps(_mm256_mul_ps(half, x), _mm256_set1_ps(hi))) : half;
        else
            t = hi > lo ? _mm256_div_ps(_mm256_sub_ps(x, _mm256_set1_ps(lo)), _mm256_set1_ps(hi - lo)) : zero;
        t = _mm256_min_ps(_mm256_max_ps(t, zero), one);  // max_ps(NaN, 0) is 0: NaN goes to the start
        const __m256 at = _mm256_mul_ps(t, last);
        const __m256i k = _mm256_min_epi32(_mm256_cvttps_epi32(at), top);
        const __m256 f = _mm256_sub_ps(at, _mm256_cvtepi32_ps(k));
        __m256i px = alpha;
        const float *ch[3] = {s.r, s.g, s.b};
        for (int c = 0; c < 3; c++) {
            const __m256 a = _mm256_i32gather_ps(ch[c], k, 4), b = _mm256_i32gather_ps(ch[c] + 1, k, 4);
            const __m256 mixed = _mm256_add_ps(a, _mm256_mul_ps(f, _mm256_sub_ps(b, a)));
            px = _mm256_or_si256(px, _mm256_slli_epi32(round_channels(mixed), 8 * c));
        }
        px = _mm256_blendv_epi8(px, masked, _mm256_castps_si256(_mm256_cmp_ps(x, ninf, _CMP_EQ_OQ)));
        _mm256_storeu_si256((__m256i *)(out + i), px);
    }
    return i;
}
#endif

void cmap_values(Rgba *out, const float *v, int n, Colormap m, float lo, float hi) {
    int i = 0;
#if defined(__x86_64__)
    if (simd_level() >= SIMD_AVX2) i = colours_avx2(out, v, n, m, lo, hi);
#endif
    for (; i < n; i++) out[i] = cmap_value(m, v[i], lo, hi);
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
// none is finite), and whether any is -inf (or'd into *neg_inf): W at a time in vectors (four in
// SSE2's and WebAssembly's width, eight in AVX2's), a value that is not finite (NaN, an
// infinity) never taken. Branch-free selects, so the compiler keeps it in vectors; the least and
// the most are the same in any order and width.
#define DEFINE_FINITE_SPAN(NAME, W, ATTR)                                                               \
    ATTR static void NAME(const float *x, size_t n, float *mn, float *mx, int *neg_inf) {               \
        typedef float vf __attribute__((vector_size(4 * W)));                                           \
        typedef float vfu __attribute__((vector_size(4 * W), aligned(4)));                              \
        typedef int vi __attribute__((vector_size(4 * W)));                                             \
        vf inf, lo, hi;                                                                                 \
        vi ninf;                                                                                        \
        for (int k = 0; k < W; k++) inf[k] = INFINITY, ninf[k] = 0;                                     \
        lo = inf, hi = -inf;                                                                            \
        size_t i = 0;                                                                                   \
        for (; i + W <= n; i += W) {                                                                    \
            const vf v = *(const vfu *)(x + i);                                                         \
            const vi fin = (v < inf) & (v > -inf); /* all ones where finite (NaN compares false) */     \
            const vi take_lo = fin & (v < lo), take_hi = fin & (v > hi);                                \
            lo = (vf)((take_lo & (vi)v) | (~take_lo & (vi)lo));                                         \
            hi = (vf)((take_hi & (vi)v) | (~take_hi & (vi)hi));                                         \
            ninf |= v == -inf;                                                                          \
        }                                                                                               \
        float a = *mn, b = *mx;                                                                         \
        int found = 0;                                                                                  \
        for (int k = 0; k < W; k++) a = lo[k] < a ? lo[k] : a, b = hi[k] > b ? hi[k] : b, found |= ninf[k]; \
        for (; i < n; i++) {                                                                            \
            if (isfinite(x[i])) a = x[i] < a ? x[i] : a, b = x[i] > b ? x[i] : b;                       \
            found |= x[i] == -INFINITY;                                                                 \
        }                                                                                               \
        *mn = a, *mx = b, *neg_inf |= found != 0;                                                       \
    }
DEFINE_FINITE_SPAN(finite_span4, 4, )
#if defined(__x86_64__)
DEFINE_FINITE_SPAN(finite_span8, 8, __attribute__((target("avx2"))))  // one core reads a map twice as fast
#endif

static void finite_span(const float *x, size_t n, float *mn, float *mx, int *neg_inf) {
#if defined(__x86_64__)
    if (simd_level() >= SIMD_AVX2) {
        finite_span8(x, n, mn, mx, neg_inf);
        return;
    }
#endif
    finite_span4(x, n, mn, mx, neg_inf);
}

bool cmap_any_neg_inf(const float *x, size_t n) {
    float lo, hi, bar_lo, bar_hi;
    bool neg_inf = false;
    if (x) cmap_range_scan(CMAP_DIVERGING, x, n, &lo, &hi, &bar_lo, &bar_hi, &neg_inf);  // the same pass, its range unused
    return neg_inf;
}

void cmap_range(Colormap m, const float *x, size_t n, float *lo, float *hi, float *bar_lo, float *bar_hi) {
    bool neg_inf;
    cmap_range_scan(m, x, n, lo, hi, bar_lo, bar_hi, &neg_inf);
}

void cmap_range_scan(Colormap m, const float *x, size_t n, float *lo, float *hi, float *bar_lo, float *bar_hi,
                     bool *neg_inf) {
    enum { CHUNK = 1 << 16 };
    const size_t chunks = (n + CHUNK - 1) / CHUNK;
    float mn = INFINITY, mx = -INFINITY;
    int found = 0;
    // Over the cores once it is long (12 heads of 1024 x 1024 are 12 million values): the least
    // and the most are the same in any order, but for the sign of a zero, which is made +0.
    PAR_LOOP(PAR_N(n), "omp parallel for reduction(min : mn) reduction(max : mx) reduction(| : found)",
        for (size_t c = 0; c < chunks; c++) {
            float a = INFINITY, b = -INFINITY;
            finite_span(x + c * CHUNK, n - c * CHUNK < CHUNK ? n - c * CHUNK : CHUNK, &a, &b, &found);
            mn = a < mn ? a : mn;
            mx = b > mx ? b : mx;
        }
    );
    *neg_inf = found != 0;
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
