// layernorm8.c: see layernorm8.h. Built for AVX2 without FMA, so no multiply and add can be
// fused into one rounding, as the scalar loops (compiled with contraction off) never are.
#include "layernorm8.h"

#include <stddef.h>

#include "simd.h"

#if !SIMD_X86
// Off x86 (WebAssembly) the scalar loops compute these sums: ln8_ok is false and nothing else
// here is called.
bool ln8_ok(int C) { return (void)C, false; }
void ln8_moments(float mean[8], float ss[8], const float *x, int C) { (void)mean, (void)ss, (void)x, (void)C; }
void ln8_dot(float sum[8], const float *dy, const float *x, const float *g, const float mean[8], int C) {
    (void)sum, (void)dy, (void)x, (void)g, (void)mean, (void)C;
}
void ln8_mean_dd(float mean_dd[8], const float *dy, const float *x, const float *g, const float mean[8],
                 const float inv[8], const float k[8], int C) {
    (void)mean_dd, (void)dy, (void)x, (void)g, (void)mean, (void)inv, (void)k, (void)C;
}
#else
#include "simd_avx2.h"

#define AVX2 __attribute__((target("avx2")))

bool ln8_ok(int C) { return C > 0 && C % 8 == 0 && simd_level() >= SIMD_AVX2; }

AVX2 void ln8_moments(float mean[8], float ss[8], const float *x, int C) {
    __m256 m = _mm256_setzero_ps(), s = _mm256_setzero_ps(), col[8];
    for (int c0 = 0; c0 < C; c0 += 8) {
        load_columns8(col, x, (size_t)C, c0);
        for (int j = 0; j < 8; j++) m = _mm256_add_ps(m, col[j]);
    }
    m = _mm256_div_ps(m, _mm256_set1_ps((float)C));
    for (int c0 = 0; c0 < C; c0 += 8) {
        load_columns8(col, x, (size_t)C, c0);
        for (int j = 0; j < 8; j++) {
            const __m256 d = _mm256_sub_ps(col[j], m);
            s = _mm256_add_ps(s, _mm256_mul_ps(d, d));
        }
    }
    _mm256_storeu_ps(mean, m), _mm256_storeu_ps(ss, s);
}

AVX2 void ln8_dot(float sum[8], const float *dy, const float *x, const float *g, const float mean[8], int C) {
    const __m256 m = _mm256_loadu_ps(mean);
    __m256 s = _mm256_setzero_ps(), cy[8], cx[8];
    for (int c0 = 0; c0 < C; c0 += 8) {
        load_columns8(cy, dy, (size_t)C, c0), load_columns8(cx, x, (size_t)C, c0);
        for (int j = 0; j < 8; j++) {
            const __m256 dyg = _mm256_mul_ps(cy[j], _mm256_set1_ps(g[c0 + j]));
            s = _mm256_add_ps(s, _mm256_mul_ps(dyg, _mm256_sub_ps(cx[j], m)));
        }
    }
    _mm256_storeu_ps(sum, s);
}

AVX2 void ln8_mean_dd(float mean_dd[8], const float *dy, const float *x, const float *g, const float mean[8],
                      const float inv[8], const float k[8], int C) {
    const __m256 m = _mm256_loadu_ps(mean), iv = _mm256_loadu_ps(inv), kv = _mm256_loadu_ps(k);
    __m256 s = _mm256_setzero_ps(), cy[8], cx[8];
    for (int c0 = 0; c0 < C; c0 += 8) {
        load_columns8(cy, dy, (size_t)C, c0), load_columns8(cx, x, (size_t)C, c0);
        for (int j = 0; j < 8; j++) {
            const __m256 dyg = _mm256_mul_ps(cy[j], _mm256_set1_ps(g[c0 + j]));
            const __m256 kd = _mm256_mul_ps(kv, _mm256_sub_ps(cx[j], m));
            s = _mm256_add_ps(s, _mm256_mul_ps(iv, _mm256_sub_ps(dyg, kd)));
        }
    }
    _mm256_storeu_ps(mean_dd, s);
}
#endif
