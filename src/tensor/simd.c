// simd.c: see simd.h.
#include "simd.h"

#include <pthread.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static SimdLevel level;  // written once, by probe, before any caller reads it
static bool f16c;

static void probe(void) {
#if SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) level = SIMD_AVX512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) level = SIMD_AVX2;
    else level = SIMD_BASE;
    unsigned a, b, c, d;  // CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports has no "f16c")
    f16c = __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
    static const char *const names[] = {[SIMD_BASE] = "base", [SIMD_AVX2] = "avx2", [SIMD_AVX512] = "avx512"};
    const char *want = getenv("STEPFORMER_SIMD");
    for (int k = 0; want && k < (int)level; k++)
        if (!strcmp(want, names[k])) level = (SimdLevel)k;
#else
    level = SIMD_BASE;
#endif
}

SimdLevel simd_level(void) {
    pthread_once(&once, probe);  // training's two shards may ask together
    return level;
}

bool simd_has_f16c(void) {
    pthread_once(&once, probe);
    return f16c;
}

bool simd_gemm_fused(void) {
#if SIMD_WASM_MADD
    // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: fused, the last term survives the subtraction; rounded
    // after the multiply, it is lost. volatile: the compiler must not fold it either way.
    volatile float x = 1.0f + 0x1p-12f, minus = -(1.0f + 0x1p-11f);
    simd_f4 acc = {minus}, v = {x};
    VMADD(acc, v, v);
    return acc[0] != 0.0f;
#else
    return simd_level() != SIMD_BASE;  // AVX2 and AVX-512 carry FMA; SSE2 has none
#endif
}
