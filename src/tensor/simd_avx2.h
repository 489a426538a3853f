// simd_avx2.h: AVX2 helpers shared by the vectorised kernels, for functions built with
// __attribute__((target("avx2"))) and called only where simd_level() >= SIMD_AVX2.
#ifndef STEPFORMER_SIMD_AVX2_H
#define STEPFORMER_SIMD_AVX2_H

#include <immintrin.h>

// Eight registers of eight floats transposed in place: afterwards r[j] holds element j of
// each former r[i], in lane i (the unpack / shuffle / lane-swap transpose). Only moves: every
// float keeps its bits.
__attribute__((target("avx2"), always_inline)) static inline void transpose8(__m256 r[8]) {
    __m256 t[8];
    for (int i = 0; i < 8; i += 2) t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    for (int i = 0; i < 8; i += 4) {
        r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44), r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44), r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        const __m256 lo = r[i], hi = r[i + 4];
        r[i] = _mm256_permute2f128_ps(lo, hi, 0x20), r[i + 4] = _mm256_permute2f128_ps(lo, hi, 0x31);
    }
}

// Columns c0 .. c0+7 of eight rows of x (rows ld apart), a column a register, a row a lane.
__attribute__((target("avx2"), always_inline)) static inline void load_columns8(__m256 col[8], const float *x, size_t ld,
                                                                               int c0) {
    for (int i = 0; i < 8; i++) col[i] = _mm256_loadu_ps(x + (size_t)i * ld + c0);
    transpose8(col);
}

#endif
