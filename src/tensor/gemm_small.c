// gemm_small.c: products too small to pack (one attention head's), for gemm.c's run(): in
// registers when a row of C fits in a few vectors, else plain loops. Built, as gemm.c is, with
// -ffp-contract=fast, so each term is added with one fused multiply-add where the CPU has it
// (in the browser, VMADD: simd.h).
#include "gemm_small.h"

// Element (i, k) of op(A).
static inline float A(const Gemm *g, int i, int k) {
    return g->at ? g->a[(size_t)k * g->lda + i] : g->a[(size_t)i * g->lda + k];
}

// A few rows against Bᵀ (the cached decoder's new query against a head's 87 keys, 1 x 87 x 64):
// copying Bᵀ whole for them cost ten times the products. Each element's chain is read along
// B's row instead, LANES elements of a row at a time so their chains run side by side; the
// same chain, start + a0 b0 + a1 b1 + ..., in k order. (Eight lanes, or four in the browser,
// whose multiply-add takes four.)
enum { FEW_ROWS = 2, LANES = SIMD_WASM_MADD ? 4 : 8 };
static inline __attribute__((always_inline)) void few_rows_bt(const Gemm *g) {
    typedef float vl __attribute__((vector_size(LANES * 4)));  // one product a lane: each is used
                                                                // once, so it is fused where it can be
    for (int i = 0; i < g->M; i++) {
        float *c = g->c + (size_t)i * g->ldc;
        for (int j0 = 0; j0 < g->N; j0 += LANES) {
            const int n = g->N - j0 < LANES ? g->N - j0 : LANES;
            const float *b[LANES];
            vl acc;
            for (int j = 0; j < LANES; j++) {  // past n: row j0 again, computed and not stored
                b[j] = g->b + (size_t)(j0 + (j < n ? j : 0)) * g->ldb;
                acc[j] = j >= n ? 0.0f : g->accumulate ? c[j0 + j] : g->bias ? g->bias[j0 + j] : 0.0f;
            }
            for (int k = 0; k < g->K; k++) {
                vl bk;
                _Pragma("GCC unroll 8") for (int j = 0; j < LANES; j++) bk[j] = b[j][k];
                VMADD(acc, -(vl){0} + A(g, i, k), bk);  // (adding -0.0: a broadcast)
            }
            for (int j = 0; j < n; j++) c[j0 + j] = acc[j];
        }
    }
}

// Small products (one head's attention, 16 x 16 x 16) cost more to pack than to compute: plain
// loops whose inner loop runs along contiguous memory, so the compiler vectorises it. They are
// built for the micro-kernel's CPU, so both add each term with one fused multiply-add (or both
// without): every element of C is then the same chain, bias (or 0) + a0 b0 + a1 b1 + ..., in
// the same order, whichever path computed it, and one row of a product is the same bits
// computed alone or among others (the cached decoder relies on this).
static inline __attribute__((always_inline)) void small(const Gemm *g) {
    if (g->bt && g->M <= FEW_ROWS) {
        few_rows_bt(g);
        return;
    }
    float bt_copy[32768];  // op(B) = Bᵀ copied to [K, N] (N K <= M N K <= 32768 here), so every
                           // product runs along rows, in the same order as the blocked kernel
    Gemm h = *g;
    if (g->bt) {
        for (int k = 0; k < g->K; k++)
            for (int j = 0; j < g->N; j++) bt_copy[k * g->N + j] = g->b[(size_t)j * g->ldb + k];
        h.b = bt_copy, h.ldb = g->N, h.bt = false;
        g = &h;
    }
    for (int i = 0; i < g->M; i++)
        if (!g->accumulate)
            for (int j = 0; j < g->N; j++) g->c[(size_t)i * g->ldc + j] = g->bias ? g->bias[j] : 0.0f;
    int i = 0;
    for (; i + 4 <= g->M; i += 4) {  // four rows at once: four independent chains of adds
        float *restrict c0 = g->c + (size_t)i * g->ldc, *restrict c1 = c0 + g->ldc;
        float *restrict c2 = c1 + g->ldc, *restrict c3 = c2 + g->ldc;
        for (int k = 0; k < g->K; k++) {
            const float a0 = A(g, i, k), a1 = A(g, i + 1, k), a2 = A(g, i + 2, k), a3 = A(g, i + 3, k);
            const float *restrict b = g->b + (size_t)k * g->ldb;
            for (int j = 0; j < g->N; j++) {
                VMADD_SCALAR(c0[j], a0, b[j]), VMADD_SCALAR(c1[j], a1, b[j]);
                VMADD_SCALAR(c2[j], a2, b[j]), VMADD_SCALAR(c3[j], a3, b[j]);
            }
        }
    }
    for (; i < g->M; i++) {
        float *c = g->c + (size_t)i * g->ldc;
        for (int k = 0; k < g->K; k++) {
            const float aik = A(g, i, k), *b = g->b + (size_t)k * g->ldb;
            for (int j = 0; j < g->N; j++) VMADD_SCALAR(c[j], aik, b[j]);
        }
    }
}

// A product no wider than NVMAX vectors (one attention head: 16 x 16 x 16, or a head's scores at
// 28 tokens, 28 x 28 x 12) in registers, R rows of C at a time, each row NV accumulators started
// from C, the bias or 0, then the same chain of fused multiply-adds in k order as every other
// path. R is as many rows (at most 4) as ACC accumulators hold: 4 rows of 3 vectors or 3 of 4 in
// AVX2's 16 registers. op(B) is read in place when its rows are whole vectors, else copied once
// into rows of NV vectors (zero past N). The plain loops above spent ten times the arithmetic's
// time on these, keeping C in memory.
#define DEFINE_SMALL(NAME, W, NVMAX, ACC, TARGET)                                                  \
    TARGET static inline __attribute__((always_inline)) void NAME##_rows(const Gemm *g, const float *bp, \
                                                                         size_t ldbp, int i0, const int NV, \
                                                                         const int R) {            \
        typedef float vf __attribute__((vector_size((W) * 4)));                                    \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                       \
        const int N = g->N, K = g->K;                                                              \
        const vf nz = -(vf){0};                                                                    \
        /* element (i0 + r, k) of op(A) is a[r rs + k cs], A or Aᵀ alike (no branch per term) */   \
        const size_t rs = g->at ? 1 : (size_t)g->lda, cs = g->at ? (size_t)g->lda : 1;             \
        const float *a = g->a + (size_t)i0 * rs;                                                   \
        vf acc[4][NVMAX];                                                                          \
        _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                      \
            const float *from = g->accumulate ? g->c + (size_t)(i0 + r) * g->ldc : g->bias;        \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                 \
                acc[r][v] = (vf){0};                                                               \
                if (from && (v + 1) * (W) <= N) acc[r][v] = *(const vfu *)(from + v * (W));        \
                else if (from) /* a short row's last vector: its lanes, zero past N */             \
                    _Pragma("GCC unroll 16") for (int l = 0; l < (W); l++)                         \
                        if (v * (W) + l < N) acc[r][v][l] = from[v * (W) + l];                     \
            }                                                                                      \
        }                                                                                          \
        for (int k = 0; k < K; k++) {                                                              \
            const float *bk = bp + (size_t)k * ldbp, *ak = a + (size_t)k * cs;                     \
            _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                  \
                const vf ar = nz + ak[(size_t)r * rs];                                             \
                _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                               \
                    VMADD(acc[r][v], ar, *(const vfu *)(bk + v * (W)));                            \
            }                                                                                      \
        }                                                                                          \
        _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                      \
            float *cr = g->c + (size_t)(i0 + r) * g->ldc;                                          \
            /* whole vectors straight to C, a short last one lane by lane (no call to memcpy) */   \
            _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++) {                                 \
                if ((v + 1) * (W) <= N) *(vfu *)(cr + v * (W)) = acc[r][v];                        \
                else /* (a fixed count of lanes: a loop to N would become a call to memcpy) */     \
                    _Pragma("GCC unroll 16") for (int l = 0; l < (W); l++)                         \
                        if (v * (W) + l < N) cr[v * (W) + l] = acc[r][v][l];                       \
            }                                                                                      \
        }                                                                                          \
    }                                                                                              \
    TARGET bool NAME(const Gemm *g) {                                                              \
        typedef float vf __attribute__((vector_size((W) * 4)));                                    \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                       \
        const int N = g->N, K = g->K, NV = (N + (W) - 1) / (W), ld = NV * (W);                     \
        const bool fits = NV <= (NVMAX) && K * ld <= 8192, big = (long)g->M * N * K > SMALL_PLAIN; \
        if (!fits || (big && NV < 2)) { /* past SMALL_PLAIN only rows of two vectors or more */    \
            if (big) return false; /* the blocked kernel's */                                      \
            small(g);                                                                              \
            return true;                                                                           \
        }                                                                                          \
        const float *bp = g->b;                                                                    \
        size_t ldbp = (size_t)g->ldb;                                                              \
        float copy[8192] __attribute__((aligned(64)));                                             \
        if (g->bt || N != ld) {                                                                    \
            const float *b = g->b;                                                                 \
            const size_t ldb = (size_t)g->ldb;                                                     \
            for (int k = 0; k < K && N < ld; k++) /* zero past N, then the columns over it */      \
                *(vfu *)(copy + (size_t)k * ld + ld - (W)) = (vf){0};                              \
            if (g->bt) gemm_transpose_into(copy, (size_t)ld, b, ldb, N, K);                        \
            else                                                                                   \
                for (int k = 0; k < K; k++)                                                        \
                    for (int v = 0; v < NV; v++)                                                   \
                        _Pragma("GCC unroll 16") for (int l = 0; l < (W); l++)                     \
                            if (v * (W) + l < N) copy[(size_t)k * ld + v * (W) + l] = b[(size_t)k * ldb + v * (W) + l]; \
            bp = copy, ldbp = (size_t)ld;                                                          \
        }                                                                                          \
        /* R rows at a time, then one: every row its own, so no product is shared (a               \
           product used twice would not be fused into its add) */                                  \
        switch (NV) {                                                                              \
        case 1: SMALL_ROWS(NAME, 1, ACC); break;                                                   \
        case 2: SMALL_ROWS(NAME, 2, ACC); break;                                                   \
        case 3: if ((NVMAX) >= 3) SMALL_ROWS(NAME, (NVMAX) >= 3 ? 3 : 1, ACC); break;              \
        default: if ((NVMAX) >= 4) SMALL_ROWS(NAME, (NVMAX) >= 4 ? 4 : 1, ACC); break;             \
        }                                                                                          \
        return true;                                                                               \
    }

// Every row of C with NV vectors a row (a constant, so each count has its own unrolled copy):
// groups of as many rows as ACC accumulators hold, at most 4, then the rest one by one.
#define SMALL_GROUP(ACC, NV) ((ACC) / (NV) < 4 ? (ACC) / (NV) : 4)
#define SMALL_ROWS(NAME, NV, ACC)                                                                  \
    {                                                                                              \
        int i = 0;                                                                                 \
        for (; i + SMALL_GROUP(ACC, NV) <= g->M; i += SMALL_GROUP(ACC, NV))                        \
            NAME##_rows(g, bp, ldbp, i, NV, SMALL_GROUP(ACC, NV));                                 \
        for (; i < g->M; i++) NAME##_rows(g, bp, ldbp, i, NV, 1);                                  \
    }

// AVX-512's 32 registers hold four rows of four vectors (one head's weights x V at 32 x 64);
// AVX2's 16 hold 12 accumulators (four rows of three vectors, three of four); the base level,
// whose products need registers of their own, eight (four rows of two).
#if SIMD_X86
DEFINE_SMALL(gemm_small_avx512, 16, 4, 16, __attribute__((target("avx512f,fma"))))
DEFINE_SMALL(gemm_small_avx2, 8, 4, 12, __attribute__((target("avx2,fma"))))
#endif
DEFINE_SMALL(gemm_small_base, 4, 2, 8, )
