// test_messages.c: the window's messages say what is true for the lesson on screen (issue:
// "Output , was ." on a lesson that generates nothing). Switching a piece off (M) on a greedy
// lesson, a teacher-forced one, a classifier and an encoder names the output each really has.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "check.h"
#include "heat.h"

static void ablate_words(const char *lesson, const char *want) {
    App a;
    Err e = {{0}};
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, lesson);
    CHECK(app_open(&a, &(SessionSpec){.lesson_path = path}, &e) && interp_run(a.session.it, &e), "%s: %s", lesson, e.msg);
    if (!a.loaded) return;
    app_act(&a, CMD_ABLATE_MASK, 0);
    CHECK(strstr(a.notice, want) && !strstr(a.notice, "Output , was ."), "%s, M: '%s' (want '%s')", lesson, a.notice, want);
    app_act(&a, CMD_ABLATE_UNDO, 0);
    CHECK(strstr(a.notice, "everything back on"), "%s, U: %s", lesson, a.notice);
    app_free(&a);
}

// A lesson that fails leaves its error on screen through the keys a teacher presses next, until
// another lesson opens.
static void error_stays(void) {
    char dir[] = "/tmp/stepformer-msg-XXXXXX", path[700];
    if (!mkdtemp(dir)) return;
    static const char *const files[3][2] = {
        {"README.md", "# C\n\n1. [Broken](broken.md)\n2. [Good](good.md)\n"},
        {"broken.md", "# Broken\n\n```lesson\nmodel: random\nconfig: d_model=4 src_vocab_size=99\nvocab: chars\ninput: ab\n```\n\n"
                      "```program\ninput src\nparam @e [src_vocab_size, d_model] xavier\nx = embeding(src, @e)\n```\n"},
        {"good.md", "# Good\n\n```lesson\nmodel: random\nconfig: d_model=4 src_vocab_size=99\nvocab: chars\ninput: ab\n```\n\n"
                    "```program\ninput src\nparam @e [src_vocab_size, d_model] xavier\nx = embedding(src, @e)\n```\n"}};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[k][0]);
        FILE *f = fopen(path, "w");
        if (f) fputs(files[k][1], f), fclose(f);
    }
    App a;
    Err e = {{0}};
    snprintf(path, sizeof path, "%s/good.md", dir);
    CHECK(app_open(&a, &(SessionSpec){.lesson_path = path}, &e), "%s", e.msg);
    app_set_course(&a, dir, path);
    app_open_lesson(&a, 0);
    CHECK(!a.loaded && strstr(a.error, "broken.md:13") && strstr(a.error, "did you mean 'embedding'?"), "%s", a.error);
    const Cmd keys[] = {CMD_NEXT, CMD_PREV, CMD_PLAY, CMD_NEXT_VIEW, CMD_BIGGER, CMD_ABLATE_MASK, CMD_BACKWARD};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) app_act(&a, keys[k], 0);
    CHECK(strstr(a.error, "broken.md:13") != NULL, "the error stays through the keys: '%s'", a.error);
    app_act(&a, CMD_NEXT_LESSON, 0);
    CHECK(a.loaded && !a.error[0], "the next lesson opens and the error goes: '%s'", a.error);
    app_free(&a);
    for (int k = 0; k < 3; k++) snprintf(path, sizeof path, "%s/%s", dir, files[k][0]), remove(path);
    remove(dir);
}

// The Positions view opens on the lesson's own table: base 1000 in the base-1000 mistake, width
// 8 in the positional-encoding lesson's worked example.
static void positions_from_lesson(const char *lesson, int d_model, int base) {
    App a;
    Err e = {{0}};
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, lesson);
    CHECK(app_open(&a, &(SessionSpec){.lesson_path = path}, &e), "%s: %s", lesson, e.msg);
    if (!a.loaded) return;
    CHECK(a.pe.d_model == d_model && a.pe.base == base, "%s: the explorer at d_model %d, base %d (want %d, %d)", lesson,
          a.pe.d_model, a.pe.base, d_model, base);
    app_free(&a);
}

// The Positions view's first picture of a lesson, drawn after another lesson's in the same window,
// is the picture a fresh window draws (it used to be the last lesson's, from the image cache).
static void positions_not_stale(void) {
    enum { W = 1280, H = 720 };
    char first[600], second[600];
    snprintf(first, sizeof first, "%s/forward-pass.md", LESSONS);
    snprintf(second, sizeof second, "%s/positional-encoding.md", LESSONS);
    Rgba *px[2] = {malloc(sizeof(Rgba) * W * H), malloc(sizeof(Rgba) * W * H)};
    for (int run = 0; run < 2 && px[0] && px[1]; run++) {
        Err e = {{0}};
        Gfx *g = gfx_open_offscreen(W, H, &e);
        App a;
        Ui ui = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
        CHECK(g && app_open(&a, &(SessionSpec){.lesson_path = run ? second : first}, &e), "%s", e.msg);
        if (!g || !a.loaded) return;
        a.view = VIEW_PE;
        app_draw(&ui, &a);  // run 0: the first lesson's picture is cached, then the second lesson opens
        if (!run) app_open_spec(&a, &(SessionSpec){.lesson_path = second}, -1);
        a.view = VIEW_PE;
        app_draw(&ui, &a);
        gfx_present(g);
        gfx_read(g, px[run]);
        heat_cache_free(ui.heat);
        app_free(&a);
        gfx_close(g);
    }
    long differ = 0;
    for (long i = 0; px[0] && px[1] && i < (long)W * H; i++) differ += memcmp(&px[0][i], &px[1][i], sizeof(Rgba)) != 0;
    CHECK(px[0] && px[1] && differ == 0, "the Positions view after another lesson: %ld pixels differ from a fresh window", differ);
    free(px[0]), free(px[1]);
}

// C after M: the pin that switching the mask off made gives way to the stage on screen; C again
// unpins as always.
static void pin_after_ablation(void) {
    App a;
    Err e = {{0}};
    char path[600];
    snprintf(path, sizeof path, "%s/forward-pass.md", LESSONS);
    CHECK(app_open(&a, &(SessionSpec){.lesson_path = path}, &e) && interp_run(a.session.it, &e), "%s", e.msg);
    if (!a.loaded) return;
    app_goto(&a, interp_find(a.session.it, "encoder.embed"));
    app_act(&a, CMD_ABLATE_MASK, 0);
    CHECK(a.pin.data && a.pin.automatic && !strcmp(a.pin.stage_id, "encoder.embed"), "M pins the stage as it was");
    app_goto(&a, interp_find(a.session.it, "encoder.pos"));
    app_act(&a, CMD_PIN, 0);
    CHECK(a.pin.data && !a.pin.automatic && !strcmp(a.pin.stage_id, "encoder.pos") && strstr(a.notice, "pinned encoder.pos"),
          "C after M pins the stage on screen: %s", a.notice);
    app_act(&a, CMD_PIN, 0);
    CHECK(!a.pin.data && strstr(a.notice, "unpinned"), "C again unpins: %s", a.notice);
    app_free(&a);
}

int main(void) {
    error_stays();
    pin_after_ablation();
    positions_not_stale();
    positions_from_lesson("mistake-pe-base-1000.md", 48, 1000);
    positions_from_lesson("positional-encoding.md", 8, 10000);
    ablate_words("forward-pass.md", "off: no mask. Output '");
    ablate_words("masks.md", "(the likeliest token at each row)");
    ablate_words("transformers-from-scratch.md", "Output class ");
    ablate_words("encoder-from-scratch.md", "publishes no logits to read an output from");
    return check_finish("test_messages");
}
