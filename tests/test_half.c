// test_half.c: weights kept as the file stores them (F16, BF16: 2 bytes a number). Held here to
// independent references and to the same model widened at load (--widen-weights), bit for bit:
// - half_widen: every one of the 65536 half-precision and bfloat16 bit patterns against the
//   value its fields give in closed form (sign, exponent, mantissa);
// - sgemm_half: against sgemm on the matrix widened first, the same bits, for both layouts
//   (nn.Linear's [N, K], GPT-2's [K, N] with a wider row), sizes the small path takes for
//   floats, sizes past a K slice and ragged panels; and against a naive loop in double;
// - embedding_forward_half: against embedding_forward on the widened table;
// - a model: the PyTorch-made sharded BF16 folder (llama-gqa-bf16) and a larger tied BF16
//   folder written here (lessons/llama.md, 256 wide): its matrices held 2 bytes a number, its
//   norms as floats, the tied head sharing the embedding's numbers; every stage of a pass and of
//   greedy decoding with the cached decoder, and every gradient of the backward pass, the same
//   bits as the model widened at load; saved again, the same numbers on disk; the cached
//   decoder against the plain one, every round after the first computing new rows only.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "grad_pass.h"
#include "hub_save.h"
#include "load.h"
#include "session.h"

// The value of a half-precision pattern from its fields: (-1)^s 2^(e-15) (1 + m/1024), or for
// e = 0, (-1)^s 2^-14 (m/1024).
static double f16_value(unsigned h) {
    const unsigned s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    const double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024.0 + m, (int)e - 25);
    return s ? -v : v;
}

// bfloat16: the top half of a float32, (-1)^s 2^(e-127) (1 + m/128), subnormal at e = 0.
static double bf16_value(unsigned h) {
    const unsigned s = h >> 15, e = (h >> 7) & 255, m = h & 127;
    const double v = e == 0 ? ldexp((double)m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(128.0 + m, (int)e - 134);
    return s ? -v : v;
}

static void every_pattern(void) {
    uint16_t *h = malloc(sizeof *h * 65536);
    float *out = malloc(sizeof *out * 65536);
    if (!h || !out) {
        free(h), free(out);
        CHECK(false, "memory");
        return;
    }
    for (unsigned i = 0; i < 65536; i++) h[i] = (uint16_t)i;
    for (int kind = HALF_F16; kind <= HALF_BF16; kind++) {
        half_widen(out, h, 65536, (HalfKind)kind);
        int bad = 0;
        for (unsigned i = 0; i < 65536; i++) {
            const double want = kind == HALF_F16 ? f16_value(i) : bf16_value(i);
            const float one = half_to_f32((uint16_t)i, (HalfKind)kind);
            const bool ok = isnan(want) ? isnan(out[i]) && isnan(one) : (double)out[i] == want && one == out[i] &&
                                                                          !signbit(out[i]) == !signbit(want);
            if (!ok && bad++ < 3) CHECK(false, "%s 0x%04x: %g (one by one %g), want %g", kind ? "bf16" : "f16", i, (double)out[i], (double)one, want);
            if (isnan(want) && memcmp(&out[i], &one, sizeof one) && bad++ < 3)
                CHECK(false, "%s 0x%04x: the vector and the scalar NaN differ", kind ? "bf16" : "f16", i);
        }
        CHECK(bad == 0, "%s: %d of 65536 patterns widen wrongly", kind ? "bf16" : "f16", bad);
    }
    free(h), free(out);
}

static uint16_t to_half(float x, HalfKind kind) { return kind == HALF_F16 ? st_f32_to_f16(x) : st_f32_to_bf16(x); }

// One product: B [N, K] (bt) or [K, ldb] held as half, against sgemm on it widened and a naive loop.
static void product(int M, int N, int K, bool bt, int extra, HalfKind kind, unsigned seed) {
    const int ldb = bt ? K : N + extra;
    const size_t nb = bt ? (size_t)N * K : (size_t)K * ldb;
    float *a = malloc(sizeof(float) * (size_t)M * K), *bw = malloc(sizeof(float) * nb), *bias = malloc(sizeof(float) * N);
    float *c1 = malloc(sizeof(float) * (size_t)M * N), *c2 = malloc(sizeof(float) * (size_t)M * N);
    uint16_t *bh = malloc(sizeof(uint16_t) * nb);
    if (!a || !bw || !bias || !c1 || !c2 || !bh) {
        CHECK(false, "memory");
        goto done;
    }
    unsigned r = seed;
    for (size_t i = 0; i < (size_t)M * K; i++) r = r * 1664525u + 1013904223u, a[i] = (float)((int)(r >> 9) % 2001 - 1000) / 997.0f;
    for (size_t i = 0; i < nb; i++) {
        r = r * 1664525u + 1013904223u;
        bh[i] = to_half((float)((int)(r >> 9) % 2001 - 1000) / 1013.0f, kind);
    }
    for (int j = 0; j < N; j++) bias[j] = 0.01f * (float)j;
    half_widen(bw, bh, nb, kind);
    sgemm(c1, N, a, K, bw, ldb, bias, M, N, K, bt);
    sgemm_half(c2, N, a, K, bh, ldb, kind, bias, M, N, K, bt);
    CHECK(!memcmp(c1, c2, sizeof(float) * (size_t)M * N), "%s %dx%dx%d%s: sgemm_half differs from sgemm on B widened",
          kind ? "bf16" : "f16", M, N, K, bt ? " (B [N, K])" : " (B [K, N])");
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = bias[j], mag = fabs(bias[j]);
            for (int k = 0; k < K; k++) {
                const double b = bt ? bw[(size_t)j * K + k] : bw[(size_t)k * ldb + j];
                s += (double)a[(size_t)i * K + k] * b, mag += fabs((double)a[(size_t)i * K + k] * b);
            }
            const double err = fabs(c2[(size_t)i * N + j] - s) / (mag + 1e-30);
            worst = err > worst ? err : worst;
        }
    CHECK(worst < 1e-5, "%s %dx%dx%d: %g from the naive loop, relative to the terms", kind ? "bf16" : "f16", M, N, K, worst);
done:
    free(a), free(bw), free(bias), free(c1), free(c2), free(bh);
}

static void products(void) {
    static const int sizes[][3] = {{1, 7, 5}, {3, 40, 33}, {8, 64, 64}, {1, 300, 96}, {17, 100, 300}, {64, 129, 520},
                                   {130, 96, 1100}, {5, 1000, 64}};
    for (int kind = HALF_F16; kind <= HALF_BF16; kind++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int bt = 0; bt < 2; bt++)
                product(sizes[s][0], sizes[s][1], sizes[s][2], bt, bt ? 0 : 24, (HalfKind)kind, 7u + (unsigned)s);
    printf("  sgemm_half: %zu products in each layout and kind, the bits of sgemm on B widened\n", sizeof sizes / sizeof *sizes);
}

static void embeddings(void) {
    enum { V = 50, C = 37, T = 9 };
    uint16_t table[V * C];
    float wide[V * C], ids[T], a[T * C], b[T * C];
    for (int kind = HALF_F16; kind <= HALF_BF16; kind++) {
        for (int i = 0; i < V * C; i++) table[i] = to_half(sinf((float)i * 0.37f) * 3.0f, (HalfKind)kind);
        half_widen(wide, table, V * C, (HalfKind)kind);
        for (int t = 0; t < T; t++) ids[t] = (float)((t * 17) % V);
        embedding_forward(a, ids, wide, T, C, 4.5f);
        embedding_forward_half(b, ids, table, (HalfKind)kind, T, C, 4.5f);
        CHECK(!memcmp(a, b, sizeof a), "%s: embedding_forward_half differs from the widened table's", kind ? "bf16" : "f16");
    }
}

// ---- a model, kept and widened ----

typedef struct {
    Session s;
    bool open;
} Opened;

static void open_model(Opened *o, const char *dir, const char *ids, int max_len, bool widen, bool prompt) {
    const SessionSpec spec = {.model_path = dir, .src_ids = ids, .max_len = max_len, .cached = true,
                              .force_prompt = prompt, .widen_weights = widen};
    Err e = {{0}};
    o->open = session_open(&o->s, &spec, &e) && interp_run(o->s.it, &e);
    CHECK(o->open, "%s%s: %s", dir, widen ? " (widened)" : "", e.msg);
}

static size_t floats_of(const Interp *it, int i) {
    return (size_t)shape_numel(&interp_stage(it, i)->shape) * (size_t)interp_batch(it);
}

static void same_stages(const Interp *a, const Interp *b, const char *what) {
    CHECK(interp_n_done(a) == interp_n_done(b), "%s: %d stages kept, %d widened", what, interp_n_done(a), interp_n_done(b));
    int differ = 0;
    for (int i = 0; i < interp_n_done(a) && i < interp_n_done(b); i++) {
        const float *x = interp_output(a, i), *y = interp_output(b, i);
        if (!x || !y || memcmp(x, y, sizeof(float) * floats_of(a, i))) {
            if (differ++ < 3) CHECK(false, "%s: %s differs", what, interp_stage(a, i)->id);
        }
        interp_release_reads(a), interp_release_reads(b);
    }
    CHECK(differ == 0, "%s: %d of %d stages differ", what, differ, interp_n_done(a));
    printf("  %s: %d stages, the same bits\n", what, interp_n_done(a));
}

// How the kept model holds its tensors: matrices as half, vectors as floats.
static void held(const Model *kept, const Model *wide, const char *what) {
    int matrices = 0, wrong = 0;
    for (int i = 0; i < kept->n_params; i++) {
        const StEntry *en = &kept->weights.entries[i];
        const bool matrix = en->shape.ndim >= 2;
        matrices += matrix;
        if (matrix != (en->half != NULL) || (en->half == NULL) == (en->data == NULL) || wide->weights.entries[i].half) wrong++;
    }
    CHECK(wrong == 0 && matrices > 0, "%s: %d tensors held the wrong way (%d matrices)", what, wrong, matrices);
    const double ratio = (double)model_bytes(kept) / (double)model_bytes(wide);
    printf("  %s: %.2f MB kept, %.2f MB widened (%.3f)\n", what, model_bytes(kept) / 1048576.0, model_bytes(wide) / 1048576.0, ratio);
    CHECK(ratio < 0.56, "%s: the kept model takes %.3f of the widened one's bytes", what, ratio);
}

static void backward_same(Opened *k, Opened *w, int T, const char *what) {
    Err e = {{0}};
    LossInfo la, lb;
    float labels[64];
    for (int i = 0; i < T; i++) labels[i] = (float)((5 + 7 * i) % 90);
    Grads *ga = grads_new(&k->s.model, &e), *gb = grads_new(&w->s.model, &e);
    float *da = NULL, *db = NULL;
    bool ok = ga && gb && loss_target(k->s.it, &la, &e) && loss_target(w->s.it, &lb, &e);
    if (ok) da = malloc(sizeof(float) * (size_t)la.rows * la.V), db = malloc(sizeof(float) * (size_t)lb.rows * lb.V);
    ok = ok && da && db && grad_pass(ga, k->s.it, labels, T, da, &la, &e) && grad_pass(gb, w->s.it, labels, T, db, &lb, &e);
    CHECK(ok, "%s: %s", what, e.msg);
    if (ok) {
        CHECK(la.loss == lb.loss, "%s: loss %.9g kept, %.9g widened", what, la.loss, lb.loss);
        CHECK(grads_size(ga) == grads_size(gb) &&
                  !memcmp(grads_weights(ga), grads_weights(gb), sizeof(float) * grads_size(ga)),
              "%s: the weights' gradients differ", what);
        int differ = 0;
        for (int i = 0; i < interp_n_stages(k->s.it); i++) {
            const float *a = grads_stage(ga, i), *b = grads_stage(gb, i);
            if ((a == NULL) != (b == NULL) || (a && memcmp(a, b, sizeof(float) * floats_of(k->s.it, i)))) differ++;
        }
        CHECK(differ == 0, "%s: %d stages' gradients differ", what, differ);
        printf("  %s: loss %.7g, every gradient the same bits\n", what, la.loss);
    }
    free(da), free(db), grads_free(ga), grads_free(gb);
}

// The PyTorch-made folder: sharded, BF16, grouped-query attention.
static void fixture_folder(void) {
    const char *dir = FIXTURES "/hub/llama-gqa-bf16", *ids = "1,17,33,49,65,81,20,4";
    Opened k, w;
    open_model(&k, dir, ids, 6, false, false);
    open_model(&w, dir, ids, 6, true, false);
    if (k.open && w.open) held(&k.s.model, &w.s.model, "llama-gqa-bf16"), same_stages(k.s.it, w.s.it, "llama-gqa-bf16, greedy");
    if (k.open) session_close(&k.s);
    if (w.open) session_close(&w.s);
    open_model(&k, dir, ids, 0, false, true);
    open_model(&w, dir, ids, 0, true, true);
    if (k.open && w.open) backward_same(&k, &w, 8, "llama-gqa-bf16, backward");
    if (k.open) session_close(&k.s);
    if (w.open) session_close(&w.s);
}

// The cached decoder on a LLaMA-family model: every stage of every round the same bits as the
// plain decoder, and after the first round no stage runs whole (RoPE turns only the new row).
static void cached_llama(const Session *s) {
    RunSpec r = s->run;
    r.cached = false;
    Err e = {{0}};
    Interp *plain = interp_new(&s->lesson.program, &s->model, &r, &e);
    const bool ok = plain && interp_run(plain, &e);
    CHECK(ok, "the plain decoder: %s", e.msg);
    if (ok) {
        same_stages(s->it, plain, "tied BF16 folder, cached against plain");
        int whole = 0, later = 0;
        for (int i = 0; i < interp_n_done(s->it); i++)
            if (strncmp(interp_stage(s->it, i)->id, "step.0.", 7) && strncmp(interp_stage(s->it, i)->id, "step.", 5) == 0)
                later++, whole += interp_stage_rows(s->it, i) == ROWS_WHOLE;
        CHECK(later > 100 && whole == 0, "the cached decoder ran %d of %d stages after the first round whole", whole, later);
    }
    interp_free(plain);
}

// A bigger tied folder written here: products past the small path and past a K slice.
static void tied_folder(void) {
    char dir[] = "/tmp/stepformer-half-XXXXXX", again[64];
    if (!mkdtemp(dir)) {
        CHECK(false, "mkdtemp");
        return;
    }
    snprintf(again, sizeof again, "%s/again", dir);
    Lesson l;
    Model m;
    Err e = {{0}};
    ConfSpec cs = {0};
    conf_spec_add(&cs, "vocab_size=2000 hidden_size=256 intermediate_size=688 num_hidden_layers=2 num_attention_heads=4 "
                  "num_key_value_heads=2 max_position_embeddings=128 tie_word_embeddings=1", "test", false);
    bool ok = lesson_load(&l, LESSONS "/llama.md", &e);
    ok = ok && model_init_random(&m, &l.program, &cs, 5, &e);
    ok = ok && hub_save(&m, &l.program, dir, ST_BF16, NULL, "test_half", &e);
    if (ok) model_free(&m);
    CHECK(ok, "writing a BF16 folder: %s", e.msg);
    char ids[400] = "";
    for (int i = 0, n = 0; i < 40; i++) n += snprintf(ids + n, sizeof ids - (size_t)n, "%s%d", i ? "," : "", (i * 131) % 2000);
    Opened k, w;
    open_model(&k, dir, ids, 5, false, false);
    open_model(&w, dir, ids, 5, true, false);
    if (k.open && w.open) {
        held(&k.s.model, &w.s.model, "tied BF16 folder");
        const StEntry *emb = model_weight(&k.s.model, "model.embed_tokens.weight"), *head = model_weight(&k.s.model, "lm_head.weight");
        CHECK(emb && head && emb->half && emb->half == head->half, "the tied head shares the embedding's numbers");
        same_stages(k.s.it, w.s.it, "tied BF16 folder, greedy");
        cached_llama(&k.s);
        // Saved again: the tie found (no lm_head in the file), the numbers those the file held.
        ok = ok && hub_save(&k.s.model, &l.program, again, ST_BF16, NULL, "test_half", &e);
        CHECK(ok, "saving the kept model: %s", e.msg);
        char a[128], b[128];
        snprintf(a, sizeof a, "%s/model.safetensors", dir), snprintf(b, sizeof b, "%s/model.safetensors", again);
        StFile fa, fb;
        if (ok && st_load(&fa, a, &e) && st_load(&fb, b, &e)) {
            bool same = fa.n_entries == fb.n_entries && !st_find(&fb, "lm_head.weight");
            for (int i = 0; same && i < fa.n_entries; i++) {
                const StEntry *x = &fa.entries[i], *y = st_find(&fb, x->name);
                same = y && shape_eq(&x->shape, &y->shape) && !memcmp(x->data, y->data, sizeof(float) * (size_t)shape_numel(&x->shape));
            }
            CHECK(same, "saved again, the kept model's file holds the numbers of the one it was read from");
            st_free(&fa), st_free(&fb);
        }
    }
    if (k.open) session_close(&k.s);
    if (w.open) session_close(&w.s);
    open_model(&k, dir, ids, 0, false, true);
    open_model(&w, dir, ids, 0, true, true);
    if (k.open && w.open) backward_same(&k, &w, 40, "tied BF16 folder, backward");
    if (k.open) session_close(&k.s);
    if (w.open) session_close(&w.s);
    lesson_free(&l);
    const char *files[] = {"config.json", "model.safetensors", "again/config.json", "again/model.safetensors"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(again), rmdir(dir);
}

int main(void) {
    every_pattern();
    products();
    embeddings();
    fixture_folder();
    tied_folder();
    return check_finish("test_half");
}
