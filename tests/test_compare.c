// test_compare.c: the Compare view's figures against a plain loop over the two maps. On the
// dates lesson (forward-pass.md), the first encoder layer's attention weights are pinned and
// the view drawn on the second layer's, head by head, then on the pinned stage itself (no
// difference), then on the second again: each frame's "largest |difference|" is
// the plain loop's over the head on screen, after every change of head or stage (the view keeps
// what it derives from one frame to the next, under the difference map's key: a stale one would
// show the last head's figure), and a frame drawn again says the same.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "scene.h"

static const char *drawn_containing(const Scene *s, const char *part) {
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s->g, &notes);
    for (int k = 0; k < n; k++)
        if (strstr(notes[k].text, part)) return notes[k].text;
    return "";
}

// The largest |now - pinned| over head h of two [H, T, S] maps, cells finite in both and unequal.
static float plain_largest(const float *now, const float *pinned, const Shape *s, int h) {
    const size_t n = (size_t)s->dim[1] * s->dim[2];
    float m = 0;
    for (size_t i = (size_t)h * n; i < (size_t)(h + 1) * n; i++)
        if (now[i] != pinned[i] && isfinite(now[i]) && isfinite(pinned[i]) && fabsf(now[i] - pinned[i]) > m)
            m = fabsf(now[i] - pinned[i]);
    return m;
}

// Draws the view on stage `id`, head h, twice; both frames name the plain loop's figure.
static void check_at(Scene *s, const float *pinned, const char *id, int h) {
    App *a = &s->a;
    app_goto(a, interp_find(a->session.it, id));
    app_act(a, CMD_HEAD, h);
    a->view = VIEW_COMPARE;
    const Stage *st = interp_stage(a->session.it, a->cursor);
    CHECK(shape_eq(&st->shape, &a->pin.shape), "%s: the pinned map's shape", id);
    if (!shape_eq(&st->shape, &a->pin.shape)) return;
    char want[32], got[32] = "", first[400];
    snprintf(want, sizeof want, "%.4g", (double)plain_largest(interp_output(a->session.it, a->cursor), pinned, &st->shape, h));
    app_draw(&s->ui, a);
    snprintf(first, sizeof first, "%s", drawn_containing(s, "largest |difference|"));
    app_draw(&s->ui, a);
    const char *again = drawn_containing(s, "largest |difference|"), *at = strstr(first, "largest |difference| ");
    if (at) sscanf(at + strlen("largest |difference| "), "%31[-0-9.e+]", got);  // the figure, whole
    CHECK(a->head == h && !strcmp(got, want), "%s, head %d: '%s' gives %s, the plain loop %s", id, h + 1, first, got, want);
    CHECK(!strcmp(first, again), "%s, head %d drawn again: '%s', then '%s'", id, h + 1, first, again);
}

int main(void) {
    const SessionSpec spec = {.lesson_path = LESSONS "/forward-pass.md", .target = "2026-11-22"};
    Scene s;
    Err e = {{0}};
    if (!scene_open(&s, 1280, 720, &spec)) return check_finish("test_compare");
    CHECK(interp_run(s.a.session.it, &e), "forward-pass.md: %s", e.msg);
    gfx_note_texts(s.g, true);
    const char *pin = "encoder.layers.0.self_attn.weights";
    app_goto(&s.a, interp_find(s.a.session.it, pin));
    app_act(&s.a, CMD_PIN, 0);
    const float *pinned = s.a.pin.data;
    CHECK(pinned != NULL, "C on %s: pinned", pin);
    if (pinned) {
        const char *later = "encoder.layers.1.self_attn.weights";
        for (int h = 0; h < 3; h++) check_at(&s, pinned, later, h);
        check_at(&s, pinned, pin, 2);    // the pinned stage itself: no difference
        check_at(&s, pinned, later, 2);  // back: derived again, not the last stage's
    }
    scene_close(&s);
    return check_finish("test_compare");
}
