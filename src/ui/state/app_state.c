// app_state.c: the plain changes of the App (app.h): a message, an error, a move to a stage, a
// session opened in place. None draws, and none calls up into the features or the app.
#include <stdio.h>
#include <string.h>

#include "app.h"

static const Interp *interp(const App *a) { return a->loaded ? a->session.it : NULL; }

void app_notify(App *a, const char *msg) {
    snprintf(a->notice, sizeof a->notice, "%s", msg);
    a->notice_until = 0;  // the window sets the time it shows until
}

void app_set_error(App *a, const char *msg) {
    snprintf(a->error, sizeof a->error, "%s", msg);
    if (msg[0]) fprintf(stderr, "stepformer: %s\n", msg);
}

void app_defaults(App *a) {
    memset(a, 0, sizeof *a);
    a->back.step = a->back.check_stage = -1;
    a->probe.pick_row = -1;
    a->scale = 1.0f, a->play_ms = 700, a->all_heads = true;
    a->zoom = (ZoomBox){0, 0, 1, 1};
    a->train_task = TASK_DATES;
    a->lesson_at = -1;
}

// The spec's strings, in the order of OpenedSpec.text.
static void spec_texts(SessionSpec *s, const char **out[OPENED_TEXTS]) {
    const char **f[OPENED_TEXTS] = {&s->lesson_path, &s->builtin_lesson, &s->program_path, &s->model_path, &s->config,
                                    &s->input, &s->src_ids, &s->target, &s->tgt_ids};
    memcpy(out, f, sizeof f);
}

// Keeps a copy of spec whose strings live in the App (spec may point into a->opened itself).
static void remember(App *a, const SessionSpec *spec) {
    OpenedSpec aside;  // built aside first: spec's strings may be a->opened's
    aside.spec = *spec;
    const char **f[OPENED_TEXTS];
    spec_texts(&aside.spec, f);
    for (int k = 0; k < OPENED_TEXTS; k++)
        if (*f[k]) snprintf(aside.text[k], sizeof aside.text[k], "%s", *f[k]);
    a->opened = aside;
    spec_texts(&a->opened.spec, f);
    for (int k = 0; k < OPENED_TEXTS; k++)
        if (*f[k]) *f[k] = a->opened.text[k];
}

void app_loaded(App *a, const SessionSpec *spec) {
    Err e = {{0}};
    a->error[0] = '\0';  // what failed before is replaced by what opened
    remember(a, spec);
    a->loaded = true;
    const Model *m = &a->session.model;
    if (m->family[0]) {  // a hub folder: the model's own name, and the folder it came from
        const char *slash = strrchr(m->source, '/'), *folder = slash && slash[1] ? slash + 1 : m->source;
        snprintf(a->source, sizeof a->source, "%s%s, from %s", m->name_or_path[0] ? m->name_or_path : m->family,
                 m->name_or_path[0] ? "" : " model", folder);
    } else snprintf(a->source, sizeof a->source, "%s", a->session.lesson.title);
    pe_free(&a->pe);  // the explorer of the model before (if any) goes
    pe_init(&a->pe, a->session.model.cfg.d_model);
    pe_from_program(&a->pe, a->session.it, &a->session.model);
    if (!pe_rebuild(&a->pe, &a->session.model, &e)) app_set_error(a, e.msg);
}

bool app_open(App *a, const SessionSpec *spec, Err *e) {
    app_defaults(a);
    if (!session_open(&a->session, spec, e)) return false;
    app_loaded(a, spec);
    return true;
}

// Runs the pass until stage i has run (or it ends).
void app_run_to(App *a, int i) {
    Err e = {{0}};
    StepStatus s = STEP_RAN;
    while (a->loaded && interp_n_done(a->session.it) <= i && (s = interp_step(a->session.it, &e)) == STEP_RAN)
        ;
    if (s == STEP_FAILED) app_set_error(a, e.msg);
}

void app_narration_moved(App *a, BlockRange was, int scrolled) {
    const BlockRange now = app_narration(a);
    a->scroll[SCROLL_NARRATION] = now.begin == was.begin && now.of == was.of ? scrolled : 0;
}

void app_goto(App *a, int i) {
    if (!a->loaded) return;
    const BlockRange told = app_narration(a);
    const int scrolled = a->scroll[SCROLL_NARRATION];
    a->back.step = -1;  // a forward stage: out of the backward pass (app_backward_goto steps back in)
    a->card = CARD_NONE;
    app_run_to(a, i);
    const int n = interp_n_done(a->session.it);
    if (i >= n) i = n - 1;
    if (i < 0) i = 0;
    if (n > 0 && a->cursor < n &&
        !shape_eq(&interp_stage(interp(a), i)->shape, &interp_stage(interp(a), a->cursor)->shape))
        a->zoom = (ZoomBox){0, 0, 1, 1};
    const Stage *st = interp_stage(interp(a), i);
    if (a->cursor >= 0 && a->cursor < n) {  // another paragraph or kernel starts at its top
        const Stage *was = interp_stage(interp(a), a->cursor);
        if (strcmp(op_info[was->op].kernel, op_info[st->op].kernel)) a->scroll[SCROLL_KERNEL] = 0;
    }
    a->cursor = i;
    a->warm = true;
    app_narration_moved(a, told, scrolled);
    if (st->axes.slot[0] == AXIS_HEADS && a->head >= st->shape.dim[0]) a->head = 0;
}

void app_goto_id(App *a, const char *id, int fallback) {
    Err e = {{0}};
    int k = interp_find(interp(a), id);
    if (k < 0 && !interp_run_to(a->session.it, id, &e)) k = fallback;
    else if (k < 0) k = interp_find(interp(a), id);
    app_goto(a, k);
}

bool app_warm_next(App *a) {
    if (!a->loaded || !a->warm || a->back.step >= 0) return false;  // the backward pass steps its own way
    a->warm = false;
    const int next = a->cursor + 1;
    return next < interp_n_done(interp(a)) && interp_output(interp(a), next) != NULL;
}

// app_reopen, the open model handed to the new session when `keep`.
static bool reopen(App *a, const SessionSpec *spec, bool keep, Err *e) {
    app_backward_free(a);  // it reads the session's model
    Model kept = {0};
    SessionSpec same = *spec;
    if (a->loaded && keep) session_close_keeping(&a->session, &kept), same.adopt = &kept;
    else if (a->loaded) session_close(&a->session);  // opened once, in place (a Session cannot move)
    a->loaded = false, a->generation++, a->model_serial++, a->cursor = 0;
    memset(a->scroll, 0, sizeof a->scroll);
    const bool ok = session_open(&a->session, &same, e);
    model_free(&kept);  // still here only when the session failed before taking it
    if (!ok) return false;  // the window stays empty, with the error
    app_loaded(a, spec);  // the title, and the positions explorer on the new model's d_model
    return true;
}

bool app_reopen(App *a, const SessionSpec *spec, Err *e) { return reopen(a, spec, false, e); }
bool app_reopen_inputs(App *a, const SessionSpec *spec, Err *e) { return reopen(a, spec, true, e); }

void app_backward_free(App *a) {
    if (a->back.built) back_pass_free(&a->back.pass);
    a->back.built = false, a->back.step = a->back.check_stage = -1;
}
