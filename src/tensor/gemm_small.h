// gemm_small.h: what gemm.c, gemm_pack.c and gemm_small.c share (internal to src/tensor;
// callers use kernels.h): the product as gemm.c describes it, the packing of op(B), and the path
// for products too small to pack.
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

// K is cut into slices: KC for weights packed whole (sgemm_pack), 512 so the base model's
// d_model is one slice and C's tile is loaded and stored once (at 256 the base forward took
// 1-2% longer); KC_OWN for a tile packed as it runs, on the stack (128 KB), where 512 gained
// nothing. Either way each element of C is one chain of fused multiply-adds in k order, a later
// slice continuing from C as the earlier left it, so the slice depth never changes a bit.
enum { KC = 512, KC_OWN = 256 };

// Rows of B the one-row kernels fetch ahead of the row they read: a row of B is a new page
// each time, where the hardware's prefetch starts afresh. ROW_OWN_KC: the depth of a slice the
// row kernel packs itself, so the slice as read and as packed (2 x 16 KB) stay in the first
// cache; the chain in registers goes on from slice to slice, so depth changes no bit.
enum { ROW_AHEAD_ROWS = 4, ROW_OWN_KC = 128 };

// d[k * ldd + j] = s[j * lds + k] for j < n, k < kc (gemm_pack.c).
void gemm_transpose_into(float *d, size_t ldd, const float *s, size_t lds, int n, int kc);
// op(B)[k0 .. k0+kc, j0 .. j0+nb] into NR-column panels: dst[panel][k][j] (kc <= KC).
void gemm_pack_b(float *dst, const Gemm *g, int j0, int nb, int k0, int kc, int NR);
// One panel of cols <= NR columns for the one-row kernel (kc <= ROW_OWN_KC), through `rows`
// [NR * kc] (gemm_pack.c).
void gemm_pack_row_panel(float *dst, float *rows, const Gemm *g, int j0, int cols, int k0, int kc, int NR);

#endif
