// simd.h: which vector instructions this CPU has, asked once. The hand-vectorised kernels
// (gemm.c, gemm_small.c, softmax.c) each build one version per level and pick theirs from this.
#ifndef STEPFORMER_SIMD_H
#define STEPFORMER_SIMD_H

#include <stdbool.h>

// x86 builds carry the AVX2 and AVX-512 kernels beside the base ones; other targets (WebAssembly
// in the browser) build the base kernels only, from the same portable vector code.
#if defined(__x86_64__) || defined(__i386__)
#define SIMD_X86 1
#else
#define SIMD_X86 0
#endif

typedef enum {
    SIMD_BASE,    // 4 floats: SSE2, which every x86-64 has (no fused multiply-add), or WebAssembly's
                  // SIMD128, whose GEMM fuses where the browser and CPU do (VMADD below)
    SIMD_AVX2,    // AVX2 and FMA: 8 floats
    SIMD_AVX512,  // AVX-512F (with FMA): 16 floats
} SimdLevel;

// VMADD(acc, x, y): acc += x * y, for the GEMM's vectors (gemm.c, gemm_small.c). On x86 the
// compiler fuses it into one rounding where the kernel's target has FMA (-ffp-contract=fast).
// In the browser build (-mrelaxed-simd) it is WebAssembly's relaxed multiply-add, one
// instruction that the browser runs fused where the CPU has FMA and as a multiply then an add
// where not, the same way for every call in one run. Debian 12's clang writes it under the
// prototype's opcode, as __builtin_wasm_fma_f32x4(x, y, acc); src/web/wasm_madd.js rewrites the
// linked page to the standard one, and, in browsers without relaxed SIMD, each into a multiply
// then an add. VMADD_SCALAR is the same on one float, so a path of plain loops adds its terms
// exactly as the vector kernels do.
#if defined(__wasm_relaxed_simd__)
#define SIMD_WASM_MADD 1
typedef float simd_f4 __attribute__((vector_size(16)));
#define VMADD(acc, x, y) ((acc) = __builtin_wasm_fma_f32x4((x), (y), (acc)))
static inline float simd_madd1(float acc, float x, float y) {
    return __builtin_wasm_fma_f32x4((simd_f4){x}, (simd_f4){y}, (simd_f4){acc})[0];
}
#define VMADD_SCALAR(acc, x, y) ((acc) = simd_madd1((acc), (x), (y)))
#else
#define SIMD_WASM_MADD 0
#define VMADD(acc, x, y) ((acc) += (x) * (y))
#define VMADD_SCALAR(acc, x, y) ((acc) += (x) * (y))
#endif

// Whether the GEMM's multiply-adds round once (fused) in this run: at SIMD_BASE, false on x86;
// in the browser, what the browser and CPU did with VMADD.
bool simd_gemm_fused(void);

// The level the kernels use (always SIMD_BASE off x86): the CPU's best, or a lower one named by STEPFORMER_SIMD (base,
// avx2 or avx512; a level the CPU lacks is not taken), so the slower paths can be run and
// measured on a fast machine.
SimdLevel simd_level(void);

// Whether the CPU converts half precision to float32 in vectors (F16C; false off x86).
bool simd_has_f16c(void);

// softmax_forward (kernels.h) as built for `level`, which the CPU must have: the tests hold
// the levels with fused multiply-adds to the same bits.
void softmax_forward_at(SimdLevel level, float *out, const float *x, int rows, int n);

#endif
