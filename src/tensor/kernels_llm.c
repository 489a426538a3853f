// kernels_llm.c: the kernels of kernels_llm.h.
#include "kernels_llm.h"

#include <math.h>
#include <string.h>

#include "kernels.h"
#include "par.h"

#define INTO(fresh, d, v) ((d) = (fresh) ? 0.0f + (v) : (d) + (v))

static const float GELU_C = 0.7978845608028654f, GELU_K = 0.044715f;  // sqrt(2/pi), the cubic's

// x sigmoid(a) for a chunk, a = 2u for gelu_tanh and x for silu: the argument here (plain
// float arithmetic), the rest vectorised (sigmoid_times_forward, softmax.c), within a few units
// in the last place of x sigmoid(a) for the float a. The sigmoid form has no cancellation (1 +
// tanh(u) near -1 has); a chunk's results depend on its elements alone.
enum { ACT_CHUNK = 256 };
static void sigmoid_times(float *out, const float *x, size_t n, bool gelu) {
    float a[ACT_CHUNK];
    for (size_t i0 = 0; i0 < n; i0 += ACT_CHUNK) {
        const size_t m = n - i0 < ACT_CHUNK ? n - i0 : ACT_CHUNK;
        const float *v = x + i0;
        for (size_t i = 0; i < m; i++) a[i] = gelu ? 2.0f * GELU_C * (v[i] + GELU_K * v[i] * v[i] * v[i]) : v[i];
        sigmoid_times_forward(out + i0, v, a, m);
    }
}

// tanh(u) = 2 sigmoid(2u) - 1, so x/2 (1 + tanh(u)) = x sigmoid(2u): the exponential is the cost
// (GPT-2's [1024, 3072] is 3 million of them), split over the cores once there are enough, in
// chunks whose results do not depend on the split.
void gelu_tanh_forward(float *out, const float *x, size_t n) {
    const size_t chunks = (n + ACT_CHUNK - 1) / ACT_CHUNK;
    PAR_LOOP(PAR_ROWS(n), "omp parallel for schedule(static)",
        for (size_t c = 0; c < chunks; c++)
            sigmoid_times(out + c * ACT_CHUNK, x + c * ACT_CHUNK, n - c * ACT_CHUNK < ACT_CHUNK ? n - c * ACT_CHUNK : ACT_CHUNK, true);
    );
}

// What gelu_tanh and silu compute, as plain loops (the lesson panel shows these; test_kernels
// holds the vectorised kernels above to them within a few units in the last place). tanh u =
// 2 sigmoid(2u) - 1, so x/2 (1 + tanh u) = x / (1 + e^-2u), with no cancellation near -1.
void gelu_tanh_reference(float *out, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const float v = x[i], u = GELU_C * (v + GELU_K * v * v * v);
        out[i] = v / (1.0f + expf(-2.0f * u));  // = v (1 + tanh u) / 2
    }
}

void silu_reference(float *out, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = x[i] / (1.0f + expf(-x[i]));
}

void gelu_tanh_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh) {
    for (size_t i = 0; i < n; i++) {
        const float v = x[i], t = tanhf(GELU_C * (v + GELU_K * v * v * v));
        const float d = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * GELU_C * (1.0f + 3.0f * GELU_K * v * v);
        INTO(fresh, dx[i], dy[i] * d);
    }
}

void silu_forward(float *out, const float *x, size_t n) {
    const size_t chunks = (n + ACT_CHUNK - 1) / ACT_CHUNK;
    PAR_LOOP(PAR_ROWS(n), "omp parallel for schedule(static)",
        for (size_t c = 0; c < chunks; c++)
            sigmoid_times(out + c * ACT_CHUNK, x + c * ACT_CHUNK, n - c * ACT_CHUNK < ACT_CHUNK ? n - c * ACT_CHUNK : ACT_CHUNK, false);
    );
}

void silu_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh) {
    for (size_t i = 0; i < n; i++) {
        const float s = 1.0f / (1.0f + expf(-x[i]));
        INTO(fresh, dx[i], dy[i] * s * (1.0f + x[i] * (1.0f - s)));
    }
}

void ban_forward(float *out, const float *x, size_t rows, int n, int id) {
    for (size_t r = 0; r < rows; r++)
        for (int c = 0; c < n; c++) out[r * (size_t)n + (size_t)c] = c == id ? -INFINITY : x[r * (size_t)n + (size_t)c];
}

void ban_backward(float *dx, const float *dy, size_t rows, int n, int id, bool fresh) {
    for (size_t r = 0; r < rows; r++)
        for (int c = 0; c < n; c++) {
            const size_t k = r * (size_t)n + (size_t)c;
            const float g = c == id ? 0.0f : dy[k];
            dx[k] = fresh ? g : dx[k] + g;
        }
}

void mul_forward(float *out, const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = a[i] * b[i];
}

void mul_backward(float *da, float *db, const float *dy, const float *a, const float *b, size_t n, bool da_fresh,
                  bool db_fresh) {
    for (size_t i = 0; da && i < n; i++) INTO(da_fresh, da[i], dy[i] * b[i]);
    for (size_t i = 0; db && i < n; i++) INTO(db_fresh, db[i], dy[i] * a[i]);
}

// 1 / sqrt(mean(x^2) + eps) of one row, summed in float as PyTorch's float32 mean does (to
// within rounding; the tests allow for it).
static float rms_inv(const float *x, int C, float eps) {
    double ss = 0.0;
    for (int c = 0; c < C; c++) ss += (double)x[c] * x[c];
    return 1.0f / sqrtf((float)(ss / C) + eps);
}

void rms_norm_forward(float *out, const float *x, const float *g, int T, int C, float eps) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * C;
        float *o = out + (size_t)t * C;
        const float r = rms_inv(xr, C, eps);
        for (int c = 0; c < C; c++) o[c] = g[c] * (xr[c] * r);
    }
}

void rms_norm_backward(float *dx, float *dg, const float *dy, const float *x, const float *g, int T, int C, float eps,
                       bool dx_fresh) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * C, *gy = dy + (size_t)t * C;
        const float r = rms_inv(xr, C, eps);
        if (dg)
            for (int c = 0; c < C; c++) dg[c] += gy[c] * xr[c] * r;
        if (!dx) continue;
        double dot = 0.0;  // sum of (g dy) x
        for (int c = 0; c < C; c++) dot += (double)g[c] * gy[c] * xr[c];
        const float k = (float)(dot / C) * r * r * r;
        float *d = dx + (size_t)t * C;
        for (int c = 0; c < C; c++) INTO(dx_fresh, d[c], r * g[c] * gy[c] - xr[c] * k);
    }
}

float rope_angle(int p, int i, int D, float theta) {
    const float inv_freq = 1.0f / powf(theta, (float)(2 * i) / (float)D);  // float32, as Hugging Face's
    return (float)p * inv_freq;
}

void rope_pair(int i, int D, bool adjacent, int *c0, int *c1) {
    *c0 = adjacent ? 2 * i : i;
    *c1 = adjacent ? 2 * i + 1 : i + D / 2;
}

// y = R(sign * angle) x for every head, position and pair.
static void rotate(float *out, const float *x, int H, int T, int D, int pos0, float theta, bool adjacent, float sign,
                   bool add, bool fresh) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < D / 2; i++) {
            const float a = rope_angle(pos0 + t, i, D, theta), c = cosf(a), s = sign * sinf(a);
            int c0, c1;
            rope_pair(i, D, adjacent, &c0, &c1);
            for (int h = 0; h < H; h++) {
                const float *xr = x + ((size_t)h * T + t) * D;
                float *o = out + ((size_t)h * T + t) * D;
                const float y0 = xr[c0] * c - xr[c1] * s, y1 = xr[c1] * c + xr[c0] * s;
                if (add) INTO(fresh, o[c0], y0), INTO(fresh, o[c1], y1);
                else o[c0] = y0, o[c1] = y1;
            }
        }
}

void rope_forward(float *out, const float *x, int H, int T, int D, int pos0, float theta, bool adjacent) {
    rotate(out, x, H, T, D, pos0, theta, adjacent, 1.0f, false, false);
}

void rope_backward(float *dx, const float *dy, int H, int T, int D, int pos0, float theta, bool adjacent, bool fresh) {
    rotate(dx, dy, H, T, D, pos0, theta, adjacent, -1.0f, true, fresh);
}

void linear_in_out_forward(float *out, const float *x, const float *w, const float *b, int T, int I, int O, int ldw) {
    sgemm(out, O, x, I, w, ldw, b, T, O, I, false);
}

void linear_in_out_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w, int T,
                            int I, int O, int ldw, bool dx_fresh) {
    if (dx && dx_fresh) sgemm(dx, I, dy, O, w, ldw, NULL, T, I, O, true);  // dy [T, O] wᵀ: w is [I, O] = op [O, I]ᵀ
    else if (dx) sgemm_acc(dx, I, dy, O, w, ldw, T, I, O, true);
    if (dw) sgemm_tn(dw, ldw, x, I, dy, O, I, O, T, true);  // xᵀ dy [I, O]
    for (int t = 0; db && t < T; t++)
        for (int o = 0; o < O; o++) db[o] += dy[(size_t)t * O + o];
}
