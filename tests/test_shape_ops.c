// test_shape_ops.c: the ops added for the implementations in the notes: permute, chunk, the
// pools, reshape, learned positional tables. Each kernel against a naive twin written from
// PyTorch's definition, each gradient against central differences, and each op end to end in
// a program against hand-computed values.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kernels_backward.h"
#include "rng.h"
#include "session.h"

static Rng rng = {77};

static float *rnd(size_t n) {
    float *p = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) p[i] = 2.0f * rng_uniform(&rng) - 1.0f;
    return p;
}

// Naive permute: for every out index, the x index it reads, by explicit coordinates.
static void permute_naive(float *out, const float *x, const int d[4], const int p[4], int nd) {
    int od[4] = {1, 1, 1, 1};
    for (int k = 0; k < nd; k++) od[k] = d[p[k]];
    long o = 0;
    int i[4];
    for (i[0] = 0; i[0] < od[0]; i[0]++)
        for (i[1] = 0; i[1] < od[1]; i[1]++)
            for (i[2] = 0; i[2] < od[2]; i[2]++)
                for (i[3] = 0; i[3] < od[3]; i[3]++) {
                    int xi[4] = {0, 0, 0, 0};
                    for (int k = 0; k < nd; k++) xi[p[k]] = i[k];
                    long at = 0;
                    for (int k = 0; k < nd; k++) at = at * d[k] + xi[k];
                    out[o++] = x[at];
                }
}

static void test_permute(void) {
    static const int dims[][4] = {{3, 5, 0, 0}, {2, 3, 4, 0}, {2, 3, 4, 5}};
    static const int perms[][4] = {{1, 0, 0, 0}, {1, 0, 2, 0}, {2, 0, 3, 1}};
    for (int c = 0; c < 3; c++) {
        const int nd = c + 2;
        int n = 1;
        for (int k = 0; k < nd; k++) n *= dims[c][k];
        float *x = rnd((size_t)n), *y = malloc(sizeof(float) * n), *z = malloc(sizeof(float) * n);
        float *dx = calloc((size_t)n, sizeof(float));
        permute_forward(y, x, dims[c], perms[c], nd);
        permute_naive(z, x, dims[c], perms[c], nd);
        CHECK(!memcmp(y, z, sizeof(float) * n), "permute case %d matches the naive index formula", c);
        permute_backward(dx, y, dims[c], perms[c], nd);  // the gradient y routes back to x exactly
        CHECK(!memcmp(dx, x, sizeof(float) * n), "permute case %d backward puts every number back", c);
        free(x), free(y), free(z), free(dx);
    }
}

static void test_chunk(void) {
    enum { R = 3, N = 12, PIECES = 3 };
    float *x = rnd(R * N), y[R * N / PIECES], dx[R * N] = {0};
    for (int k = 0; k < PIECES; k++) {
        chunk_forward(y, x, R, N, k, PIECES);
        bool same = true;
        for (int r = 0; r < R; r++)
            for (int j = 0; j < N / PIECES; j++) same = same && y[r * (N / PIECES) + j] == x[r * N + k * (N / PIECES) + j];
        CHECK(same, "chunk %d of %d is columns %d..%d", k, PIECES, k * N / PIECES, (k + 1) * N / PIECES - 1);
        chunk_backward(dx, y, R, N, k, PIECES);
    }
    CHECK(!memcmp(dx, x, sizeof dx), "the three chunks' gradients fill x again");
    free(x);
}

// Pools: the naive maximum and mean, with pad positions skipped; gradients by differences.
static void test_pool(bool mean) {
    enum { T = 5, C = 4 };
    float *x = rnd(T * C), y[C], want[C], dy[C], dx[T * C] = {0};
    const float ids[T] = {7, 1, 9, 1, 8};  // pad id 1 at positions 1 and 3
    for (int c = 0; c < C; c++) {
        float best = -INFINITY, sum = 0;
        for (int t = 0; t < T; t++)
            if (ids[t] != 1) best = fmaxf(best, x[t * C + c]), sum += x[t * C + c];
        want[c] = mean ? sum / 3 : best;
        dy[c] = 0.5f + (float)c;
    }
    pool_forward(y, x, ids, 1.0f, T, C, mean);
    CHECK_CLOSE(y, want, C, 1e-6, mean ? "mean_pool" : "max_pool");
    pool_backward(dx, dy, x, y, ids, 1.0f, T, C, mean);
    double worst = 0;
    for (int i = 0; i < T * C; i++) {
        const float keep = x[i], h = 1e-3f;
        float yp[C], ym[C];
        x[i] = keep + h, pool_forward(yp, x, ids, 1.0f, T, C, mean);
        x[i] = keep - h, pool_forward(ym, x, ids, 1.0f, T, C, mean);
        x[i] = keep;
        double num = 0;
        for (int c = 0; c < C; c++) num += (yp[c] - ym[c]) / (2.0 * h) * dy[c];
        worst = fmax(worst, fabs(num - dx[i]));
    }
    CHECK(worst < 1e-2, "%s backward agrees with differences (worst %.3g)", mean ? "mean_pool" : "max_pool", worst);
    float none[C];
    const float all_pad[T] = {1, 1, 1, 1, 1};
    pool_forward(none, x, all_pad, 1.0f, T, C, mean);
    CHECK(none[0] == 0 && none[C - 1] == 0, "nothing to pool gives 0, not -inf");
    free(x);
}

static const char *write_lesson_with(const char *config, const char *program) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/stepformer-shape-ops-%d.md", (int)getpid());
    FILE *f = fopen(path, "w");
    fprintf(f, "# t\n```lesson\nmodel: random\nconfig: %s\n"
               "seed: 4\nsrc_ids: 4,5,6\n```\n\nProse.\n\n```program\n%s```\n", config, program);
    fclose(f);
    return path;
}

static const char *write_lesson(const char *program) {
    return write_lesson_with("d_model=6 nhead=2 src_vocab_size=9 max_positions=5", program);
}

// The largest distance between a [P, W] table and the closed form PE[p, 2i] = sin(p / base^(2i/W)),
// PE[p, 2i+1] = cos(p / base^(2i/W)), in double.
static double pe_distance(const float *pe, int P, int W, double base) {
    double worst = 0;
    for (int p = 0; p < P; p++)
        for (int c = 0; c < W; c++) {
            const double angle = p / pow(base, (double)(c - c % 2) / W);
            worst = fmax(worst, fabs(pe[p * W + c] - (c % 2 ? cos(angle) : sin(angle))));
        }
    return worst;
}

// positional_table's defaults: max_positions rows, d_model columns, base 10000.
static void test_positional_defaults(void) {
    const char *path = write_lesson_with("d_model=8 src_vocab_size=9 max_positions=7",
                                         "input src\npe = positional_table()\npe_base = positional_table(base=1000)\n"
                                         "pe_small = positional_table(positions=3, width=4)\n");
    Session s;
    Err e = {{0}};
    SessionSpec spec = {.lesson_path = path};
    bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "positional_table with defaults: %s", e.msg);
    remove(path);
    if (!ok) return;
    static const struct { const char *id; int P, W; double base; } want[] = {
        {"pe", 7, 8, 10000}, {"pe_base", 7, 8, 1000}, {"pe_small", 3, 4, 10000}};
    for (int k = 0; k < 3; k++) {
        const int i = interp_find(s.it, want[k].id);
        const Stage *st = interp_stage(s.it, i);
        const bool shaped = st->shape.ndim == 2 && st->shape.dim[0] == want[k].P && st->shape.dim[1] == want[k].W;
        CHECK(shaped, "%s is [%d x %d]", want[k].id, want[k].P, want[k].W);
        if (!shaped) continue;
        const double d = pe_distance(interp_output(s.it, i), want[k].P, want[k].W, want[k].base);
        CHECK(d < 1e-6, "%s follows the formula with base %g (off by %.3g)", want[k].id, want[k].base, d);
    }
    // The worked example: d_model 8, position 1.
    const float row1[8] = {0.8415f, 0.5403f, 0.0998f, 0.9950f, 0.0100f, 0.99995f, 0.0010f, 0.9999995f};
    CHECK_CLOSE(interp_output(s.it, interp_find(s.it, "pe")) + 8, row1, 8, 1e-4, "row 1 of the d_model 8 table");
    CHECK(!strstr(s.model.note, "max_positions") && !strstr(s.model.note, "d_model"),
          "the defaults use max_positions and d_model, so they are not noted as unused: %s", s.model.note);
    session_close(&s);
}

// The ops in a program: reshape moves nothing, the right and the wrong merge of heads differ,
// a [1, P, d] table adds its first rows, and a learned table receives its gradient.
static void test_in_program(void) {
    const char *path = write_lesson(
        "input src\nparam @emb [src_vocab_size, d_model] normal(1)\nparam @pos [1, max_positions, d_model] normal(1)\n"
        "e = embedding(src, @emb, scale=1)\np = add_positions(e, @pos)\n"
        "r = reshape(p, -1, nhead, d_model/nhead)\nh = permute(r, 1, 0, 2)\nback = permute(h, 1, 0, 2)\n"
        "right = reshape(back, -1, d_model)\nwrong = reshape(h, -1, d_model)\nm = max_pool(p)\n");
    Session s;
    Err e = {{0}};
    SessionSpec spec = {.lesson_path = path};
    bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "program with the new ops: %s", e.msg);
    remove(path);
    if (!ok) return;
    const float *p = interp_output(s.it, interp_find(s.it, "p")), *emb = s.model.weights.entries[0].data;
    const float *pos = s.model.weights.entries[1].data;
    bool same = true;
    for (int t = 0; t < 3; t++)
        for (int c = 0; c < 6; c++) same = same && p[t * 6 + c] == emb[(4 + t) * 6 + c] + pos[t * 6 + c];
    CHECK(same, "add_positions reads the [1, P, d] table's first rows");
    CHECK(!memcmp(interp_output(s.it, interp_find(s.it, "right")), p, sizeof(float) * 18),
          "permute there and back, then reshape, gives the rows again");
    const float *wrong = interp_output(s.it, interp_find(s.it, "wrong"));
    // The wrong merge reads head-major: its row 0 is position 0 and 1 of head 0, then position 2.
    CHECK(wrong[0] == p[0] && wrong[3] == p[6] && memcmp(wrong, p, sizeof(float) * 18) != 0,
          "reshape without the permute scrambles positions and heads");
    const Stage *m = interp_stage(s.it, interp_find(s.it, "m"));
    CHECK(m->shape.ndim == 1 && m->shape.dim[0] == 6, "max_pool gives [d_model]");
    session_close(&s);
}

static void test_errors(void) {
    static const struct {
        const char *line, *want;
    } cases[] = {
        {"r = reshape(e, 4, -1)\n", "numbers do not fill the new shape"},
        {"r = reshape(e, -1, -1)\n", "-1 once"},
        {"r = permute(e, 0, 0)\n", "exactly once"},
        {"r = chunk(e, chunk=3, chunks=3)\n", "chunk=k of chunks=n"},
        {"r = max_pool(src)\n", "must have 2 dimensions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char program[256];
        snprintf(program, sizeof program, "input src\nparam @emb [src_vocab_size, d_model] xavier\n"
                                          "e = embedding(src, @emb)\n%s", cases[i].line);
        const char *path = write_lesson(program);
        Session s;
        Err e = {{0}};
        SessionSpec spec = {.lesson_path = path};
        bool ok = session_open(&s, &spec, &e);
        if (ok) session_close(&s);
        CHECK(!ok && strstr(e.msg, ":15:") && strstr(e.msg, cases[i].want), "'%s' is refused: %s", cases[i].line, e.msg);
        remove(path);
    }
}

int main(void) {
    CHECK(op_table_complete(), "every op has its row in op_info");
    test_permute();
    test_chunk();
    test_pool(false);
    test_pool(true);
    test_in_program();
    test_positional_defaults();
    test_errors();
    return check_finish("test_shape_ops");
}
