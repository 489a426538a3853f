// test_kernels.c: every forward kernel against its naive twin (ref.c) and closed-form facts.
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels.h"
#include "kernels_llm.h"
#include "par.h"
#include "ref.h"
#include "rng.h"
#include "safetensors.h"
#include "simd.h"

static Rng rng = {12345};

static float *rand_buf(long n, float lo, float hi) {
    float *p = malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (long i = 0; i < n; i++) p[i] = lo + (hi - lo) * rng_uniform(&rng);
    return p;
}

static void test_sgemm_shape(int M, int N, int K, bool bt, bool bias) {
    float *a = rand_buf((long)M * K, -1, 1), *b = rand_buf((long)K * N, -1, 1);
    float *bv = bias ? rand_buf(N, -1, 1) : NULL;
    float *c = rand_buf((long)M * N, 5, 6), *r = malloc(sizeof(float) * (size_t)M * N);
    sgemm(c, N, a, K, b, bt ? K : N, bv, M, N, K, bt);
    ref_matmul(r, a, b, bv, 1, M, N, K, bt);
    char what[96];
    snprintf(what, sizeof what, "sgemm M=%d N=%d K=%d %s%s", M, N, K, bt ? "B^T" : "B",
             bias ? " +bias" : "");
    CHECK_CLOSE(c, r, (long)M * N, 1e-5 * sqrt((double)K) + 1e-6, what);
    // op(B) packed once: the same bits as the blocked product (small ones take plain loops).
    float *pk = malloc(sizeof(float) * (sgemm_packed_floats(N, K) + 1)), *c2 = rand_buf((long)M * N, 5, 6);
    sgemm_pack(pk, b, bt ? K : N, N, K, bt);
    sgemm_prepacked(c2, N, a, K, pk, bv, M, N, K);
    snprintf(what, sizeof what, "packed M=%d N=%d K=%d %s%s", M, N, K, bt ? "B^T" : "B", bias ? " +bias" : "");
    CHECK_CLOSE(c2, r, (long)M * N, 1e-5 * sqrt((double)K) + 1e-6, what);
    if ((long)M * N * K > 32768) CHECK(!memcmp(c, c2, sizeof(float) * (size_t)M * N), "%s: not sgemm's bits", what);
    if (bt) {  // the reference loop the lesson panel shows for linear
        linear_reference(c2, a, b, bv, M, K, N);
        snprintf(what, sizeof what, "linear_reference M=%d N=%d K=%d", M, N, K);
        CHECK_CLOSE(c2, r, (long)M * N, 1e-5 * sqrt((double)K) + 1e-6, what);
    } else {
        const int one[2] = {1, 1};
        matmul_reference(c2, a, b, one, one, M, N, K, false);
        if (!bias) CHECK_CLOSE(c2, r, (long)M * N, 1e-5 * sqrt((double)K) + 1e-6, "matmul_reference");
    }
    free(a), free(b), free(bv), free(c), free(r), free(pk), free(c2);
}

static void test_sgemm(void) {
    // Edges of every blocking parameter: MR = 6, MB = 132 (and the halves tiles shrink to), NR = 16/32, KC = 512.
    const int Ms[] = {1, 5, 6, 7, 66, 132, 133, 270}, Ns[] = {1, 15, 16, 17, 31, 32, 33, 100};
    const int Ks[] = {1, 3, 64, 511, 512, 513, 1100};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) {
            int K = Ks[(i + 3 * j) % 7];
            test_sgemm_shape(Ms[i], Ns[j], K, (i + j) % 2 == 0, j % 3 == 0);
            test_sgemm_shape(Ms[i], Ns[j], Ks[(i * j) % 7], (i + j) % 2 == 1, j % 3 == 1);
        }
    test_sgemm_shape(3, 4, 0, false, true);  // K = 0: bias only
    // Wide and over one row tile (MB = 132): unpacked, each thread takes columns over all the
    // rows (gemm.c's whole_rows), packed it takes row tiles; the same bits either way.
    test_sgemm_shape(300, 520, 300, false, false);
    test_sgemm_shape(150, 2100, 96, true, true);
}

#ifdef _OPENMP  // (the browser's build runs one thread)
// One product on 1 thread and on `threads`: packing and the product, bit for bit.
static void sgemm_threads_shape(int M, int N, int K, bool bt, bool packed, int threads) {
    float *a = rand_buf((long)M * K, -1, 1), *b = rand_buf((long)K * N, -1, 1), *bias = rand_buf(N, -1, 1);
    float *pk[2] = {malloc(sizeof(float) * sgemm_packed_floats(N, K)), malloc(sizeof(float) * sgemm_packed_floats(N, K))};
    float *c[2] = {malloc(sizeof(float) * M * N), malloc(sizeof(float) * M * N)};
    const int was = omp_get_max_threads();
    for (int v = 0; v < 2; v++) {
        omp_set_num_threads(v ? threads : 1);
        if (packed) {
            sgemm_pack(pk[v], b, bt ? K : N, N, K, bt);
            sgemm_prepacked(c[v], N, a, K, pk[v], bias, M, N, K);
        } else sgemm(c[v], N, a, K, b, bt ? K : N, bias, M, N, K, bt);
    }
    omp_set_num_threads(was);
    CHECK(!packed || memcmp(pk[0], pk[1], sizeof(float) * sgemm_packed_floats(N, K)) == 0,
          "sgemm_pack %dx%d differs between 1 and %d threads", K, N, threads);
    CHECK(memcmp(c[0], c[1], sizeof(float) * M * N) == 0, "sgemm%s %dx%dx%d differs between 1 and %d threads",
          packed ? "_prepacked" : "", M, N, K, threads);
    free(a), free(b), free(bias), free(pk[0]), free(pk[1]), free(c[0]), free(c[1]);
}

// Every element of C is computed by one thread in a fixed order, so the bits do not depend on
// how many cores share the product: the tile grid for 2 to 16 threads, on the base model's
// shapes (a linear at 32 and 128 tokens, the feed-forward, the vocabulary's 1000 columns) and
// on ragged ones, some cut into row tiles (129 and 200 rows). Sixteen threads on this
// machine's cores only share them; the grid is the same.
static void test_sgemm_threads(void) {
    const int counts[] = {2, 3, 4, 5, 8, 16};
    for (int t = 0; t < (int)(sizeof counts / sizeof *counts); t++) {
        sgemm_threads_shape(200, 150, 300, false, false, counts[t]);
        sgemm_threads_shape(32, 512, 512, true, true, counts[t]);
        sgemm_threads_shape(128, 2048, 512, true, true, counts[t]);
        sgemm_threads_shape(32, 1000, 512, true, true, counts[t]);
        sgemm_threads_shape(33, 70, 1100, true, false, counts[t]);
        sgemm_threads_shape(7, 3000, 64, false, true, counts[t]);
        sgemm_threads_shape(129, 2048, 512, true, true, counts[t]);  // row tiles of even blocks
        sgemm_threads_shape(200, 512, 512, true, true, counts[t]);
        sgemm_threads_shape(12, 512, 512, true, true, counts[t]);
        sgemm_threads_shape(64, 64, 64, true, false, counts[t]);
        sgemm_threads_shape(300, 520, 300, false, false, counts[t]);  // unpacked: column tiles over all rows
        sgemm_threads_shape(150, 2100, 96, true, false, counts[t]);
    }
}
#endif

// Small products take their own path (one attention head; rows of up to four vectors with AVX2
// and AVX-512, up to 32 x 64 x 32: a head of 12 at 28 tokens is 28 x 28 x 12); each of their rows must still be the bits of the
// blocked kernel (sgemm_prepacked always blocks), whole or computed alone, B or Bᵀ, with or
// without a bias, rows in fours and a remainder, whole vectors and short rows.
static void test_sgemm_small_bits(void) {
    const int shapes[][3] = {{7, 16, 16}, {9, 20, 16}, {5, 32, 24}, {13, 8, 64}, {16, 16, 16}, {3, 31, 7},
                             {6, 40, 16}, {9, 64, 20}, {5, 50, 30}, {32, 64, 32}, {30, 64, 33}, {32, 32, 64},
                             {28, 28, 12}, {11, 28, 12}, {28, 12, 28}, {10, 24, 11}};
    for (int s = 0; s < (int)(sizeof shapes / sizeof *shapes); s++)
        for (int v = 0; v < 4; v++) {
            const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            const bool bt = v & 1;
            float *a = rand_buf((long)M * K, -1, 1), *b = rand_buf((long)K * N, -1, 1);
            float *bias = v & 2 ? rand_buf(N, -1, 1) : NULL, *pk = malloc(sizeof(float) * sgemm_packed_floats(N, K));
            float *small = malloc(sizeof(float) * M * N), *blocked = malloc(sizeof(float) * M * N);
            float *one = malloc(sizeof(float) * N);
            sgemm(small, N, a, K, b, bt ? K : N, bias, M, N, K, bt);
            sgemm_pack(pk, b, bt ? K : N, N, K, bt);
            sgemm_prepacked(blocked, N, a, K, pk, bias, M, N, K);
            int same = 0;
            for (int i = 0; i < M; i++) {
                sgemm(one, N, a + (size_t)i * K, K, b, bt ? K : N, bias, 1, N, K, bt);
                same += !memcmp(one, blocked + (size_t)i * N, sizeof(float) * N);
            }
            CHECK(!memcmp(small, blocked, sizeof(float) * M * N) && same == M,
                  "small product M=%d N=%d K=%d %s%s: not the blocked kernel's bits (%d of %d rows alone)", M, N, K,
                  bt ? "B^T" : "B", bias ? " +bias" : "", same, M);
            if (!bt && !bias) {  // op(A) = Aᵀ read where it lies (the gradients' Aᵀ B): the same chains
                float *at = malloc(sizeof(float) * M * K);
                for (int i = 0; i < M; i++)
                    for (int k = 0; k < K; k++) at[(size_t)k * M + i] = a[(size_t)i * K + k];
                sgemm_tn(small, N, at, M, b, N, M, N, K, false);
                CHECK(!memcmp(small, blocked, sizeof(float) * M * N),
                      "small product M=%d N=%d K=%d, A transposed: not the blocked kernel's bits", M, N, K);
                free(at);
            }
            free(a), free(b), free(bias), free(pk), free(small), free(blocked), free(one);
        }
}

// The gradients' products, C += A·op(B) and C += Aᵀ·B, on matrices that sit inside wider ones
// (lda, ldb, ldc past the row), against a double-precision loop: op(A) is read in place, with
// either stride, and the rows of a short last panel must not spill into C; B of whole panels
// (64 and 256 columns) with rows ldb apart as well.
static void test_sgemm_accumulate(void) {
    const int shapes[][3] = {{7, 33, 5}, {132, 100, 257}, {40, 17, 600}, {13, 64, 64}, {270, 31, 3}, {70, 64, 300}, {133, 256, 64}, {40, 64, 1030},
                             {11, 28, 12}, {28, 20, 11}, {28, 12, 28}};
    for (int s = 0; s < (int)(sizeof shapes / sizeof *shapes); s++)
        for (int tn = 0; tn < 2; tn++) {
            const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
            const int lda = (tn ? M : K) + 3, ldb = N + 5, ldc = N + 2, arows = tn ? K : M;
            float *a = rand_buf((long)arows * lda, -1, 1), *b = rand_buf((long)K * ldb, -1, 1);
            float *c = rand_buf((long)M * ldc, -1, 1), *c0 = malloc(sizeof(float) * (size_t)M * ldc);
            memcpy(c0, c, sizeof(float) * (size_t)M * ldc);
            if (tn) sgemm_tn(c, ldc, a, lda, b, ldb, M, N, K, true);
            else sgemm_acc(c, ldc, a, lda, b, ldb, M, N, K, false);
            double worst = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < ldc; j++) {
                    double want = c0[(size_t)i * ldc + j];
                    for (int k = 0; j < N && k < K; k++)
                        want += (double)(tn ? a[(size_t)k * lda + i] : a[(size_t)i * lda + k]) * b[(size_t)k * ldb + j];
                    const double d = fabs(want - c[(size_t)i * ldc + j]);
                    worst = d > worst ? d : worst;
                }
            CHECK(worst <= 1e-5 * sqrt((double)K) + 1e-6, "%s M=%d N=%d K=%d: off by %g", tn ? "sgemm_tn (accumulating)" : "sgemm_acc",
                  M, N, K, worst);
            free(a), free(b), free(c), free(c0);
        }
}

// C += A·Bᵀ on a row or two (the few-rows path reads B's rows in place) and on more rows, with
// C wider than N, against a double-precision loop: the chains start from C, and no element
// past N is written.
static void test_sgemm_accumulate_bt(void) {
    const int shapes[][3] = {{1, 87, 64}, {2, 9, 5}, {2, 17, 33}, {1, 3, 100}, {3, 87, 64}, {6, 40, 16}};
    for (int s = 0; s < (int)(sizeof shapes / sizeof *shapes); s++) {
        const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], lda = K + 3, ldb = K + 1, ldc = N + 2;
        float *a = rand_buf((long)M * lda, -1, 1), *b = rand_buf((long)N * ldb, -1, 1);
        float *c = rand_buf((long)M * ldc, -1, 1), *c0 = malloc(sizeof(float) * (size_t)M * ldc);
        memcpy(c0, c, sizeof(float) * (size_t)M * ldc);
        sgemm_acc(c, ldc, a, lda, b, ldb, M, N, K, true);
        double worst = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < ldc; j++) {
                double want = c0[(size_t)i * ldc + j];
                for (int k = 0; j < N && k < K; k++) want += (double)a[(size_t)i * lda + k] * b[(size_t)j * ldb + k];
                const double d = fabs(want - c[(size_t)i * ldc + j]);
                worst = d > worst ? d : worst;
            }
        CHECK(worst <= 1e-5 * sqrt((double)K) + 1e-6, "sgemm_acc B^T M=%d N=%d K=%d: off by %g", M, N, K, worst);
        free(a), free(b), free(c), free(c0);
    }
}

// A row of a product is the same bits computed alone as among 9 or 40 rows (the blocked
// kernel): what lets the cached decoder compute only each round's new row. Small products take
// plain loops; larger ones the one-row kernels: B [K, N] read row after row, Bᵀ's panels packed
// slice by slice, B held as half (F16, BF16) widened as it is packed. The shapes cross a KC
// slice (600 > 512), a block of the row kernel's columns (2500 > 1024), end on a short panel
// (1003 columns), and read B inside a wider matrix (ldb past the row: a chunk of a fused QKV
// weight). Each row is also computed on one thread and on all: the same bits.
static void row_alone_shape(int M, int N, int K, bool bt, int pad, int half) {
    const int ldb = (bt ? K : N) + pad, brows = bt ? N : K;
    float *a = rand_buf((long)M * K, -1, 1), *b = rand_buf((long)brows * ldb, -1, 1), *bias = rand_buf(N, -1, 1);
    uint16_t *h = malloc(sizeof(uint16_t) * (size_t)brows * ldb);
    for (long i = 0; half && i < (long)brows * ldb; i++) {  // B rounded to halves, and held widened in b
        uint32_t u;
        memcpy(&u, &b[i], 4);
        const uint16_t f16 = (uint16_t)(rng_below(&rng, 2) << 15 | (10 + rng_below(&rng, 10)) << 10 | rng_below(&rng, 1024));
        h[i] = half == 1 ? (uint16_t)(u >> 16) : f16;  // F16: exponents 2^-5 to 2^4
        b[i] = half_to_f32(h[i], half == 1 ? HALF_BF16 : HALF_F16);
    }
    float *all = malloc(sizeof(float) * M * N), *one = malloc(sizeof(float) * N);
    sgemm(all, N, a, K, b, ldb, bias, M, N, K, bt);
    int same = 0, threads_same = 0;
    for (int i = 0; i < M; i++) {
        for (int v = 0; v < 2; v++) {
#ifdef _OPENMP
            const int was = omp_get_max_threads();
            if (v) omp_set_num_threads(1);
#endif
            if (half) sgemm_half(one, N, a + (size_t)i * K, K, h, ldb, half == 1 ? HALF_BF16 : HALF_F16, bias, 1, N, K, bt);
            else sgemm(one, N, a + (size_t)i * K, K, b, ldb, bias, 1, N, K, bt);
#ifdef _OPENMP
            omp_set_num_threads(was);
#endif
            const bool eq = !memcmp(one, all + (size_t)i * N, sizeof(float) * N);
            if (v) threads_same += eq;
            else same += eq;
        }
    }
    CHECK(same == M && threads_same == M, "%dx%dx%d %s%s (ldb %d): %d of %d rows the same bits alone as among %d (%d on one thread)",
          M, N, K, bt ? "B^T" : "B", half == 1 ? " BF16" : half == 2 ? " F16" : "", ldb, same, M, M, threads_same);
    free(a), free(b), free(h), free(bias), free(all), free(one);
}

static void test_sgemm_row_alone(void) {
    for (int bt = 0; bt < 2; bt++) {
        row_alone_shape(40, 70, 90, bt, 0, 0);
        row_alone_shape(9, 1003, 600, bt, 0, 0);
        row_alone_shape(9, 2500, 300, bt, 37, 0);
        row_alone_shape(5, 768, 768, bt, 1536, 0);
        for (int half = 1; half <= 2; half++) row_alone_shape(9, 1003, 600, bt, 3, half);
    }
}

static void test_linear_matmul_transpose(void) {
    const int T = 9, I = 20, O = 12;
    float *x = rand_buf(T * I, -1, 1), *w = rand_buf(O * I, -1, 1), *b = rand_buf(O, -1, 1);
    float y[T * O], r[T * O];
    linear_forward(y, x, w, b, T, I, O);
    ref_matmul(r, x, w, b, 1, T, O, I, true);  // x · wᵀ + b
    CHECK_CLOSE(y, r, T * O, 1e-5, "linear");
    const int B = 3, M = 5, N = 7, K = 4;
    float *ma = rand_buf(B * M * K, -1, 1), *mb = rand_buf(B * K * N, -1, 1);
    float mc[B * M * N], mr[B * M * N], mt[B * N * K], rt[B * N * K];
    matmul_forward(mc, ma, mb, B, M, N, K, false);
    ref_matmul(mr, ma, mb, NULL, B, M, N, K, false);
    CHECK_CLOSE(mc, mr, B * M * N, 1e-5, "batched matmul");
    matmul_forward(mc, ma, mb, B, M, N, K, true);  // mb read as [B, N, K]
    ref_matmul(mr, ma, mb, NULL, B, M, N, K, true);
    CHECK_CLOSE(mc, mr, B * M * N, 1e-5, "batched matmul with transposed b");
    transpose_forward(mt, mb, B, K, N);
    ref_transpose(rt, mb, B, K, N);
    CHECK(memcmp(mt, rt, sizeof mt) == 0, "transpose");
    free(x), free(w), free(b), free(ma), free(mb);
}

static void test_positional(void) {
    const int P = 50, C = 16;
    float pe[P * C];
    double ref[P * C];
    positional_encoding(pe, P, C, 10000.0f);
    ref_positional(ref, P, C, 10000.0);
    double worst = 0;
    for (int i = 0; i < P * C; i++) worst = fmax(worst, fabs(pe[i] - ref[i]));
    CHECK(worst < 2e-5, "positional encoding vs the formula: %g", worst);
    // The worked example for d_model = 8, position 1 (the one a reference note gets wrong).
    float pe8[6 * 8];
    positional_encoding(pe8, 6, 8, 10000.0f);
    const float row1[8] = {0.8415f, 0.5403f, 0.0998f, 0.9950f, 0.0100f, 0.99995f, 0.0010f, 0.9999995f};
    CHECK_CLOSE(pe8 + 8, row1, 8, 6e-5, "PE row 1 for d_model 8");
    // PyTorch's own float32 table.
    StFile f;
    Err e;
    bool ok = st_load(&f, FIXTURES "/pe_d8.safetensors", &e);
    CHECK(ok, "%s", e.msg);
    if (ok) {
        const StEntry *t = st_find(&f, "pe");
        CHECK(t && t->shape.dim[0] == 6 && t->shape.dim[1] == 8, "pe_d8 fixture shape");
        if (t) CHECK_CLOSE(pe8, t->data, 48, 1e-6, "PE vs PyTorch's float32 table");
        st_free(&f);
    }
    // Odd width: the last column is a sine.
    float odd[3 * 5];
    double rodd[3 * 5];
    positional_encoding(odd, 3, 5, 10000.0f);
    ref_positional(rodd, 3, 5, 10000.0);
    CHECK(fabs(odd[2 * 5 + 4] - rodd[2 * 5 + 4]) < 1e-6, "odd d_model, last column");
}

static void test_softmax(void) {
    const int R = 7, N = 13;
    float *x = rand_buf(R * N, -8, 8), y[R * N], r[R * N];
    x[0] = 1000.0f, x[1] = 1001.0f;  // would overflow without the max shift
    for (int i = 0; i < N; i++) x[2 * N + i] = -INFINITY;  // a fully masked row
    x[3 * N + 4] = -INFINITY;
    softmax_forward(y, x, R, N);
    ref_softmax(r, x, R, N, false);
    CHECK_CLOSE(y, r, R * N, 1e-6, "softmax");
    for (int row = 0; row < R; row++) {
        double s = 0;
        for (int i = 0; i < N; i++) s += y[row * N + i];
        CHECK(fabs(s - (row == 2 ? 0.0 : 1.0)) < 1e-5, "softmax row %d sums to %g", row, s);
    }
    CHECK(y[3 * N + 4] == 0.0f, "a masked entry has probability exactly 0");
    CHECK(fabs(y[1] / y[0] - exp(1.0)) < 1e-4, "softmax of 1000, 1001 keeps their ratio");
    log_softmax_forward(y, x, R, N);
    ref_softmax(r, x, R, N, true);
    // Row 0 holds values near -1000, where float32's spacing is 6e-5.
    CHECK_CLOSE(y, r, N, 1.3e-4, "log_softmax, large inputs");
    CHECK_CLOSE(y + N, r + N, (R - 1) * N, 2e-6, "log_softmax");
    free(x);
}

// exp_forward against e^x in double, on every 61st float from -104 to 88.7 (about 37 million):
// at most 2 units in the last place (the reduction and the polynomial are worth under 1).
// Floats past those ends, infinities and NaN go where expf takes them.
static void test_exp(void) {
    enum { N = 4096 };
    static float x[N], y[N];
    double worst = 0;
    float at = 0;
    for (int sign = 0; sign < 2; sign++) {
        const uint32_t top = sign ? 0x42d00000u : 0x42b17000u;  // 104, and just below ln(FLT_MAX)
        for (uint32_t b = 0; b <= top;) {
            int n = 0;
            for (; n < N && b <= top; n++, b += 61) {
                const uint32_t u = b | (sign ? 0x80000000u : 0u);
                memcpy(&x[n], &u, sizeof u);
            }
            exp_forward(y, x, (size_t)n);
            for (int i = 0; i < n; i++) {
                const double t = exp((double)x[i]);
                const double ulp = t < FLT_MIN ? ldexp(1.0, -149) : ldexp(1.0, ilogb(t) - 23);
                const double err = fabs((double)y[i] - t) / ulp;
                if (!(err <= worst)) worst = err, at = x[i];
            }
        }
    }
    CHECK(worst <= 2.0, "exp_forward: %.2f units in the last place at x = %.9g", worst, (double)at);
    const float odd[] = {-INFINITY, INFINITY, NAN, -104.5f, 89.0f, 0.0f, -0.0f, 1.0f, -87.5f, -103.9f};
    float e[10];
    exp_forward(e, odd, 10);
    for (int i = 0; i < 10; i++) {
        const float want = expf(odd[i]);
        CHECK(isnan(want) ? isnan(e[i]) : e[i] == want || fabs(e[i] - want) <= 2 * (nextafterf(want, INFINITY) - want),
              "exp_forward(%g) = %g, expf gives %g", (double)odd[i], (double)e[i], (double)want);
    }
}

// The softmax that runs (vectorised, softmax.c) against the loop the panel shows, and its bits:
// a row computed alone is that row among others (the cached decoder computes one new row), and
// AVX2 gives AVX-512's bits (so training's figures are the same on either machine).
static void test_softmax_fast(void) {
    const int R = 9, N = 77;  // rows of whole vectors and a tail
    float *x = rand_buf(R * N, -20, 20), *y = malloc(sizeof(float) * R * N), *r = malloc(sizeof(float) * R * N);
    for (int i = 0; i < N; i += 3) x[4 * N + i] = -INFINITY;  // a masked row
    x[5 * N] = NAN;                                          // a NaN spreads through its row, as expf's would
    softmax_forward(y, x, R, N);
    softmax_reference(r, x, R, N);
    // Both against softmax in double from the same differences x - max, which both round to
    // float first. With u = 2^-24: e^d within 2 ulps (4u); a float sum of N positive terms, in
    // any order, within (N - 1)u of the true sum of its terms, which are within 4u; the division
    // (a reciprocal, then a product) 2u: so each output within (N + 9)u of the double softmax.
    for (int row = 0; row < R; row++) {
        if (row == 5) continue;
        float m = -INFINITY;
        double sum = 0;
        for (int i = 0; i < N; i++) m = fmaxf(m, x[row * N + i]);
        for (int i = 0; i < N; i++) sum += exp((double)(x[row * N + i] - m));
        for (int i = row * N; i < (row + 1) * N; i++) {
            const double t = exp((double)(x[i] - m)) / sum, tol = (N + 9) * 0x1p-24 * t + 1e-30;
            CHECK(fabs(y[i] - t) <= tol && fabs(r[i] - t) <= tol, "softmax [%d, %d]: %.9g, the loop %.9g, in double %.9g",
                  row, i % N, (double)y[i], (double)r[i], t);
        }
    }
    for (int i = 5 * N; i < 6 * N; i++) CHECK(isnan(y[i]) && isnan(r[i]), "softmax: NaN row, entry %d is %g", i % N, (double)y[i]);
    float alone[77];
    for (int row = 0; row < R; row++) {
        softmax_forward(alone, x + row * N, 1, N);
        CHECK(!memcmp(alone, y + row * N, sizeof alone), "softmax: row %d alone differs from it among the others", row);
    }
#if SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        float *y2 = malloc(sizeof(float) * R * N);
        softmax_forward_at(SIMD_AVX512, y, x, R, N);
        softmax_forward_at(SIMD_AVX2, y2, x, R, N);
        CHECK(!memcmp(y, y2, sizeof(float) * R * N), "softmax: AVX2 and AVX-512 give different bits");
        free(y2);
    } else
        printf("test_kernels: no AVX-512 here; the AVX2 and AVX-512 softmax bits are compared on machines with it\n");
#endif
    free(x), free(y), free(r);
}

// Rows run in groups of the vector width (softmax.c's *_group: their last steps side by side,
// a row a lane) must each keep the bits the row has alone, at every length, tail and mask, on
// every level this CPU has; and AVX2's bits are AVX-512's.
static void test_softmax_groups(void) {
    enum { R = 37 };  // two groups of 16 (four of 8) and five rows left over
    static const int lengths[] = {1, 3, 8, 15, 16, 17, 31, 32, 48, 77};
    SimdLevel levels[3] = {SIMD_BASE};
    int n_levels = 1;
#if SIMD_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) levels[n_levels++] = SIMD_AVX2;
    if (__builtin_cpu_supports("avx512f")) levels[n_levels++] = SIMD_AVX512;
#endif
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        const int N = lengths[li];
        float *x = rand_buf((long)R * N, -30, 30), *y = malloc(sizeof(float) * R * N);
        float *first = malloc(sizeof(float) * R * N), alone[77];
        for (int i = 0; i < N; i++) x[3 * N + i] = -INFINITY;          // every key masked
        for (int i = 1; i < N; i += 2) x[20 * N + i] = -INFINITY;      // some masked
        x[17 * N + N / 2] = NAN;  // a NaN row, in a group (at length 1 its one key is NaN: ignored, so 0)
        x[9 * N] = 0.0f, x[9 * N + N - 1] = -0.0f;                     // zeros of both signs
        for (int v = 0; v < n_levels; v++) {
            softmax_forward_at(levels[v], y, x, R, N);
            for (int row = 0; row < R; row++) {
                softmax_forward_at(levels[v], alone, x + (size_t)row * N, 1, N);
                CHECK(!memcmp(alone, y + (size_t)row * N, sizeof(float) * N),
                      "softmax, level %d, length %d: row %d alone differs from it in a group", (int)levels[v], N, row);
            }
            for (int i = 0; i < N; i++) CHECK(y[3 * N + i] == 0.0f, "softmax, length %d: a masked row is not 0", N);
            CHECK(N == 1 || isnan(y[17 * N]), "softmax, length %d: the NaN row is %g, not NaN", N, (double)y[17 * N]);
            if (levels[v] == SIMD_AVX2) memcpy(first, y, sizeof(float) * R * N);
            if (levels[v] == SIMD_AVX512)
                CHECK(!memcmp(first, y, sizeof(float) * R * N), "softmax, length %d: AVX2 and AVX-512 differ", N);
        }
        free(x), free(y), free(first);
    }
}

static void test_layernorm(void) {
    const int T = 6, C = 33;
    float *x = rand_buf(T * C, -3, 5), *g = rand_buf(C, 0.5f, 1.5f), *b = rand_buf(C, -1, 1);
    float y[T * C], r[T * C], ones[C], zeros[C];
    for (int c = 0; c < C; c++) ones[c] = 1.0f, zeros[c] = 0.0f;
    layernorm_forward(y, x, g, b, T, C, 1e-5f, LN_TORCH);
    ref_layernorm(r, x, g, b, T, C, 1e-5, false);
    CHECK_CLOSE(y, r, T * C, 2e-6 * 10, "layer_norm (torch)");
    layernorm_forward(y, x, g, b, T, C, 1e-6f, LN_ANNOTATED);
    ref_layernorm(r, x, g, b, T, C, 1e-6, true);
    CHECK_CLOSE(y, r, T * C, 2e-5, "layer_norm (annotated)");
    // Closed form: with gain 1 and bias 0 every row has mean 0 and (biased) variance 1.
    layernorm_forward(y, x, ones, zeros, T, C, 0.0f, LN_TORCH);
    for (int t = 0; t < T; t++) {
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += y[t * C + c];
        m /= C;
        for (int c = 0; c < C; c++) v += (y[t * C + c] - m) * (y[t * C + c] - m);
        CHECK(fabs(m) < 1e-6 && fabs(v / C - 1) < 1e-5, "row %d: mean %g, variance %g", t, m, v / C);
    }
    // The annotated form divides by the unbiased std: its (n-1)-variance is 1.
    layernorm_forward(y, x, ones, zeros, T, C, 0.0f, LN_ANNOTATED);
    double v = 0;
    for (int c = 0; c < C; c++) v += (double)y[c] * y[c];
    CHECK(fabs(v / (C - 1) - 1) < 1e-5, "annotated: unbiased variance %g", v / (C - 1));
    free(x), free(g), free(b);
}

static void test_elementwise(void) {
    const int n = 1000;
    float *x = rand_buf(n, -6, 6), *x2 = rand_buf(n, -1, 1), y[1000], r[1000];
    gelu_forward(y, x, n);
    ref_gelu(r, x, n);
    CHECK_CLOSE(y, r, n, 2e-6, "gelu");
    relu_forward(y, x, n);
    for (int i = 0; i < n; i++) r[i] = x[i] > 0 ? x[i] : 0;
    CHECK(memcmp(y, r, sizeof y) == 0, "relu");
    add_forward(y, x, x2, n);
    scale_forward(r, x, 0.125f, n);
    bool ok = true;
    for (int i = 0; i < n; i++) ok = ok && y[i] == x[i] + x2[i] && r[i] == x[i] * 0.125f;
    CHECK(ok, "add and scale");
    free(x), free(x2);
}

static void test_heads_and_masks(void) {
    const int T = 5, H = 3, D = 4;
    float *x = rand_buf(T * H * D, -1, 1), s[T * H * D], r[T * H * D], back[T * H * D];
    split_heads_forward(s, x, T, H, D);
    ref_split_heads(r, x, T, H, D);
    CHECK(memcmp(s, r, sizeof s) == 0, "split_heads");
    merge_heads_forward(back, s, T, H, D);
    ref_merge_heads(r, s, T, H, D);
    CHECK(memcmp(back, r, sizeof r) == 0 && memcmp(back, x, sizeof back) == 0,
          "merge_heads inverts split_heads");
    const int Tq = 3, Tk = 6;
    float *sc = rand_buf(H * Tq * Tk, -1, 1), m[H * Tq * Tk], mr[H * Tq * Tk];
    const float keys[6] = {4, 9, 1, 7, 1, 5};  // pad id 1 at keys 2 and 4
    for (int causal = 0; causal < 2; causal++) {
        mask_forward(m, sc, keys, 1.0f, causal, H, Tq, Tk);
        ref_mask(mr, sc, keys, 1.0f, causal, H, Tq, Tk);
        CHECK(max_abs_diff(m, mr, H * Tq * Tk) == 0, "mask (causal=%d)", causal);
    }
    float wide[H * 6 * 3], wr[H * 6 * 3];  // more queries than keys: the first three see none
    for (int causal = 0; causal < 2; causal++) {
        mask_forward(wide, sc, keys, 1.0f, causal, H, 6, 3);
        ref_mask(wr, sc, keys, 1.0f, causal, H, 6, 3);
        CHECK(!memcmp(wide, wr, sizeof wide), "mask, 6 queries, 3 keys (causal=%d)", causal);
    }
    mask_forward(m, sc, NULL, 0, true, H, Tq, Tk);
    // Query 0 stands at key position 3 (Tk - Tq): it sees keys 0..3, not 4 and 5.
    CHECK(m[3] == sc[3] && isinf(m[4]) && isinf(m[5]), "causal mask with fewer queries than keys");
    float ids[4] = {3, 1, 2, 2}, table[4 * 3], out[4 * 3], ro[4 * 3];
    for (int i = 0; i < 12; i++) table[i] = (float)i - 5.5f;
    embedding_forward(out, ids, table, 4, 3, 2.0f);
    ref_embedding(ro, ids, table, 4, 3, 2.0f);
    CHECK(memcmp(out, ro, sizeof out) == 0, "embedding");
    const float am[2 * 4] = {0.1f, 0.7f, 0.7f, 0.2f, -1, -3, -1, -2};
    float idx[2];
    argmax_forward(idx, am, 2, 4);
    CHECK(idx[0] == 1 && idx[1] == 0, "argmax takes the first of equal maxima (%g %g)", idx[0], idx[1]);
    free(x), free(sc);
}

// gelu_tanh and silu as x sigmoid(s x'): against the same float argument's exact sigmoid in
// double (what the exponential and the division add: a few units in the last place), and
// against the textbook formula in double, x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (for
// |x| < 4: past it 1 + tanh cancels even in double) and x / (1 + e^-x), on every 997th float
// from -30 to 30, and the odd values.
static void test_activations(void) {
    enum { N = 4096 };
    static float x[N], g[N], sl[N], rg[N], rs[N];
    double worst_g = 0, worst_s = 0, text_g = 0, text_s = 0, loop_g = 0, loop_s = 0;
    const uint32_t top = 0x41f00000u;  // 30
    for (int sign = 0; sign < 2; sign++)
        for (uint32_t b = 0; b <= top;) {
            int n = 0;
            for (; n < N && b <= top; n++, b += 997) {
                const uint32_t u = b | (sign ? 0x80000000u : 0u);
                memcpy(&x[n], &u, sizeof u);
            }
            gelu_tanh_forward(g, x, (size_t)n);
            silu_forward(sl, x, (size_t)n);
            gelu_tanh_reference(rg, x, (size_t)n);
            silu_reference(rs, x, (size_t)n);
            for (int i = 0; i < n; i++) {
                const float v = x[i], zf = -(2.0f * 0.7978845608028654f * (v + 0.044715f * v * v * v));
                const double tg = (double)v / (1.0 + exp((double)zf)), ts = (double)v / (1.0 + exp(-(double)v));
                // In the normal floats, units in the last place; below them (x e^z past the
                // exponential's range) within the smallest normal float of 0.
                const double ug = fabs(tg) >= FLT_MIN ? fabs(g[i] - tg) / ldexp(1.0, ilogb(tg) - 23) : fabs(g[i]) > FLT_MIN ? 1e9 : 0;
                const double us = fabs(ts) >= FLT_MIN ? fabs(sl[i] - ts) / ldexp(1.0, ilogb(ts) - 23) : fabs(sl[i]) > FLT_MIN ? 1e9 : 0;
                worst_g = ug > worst_g ? ug : worst_g, worst_s = us > worst_s ? us : worst_s;
                const double dv = v, book = 0.5 * dv * (1.0 + tanh(0.7978845608028654 * (dv + 0.044715 * dv * dv * dv)));
                if (fabs(book) >= FLT_MIN && fabs(dv) < 4) text_g = fmax(text_g, fabs(g[i] - book) / fabs(book));  // 1 + tanh cancels past
                if (fabs(ts) >= FLT_MIN) text_s = fmax(text_s, fabs(sl[i] - ts) / fabs(ts));
                // The plain loops the panel shows (libm's expf): in units of their last place.
                if (fabs(rg[i]) >= FLT_MIN) loop_g = fmax(loop_g, fabs((double)g[i] - rg[i]) / ldexp(1.0, ilogb(rg[i]) - 23));
                if (fabs(rs[i]) >= FLT_MIN) loop_s = fmax(loop_s, fabs((double)sl[i] - rs[i]) / ldexp(1.0, ilogb(rs[i]) - 23));
            }
        }
    CHECK(worst_g <= 6.0 && worst_s <= 6.0, "gelu_tanh %.2f, silu %.2f units in the last place of x sigmoid(z)", worst_g, worst_s);
    CHECK(text_g < 1e-5 && text_s < 1e-6, "against the textbook formulas: gelu_tanh %.3g, silu %.3g relative", text_g, text_s);
    CHECK(loop_g <= 8.0 && loop_s <= 8.0, "against the plain loops: gelu_tanh %.2f, silu %.2f units in the last place", loop_g,
          loop_s);
    const float odd[] = {-INFINITY, INFINITY, NAN, 0.0f, -0.0f, 100.0f, -100.0f};
    float og[7], os[7];
    gelu_tanh_forward(og, odd, 7), silu_forward(os, odd, 7);
    CHECK(isnan(og[0]) && og[1] == INFINITY && isnan(og[2]) && og[3] == 0 && og[4] == 0 && og[5] == 100.0f && og[6] == 0,
          "gelu_tanh at -inf, inf, nan, 0, -0, 100, -100: %g %g %g %g %g %g %g", (double)og[0], (double)og[1], (double)og[2],
          (double)og[3], (double)og[4], (double)og[5], (double)og[6]);
    CHECK(isnan(os[0]) && os[1] == INFINITY && isnan(os[2]) && os[3] == 0 && os[5] == 100.0f && fabs(os[6]) < 1e-40,
          "silu at -inf, inf, nan, 0, -0, 100, -100: %g %g %g %g %g %g %g", (double)os[0], (double)os[1], (double)os[2],
          (double)os[3], (double)os[4], (double)os[5], (double)os[6]);
    printf("  gelu_tanh, silu: %.2f and %.2f units in the last place; %.2g and %.2g from the textbook formulas; %.2f and "
           "%.2f units from the plain loops\n", worst_g, worst_s, text_g, text_s, loop_g, loop_s);
}

// row_argmax (two vectorised passes) against the plain loop it replaced, index for index: rows of
// every length to 40 and of 50257 (GPT-2's vocabulary), with ties (the first wins), NaN anywhere
// (first included: then 0), -inf, -0 beside +0, all NaN, all -inf, the maximum in the tail.
static int argmax_loop(const float *x, int n) {
    int best = 0;
    for (int v = 1; v < n; v++)
        if (x[v] > x[best]) best = v;
    return best;
}

static void test_row_argmax(void) {
    enum { LONG = 50257 };
    float *x = malloc(sizeof(float) * LONG);
    int bad = 0, rows = 0;
    for (int trial = 0; trial < 4000; trial++) {
        const int n = trial < 3600 ? 1 + trial % 40 : LONG;
        for (int v = 0; v < n; v++) {
            const unsigned r = (unsigned)(rng_uniform(&rng) * 1e6);
            x[v] = r % 11 == 0 ? NAN : r % 13 == 0 ? -INFINITY : r % 17 == 0 ? -0.0f : r % 19 == 0 ? 0.0f
                 : (float)(r % 7) - 3.0f;  // few distinct values: many ties
        }
        if (trial % 5 == 0) x[0] = NAN;
        if (trial % 7 == 0) x[n - 1] = 9.0f;  // the greatest in the tail
        if (trial % 97 == 0)
            for (int v = 0; v < n; v++) x[v] = trial % 2 ? NAN : -INFINITY;
        const int got = row_argmax(x, n), want = argmax_loop(x, n);
        bad += got != want, rows++;
        if (got != want && bad <= 3) CHECK(false, "row_argmax of %d values: %d, the plain loop %d", n, got, want);
    }
    CHECK(bad == 0, "row_argmax: %d of %d rows differ from the plain loop", bad, rows);
    free(x);
}

int main(void) {
    printf("test_kernels: the GEMM's kernel: %s\n", sgemm_kernel_name());
    test_row_argmax();
    test_sgemm();
#ifdef _OPENMP
    test_sgemm_threads();
#endif
    test_sgemm_row_alone();
    test_sgemm_accumulate();
    test_sgemm_accumulate_bt();
    test_sgemm_small_bits();
    test_linear_matmul_transpose();
    test_positional();
    test_softmax();
    test_exp();
    test_activations();
    test_softmax_fast();
    test_softmax_groups();
    test_layernorm();
    test_elementwise();
    test_heads_and_masks();
    return check_finish("test_kernels");
}
