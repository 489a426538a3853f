// test_backward.c: every backward kernel against central finite differences of its forward
// kernel. The loss is L = sum(out * R) for a random R, so dL/dout = R is fed to the backward
// kernel, and each input's analytic gradient is compared with (L(x+h) - L(x-h)) / 2h.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels_backward.h"
#include "kernels_llm.h"
#include "rng.h"

static Rng rng = {2024};

static float *rnd(size_t n, float lo, float hi) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = lo + (hi - lo) * rng_uniform(&rng);
    return p;
}

static float *zeros(size_t n) { return calloc(n ? n : 1, sizeof(float)); }

// The forward of the kernel under test, writing its output.
typedef struct Case Case;
struct Case {
    void (*fwd)(const Case *c, float *out);
    float *in[3];  // the inputs (perturbed in place)
    int ints[6];
    float f;
    bool flag;
};

static double loss(const Case *c, float *out, const float *R, size_t nout) {
    c->fwd(c, out);
    double L = 0;
    for (size_t i = 0; i < nout; i++)
        if (isfinite(out[i])) L += (double)out[i] * R[i];
    return L;
}

// Compares the analytic gradient of input `which` with central differences at up to 80 places.
static void check_input(const char *what, Case *c, int which, size_t n, const float *analytic, const float *R,
                        size_t nout) {
    float *out = zeros(nout), *x = c->in[which];
    const float h = 2e-3f;
    double worst = 0;
    const size_t step = n > 80 ? n / 80 : 1;
    for (size_t k = 0; k < n; k += step) {
        const float keep = x[k];
        x[k] = keep + h;
        const double lp = loss(c, out, R, nout);
        x[k] = keep - h;
        const double lm = loss(c, out, R, nout);
        x[k] = keep;
        const double num = (lp - lm) / (2.0 * h), err = fabs(num - analytic[k]) / fmax(1.0, fabs(num));
        worst = fmax(worst, err);
    }
    CHECK(worst < 5e-3, "%s: finite differences disagree by %.3g (relative)", what, worst);
    free(out);
}

// ---- forwards ----
static void f_linear(const Case *c, float *out) {
    linear_forward(out, c->in[0], c->in[1], c->in[2], c->ints[0], c->ints[1], c->ints[2]);
}
static void f_matmul(const Case *c, float *out) {
    matmul_forward(out, c->in[0], c->in[1], c->ints[0], c->ints[1], c->ints[2], c->ints[3], c->flag);
}
static void f_softmax(const Case *c, float *out) { softmax_forward(out, c->in[0], c->ints[0], c->ints[1]); }
static void f_logsoftmax(const Case *c, float *out) { log_softmax_forward(out, c->in[0], c->ints[0], c->ints[1]); }
static void f_layernorm(const Case *c, float *out) {
    layernorm_forward(out, c->in[0], c->in[1], c->in[2], c->ints[0], c->ints[1], c->f, (LayerNormForm)c->ints[2]);
}
static void f_gelu(const Case *c, float *out) { gelu_forward(out, c->in[0], (size_t)c->ints[0]); }
static void f_relu(const Case *c, float *out) { relu_forward(out, c->in[0], (size_t)c->ints[0]); }
static void f_embed(const Case *c, float *out) {
    embedding_forward(out, c->in[0], c->in[1], c->ints[0], c->ints[1], c->f);
}
static void f_mask(const Case *c, float *out) {
    mask_forward(out, c->in[0], c->in[1], 1.0f, true, c->ints[0], c->ints[1], c->ints[2]);
}

static void test_linear(void) {
    const int T = 5, I = 7, O = 4;
    Case c = {f_linear, {rnd(T * I, -1, 1), rnd(O * I, -1, 1), rnd(O, -1, 1)}, {T, I, O}};
    float *R = rnd(T * O, -1, 1), *dx = zeros(T * I), *dw = zeros(O * I), *db = zeros(O), *s = zeros(O * T);
    linear_backward(dx, dw, db, R, c.in[0], c.in[1], T, I, O, false);
    check_input("linear dx", &c, 0, T * I, dx, R, T * O);
    check_input("linear dw", &c, 1, O * I, dw, R, T * O);
    check_input("linear db", &c, 2, O, db, R, T * O);
    float *dx2 = rnd(T * I, 5, 6);  // garbage: a fresh destination is written, not added to
    linear_backward(dx2, NULL, NULL, R, c.in[0], c.in[1], T, I, O, true);
    CHECK(max_abs_diff(dx2, dx, T * I) < 1e-6, "linear dx written fresh equals dx added to zero");
    free(dx2);
    free(R), free(dx), free(dw), free(db), free(s);
    for (int i = 0; i < 3; i++) free(c.in[i]);
    // The bias gradient at a width of whole blocks of 64 columns, one of 32 (each run in vector
    // registers on AVX2 and AVX-512) and a rest of 13, added to what db held: each column the
    // naive loop's chain, so the same bits.
    enum { T2 = 9, O2 = 2 * 64 + 32 + 13, I2 = 3 };
    float *dy = rnd(T2 * O2, -1, 1), *x = rnd(T2 * I2, -1, 1), *w = rnd(O2 * I2, -1, 1), *b2 = rnd(O2, -1, 1);
    float want[O2];
    memcpy(want, b2, sizeof want);
    for (int t = 0; t < T2; t++)
        for (int o = 0; o < O2; o++) want[o] += dy[t * O2 + o];
    linear_backward(NULL, NULL, b2, dy, x, w, T2, I2, O2, false);
    CHECK(!memcmp(want, b2, sizeof want), "linear db over %d columns differs from the naive loop's sums", O2);
    free(dy), free(x), free(w), free(b2);
}

static void test_matmul(bool bt) {
    const int B = 2, M = 3, N = 5, K = 4;
    Case c = {f_matmul, {rnd(B * M * K, -1, 1), rnd(B * K * N, -1, 1)}, {B, M, N, K}, 0, bt};
    float *R = rnd(B * M * N, -1, 1), *da = zeros(B * M * K), *db = zeros(B * K * N), *s = zeros(5 * 3);
    matmul_backward(da, db, R, c.in[0], c.in[1], B, M, N, K, bt, false, false);
    check_input(bt ? "matmul (b transposed) da" : "matmul da", &c, 0, B * M * K, da, R, B * M * N);
    check_input(bt ? "matmul (b transposed) db" : "matmul db", &c, 1, B * K * N, db, R, B * M * N);
    free(R), free(da), free(db), free(s), free(c.in[0]), free(c.in[1]);
}

static void test_rows(void) {
    const int rows = 4, n = 6;
    Case c = {f_softmax, {rnd(rows * n, -3, 3)}, {rows, n}};
    c.in[0][1] = -INFINITY;  // a masked entry passes nothing
    float *R = rnd(rows * n, -1, 1), *y = zeros(rows * n), *dx = zeros(rows * n);
    softmax_forward(y, c.in[0], rows, n);
    softmax_backward(dx, R, y, rows, n, false);
    c.in[0][1] = -30.0f;  // finite for the differences; its softmax weight is ~0 either way
    check_input("softmax", &c, 0, rows * n, dx, R, rows * n);
    c.fwd = f_logsoftmax;
    memset(dx, 0, sizeof(float) * rows * n);
    log_softmax_forward(y, c.in[0], rows, n);
    log_softmax_backward(dx, R, y, rows, n, false);
    check_input("log_softmax", &c, 0, rows * n, dx, R, rows * n);
    free(R), free(y), free(dx), free(c.in[0]);
}

static void test_layernorm(LayerNormForm form) {
    const int T = 3, C = 9;
    Case c = {f_layernorm, {rnd(T * C, -2, 3), rnd(C, 0.5f, 1.5f), rnd(C, -1, 1)}, {T, C, form}, 1e-5f};
    float *R = rnd(T * C, -1, 1), *dx = zeros(T * C), *dg = zeros(C), *db = zeros(C);
    layernorm_backward(dx, dg, db, R, c.in[0], c.in[1], T, C, c.f, form, false);
    const char *name = form == LN_TORCH ? "layer_norm (torch)" : "layer_norm (annotated)";
    char what[64];
    snprintf(what, sizeof what, "%s dx", name), check_input(what, &c, 0, T * C, dx, R, T * C);
    snprintf(what, sizeof what, "%s dg", name), check_input(what, &c, 1, C, dg, R, T * C);
    snprintf(what, sizeof what, "%s db", name), check_input(what, &c, 2, C, db, R, T * C);
    free(R), free(dx), free(dg), free(db);
    for (int i = 0; i < 3; i++) free(c.in[i]);
    // Wide rows, dx alone (the rows split over threads) against the checked path with dg and db.
    const int TW = 64, CW = 2048;
    float *x = rnd(TW * CW, -2, 3), *g = rnd(CW, 0.5f, 1.5f), *dy = rnd(TW * CW, -1, 1);
    float *alone = zeros(TW * CW), *with = zeros(TW * CW), *gw = zeros(CW), *bw = zeros(CW);
    layernorm_backward(alone, NULL, NULL, dy, x, g, TW, CW, 1e-5f, form, false);
    layernorm_backward(with, gw, bw, dy, x, g, TW, CW, 1e-5f, form, false);
    CHECK(!memcmp(alone, with, sizeof(float) * TW * CW), "%s: wide rows, dx alone equals dx with dg, db", name);
    free(x), free(g), free(dy), free(alone), free(with), free(gw), free(bw);
    // Rows run side by side in groups (LN_ROWS; eight as the lanes of an AVX2 vector when the
    // rows are whole blocks of eight columns): rows at once, dg and db included, forward and
    // backward, are the same bits as each row on its own.
    const int shapes[][2] = {{7, 33}, {19, 40}, {16, 64}};
    for (int s = 0; s < 3; s++) {
        const int T7 = shapes[s][0], C7 = shapes[s][1];
        float *x7 = rnd(T7 * C7, -2, 3), *g7 = rnd(C7, 0.5f, 1.5f), *dy7 = rnd(T7 * C7, -1, 1), *b7 = rnd(C7, -1, 1);
        float *dx_all = zeros(T7 * C7), *dg_all = zeros(C7), *db_all = zeros(C7);
        float *dx_one = zeros(T7 * C7), *dg_one = zeros(C7), *db_one = zeros(C7);
        float *y_all = zeros(T7 * C7), *y_one = zeros(T7 * C7);
        layernorm_backward(dx_all, dg_all, db_all, dy7, x7, g7, T7, C7, 1e-5f, form, false);
        layernorm_forward(y_all, x7, g7, b7, T7, C7, 1e-5f, form);
        for (int t = 0; t < T7; t++) {
            layernorm_backward(dx_one + t * C7, dg_one, db_one, dy7 + t * C7, x7 + t * C7, g7, 1, C7, 1e-5f, form, false);
            layernorm_forward(y_one + t * C7, x7 + t * C7, g7, b7, 1, C7, 1e-5f, form);
        }
        CHECK(!memcmp(dx_all, dx_one, sizeof(float) * T7 * C7) && !memcmp(dg_all, dg_one, sizeof(float) * C7) &&
                  !memcmp(db_all, db_one, sizeof(float) * C7) && !memcmp(y_all, y_one, sizeof(float) * T7 * C7),
              "%s: %d rows of %d at once are not the bits of one row at a time", name, T7, C7);
        free(x7), free(g7), free(dy7), free(b7), free(dx_all), free(dg_all), free(db_all);
        free(dx_one), free(dg_one), free(db_one), free(y_all), free(y_one);
    }
}

static void test_pointwise(void) {
    const int n = 50;
    Case c = {f_gelu, {rnd(n, -3, 3)}, {n}};
    for (int i = 0; i < n; i++)  // keep relu away from its kink
        if (fabsf(c.in[0][i]) < 0.05f) c.in[0][i] = 0.3f;
    float *R = rnd(n, -1, 1), *dx = zeros(n);
    gelu_backward(dx, R, c.in[0], n, false);
    check_input("gelu", &c, 0, n, dx, R, n);
    c.fwd = f_relu;
    memset(dx, 0, sizeof(float) * n);
    relu_backward(dx, R, c.in[0], n, false);
    check_input("relu", &c, 0, n, dx, R, n);
    free(R), free(dx), free(c.in[0]);
}

// ---- the kernels of real models' families (kernels_llm.h) ----
static void f_gelu_tanh(const Case *c, float *out) { gelu_tanh_forward(out, c->in[0], (size_t)c->ints[0]); }
static void f_silu(const Case *c, float *out) { silu_forward(out, c->in[0], (size_t)c->ints[0]); }
static void f_mul(const Case *c, float *out) { mul_forward(out, c->in[0], c->in[1], (size_t)c->ints[0]); }
static void f_rms(const Case *c, float *out) { rms_norm_forward(out, c->in[0], c->in[1], c->ints[0], c->ints[1], c->f); }
static void f_rope(const Case *c, float *out) {
    rope_forward(out, c->in[0], c->ints[0], c->ints[1], c->ints[2], c->ints[3], c->f, c->flag);
}
static void f_in_out(const Case *c, float *out) {  // columns 2..2+O of a [I, 9] weight
    linear_in_out_forward(out, c->in[0], c->in[1] + 2, c->in[2], c->ints[0], c->ints[1], c->ints[2], 9);
}

// ban: the forward is x with one column at -inf, exactly; the backward passes g but for that
// column, exactly (finite differences would meet the -inf).
static void test_ban(void) {
    enum { rows = 3, n = 7, id = 4 };
    float *x = rnd(rows * n, -2, 2), *g = rnd(rows * n, -1, 1), *y = zeros(rows * n), *dx = zeros(rows * n);
    ban_forward(y, x, rows, n, id);
    int wrong = 0;
    for (int i = 0; i < rows * n; i++) wrong += i % n == id ? !(isinf(y[i]) && y[i] < 0) : y[i] != x[i];
    for (int i = 0; i < rows * n; i++) dx[i] = 1.0f;  // accumulated onto: 1 + g, 1 in the banned column
    ban_backward(dx, g, rows, n, id, false);
    for (int i = 0; i < rows * n; i++) wrong += dx[i] != (i % n == id ? 1.0f : 1.0f + g[i]);
    ban_backward(dx, g, rows, n, id, true);
    for (int i = 0; i < rows * n; i++) wrong += dx[i] != (i % n == id ? 0.0f : g[i]);
    CHECK(!wrong, "ban: column %d at -inf, its gradient 0, every other entry passed (%d wrong)", id, wrong);
    free(x), free(g), free(y), free(dx);
}

// Each forward against its formula written out in double, and each backward against finite
// differences.
static void test_llm_ops(void) {
    enum { n = 60, T = 3, C = 8, H = 2, D = 6, I = 5, O = 4 };
    Case c = {f_gelu_tanh, {rnd(n, -4, 4), rnd(n, -2, 2)}, {n}};
    float *R = rnd(n * 2, -1, 1), *d0 = zeros(n), *d1 = zeros(n), *y = zeros(n);
    double worst = 0;
    gelu_tanh_forward(y, c.in[0], n);
    for (int i = 0; i < n; i++) {
        const double x = c.in[0][i];
        worst = fmax(worst, fabs(y[i] - 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)))));
    }
    silu_forward(y, c.in[0], n);
    for (int i = 0; i < n; i++) worst = fmax(worst, fabs(y[i] - c.in[0][i] / (1 + exp(-(double)c.in[0][i]))));
    CHECK(worst < 2e-6, "gelu_tanh and silu are their formulas (%.3g)", worst);
    gelu_tanh_backward(d0, R, c.in[0], n, false);
    check_input("gelu_tanh", &c, 0, n, d0, R, n);
    c.fwd = f_silu, memset(d0, 0, sizeof(float) * n);
    silu_backward(d0, R, c.in[0], n, false);
    check_input("silu", &c, 0, n, d0, R, n);
    c.fwd = f_mul, memset(d0, 0, sizeof(float) * n);
    mul_backward(d0, d1, R, c.in[0], c.in[1], n, false, true);
    check_input("mul da", &c, 0, n, d0, R, n);
    check_input("mul db", &c, 1, n, d1, R, n);
    free(c.in[0]), free(c.in[1]);
    // RMSNorm: y = g x / sqrt(mean(x^2) + eps).
    Case r = {f_rms, {rnd(T * C, -2, 2), rnd(C, 0.5f, 1.5f)}, {T, C}, 1e-5f};
    rms_norm_forward(y, r.in[0], r.in[1], T, C, r.f);
    worst = 0;
    for (int t = 0; t < T; t++) {
        double ms = 0;
        for (int k = 0; k < C; k++) ms += (double)r.in[0][t * C + k] * r.in[0][t * C + k] / C;
        for (int k = 0; k < C; k++) worst = fmax(worst, fabs(y[t * C + k] - r.in[1][k] * r.in[0][t * C + k] / sqrt(ms + 1e-5)));
    }
    CHECK(worst < 1e-5, "rms_norm is its formula (%.3g)", worst);
    memset(d0, 0, sizeof(float) * n), memset(d1, 0, sizeof(float) * n);
    rms_norm_backward(d0, d1, R, r.in[0], r.in[1], T, C, r.f, false);
    check_input("rms_norm dx", &r, 0, T * C, d0, R, T * C);
    check_input("rms_norm dg", &r, 1, C, d1, R, T * C);
    free(r.in[0]), free(r.in[1]);
    // RoPE, both pairings: a rotation, and a turned q . k depends only on how far apart they are.
    for (int adj = 0; adj < 2; adj++) {
        Case q = {f_rope, {rnd(H * T * D, -1, 1)}, {H, T, D, 3}, 10000.0f, adj == 1};
        rope_forward(y, q.in[0], H, T, D, 3, q.f, adj == 1);
        worst = 0;
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                double before = 0, after = 0;
                for (int k = 0; k < D; k++) before += pow(q.in[0][(h * T + t) * D + k], 2), after += pow(y[(h * T + t) * D + k], 2);
                worst = fmax(worst, fabs(before - after));
            }
        CHECK(worst < 1e-5, "rope keeps each row's length (a rotation), pairing %d (%.3g)", adj, worst);
        float a[D], b[D], qa[D], kb[D], qa2[D], kb2[D];
        for (int k = 0; k < D; k++) a[k] = q.in[0][k], b[k] = q.in[0][D + k];
        rope_forward(qa, a, 1, 1, D, 5, q.f, adj == 1), rope_forward(kb, b, 1, 1, D, 2, q.f, adj == 1);
        rope_forward(qa2, a, 1, 1, D, 9, q.f, adj == 1), rope_forward(kb2, b, 1, 1, D, 6, q.f, adj == 1);
        double s1 = 0, s2 = 0;
        for (int k = 0; k < D; k++) s1 += (double)qa[k] * kb[k], s2 += (double)qa2[k] * kb2[k];
        CHECK(fabs(s1 - s2) < 1e-5, "rope: q at 5 . k at 2 equals q at 9 . k at 6 (%g, %g)", s1, s2);
        memset(d0, 0, sizeof(float) * n);
        rope_backward(d0, R, H, T, D, 3, q.f, adj == 1, false);
        check_input(adj ? "rope (adjacent)" : "rope", &q, 0, H * T * D, d0, R, H * T * D);
        free(q.in[0]);
    }
    // A weight stored [in, out], one chunk of its columns: the same numbers as linear on Wᵀ.
    Case l = {f_in_out, {rnd(T * I, -1, 1), rnd(I * 9, -1, 1), rnd(O, -1, 1)}, {T, I, O}};
    float wt[O * I], *want = zeros(T * O), *dw = zeros(I * 9), *db = zeros(O);
    for (int o = 0; o < O; o++)
        for (int k = 0; k < I; k++) wt[o * I + k] = l.in[1][k * 9 + 2 + o];
    linear_reference(want, l.in[0], wt, l.in[2], T, I, O);
    linear_in_out_forward(y, l.in[0], l.in[1] + 2, l.in[2], T, I, O, 9);
    CHECK(max_abs_diff(y, want, T * O) < 1e-5, "linear on a weight stored [in, out] is linear on its transpose");
    memset(d0, 0, sizeof(float) * n);
    linear_in_out_backward(d0, dw + 2, db, R, l.in[0], l.in[1] + 2, T, I, O, 9, false);
    check_input("linear in_out dx", &l, 0, T * I, d0, R, T * O);
    check_input("linear in_out dw", &l, 1, I * 9, dw, R, T * O);  // the columns outside the chunk: 0
    check_input("linear in_out db", &l, 2, O, db, R, T * O);
    for (int i = 0; i < 3; i++) free(l.in[i]);
    free(want), free(dw), free(db), free(R), free(d0), free(d1), free(y);
}

static void test_embedding_and_mask(void) {
    const int T = 6, C = 4, V = 5;
    float ids[6] = {0, 3, 3, 1, 4, 0};
    Case c = {f_embed, {ids, rnd(V * C, -1, 1)}, {T, C}, 2.0f};
    float *R = rnd(T * C, -1, 1), *dt = zeros(V * C);
    embedding_backward(dt, R, ids, T, C, 2.0f);
    check_input("embedding (repeated ids add up)", &c, 1, V * C, dt, R, T * C);
    free(R), free(dt), free(c.in[1]);
    const int H = 2, Tq = 3, Tk = 4;
    float keys[4] = {5, 1, 6, 7};  // key 1 is padding
    Case m = {f_mask, {rnd(H * Tq * Tk, -1, 1), keys}, {H, Tq, Tk}};
    float *Rm = rnd(H * Tq * Tk, -1, 1), *y = zeros(H * Tq * Tk), *dx = zeros(H * Tq * Tk);
    mask_forward(y, m.in[0], keys, 1.0f, true, H, Tq, Tk);
    mask_backward(dx, Rm, y, H * Tq * Tk, false);
    check_input("mask", &m, 0, H * Tq * Tk, dx, Rm, H * Tq * Tk);
    free(Rm), free(y), free(dx), free(m.in[0]);
}

static void test_copies(void) {
    // split/merge and transpose move numbers; their backward moves the gradient back.
    const int T = 3, H = 2, D = 4;
    float *x = rnd(T * H * D, -1, 1), *y = zeros(T * H * D), *dx = zeros(T * H * D);
    split_heads_forward(y, x, T, H, D);
    split_heads_backward(dx, y, T, H, D, false);  // gradient = the output itself: dx must equal x
    CHECK(memcmp(dx, x, sizeof(float) * T * H * D) == 0, "split_heads backward inverts it");
    memset(dx, 0, sizeof(float) * T * H * D);
    merge_heads_forward(y, x, T, H, D);
    merge_heads_backward(dx, y, T, H, D, false);
    CHECK(memcmp(dx, x, sizeof(float) * T * H * D) == 0, "merge_heads backward inverts it");
    memset(dx, 0, sizeof(float) * T * H * D);
    transpose_forward(y, x, 2, 3, 4);
    transpose_backward(dx, y, 2, 3, 4, false);
    CHECK(memcmp(dx, x, sizeof(float) * 24) == 0, "transpose backward inverts it");
    free(x), free(y), free(dx);
}

// A kernel writing a `fresh` gradient must give the same bits as adding into a cleared buffer,
// and must not read what the buffer held: it starts as NaNs here, which any read would leak.
#define FRESH_CASE(what, n, CALL)                                                                  \
    do {                                                                                           \
        for (size_t i_ = 0; i_ < (size_t)(n); i_++) added[i_] = 0.0f, written[i_] = NAN;           \
        {                                                                                          \
            float *dx = added;                                                                     \
            const bool fresh = false;                                                              \
            CALL;                                                                                  \
        }                                                                                          \
        {                                                                                          \
            float *dx = written;                                                                   \
            const bool fresh = true;                                                               \
            CALL;                                                                                  \
        }                                                                                          \
        CHECK(!memcmp(added, written, sizeof(float) * (size_t)(n)), "%s written fresh: the same bits as added to 0", \
              what);                                                                               \
    } while (0)

static void test_fresh(void) {
    enum { R = 4, C = 12, N = R * C, BIG = 64 * 64 };  // BIG: products past the small-product path
    float *x = rnd(BIG, -2, 2), *dy = rnd(BIG, -1, 1), *y = rnd(N, 0.01f, 1), *g = rnd(C, 0.5f, 1.5f);
    float *b = rnd(BIG, -1, 1), *added = zeros(BIG), *written = zeros(BIG);
    y[3] = -INFINITY, y[17] = -INFINITY;  // masked entries (mask, log_softmax)
    FRESH_CASE("add", N, add_backward(dx, dy, N, fresh));
    FRESH_CASE("scale", N, scale_backward(dx, dy, 0.125f, N, fresh));
    FRESH_CASE("mask", N, mask_backward(dx, dy, y, N, fresh));
    FRESH_CASE("softmax", N, softmax_backward(dx, dy, y, R, C, fresh));
    FRESH_CASE("log_softmax", N, log_softmax_backward(dx, dy, y, R, C, fresh));
    FRESH_CASE("layer_norm (torch)", N, layernorm_backward(dx, NULL, NULL, dy, x, g, R, C, 1e-5f, LN_TORCH, fresh));
    FRESH_CASE("layer_norm (annotated)", N,
               layernorm_backward(dx, NULL, NULL, dy, x, g, R, C, 1e-5f, LN_ANNOTATED, fresh));
    FRESH_CASE("relu", N, relu_backward(dx, dy, x, N, fresh));
    FRESH_CASE("gelu", N, gelu_backward(dx, dy, x, N, fresh));
    FRESH_CASE("split_heads", N, split_heads_backward(dx, dy, R, 3, 4, fresh));
    FRESH_CASE("merge_heads", N, merge_heads_backward(dx, dy, R, 3, 4, fresh));
    FRESH_CASE("transpose", N, transpose_backward(dx, dy, 2, 4, 6, fresh));
    for (int bt = 0; bt < 2; bt++) {
        FRESH_CASE(bt ? "matmul da (b transposed)" : "matmul da", N,
                   matmul_backward(dx, NULL, dy, x, b, 2, 4, 3, 6, bt, fresh, false));
        FRESH_CASE(bt ? "matmul db (b transposed)" : "matmul db", 36,
                   matmul_backward(NULL, dx, dy, x, b, 2, 4, 3, 6, bt, false, fresh));
        FRESH_CASE(bt ? "matmul da, 64 x 64 x 64 (b transposed)" : "matmul da, 64 x 64 x 64", BIG,
                   matmul_backward(dx, NULL, dy, x, b, 1, 64, 64, 64, bt, fresh, false));
        FRESH_CASE(bt ? "matmul db, 64 x 64 x 64 (b transposed)" : "matmul db, 64 x 64 x 64", BIG,
                   matmul_backward(NULL, dx, dy, x, b, 1, 64, 64, 64, bt, false, fresh));
    }
    free(x), free(dy), free(y), free(g), free(b), free(added), free(written);
}

static void test_cross_entropy(void) {
    const int N = 5, V = 7;
    float *z = rnd(N * V, -3, 3), *d = zeros(N * V), t[5] = {2, 1, 6, 1, 0}, *R = rnd(N * V, 0, 0);
    int count;
    const float ls = 0.1f;
    float L = cross_entropy(d, z, t, N, V, ls, 1.0f, 0, &count);  // id 1 is ignored
    CHECK(count == 3, "rows with the ignored id do not count (%d)", count);
    // Closed form for row 0 (target 2): -(0.9 log p2 + 0.1 mean_v log p_v), averaged with rows 2 and 4.
    double want = 0;
    for (int r = 0; r < N; r++) {
        if (t[r] == 1.0f) continue;
        double m = -1e30, s = 0, mean = 0;
        for (int v = 0; v < V; v++) m = fmax(m, z[r * V + v]);
        for (int v = 0; v < V; v++) s += exp(z[r * V + v] - m);
        for (int v = 0; v < V; v++) mean += (z[r * V + v] - m - log(s)) / V;
        want += -(1 - ls) * (z[r * V + (int)t[r]] - m - log(s)) - ls * mean;
    }
    CHECK(fabs(L - want / 3) < 1e-5, "loss %g, closed form %g", L, want / 3);
    double worst = 0;  // differences of the loss itself
    for (int k = 0; k < N * V; k++) {
        const float keep = z[k], h = 1e-3f;
        z[k] = keep + h;
        double lp = cross_entropy(R, z, t, N, V, ls, 1.0f, 0, &count);
        z[k] = keep - h;
        double lm = cross_entropy(R, z, t, N, V, ls, 1.0f, 0, &count);
        z[k] = keep;
        worst = fmax(worst, fabs((lp - lm) / (2 * h) - d[k]));
    }
    CHECK(worst < 2e-3, "cross-entropy gradient vs differences: %g", worst);
    // Split in two parts, each divided by the whole count, the losses and gradients add up.
    float *d2 = zeros(N * V);
    int c1, c2;
    float L1 = cross_entropy(d2, z, t, 2, V, ls, 1.0f, 3, &c1);
    float L2 = cross_entropy(d2 + 2 * V, z + 2 * V, t + 2, N - 2, V, ls, 1.0f, 3, &c2);
    CHECK(c1 + c2 == 3 && fabsf(L1 + L2 - L) < 1e-6f && max_abs_diff(d2, d, N * V) < 1e-7,
          "a batch in parts gives the same loss and gradient (%g + %g vs %g)", L1, L2, L);
    free(d2);
    free(z), free(d), free(R);
}

int main(void) {
    test_linear();
    test_matmul(false);
    test_matmul(true);
    test_rows();
    test_layernorm(LN_TORCH);
    test_layernorm(LN_ANNOTATED);
    test_pointwise();
    test_llm_ops();
    test_ban();
    test_embedding_and_mask();
    test_copies();
    test_fresh();
    test_cross_entropy();
    return check_finish("test_backward");
}
