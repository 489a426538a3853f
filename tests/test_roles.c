// test_roles.c: what each stage is, settled at expansion (roles.c): the steps of every attention
// of the standard lesson (checked against its stage names, which follow the recipe), an
// attention with no parameters and no heads, and a softmax that is not attention.
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "session.h"

static const char *suffix(const char *id) { return strrchr(id, '.') ? strrchr(id, '.') + 1 : id; }

// Every .scores/.scaled/.masked/.weights stage of an attention sublayer has that role and points
// at its own block's softmax; no other stage has a role.
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
        for (int r = ROLE_SCORES; r <= ROLE_WEIGHTS && st->where.sublayer[0]; r++)
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
    CHECK(y >= 0 && interp_stage(s.it, y)->role == ROLE_NONE, "the weighted sum is not a step of the map");
    session_close(&s);
    remove(path);
}

int main(void) {
    standard_lesson();
    other_program();
    return check_finish("test_roles");
}
