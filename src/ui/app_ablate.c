// app_ablate.c: switching pieces of the model off from the window (X: the head on screen,
// M: every mask, O: the positional encoding, U: all back on). The pass re-runs at once; the
// first switch pins the stage on screen as it was, so the Compare view shows before and after,
// and a notice gives the output before and now.
#include <stdio.h>
#include <string.h>

#include "actions.h"

// The pass's output as text: the generated tokens (greedy), else the largest class or "".
static void output_text(const App *a, char *buf, size_t n) {
    buf[0] = '\0';
    int len;
    StopReason why;
    const float *ids = interp_generated(a->session.it, &len, &why);
    if (ids && len > 0) vocab_decode(&a->session.model.tgt_vocab, ids, len, buf, n);
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

void app_ablate(App *a, Action act) {
    if (!a->loaded) return;
    Ablation ab = *interp_ablation(a->session.it);
    if (!ablation_any(&ab)) {  // the first switch: remember the pass as it was
        Err e = {{0}};
        if (!interp_run(a->session.it, &e)) {
            app_set_error(a, e.msg);
            return;
        }
        output_text(a, a->before, sizeof a->before);
        if (a->pin.data) app_act(a, DO_PIN, 0);  // an old pin gives way to this one
        app_act(a, DO_PIN, 0);
    }
    if (act == DO_ABLATE_MASK) ab.no_mask = !ab.no_mask;
    if (act == DO_ABLATE_POSITIONS) ab.no_positions = !ab.no_positions;
    if (act == DO_ABLATE_UNDO) ab = (Ablation){0};
    if (act == DO_ABLATE_HEAD) {
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
    if (ablation_any(&ab))
        snprintf(msg, sizeof msg, "off: %s. Output %s, was %s. Compare shows the pinned stage before", what, now,
                 a->before);
    else snprintf(msg, sizeof msg, "everything back on: output %s", now);
    app_notify(a, msg);
}
