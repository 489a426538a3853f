// test_derived.c: what views derive from the trace and the weights, held to an independent
// reading; most of it is kept from one frame to the next (in the heat cache, under a key of the
// view's).
//
// The Compare view's figures against a plain loop over the two maps. On the
// dates lesson (forward-pass.md), the first encoder layer's attention weights are pinned and
// the view drawn on the second layer's, head by head, then on the pinned stage itself (no
// difference), then on the second again: each frame's "largest |difference|" is
// the plain loop's over the head on screen, after every change of head or stage (the view keeps
// what it derives from one frame to the next, under the difference map's key: a stale one would
// show the last head's figure), and a frame drawn again says the same.
//
// The Decoding view's bars under a trace budget that let the output head go (lessons/gpt2.md, a
// 63-token prompt, 25 MB): its row is recomputed once and kept; each frame's most likely token's
// probability is that of the same row of the pass without a budget, through the same softmax.
//
// The Positions view's plot of a learned table (gpt2.md's wpe) scales its three columns so the
// largest |value| reaches the +-1 lines: those lines are labelled with that value, read here from
// the weight itself, not "+1" and "-1".
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "scene.h"

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
    snprintf(first, sizeof first, "%s", scene_text_containing(s, "largest |difference|"));
    app_draw(&s->ui, a);
    const char *again = scene_text_containing(s, "largest |difference|"), *at = strstr(first, "largest |difference| ");
    if (at) sscanf(at + strlen("largest |difference| "), "%31[-0-9.e+]", got);  // the figure, whole
    CHECK(a->head == h && !strcmp(got, want), "%s, head %d: '%s' gives %s, the plain loop %s", id, h + 1, first, got, want);
    CHECK(!strcmp(first, again), "%s, head %d drawn again: '%s', then '%s'", id, h + 1, first, again);
}

// The probability the Decoding view's top bar shows, and the stage and row its title names.
static bool top_bar(const Scene *s, char *id, size_t n, int *row, char *prob, size_t pn) {
    const char *sub = scene_text_containing(s, ", row "), *arrow = scene_text_containing(s, "\xe2\x86\x90 argmax");
    const char *comma = strstr(sub, ", row ");
    if (!comma || !*arrow) return false;
    while (*sub == ' ') sub++;
    snprintf(id, n, "%.*s", (int)(comma - sub), sub);
    *row = atoi(comma + 6);
    snprintf(prob, pn, "%.*s", (int)strcspn(arrow, " "), arrow);
    return true;
}

static void decoding_under_budget(void) {
    char ids[1024] = "";
    for (int i = 0, k = 0; i < 63; i++) k += snprintf(ids + k, sizeof ids - (size_t)k, "%s%d", i ? "," : "", 100 + 37 * i);
    SessionSpec spec = {.lesson_path = LESSONS "/gpt2.md", .src_ids = ids, .max_len = 1};
    Session ref;
    Err e = {{0}};
    const bool opened = session_open(&ref, &spec, &e);
    if (!opened || !interp_run(ref.it, &e)) {
        CHECK(false, "gpt2.md: %s", e.msg);
        if (opened) session_close(&ref);
        return;
    }
    spec.trace_mb = 25;
    Scene s;
    if (!scene_open(&s, 1280, 720, &spec)) {
        session_close(&ref);
        return;
    }
    CHECK(interp_run(s.a.session.it, &e), "gpt2.md under 25 MB: %s", e.msg);
    gfx_note_texts(s.g, true);
    app_goto(&s.a, interp_n_done(s.a.session.it) - 1);
    s.a.view = VIEW_DECODE;
    char id[STAGE_ID_MAX], p1[32], p2[32] = "", want[32] = "";
    int row = -1, row2 = -2;
    app_draw(&s.ui, &s.a);
    const bool drawn = top_bar(&s, id, sizeof id, &row, p1, sizeof p1);
    app_draw(&s.ui, &s.a);
    top_bar(&s, id, sizeof id, &row2, p2, sizeof p2);
    const int k = interp_find(ref.it, id);
    CHECK(drawn && k >= 0, "the Decoding view names its stage and row ('%s', row %d)", id, row);
    if (drawn && k >= 0) {
        const Stage *st = interp_stage(ref.it, k);
        const int V = st->shape.dim[st->shape.ndim - 1];
        float *p = malloc(sizeof(float) * (size_t)V);
        const float *x = interp_output(ref.it, k) + (size_t)row * V;
        if (st->kind == TK_PROBS) memcpy(p, x, sizeof(float) * (size_t)V);  // shown as they are
        else softmax_forward(p, x, 1, V);                                    // else through a softmax
        float best = p[0];
        for (int v = 1; v < V; v++) best = p[v] > best ? p[v] : best;
        snprintf(want, sizeof want, "%.4f", (double)best);
        free(p);
    }
    CHECK(!strcmp(p1, want), "%s row %d under the budget: the top bar says %s, the pass without a budget %s", id, row, p1, want);
    CHECK(row2 == row && !strcmp(p2, p1), "drawn again: row %d, %s (first: row %d, %s)", row2, p2, row, p1);
    scene_close(&s);
    session_close(&ref);
}

// The cache itself: a key asked again is not fresh and keeps its values; four are kept, the least
// recently used going first; two of 2^25 floats are not kept together.
static void cache_keeps(void) {
    HeatCache *c = heat_cache_new();
    bool fresh;
    unsigned key[5] = {1, 2, 3, 4, 5};
    HeatDerived *d = c ? heat_cache_derived(c, key, 8, &fresh) : NULL;
    CHECK(d && fresh, "a new key: fresh");
    if (!d) return heat_cache_free(c);
    for (int i = 0; i < 8; i++) d->data[i] = (float)i;
    d = heat_cache_derived(c, key, 8, &fresh);
    CHECK(d && !fresh && d->data[7] == 7.0f, "the same key again: kept, with its values");
    d = heat_cache_derived(c, key, 9, &fresh);
    CHECK(d && fresh, "the same key, another size: fresh");
    for (unsigned k = 10; k < 14; k++) {  // four others, after it: it is the least recently used
        key[0] = k;
        heat_cache_derived(c, key, 8, &fresh);
    }
    key[0] = 1;
    heat_cache_derived(c, key, 9, &fresh);
    CHECK(fresh, "five keys later: the first went");
    key[0] = 20;
    heat_cache_derived(c, key, (size_t)1 << 25, &fresh);
    key[0] = 21;
    heat_cache_derived(c, key, (size_t)1 << 25, &fresh);
    key[0] = 20;
    heat_cache_derived(c, key, (size_t)1 << 25, &fresh);
    CHECK(fresh, "two of 2^25 floats: the first was let go for the second");
    heat_cache_free(c);
}

static void learned_plot_scale(void) {
    Scene s;
    if (!scene_open(&s, 1280, 720, &(SessionSpec){.lesson_path = LESSONS "/gpt2.md"})) return;
    App *a = &s.a;
    a->view = VIEW_PE;
    gfx_note_texts(s.g, true);
    app_draw(&s.ui, a);
    const StEntry *w = model_weight(&a->session.model, a->pe.learned);
    const int rows = w ? w->shape.dim[0] : 0, D = w ? w->shape.dim[1] : 0, dims[3] = {0, 1, D - 2};
    float *t = w ? malloc(sizeof(float) * (size_t)rows * D) : NULL;
    if (t) model_numbers(&a->session.model, (int)(w - a->session.model.weights.entries), t);
    float big = 0;
    for (int i = 0; t && i < rows; i++)
        for (int k = 0; k < 3; k++) big = fmaxf(big, fabsf(t[(size_t)i * D + dims[k]]));
    char top[32], bottom[32];
    snprintf(top, sizeof top, "+%.3g", (double)big);
    snprintf(bottom, sizeof bottom, "\xe2\x88\x92%.3g", (double)big);
    CHECK(t && a->pe.dim == 0 && scene_drew(&s, top) && scene_drew(&s, bottom) && !scene_drew(&s, "+1"),
          "%s's plot of dims 0, 1 and %d: its lines labelled %s and %s", a->pe.learned, D - 2, top, bottom);
    free(t);
    scene_close(&s);
}

int main(void) {
    const SessionSpec spec = {.lesson_path = LESSONS "/forward-pass.md", .target = "2026-11-22"};
    Scene s;
    Err e = {{0}};
    if (!scene_open(&s, 1280, 720, &spec)) return check_finish("test_derived");
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
    decoding_under_budget();
    cache_keeps();
    learned_plot_scale();
    return check_finish("test_derived");
}
