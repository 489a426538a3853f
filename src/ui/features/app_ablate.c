// app_ablate.c: switching pieces of the model off from the window (X: the head on screen,
// M: every mask, O: the positional encoding, U: all back on). The pass re-runs at once; the
// first switch pins the stage on screen as it was, so the Compare view shows before and after,
// and a notice gives the output before and now.
#include <stdio.h>
#include <string.h>

#include "feature.h"

// The pass's output in words true for the lesson: the tokens greedy decoding wrote; under
// teacher forcing the likeliest next token at each row; a classifier's largest class; or ""
// when the program publishes no logits (an encoder's memory).
static void output_text(const App *a, char *buf, size_t n) {
    buf[0] = '\0';
    const Interp *it = a->session.it;
    const Vocab *v = &a->session.model.tgt_vocab;
    int len, n_out, logits = -1;
    StopReason why;
    const float *ids = interp_generated(it, &len, &why);
    if (!a->session.run.tgt && ids && len > 0) {
        char text[200];
        vocab_decode(v, ids, len, text, sizeof text);
        snprintf(buf, n, "'%s'", text);
        return;
    }
    const ProgramOutput *o = interp_outputs(it, &n_out);
    for (int i = 0; i < n_out; i++)
        if (!strcmp(o[i].name, "logits")) logits = o[i].stage;
    const float *x = logits >= 0 ? interp_output(it, logits) : NULL;
    if (!x) return;
    const Stage *st = interp_stage(it, logits);
    const int V = (int)shape_last(&st->shape), rows = (int)(shape_numel(&st->shape) / V);
    if (st->shape.ndim == 1) {  // a classifier's scores
        const int best = row_argmax(x, V);
        snprintf(buf, n, "class %d%s%s", best, v->n == V ? " " : "", v->n == V ? vocab_token(v, best) : "");
        return;
    }
    float best[64];
    for (int r = 0; r < rows && r < 64; r++) best[r] = (float)row_argmax(x + (size_t)r * V, V);
    char text[200];
    vocab_decode(v, best, rows < 64 ? rows : 64, text, sizeof text);
    snprintf(buf, n, "'%s' (the likeliest token at each row)", text);
}

// Runs the whole pass with the ablation, keeping the cursor's place.
static void rerun(App *a, const Ablation *ab) {
    Err e = {{0}};
    char id[STAGE_ID_MAX];
    snprintf(id, sizeof id, "%s", interp_stage(a->session.it, a->cursor)->id);
    if (!interp_set_ablation(a->session.it, ab, &a->session.run, &e) || !interp_run(a->session.it, &e)) {
        app_set_error(a, e.msg);
        return;
    }
    a->generation++;
    const int k = interp_find(a->session.it, id);
    app_goto(a, k >= 0 ? k : a->cursor);
}

static void ablate(App *a, Cmd act) {
    if (!a->loaded) return;
    Ablation ab = *interp_ablation(a->session.it);
    if (!ablation_any(&ab)) {  // the first switch: remember the pass as it was
        Err e = {{0}};
        if (!interp_run(a->session.it, &e)) {
            app_set_error(a, e.msg);
            return;
        }
        output_text(a, a->before, sizeof a->before);
        if (a->pin.data && !a->pin.automatic) app_pin_toggle(a);  // an old pin gives way to this one
        app_pin_toggle(a);
        a->pin.automatic = true;
    }
    if (act == CMD_ABLATE_MASK) ab.no_mask = !ab.no_mask;
    if (act == CMD_ABLATE_POSITIONS) ab.no_positions = !ab.no_positions;
    if (act == CMD_ABLATE_UNDO) ab = (Ablation){0};
    if (act == CMD_ABLATE_HEAD) {
        const int k = attention_stage_for(a, a->cursor);
        const Stage *st = k >= 0 ? interp_stage(a->session.it, k) : NULL;
        const int w = st && st->role != ROLE_NONE ? st->att_weights : -1;
        if (w < 0) {
            app_set_error(a, "X switches off the head on screen: go to an attention first (Tab to Attention)");
            return;
        }
        if (!ablation_toggle_head(&ab, interp_stage(a->session.it, w), a->head)) {
            app_set_error(a, "too many heads switched off: U switches everything back on");
            return;
        }
    }
    rerun(a, &ab);
    char now[256], what[300], msg[sizeof a->notice];
    output_text(a, now, sizeof now);
    ablation_text(&ab, what, sizeof what);
    if (ablation_any(&ab) && now[0])
        snprintf(msg, sizeof msg, "off: %s. Output %s, was %s. Compare shows the pinned stage before", what, now,
                 a->before);
    else if (ablation_any(&ab))
        snprintf(msg, sizeof msg, "off: %s. This lesson's pass publishes no logits to read an output from: Compare shows the "
                 "pinned stage before, beside this one", what);
    else if (now[0]) snprintf(msg, sizeof msg, "everything back on: output %s", now);
    else snprintf(msg, sizeof msg, "everything back on");
    app_notify(a, msg);
}

static Follow on_command(App *a, const Command *c) {
    if (c->kind != CMD_ABLATE_HEAD && c->kind != CMD_ABLATE_MASK && c->kind != CMD_ABLATE_POSITIONS &&
        c->kind != CMD_ABLATE_UNDO)
        return FOLLOW_NOTHING;
    ablate(a, c->kind);
    return FOLLOW_TAKEN;
}

const Feature feature_ablate = {.name = "ablate", .on_command = on_command};
