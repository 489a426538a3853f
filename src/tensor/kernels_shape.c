// kernels_shape.c: the kernels that move numbers between axes (permute, chunk, repeat, concat)
// and pool over positions, with their gradients. Reshape needs no kernel: the numbers stay where they are.
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "kernels_backward.h"

// The x offset that out element o reads: o's coordinates in out's shape, each times the stride
// of the x axis it came from. (Permute is for teaching-sized tensors: clarity over speed.)
static size_t permuted_offset(size_t o, const int dims[4], const int perm[4], int nd) {
    int stride[4];
    for (int k = nd - 1, s = 1; k >= 0; k--) stride[k] = s, s *= dims[k];
    size_t at = 0;
    for (int k = nd - 1; k >= 0; k--) {
        const int size = dims[perm[k]];
        at += (o % (size_t)size) * (size_t)stride[perm[k]];
        o /= (size_t)size;
    }
    return at;
}

static size_t numel(const int dims[4], int nd) {
    size_t n = 1;
    for (int k = 0; k < nd; k++) n *= (size_t)dims[k];
    return n;
}

void permute_forward(float *out, const float *x, const int dims[4], const int perm[4], int nd) {
    const size_t n = numel(dims, nd);
    for (size_t o = 0; o < n; o++) out[o] = x[permuted_offset(o, dims, perm, nd)];
}

void permute_backward(float *dx, const float *dy, const int dims[4], const int perm[4], int nd) {
    const size_t n = numel(dims, nd);
    for (size_t o = 0; o < n; o++) dx[permuted_offset(o, dims, perm, nd)] += dy[o];
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

// The entry of x's axis (of size n) that out's entry j copies.
static int repeated_from(int j, int n, int times, bool interleave) { return interleave ? j / times : j % n; }

void repeat_forward(float *out, const float *x, int outer, int n, int inner, int times, bool interleave) {
    const int m = n * times;
    for (int o = 0; o < outer; o++)
        for (int j = 0; j < m; j++)
            memcpy(out + ((size_t)o * m + j) * inner, x + ((size_t)o * n + repeated_from(j, n, times, interleave)) * inner,
                   sizeof(float) * (size_t)inner);
}

void repeat_backward(float *dx, const float *dy, int outer, int n, int inner, int times, bool interleave) {
    const int m = n * times;
    for (int o = 0; o < outer; o++)
        for (int j = 0; j < m; j++) {
            float *d = dx + ((size_t)o * n + repeated_from(j, n, times, interleave)) * inner;
            const float *g = dy + ((size_t)o * m + j) * inner;
            for (int c = 0; c < inner; c++) d[c] += g[c];
        }
}

void concat_forward(float *out, const float *const *x, const int *n, int count, int outer, int inner) {
    int m = 0;
    for (int k = 0; k < count; k++) m += n[k];
    for (int o = 0, at = 0; o < outer; o++, at = 0)
        for (int k = 0; k < count; at += n[k], k++)
            memcpy(out + ((size_t)o * m + at) * inner, x[k] + (size_t)o * n[k] * inner, sizeof(float) * (size_t)n[k] * inner);
}

void concat_backward(float *const *dx, const float *dy, const int *n, int count, int outer, int inner) {
    int m = 0;
    for (int k = 0; k < count; k++) m += n[k];
    for (int o = 0, at = 0; o < outer; o++, at = 0)
        for (int k = 0; k < count; at += n[k], k++) {
            if (!dx[k]) continue;
            const size_t len = (size_t)n[k] * inner;
            float *d = dx[k] + (size_t)o * len;
            const float *g = dy + ((size_t)o * m + at) * inner;
            for (size_t c = 0; c < len; c++) d[c] += g[c];
        }
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
