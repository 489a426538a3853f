// kernels.c: the forward kernels declared (with the dimension legend) in kernels.h.
#include "kernels.h"

#include <math.h>
#include <string.h>

#include "layernorm8.h"
#include "par.h"
#include "simd.h"

void embedding_forward(float *out, const float *ids, const float *table, int T, int C,
                       float scale) {
    for (int t = 0; t < T; t++) {
        const float *row = table + (size_t)ids[t] * C;
        float *o = out + (size_t)t * C;
        for (int c = 0; c < C; c++) o[c] = row[c] * scale;
    }
}

void embedding_forward_half(float *out, const float *ids, const uint16_t *table, HalfKind kind, int T, int C, float scale) {
    for (int t = 0; t < T; t++) {
        float *o = out + (size_t)t * C;
        half_widen(o, table + (size_t)ids[t] * C, (size_t)C, kind);
        for (int c = 0; c < C; c++) o[c] *= scale;
    }
}

void positional_encoding(float *pe, int P, int C, float base) {
    const float log_base = (float)log((double)base);
    for (int i = 0; i < C; i += 2) {
        // Same float32 steps as torch.exp(-arange(0, C, 2) * ln(base) / C).
        const float w = expf(-((float)i * log_base) / (float)C);
        for (int p = 0; p < P; p++) {
            const float angle = (float)p * w;
            pe[(size_t)p * C + i] = sinf(angle);
            if (i + 1 < C) pe[(size_t)p * C + i + 1] = cosf(angle);
        }
    }
}

void add_forward(float *out, const float *a, const float *b, size_t n) {
    PAR_LOOP(PAR_N(n), "omp parallel for simd",
        for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
    );
}

void scale_forward(float *out, const float *x, float s, size_t n) {
    PAR_LOOP(PAR_N(n), "omp parallel for simd",
        for (size_t i = 0; i < n; i++) out[i] = x[i] * s;
    );
}

void linear_forward(float *out, const float *x, const float *w, const float *b, int T, int I,
                    int O) {
    sgemm(out, O, x, I, w, I, b, T, O, I, true);
}

void linear_forward_packed(float *out, const float *x, const float *packed, const float *b, int T, int I, int O) {
    sgemm_prepacked(out, O, x, I, packed, b, T, O, I);
}

// What linear computes; the run uses the blocked GEMM of gemm.c, held to this loop by tests.
void linear_reference(float *out, const float *x, const float *w, const float *b, int T, int I, int O) {
    for (int t = 0; t < T; t++)
        for (int o = 0; o < O; o++) {
            float sum = b ? b[o] : 0.0f;
            for (int i = 0; i < I; i++) sum += x[(size_t)t * I + i] * w[(size_t)o * I + i];
            out[(size_t)t * O + o] = sum;
        }
}

size_t matmul_batch_index(const int batch[2], int i, int j) {
    return (size_t)(batch[0] == 1 ? 0 : i) * (size_t)batch[1] + (size_t)(batch[1] == 1 ? 0 : j);
}

// What matmul computes, one product per head (a side with one head serves every head); the run
// uses the blocked GEMM of gemm.c.
void matmul_reference(float *out, const float *a, const float *bm, const int a_batch[2], const int b_batch[2], int M,
                      int N, int K, bool b_transposed) {
    const int B0 = a_batch[0] > b_batch[0] ? a_batch[0] : b_batch[0];
    const int B1 = a_batch[1] > b_batch[1] ? a_batch[1] : b_batch[1];
    for (int h0 = 0; h0 < B0; h0++)
        for (int h1 = 0; h1 < B1; h1++) {
            const float *ah = a + matmul_batch_index(a_batch, h0, h1) * M * K;
            const float *bh = bm + matmul_batch_index(b_batch, h0, h1) * K * N;
            float *oh = out + ((size_t)h0 * B1 + h1) * M * N;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    float sum = 0.0f;
                    for (int k = 0; k < K; k++)
                        sum += ah[(size_t)i * K + k] * (b_transposed ? bh[(size_t)j * K + k] : bh[(size_t)k * N + j]);
                    oh[(size_t)i * N + j] = sum;
                }
        }
}

void matmul_broadcast_forward(float *out, const float *a, const float *bm, const int a_batch[2], const int b_batch[2],
                              int M, int N, int K, bool b_transposed) {
    const int ldb = b_transposed ? K : N;
    const int B1 = a_batch[1] > b_batch[1] ? a_batch[1] : b_batch[1];
    const int B = (a_batch[0] > b_batch[0] ? a_batch[0] : b_batch[0]) * B1;
    // Heads side by side, each product on one thread (sgemm does not split one inside a region).
    PAR_LOOP(B > 1 && 2.0 * B * M * N * K > 4e5, "omp parallel for schedule(static)",
        for (int i = 0; i < B; i++)
            sgemm(out + (size_t)i * M * N, N, a + matmul_batch_index(a_batch, i / B1, i % B1) * M * K, K,
                  bm + matmul_batch_index(b_batch, i / B1, i % B1) * K * N, ldb, NULL, M, N, K, b_transposed);
    );
}

void matmul_forward(float *out, const float *a, const float *bm, int B, int M, int N, int K, bool b_transposed) {
    const int batch[2] = {1, B};
    matmul_broadcast_forward(out, a, bm, batch, batch, M, N, K, b_transposed);
}

void transpose_forward(float *out, const float *x, int B, int M, int N) {
    for (int b = 0; b < B; b++) {
        const float *xb = x + (size_t)b * M * N;
        float *ob = out + (size_t)b * M * N;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) ob[(size_t)j * M + i] = xb[(size_t)i * N + j];
    }
}

void mask_forward(float *out, const float *x, const float *key_ids, float pad_id, bool causal,
                  int H, int Tq, int Tk) {
    const int shift = Tk - Tq;  // query q is position q + shift among the keys
    PAR_LOOP(PAR_N((size_t)H * Tq * Tk), "omp parallel for collapse(2)",
        for (int h = 0; h < H; h++)
            for (int q = 0; q < Tq; q++) {
                const size_t row = ((size_t)h * Tq + q) * Tk;
                // Keys past `seen` are the future: not read, only hidden (a causal map's upper half).
                const int seen = !causal ? Tk : q + shift + 1 < 0 ? 0 : q + shift + 1 < Tk ? q + shift + 1 : Tk;
                for (int k = 0; k < seen; k++) out[row + k] = key_ids && key_ids[k] == pad_id ? -INFINITY : x[row + k];
                for (int k = seen; k < Tk; k++) out[row + k] = -INFINITY;
            }
    );
}

static float row_max(const float *x, int n) {
    float m = -INFINITY;
    for (int i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

// What softmax computes; the run uses the vectorised softmax_forward of softmax.c, held to this
// loop by tests.
void softmax_reference(float *out, const float *x, int rows, int n) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * n;
        float *o = out + (size_t)r * n;
        const float m = row_max(xr, n);
        if (m == -INFINITY) {  // every key masked: attend to nothing
            for (int i = 0; i < n; i++) o[i] = 0.0f;
            continue;
        }
        float sum = 0.0f;
        for (int i = 0; i < n; i++) {
            o[i] = expf(xr[i] - m);
            sum += o[i];
        }
        const float inv = 1.0f / sum;
        for (int i = 0; i < n; i++) o[i] *= inv;
    }
}

void log_softmax_forward(float *out, const float *x, int rows, int n) {
    PAR_LOOP(PAR_ROWS((size_t)rows * n), "omp parallel for",
        for (int r = 0; r < rows; r++) {
            const float *xr = x + (size_t)r * n;
            float *o = out + (size_t)r * n;
            const float m = row_max(xr, n);
            if (m == -INFINITY) {
                for (int i = 0; i < n; i++) o[i] = -INFINITY;
                continue;
            }
            float sum = 0.0f;
            for (int i = 0; i < n; i++) sum += expf(xr[i] - m);
            const float lse = m + logf(sum);
            for (int i = 0; i < n; i++) o[i] = xr[i] - lse;
        }
    );
}

static inline __attribute__((always_inline)) void stats_rows(float *mean, float *std, float *inv, const float *x,
                                                              int R, int C, float eps, LayerNormForm form) {
    float ss[LN_ROWS] = {0};
    if (R == LN_ROWS && ln8_ok(C)) ln8_moments(mean, ss, x, C);  // the same chains, a row a lane
    else {
        for (int r = 0; r < R; r++) mean[r] = 0.0f;
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++) mean[r] += x[(size_t)r * C + c];
        for (int r = 0; r < R; r++) mean[r] /= (float)C;
        for (int c = 0; c < C; c++)
            for (int r = 0; r < R; r++) {
                const float d = x[(size_t)r * C + c] - mean[r];
                ss[r] += d * d;
            }
    }
    for (int r = 0; r < R; r++) {
        std[r] = C > 1 ? sqrtf(ss[r] / (float)(C - 1)) : 0.0f;
        inv[r] = form == LN_TORCH ? 1.0f / sqrtf(ss[r] / (float)C + eps) : 1.0f / (std[r] + eps);
    }
}

void layernorm_stats(float mean[LN_ROWS], float std[LN_ROWS], float inv[LN_ROWS], const float *x, int R, int C,
                     float eps, LayerNormForm form) {
    if (R == LN_ROWS) stats_rows(mean, std, inv, x, LN_ROWS, C, eps, form);  // four chains the compiler sees
    else stats_rows(mean, std, inv, x, R, C, eps, form);
}

void layernorm_forward(float *out, const float *x, const float *g, const float *b, int T, int C,
                       float eps, LayerNormForm form) {
    const int groups = (T + LN_ROWS - 1) / LN_ROWS;
    PAR_LOOP(PAR_ROWS((size_t)T * C), "omp parallel for",
        for (int q = 0; q < groups; q++) {
            const int t0 = q * LN_ROWS, R = T - t0 < LN_ROWS ? T - t0 : LN_ROWS;
            const float *xq = x + (size_t)t0 * C;
            float mean[LN_ROWS], std[LN_ROWS], inv[LN_ROWS];
            layernorm_stats(mean, std, inv, xq, R, C, eps, form);
            for (int r = 0; r < R; r++) {
                const float *xr = xq + (size_t)r * C;
                float *o = out + (size_t)(t0 + r) * C;
                if (b)
                    for (int c = 0; c < C; c++) o[c] = g[c] * ((xr[c] - mean[r]) * inv[r]) + b[c];
                else
                    for (int c = 0; c < C; c++) o[c] = g[c] * ((xr[c] - mean[r]) * inv[r]);
            }
        }
    );
}

void relu_forward(float *out, const float *x, size_t n) {
    PAR_LOOP(PAR_N(n), "omp parallel for simd",
        for (size_t i = 0; i < n; i++) out[i] = x[i] > 0.0f ? x[i] : 0.0f;
    );
}

void gelu_forward(float *out, const float *x, size_t n) {
    PAR_LOOP(PAR_N(n), "omp parallel for",
        for (size_t i = 0; i < n; i++) out[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
    );
}

// Rows of a head are short (d_k floats): plain loops beat a call to memcpy per row.
void split_heads_forward(float *out, const float *x, int T, int H, int D) {
    PAR_LOOP(PAR_N((size_t)T * H * D), "omp parallel for collapse(2)",
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                float *o = out + ((size_t)h * T + t) * D;
                const float *s = x + (size_t)t * H * D + (size_t)h * D;
                for (int d = 0; d < D; d++) o[d] = s[d];
            }
    );
}

void merge_heads_forward(float *out, const float *x, int T, int H, int D) {
    PAR_LOOP(PAR_N((size_t)T * H * D), "omp parallel for collapse(2)",
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                float *o = out + (size_t)t * H * D + (size_t)h * D;
                const float *s = x + ((size_t)h * T + t) * D;
                for (int d = 0; d < D; d++) o[d] = s[d];
            }
    );
}

// The first index of the greatest value; 0 when x[0] is NaN or nothing is greater than it (NaN is
// never greater). As the plain loop `if (x[v] > x[best]) best = v` answers, in two passes that
// vectorise: the greatest value, W lanes at a time (a NaN never taken), then the first index
// holding it (-0 and +0 are equal to it alike, as to the loop). A row of GPT-2's 50257 logits was
// a scalar scan with a branch.
#define DEFINE_ROW_ARGMAX(NAME, W, ATTR)                                    \
    ATTR static int NAME(const float *x, int n) {                           \
        typedef float vf __attribute__((vector_size(4 * W)));               \
        typedef float vfu __attribute__((vector_size(4 * W), aligned(4)));  \
        typedef int vi __attribute__((vector_size(4 * W)));                 \
        if (n <= 1 || isnan(x[0])) return 0;                                \
        vf m;                                                               \
        for (int k = 0; k < W; k++) m[k] = -INFINITY;                       \
        int v = 0;                                                          \
        for (; v + W <= n; v += W) {                                        \
            const vf xv = *(const vfu *)(x + v);                            \
            const vi gt = xv > m;                                           \
            m = (vf)((gt & (vi)xv) | (~gt & (vi)m));                        \
        }                                                                   \
        float most = x[0];                                                  \
        for (int k = 0; k < W; k++) most = m[k] > most ? m[k] : most;       \
        for (; v < n; v++) most = x[v] > most ? x[v] : most;                \
        if (!(most > x[0])) return 0;                                       \
        for (v = 1; x[v] != most; v++) {}                                   \
        return v;                                                           \
    }
DEFINE_ROW_ARGMAX(row_argmax4, 4, )
#if defined(__x86_64__)
DEFINE_ROW_ARGMAX(row_argmax8, 8, __attribute__((target("avx2"))))
#endif

int row_argmax(const float *x, int n) {
#if defined(__x86_64__)
    if (simd_level() >= SIMD_AVX2) return row_argmax8(x, n);
#endif
    return row_argmax4(x, n);
}

void argmax_forward(float *out, const float *x, int T, int V) {
    PAR_LOOP(PAR_ROWS((size_t)T * V), "omp parallel for schedule(static)",  // 1024 rows of 50257 logits: 51 million
        for (int t = 0; t < T; t++) out[t] = (float)row_argmax(x + (size_t)t * V, V);
    );
}
