// test_readable.c: what a projector shows at 1280x720 can be read from the back of the room.
//   - no text in any view is drawn under 14 px at the default scale, on the lessons a first
//     lecture uses, at stages spread over each pass (the canvas records its smallest text);
//   - the cached decoder's stages mark the rows it computed;
//   - pressing + never makes a heatmap smaller: its cells keep at least their size;
//   - the Decoding view of sampling and beam search, at every stage;
//   - the title bar shows each lesson's title, or its first clause, whole (never cut mid-word);
//   - the Patch view's map titles and its logit lens's heading are whole, and so is the note
//     under a downsampled map (the 256-position table of encoder-from-scratch);
//   - a pinned map keeps the tokens it was pinned with after the input changes;
//   - the program's line of the stage on screen is shown whole, above the formula;
//   - every line of the key list (?) is drawn whole;
//   - no text that carries a number is cut with "…" (the canvas records each cut), at every
//     step of the backward pass in the Stage and Attention views, with each learner's mistake
//     (W) on the attention steps, and in every view once, with the gradient check on screen;
//   - before the first attention map, the Attention view names the stage it begins at and what
//     it is (a GPT's masked self-attention, not "the first encoder layer"), and the Decoding
//     view says why a decoder has no cross-attention (a GPT has no encoder).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "back_mistakes.h"
#include "check.h"
#include "feature.h"
#include "heat.h"
#include "keys.h"
#include "scene.h"

enum { MIN_PX = 14, W = 1280, H = 720 };

static const char *const lessons[] = {"self-attention.md", "scaling.md", "multi-head.md", "positional-encoding.md",
                                      "masks.md", "forward-pass.md", "greedy-decoding.md", "cached-decoding.md",
                                      "multi-query.md", "backprop.md", "which-head.md", "transformers-from-scratch.md",
                                      "mistake-second-residual.md", "mistake-no-causal-mask.md"};

// Draws the scene and checks its smallest text; `what` names the place in a failure.
static void check_frame(Scene *s, const char *what) {
    app_draw(&s->ui, &s->a);
    gfx_present(s->g);
    int px = 0;
    const char *text = "";
    if (gfx_smallest_text(s->g, &px, &text))
        CHECK(px >= MIN_PX, "%s: text of %d px (\"%s\"), under %d at %dx%d", what, px, text, MIN_PX, W, H);
}

static const char ELLIPSIS[] = "\xe2\x80\xa6";

// The text drawn in the last frame that reads `text` (leading spaces aside), or NULL.
static const GfxTextNote *drawn(const Scene *s, const char *text, size_t len) {
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s->g, &notes);
    for (int k = 0; k < n; k++) {
        const char *t = notes[k].text + strspn(notes[k].text, " ");
        if (strlen(t) == len && !strncmp(t, text, len)) return &notes[k];
    }
    return NULL;
}

// The title bar holds the lesson's title whole, or its first clause: up to "? " (kept) or
// ": " (left out) when that is at least 12 bytes, written out here from the titles.
static void check_title(const Scene *s, const char *name) {
    const char *title = s->a.source, *q = strstr(title, "? "), *c = strstr(title, ": ");
    const size_t clause = q && (!c || q < c) ? (size_t)(q - title) + 1 : c ? (size_t)(c - title) : 0;
    const bool whole = drawn(s, title, strlen(title)) || (clause >= 12 && drawn(s, title, clause));
    CHECK(whole, "%s at %dx%d: the title bar shows neither \"%s\" nor its first clause whole", name, W, H, title);
}

// The key list (?) fits at 1280x720: every line of it is drawn whole, its keys and their meaning.
static void test_help_whole(void) {
    Scene s;
    if (!scene_open(&s, W, H, &(SessionSpec){.builtin_lesson = "forward-pass.md"})) return;
    gfx_note_texts(s.g, true);
    app_act(&s.a, CMD_HELP, 0);
    app_draw(&s.ui, &s.a);
    for (int k = 0; k < key_help_count; k++) {
        CHECK(drawn(&s, key_help[k].keys, strlen(key_help[k].keys)) != NULL, "help: the keys '%s' whole", key_help[k].keys);
        CHECK(drawn(&s, key_help[k].what, strlen(key_help[k].what)) != NULL, "help: '%s' whole at %dx%d", key_help[k].what, W, H);
    }
    scene_close(&s);
}

// Every view at a stage every few stages (every stage of a short pass), and every attention map.
static void test_lesson(const char *name) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, name);
    Scene s;
    if (!scene_open(&s, W, H, &(SessionSpec){.lesson_path = path})) return;
    gfx_note_texts(s.g, true);
    Err e = {{0}};
    CHECK(interp_run(s.a.session.it, &e), "%s: %s", name, e.msg);
    const int n = interp_n_stages(s.a.session.it), every = n > 40 ? n / 20 : 1;
    int frames = 0;
    check_frame(&s, name);
    check_title(&s, name);
    for (int i = 0; i < n; i++) {
        const Stage *st = interp_stage(s.a.session.it, i);
        const bool attention = strstr(st->id, "weights") != NULL;
        if (i % every && !attention && i != n - 1) continue;
        app_goto(&s.a, i);
        for (int v = 0; v < VIEW_COUNT; v++) {
            if (v == VIEW_TRAIN || v == VIEW_PATCH || (v == VIEW_COMPARE && !attention && !s.a.session.lesson.setup.correct[0])) continue;
            s.a.view = (ViewKind)v;
            if (v == VIEW_COMPARE && !s.a.pin.data) app_act(&s.a, CMD_PIN, 0);
            char what[300];
            snprintf(what, sizeof what, "%s, %s view at %s", name, view_names[v], st->id);
            check_frame(&s, what);
            frames++;
        }
    }
    // The opening and closing cards (Left on the first stage, Right on the last).
    app_goto(&s.a, 0);
    s.a.view = VIEW_STAGE;
    app_act(&s.a, CMD_PREV, 0);
    CHECK(s.a.card == CARD_OPENING, "%s: Left on the first stage shows the opening card", name);
    check_frame(&s, "the opening card");
    app_goto(&s.a, n - 1);
    app_act(&s.a, CMD_NEXT, 0);
    CHECK(s.a.card == CARD_CLOSING, "%s: Right on the last stage shows the closing card", name);
    check_frame(&s, "the closing card");
    // The Training view before a run, and the lesson list and the key list over a stage.
    app_goto(&s.a, 0);
    s.a.view = VIEW_TRAIN;
    check_frame(&s, "the Training view");
    s.a.view = VIEW_STAGE;
    app_act(&s.a, CMD_LESSONS, 0);
    check_frame(&s, "the lesson list");
    app_act(&s.a, CMD_LESSONS, 0);
    app_act(&s.a, CMD_HELP, 0);
    check_frame(&s, "the key list");
    CHECK(frames > 0, "%s: drew its views", name);
    scene_close(&s);
}

// The cached decoder's stages mark the row it computed this round (outlined in the accent
// colour); the rows it copied are not outlined, and nor is anything in the plain decoder.
static bool accent_at(Scene *s, const Rgba *px, int x, int y) {
    const Rgba c = px[(size_t)y * W + x], a = s->ui.th->accent;
    return c.r == a.r && c.g == a.g && c.b == a.b;
}

static void test_cached_rows_marked(void) {
    static const struct { const char *lesson, *id; bool marked; } at[] = {
        {"cached-decoding.md", "step.3.decoder.layers.0.self_attn.k", true},
        {"cached-decoding.md", "step.3.decoder.layers.0.self_attn.weights", true},  // its new row alone
        {"cached-decoding.md", "step.3.decoder.layers.0.self_attn.q_heads", true},  // the rows above recomputed
        {"greedy-decoding.md", "step.3.decoder.layers.0.self_attn.k", false},  // the plain decoder
    };
    Rgba *px = malloc(sizeof *px * W * H);
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", LESSONS, at[k].lesson);
        Scene s;
        if (!scene_open(&s, W, H, &(SessionSpec){.lesson_path = path})) continue;
        Err e = {{0}};
        CHECK(interp_run(s.a.session.it, &e), "%s", e.msg);
        app_goto(&s.a, interp_find(s.a.session.it, at[k].id));
        s.a.view = VIEW_STAGE;
        app_draw(&s.ui, &s.a);
        gfx_present(s.g);
        CHECK(gfx_read(s.g, px), "read the canvas");
        const ZoomView *z = &s.ui.zoom_view;
        const int rows = z->r1 - z->r0, x = z->cells.x + z->cells.w / 2;
        CHECK(rows >= 2, "%s: rows shown", at[k].id);
        if (rows < 2) continue;
        const int ch = z->cells.h / rows, last_top = z->cells.y + (rows - 1) * ch - 1, first_bottom = z->cells.y + ch;
        CHECK(accent_at(&s, px, x, last_top) == at[k].marked, "%s %s: the last row is %s", at[k].lesson, at[k].id,
              at[k].marked ? "outlined as computed" : "not outlined");
        CHECK(!accent_at(&s, px, x, first_bottom) && !accent_at(&s, px, x, z->cells.y + ch / 2),
              "%s %s: the first row (copied) is not outlined", at[k].lesson, at[k].id);
        scene_close(&s);
    }
    free(px);
}

// + scales text and panels; a heatmap's cells never get smaller for it.
static void test_bigger_never_shrinks(void) {
    static const struct { const char *id; ViewKind view; } at[] = {
        {"encoder.layers.0.self_attn.weights", VIEW_STAGE},
        {"encoder.layers.0.self_attn.weights", VIEW_ATTENTION},
        {"encoder.layers.1.linear1", VIEW_STAGE},
        {"step.3.generator.probs", VIEW_STAGE},
    };
    Scene s;
    if (!scene_open(&s, W, H, &(SessionSpec){.builtin_lesson = "forward-pass.md"})) return;
    Err e = {{0}};
    CHECK(interp_run(s.a.session.it, &e), "%s", e.msg);
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        app_goto(&s.a, interp_find(s.a.session.it, at[k].id));
        s.a.view = at[k].view;
        s.a.scale = 1.0f;
        s.a.all_heads = at[k].view != VIEW_ATTENTION, s.a.head = 0;  // the Attention view: one head large
        app_draw(&s.ui, &s.a);
        const ZoomView z1 = s.ui.zoom_view;
        CHECK(z1.cells.w > 0 && z1.cells.h > 0, "%s: a heatmap is drawn", at[k].id);
        if (z1.cells.w <= 0) continue;
        const float cw1 = (float)z1.cells.w / (z1.c1 - z1.c0), ch1 = (float)z1.cells.h / (z1.r1 - z1.r0);
        for (int press = 1; press <= 3; press++) {
            app_act(&s.a, CMD_BIGGER, 0);
            app_draw(&s.ui, &s.a);
            const ZoomView *z = &s.ui.zoom_view;
            const float cw = (float)z->cells.w / (z->c1 - z->c0), ch = (float)z->cells.h / (z->r1 - z->r0);
            CHECK(z->cells.w > 0 && cw >= cw1 - 0.01f && ch >= ch1 - 0.01f,
                  "%s, %s view, + pressed %d times: cells %.1fx%.1f px, %.1fx%.1f at the default scale", at[k].id,
                  view_names[at[k].view], press, cw, ch, cw1, ch1);
        }
    }
    scene_close(&s);
}

// Generating with sampling and beam search: the Decoding view (and the top bar naming the
// choice) at every stage of a decoder-only program's pass, and of a lesson with a vocabulary of
// 51 (its top bars only) every few stages; then Z through each choice.
static void test_choices(void) {
    static const struct { const char *path; DecodeChoice c; } runs[] = {
        {LESSONS "/../tests/programs/gpt_tiny.md", {.temperature = 1.5, .top_k = 6, .top_p = 0.9, .seed = 6}},
        {LESSONS "/../tests/programs/gpt_tiny.md", {.beam = 3}},
        {LESSONS "/greedy-decoding.md", {.temperature = 0.8, .top_k = 5, .top_p = 0.9, .seed = 1}},
        {LESSONS "/greedy-decoding.md", {.beam = 3}},
    };
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        Scene s;
        if (!scene_open(&s, W, H, &(SessionSpec){.lesson_path = runs[k].path, .choice = runs[k].c, .has_choice = true})) continue;
        Err e = {{0}};
        CHECK(interp_run(s.a.session.it, &e), "%s", e.msg);
        const int n = interp_n_stages(s.a.session.it), every = n > 300 ? 7 : 1;
        for (int i = 0; i < n; i += every) {
            app_goto(&s.a, i);
            s.a.view = VIEW_DECODE;
            char what[300];
            snprintf(what, sizeof what, "%s (%s), Decoding view at %s", runs[k].path, runs[k].c.beam ? "beam" : "sampling",
                     interp_stage(s.a.session.it, i)->id);
            check_frame(&s, what);
        }
        for (int z = 0; z < 3; z++) {
            app_act(&s.a, CMD_DECODING, 0);
            check_frame(&s, s.a.notice);
        }
        scene_close(&s);
    }
}

// A session's pass run whole and shown in `view` at W x H, its texts noted (then checked as
// check_frame does); false, with a failed check, if it could not open.
static bool open_spec(Scene *s, const SessionSpec *spec, ViewKind view) {
    if (!scene_open(s, W, H, spec)) return false;
    gfx_note_texts(s->g, true);
    Err e = {{0}};
    CHECK(interp_run(s->a.session.it, &e), "%s: %s", spec->lesson_path, e.msg);
    s->a.view = view;
    app_tick(&s->a, 0, 10);  // the Patch view's runs are built on a tick
    check_frame(s, spec->lesson_path);
    return true;
}

static bool open_view(Scene *s, const char *lesson, ViewKind view) {
    return open_spec(s, &(SessionSpec){.lesson_path = lesson}, view);
}

// How many texts of the last frame start with `prefix`; each must be whole (no ellipsis).
static int whole_texts(const Scene *s, const char *prefix, const char *where) {
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s->g, &notes);
    int found = 0;
    for (int k = 0; k < n; k++)
        if (!strncmp(notes[k].text, prefix, strlen(prefix))) {
            found++;
            CHECK(!strstr(notes[k].text, ELLIPSIS), "%s at %dx%d: \"%s\" cut", where, W, H, notes[k].text);
        }
    return found;
}

// The patching lesson's Patch view at 1280x720: each map's title and the lens's heading whole (the
// layers' maps an encoder's and a decoder's, each over its own tokens; the lens's positions headed).
static void test_patch_whole(void) {
    Scene s;
    if (!open_view(&s, LESSONS "/which-head.md", VIEW_PATCH)) return;
    static const char *const titles[] = {"Layers patched: encoder", "Layers' attribution: encoder", "decoder",
                                         "Heads patched", "Heads: attribution", "position:"};
    for (size_t k = 0; k < sizeof titles / sizeof titles[0]; k++)
        CHECK(drawn(&s, titles[k], strlen(titles[k])), "the Patch view at %dx%d: \"%s\" drawn whole", W, H, titles[k]);
    CHECK(whole_texts(&s, "Logit lens", "the Patch view's lens") == 1, "the Patch view draws the logit lens's heading");
    scene_close(&s);
}

// A downsampled map says so whole, briefly where it is narrow (the Positions view's 256 x 256
// similarity map on encoder-from-scratch, 241 px wide at 1280x720).
static void test_downsampled_note_whole(void) {
    Scene s;
    if (!open_view(&s, LESSONS "/encoder-from-scratch.md", VIEW_PE)) return;
    const int said = whole_texts(&s, "downsampled", "the Positions view");
    CHECK(said >= 2, "the Positions view's two 256-row maps say they are downsampled (%d notes)", said);
    scene_close(&s);
}

// The first stage of the pass whose rows are the source's tokens, one a row (the embedding).
static int first_token_rows(const App *a) {
    const char *labels[64];
    for (int i = 0; i < interp_n_stages(a->session.it); i++) {
        const Stage *st = interp_stage(a->session.it, i);
        if (st->shape.ndim == 2 && st->kind == TK_VALUES && stage_axis_labels(a, i, 0, labels, 64) == st->shape.dim[0])
            return i;
    }
    return -1;
}

// A stage pinned on "hello", then the input edited to "world" (as many tokens): the Compare
// view labels the pinned map with hello's letters, the map on screen with world's, and their
// difference by position, and says which input each ran on. The pin had borrowed the labels
// on screen: world's on hello's map.
static void test_pinned_labels(void) {
    const char *lesson = LESSONS "/attention-is-all-you-need-pytorch.md";
    Scene s;
    if (!open_spec(&s, &(SessionSpec){.lesson_path = lesson, .input = "hello"}, VIEW_STAGE)) return;
    Err e = {{0}};
    s.a.cursor = first_token_rows(&s.a);
    CHECK(s.a.cursor >= 0, "%s: no stage has the source's tokens for rows", lesson);
    if (s.a.cursor < 0) return scene_close(&s);
    const int stage = s.a.cursor;
    app_act(&s.a, CMD_PIN, 0);
    CHECK(app_open_spec(&s.a, &(SessionSpec){.lesson_path = lesson, .input = "world"}, -1), "%s on 'world'", lesson);
    CHECK(interp_run(s.a.session.it, &e), "%s: %s", lesson, e.msg);
    s.a.cursor = stage, s.a.view = VIEW_COMPARE;
    check_frame(&s, "Compare, pinned on another input");
    CHECK(drawn(&s, "h", 1) && drawn(&s, "e", 1), "Compare: the pinned map is labelled with hello's letters");
    CHECK(drawn(&s, "w", 1) && drawn(&s, "r", 1) && drawn(&s, "d", 1), "Compare: the map on screen with world's");
    CHECK(*scene_text_containing(&s, "pinned, input 'hello'") && *scene_text_containing(&s, "now, input 'world'"),
          "Compare: each map says which input it ran on");
    const char *diff = scene_text_containing(&s, "largest |difference|");
    CHECK(strstr(diff, "; other tokens: by position") && !strstr(diff, ELLIPSIS),
          "Compare: the difference of two inputs' maps says, whole, it is taken by position (\"%s\")", diff);
    scene_close(&s);
}

// The last stage of encoder-layer: its line (152) wraps to four rows in the Lesson panel at
// 1280x720, all drawn above the Formula section (the fourth had been clipped under it).
static void test_whole_program_line(void) {
    Scene s;
    if (!open_view(&s, LESSONS "/encoder-layer.md", VIEW_STAGE)) return;
    app_act(&s.a, CMD_LAST, 0);
    check_frame(&s, "encoder-layer, its last stage");
    const GfxTextNote *formula = drawn(&s, "Formula", 7);
    const char *last_piece = "norm.bias)";
    const GfxTextNote *piece = drawn(&s, last_piece, strlen(last_piece));
    CHECK(formula && piece && piece->y + gfx_line_height(s.g, FONT_MONO, piece->px) <= formula->y,
          "encoder-layer at %dx%d: line 152's last row ('%s', y %d) above the Formula heading (y %d)", W, H, last_piece,
          piece ? piece->y : -1, formula ? formula->y : -1);
    scene_close(&s);
}

// Before the first attention map, the Attention view names the stage where it begins and
// what it is, as the map's own title will: a decoder-only GPT has no encoder layer to step
// into (the view had said "into the first encoder layer" whatever the program).
static void test_no_attention_yet(const char *lesson, const char *kind) {
    Scene s;
    if (!open_view(&s, lesson, VIEW_STAGE)) return;
    s.a.cursor = 0, s.a.view = VIEW_ATTENTION;
    check_frame(&s, "the Attention view at the first stage");
    const char *said = scene_text_containing(&s, "No attention has run yet");
    int stage = 0;
    const char *at = strstr(said, "to stage ");
    if (at) stage = atoi(at + strlen("to stage "));
    int first = -1;  // the first stage of an attention map, one-based as the timeline counts
    for (int i = 0; i < interp_n_stages(s.a.session.it) && first < 0; i++)
        if (interp_stage(s.a.session.it, i)->role == ROLE_SCORES) first = i + 1;
    CHECK(stage > 0 && stage == first, "%s: the Attention view names stage %d as the first map's (it is %d): \"%s\"",
          lesson, stage, first, said);
    CHECK(*scene_text_containing(&s, kind), "%s: the Attention view names the first map '%s' (the wrapped message's next "
          "line)", lesson, kind);
    scene_close(&s);
}

// The Decoding view over a decoder with no cross-attention says why, whole: a GPT has no
// encoder (it had been told "no map reads the encoder's memory"), while the mistake lesson's
// decoder ignores the encoder it has.
static void test_no_cross_attention(const char *lesson, const char *why) {
    Scene s;
    if (!open_view(&s, lesson, VIEW_STAGE)) return;
    app_act(&s.a, CMD_LAST, 0);
    s.a.view = VIEW_DECODE;
    check_frame(&s, "the Decoding view at the last stage");
    CHECK(drawn(&s, why, strlen(why)), "%s: the Decoding view says \"%s\" whole", lesson, why);
    scene_close(&s);
}

// Some text drawn in the last frame that contains `part`, or NULL.
static const GfxTextNote *drawn_part(const Scene *s, const char *part) {
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s->g, &notes);
    for (int k = 0; k < n; k++)
        if (strstr(notes[k].text, part)) return &notes[k];
    return NULL;
}

// The Training view trains the course's encoder-decoders: over a GPT lesson it says so, and
// names the command that trains a GPT; over an encoder-decoder lesson it does not.
static void test_train_view_gpt(const char *lesson, bool gpt) {
    Scene s;
    if (!open_view(&s, lesson, VIEW_TRAIN)) return;
    check_frame(&s, "the Training view");
    const bool said = drawn_part(&s, "decoder-only,") && drawn_part(&s, "--data");
    CHECK(said == gpt, "%s: the Training view %s that this lesson's model is decoder-only and how a GPT trains", lesson,
          gpt ? "says" : "does not say");
    // The lesson it points to is the words lesson, by its title, or this one when it is that.
    const bool words = !strcmp(s.a.source, "A language model of English words");
    if (gpt) CHECK(drawn_part(&s, words ? "this lesson says" : "English"), "%s: the Training view names %s", lesson,
                   words ? "this lesson" : "the words lesson");
    scene_close(&s);
}

// Draws the frame and fails on each text cut with "…" that holds a digit.
static int check_uncut(Scene *s, const char *what) {
    app_draw(&s->ui, &s->a);
    int bad = 0;
    for (int k = 0; k < s->ui.n_elided && k < UI_MAX_ELIDED; k++)
        if (strpbrk(s->ui.elided[k], "0123456789")) {
            bad++;
            CHECK(false, "%s at %dx%d: \"%s\" is cut", what, W, H, s->ui.elided[k]);
        }
    return bad;
}

// The backward pass of backprop.md, every step: no number cut.
static void test_backward_uncut(void) {
    Scene s;
    if (!scene_open(&s, W, H, &(SessionSpec){.lesson_path = LESSONS "/backprop.md"})) return;
    Err e = {{0}};
    App *a = &s.a;
    CHECK(interp_run(a->session.it, &e), "%s", e.msg);
    s.ui.note_elided = true;
    app_act(a, CMD_LAST, 0);
    app_act(a, CMD_BACKWARD, 0);
    const int n = app_back_ready(a) ? a->back.pass.n_steps : 0;
    CHECK(n > 100, "backprop.md's backward pass has its steps (%d)", n);
    int bad = 0;
    char what[200];
    for (int k = 0; k < n && bad < 400; k++) {
        app_backward_goto(a, k);
        for (ViewKind v = VIEW_STAGE; v <= VIEW_ATTENTION; v++) {
            a->view = v;
            snprintf(what, sizeof what, "backward step %d (%s), %s view", k, interp_stage(a->session.it, a->cursor)->id,
                     view_names[v]);
            bad += check_uncut(&s, what);
        }
    }
    // Each mistake, on the attention steps, where W's worked row shows the kernel's number.
    const int w = interp_find(a->session.it, "decoder.layers.1.cross_attn.weights");
    for (int m = 1; m < MISTAKE_COUNT && w >= 0; m++) {
        app_act(a, CMD_MISTAKE, 0);
        app_backward_goto(a, back_pass_step_of(&a->back.pass, w));
        a->view = VIEW_ATTENTION;
        snprintf(what, sizeof what, "mistake %s on %s", backward_mistake_names[a->back.pass.mistake], interp_stage(a->session.it, w)->id);
        bad += check_uncut(&s, what);
    }
    // Every view once, with the gradient check of the step on screen.
    app_act(a, CMD_GRADCHECK, 0);
    for (ViewKind v = 0; v < VIEW_COUNT; v++) {
        a->view = v;
        snprintf(what, sizeof what, "the %s view in the backward pass, after G", view_names[v]);
        bad += check_uncut(&s, what);
    }
    CHECK(bad == 0, "%d texts with a number cut in backprop.md's backward pass", bad);
    scene_close(&s);
}

int main(void) {
    test_backward_uncut();
    test_help_whole();
    test_no_cross_attention(LESSONS "/nanogpt.md", "A decoder-only model: it has no encoder, so no cross-attention.");
    test_no_cross_attention(LESSONS "/mistake-no-cross-attention.md",
                            "This decoder has no cross-attention: no map reads the encoder's memory.");
    test_no_attention_yet(LESSONS "/nanogpt.md", "Decoder layer 0: masked self-attention");
    test_no_attention_yet(LESSONS "/forward-pass.md", "Encoder layer 0: self-attention");
    test_train_view_gpt(LESSONS "/nanogpt.md", true);
    test_train_view_gpt(LESSONS "/text-model.md", true);
    test_train_view_gpt(LESSONS "/forward-pass.md", false);
    test_whole_program_line();
    test_pinned_labels();
    test_patch_whole();
    test_downsampled_note_whole();
    for (size_t k = 0; k < sizeof lessons / sizeof lessons[0]; k++) test_lesson(lessons[k]);
    test_choices();
    test_cached_rows_marked();
    test_bigger_never_shrinks();
    return check_finish("test_readable");
}
