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

#if SIMD_X86
// Half precision through F16C, eight at a time (every AVX2 processor has it): the same bits as
// f16_to_f32, which quiets a NaN as the instruction does.
__attribute__((target("avx2,f16c"))) static void f16_widen_f16c(float *out, const uint16_t *h, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    for (; i < n; i++) out[i] = f16_to_f32(h[i]);
}
#endif

void half_widen(float *out, const uint16_t *h, size_t n, HalfKind kind) {
    if (kind == HALF_BF16) {
        for (size_t i = 0; i < n; i++) {
            const uint32_t bits = (uint32_t)h[i] << 16;
            memcpy(out + i, &bits, sizeof bits);
        }
        return;
    }
#if SIMD_X86
    if (simd_level() >= SIMD_AVX2 && simd_has_f16c()) {
        f16_widen_f16c(out, h, n);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++) out[i] = f16_to_f32(h[i]);
}
