// half.c: numbers stored 2 bytes each (IEEE half precision, bfloat16) widened to float32. Every
// such value is a float32, so widening is exact; the vector paths give the scalar's bits.
#include <string.h>

#include "half.h"
#include "simd.h"

#if SIMD_X86
#include <immintrin.h>
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "2-byte numbers are kept as the files store them, little-endian"
#endif

float f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, ex = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    uint32_t bits;
    if (ex == 0x1F) bits = sign | 0x7F800000u | (man << 13) | (man ? 0x400000u : 0);  // inf; nan, quieted as F16C does
    else if (ex) bits = sign | ((ex + 112u) << 23) | (man << 13);
    else if (!man) bits = sign;  // +-0
    else {                       // subnormal: normalise
        int k = 0;
        uint32_t m = man;
        while (!(m & 0x400u)) m <<= 1, k++;
        bits = sign | ((uint32_t)(113 - k) << 23) | ((m & 0x3FFu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float bf16_to_f32(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float half_to_f32(uint16_t h, HalfKind kind) { return kind == HALF_F16 ? f16_to_f32(h) : bf16_to_f32(h); }

static void widen_scalar(float *out, const uint16_t *h, size_t n, HalfKind kind) {
    for (size_t i = 0; i < n; i++) out[i] = half_to_f32(h[i], kind);
}

#if SIMD_X86
// Sixteen or eight at a time: bfloat16 moved into the top half of each float, half precision
// through the conversion instruction (F16C, which every AVX2 processor has; AVX-512F's own),
// the same bits as f16_to_f32, which quiets a NaN as the instruction does.
__attribute__((target("avx512f"))) static void widen_avx512(float *out, const uint16_t *h, size_t n, HalfKind kind) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i x = _mm256_loadu_si256((const __m256i *)(h + i));
        if (kind == HALF_BF16) _mm512_storeu_si512(out + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(x), 16));
        else _mm512_storeu_ps(out + i, _mm512_cvtph_ps(x));
    }
    widen_scalar(out + i, h + i, n - i, kind);
}

__attribute__((target("avx2,f16c"))) static void widen_avx2(float *out, const uint16_t *h, size_t n, HalfKind kind) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(h + i));
        if (kind == HALF_BF16) _mm256_storeu_si256((__m256i *)(out + i), _mm256_slli_epi32(_mm256_cvtepu16_epi32(x), 16));
        else _mm256_storeu_ps(out + i, _mm256_cvtph_ps(x));
    }
    widen_scalar(out + i, h + i, n - i, kind);
}
#endif

void half_widen(float *out, const uint16_t *h, size_t n, HalfKind kind) {
#if SIMD_X86
    const SimdLevel level = simd_level();
    if (level >= SIMD_AVX512) widen_avx512(out, h, n, kind);
    else if (level >= SIMD_AVX2 && simd_has_f16c()) widen_avx2(out, h, n, kind);
    else
#endif
        widen_scalar(out, h, n, kind);
}
