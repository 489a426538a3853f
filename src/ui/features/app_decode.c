// app_decode.c: Z in the window: greedy decoding, then sampling, then beam search, then greedy
// again. The pass re-runs with the new choice (session_set_choice; a beam of another width gets
// a new interpreter), the stage on screen stays where the new pass has it, and a notice names
// the choice and the tokens it wrote.
#include <stdio.h>

#include "feature.h"
#include "decoding.h"

// What the pass wrote, in the target's vocabulary (beam search: the answer).
static void written(const App *a, char *buf, size_t n) {
    int len;
    StopReason why;
    const float *ids = interp_generated(a->session.it, &len, &why);
    if (ids) vocab_decode(&a->session.model.tgt_vocab, ids, len, buf, n);
    else snprintf(buf, n, "%s", "");
}

static void switch_decoding(App *a) {
    if (!a->loaded) return;
    Session *s = &a->session;
    const DecodeChoice given = session_decode_choice(&a->opened.spec, &s->lesson.setup);
    const DecodeChoice next = decoding_next(&s->run.choice, &given, s->model.cfg.tgt_vocab_size);
    char id[STAGE_ID_MAX];
    snprintf(id, sizeof id, "%s", interp_stage(s->it, a->cursor)->id);
    const int old = a->cursor;
    app_backward_free(a);  // built from the pass that is about to change
    Err e = {{0}};
    int first;
    if (!session_set_choice(s, &next, &first, &e)) {
        app_set_error(a, e.msg);
        return;
    }
    a->generation++;
    if (!interp_run(s->it, &e)) {  // the whole pass: the notice says what it wrote
        app_set_error(a, e.msg);
        return;
    }
    app_goto_id(a, id, old);
    char mode[160], text[200], msg[sizeof a->notice];
    decoding_text(&next, mode, sizeof mode);
    written(a, text, sizeof text);
    static const char *const then[DECODING_COUNT] = {"sampling", "beam search", "greedy"};
    snprintf(msg, sizeof msg, "%s: wrote '%s'   (Z again: %s)", mode, text, then[decoding_kind(&next)]);
    app_notify(a, msg);
}

static Follow on_command(App *a, const Command *c) {
    if (c->kind != CMD_DECODING) return FOLLOW_NOTHING;
    switch_decoding(a);
    return FOLLOW_TAKEN;
}

const Feature feature_decode = {.name = "decode", .on_command = on_command};
