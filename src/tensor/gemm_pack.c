// gemm_pack.c: op(B) laid out for the GEMM's kernels (gemm.c): NR-column panels, each a
// slice of kc rows, dst[panel][k][j]; B as it lies or transposed, float or half. Packing only
// copies (and widens halves exactly), so every way of packing gives the same panels.
#include <string.h>

#include "gemm_small.h"
#if SIMD_X86
#include "simd_avx2.h"
#endif

// One row of a whole panel of NR columns, copied with a size the compiler knows, so it
// becomes a few vector moves instead of a call to memcpy per row (that call was 4% of a
// training step, whose products are too thin to amortise it). The row PACK_AHEAD rows on is
// fetched meanwhile: in training, op(B) is often an activation no cache holds (steps
// alternating with and without the prefetch took 1-1.5% less time with it).
enum { PACK_AHEAD = 8 };
#define COPY_PANEL_ROWS(NR)                                                                        \
    static void copy_rows_##NR(float *d, const float *s, size_t lds, int kc) {                    \
        for (int k = 0; k < kc; k++) {                                                             \
            if (k + PACK_AHEAD < kc) {                                                             \
                __builtin_prefetch(s + (size_t)(k + PACK_AHEAD) * lds, 0, 3);                      \
                __builtin_prefetch(s + (size_t)(k + PACK_AHEAD) * lds + (NR) - 1, 0, 3);           \
            }                                                                                      \
            memcpy(d + (size_t)k * (NR), s + (size_t)k * lds, sizeof(float) * (NR));               \
        }                                                                                          \
    }
COPY_PANEL_ROWS(8)
COPY_PANEL_ROWS(24)
COPY_PANEL_ROWS(32)

// Eight rows of a matrix, eight floats each (s, rows lds apart), written transposed: d's row
// k (rows ldd apart) is column k of s.
#if SIMD_X86
__attribute__((target("avx2"))) static void transpose_8x8(float *d, size_t ldd, const float *s, size_t lds) {
    __m256 r[8];
    load_columns8(r, s, lds, 0);
    for (int i = 0; i < 8; i++) _mm256_storeu_ps(d + (size_t)i * ldd, r[i]);
}
#endif

// d[k * ldd + j] = s[j * lds + k] for j < n, k < kc: n rows of s (kc floats each) become n
// columns of d. Eight by eight through registers where the CPU has AVX2, the rest one by one.
void gemm_transpose_into(float *d, size_t ldd, const float *s, size_t lds, int n, int kc) {
    int k8 = 0, n8 = 0;  // [0, k8) x [0, n8) went through registers
#if SIMD_X86
    if (simd_level() >= SIMD_AVX2) {
        k8 = kc / 8 * 8, n8 = n / 8 * 8;
        for (int k = 0; k < k8; k += 8)
            for (int j = 0; j < n8; j += 8) transpose_8x8(d + (size_t)k * ldd + j, ldd, s + (size_t)j * lds + k, lds);
    }
#endif
    for (int k = 0; k < k8; k++)
        for (int j = n8; j < n; j++) d[(size_t)k * ldd + j] = s[(size_t)j * lds + k];
    for (int k = k8; k < kc; k++)
        for (int j = 0; j < n; j++) d[(size_t)k * ldd + j] = s[(size_t)j * lds + k];
}

// gemm_pack_b for B held as half: each number widened (exactly) as it is copied, so the panels are
// those of B widened first. B [N, K] (bt) goes eight rows at a time through a float copy.
static void pack_b_half(float *dst, const Gemm *g, int j0, int nb, int k0, int kc, int NR) {
    float rows[8 * KC];
    for (int p = 0; p < nb; p += NR) {
        float *d = dst + (size_t)p * kc;
        const int cols = nb - p < NR ? nb - p : NR;
        for (int j = 0; g->bt && j < cols; j += 8) {
            const int n = cols - j < 8 ? cols - j : 8;
            for (int r = 0; r < n; r++) half_widen(rows + (size_t)r * kc, g->bh + (size_t)(j0 + p + j + r) * g->ldb + k0, (size_t)kc, g->bh_kind);
            gemm_transpose_into(d + j, (size_t)NR, rows, (size_t)kc, n, kc);
        }
        for (int k = 0; !g->bt && k < kc; k++)
            half_widen(d + (size_t)k * NR, g->bh + (size_t)(k0 + k) * g->ldb + j0 + p, (size_t)cols, g->bh_kind);
        for (int k = 0; k < kc && cols < NR; k++)
            for (int j = cols; j < NR; j++) d[(size_t)k * NR + j] = 0.0f;
    }
}

// op(B)[k0 .. k0+kc, j0 .. j0+nb] into NR-column panels: dst[panel][k][j]. Only a copy: every
// way of packing gives the same panels.
void gemm_pack_b(float *dst, const Gemm *g, int j0, int nb, int k0, int kc, int NR) {
    if (g->bh) {
        pack_b_half(dst, g, j0, nb, k0, kc, NR);
        return;
    }
    for (int p = 0; p < nb; p += NR) {
        float *d = dst + (size_t)p * kc;
        const int cols = nb - p < NR ? nb - p : NR;
        const float *s = g->b + (size_t)k0 * g->ldb + j0 + p;  // op(B) = B: its rows lie along columns
        if (!g->bt && cols == NR && NR == 32) copy_rows_32(d, s, (size_t)g->ldb, kc);
        else if (!g->bt && cols == NR && NR == 24) copy_rows_24(d, s, (size_t)g->ldb, kc);
        else if (!g->bt && cols == NR && NR == 8) copy_rows_8(d, s, (size_t)g->ldb, kc);
        else {
            if (g->bt) gemm_transpose_into(d, (size_t)NR, g->b + (size_t)(j0 + p) * g->ldb + k0, (size_t)g->ldb, cols, kc);
            else
                for (int k = 0; k < kc; k++) memcpy(d + (size_t)k * NR, s + (size_t)k * g->ldb, sizeof(float) * (size_t)cols);
            for (int k = 0; k < kc && cols < NR; k++)
                for (int j = cols; j < NR; j++) d[(size_t)k * NR + j] = 0.0f;
        }
    }
}

// One panel of op(B)'s slice [k0, k0+kc) for the row kernel: as gemm_pack_b packs it, but B [N, K]
// (bt; float, or half widened) is first copied row after row into `rows`, the rows ahead
// fetched meanwhile, so memory is read in runs rather than 32 rows at once, and then turned
// from there.
void gemm_pack_row_panel(float *dst, float *rows, const Gemm *g, int j0, int cols, int k0, int kc, int NR) {
    if (!g->bt) {
        gemm_pack_b(dst, g, j0, cols, k0, kc, NR);
        return;
    }
    const size_t size = g->bh ? sizeof *g->bh : sizeof *g->b;  // bytes a number of B
    for (int r = 0; r < cols; r++) {
        const size_t at = (size_t)(j0 + r) * g->ldb + k0;
        const char *ahead = (const char *)(g->bh ? (const void *)(g->bh + at) : (const void *)(g->b + at)) +
                            (size_t)ROW_AHEAD_ROWS * g->ldb * size;
        for (size_t k = 0; r + ROW_AHEAD_ROWS < cols && k < (size_t)kc * size; k += 64) __builtin_prefetch(ahead + k, 0, 3);
        if (g->bh) half_widen(rows + (size_t)r * kc, g->bh + at, (size_t)kc, g->bh_kind);
        else memcpy(rows + (size_t)r * kc, g->b + at, sizeof(float) * (size_t)kc);
    }
    gemm_transpose_into(dst, (size_t)NR, rows, (size_t)kc, cols, kc);
    for (int k = 0; k < kc && cols < NR; k++)
        for (int j = cols; j < NR; j++) dst[(size_t)k * NR + j] = 0.0f;
}

