// test_backward_ui.c: the backward pass in the window, driven as a user drives it (app
// actions) and drawn off screen: Right past the last stage enters it at the loss, Left leaves it,
// B enters and leaves at the stage on screen, every step draws without an error, G's gradient
// check agrees, a lesson without a target says why it has no backward pass, W says where a
// learner's mistake first changes a number (J goes there), and the map opens backward steps.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "back_mistakes.h"
#include "check.h"
#include "feature.h"
#include "scene.h"

// The scene with its pass run to the end.
static bool scene_run(Scene *s, int w, int h, const SessionSpec *spec) {
    Err e = {{0}};
    if (!scene_open(s, w, h, spec)) return false;
    const bool ok = interp_run(s->a.session.it, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) scene_close(s);
    return ok;
}

static const SessionSpec dates = {.model_path = MODELS "/dates.safetensors", .input = "22 November 2026",
                                  .target = "2026-11-22"};

static void stepping(void) {
    Scene s;
    if (!scene_run(&s, 1280, 720, &dates)) return;
    App *a = &s.a;
    const int n = interp_n_stages(a->session.it), logits = interp_find(a->session.it, "generator.logits");
    app_act(a, CMD_LAST, 0);
    CHECK(a->cursor == n - 1 && !app_back_step(a), "End: the last forward stage");
    app_act(a, CMD_NEXT, 0);
    CHECK(a->card == CARD_CLOSING && a->cursor == n - 1 && !app_back_step(a), "Right on the last stage: the closing card");
    app_act(a, CMD_NEXT, 0);
    const BackStep *b = app_back_step(a);
    CHECK(b && b->kind == BACK_LOSS && a->cursor == logits, "Right past the end: the loss, on the logits");
    CHECK(b && fabs(a->back.pass.li.loss - 0.103098) < 1e-6, "the loss on screen is PyTorch's 0.103098: %.7f",
          b ? a->back.pass.li.loss : 0);
    app_act(a, CMD_NEXT, 0);
    b = app_back_step(a);
    CHECK(b && b->kind == BACK_STAGE && b->stage == logits, "then the generator's backward");
    app_act(a, CMD_PREV, 0);
    app_act(a, CMD_PREV, 0);
    CHECK(!app_back_step(a) && a->cursor == n - 1, "Left from the loss: the forward pass's last stage");
    const int w = interp_find(a->session.it, "encoder.layers.0.self_attn.weights");
    app_goto(a, w);
    app_act(a, CMD_BACKWARD, 0);
    b = app_back_step(a);
    CHECK(b && b->kind == BACK_STAGE && b->stage == w && a->cursor == w, "B: the backward step of the stage on screen");
    app_act(a, CMD_GRADCHECK, 0);
    CHECK(a->back.check_stage == w && a->back.check.passed && a->back.check.n >= 3,
          "G: numeric and analytic agree on %s (worst %.2g over %d)", a->back.check.what, a->back.check.worst, a->back.check.n);
    // Each checked element is named by head, row (with its token: the source's character at that
    // position) and column, not by a flat index alone.
    gfx_note_texts(s.g, true);
    app_draw(&s.ui, a);
    for (int q = 0; q < a->back.check.n; q++) {
        const size_t i = a->back.check.pt[q].index;
        const int row = (int)(i / 16 % 16);
        const char c = "22 November 2026"[row];
        char want[120], tok[8];
        snprintf(tok, sizeof tok, "%s", c == ' ' ? "\xe2\x90\xa3" : (char[]){c, 0});
        snprintf(want, sizeof want, "element %zu: head %d, row %d '%s', column %d", i, (int)(i / 256) + 1, row, tok, (int)(i % 16));
        CHECK(scene_drew(&s, want), "G names point %d: '%s'", q, want);
    }
    // The embedding's backward step labels dembedding.weight's rows by token, as its forward map
    // does: the vocabulary's first token, <unk>, names row 0.
    const int embed = interp_find(a->session.it, "encoder.embed");
    app_backward_goto(a, back_pass_step_of(&a->back.pass, embed));
    a->view = VIEW_STAGE;
    app_draw(&s.ui, a);
    CHECK(app_back_step(a) && app_back_step(a)->stage == embed && scene_drew(&s, "<unk>"), "dembedding.weight's rows are tokens");
    gfx_note_texts(s.g, false);
    app_goto(a, w);
    app_act(a, CMD_BACKWARD, 0);
    app_act(a, CMD_BACKWARD, 0);
    CHECK(!app_back_step(a) && a->cursor == w, "B again: the forward stage, where it was");
    app_act(a, CMD_BACKWARD, 0);
    app_act(a, CMD_NEXT_BLOCK, 0);
    CHECK(app_back_step(a) && a->cursor < w, "PgDn in the backward pass: on towards the embeddings (%d)", a->cursor);
    app_act(a, CMD_LAST, 0);
    b = app_back_step(a);
    CHECK(b && b->kind == BACK_AFTER && a->back.pass.loss_after < a->back.pass.li.loss, "End: the loss after Adam's step, lower");
    scene_close(&s);
}

// Every step draws, in its view, with no error, and fills the centre.
static void drawing(void) {
    Scene s;
    if (!scene_run(&s, 1280, 720, &dates)) return;
    App *a = &s.a;
    app_act(a, CMD_BACKWARD, 0);
    Rgba *px = malloc(sizeof *px * 1280 * 720);
    int drawn = 0;
    for (int k = 0; app_back_step(a) && k < a->back.pass.n_steps; k++) {
        app_backward_goto(a, k);
        const BackStep *b = app_back_step(a);
        const bool att = b->kind == BACK_STAGE && interp_stage(a->session.it, b->stage)->role == ROLE_WEIGHTS;
        a->view = att ? VIEW_ATTENTION : VIEW_STAGE;
        a->back.values = k % 7 == 3;  // D now and then: the tensors instead
        app_draw(&s.ui, a);
        gfx_present(s.g);
        gfx_read(s.g, px);
        long ink = 0;
        for (int y = 120; y < 600; y++)
            for (int x = 300; x < 900; x++) ink += px[y * 1280 + x].r < 200 || px[y * 1280 + x].b < 200;
        CHECK(ink > 3000 && !a->error[0], "step %d (%s) draws: %ld dark pixels, error '%s'", k, back_kind_names[b->kind], ink,
              a->error);
        drawn++;
    }
    CHECK(drawn > 150, "%d steps drawn", drawn);
    free(px);
    scene_close(&s);
}

// A greedy lesson (the training lesson): B opens it again teacher-forced on the answer it wrote,
// and steps from the loss; a new input forgets the backward pass built before it.
static void refusals(void) {
    Scene s;
    const SessionSpec greedy = {.lesson_path = LESSONS "/training.md"};
    if (!scene_run(&s, 800, 600, &greedy)) return;
    app_act(&s.a, CMD_BACKWARD, 0);
    const BackStep *b = app_back_step(&s.a);
    CHECK(b && b->kind == BACK_LOSS && s.a.session.run.tgt && s.a.session.run.T == 11 && strstr(s.a.notice, "'2026-11-22'"),
          "greedy: teacher-forced on its answer, at the loss (%s; %s)", s.a.notice, s.a.error);
    CHECK(b && fabs(s.a.back.pass.li.loss - 0.103098) < 1e-6, "the same loss as the backprop lesson's");
    CHECK(strstr(s.a.session.lesson.path, "training.md") != NULL, "still the training lesson");
    app_act(&s.a, CMD_LAST, 0);
    CHECK(app_back_step(&s.a) && app_back_step(&s.a)->kind == BACK_AFTER, "through Adam's step to the loss after it");
    scene_close(&s);
    if (!scene_run(&s, 800, 600, &dates)) return;
    app_act(&s.a, CMD_BACKWARD, 0);
    CHECK(app_back_step(&s.a) != NULL, "built");
    int first;
    Err e = {{0}};
    CHECK(session_set_input(&s.a.session, "1 May 2025", &first, &e), "%s", e.msg);
    s.a.generation++;  // as the app does after a new input
    app_act(&s.a, CMD_NEXT, 0);
    CHECK(!app_back_step(&s.a), "a new input: the old backward pass is not shown");
    scene_close(&s);
}

// The Patch view on the patching lesson: built when shown, a click patches one head alone.
static void patch_view(void) {
    Scene s;
    const SessionSpec spec = {.lesson_path = LESSONS "/which-head.md"};
    if (!scene_run(&s, 1280, 720, &spec)) return;
    s.a.view = VIEW_PATCH;
    app_tick(&s.a, 0, 10);
    CHECK(s.a.probe.resid && s.a.probe.open && !s.a.probe.why[0], "the sweeps are built: %s", s.a.probe.why);
    if (s.a.probe.open) {
        const int last = s.a.probe.heads->n_rows - 1;
        app_probe_pick(&s.a, true, last, 3);
        CHECK(fabs((s.a.probe.picked_logit - s.a.probe.heads->target.corrupt) /
                   (s.a.probe.heads->target.clean - s.a.probe.heads->target.corrupt) - s.a.probe.heads->rows[last].effect[3]) < 1e-9,
              "the click patches the cell it is on");
        CHECK(!strcmp(vocab_token(&s.a.probe.run[0].model.tgt_vocab, s.a.probe.picked_top), "2"),
              "with head 4 alone the model still writes 2");
        app_draw(&s.ui, &s.a);
        CHECK(s.ui.n_hot > 16 * 4 + 6 * 4, "every cell is clickable (%d zones)", s.ui.n_hot);
        // The pointer over a head's cell names it as its column label counts it, from 1: one numbering.
        const HotZone *z = NULL;
        for (int i = 0; i < s.ui.n_hot && !z; i++)
            if (s.ui.hot[i].cmd == CMD_PATCH_CELL && s.ui.hot[i].param == ((1 << 20) | (0 << 10) | 1)) z = &s.ui.hot[i];
        CHECK(z != NULL, "the heads map's first row, second head");
        if (z) {
            s.ui.mx = z->r.x + z->r.w / 2, s.ui.my = z->r.y + z->r.h / 2;
            gfx_note_texts(s.g, true);
            app_draw(&s.ui, &s.a);
            CHECK(scene_drew(&s, "head 2:") && !scene_drew(&s, "head 1 '2'"), "the readout says head 2, not head 1 '2'");
            // A layer's cell is named by its position and that position's token: the source's for
            // an encoder layer ('N', the fourth character of '22 November 2026'), the target's
            // for a decoder layer (<bos> first).
            const int dec = 2;  // the rows: enc 0, enc 1, then the decoder's
            CHECK(!strncmp(s.a.probe.resid->rows[dec].label, "decoder", 7), "row %d is the decoder's", dec);
            const int want[2][2] = {{0, 3}, {dec, 0}};
            const char *says[2] = {"position 3 'N'", "position 0 '<bos>'"};
            for (int q = 0; q < 2; q++) {
                const HotZone *c = NULL;
                for (int i = 0; i < s.ui.n_hot && !c; i++)
                    if (s.ui.hot[i].cmd == CMD_PATCH_CELL && s.ui.hot[i].param == ((want[q][0] << 10) | want[q][1])) c = &s.ui.hot[i];
                if (c) s.ui.mx = c->r.x + c->r.w / 2, s.ui.my = c->r.y + c->r.h / 2, app_draw(&s.ui, &s.a);
                CHECK(c && scene_drew(&s, says[q]), "the readout names %s", says[q]);
            }
            gfx_note_texts(s.g, false);
            s.ui.mx = s.ui.my = -1;
        }
    }
    scene_close(&s);
    // A lesson without corrupt: says how to get one.
    const SessionSpec plain = {.lesson_path = LESSONS "/backprop.md"};
    if (!scene_run(&s, 800, 600, &plain)) return;
    s.a.view = VIEW_PATCH;
    app_tick(&s.a, 0, 10);
    CHECK(strstr(s.a.probe.why, "no corrupted input"), "%s", s.a.probe.why);
    scene_close(&s);
}

// W says where the wrong formula first changes a number, J goes there, and the top bar names the
// mistake until W switches it off. The reference: the first step whose stage runs a softmax (the
// formula the first mistake changes), and what the same step sends its input without the mistake.
static void mistakes(void) {
    Scene s;
    if (!scene_run(&s, 1280, 720, &dates)) return;
    App *a = &s.a;
    gfx_note_texts(s.g, true);
    app_act(a, CMD_BACKWARD, 0);  // in at the stage on screen (the first), so W's step stays the first
    app_act(a, CMD_FIRST, 0);
    app_act(a, CMD_MISTAKE, 0);
    CHECK(a->back.mistake == MISTAKE_SOFTMAX_NO_SUM, "W: the softmax mistake (%d)", a->back.mistake);
    int want = -1;
    for (int k = 0; k < a->back.pass.n_steps && want < 0; k++) {
        const BackStep *b = &a->back.pass.steps[k];
        if (b->kind == BACK_STAGE && interp_stage(a->session.it, b->stage)->op == OP_SOFTMAX) want = k;
    }
    const BackStep *at = want >= 0 ? &a->back.pass.steps[want] : NULL;
    const Stage *soft = at ? interp_stage(a->session.it, at->stage) : NULL;
    const char *masked = soft && soft->in[0].kind == REF_STAGE ? interp_stage(a->session.it, soft->in[0].index)->id : "?";
    char says[200];
    snprintf(says, sizeof says, "takes effect at step %d, dL/d %s: J goes there", want + 1, masked);
    CHECK(want > 0 && a->back.mistake_step == want && strstr(a->notice, says),
          "W names the first softmax step, %d (%s): '%s'", want, says, a->notice);
    CHECK(app_back_step(a) && a->back.step == 0, "W itself stays on the step on screen");
    app_act(a, CMD_FIRST_DIFF, 0);
    CHECK(a->back.step == want, "J goes to step %d (at %d)", want, a->back.step);
    app_act(a, CMD_BACKWARD, 0);  // out to the forward pass, the mistake still on: J is a mistake lesson's again
    app_act(a, CMD_FIRST_DIFF, 0);
    CHECK(!app_back_step(a) && strstr(a->error, "correct:"), "J in the forward pass is not the backward pass's: %s", a->error);
    app_act(a, CMD_BACKWARD, 0);
    app_backward_goto(a, want);
    app_draw(&s.ui, a);
    CHECK(scene_drew(&s, "W: softmax-no-sum"), "the top bar names the mistake");
    // The Attention view's worked row, with the kernel's own number (where the mistake shows) as a
    // column of its own: its heading drawn whole at 1280x720, so every row of the same width is.
    a->view = VIEW_ATTENTION;
    app_draw(&s.ui, a);
    const char *heading = "key            p_j          g_j    g_j - sum p_j (g_j - sum)      the kernel";
    const GfxTextNote *notes;
    bool whole = false;
    for (int i = 0, n = gfx_text_notes(s.g, &notes); i < n; i++) whole |= !strcmp(notes[i].text, heading);
    CHECK(whole, "the worked row's heading, whole: '%s'", heading);
    a->view = VIEW_STAGE;
    for (int k = 1; k < MISTAKE_COUNT; k++) app_act(a, CMD_MISTAKE, 0);
    app_draw(&s.ui, a);
    CHECK(a->back.mistake == MISTAKE_NONE && !scene_drew(&s, "W: "), "W round to the right formulas: no badge");
    // A click on a block of the map in the backward pass opens that block's backward step: the
    // step of its last stage the gradient reaches (the backward pass runs from last to first).
    const HotZone *z = NULL;
    BlockRow row = {0};
    for (int i = 0; i < s.ui.n_hot && !z; i++) {
        if (s.ui.hot[i].cmd != CMD_GOTO_BLOCK) continue;
        row = block_of(a, s.ui.hot[i].param);
        if (row.part == PART_ENCODER && row.last > row.first) z = &s.ui.hot[i];
    }
    // A layer the stage on screen is not in is one folded row on the map: all of the layer's
    // stages (read off their ids), not only its first block's.
    const StageWhere here = interp_stage(a->session.it, a->cursor)->where;
    const bool folded = row.has_layer && !(here.has_layer && here.layer == row.layer && here.part == row.part);
    int last = row.last;
    for (int i = row.first; folded && i < interp_n_stages(a->session.it); i++) {
        const StageWhere w = interp_stage(a->session.it, i)->where;
        if (w.part == row.part && w.has_layer && w.layer == row.layer) last = i;
    }
    int want_stage = -1;
    for (int i = last; z && i >= row.first && want_stage < 0; i--)
        if (back_pass_step_of(&a->back.pass, i) >= 0) want_stage = i;
    CHECK(z != NULL && want_stage >= 0, "the map has an encoder block the gradient reaches");
    if (z) app_click(a, &s.ui, z->r.x + z->r.w / 2, z->r.y + z->r.h / 2);
    const BackStep *b = app_back_step(a);
    CHECK(b && b->kind == BACK_STAGE && b->stage == want_stage, "the click opens the block's backward step, at stage %d (%d, block %d-%d)",
          want_stage, b ? b->stage : -1, row.first, last);
    app_act(a, CMD_BACKWARD, 0);
    app_draw(&s.ui, a);
    z = NULL;
    for (int i = 0; i < s.ui.n_hot && !z; i++)
        if (s.ui.hot[i].cmd == CMD_GOTO_BLOCK && s.ui.hot[i].param == row.first) z = &s.ui.hot[i];
    if (z) app_click(a, &s.ui, z->r.x + z->r.w / 2, z->r.y + z->r.h / 2);
    CHECK(z && !app_back_step(a) && a->cursor == row.first, "in the forward pass the same click opens its first stage");
    scene_close(&s);
}

// The lesson's text keeps its scroll from one backward step to the next while the section shown
// stays the same (backprop.md: softmax and attention), and starts at its top in another section.
static void narration_scroll(void) {
    Scene s;
    if (!scene_run(&s, 1280, 720, &(SessionSpec){.lesson_path = LESSONS "/backprop.md"})) return;
    App *a = &s.a;
    const int w = interp_find(a->session.it, "decoder.layers.1.cross_attn.weights");
    app_goto(a, w);
    app_act(a, CMD_BACKWARD, 0);
    a->scroll[SCROLL_NARRATION] = 40;
    app_act(a, CMD_NEXT, 0);
    const Stage *st = interp_stage(a->session.it, a->cursor);
    CHECK(!strcmp(st->id, "decoder.layers.1.cross_attn.masked") && a->scroll[SCROLL_NARRATION] == 40,
          "Right within one section keeps the text's scroll (%s, %d)", st->id, a->scroll[SCROLL_NARRATION]);
    app_backward_goto(a, back_pass_step_of(&a->back.pass, interp_find(a->session.it, "decoder.layers.1.norm2")));
    CHECK(a->scroll[SCROLL_NARRATION] == 0, "another section starts at its top (%d)", a->scroll[SCROLL_NARRATION]);
    scene_close(&s);
}

int main(void) {
    narration_scroll();
    mistakes();
    CHECK(back_op_info_complete(), "every op has its backward formula");
    stepping();
    drawing();
    refusals();
    patch_view();
    return check_finish("test_backward_ui");
}
