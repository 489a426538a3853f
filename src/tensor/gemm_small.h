// gemm_small.h: what gemm.c and gemm_small.c share (internal to src/tensor; callers use
// kernels.h): the product as gemm.c describes it, and the path for products too small to pack.
#ifndef STEPFORMER_GEMM_SMALL_H
#define STEPFORMER_GEMM_SMALL_H

#include <stdbool.h>
#include <stddef.h>

#include "half.h"
#include "simd.h"

// C[M, N] (+)= op(A)[M, K] · op(B)[K, N] (+ bias[N] on every row); see gemm.c.
typedef struct Gemm {
    float *c;             // [M, ldc]
    int ldc;
    const float *a;       // A [M, lda], or when at, A [K, lda] whose transpose is op(A)
    const float *b;       // B [K, ldb], or when bt, B [N, ldb] whose transpose is op(B)
    const float *bias;    // [N] or NULL
    int lda, ldb, M, N, K;
    bool at, bt;          // op(A) = Aᵀ, op(B) = Bᵀ
    bool accumulate;      // C += the product, instead of C = it
    const float *packed;  // op(B) packed whole by sgemm_pack, or NULL: packed tile by tile
    const uint16_t *bh;   // B held 2 bytes a number (b then NULL, laid out as b would be), or NULL:
    HalfKind bh_kind;     // widened as each tile is packed, so C is the same bits as with B widened
} Gemm;

// Products of at most SMALL_PLAIN multiply-adds (M N K) go to the small path: in registers
// when a row fits, else plain loops. Up to SMALL_REGS, those whose rows are two vectors or
// more and fit too (AVX-512: one head's products at 32 tokens, 32 x 32 x 64 and 32 x 64 x 32).
enum { SMALL_REGS = 65536, SMALL_PLAIN = 32768 };

// The small path, one per vector level (each called only where simd_level() has it): false
// when the product should go to the blocked kernel instead. Every element of C is the same chain
// of multiply-adds as the blocked kernel's, so the path never changes a bit.
#if SIMD_X86
bool gemm_small_avx512(const Gemm *g);
bool gemm_small_avx2(const Gemm *g);
#endif
bool gemm_small_base(const Gemm *g);

// d[k * ldd + j] = s[j * lds + k] for j < n, k < kc (gemm.c).
void gemm_transpose_into(float *d, size_t ldd, const float *s, size_t lds, int n, int kc);

#endif
