// softmax.c: the row softmax that runs, vectorised, the exponential it uses, and x sigmoid(a)
// on that exponential (gelu_tanh's and silu's).
//
// kernels.c's softmax_reference is the loop this computes (the lesson panel shows that one):
// the same three passes over a row (its maximum, e^(x - max) and their sum, then each divided
// by the sum), with two differences that change the last bits, not the meaning. e^x is the
// polynomial below, W lanes at a time, instead of libm's expf (within 2 ulp of e^x; test_kernels
// holds it there); and the row's sum is W partial sums, one per lane, added in lane order at
// the end. A row's result depends only on that row, so a row computed alone (the cached
// decoder's new row) has the bits it has among others.
#include <math.h>
#include <stdint.h>

#include "kernels.h"
#include "par.h"
#include "simd.h"
#if SIMD_X86
#include "simd_avx2.h"
#endif

// e^x, W lanes: x = n ln2 + r with n an integer and |r| <= ln2 / 2, e^r by its Taylor series to
// r^7 (the first term left out, r^8 / 8!, is under 1e-8 of e^r there), and 2^n built in the
// exponent bits, in two factors so that neither leaves the normal floats. ln2 is split in two
// (Cody and Waite): n * LN2_HI is exact, so r loses nothing to cancellation. Below -104 e^x
// is 0 in float, above 88.73 it is infinite, and NaN stays NaN. Every lane is the same
// sequence of operations whatever W is, so every width gives the same bits.
#define SELECT(VI, take, a, b) (((VI)(a) & (take)) | ((VI)(b) & ~(take)))
#define DEFINE_EXP(NAME, W, TARGET)                                                                    \
    TARGET static inline __attribute__((always_inline)) void NAME(float *y, const float *x, float shift) { \
        typedef float vf __attribute__((vector_size((W) * 4)));                                        \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                           \
        typedef int32_t vi __attribute__((vector_size((W) * 4)));                                      \
        const vf v = *(const vfu *)x - shift, zero = {0};                                              \
        const vi under = v < -104.0f, over = v > 88.73f;                                               \
        /* lanes below -104 (a mask's -inf) compute e^-87, a normal float, before they are set to   \
           0: an intermediate below the normal floats would cost the CPU a slow assist */              \
        vf xc = (vf)SELECT(vi, under, zero - 87.0f, v);                                                \
        xc = (vf)SELECT(vi, over, zero + 88.73f, xc);                                                  \
        const float round = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */             \
        const vf n = (xc * 1.44269504088896341f + round) - round;                                      \
        vf r = xc - n * 0.693359375f; /* LN2_HI: 9 significant bits */                                 \
        r = r - n * -2.12194440e-4f;  /* LN2_LO = ln 2 - LN2_HI */                                     \
        vf p = zero + (1.0f / 5040);                                                                   \
        p = p * r + (1.0f / 720);                                                                      \
        p = p * r + (1.0f / 120);                                                                      \
        p = p * r + (1.0f / 24);                                                                       \
        p = p * r + (1.0f / 6);                                                                        \
        p = p * r + 0.5f;                                                                              \
        p = p * r + 1.0f;                                                                              \
        p = p * r + 1.0f;                                                                              \
        const vi k = __builtin_convertvector(n, vi);                                                   \
        vi k1 = SELECT(vi, k < -126, (vi){0} - 126, k); /* 2^k = 2^k1 * 2^(k - k1), both normal */    \
        k1 = SELECT(vi, k1 > 127, (vi){0} + 127, k1);                                                  \
        vf e = p * (vf)((k1 + 127) << 23) * (vf)((k - k1 + 127) << 23);                                \
        e = (vf)SELECT(vi, under, zero, e);                                                            \
        e = (vf)SELECT(vi, over, zero + INFINITY, e);                                                  \
        *(vfu *)y = (vf)SELECT(vi, v != v, v, e);                                                      \
    }

// One row: out = e^(x - max) / sum, as the comment at the top says. EXP runs W lanes, the
// CPU's vector width (a comparison in a vector wider than the CPU's was compiled lane by lane,
// at 8 ns an element); the sum keeps LANES partial sums, LANES / W vectors of W, added in lane
// order at the end, so every width gives the same bits. Whole chunks of LANES first, then the
// tail through a chunk padded with -inf (whose e^ is 0), so every element takes the same path.
enum { LANES = 16 };
#define DEFINE_SOFTMAX_ROW(NAME, EXP, W, TARGET)                                                       \
    TARGET static void NAME(float *out, const float *x, int n) {                                       \
        typedef float vf __attribute__((vector_size((W) * 4)));                                        \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                           \
        typedef int32_t vi __attribute__((vector_size((W) * 4)));                                      \
        enum { Q = LANES / (W) };                                                                      \
        vf vmax = (vf){0} - INFINITY;                                                                  \
        int i = 0;                                                                                     \
        for (; i + (W) <= n; i += (W)) {                                                               \
            const vf v = *(const vfu *)(x + i);                                                        \
            vmax = (vf)SELECT(vi, v > vmax, v, vmax);                                                  \
        }                                                                                              \
        float m = -INFINITY;                                                                           \
        for (int l = 0; l < (W); l++) m = vmax[l] > m ? vmax[l] : m;                                   \
        for (int j = i; j < n; j++) m = x[j] > m ? x[j] : m;                                           \
        if (m == -INFINITY) { /* every key masked: attend to nothing */                                \
            for (int j = 0; j < n; j++) out[j] = 0.0f;                                                 \
            return;                                                                                    \
        }                                                                                              \
        vf sum[Q];                                                                                     \
        for (int q = 0; q < Q; q++) sum[q] = (vf){0};                                                  \
        for (i = 0; i + LANES <= n; i += LANES)                                                        \
            for (int q = 0; q < Q; q++) {                                                              \
                EXP(out + i + q * (W), x + i + q * (W), m);                                            \
                sum[q] += *(const vfu *)(out + i + q * (W));                                           \
            }                                                                                          \
        if (i < n) {                                                                                   \
            float pad[LANES], e[LANES];                                                                \
            for (int l = 0; l < LANES; l++) pad[l] = i + l < n ? x[i + l] : -INFINITY;                 \
            for (int q = 0; q < Q; q++) {                                                              \
                EXP(e + q * (W), pad + q * (W), m);                                                    \
                sum[q] += *(const vfu *)(e + q * (W));                                                 \
            }                                                                                          \
            for (int l = 0; i + l < n; l++) out[i + l] = e[l];                                         \
        }                                                                                              \
        float s = 0.0f;                                                                                \
        for (int q = 0; q < Q; q++)                                                                    \
            for (int l = 0; l < (W); l++) s += sum[q][l];                                              \
        const float inv = 1.0f / s;                                                                    \
        for (i = 0; i + (W) <= n; i += (W)) *(vfu *)(out + i) = *(const vfu *)(out + i) * inv;         \
        for (; i < n; i++) out[i] *= inv;                                                              \
    }                                                                                                  \
    TARGET static void NAME##_exp(float *out, const float *x, size_t n) {                              \
        size_t i = 0;                                                                                  \
        for (; i + (W) <= n; i += (W)) EXP(out + i, x + i, 0.0f);                                      \
        if (i < n) {                                                                                   \
            float pad[W], e[W];                                                                        \
            for (size_t l = 0; l < (W); l++) pad[l] = i + l < n ? x[i + l] : 0.0f;                     \
            EXP(e, pad, 0.0f);                                                                         \
            for (size_t l = 0; i + l < n; l++) out[i + l] = e[l];                                      \
        }                                                                                              \
    }

// W rows at once (W the vector width), each the very operations of NAME alone, so each row has
// the bits it has alone: what a row alone does lane by lane at its end (its largest, the sum of
// its partial sums in lane order, 1 / sum) is here done for the W rows side by side, a row a
// lane, after a transpose in registers (TRANSPOSE: r[j] gets element j of each r[i], in lane
// i). Those scalar steps were most of a short row's time: a row of 16 (an attention head's in
// training) took 29 ns alone, about a hundred cycles, most of them lane extractions.
#define DEFINE_SOFTMAX_GROUP(NAME, EXP, W, TRANSPOSE, TARGET)                                         \
    TARGET static void NAME##_group(float *out, const float *x, int n) {                               \
        typedef float vf __attribute__((vector_size((W) * 4)));                                        \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                           \
        typedef int32_t vi __attribute__((vector_size((W) * 4)));                                      \
        enum { Q = LANES / (W) };                                                                      \
        vf t[W], sum[Q][W];                                                                            \
        float m[W], inv[W];                                                                            \
        for (int r = 0; r < (W); r++) { /* each row's largest, its tail padded with -inf */            \
            const float *xr = x + (size_t)r * n;                                                       \
            vf vmax = (vf){0} - INFINITY;                                                              \
            int i = 0;                                                                                 \
            for (; i + (W) <= n; i += (W)) {                                                           \
                const vf v = *(const vfu *)(xr + i);                                                   \
                vmax = (vf)SELECT(vi, v > vmax, v, vmax);                                              \
            }                                                                                          \
            for (int l = 0; i + l < n; l++) vmax[l] = xr[i + l] > vmax[l] ? xr[i + l] : vmax[l];       \
            t[r] = vmax;                                                                               \
        }                                                                                              \
        TRANSPOSE(t);                                                                                  \
        vf mv = t[0];                                                                                  \
        for (int l = 1; l < (W); l++) mv = (vf)SELECT(vi, t[l] > mv, t[l], mv);                        \
        *(vfu *)m = mv;                                                                                \
        for (int r = 0; r < (W); r++) {                                                                \
            const float *xr = x + (size_t)r * n;                                                       \
            float *o = out + (size_t)r * n;                                                            \
            for (int q = 0; q < Q; q++) sum[q][r] = (vf){0};                                           \
            if (m[r] == -INFINITY) continue; /* every key masked: zeros, below */                     \
            int i = 0;                                                                                 \
            for (; i + LANES <= n; i += LANES)                                                         \
                for (int q = 0; q < Q; q++) {                                                          \
                    EXP(o + i + q * (W), xr + i + q * (W), m[r]);                                      \
                    sum[q][r] += *(const vfu *)(o + i + q * (W));                                      \
                }                                                                                      \
            if (i < n) {                                                                               \
                float pad[LANES], e[LANES];                                                            \
                for (int l = 0; l < LANES; l++) pad[l] = i + l < n ? xr[i + l] : -INFINITY;            \
                for (int q = 0; q < Q; q++) {                                                          \
                    EXP(e + q * (W), pad + q * (W), m[r]);                                             \
                    sum[q][r] += *(const vfu *)(e + q * (W));                                          \
                }                                                                                      \
                for (int l = 0; i + l < n; l++) o[i + l] = e[l];                                       \
            }                                                                                          \
        }                                                                                              \
        vf s = (vf){0};                                                                                \
        for (int q = 0; q < Q; q++) {                                                                  \
            TRANSPOSE(sum[q]);                                                                         \
            for (int l = 0; l < (W); l++) s += sum[q][l];                                              \
        }                                                                                              \
        *(vfu *)inv = 1.0f / s;                                                                        \
        for (int r = 0; r < (W); r++) {                                                                \
            float *o = out + (size_t)r * n;                                                            \
            int i = 0;                                                                                 \
            if (m[r] == -INFINITY) {                                                                   \
                for (int j = 0; j < n; j++) o[j] = 0.0f;                                               \
                continue;                                                                              \
            }                                                                                          \
            for (; i + (W) <= n; i += (W)) *(vfu *)(o + i) = *(const vfu *)(o + i) * inv[r];           \
            for (; i < n; i++) o[i] *= inv[r];                                                         \
        }                                                                                              \
    }

// out = x sigmoid(a) (gelu_tanh and silu, kernels_llm.c), W lanes: e = e^-|a| by EXP (never past
// the floats), then x (1 or e) / (1 + e): x / (1 + e) where a >= 0, x e / (1 + e) where not (x 1
// is x). Every lane is the same operations whatever W is; the tail goes through padded lanes.
#define DEFINE_SIGMOID_TIMES(NAME, EXP, W, TARGET)                                                     \
    TARGET static inline __attribute__((always_inline)) void NAME##_lanes(float *out, const float *x, \
                                                                        const float *a) {            \
        typedef float vf __attribute__((vector_size((W) * 4)));                                        \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                           \
        typedef int32_t vi __attribute__((vector_size((W) * 4)));                                      \
        const vf v = *(const vfu *)x, av = *(const vfu *)a, one = (vf){0} + 1.0f;                      \
        float z[W], e[W];                                                                              \
        *(vfu *)z = (vf)((vi)av | ((vi){0} + INT32_MIN)); /* -|a| */                                     \
        EXP(e, z, 0.0f);                                                                               \
        const vf ev = *(const vfu *)e;                                                                 \
        *(vfu *)out = v * (vf)SELECT(vi, av >= 0, one, ev) / (one + ev);                               \
    }                                                                                                  \
    TARGET static void NAME(float *out, const float *x, const float *a, size_t n) {                    \
        size_t i = 0;                                                                                  \
        for (; i + (W) <= n; i += (W)) NAME##_lanes(out + i, x + i, a + i);                            \
        if (i < n) {                                                                                   \
            float xp[W], ap[W], o[W];                                                                  \
            for (size_t l = 0; l < (W); l++) xp[l] = i + l < n ? x[i + l] : 0.0f, ap[l] = i + l < n ? a[i + l] : 0.0f; \
            NAME##_lanes(o, xp, ap);                                                                   \
            for (size_t l = 0; i + l < n; l++) out[i + l] = o[l];                                      \
        }                                                                                              \
    }

#if SIMD_X86
// Sixteen registers of sixteen floats transposed in place (transpose8's unpacks and shuffles
// within 128-bit lanes, then two rounds of moving whole 128-bit lanes). Only moves.
__attribute__((target("avx512f"), always_inline)) static inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    for (int i = 0; i < 16; i += 4) {  // r[i + j]: column 4L + j of rows i .. i+3, in 128-bit lane L
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44), r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44), r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int j = 0; j < 4; j++) {  // lanes 0 and 2, then 1 and 3, of the row groups' column j
        const __m512 a0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88), a1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
        const __m512 b0 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        const __m512 b1 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
        t[j] = _mm512_shuffle_f32x4(a0, b0, 0x88), t[8 + j] = _mm512_shuffle_f32x4(a0, b0, 0xDD);
        t[4 + j] = _mm512_shuffle_f32x4(a1, b1, 0x88), t[12 + j] = _mm512_shuffle_f32x4(a1, b1, 0xDD);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}
#define TRANSPOSE16(v) transpose16((__m512 *)(v))
#define TRANSPOSE8(v) transpose8((__m256 *)(v))
#endif

// Sixteen partial sums for every CPU (AVX-512 holds them in one vector, AVX2 in two, SSE2 and
// WebAssembly in four), so a row's sum is the same on each, and AVX2 and AVX-512 give the same
// bits (SSE2 has no fused multiply-add: its bits differ, as its GEMM's do). Training's figures
// stay the same on either kind of machine.
#if SIMD_X86
DEFINE_EXP(exp_avx512, 16, __attribute__((target("avx512f,fma"))))
DEFINE_EXP(exp_avx2, 8, __attribute__((target("avx2,fma"))))
DEFINE_SOFTMAX_ROW(softmax_avx512, exp_avx512, 16, __attribute__((target("avx512f,fma"))))
DEFINE_SOFTMAX_ROW(softmax_avx2, exp_avx2, 8, __attribute__((target("avx2,fma"))))
DEFINE_SOFTMAX_GROUP(softmax_avx512, exp_avx512, 16, TRANSPOSE16, __attribute__((target("avx512f,fma"))))
DEFINE_SOFTMAX_GROUP(softmax_avx2, exp_avx2, 8, TRANSPOSE8, __attribute__((target("avx2,fma"))))
#endif
DEFINE_EXP(exp_base, 4, )
DEFINE_SOFTMAX_ROW(softmax_base, exp_base, 4, )
DEFINE_SIGMOID_TIMES(sigmoid_base, exp_base, 4, )
#if SIMD_X86
DEFINE_SIGMOID_TIMES(sigmoid_avx512, exp_avx512, 16, __attribute__((target("avx512f,fma"))))
DEFINE_SIGMOID_TIMES(sigmoid_avx2, exp_avx2, 8, __attribute__((target("avx2,fma"))))
#endif

typedef struct {
    void (*row)(float *out, const float *x, int n);
    void (*exp)(float *out, const float *x, size_t n);
    void (*group)(float *out, const float *x, int n);  // `rows` rows at once, or NULL
    int rows;
    void (*sigmoid_times)(float *out, const float *x, const float *a, size_t n);
} SoftmaxImpl;

static const SoftmaxImpl impls[] = {
    [SIMD_BASE] = {softmax_base, softmax_base_exp, NULL, 1, sigmoid_base},
#if SIMD_X86
    [SIMD_AVX2] = {softmax_avx2, softmax_avx2_exp, softmax_avx2_group, 8, sigmoid_avx2},
    [SIMD_AVX512] = {softmax_avx512, softmax_avx512_exp, softmax_avx512_group, 16, sigmoid_avx512},
#endif
};

void exp_forward(float *out, const float *x, size_t n) { impls[simd_level()].exp(out, x, n); }

void sigmoid_times_forward(float *out, const float *x, const float *a, size_t n) {
    impls[simd_level()].sigmoid_times(out, x, a, n);
}

void softmax_forward_at(SimdLevel level, float *out, const float *x, int rows, int n) {
    const SoftmaxImpl impl = impls[level];
    const int G = impl.group ? impl.rows : 1, groups = rows / G;  // whole groups, then row by row
    PAR_LOOP(PAR_ROWS((size_t)rows * n), "omp parallel for",
        for (int q = 0; q < groups; q++) {
            const size_t at = (size_t)q * G * n;
            if (impl.group) impl.group(out + at, x + at, n);
            else impl.row(out + at, x + at, n);
        }
    );
    for (int r = groups * G; r < rows; r++) impl.row(out + (size_t)r * n, x + (size_t)r * n, n);
}

void softmax_forward(float *out, const float *x, int rows, int n) { softmax_forward_at(simd_level(), out, x, rows, n); }
