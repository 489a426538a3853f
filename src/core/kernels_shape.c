// kernels_shape.c: the kernels that move numbers between axes (permute, chunk) and pool over
// positions, with their gradients. Reshape needs no kernel: the numbers stay where they are.
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "kernels_backward.h"

// Strides of x's axes, and the x offset of every out element walked in out's order.
static void permute_strides(int stride_out[4], int size_out[4], const int dims[4], const int perm[4], int nd) {
    int stride_in[4];
    int s = 1;
    for (int k = nd - 1; k >= 0; k--) stride_in[k] = s, s *= dims[k];
    for (int k = 0; k < 4; k++) {
        size_out[k] = k < nd ? dims[perm[k]] : 1;
        stride_out[k] = k < nd ? stride_in[perm[k]] : 0;
    }
}

void permute_forward(float *out, const float *x, const int dims[4], const int perm[4], int nd) {
    int st[4], sz[4];
    permute_strides(st, sz, dims, perm, nd);
    size_t o = 0;
    for (int a = 0; a < sz[0]; a++)
        for (int b = 0; b < sz[1]; b++)
            for (int c = 0; c < sz[2]; c++) {
                const float *row = x + (size_t)a * st[0] + (size_t)b * st[1] + (size_t)c * st[2];
                for (int d = 0; d < sz[3]; d++) out[o++] = row[(size_t)d * st[3]];
            }
}

void permute_backward(float *dx, const float *dy, const int dims[4], const int perm[4], int nd) {
    int st[4], sz[4];
    permute_strides(st, sz, dims, perm, nd);
    size_t o = 0;
    for (int a = 0; a < sz[0]; a++)
        for (int b = 0; b < sz[1]; b++)
            for (int c = 0; c < sz[2]; c++) {
                float *row = dx + (size_t)a * st[0] + (size_t)b * st[1] + (size_t)c * st[2];
                for (int d = 0; d < sz[3]; d++) row[(size_t)d * st[3]] += dy[o++];
            }
}

void chunk_forward(float *out, const float *x, int R, int N, int k, int n) {
    const int w = N / n;
    for (int r = 0; r < R; r++) memcpy(out + (size_t)r * w, x + (size_t)r * N + (size_t)k * w, sizeof(float) * (size_t)w);
}

void chunk_backward(float *dx, const float *dy, int R, int N, int k, int n) {
    const int w = N / n;
    for (int r = 0; r < R; r++)
        for (int j = 0; j < w; j++) dx[(size_t)r * N + (size_t)k * w + j] += dy[(size_t)r * w + j];
}

static bool counts(const float *ids, float pad_id, int t) { return !ids || ids[t] != pad_id; }

void pool_forward(float *out, const float *x, const float *ids, float pad_id, int T, int C, bool mean) {
    int n = 0;
    for (int c = 0; c < C; c++) out[c] = mean ? 0.0f : -INFINITY;
    for (int t = 0; t < T; t++) {
        if (!counts(ids, pad_id, t)) continue;
        n++;
        const float *r = x + (size_t)t * C;
        for (int c = 0; c < C; c++) out[c] = mean ? out[c] + r[c] : (r[c] > out[c] ? r[c] : out[c]);
    }
    for (int c = 0; c < C; c++) out[c] = n == 0 ? 0.0f : mean ? out[c] / (float)n : out[c];
}

void pool_backward(float *dx, const float *dy, const float *x, const float *y, const float *ids, float pad_id,
                   int T, int C, bool mean) {
    int n = 0;
    for (int t = 0; t < T; t++) n += counts(ids, pad_id, t);
    if (n == 0) return;
    for (int c = 0; c < C; c++) {
        if (mean) {
            for (int t = 0; t < T; t++)
                if (counts(ids, pad_id, t)) dx[(size_t)t * C + c] += dy[c] / (float)n;
            continue;
        }
        for (int t = 0; t < T; t++)  // the first position that holds the maximum takes it all
            if (counts(ids, pad_id, t) && x[(size_t)t * C + c] == y[c]) {
                dx[(size_t)t * C + c] += dy[c];
                break;
            }
    }
}
