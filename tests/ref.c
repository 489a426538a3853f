// ref.c: naive reference implementations (see ref.h).
#include "ref.h"

#include <math.h>

void ref_matmul(float *c, const float *a, const float *b, const float *bias, int B, int M, int N,
                int K, bool bt) {
    for (int q = 0; q < B; q++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = bias ? bias[j] : 0.0;
                for (int k = 0; k < K; k++) {
                    double bv = bt ? b[((long)q * N + j) * K + k] : b[((long)q * K + k) * N + j];
                    s += (double)a[((long)q * M + i) * K + k] * bv;
                }
                c[((long)q * M + i) * N + j] = (float)s;
            }
}

void ref_embedding(float *out, const float *ids, const float *table, int T, int C, float scale) {
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) out[t * C + c] = table[(int)ids[t] * C + c] * scale;
}

void ref_positional(double *pe, int P, int C, double base) {
    for (int p = 0; p < P; p++)
        for (int c = 0; c < C; c++) {
            int i2 = c - c % 2;  // 2i
            double angle = p / pow(base, (double)i2 / C);
            pe[p * C + c] = c % 2 == 0 ? sin(angle) : cos(angle);
        }
}

void ref_transpose(float *out, const float *x, int B, int M, int N) {
    for (int b = 0; b < B; b++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) out[(b * N + j) * M + i] = x[(b * M + i) * N + j];
}

void ref_mask(float *out, const float *x, const float *key_ids, float pad, bool causal, int H,
              int Tq, int Tk) {
    for (int h = 0; h < H; h++)
        for (int q = 0; q < Tq; q++)
            for (int k = 0; k < Tk; k++) {
                int at = (h * Tq + q) * Tk + k;
                bool future = causal && k - (Tk - Tq) > q;
                bool padded = key_ids && key_ids[k] == pad;
                out[at] = future || padded ? -INFINITY : x[at];
            }
}

void ref_softmax(float *out, const float *x, int rows, int n, bool log_form) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (long)r * n;
        double m = -INFINITY, s = 0.0;
        for (int i = 0; i < n; i++) m = xr[i] > m ? xr[i] : m;
        for (int i = 0; i < n && m > -INFINITY; i++) s += exp(xr[i] - m);
        for (int i = 0; i < n; i++) {
            if (m == -INFINITY) out[(long)r * n + i] = log_form ? -INFINITY : 0.0f;
            else if (log_form) out[(long)r * n + i] = (float)(xr[i] - m - log(s));
            else out[(long)r * n + i] = (float)(exp(xr[i] - m) / s);
        }
    }
}

void ref_layernorm(float *out, const float *x, const float *g, const float *b, int T, int C,
                   double eps, bool annotated) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (long)t * C;
        double mean = 0.0, ss = 0.0;
        for (int c = 0; c < C; c++) mean += xr[c];
        mean /= C;
        for (int c = 0; c < C; c++) ss += (xr[c] - mean) * (xr[c] - mean);
        double denom = annotated ? sqrt(ss / (C - 1)) + eps : sqrt(ss / C + eps);
        for (int c = 0; c < C; c++) out[(long)t * C + c] = (float)(g[c] * (xr[c] - mean) / denom + b[c]);
    }
}

void ref_gelu(float *out, const float *x, int n) {
    for (int i = 0; i < n; i++) out[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0))));
}

void ref_split_heads(float *out, const float *x, int T, int H, int D) {
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++) out[(h * T + t) * D + d] = x[t * (H * D) + h * D + d];
}

void ref_merge_heads(float *out, const float *x, int T, int H, int D) {
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++) out[t * (H * D) + h * D + d] = x[(h * T + t) * D + d];
}
