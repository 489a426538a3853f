// kernels_backward.c: gradients of the forward kernels (see kernels_backward.h).
#include "kernels_backward.h"

#include <math.h>
#include <string.h>

#include "layernorm8.h"
#include "par.h"
#include "simd.h"

// db[o] += dy[0, o] + dy[1, o] + ..., each column's chain in row order. With AVX2 or AVX-512,
// 64 columns at a time (then 32) are held in registers over the rows, in the CPU's own vectors
// of W floats: the loop that read and wrote db at every row, in the baseline build's 4-float
// vectors, was 2% of a training step, and so was AVX2's when it used AVX-512's 16-float
// vectors, which it keeps on the stack (3.7% of a step's profile, against 0.6%). The chains
// are the same at every level.
#define COLUMN_SUMS(NAME, W, TARGET)                                                      \
    TARGET static inline __attribute__((always_inline)) int NAME##_run(float *db, const float *dy, int T, int O, \
                                                                        int o, const int NV) { \
        typedef float vf __attribute__((vector_size((W) * 4), aligned(4)));               \
        for (; o + NV * (W) <= O; o += NV * (W)) {                                        \
            vf acc[64 / (W)];                                                             \
            memcpy(acc, db + o, sizeof(vf) * NV);                                         \
            for (int t = 0; t < T; t++) {                                                 \
                const vf *row = (const vf *)(dy + (size_t)t * O + o);                     \
                _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) acc[v] += row[v];    \
            }                                                                             \
            memcpy(db + o, acc, sizeof(vf) * NV);                                         \
        }                                                                                 \
        return o;                                                                         \
    }                                                                                     \
    TARGET static void NAME(float *db, const float *dy, int T, int O) {                   \
        const int o = NAME##_run(db, dy, T, O, 0, 64 / (W));                              \
        column_sums_rest(db, dy, T, O, NAME##_run(db, dy, T, O, o, 32 / (W)));           \
    }

// Columns o0 .. O, a row at a time.
static inline __attribute__((always_inline)) void column_sums_rest(float *db, const float *dy, int T, int O, int o0) {
    for (int t = 0; t < T && o0 < O; t++) {
        const float *row = dy + (size_t)t * O;
        for (int j = o0; j < O; j++) db[j] += row[j];
    }
}

#if SIMD_X86
COLUMN_SUMS(column_sums_avx512, 16, __attribute__((target("avx512f"))))
COLUMN_SUMS(column_sums_avx2, 8, __attribute__((target("avx2"))))
#endif

static void column_sums(float *db, const float *dy, int T, int O) {
#if SIMD_X86
    if (simd_level() == SIMD_AVX512) column_sums_avx512(db, dy, T, O);
    else if (simd_level() == SIMD_AVX2) column_sums_avx2(db, dy, T, O);
    else
#endif
        column_sums_rest(db, dy, T, O, 0);
}

void embedding_backward(float *dtable, const float *dy, const float *ids, int T, int C, float scale) {
    for (int t = 0; t < T; t++) {
        float *row = dtable + (size_t)ids[t] * C;
        const float *g = dy + (size_t)t * C;
        for (int c = 0; c < C; c++) row[c] += g[c] * scale;
    }
}

void linear_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w, int T,
                     int I, int O, bool dx_fresh) {
    if (dx && dx_fresh) sgemm(dx, I, dy, O, w, I, NULL, T, I, O, false);  // [T, O] · [O, I]
    else if (dx) sgemm_acc(dx, I, dy, O, w, I, T, I, O, false);
    if (dw) sgemm_tn(dw, I, dy, O, x, I, O, I, T, true);  // dyᵀ [O, T] · x [T, I]
    if (db) column_sums(db, dy, T, O);
}

void matmul_broadcast_backward(float *da, float *db, const float *dc, const float *a, const float *bm,
                               const int a_batch[2], const int b_batch[2], int M, int N, int K, bool bt, bool da_fresh,
                               bool db_fresh) {
    const int B0 = a_batch[0] > b_batch[0] ? a_batch[0] : b_batch[0];
    const int B1 = a_batch[1] > b_batch[1] ? a_batch[1] : b_batch[1];
    for (int h0 = 0; h0 < B0; h0++)
        for (int h1 = 0; h1 < B1; h1++) {
            const size_t ia = matmul_batch_index(a_batch, h0, h1), ib = matmul_batch_index(b_batch, h0, h1);
            // A side's matrix is first reached where its broadcast axes are at 0: written then if fresh.
            const bool a_first = (a_batch[0] > 1 || h0 == 0) && (a_batch[1] > 1 || h1 == 0);
            const bool b_first = (b_batch[0] > 1 || h0 == 0) && (b_batch[1] > 1 || h1 == 0);
            const float *dci = dc + ((size_t)h0 * B1 + h1) * M * N, *ai = a + ia * M * K, *bi = bm + ib * K * N;
            float *dai = da ? da + ia * M * K : NULL, *dbi = db ? db + ib * K * N : NULL;
            // da = dc · op(b)ᵀ: op(b)ᵀ is b itself when transposed, else b read transposed
            if (dai && da_fresh && a_first) sgemm(dai, K, dci, N, bi, bt ? K : N, NULL, M, K, N, !bt);
            else if (dai) sgemm_acc(dai, K, dci, N, bi, bt ? K : N, M, K, N, !bt);
            const bool acc = !(db_fresh && b_first);
            if (dbi && bt) sgemm_tn(dbi, K, dci, N, ai, K, N, K, M, acc);  // b [N, K]: db += dcᵀ · a
            else if (dbi) sgemm_tn(dbi, N, ai, K, dci, N, K, N, M, acc);  // b [K, N]: db += aᵀ · dc
        }
}

void matmul_backward(float *da, float *db, const float *dc, const float *a, const float *bm, int B, int M, int N,
                     int K, bool bt, bool da_fresh, bool db_fresh) {
    const int batch[2] = {1, B};
    matmul_broadcast_backward(da, db, dc, a, bm, batch, batch, M, N, K, bt, da_fresh, db_fresh);
}

// A fresh dx holds nothing yet and is written, not read: 0 + v, the same bits as adding v to a
// cleared dx. Every kernel below has one loop for each case, so a fresh dx is never read.
#define INTO(fresh, dx, v) ((dx) = (fresh) ? 0.0f + (v) : (dx) + (v))

// A 0 the compiler cannot fold. GCC folds `0.0f + (c ? g : 0.0f)` into a branch, which stops
// the loop vectorising; `zero + (c ? g : 0.0f)` with zero read from here vectorises as the
// adding loop does, and is still the same bits as adding to a cleared buffer.
static volatile float unfolded_zero = 0.0f;

void transpose_backward(float *dx, const float *dy, int B, int M, int N, bool fresh) {
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) INTO(fresh, dx[((size_t)b * M + i) * N + j], dy[((size_t)b * N + j) * M + i]);
}

void add_backward(float *dx, const float *dy, size_t n, bool fresh) {
    if (fresh)
#pragma omp simd
        for (size_t i = 0; i < n; i++) dx[i] = 0.0f + dy[i];
    else
#pragma omp simd
        for (size_t i = 0; i < n; i++) dx[i] += dy[i];
}

void scale_backward(float *dx, const float *dy, float s, size_t n, bool fresh) {
    if (fresh)
#pragma omp simd
        for (size_t i = 0; i < n; i++) dx[i] = 0.0f + dy[i] * s;
    else
#pragma omp simd
        for (size_t i = 0; i < n; i++) dx[i] += dy[i] * s;
}

void mask_backward(float *dx, const float *dy, const float *y, size_t n, bool fresh) {
    const float zero = unfolded_zero;
    if (fresh)
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            const float g = dy[i];
            dx[i] = zero + (y[i] != -INFINITY ? g : 0.0f);
        }
    else
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            const float g = dy[i];
            dx[i] += y[i] != -INFINITY ? g : 0.0f;
        }
}

void softmax_backward(float *dx, const float *dy, const float *y, int rows, int n, bool fresh) {
    PAR_LOOP(PAR_ROWS((size_t)rows * n), "omp parallel for",
        for (int r = 0; r < rows; r++) {
            const float *yr = y + (size_t)r * n, *gr = dy + (size_t)r * n;
            float dot = 0.0f;
            for (int i = 0; i < n; i++) dot += gr[i] * yr[i];
            float *o = dx + (size_t)r * n;
            if (fresh)
                for (int i = 0; i < n; i++) o[i] = 0.0f + yr[i] * (gr[i] - dot);
            else
                for (int i = 0; i < n; i++) o[i] += yr[i] * (gr[i] - dot);
        }
    );
}

void log_softmax_backward(float *dx, const float *dy, const float *y, int rows, int n, bool fresh) {
    for (int r = 0; r < rows; r++) {
        const float *yr = y + (size_t)r * n, *gr = dy + (size_t)r * n;
        float sum = 0.0f;
        for (int i = 0; i < n; i++) sum += gr[i];
        float *o = dx + (size_t)r * n;
        for (int i = 0; i < n; i++)
            if (yr[i] != -INFINITY) INTO(fresh, o[i], gr[i] - expf(yr[i]) * sum);
            else if (fresh) o[i] = 0.0f;
    }
}

// Rows [0, R) of LayerNorm's gradient, R <= LN_ROWS. With dxhat = dy * g (the gradient at the
// normalised row) and d = x - mean: dx = inv * (dxhat - k * d), less its mean over the row.
// The rows run side by side (layernorm_stats): each row's sums are the same chain of adds in
// the same order as that row alone (so the same bits), but R independent chains keep the adder
// busy. dg and db take the rows in order, as one row at a time does.
static inline __attribute__((always_inline)) void layernorm_rows(float *dx, float *dg, float *db, const float *dy,
                                                                 const float *x, const float *g, int R, int C,
                                                                 float eps, LayerNormForm form, bool fresh) {
    float mean[LN_ROWS], s[LN_ROWS], inv[LN_ROWS], sum[LN_ROWS] = {0}, mean_dd[LN_ROWS] = {0}, k[LN_ROWS];
    layernorm_stats(mean, s, inv, x, R, C, eps, form);
    const bool lanes = R == LN_ROWS && ln8_ok(C);  // the same chains, a row a lane (layernorm8.h)
    if (lanes) ln8_dot(sum, dy, x, g, mean, C);
    else
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++) {
                const size_t i = (size_t)r * C + c;
                sum[r] += dy[i] * g[c] * (x[i] - mean[r]);
            }
    // dg and db take the rows in order, each column its own chain: a row at a time, the columns
    // side by side in vectors (the same chain for each column as a column at a time).
    for (int r = 0; dg && r < R; r++) {
        float *restrict acc = dg;
        const float *yr = dy + (size_t)r * C, *xr = x + (size_t)r * C;
        for (int c = 0; c < C; c++) acc[c] += yr[c] * (xr[c] - mean[r]) * inv[r];
    }
    if (db) column_sums(db, dy, R, C);  // the bias's gradient is a linear's: dy's column sums
    if (!dx) return;
    for (int r = 0; r < R; r++)  // d(loss)/d(x - mean), then through the mean
        k[r] = form == LN_TORCH ? inv[r] * inv[r] * sum[r] / (float)C
               : (s[r] > 0.0f ? inv[r] * sum[r] / (s[r] * (float)(C - 1)) : 0.0f);
    if (lanes) ln8_mean_dd(mean_dd, dy, x, g, mean, inv, k, C);
    else
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++) {
                const size_t i = (size_t)r * C + c;
                mean_dd[r] += inv[r] * (dy[i] * g[c] - k[r] * (x[i] - mean[r]));
            }
    for (int r = 0; r < R; r++) {
        mean_dd[r] /= (float)C;
        const float *yr = dy + (size_t)r * C, *xr = x + (size_t)r * C;
        float *o = dx + (size_t)r * C;
        if (fresh)
            for (int c = 0; c < C; c++) o[c] = 0.0f + (inv[r] * (yr[c] * g[c] - k[r] * (xr[c] - mean[r])) - mean_dd[r]);
        else
            for (int c = 0; c < C; c++) o[c] += inv[r] * (yr[c] * g[c] - k[r] * (xr[c] - mean[r])) - mean_dd[r];
    }
}

// Rows t0 .. t0+R of the batch (R <= LN_ROWS).
static void layernorm_group(float *dx, float *dg, float *db, const float *dy, const float *x, const float *g, int t0,
                            int R, int C, float eps, LayerNormForm form, bool fresh) {
    const size_t at = (size_t)t0 * C;
    float *dxt = dx ? dx + at : NULL;
    if (R == LN_ROWS) layernorm_rows(dxt, dg, db, dy + at, x + at, g, LN_ROWS, C, eps, form, fresh);
    else layernorm_rows(dxt, dg, db, dy + at, x + at, g, R, C, eps, form, fresh);
}

void layernorm_backward(float *dx, float *dg, float *db, const float *dy, const float *x, const float *g, int T,
                        int C, float eps, LayerNormForm form, bool dx_fresh) {
    const int groups = (T + LN_ROWS - 1) / LN_ROWS;
    if (!dg && !db) {  // rows are independent: split them over the cores
        PAR_LOOP(PAR_ROWS((size_t)T * C), "omp parallel for",
            for (int q = 0; q < groups; q++) {
                const int t0 = q * LN_ROWS;
                layernorm_group(dx, NULL, NULL, dy, x, g, t0, T - t0 < LN_ROWS ? T - t0 : LN_ROWS, C, eps, form,
                                dx_fresh);
            }
        );
        return;
    }
    for (int t0 = 0; t0 < T; t0 += LN_ROWS)
        layernorm_group(dx, dg, db, dy, x, g, t0, T - t0 < LN_ROWS ? T - t0 : LN_ROWS, C, eps, form, dx_fresh);
}

void relu_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh) {
    const float zero = unfolded_zero;
    if (fresh)
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            const float g = dy[i];  // loaded either way, so the choice needs no branch and vectorises
            dx[i] = zero + (x[i] > 0.0f ? g : 0.0f);
        }
    else
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            const float g = dy[i];
            dx[i] += x[i] > 0.0f ? g : 0.0f;
        }
}

void gelu_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh) {
    for (size_t i = 0; i < n; i++) {
        const float cdf = 0.5f * (1.0f + erff(x[i] * 0.70710678118654752f));
        const float pdf = expf(-0.5f * x[i] * x[i]) * 0.39894228040143268f;
        INTO(fresh, dx[i], dy[i] * (cdf + x[i] * pdf));
    }
}

void split_heads_backward(float *dx, const float *dy, int T, int H, int D, bool fresh) {
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            add_backward(dx + (size_t)t * H * D + (size_t)h * D, dy + ((size_t)h * T + t) * D, (size_t)D, fresh);
}

void merge_heads_backward(float *dx, const float *dy, int T, int H, int D, bool fresh) {
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            add_backward(dx + ((size_t)h * T + t) * D, dy + (size_t)t * H * D + (size_t)h * D, (size_t)D, fresh);
}

float cross_entropy(float *dlogits, const float *logits, const float *targets, int N, int V, float smoothing,
                    float ignore, int denominator, int *count) {
    int counted = 0;
    for (int r = 0; r < N; r++) counted += targets[r] != ignore;
    *count = counted;
    const int n = denominator > 0 ? denominator : counted;
    double loss = 0.0;
    for (int r = 0; r < N; r++) {
        const float *z = logits + (size_t)r * V;
        float *d = dlogits + (size_t)r * V;
        if (targets[r] == ignore || counted == 0) {
            memset(d, 0, sizeof(float) * (size_t)V);
            continue;
        }
        float m = z[0];
        for (int v = 1; v < V; v++) m = z[v] > m ? z[v] : m;
        double sum = 0.0;
        for (int v = 0; v < V; v++) sum += exp((double)(z[v] - m));
        const double lse = m + log(sum);
        double mean_logp = 0.0;
        for (int v = 0; v < V; v++) mean_logp += (z[v] - lse) / V;
        const int y = (int)targets[r];
        loss += -(1.0 - smoothing) * (z[y] - lse) - smoothing * mean_logp;
        for (int v = 0; v < V; v++) {
            const double q = (v == y ? 1.0 - smoothing : 0.0) + smoothing / V;
            d[v] = (float)((exp(z[v] - lse) - q) / n);
        }
    }
    return n ? (float)(loss / n) : 0.0f;
}
