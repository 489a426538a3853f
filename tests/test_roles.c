// test_roles.c: what each stage is, settled at expansion (roles.c): the steps of every attention
// of the standard lesson (checked against its stage names, which follow the recipe), an
// attention with no parameters and no heads, and a softmax that is not attention.
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "session.h"

static const char *suffix(const char *id) { return strrchr(id, '.') ? strrchr(id, '.') + 1 : id; }

// Every .scores/.scaled/.masked/.weights/.context stage of an attention sublayer has that role and
// points at its own block's softmax; no other stage has a role.
static void standard_lesson(void) {
    Session s;
    Err e = {{0}};
    const SessionSpec spec = {.builtin_lesson = "forward-pass.md"};
    if (!session_open(&s, &spec, &e) || !interp_run(s.it, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    int bad = 0, maps = 0;
    for (int i = 0; i < interp_n_stages(s.it); i++) {
        const Stage *st = interp_stage(s.it, i);
        int want = ROLE_NONE;
        for (int r = ROLE_SCORES; r <= ROLE_CONTEXT && st->where.sublayer[0]; r++)
            if (!strcmp(suffix(st->id), role_names[r])) want = r;
        int softmax = -1;
        if (want != ROLE_NONE) {
            char id[STAGE_ID_MAX + 8];
            snprintf(id, sizeof id, "%.*s.weights", (int)(strrchr(st->id, '.') - st->id), st->id);
            softmax = interp_find(s.it, id);
        }
        maps += st->role == ROLE_WEIGHTS;
        if (st->role != want || (want != ROLE_NONE && st->att_weights != softmax)) {
            if (bad++ < 5) fprintf(stderr, "  %s: role %d (want %d), weights %d (want %d)\n", st->id, st->role, want,
                                   st->att_weights, softmax);
        }
        if (st->role == ROLE_SCALED && strcmp(st->attr_text, "1/sqrt(d_k)") != 0 && bad++ < 5)
            fprintf(stderr, "  %s: by= '%s'\n", st->id, st->attr_text);
    }
    CHECK(bad == 0, "%d stages with the wrong role", bad);
    // 2 encoder layers, and per greedy round 2 decoder layers of self- and cross-attention.
    CHECK(maps >= 2 + 4, "%d attention maps", maps);
    session_close(&s);
}

static void other_program(void) {
    const char *path = "/tmp/stepformer-roles.md";
    FILE *f = fopen(path, "w");
    if (!f) {
        CHECK(false, "cannot write %s", path);
        return;
    }
    fputs("# Roles\n\n```lesson\nmodel: random\nconfig: d_model=8 nhead=2 src_vocab_size=99 max_positions=16\n"
          "vocab: chars\ninput: abcd\n```\n\n```program\ninput src\nblock enc\n"
          "  param @emb [src_vocab_size, d_model] normal(1)\n  x = embedding(src, @emb, scale=1)\n"
          "  s = matmul(x, transpose(x))\n  w = softmax(s)\n  y = matmul(w, x)\n"
          "  logits = linear(y, @emb)\n  p = softmax(logits)\nend\noutput memory = y\n```\n", f);
    fclose(f);
    Session s;
    Err e = {{0}};
    const SessionSpec spec = {.lesson_path = path};
    if (!session_open(&s, &spec, &e) || !interp_run(s.it, &e)) {
        CHECK(false, "%s", e.msg);
        remove(path);
        return;
    }
    const int sc = interp_find(s.it, "enc.s"), w = interp_find(s.it, "enc.w"), p = interp_find(s.it, "enc.p");
    const int y = interp_find(s.it, "enc.y");
    CHECK(w >= 0 && interp_stage(s.it, w)->role == ROLE_WEIGHTS && interp_stage(s.it, w)->att_weights == w,
          "softmax(x x^T) over [queries, keys] is an attention map without heads");
    CHECK(sc >= 0 && interp_stage(s.it, sc)->role == ROLE_SCORES && interp_stage(s.it, sc)->att_weights == w,
          "x x^T is its scores");
    CHECK(p >= 0 && interp_stage(s.it, p)->role == ROLE_NONE, "a softmax over the vocabulary is not attention");
    CHECK(y >= 0 && interp_stage(s.it, y)->role == ROLE_CONTEXT && interp_stage(s.it, y)->att_weights == w,
          "the weighted sum of x is its context");
    session_close(&s);
    remove(path);
}

static const float *out_of(const Session *s, const char *id) {
    const int k = interp_find(s->it, id);
    return k >= 0 ? interp_output(s->it, k) : NULL;
}

static bool same_floats(const float *a, const float *b, size_t n) { return a && b && !memcmp(a, b, sizeof(float) * n); }

static bool all_zero(const float *a, size_t n) {
    for (size_t i = 0; a && i < n; i++)
        if (a[i] != 0.0f) return false;
    return a != NULL;
}

// Ablations on the bundled dates model: each switches exactly its piece off (checked against the
// stages around it), and switching them all back gives the original pass bit for bit.
static void ablations(void) {
    Session s;
    Err e = {{0}};
    const SessionSpec spec = {.builtin_lesson = "forward-pass.md"};
    if (!session_open(&s, &spec, &e) || !interp_run(s.it, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    enum { N = 4 * 16 * 16, HEAD = 16 * 16 };
    static float weights0[N], context0[4 * 16 * 12];
    const char *w0 = "encoder.layers.0.self_attn.weights", *c0 = "encoder.layers.0.self_attn.context";
    memcpy(weights0, out_of(&s, w0), sizeof weights0), memcpy(context0, out_of(&s, c0), sizeof context0);
    int n0, n1;
    StopReason why;
    float ids0[64];
    const float *g = interp_generated(s.it, &n0, &why);
    memcpy(ids0, g, sizeof(float) * (size_t)n0);
    const char *dm = "step.1.decoder.layers.0.self_attn.masked", *ds = "step.1.decoder.layers.0.self_attn.scaled";
    const int causal_n = 4 * 2 * 2;
    CHECK(!same_floats(out_of(&s, dm), out_of(&s, ds), causal_n), "the causal mask hides a key in round 1");
    Ablation ab = {.no_mask = true, .no_positions = true};
    const int w = interp_find(s.it, w0);
    CHECK(ablation_toggle_head(&ab, interp_stage(s.it, w), 1), "head 2 switched off");
    bool ok = interp_set_ablation(s.it, &ab, &s.run, &e) && interp_run(s.it, &e);
    CHECK(ok, "the ablated pass runs: %s", e.msg);
    if (ok) {
        CHECK(same_floats(out_of(&s, "encoder.pos"), out_of(&s, "encoder.embed"), 16 * 48),
              "no positional encoding: pos is the embedding");
        CHECK(same_floats(out_of(&s, dm), out_of(&s, ds), causal_n), "no mask: masked is scaled");
        const float *wa = out_of(&s, w0), *ca = out_of(&s, c0);
        CHECK(wa && all_zero(wa + HEAD, HEAD) && !all_zero(wa, HEAD), "head 2's weights are zero, head 1's are not");
        bool zero_ctx = ca != NULL;
        for (int t = 0; ca && t < 16; t++) zero_ctx = zero_ctx && all_zero(ca + 16 * 12 + t * 12, 12);
        CHECK(zero_ctx, "so head 2 adds nothing to the context");
    }
    const Ablation none = {0};
    ok = interp_set_ablation(s.it, &none, &s.run, &e) && interp_run(s.it, &e);
    g = interp_generated(s.it, &n1, &why);
    CHECK(ok && same_floats(out_of(&s, w0), weights0, N) && same_floats(out_of(&s, c0), context0, 4 * 16 * 12) &&
              n1 == n0 && same_floats(g, ids0, (size_t)n0),
          "undone: the same pass, bit for bit, and the same output");
    char text[200];
    ablation_text(&ab, text, sizeof text);
    CHECK(!strcmp(text, "no mask, no positional encoding, head 2 of encoder.layers.0.self_attn.weights"), "%s", text);
    session_close(&s);
}

int main(void) {
    ablations();
    standard_lesson();
    other_program();
    return check_finish("test_roles");
}
