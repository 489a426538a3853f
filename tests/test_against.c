// test_against.c: each mistake lesson beside its correct program (its `correct:`): the first stage
// where the two passes part is the one the mistake introduces, checked against a naive walk over
// the two traces; a bad `correct:` names its file and line; MISTAKES.md stands before lesson 20
// in the course, with the README's sections and numbers in the title; and J in the window reaches
// the Compare view's side-by-side without a pin.
#define _POSIX_C_SOURCE 200809L  // mkdtemp
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene.h"

static const struct {
    const char *lesson, *first;  // the stage the mistake introduces
} cases[] = {
    {"mistake-pe-base-1000.md", "encoder.pos"},  // the table itself
    {"mistake-no-cross-attention.md", "step.0.decoder.layers.0.cross_attn.q"},  // q from the self_attn weights
    {"mistake-reshape-heads.md", "encoder.layers.0.self_attn.concat"},
    {"mistake-second-residual.md", "encoder.layers.0.add2"},
    {"mistake-no-scaling.md", "encoder.layers.0.self_attn.masked"},  // the raw scores masked, no `scaled`
    {"mistake-narrow-feed-forward.md", "encoder.tokens"},  // another model: its embedding already
    {"mistake-no-causal-mask.md", "step.1.decoder.layers.0.self_attn.masked"},  // round 0 has one row
    {"mistake-no-positions.md", "encoder.embed"},  // trained apart from reverse.safetensors
};

// The correct program's stage named `id`, found by walking every stage.
static int naive_find(const Interp *it, const char *id) {
    for (int i = 0; i < interp_n_done(it); i++)
        if (!strcmp(interp_stage(it, i)->id, id)) return i;
    return -1;
}

// Whether two outputs of one shape are equal within the stated tolerance (equal -inf: equal).
static bool naive_same(const float *a, const float *b, long n, float *worst) {
    *worst = 0;
    for (long i = 0; i < n; i++) {
        if (a[i] == b[i]) continue;
        const float d = isfinite(a[i]) && isfinite(b[i]) ? fabsf(a[i] - b[i]) : INFINITY;
        if (d > *worst) *worst = d;
    }
    return *worst <= AGAINST_TOLERANCE;
}

static void first_difference(const char *lesson, const char *want) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, lesson);
    const SessionSpec spec = {.lesson_path = path};
    Session m, c;
    Err e = {{0}};
    const bool opened = session_open(&m, &spec, &e);
    CHECK(opened, "%s: %s", lesson, e.msg);
    if (!opened) return;
    const bool both = against_open(&c, &m, &spec, &e);
    CHECK(both, "%s: %s", lesson, e.msg);
    if (!both) return session_close(&m);
    Against a;
    CHECK(against_match(&a, m.it, c.it, &e), "%s: %s", lesson, e.msg);
    const int first = a.first;
    CHECK(first >= 0 && !strcmp(interp_stage(m.it, first)->id, want), "%s: first difference %s, want %s", lesson,
          first >= 0 ? interp_stage(m.it, first)->id : "none", want);
    // Independently: every stage before it that the correct program has is equal, and it is not.
    for (int i = 0; first >= 0 && i <= first; i++) {
        const Stage *st = interp_stage(m.it, i);
        const int k = naive_find(c.it, st->id);
        CHECK(k == a.stage[i].other, "%s: %s matched with %d, naive %d", lesson, st->id, a.stage[i].other, k);
        if (k < 0) {
            CHECK(i < first, "%s: the first difference has a counterpart", lesson);
            continue;
        }
        const Stage *ot = interp_stage(c.it, k);
        float worst = 0;
        const bool same = shape_eq(&st->shape, &ot->shape) &&
                          naive_same(interp_output(m.it, i), interp_output(c.it, k), (long)shape_numel(&st->shape), &worst);
        CHECK(same == (i < first), "%s: %s is %s the correct program's (largest difference %g)", lesson, st->id,
              same ? "the same as" : "not", (double)worst);
        if (i == first && shape_eq(&st->shape, &ot->shape))
            CHECK(worst == a.stage[i].max_diff, "%s: largest difference %g, naive %g", lesson, (double)a.stage[i].max_diff,
                  (double)worst);
    }
    // The narration says where J lands.
    char says[200];
    snprintf(says, sizeof says, "Press J: the Compare view opens on `%s`", want);
    CHECK(strstr(m.lesson.source, says) != NULL, "%s: its narration says '%s'", lesson, says);
    against_free(&a);
    session_close(&c);
    session_close(&m);
}

// A `correct:` that names no file: the lesson's file and line, and the closest lesson's name.
static void bad_correct(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/made-up.md", LESSONS);  // never written: parsed from text
    const char *text = "# Made up\n\n```lesson\nmodel: random\ncorrect: forward-pas.md\n```\n\n"
                       "```program\ninput src\nparam @e [src_vocab_size, d_model] xavier\nx = embedding(src, @e)\n```\n";
    Lesson l;
    Err e = {{0}};
    const bool ok = lesson_parse(&l, path, text, &e);
    CHECK(!ok && strstr(e.msg, "made-up.md:5") && strstr(e.msg, "did you mean 'forward-pass.md'"), "%s", e.msg);
    if (ok) lesson_free(&l);
    // A lesson without one: the command line says what to add.
    snprintf(path, sizeof path, "%s/scaling.md", LESSONS);
    Session m, c;
    const SessionSpec spec = {.lesson_path = path};
    CHECK(session_open(&m, &spec, &e), "%s", e.msg);
    CHECK(!against_open(&c, &m, &spec, &e) && strstr(e.msg, "names no correct program"), "%s", e.msg);
    session_close(&m);
}

static int course_index(const Course *c, const char *name) {
    for (int k = 0; k < c->n; k++)
        if (!strcmp(strrchr(c->items[k].path, '/') + 1, name)) return k;
    return -1;
}

// MISTAKES.md stands where the README's paragraph places it, before lesson 21; N and P from it.
static void course_places(void) {
    Course c;
    Err e = {{0}};
    CHECK(course_load(&c, LESSONS, &e), "%s", e.msg);
    const int mk = course_index(&c, "MISTAKES.md"), l21 = course_index(&c, "mistake-pe-base-1000.md");
    const int l20 = course_index(&c, "attention-is-all-you-need-pytorch.md"), l8 = course_index(&c, "forward-pass.md");
    CHECK(mk >= 0 && l20 >= 0 && mk == l20 + 1 && l21 == mk + 1, "MISTAKES.md at %d, 20 at %d, 21 at %d", mk, l20, l21);
    char at[48];
    CHECK(c.numbered == 37, "the README numbers %d lessons", c.numbered);
    CHECK(mk >= 0 && !strcmp(course_place(&c, mk, at, sizeof at), "before 20/37"), "MISTAKES.md: '%s'", at);
    CHECK(l8 >= 0 && !strcmp(course_place(&c, l8, at, sizeof at), "8/37") && !strcmp(c.items[l8].section, "The whole model"),
          "forward-pass.md: '%s' in '%s'", at, l8 >= 0 ? c.items[l8].section : "");
    CHECK(l21 >= 0 && c.items[l21].number == 20 && mk >= 0 && c.items[mk].number == 0, "the numbers of 21 and MISTAKES.md");
    course_free(&c);

    char path[600];
    snprintf(path, sizeof path, "%s/MISTAKES.md", LESSONS);
    App a;
    CHECK(app_open(&a, &(SessionSpec){.lesson_path = path}, &e), "%s", e.msg);
    app_set_course(&a, LESSONS, path);
    CHECK(a.lesson_at == mk, "MISTAKES.md is found in the course: %d", a.lesson_at);
    app_act(&a, CMD_NEXT_LESSON, 0);
    CHECK(a.loaded && strstr(a.session.lesson.path, "mistake-pe-base-1000.md"), "N from MISTAKES.md: %s", a.session.lesson.path);
    app_act(&a, CMD_PREV_LESSON, 0);
    app_act(&a, CMD_PREV_LESSON, 0);
    CHECK(a.loaded && strstr(a.session.lesson.path, "attention-is-all-you-need-pytorch.md"), "P from MISTAKES.md: %s",
          a.session.lesson.path);
    app_open_lesson(&a, l8);
    char title[600];
    app_title(&a, title, sizeof title);
    CHECK(!strcmp(title, "stepformer - 8/37 The whole model: The Transformer, one kernel at a time"), "title '%s'", title);
    app_free(&a);
}

// J on a mistake lesson: the first difference, in Compare, beside the correct program; no pin.
static void window_jump(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/mistake-second-residual.md", LESSONS);
    Scene s;
    if (!scene_open(&s, 1280, 720, &(SessionSpec){.lesson_path = path})) return;
    App *a = &s.a;
    app_act(a, CMD_FIRST_DIFF, 0);
    const StageMatch *m = app_against_at(a, a->cursor);
    CHECK(a->view == VIEW_COMPARE && !a->pin.data && m && m->kind == MATCH_VALUES, "J: view %d, match %d",
          (int)a->view, m ? (int)m->kind : -1);
    CHECK(!strcmp(interp_stage(a->session.it, a->cursor)->id, "encoder.layers.0.add2"), "J goes to %s",
          interp_stage(a->session.it, a->cursor)->id);
    app_metrics(a, &s.ui, 1280, 720);
    app_draw(&s.ui, a);
    app_act(a, CMD_FIRST, 0);  // a stage both have, the same: still beside it, no pin
    m = app_against_at(a, a->cursor);
    CHECK(m && m->kind == MATCH_SAME && a->view == VIEW_COMPARE, "the first stage: %d", m ? (int)m->kind : -1);
    app_draw(&s.ui, a);
    scene_close(&s);
    // Tab to Compare, no J: the next tick sets the correct program beside the stage on screen.
    snprintf(path, sizeof path, "%s/mistake-no-scaling.md", LESSONS);
    if (!scene_open(&s, 1920, 1080, &(SessionSpec){.lesson_path = path})) return;
    while (s.a.view != VIEW_COMPARE) app_act(&s.a, CMD_NEXT_VIEW, 0);
    CHECK(!app_against_at(&s.a, s.a.cursor), "nothing beside it before the tick");
    app_tick(&s.a, 0.0, 8.0);
    m = app_against_at(&s.a, s.a.cursor);
    CHECK(m && m->kind == MATCH_SAME && !s.a.pin.data, "Compare after a tick: %d", m ? (int)m->kind : -1);
    app_metrics(&s.a, &s.ui, 1920, 1080);
    app_draw(&s.ui, &s.a);
    // The answer's token ids side by side as tokens: the mistake's one wrong token (the year's
    // day, 2026-11-02 against 2026-11-22) highlighted, not subtracted as numbers.
    app_act(&s.a, CMD_LAST, 0);
    app_tick(&s.a, 0.0, 8.0);
    app_draw(&s.ui, &s.a);
    gfx_present(s.g);
    Rgba *px = malloc(sizeof *px * 1920 * 1080);
    long lit = 0;
    if (px && gfx_read(s.g, px))
        for (int y = 1080 / 10; y < 1080 * 9 / 10; y++)
            for (int x = 1920 * 22 / 100; x < 1920 * 70 / 100; x++) {
                const Rgba c = px[(size_t)y * 1920 + x], l = s.ui.th->lit;
                lit += c.r == l.r && c.g == l.g && c.b == l.b;
            }
    CHECK(app_against_at(&s.a, s.a.cursor) && interp_stage(s.a.session.it, s.a.cursor)->kind == TK_IDS && lit > 200,
          "Compare on the answer's ids: a highlighted token (%ld pixels)", lit);
    free(px);
    scene_close(&s);
    // A lesson without a correct program: J says what is missing, and C still pins.
    snprintf(path, sizeof path, "%s/scaling.md", LESSONS);
    if (!scene_open(&s, 1280, 720, &(SessionSpec){.lesson_path = path})) return;
    app_act(&s.a, CMD_FIRST_DIFF, 0);
    CHECK(strstr(s.a.error, "names no correct program") != NULL, "J without correct: '%s'", s.a.error);
    app_act(&s.a, CMD_NEXT, 0);  // a stage that has run
    app_act(&s.a, CMD_PIN, 0);
    CHECK(s.a.pin.data != NULL, "C pins in a lesson without correct:");
    scene_close(&s);
}

int main(void) {
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) first_difference(cases[k].lesson, cases[k].first);
    bad_correct();
    course_places();
    window_jump();
    return check_finish("test_against");
}
