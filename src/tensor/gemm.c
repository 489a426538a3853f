// gemm.c: the one matrix multiply behind linear, matmul and their gradients.
//
//   C[M, N] (+)= op(A)[M, K] · op(B)[K, N] (+ bias[N] on every row)
//
// with op(A) = A or Aᵀ and op(B) = B or Bᵀ, so no caller ever transposes a matrix to multiply
// it. The usual blocking for cache: C is cut into tiles of MB rows by NB columns, K into KC-deep
// slices; for each slice the tile's part of op(B) is packed into NR-column panels, contiguous,
// whatever the layout (a linear's weight is packed once, by sgemm_pack), while op(A) is read
// where it lies, MR rows at a time (packing it cost as much as the product for the small
// inner sizes of training, K = 64). An MR x NR register tile of C is then
// accumulated by a micro-kernel written with GCC vector extensions. Three micro-kernels are
// built (AVX-512, AVX2+FMA, baseline SSE2) and picked once at run time. Tiles are spread over
// the cores with OpenMP (grid_for: as evenly as whole blocks and panels allow); every element
// of C is computed by one thread in a fixed order, so the result does not depend on the number
// of threads.
#include <stdlib.h>
#include <string.h>

#include "gemm_small.h"
#include "kernels.h"
#include "mem.h"
#include "par.h"
#include "simd.h"
#if SIMD_X86
#include "simd_avx2.h"
#endif

enum { MB_MAX = 132, NB_MAX = 128 };  // the most rows and columns of C a tile has (KC: gemm_small.h)

// One panel of NR columns of a tile (NV vectors of W; the impl's nr): every MR-row block of
// its mb rows against one packed panel of op(B). op(A) is read where it lies: element (i, k) is
// a[i * rs + k * cs].
typedef struct {
    const float *a;     // op(A) at the tile's first row and the slice's first column
    size_t rs, cs;      // strides of a row and of a column of op(A)
    const float *pb;    // [kc][NR] the packed panel of op(B); columns past nr are zero
    float *c;           // C at the tile's first row and the panel's first column
    const float *bias;  // [nr] or NULL
    const float *pf;    // [pf_rows][NR] the next packed panel, prefetched meanwhile, or NULL
    int ldc, mb, nr, kc, pf_rows;
    bool load_c;        // add to C (a later slice, or accumulating) instead of starting afresh
} Panel;

typedef void (*PanelKernel)(const Panel *p);

// The micro-kernel: an RM x NV·W block of C held in named accumulators so the compiler keeps
// them in registers. AVX-512 (32 vector registers): 8 rows of 2 vectors, 16 accumulators and 10
// loads for every 16 multiply-adds. AVX2 (16 registers): 4 rows of 3 vectors, 12 accumulators
// and 7 loads for every 12 (4 rows divide the lengths a lesson runs, 32 and 128, where 6 rows
// of 2 vectors left a third of the last block idle at 32). The base level (SSE2, WebAssembly's
// SIMD128) has no fused multiply-add, so each product needs a register of its own before it is
// added: 4 rows of 2 vectors, 8 accumulators (12 spilled one to the stack every step). Rows past mr read row
// mr - 1 again and are not stored; columns past nr are not stored. Adding -0.0 leaves every
// float as it is, so `nz + x` is just a broadcast of x. Each block prefetches its share of the
// next panel, so a weight streamed from memory arrives before it is needed.
#define ROWS_4(X) X(0) X(1) X(2) X(3)
#define ROWS_8(X) ROWS_4(X) X(4) X(5) X(6) X(7)
#define COLS_2(X, r) X(r, 0) X(r, 1)
#define COLS_3(X, r) X(r, 0) X(r, 1) X(r, 2)
#define ACC_DECLARE(r, v) vf c##r##v;
#define ACC_LOAD(r, v) c##r##v = *(const vfu *)(c + (size_t)(r) * ldc + (v) * WIDTH);
#define ACC_START(r, v) c##r##v = start[v];
#define ACC_TILE(r, v) c##r##v = *(const vfu *)(tile[r] + (v) * WIDTH);
#define ACC_FMA(r, v) VMADD(c##r##v, ar, b[v]);
#define ACC_STORE(r, v) *(vfu *)(c + (size_t)(r) * ldc + (v) * WIDTH) = c##r##v;
#define ACC_STORE_TILE(r, v) *(vfu *)(tile[r] + (v) * WIDTH) = c##r##v;
#define DECLARE(r) COLS_N(ACC_DECLARE, r)
#define ROW_PTR(r) const float *a##r = a + (size_t)((r) < mr ? (r) : mr - 1) * p->rs;
#define LOAD_FULL(r) COLS_N(ACC_LOAD, r)
#define START_ROW(r) COLS_N(ACC_START, r)
#define LOAD_TILE(r) COLS_N(ACC_TILE, r)
#define FMA_ROW(r) { const vf ar = nz + a##r[kk]; COLS_N(ACC_FMA, r) }
#define STORE_FULL(r) COLS_N(ACC_STORE, r)
#define STORE_TILE(r) COLS_N(ACC_STORE_TILE, r)
// One step of a block's k loop: rows f0 .. f1 of the next panel (pf, PW floats a row) spread
// evenly over its kc steps, a row (one or two cache lines) whenever `due` passes kc. Fetched
// into every level, the first cache included (locality 3): a forward whose weights stream from
// memory took 1-6% less time at the median than with the lines left in the second-level cache
// (locality 1), on both kernels, alternating in one process (Zen 4).
// WebAssembly has no prefetch: there the step is nothing, and its counters are not kept.
#if SIMD_X86
#define PREFETCH_STEP()                                                                         \
    due += f1 - f0;                                                                             \
    if (due >= kc) {                                                                            \
        due -= kc;                                                                              \
        __builtin_prefetch(pf + (size_t)next * PW, 0, 3);                                       \
        if (PW > 16) __builtin_prefetch(pf + (size_t)next * PW + 16, 0, 3);                     \
        next++;                                                                                 \
    }
#else
#define PREFETCH_STEP() (void)due, (void)next, (void)pf, (void)f0, (void)f1;
#endif

// A full block of RM rows against a panel's first NVA whole vectors (NVA < NV): the last panel
// of a width that is not a multiple of the panel's but is of the vector's (128 columns are five
// AVX2 panels of 24 and one of 8). The same chains as the micro-kernel; without this, such a
// panel went through the padded tile below and cost more than a whole one.
#define DEFINE_NARROW(NAME, W, RM, NV, TARGET)                                                   \
    TARGET static inline __attribute__((always_inline)) void NAME##_vectors(const Panel *p, int i, int f0, int f1, \
                                                                            const int NVA) {   \
        typedef float vf __attribute__((vector_size((W) * 4)));                                 \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                    \
        enum { PW = (NV) * (W) };                                                               \
        const vf nz = -(vf){0};                                                                 \
        const int kc = p->kc, ldc = p->ldc;                                                     \
        const size_t cs = p->cs, rs = p->rs;                                                    \
        const float *a = p->a + (size_t)i * rs, *pf = p->pf ? p->pf + (size_t)f0 * PW : NULL;  \
        float *c = p->c + (size_t)i * ldc;                                                      \
        vf acc[RM][NV];                                                                         \
        _Pragma("GCC unroll 8") for (int r = 0; r < (RM); r++)                                  \
            _Pragma("GCC unroll 4") for (int v = 0; v < NVA; v++)                               \
                acc[r][v] = p->load_c ? *(const vfu *)(c + (size_t)r * ldc + v * (W))            \
                          : p->bias ? *(const vfu *)(p->bias + v * (W)) : (vf){0};              \
        size_t kk = 0;                                                                          \
        int due = 0, next = 0;                                                                  \
        for (int k = 0; k < kc; k++, kk += cs) {                                                \
            vf b[NV];                                                                           \
            _Pragma("GCC unroll 4") for (int v = 0; v < NVA; v++)                               \
                b[v] = *(const vfu *)(p->pb + (size_t)k * PW + v * (W));                        \
            PREFETCH_STEP()                                                                     \
            _Pragma("GCC unroll 8") for (int r = 0; r < (RM); r++) {                            \
                const vf ar = nz + a[(size_t)r * rs + kk];                                      \
                _Pragma("GCC unroll 4") for (int v = 0; v < NVA; v++) VMADD(acc[r][v], ar, b[v]); \
            }                                                                                   \
        }                                                                                       \
        _Pragma("GCC unroll 8") for (int r = 0; r < (RM); r++)                                  \
            _Pragma("GCC unroll 4") for (int v = 0; v < NVA; v++)                               \
                *(vfu *)(c + (size_t)r * ldc + v * (W)) = acc[r][v];                            \
    }                                                                                           \
    TARGET static void NAME(const Panel *p, int i, int f0, int f1, int nva) {                   \
        if (nva == 1) NAME##_vectors(p, i, f0, f1, 1);                                          \
        else if ((NV) > 2 && nva == 2) NAME##_vectors(p, i, f0, f1, (NV) > 2 ? 2 : 1);          \
    }

// The rows of C the next block of RM rows writes, at this panel's columns, fetched into the
// cache while this block computes (a read prefetch: the kernels' targets leave PREFETCHW out).
// C is usually a part of the trace no cache holds, and a block's stores that miss wait for
// memory; with K = 64, as in training, a block's arithmetic is too short to hide them (steps
// alternating with and without this took 5% less time, the linears 6-9%). Only a hint:
// nothing computed changes.
#if SIMD_X86
static inline __attribute__((always_inline)) void prefetch_c_rows(const Panel *p, int from, int rm) {
    const int rows = p->mb - from < rm ? p->mb - from : rm;
    for (int r = 0; r < rows; r++) {
        const float *cr = p->c + (size_t)(from + r) * p->ldc;
        __builtin_prefetch(cr, 1, 3);
        if (p->nr > 16) __builtin_prefetch(cr + 16, 1, 3);
        __builtin_prefetch(cr + p->nr - 1, 1, 3);
    }
}
#else
static inline void prefetch_c_rows(const Panel *p, int from, int rm) { (void)p, (void)from, (void)rm; }
#endif

#define DEFINE_MICRO_KERNEL(NAME, W, RM, NV, TARGET)                                            \
    TARGET static void NAME(const Panel *p) {                                                   \
        typedef float vf __attribute__((vector_size((W) * 4)));                                 \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                    \
        enum { WIDTH = (W), PW = (NV) * (W) };                                                  \
        const vf nz = -(vf){0};                                                                 \
        const int nr = p->nr, kc = p->kc, ldc = p->ldc, blocks = (p->mb + RM - 1) / RM;         \
        const size_t cs = p->cs;                                                                \
        const float *pb = p->pb;                                                                \
        for (int ib = 0; ib < blocks; ib++) {                                                   \
            const int i = ib * RM, mr = p->mb - i < RM ? p->mb - i : RM;                        \
            const bool full = mr == RM && nr == PW;                                             \
            const int f0 = p->pf_rows * ib / blocks, f1 = p->pf_rows * (ib + 1) / blocks;       \
            if (ib + 1 < blocks) prefetch_c_rows(p, i + RM, RM);                                \
            if (mr == RM && nr < PW && nr % (W) == 0) {                                         \
                NAME##_narrow(p, i, f0, f1, nr / (W));                                          \
                continue;                                                                       \
            }                                                                                   \
            const float *a = p->a + (size_t)i * p->rs, *pf = p->pf ? p->pf + (size_t)f0 * PW : NULL; \
            float *c = p->c + (size_t)i * ldc, tile[RM][PW];                                    \
            ROWS_##RM(DECLARE)                                                                  \
            ROWS_##RM(ROW_PTR)                                                                  \
            if (full && p->load_c) {                                                            \
                ROWS_##RM(LOAD_FULL)                                                            \
            } else if (full) { /* every row starts from the bias, or from 0 */                  \
                vf start[NV];                                                                   \
                for (int v = 0; v < (NV); v++)                                                  \
                    start[v] = p->bias ? *(const vfu *)(p->bias + v * (W)) : (vf){0};           \
                ROWS_##RM(START_ROW)                                                            \
            } else {                                                                            \
                for (int r = 0; r < RM; r++)                                                    \
                    for (int j = 0; j < PW; j++)                                                \
                        tile[r][j] = j >= nr || r >= mr ? 0.0f                                  \
                                   : p->load_c ? c[(size_t)r * ldc + j] : p->bias ? p->bias[j] : 0.0f; \
                ROWS_##RM(LOAD_TILE)                                                            \
            }                                                                                   \
            size_t kk = 0;                                                                      \
            int due = 0, next = 0; /* rows of the next panel spread evenly over the k loop */   \
            for (int k = 0; k < kc; k++, kk += cs) {                                            \
                vf b[NV];                                                                       \
                for (int v = 0; v < (NV); v++) b[v] = *(const vfu *)(pb + (size_t)k * PW + v * (W)); \
                PREFETCH_STEP()                                                                 \
                ROWS_##RM(FMA_ROW)                                                              \
            }                                                                                   \
            if (full) {                                                                         \
                ROWS_##RM(STORE_FULL)                                                           \
            } else {                                                                            \
                ROWS_##RM(STORE_TILE)                                                           \
                for (int r = 0; r < mr; r++) memcpy(c + (size_t)r * ldc, tile[r], (size_t)nr * 4); \
            }                                                                                   \
        }                                                                                       \
    }

#if SIMD_X86
DEFINE_NARROW(micro_avx512_narrow, 16, 8, 2, __attribute__((target("avx512f,fma"))))
DEFINE_NARROW(micro_avx2_narrow, 8, 4, 3, __attribute__((target("avx2,fma"))))
#endif
DEFINE_NARROW(micro_base_narrow, 4, 4, 2, )

#define COLS_N COLS_2
#if SIMD_X86
DEFINE_MICRO_KERNEL(micro_avx512, 16, 8, 2, __attribute__((target("avx512f,fma"))))
#undef COLS_N
#define COLS_N COLS_3
DEFINE_MICRO_KERNEL(micro_avx2, 8, 4, 3, __attribute__((target("avx2,fma"))))
#undef COLS_N
#define COLS_N COLS_2
#endif
DEFINE_MICRO_KERNEL(micro_base, 4, 4, 2, )
#undef COLS_N

// One row of A against op(B), panels [p0, p1) of NV·W columns: the micro-kernel's chain for
// that row, bias + a0 b0 + a1 b1 + ..., without its other rows. op(B) comes packed whole
// (sgemm_pack: packed, np its padded width) or as it lies (g->b or g->bh, packed NULL): then each
// panel's slice is packed here first, into `own`, which the caches hold. (The cached decoder
// multiplies one new row by every weight, each round.)
enum { ROW_AHEAD = 1024 };  // floats the row kernel prefetches ahead of its reads (4 KB)
#define DEFINE_ROW_KERNEL(NAME, W, NV, TARGET)                                                    \
    TARGET static void NAME(float *c, const float *a, const float *packed, const Gemm *g,          \
                            const float *bias, int N, int K, int np, int p0, int p1) {            \
        typedef float vf __attribute__((vector_size((W) * 4)));                                   \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                      \
        enum { PW = (NV) * (W) };                                                                 \
        const vf nz = -(vf){0};                                                                   \
        float own[ROW_OWN_KC * PW], rows[ROW_OWN_KC * PW];                                        \
        const int depth = packed ? KC : ROW_OWN_KC;                                               \
        for (int p = p0; p < p1; p++) {                                                           \
            const int j = p * PW, cols = N - j < PW ? N - j : PW;                                 \
            float acc[PW];                                                                        \
            for (int q = 0; q < PW; q++) acc[q] = q < cols && bias ? bias[j + q] : 0.0f;          \
            vf c0 = *(const vfu *)acc, c1 = *(const vfu *)(acc + (W));                            \
            vf c2 = (NV) > 2 ? *(const vfu *)(acc + ((NV) > 2 ? 2 * (W) : 0)) : c0;               \
            for (int k0 = 0; k0 < K; k0 += depth) {                                               \
                const int kc = K - k0 < depth ? K - k0 : depth;                                   \
                const float *pb = packed ? packed + (size_t)k0 * np + (size_t)j * kc : own;       \
                if (!packed) gemm_pack_row_panel(own, rows, g, j, cols, k0, kc, PW);                   \
                for (int k = 0; k < kc; k++) {                                                    \
                    const vf av = nz + a[k0 + k];                                                 \
                    const float *bk = pb + (size_t)k * PW;                                        \
                    __builtin_prefetch(bk + ROW_AHEAD, 0, 1);                                     \
                    if (PW > 16) __builtin_prefetch(bk + ROW_AHEAD + 16, 0, 1);                   \
                    VMADD(c0, av, *(const vfu *)bk);                                              \
                    VMADD(c1, av, *(const vfu *)(bk + (W)));                                      \
                    if ((NV) > 2) VMADD(c2, av, *(const vfu *)(bk + ((NV) > 2 ? 2 * (W) : 0)));   \
                }                                                                                 \
            }                                                                                     \
            *(vfu *)acc = c0, *(vfu *)(acc + (W)) = c1;                                           \
            if ((NV) > 2) *(vfu *)(acc + ((NV) > 2 ? 2 * (W) : 0)) = c2;                          \
            memcpy(c + j, acc, sizeof(float) * (size_t)cols);                                     \
        }                                                                                         \
    }

// One row of A against B [K, N] as it lies (not transposed; float, or half widened a row's
// run at a time into `wide`), columns [j0, j1): the same chain as the row kernel's for each
// element, but B is read row after row in long runs, the chains kept in `acc`, a block of
// ROW_B_COLS columns at a time, which the first-level cache holds.
enum { ROW_B_COLS = 1024 };
#define DEFINE_ROW_B_KERNEL(NAME, W, TARGET)                                                      \
    TARGET static void NAME(float *c, const float *a, const Gemm *g, int j0, int j1) {            \
        typedef float vf __attribute__((vector_size((W) * 4)));                                   \
        typedef float vfu __attribute__((vector_size((W) * 4), aligned(4)));                      \
        const vf nz = -(vf){0};                                                                   \
        const float *bias = g->bias;                                                              \
        const size_t ldb = (size_t)g->ldb;                                                        \
        const int K = g->K;                                                                       \
        float acc[ROW_B_COLS], wide[ROW_B_COLS];                                                  \
        for (int jb = j0; jb < j1; jb += ROW_B_COLS) {                                            \
            const int n = j1 - jb < ROW_B_COLS ? j1 - jb : ROW_B_COLS, nv = n / (W) * (W);       \
            for (int q = 0; q < n; q++) acc[q] = bias ? bias[jb + q] : 0.0f;                      \
            for (int k = 0; k < K; k++) {                                                         \
                const vf av = nz + a[k];                                                          \
                const float *bk = g->b ? g->b + k * ldb + jb : wide;                              \
                if (!g->b) half_widen(wide, g->bh + k * ldb + jb, (size_t)n, g->bh_kind);         \
                for (int q = 0; q < nv; q += (W)) {                                               \
                    if (k + ROW_AHEAD_ROWS < K && g->b) __builtin_prefetch(bk + ROW_AHEAD_ROWS * ldb + q, 0, 3); \
                    else if (k + ROW_AHEAD_ROWS < K && q % 32 == 0)                               \
                        __builtin_prefetch(g->bh + (k + ROW_AHEAD_ROWS) * ldb + jb + q, 0, 3);    \
                    vf x = *(const vfu *)(acc + q);                                               \
                    VMADD(x, av, *(const vfu *)(bk + q));                                         \
                    *(vfu *)(acc + q) = x;                                                        \
                }                                                                                 \
                for (int q = nv; q < n; q++) VMADD_SCALAR(acc[q], a[k], bk[q]);                   \
            }                                                                                     \
            memcpy(c + jb, acc, sizeof(float) * (size_t)n);                                       \
        }                                                                                         \
    }

#if SIMD_X86
DEFINE_ROW_B_KERNEL(row_b_avx512, 16, __attribute__((target("avx512f,fma"))))
DEFINE_ROW_B_KERNEL(row_b_avx2, 8, __attribute__((target("avx2,fma"))))
#endif
DEFINE_ROW_B_KERNEL(row_b_base, 4, )

#if SIMD_X86
DEFINE_ROW_KERNEL(row_avx512, 16, 2, __attribute__((target("avx512f,fma"))))
DEFINE_ROW_KERNEL(row_avx2, 8, 3, __attribute__((target("avx2,fma"))))
#endif
DEFINE_ROW_KERNEL(row_base, 4, 2, )

typedef void (*RowKernel)(float *c, const float *a, const float *packed, const Gemm *g, const float *bias, int N, int K,
                          int np, int p0, int p1);
typedef void (*RowBKernel)(float *c, const float *a, const Gemm *g, int j0, int j1);
typedef struct {
    PanelKernel kernel;
    RowKernel row;                        // one row against op(B), packed whole or as it lies
    RowBKernel row_b;                     // one row against B [K, N] as it lies
    bool (*small)(const Gemm *g);  // products too small to pack, built for the same CPU (gemm_small.c):
                                   // false when the blocked kernel should take it
    int mr;  // rows of C per micro-kernel block: 8 with AVX-512's 32 registers, else 4
    int nr;  // columns per packed panel
    const char *name;
} GemmImpl;

static GemmImpl gemm_impl(void) {
    static const GemmImpl impls[] = {
#if SIMD_X86
        [SIMD_BASE] = {micro_base, row_base, row_b_base, gemm_small_base, 4, 8, "baseline"},
        [SIMD_AVX2] = {micro_avx2, row_avx2, row_b_avx2, gemm_small_avx2, 4, 24, "avx2"},
        [SIMD_AVX512] = {micro_avx512, row_avx512, row_b_avx512, gemm_small_avx512, 8, 32, "avx512"},
#else
        [SIMD_BASE] = {micro_base, row_base, row_b_base, gemm_small_base, 4, 8, "simd128"},
#endif
    };
    return impls[simd_level()];
}

const char *sgemm_kernel_name(void) {
    // In the browser, the same kernels with or without fused multiply-adds (simd.h: VMADD).
    return SIMD_WASM_MADD && simd_gemm_fused() ? "simd128 fma" : gemm_impl().name;
}

// Columns op(B) takes when packed: N rounded up to whole panels.
static int padded_n(int N, int nr) { return (N + nr - 1) / nr * nr; }

// The packed op(B)'s panel after panel jp of slice k0 in this tile (the tile's first panel of
// the next slice after its last one; after the last slice, the first panel of the tile at
// column next_j0 the same thread runs next, if any), and in *rows how many rows it has; NULL
// (0 rows) after the last.
static const float *next_panel(const Gemm *g, const GemmImpl *impl, int j0, int nb, int jp, int k0, int kc,
                               int next_j0, int *rows) {
    const int np = padded_n(g->N, impl->nr);
    *rows = kc;
    if (jp + impl->nr < nb) return g->packed + (size_t)k0 * np + (size_t)(j0 + jp + impl->nr) * kc;
    *rows = k0 + kc >= g->K ? (next_j0 >= 0 ? (g->K < KC ? g->K : KC) : 0) : (g->K - k0 - kc < KC ? g->K - k0 - kc : KC);
    if (*rows == 0) return NULL;
    if (k0 + kc >= g->K) return g->packed + (size_t)next_j0 * *rows;
    return g->packed + (size_t)(k0 + kc) * np + (size_t)j0 * *rows;
}

// Rows i0 .. i0+rows of C by columns j0 .. j0+nb, in row blocks of mb: each K slice of op(B)
// is packed once (unless it came packed) and then serves every row block.
static void tile(const Gemm *g, int i0, int rows, int mb, int j0, int nb, int next_j0, const GemmImpl *impl) {
    float own_pb[NB_MAX * KC_OWN];
    const size_t rs = g->at ? 1 : (size_t)g->lda, cs = g->at ? (size_t)g->lda : 1;
    const int depth = g->packed ? KC : KC_OWN;
    for (int k0 = 0; k0 < g->K; k0 += depth) {
        const int kc = g->K - k0 < depth ? g->K - k0 : depth;
        // The whole op(B) packed is, per KC slice, every panel of that slice in turn.
        const float *pb = g->packed ? g->packed + (size_t)k0 * padded_n(g->N, impl->nr) + (size_t)j0 * kc : own_pb;
        if (!g->packed) gemm_pack_b(own_pb, g, j0, nb, k0, kc, impl->nr);
        const bool load_c = k0 > 0 || g->accumulate;
        for (int i = i0; i < i0 + rows; i += mb)
            for (int jp = 0; jp < nb; jp += impl->nr) {
                Panel p = {g->a + (size_t)i * rs + (size_t)k0 * cs, rs, cs, pb + (size_t)jp * kc,
                           g->c + (size_t)i * g->ldc + j0 + jp, g->bias ? g->bias + j0 + jp : NULL, NULL,
                           g->ldc, i0 + rows - i < mb ? i0 + rows - i : mb, nb - jp < impl->nr ? nb - jp : impl->nr,
                           kc, 0, load_c};
                if (g->packed) p.pf = next_panel(g, impl, j0, nb, jp, k0, kc, next_j0, &p.pf_rows);
                impl->kernel(&p);
            }
    }
}

// C cut into row_tiles x col_tiles tiles: each row tile a run of whole blocks of mr rows, each
// column tile a run of whole panels of nr columns, both spread evenly.
typedef struct {
    int N, nr, panels, col_tiles;
    int M, mr, blocks, row_tiles;
} TileGrid;

// Row tile rt: its first row and its height.
static void grid_rows(const TileGrid *t, int rt, int *i0, int *rows) {
    const int b0 = (int)((long)t->blocks * rt / t->row_tiles), b1 = (int)((long)t->blocks * (rt + 1) / t->row_tiles);
    *i0 = b0 * t->mr;
    *rows = (b1 * t->mr < t->M ? b1 * t->mr : t->M) - *i0;
}

// Column tile ct: its first column and its width.
static void grid_columns(const TileGrid *t, int ct, int *j0, int *nb) {
    const int p0 = (int)((long)t->panels * ct / t->col_tiles), p1 = (int)((long)t->panels * (ct + 1) / t->col_tiles);
    *j0 = p0 * t->nr;
    *nb = (p1 * t->nr < t->N ? p1 * t->nr : t->N) - *j0;
}

// The most work one thread has (blocks of mr rows times columns) when the tiles, in row-major
// order, are handed to `threads` threads in runs as run() hands them.
static long grid_most(const TileGrid *t, int threads) {
    const int tiles = t->row_tiles * t->col_tiles;
    long most = 0;
    for (int me = 0; me < threads; me++) {
        long w = 0;
        for (int k = (int)((long)tiles * me / threads); k < (int)((long)tiles * (me + 1) / threads); k++) {
            int i0, rows, j0, nb;
            grid_rows(t, k / t->col_tiles, &i0, &rows);
            grid_columns(t, k % t->col_tiles, &j0, &nb);
            w += (long)((rows + t->mr - 1) / t->mr) * nb;
        }
        most = w > most ? w : most;
    }
    return most;
}

// How `threads` threads share a product: as few row tiles as keep each at most MB_MAX rows,
// since every row tile reads the whole of op(B) again (at 32 tokens the weights stream from
// memory); then, of the column tiles of at most NB_MAX columns, the count that gives the
// busiest thread the least work (the fewest tiles of those within half a percent); and more
// row tiles only while that leaves a thread under 90% of an even share. Cutting rows in fixed
// MB-row tiles had left 129 rows as 128 + 1 (one thread doing all but a block: half the speed
// on two cores) and 64 AVX2 rows as 20, 20, 20, 4. Searched within 4 per thread beyond the
// least of each, so a grid costs a few hundred steps for the base model's shapes.
//
// whole_rows: one row tile (each thread a run of column tiles over all of C's rows, which its
// tile() walks MB_MAX rows at a time), for an op(B) each tile packs itself: with row tiles of
// MB_MAX rows, GPT-2's c_fc at 1023 tokens packed its weight eight times over, 40% of the time.
static TileGrid grid_for(const Gemm *g, const GemmImpl *impl, int threads, bool whole_rows) {
    const int panels = (g->N + impl->nr - 1) / impl->nr, blocks = (g->M + impl->mr - 1) / impl->mr;
    const int per_row_tile = MB_MAX / impl->mr, most = NB_MAX / impl->nr;
    const int r0 = whole_rows ? 1 : (blocks + per_row_tile - 1) / per_row_tile, c0 = (panels + most - 1) / most;
    const double even = (double)blocks * g->N / threads;
    TileGrid best = {g->N, impl->nr, panels, c0, g->M, impl->mr, blocks, r0};
    double best_share = 0;
    for (int r = r0; r <= blocks && r <= (whole_rows ? r0 : r0 + 4 * threads); r++) {
        TileGrid row_best = best;
        double share = 0;
        for (int c = c0; c <= panels && c <= c0 + 4 * threads; c++) {
            const TileGrid t = {g->N, impl->nr, panels, c, g->M, impl->mr, blocks, r};
            const double s = even / (double)grid_most(&t, threads);  // the busiest thread's share of even
            if (s > share + 0.005) share = s, row_best = t;
            if (share > 0.995) break;  // even: no more tiles needed
        }
        if (share > best_share + 0.005) best_share = share, best = row_best;
        if (best_share >= 0.9) break;
    }
    return best;
}

// One row of C, C = a op(B) (+ bias), panels split over the cores, each the same chain. op(B)
// is g->packed (np its padded width) or, when that is NULL, packed a panel's slice at a time
// by the row kernel (a one-row product reads each number of B once either way).
static void run_row(const Gemm *g, const GemmImpl *impl) {
    const int np = padded_n(g->N, impl->nr), panels = np / impl->nr;
    const int threads = 2.0 * g->N * g->K > 2.0e5 && !omp_in_parallel() ? omp_get_max_threads() : 1;
    if (!g->packed && !g->bt) {  // B [K, N] as it lies: columns split over the cores in whole vectors
        const int per = (g->N / threads + 15) / 16 * 16;
        PAR_LOOP(threads > 1, "omp parallel for schedule(static)",
            for (int t = 0; t < threads; t++) {
                const int j0 = per * t < g->N ? per * t : g->N, j1 = t + 1 == threads || per * (t + 1) > g->N ? g->N : per * (t + 1);
                impl->row_b(g->c, g->a, g, j0, j1);
            }
        );
        return;
    }
    PAR_LOOP(threads > 1 && panels > 1, "omp parallel for schedule(static)",
        for (int t = 0; t < threads; t++)
            impl->row(g->c, g->a, g->packed, g, g->bias, g->N, g->K, np, panels * t / threads, panels * (t + 1) / threads);
    );
}

static void run(const Gemm *g) {
    if (g->M <= 0 || g->N <= 0) return;
    if (!g->packed && !g->bh && (long)g->M * g->N * g->K <= SMALL_REGS && gemm_impl().small(g)) return;
    if (g->M == 1 && g->K > 0 && !g->at && !g->accumulate) {
        const GemmImpl impl = gemm_impl();
        run_row(g, &impl);
        return;
    }
    if (g->K <= 0) {
        for (int i = 0; i < g->M && !g->accumulate; i++)
            for (int j = 0; j < g->N; j++) g->c[(size_t)i * g->ldc + j] = g->bias ? g->bias[j] : 0.0f;
        return;
    }
    const GemmImpl impl = gemm_impl();
    const double flops = 2.0 * g->M * g->N * g->K;
    const int threads = flops > 2.0e5 && !omp_in_parallel() ? omp_get_max_threads() : 1;  // never a nested region
    // An op(B) not packed already is packed by each tile for its rows: one row tile once there are
    // enough column tiles to share, so each slice of it is packed once.
    const bool whole_rows = !g->packed && (g->N + impl.nr - 1) / impl.nr >= 4 * threads;
    const TileGrid grid = threads > 1 ? grid_for(g, &impl, threads, whole_rows) : (TileGrid){0};
    const int rows_at_once = whole_rows ? MB_MAX / impl.mr * impl.mr : 0;
    const int tiles = grid.row_tiles * grid.col_tiles;
    if (threads == 1 || tiles == 1) {  // one thread: each column tile's op(B) packed once for all rows
        // Its rows in chunks of mb, halved while there are fewer than two tiles: cache-sized.
        const int mr = impl.mr, panels = (g->N + impl.nr - 1) / impl.nr, most = NB_MAX / impl.nr;
        int mb = MB_MAX / mr * mr;
        const TileGrid one = {g->N, impl.nr, panels, (panels + most - 1) / most, g->M, mr, 0, 1};
        while (mb > mr && ((g->M + mb - 1) / mb) * one.col_tiles < 2) mb = (mb / 2 + mr - 1) / mr * mr;
        for (int t = 0; t < one.col_tiles; t++) {
            int j0, nb;
            grid_columns(&one, t, &j0, &nb);
            tile(g, 0, g->M, mb, j0, nb, t + 1 < one.col_tiles ? j0 + nb : -1, &impl);
        }
        return;
    }
#pragma omp parallel num_threads(threads)
    {  // each thread a run of tiles, so a tile knows the next one its thread runs
        const int n = omp_get_num_threads(), me = omp_get_thread_num(), ct = grid.col_tiles;
        const int t0 = (int)((long)tiles * me / n), t1 = (int)((long)tiles * (me + 1) / n);
        for (int t = t0; t < t1; t++) {
            int i0, rows, j0, nb, next_j0 = -1, next_nb;
            grid_rows(&grid, t / ct, &i0, &rows);
            grid_columns(&grid, t % ct, &j0, &nb);
            if (t + 1 < t1) grid_columns(&grid, (t + 1) % ct, &next_j0, &next_nb);
            tile(g, i0, rows, whole_rows ? rows_at_once : rows, j0, nb, next_j0, &impl);
        }
    }
}

void sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, const float *bias, int M, int N,
           int K, bool b_transposed) {
    run(&(Gemm){c, ldc, a, b, bias, lda, ldb, M, N, K, false, b_transposed, false, NULL});
}

void sgemm_half(float *c, int ldc, const float *a, int lda, const uint16_t *b, int ldb, HalfKind kind, const float *bias,
                int M, int N, int K, bool b_transposed) {
    run(&(Gemm){c, ldc, a, NULL, bias, lda, ldb, M, N, K, false, b_transposed, false, NULL, b, kind});
}

size_t sgemm_packed_floats(int N, int K) { return (size_t)padded_n(N, gemm_impl().nr) * (size_t)(K > 0 ? K : 0); }

float *sgemm_packed_new(int N, int K) {
    const size_t floats = sgemm_packed_floats(N, K), bytes = (sizeof(float) * (floats ? floats : 1) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    mem_prefer_huge(p, bytes);
    return p;
}

// The panels are split over the cores (each thread a run of them), as a weight's packing is
// a large copy that reads and writes memory: a copy, so the split changes nothing in it.
void sgemm_pack(float *packed, const float *b, int ldb, int N, int K, bool b_transposed) {
    const Gemm g = {.b = b, .ldb = ldb, .N = N, .K = K, .bt = b_transposed};
    const int nr = gemm_impl().nr, np = padded_n(N, nr), panels = np / nr;
    const int threads = PAR_N((size_t)N * (size_t)(K > 0 ? K : 0)) && panels > 1 ? omp_get_max_threads() : 1;
    const TileGrid grid = {N, nr, panels, threads, 0, 1, 0, 1};  // a thread's panels: a column tile's
    PAR_LOOP(threads > 1, "omp parallel for schedule(static)",
        for (int t = 0; t < threads; t++) {
            int j0, nb;
            grid_columns(&grid, t, &j0, &nb);
            for (int k0 = 0; k0 < K && nb > 0; k0 += KC) {
                const int kc = K - k0 < KC ? K - k0 : KC;
                gemm_pack_b(packed + (size_t)k0 * np + (size_t)j0 * kc, &g, j0, nb, k0, kc, nr);
            }
        }
    );
}

void sgemm_prepacked(float *c, int ldc, const float *a, int lda, const float *packed, const float *bias, int M, int N,
                     int K) {
    run(&(Gemm){c, ldc, a, NULL, bias, lda, 0, M, N, K, false, true, false, packed});
}

void sgemm_acc(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int M, int N, int K,
               bool b_transposed) {
    run(&(Gemm){c, ldc, a, b, NULL, lda, ldb, M, N, K, false, b_transposed, true, NULL});
}

void sgemm_tn(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int M, int N, int K,
              bool accumulate) {
    run(&(Gemm){c, ldc, a, b, NULL, lda, ldb, M, N, K, true, false, accumulate, NULL});
}
