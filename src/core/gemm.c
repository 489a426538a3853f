// gemm.c: the one matrix multiply behind linear and matmul.
//
//   C[M, N] = A[M, K] · op(B) (+ bias[N] on every row)
//
// Blocked for cache the usual way: K is cut into KC-deep slices; for each slice a panel of
// NR columns of op(B) is packed contiguously (so both layouts of B stream the same way),
// and an MR x NR register tile of C is accumulated by a micro-kernel written with GCC
// vector extensions. Three micro-kernels are built (AVX-512, AVX2+FMA, baseline SSE2) and
// picked once at run time from what the CPU supports. Work is split over (row block, column
// panel) tiles with OpenMP, so both cores are used; each C element is computed by one
// thread in a fixed order, so results do not depend on the thread count.
#include "kernels.h"

#include <string.h>

enum { MR = 6, KC = 256, MB = 96, NR_MAX = 32 };

typedef void (*MicroKernel)(int mr, int nr, int kc, const float *a, int lda,
                            const float *bp, float *c, int ldc, const float *bias, bool first);

// The micro-kernel body, instantiated for three vector widths. W floats per vector,
// NV vectors per row, so a tile is MR x (W * NV) and the packed panel has W * NV columns.
// Rows past mr re-read row mr-1 of A (never out of bounds) and are discarded; columns
// past nr are zero in the packed panel and are not stored.
#define DEFINE_MICRO_KERNEL(NAME, W, NV, TARGET)                                             \
    TARGET static void NAME(int mr, int nr, int kc, const float *a, int lda,              \
                            const float *bp, float *c, int ldc, const float *bias,        \
                            bool first) {                                                 \
        typedef float vf __attribute__((vector_size((W) * 4)));                           \
        enum { NRK = (W) * (NV) };                                                        \
        const float *ar[MR];                                                              \
        for (int r = 0; r < MR; r++) ar[r] = a + (size_t)(r < mr ? r : mr - 1) * lda;     \
        float tile[MR][NRK];                                                              \
        for (int r = 0; r < MR; r++)                                                      \
            for (int j = 0; j < NRK; j++)                                                 \
                tile[r][j] = first ? (bias && j < nr ? bias[j] : 0.0f)                    \
                                   : (r < mr && j < nr ? c[(size_t)r * ldc + j] : 0.0f);  \
        vf acc[MR][NV];                                                                   \
        memcpy(acc, tile, sizeof acc);                                                    \
        for (int k = 0; k < kc; k++) {                                                    \
            vf bv[NV];                                                                    \
            memcpy(bv, bp + (size_t)k * NRK, sizeof bv);                                  \
            for (int r = 0; r < MR; r++) {                                                \
                vf av = (vf){0} + ar[r][k];                                               \
                for (int v = 0; v < (NV); v++) acc[r][v] += av * bv[v];                   \
            }                                                                             \
        }                                                                                 \
        memcpy(tile, acc, sizeof tile);                                                   \
        for (int r = 0; r < mr; r++) memcpy(c + (size_t)r * ldc, tile[r], (size_t)nr * 4); \
    }

DEFINE_MICRO_KERNEL(micro_avx512, 16, 2, __attribute__((target("avx512f,fma"))))
DEFINE_MICRO_KERNEL(micro_avx2, 8, 2, __attribute__((target("avx2,fma"))))
DEFINE_MICRO_KERNEL(micro_base, 4, 4, )

typedef struct {
    MicroKernel kernel;
    int nr;            // columns per packed panel
    const char *name;
} GemmImpl;

static GemmImpl gemm_impl(void) {
    static GemmImpl impl;  // chosen once; the same answer every time, so a benign race
    if (!impl.kernel) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f"))
            impl = (GemmImpl){micro_avx512, 32, "avx512"};
        else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            impl = (GemmImpl){micro_avx2, 16, "avx2"};
        else
            impl = (GemmImpl){micro_base, 16, "baseline"};
    }
    return impl;
}

const char *sgemm_kernel_name(void) { return gemm_impl().name; }

// Packs op(B)[k0 .. k0+kc, j0 .. j0+nr] into dst [kc, NR], zero-filling columns past nr.
static void pack_panel(float *dst, const float *b, int ldb, bool bt, int k0, int kc, int j0,
                       int nr, int NR) {
    if (bt) {
        memset(dst, 0, sizeof(float) * (size_t)kc * NR);
        for (int j = 0; j < nr; j++) {
            const float *row = b + (size_t)(j0 + j) * ldb + k0;
            for (int k = 0; k < kc; k++) dst[(size_t)k * NR + j] = row[k];
        }
    } else {
        for (int k = 0; k < kc; k++) {
            const float *row = b + (size_t)(k0 + k) * ldb + j0;
            float *d = dst + (size_t)k * NR;
            memcpy(d, row, sizeof(float) * (size_t)nr);
            for (int j = nr; j < NR; j++) d[j] = 0.0f;
        }
    }
}

// C = A op(B) + bias, or with accumulate C += A op(B).
static void gemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb,
                 const float *bias, int M, int N, int K, bool b_transposed, bool accumulate) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        for (int i = 0; i < M && !accumulate; i++)
            for (int j = 0; j < N; j++) c[(size_t)i * ldc + j] = bias ? bias[j] : 0.0f;
        return;
    }
    const GemmImpl impl = gemm_impl();
    const int NR = impl.nr;
    const int panels = (N + NR - 1) / NR;
    const int row_blocks = (M + MB - 1) / MB;
    const int tiles = panels * row_blocks;
    const double flops = 2.0 * M * N * K;
#pragma omp parallel for schedule(static) if (flops > 2.0e5 && tiles > 1)
    for (int t = 0; t < tiles; t++) {
        const int j0 = (t % panels) * NR, i_begin = (t / panels) * MB;
        const int nr = N - j0 < NR ? N - j0 : NR;
        const int i_end = i_begin + MB < M ? i_begin + MB : M;
        float packed[KC * NR_MAX];
        for (int k0 = 0; k0 < K; k0 += KC) {
            const int kc = K - k0 < KC ? K - k0 : KC;
            pack_panel(packed, b, ldb, b_transposed, k0, kc, j0, nr, NR);
            for (int i = i_begin; i < i_end; i += MR) {
                const int mr = i_end - i < MR ? i_end - i : MR;
                impl.kernel(mr, nr, kc, a + (size_t)i * lda + k0, lda, packed,
                            c + (size_t)i * ldc + j0, ldc, bias ? bias + j0 : NULL, k0 == 0 && !accumulate);
            }
        }
    }
}

void sgemm(float *c, int ldc, const float *a, int lda, const float *b, int ldb, const float *bias,
           int M, int N, int K, bool b_transposed) {
    gemm(c, ldc, a, lda, b, ldb, bias, M, N, K, b_transposed, false);
}

void sgemm_acc(float *c, int ldc, const float *a, int lda, const float *b, int ldb, int M, int N, int K,
               bool b_transposed) {
    gemm(c, ldc, a, lda, b, ldb, NULL, M, N, K, b_transposed, true);
}
