// simd.h: which vector instructions this CPU has, asked once. The hand-vectorised kernels
// (gemm.c, gemm_small.c, softmax.c) each build one version per level and pick theirs from this.
#ifndef STEPFORMER_SIMD_H
#define STEPFORMER_SIMD_H

// x86 builds carry the AVX2 and AVX-512 kernels beside the base ones; other targets (WebAssembly
// in the browser) build the base kernels only, from the same portable vector code.
#if defined(__x86_64__) || defined(__i386__)
#define SIMD_X86 1
#else
#define SIMD_X86 0
#endif

typedef enum {
    SIMD_BASE,    // 4 floats, no fused multiply-add: SSE2, which every x86-64 has, or WebAssembly's
                  // SIMD128 (the two give the same bits: the same operations in the same order)
    SIMD_AVX2,    // AVX2 and FMA: 8 floats
    SIMD_AVX512,  // AVX-512F (with FMA): 16 floats
} SimdLevel;

// The level the kernels use (always SIMD_BASE off x86): the CPU's best, or a lower one named by STEPFORMER_SIMD (base,
// avx2 or avx512; a level the CPU lacks is not taken), so the slower paths can be run and
// measured on a fast machine.
SimdLevel simd_level(void);

// softmax_forward (kernels.h) as built for `level`, which the CPU must have: the tests hold
// the levels with fused multiply-adds to the same bits.
void softmax_forward_at(SimdLevel level, float *out, const float *x, int rows, int n);

#endif
