// simd.c: see simd.h.
#include "simd.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static SimdLevel level;  // written once, by probe, before any caller reads it

static void probe(void) {
#if SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) level = SIMD_AVX512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) level = SIMD_AVX2;
    else level = SIMD_BASE;
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
