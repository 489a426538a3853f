// test_broadcast.c: matmul's broadcasting over leading axes, repeat and concat, as kernels.
// Each forward against a naive twin (the broadcast operand copied out whole, then the plain
// product of tests/ref.c; explicit index loops for repeat and concat), each gradient against
// central differences, and every case of tests/fixtures/ops/kernels.safetensors (PyTorch's
// torch.matmul, repeat_interleave, Tensor.repeat and torch.cat, with autograd's gradients)
// through the op table's shape rules and the stage's own dispatch (op_infer, op_exec).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels_backward.h"
#include "ops.h"
#include "ref.h"
#include "rng.h"
#include "safetensors.h"

static Rng rng = {515};

static float *rnd(size_t n) {
    float *p = malloc(sizeof(float) * (n ? n : 1));
    for (size_t i = 0; i < n; i++) p[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    return p;
}

static int max2(int a, int b) { return a > b ? a : b; }

// x [X0, X1, R, C] copied out to [O0, O1, R, C], an axis of size 1 repeated: what broadcasting
// means, written out.
static float *expand(const float *x, const int xb[2], const int ob[2], int R, int C) {
    const size_t mat = (size_t)R * C;
    float *out = malloc(sizeof(float) * mat * (size_t)ob[0] * ob[1]);
    for (int i = 0; i < ob[0]; i++)
        for (int j = 0; j < ob[1]; j++) {
            const int si = xb[0] == 1 ? 0 : i, sj = xb[1] == 1 ? 0 : j;
            memcpy(out + ((size_t)i * ob[1] + j) * mat, x + ((size_t)si * xb[1] + sj) * mat, sizeof(float) * mat);
        }
    return out;
}

// The broadcast product, the naive way: both sides expanded, then one plain product per matrix.
static void naive_matmul(float *c, const float *a, const float *b, const int ab[2], const int bb[2], int M, int N,
                         int K, bool bt) {
    const int ob[2] = {max2(ab[0], bb[0]), max2(ab[1], bb[1])};
    float *ea = expand(a, ab, ob, M, K), *eb = expand(b, bb, ob, bt ? N : K, bt ? K : N);
    ref_matmul(c, ea, eb, NULL, ob[0] * ob[1], M, N, K, bt);
    free(ea), free(eb);
}

// L = sum(out * R): the loss whose gradient the backward kernels are fed (dL/dout = R).
typedef struct {
    const int *ab, *bb;
    int M, N, K;
    bool bt;
    float *a, *b, *out;
    const float *R;
    size_t n_out;
} MatmulCase;

static double matmul_loss(MatmulCase *c) {
    matmul_broadcast_forward(c->out, c->a, c->b, c->ab, c->bb, c->M, c->N, c->K, c->bt);
    double L = 0;
    for (size_t i = 0; i < c->n_out; i++) L += (double)c->out[i] * c->R[i];
    return L;
}

// The largest relative distance between an analytic gradient of x [n] and central differences.
static double worst_difference(MatmulCase *c, float *x, const float *analytic, size_t n) {
    double worst = 0;
    for (size_t k = 0; k < n; k++) {
        const float keep = x[k], h = 2e-3f;
        x[k] = keep + h;
        const double lp = matmul_loss(c);
        x[k] = keep - h;
        const double lm = matmul_loss(c);
        x[k] = keep;
        const double num = (lp - lm) / (2.0 * h);
        worst = fmax(worst, fabs(num - analytic[k]) / fmax(1.0, fabs(num)));
    }
    return worst;
}

// Every broadcast pattern: the blocked kernel and the panel's loop against the naive product;
// the gradients against differences; a fresh gradient (garbage in the buffer) written, not added.
static void test_matmul_kernels(void) {
    static const struct { int ab[2], bb[2]; bool bt; } cases[] = {
        {{1, 4}, {1, 1}, false}, {{1, 4}, {1, 1}, true}, {{1, 1}, {1, 3}, true}, {{2, 1}, {1, 3}, false},
        {{2, 3}, {2, 3}, true}, {{1, 1}, {1, 1}, false}, {{3, 1}, {3, 2}, true}};
    const int M = 3, N = 5, K = 4;
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const int *ab = cases[t].ab, *bb = cases[t].bb;
        const bool bt = cases[t].bt;
        const size_t na = (size_t)ab[0] * ab[1] * M * K, nb = (size_t)bb[0] * bb[1] * K * N;
        const size_t no = (size_t)max2(ab[0], bb[0]) * max2(ab[1], bb[1]) * M * N;
        float *a = rnd(na), *b = rnd(nb), *want = malloc(sizeof(float) * no), *got = malloc(sizeof(float) * no);
        float *loop = malloc(sizeof(float) * no);
        naive_matmul(want, a, b, ab, bb, M, N, K, bt);
        matmul_broadcast_forward(got, a, b, ab, bb, M, N, K, bt);
        matmul_reference(loop, a, b, ab, bb, M, N, K, bt);
        char what[96];
        snprintf(what, sizeof what, "matmul a {%d,%d} b {%d,%d}%s", ab[0], ab[1], bb[0], bb[1], bt ? " (b transposed)" : "");
        CHECK_CLOSE(got, want, (long)no, 1e-5, what);
        CHECK_CLOSE(loop, want, (long)no, 1e-5, "matmul_reference, the panel's loop");
        float *R = rnd(no), *da = calloc(na, sizeof(float)), *db = calloc(nb, sizeof(float));
        matmul_broadcast_backward(da, db, R, a, b, ab, bb, M, N, K, bt, false, false);
        MatmulCase c = {ab, bb, M, N, K, bt, a, b, got, R, no};
        CHECK(worst_difference(&c, a, da, na) < 5e-3, "%s: da against differences", what);
        CHECK(worst_difference(&c, b, db, nb) < 5e-3, "%s: db (summed over the heads it served) against differences",
              what);
        float *da2 = rnd(na), *db2 = rnd(nb);  // garbage: fresh gradients are written, not read
        for (size_t i = 0; i < na; i++) da2[i] += 7;
        for (size_t i = 0; i < nb; i++) db2[i] -= 7;
        matmul_broadcast_backward(da2, db2, R, a, b, ab, bb, M, N, K, bt, true, true);
        CHECK(max_abs_diff(da2, da, (long)na) < 1e-6 && max_abs_diff(db2, db, (long)nb) < 1e-6,
              "%s: fresh gradients equal gradients added to zero", what);
        free(a), free(b), free(want), free(got), free(loop), free(R), free(da), free(db), free(da2), free(db2);
    }
}

// repeat, the naive way: every out coordinate, and the x coordinate it reads.
static void naive_repeat(float *out, const float *x, const int *dims, int nd, int axis, int times, bool interleave) {
    int od[4] = {1, 1, 1, 1}, xd[4] = {1, 1, 1, 1};
    for (int k = 0; k < nd; k++) xd[k] = dims[k], od[k] = dims[k] * (k == axis ? times : 1);
    int i[4];
    size_t o = 0;
    for (i[0] = 0; i[0] < od[0]; i[0]++)
        for (i[1] = 0; i[1] < od[1]; i[1]++)
            for (i[2] = 0; i[2] < od[2]; i[2]++)
                for (i[3] = 0; i[3] < od[3]; i[3]++) {
                    size_t at = 0;
                    for (int k = 0; k < 4; k++) {
                        const int c = k != axis ? i[k] : interleave ? i[k] / times : i[k] % xd[k];
                        at = at * (size_t)xd[k] + (size_t)c;
                    }
                    out[o++] = x[at];
                }
}

static void test_repeat_kernels(void) {
    static const int dims[3] = {2, 3, 4};
    for (int axis = 0; axis < 3; axis++)
        for (int il = 0; il < 2; il++) {
            const int times = 3, n = 24;
            int outer, len, inner;
            const Shape s = shape3(2, 3, 4);
            axis_split(&s, axis, &outer, &len, &inner);
            float *x = rnd(n), want[72], got[72], dy[72], dx[24] = {0}, sum[24] = {0};
            naive_repeat(want, x, dims, 3, axis, times, il);
            repeat_forward(got, x, outer, len, inner, times, il);
            CHECK(!memcmp(got, want, sizeof got), "repeat axis %d %s matches the index formula", axis,
                  il ? "interleaved" : "tiled");
            for (int i = 0; i < 72; i++) dy[i] = (float)(i % 7) - 3.0f;
            repeat_backward(dx, dy, outer, len, inner, times, il);
            // The gradient of entry k of x is the sum of dy where the forward copied entry k: mark each
            // entry with its own index and repeat the marks.
            float marks[24], where[72];
            for (int i = 0; i < 24; i++) marks[i] = (float)i;
            naive_repeat(where, marks, dims, 3, axis, times, il);
            for (int i = 0; i < 72; i++) sum[(int)where[i]] += dy[i];
            CHECK(!memcmp(dx, sum, sizeof dx), "repeat axis %d %s: each entry collects its copies' gradients", axis,
                  il ? "interleaved" : "tiled");
            free(x);
        }
}

static void test_concat_kernels(void) {
    // [2, n_k, 3] joined along axis 1: out row (o, j) is input k's row (o, j - start_k).
    const int n[3] = {1, 4, 2}, outer = 2, inner = 3, m = 7;
    float *x[3], want[2 * 7 * 3], got[2 * 7 * 3], dy[2 * 7 * 3], *dx[3];
    for (int k = 0; k < 3; k++) x[k] = rnd((size_t)outer * n[k] * inner), dx[k] = calloc((size_t)outer * n[k] * inner, 4);
    for (int o = 0; o < outer; o++)
        for (int j = 0, k = 0, start = 0; j < m; j++) {
            if (j - start == n[k]) start += n[k], k++;
            for (int c = 0; c < inner; c++)
                want[(o * m + j) * inner + c] = x[k][(o * n[k] + j - start) * inner + c];
        }
    concat_forward(got, (const float *const *)x, n, 3, outer, inner);
    CHECK(!memcmp(got, want, sizeof got), "concat puts each input's rows in its place");
    for (int i = 0; i < 42; i++) dy[i] = (float)i;
    float *some[3] = {dx[0], NULL, dx[2]};  // the middle input's gradient not wanted
    concat_backward(some, dy, n, 3, outer, inner);
    concat_forward(got, (const float *const *)dx, n, 3, outer, inner);  // the slices put back together
    bool back = true;
    for (int o = 0; o < outer; o++)
        for (int j = 0; j < m; j++)
            for (int c = 0; c < inner; c++) {
                const float g = got[(o * m + j) * inner + c];
                back = back && g == (j >= 1 && j < 5 ? 0.0f : dy[(o * m + j) * inner + c]);
            }
    CHECK(back, "concat's gradient: each input its slice of dy, none for the one not wanted");
    for (int k = 0; k < 3; k++) free(x[k]), free(dx[k]);
}

// ---- PyTorch's answers, through the op table ----

static const StEntry *need(const StFile *f, const char *fmt, int k, const char *what) {
    char name[64];
    snprintf(name, sizeof name, fmt, k, what);
    const StEntry *en = st_find(f, name);
    CHECK(en != NULL, "the fixture has %s", name);
    return en;
}

// A stage of op reading the fixture's inputs (its attributes and shape still to set).
static void fixture_stage(Stage *st, Op op, const StEntry *const *in, int n) {
    memset(st, 0, sizeof *st);
    st->op = op, st->n_in = n;
    for (int j = 0; j < n; j++) st->in_shape[j] = in[j]->shape, snprintf(st->in_name[j], STAGE_ID_MAX, "in%d", j);
}

// Its shape, inferred as a program's would be, must be PyTorch's.
static bool infer(Stage *st, const StEntry *out, const char *what) {
    Err e = {{0}};
    const bool ok = op_infer(st, NULL, what, &e);
    CHECK(ok, "%s: %s", what, e.msg);
    char a[64], b[64];
    CHECK(ok && shape_eq(&st->shape, &out->shape), "%s: %s here, %s in PyTorch", what, shape_str(&st->shape, a, sizeof a),
          shape_str(&out->shape, b, sizeof b));
    return ok && shape_eq(&st->shape, &out->shape);
}

static void fixture_matmul(const StFile *f, int k) {
    const StEntry *in[2] = {need(f, "matmul.%d.%s", k, "a"), need(f, "matmul.%d.%s", k, "b")};
    const StEntry *out = need(f, "matmul.%d.%s", k, "out"), *r = need(f, "matmul.%d.%s", k, "r");
    const StEntry *da_want = need(f, "matmul.%d.%s", k, "da"), *db_want = need(f, "matmul.%d.%s", k, "db");
    char key[32], what[48];
    snprintf(key, sizeof key, "matmul.%d.bt", k);
    snprintf(what, sizeof what, "matmul case %d", k);
    if (!in[0] || !in[1] || !out || !r || !da_want || !db_want || !st_meta(f, key)) return;
    Stage st;
    fixture_stage(&st, OP_MATMUL, in, 2);
    st.attr.b_transposed = !strcmp(st_meta(f, key), "1");
    if (!infer(&st, out, what)) return;
    const size_t no = (size_t)shape_numel(&out->shape);
    float *got = malloc(sizeof(float) * no), *da = calloc((size_t)shape_numel(&in[0]->shape), 4);
    float *db = calloc((size_t)shape_numel(&in[1]->shape), 4);
    const float *const x[STAGE_MAX_IN] = {in[0]->data, in[1]->data};
    op_exec(&st, x, NULL, got, 1);
    CHECK_CLOSE(got, out->data, (long)no, 1e-5, what);
    int ab[2], bb[2], M, N, K;
    matmul_sizes(&st, ab, bb, &M, &N, &K);
    matmul_broadcast_backward(da, db, r->data, in[0]->data, in[1]->data, ab, bb, M, N, K, st.attr.b_transposed, false,
                              false);
    CHECK_CLOSE(da, da_want->data, shape_numel(&in[0]->shape), 1e-5, "PyTorch's da");
    CHECK_CLOSE(db, db_want->data, shape_numel(&in[1]->shape), 1e-5, "PyTorch's db (summed over broadcast axes)");
    free(got), free(da), free(db);
}

static void fixture_repeat(const StFile *f, int k) {
    const StEntry *x = need(f, "repeat.%d.%s", k, "x"), *out = need(f, "repeat.%d.%s", k, "out");
    const StEntry *r = need(f, "repeat.%d.%s", k, "r"), *dx_want = need(f, "repeat.%d.%s", k, "dx");
    char key[32], what[48];
    snprintf(key, sizeof key, "repeat.%d", k);
    const char *m = st_meta(f, key);
    int times, axis, il;
    if (!x || !out || !r || !dx_want || !m || sscanf(m, "%d %d %d", &times, &axis, &il) != 3) return;
    snprintf(what, sizeof what, "repeat case %d (times=%d axis=%d interleave=%d)", k, times, axis, il);
    Stage st;
    fixture_stage(&st, OP_REPEAT, &x, 1);
    st.attr.times = times, st.attr.axis = axis - x->shape.ndim, st.attr.interleave = il;  // counted from the end
    if (!infer(&st, out, what)) return;
    CHECK(st.attr.axis == axis, "%s: a negative axis counts from the end", what);
    const size_t no = (size_t)shape_numel(&out->shape), nx = (size_t)shape_numel(&x->shape);
    float *got = malloc(sizeof(float) * no), *dx = calloc(nx, sizeof(float));
    const float *const in[STAGE_MAX_IN] = {x->data};
    op_exec(&st, in, NULL, got, 1);
    CHECK(!memcmp(got, out->data, sizeof(float) * no), "%s: PyTorch's numbers exactly", what);
    int outer, len, inner;
    axis_split(&x->shape, st.attr.axis, &outer, &len, &inner);
    repeat_backward(dx, r->data, outer, len, inner, times, il);
    CHECK_CLOSE(dx, dx_want->data, (long)nx, 1e-5, "PyTorch's dx");
    free(got), free(dx);
}

static void fixture_concat(const StFile *f, int k) {
    const StEntry *in[3] = {0}, *dx_want[3] = {0}, *out = need(f, "concat.%d.%s", k, "out");
    const StEntry *r = need(f, "concat.%d.%s", k, "r");
    char key[32], what[48], name[32];
    snprintf(key, sizeof key, "concat.%d", k);
    int n = 0;
    for (; n < 3; n++) {
        snprintf(name, sizeof name, "concat.%d.x%d", k, n);
        if (!(in[n] = st_find(f, name))) break;
        snprintf(name, sizeof name, "concat.%d.dx%d", k, n);
        dx_want[n] = st_find(f, name);
    }
    CHECK(n >= 2 && out && r && st_meta(f, key), "concat case %d is whole", k);
    if (n < 2 || !out || !r || !st_meta(f, key)) return;
    snprintf(what, sizeof what, "concat case %d (%d tensors, axis=%s)", k, n, st_meta(f, key));
    Stage st;
    fixture_stage(&st, OP_CONCAT, in, n);
    st.attr.axis = atoi(st_meta(f, key));
    if (!infer(&st, out, what)) return;
    const size_t no = (size_t)shape_numel(&out->shape);
    float *got = malloc(sizeof(float) * no), *dx[STAGE_MAX_IN] = {0};
    const float *x[STAGE_MAX_IN] = {0};
    int len[STAGE_MAX_IN], outer, inner;
    for (int j = 0; j < n; j++) {
        x[j] = in[j]->data, dx[j] = calloc((size_t)shape_numel(&in[j]->shape), sizeof(float));
        axis_split(&in[j]->shape, st.attr.axis, &outer, &len[j], &inner);
    }
    op_exec(&st, x, NULL, got, 1);
    CHECK(!memcmp(got, out->data, sizeof(float) * no), "%s: PyTorch's numbers exactly", what);
    concat_backward(dx, r->data, len, n, outer, inner);
    for (int j = 0; j < n; j++) {
        CHECK(dx_want[j] && !memcmp(dx[j], dx_want[j]->data, sizeof(float) * (size_t)shape_numel(&in[j]->shape)),
              "%s: input %d's gradient is PyTorch's", what, j);
        free(dx[j]);
    }
    free(got);
}

static void test_fixtures(void) {
    StFile f;
    Err e = {{0}};
    const bool ok = st_load(&f, FIXTURES "/ops/kernels.safetensors", &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return;
    int counts[3] = {0};
    for (int i = 0; i < f.n_entries; i++) {
        const char *s = f.entries[i].name, *end = s + strlen(s);
        counts[0] += !strncmp(s, "matmul.", 7) && !strcmp(end - 4, ".out");
        counts[1] += !strncmp(s, "repeat.", 7) && !strcmp(end - 4, ".out");
        counts[2] += !strncmp(s, "concat.", 7) && !strcmp(end - 4, ".out");
    }
    CHECK(counts[0] == 6 && counts[1] == 5 && counts[2] == 3, "%d matmul, %d repeat and %d concat cases", counts[0],
          counts[1], counts[2]);
    for (int k = 0; k < counts[0]; k++) fixture_matmul(&f, k);
    for (int k = 0; k < counts[1]; k++) fixture_repeat(&f, k);
    for (int k = 0; k < counts[2]; k++) fixture_concat(&f, k);
    st_free(&f);
}

int main(void) {
    test_matmul_kernels();
    test_repeat_kernels();
    test_concat_kernels();
    test_fixtures();
    return check_finish("test_broadcast");
}
