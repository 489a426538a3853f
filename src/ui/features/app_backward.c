// app_backward.c: the backward pass in the window. B (or Right past the last stage) builds it
// from the pass on screen (back_pass.h) and steps from the loss back to the embeddings, then
// through Adam's step; D shows a tensor or its gradient; G checks the gradient of the stage on
// screen against finite differences (gradcheck.h). Nothing here changes the model.
#include <stdio.h>
#include <string.h>

#include "feature.h"
#include "back_mistakes.h"

// Whether the pass on screen has a target whose next tokens can be its labels.
static bool has_labels(const App *a) {
    float labels[1024];
    int n;
    return a->session.run.tgt && back_pass_next_tokens(a->session.it, &a->session.model, labels, 1024, &n);
}

// A lesson that decodes greedily has no labels: it is opened again, teacher-forced on the answer
// it wrote, whose next tokens become the labels (said on screen).
static bool teacher_force(App *a, Err *e) {
    int n;
    StopReason why;
    const float *ids = interp_generated(a->session.it, &n, &why);
    char text[1024], msg[1200];
    if (n < 1) return err_set(e, "the backward pass needs a target: this lesson's model wrote nothing to learn from");
    vocab_decode(&a->session.model.tgt_vocab, ids, n, text, sizeof text);
    SessionSpec spec = a->opened.spec;
    spec.greedy = false, spec.target = text, spec.tgt_ids = NULL;
    spec.choice = (DecodeChoice){0}, spec.has_choice = true;  // teacher forcing draws and searches nothing
    const int k = a->lesson_at;
    if (!app_reopen_inputs(a, &spec, e)) return false;
    a->lesson_at = k;
    snprintf(msg, sizeof msg, "this lesson generates: now teacher-forced on the answer it wrote, '%s', whose next "
             "tokens are the backward pass's labels", text);
    app_notify(a, msg);
    return true;
}

// The labels of the pass on screen: the target's next tokens (teacher forcing).
static bool build(App *a) {
    if (app_back_ready(a)) return true;  // (a->loaded: app_backward_act asks first)
    app_backward_free(a);
    Err e = {{0}};
    float labels[1024];
    int n = 0;
    if (!interp_run(a->session.it, &e)) return app_set_error(a, e.msg), false;
    if (!a->session.run.tgt && program_has_decoder(&a->session.lesson.program) && !teacher_force(a, &e))
        return app_set_error(a, e.msg), false;
    Interp *it = a->session.it;
    if (!interp_run(it, &e)) return app_set_error(a, e.msg), false;
    if (!a->session.run.tgt || !back_pass_next_tokens(it, &a->session.model, labels, 1024, &n)) {
        app_set_error(a, program_has_decoder(interp_program(it))
                             ? "the backward pass needs a target, and the model names no eos id to end its labels"
                             : "the backward pass needs labels: a classifier's lesson has none to learn from here "
                               "(stepformer trace --labels CLASS gives its gradients)");
        return false;
    }
    if (!back_pass_build(&a->back.pass, it, &a->session.model, labels, n, a->back.mistake, &e)) return app_set_error(a, e.msg), false;
    a->back.built = true, a->back.generation = a->generation;
    a->back.mistake_step = -1;
    if (a->back.mistake) {  // where the wrong formula first shows: against the right pass of the same trace
        BackPass right;
        if (!back_pass_build(&right, it, &a->session.model, labels, n, 0, &e)) return app_set_error(a, e.msg), true;
        a->back.mistake_step = back_pass_first_difference(&a->back.pass, &right, it, a->back.mistake_what,
                                                          sizeof a->back.mistake_what);
        back_pass_free(&right);
    }
    return true;
}

void app_backward_goto(App *a, int k) {
    if (!app_back_ready(a)) return;
    const int last = a->back.pass.n_steps - 1, n = interp_n_done(a->session.it);
    if (k < 0) return app_goto(a, n - 1);
    k = k > last ? last : k;
    const BlockRange told = app_narration(a);
    const int scrolled = a->scroll[SCROLL_NARRATION];
    app_goto(a, a->back.pass.steps[k].stage);  // (through a forward stage: the narration is judged after)
    a->back.step = k;
    app_narration_moved(a, told, scrolled);
}

// The block (map row) of step k, for PgDn / PgUp: the kind, then the stage's block.
static int block_key(const App *a, int k) {
    const BackStep *s = &a->back.pass.steps[k];
    return s->kind == BACK_STAGE ? block_of(a, s->stage).first : -1 - (int)s->kind;
}

static void next_block(App *a, int dir) {
    int k = a->back.step;
    const int key = block_key(a, k);
    while (k + dir >= 0 && k + dir < a->back.pass.n_steps && block_key(a, k + dir) == key) k += dir;
    if (dir < 0 && k == a->back.step) k--;  // at a block's start: the block before
    else if (dir > 0) k++;
    if (dir < 0) {
        const int prev = k >= 0 ? block_key(a, k) : 0;
        while (k > 0 && block_key(a, k - 1) == prev) k--;
    }
    app_backward_goto(a, k);
}

// W's notice: the mistake, and where it first changes a number (a step before it shows nothing).
static void say_mistake(App *a) {
    char msg[sizeof a->notice];
    if (!a->back.mistake) snprintf(msg, sizeof msg, "%s", backward_mistake_text[0]);
    else if (a->back.mistake_step < 0)
        snprintf(msg, sizeof msg, "%s. It changes no number of this pass: this model has nothing it acts on",
                 backward_mistake_text[a->back.mistake]);
    else
        snprintf(msg, sizeof msg, "%s. It takes effect at step %d, %s: J goes there", backward_mistake_text[a->back.mistake],
                 a->back.mistake_step + 1, a->back.mistake_what);
    app_notify(a, msg);
}

// G: the gradient of the stage on screen (or of the weight Adam is stepping) checked.
static void gradcheck_here(App *a) {
    if (!build(a)) return;
    const BackStep *s = app_back_step(a);
    const Interp *it = a->session.it;
    const char *id = s && s->kind == BACK_ADAM ? a->session.model.params[s->weight].name : interp_stage(it, a->cursor)->id;
    Err e = {{0}};
    RunSpec spec = a->session.run;
    spec.pack_weights = false;  // the check moves weights: the pass must read them as they are
    Interp *check = interp_new(&a->session.lesson.program, &a->session.model, &spec, &e);
    const BackPass *bp = &a->back.pass;
    if (check && interp_run(check, &e) &&
        gradcheck(&a->back.check, check, &a->session.model, bp->g, &bp->li, bp->labels, id, &e)) {
        a->back.check_stage = a->cursor, a->back.check_back = s != NULL;
        char msg[300];
        snprintf(msg, sizeof msg, "gradient check of %s: %s", id, a->back.check.passed ? "numeric and analytic agree" : "they DISAGREE");
        app_notify(a, msg);
    } else app_set_error(a, e.msg);
    interp_free(check);
}

bool app_backward_act(App *a, Cmd act) {
    if (!a->loaded) return false;
    const bool in = app_back_step(a) != NULL;
    if (a->back.step >= 0 && !in) a->back.step = -1;  // the trace changed under it: back to the forward pass
    switch (act) {
    case CMD_BACKWARD: {
        const unsigned before = a->model_serial;  // build may re-open a greedy lesson teacher-forced
        if (in) app_goto(a, a->cursor);
        else if (build(a)) {
            const int k = a->model_serial == before ? back_pass_step_of(&a->back.pass, a->cursor) : 0;
            app_backward_goto(a, k >= 0 ? k : 0);
        }
        return true;
    }
    case CMD_GRADIENT:  // in the backward pass: the tensors or their gradients; else this stage's gradient
        if (in) {
            a->back.values = !a->back.values;
        } else if (a->session.run.tgt && build(a)) {  // (a greedy lesson: B re-opens it teacher-forced)
            const int k = back_pass_step_of(&a->back.pass, a->cursor);
            if (k < 0) app_notify(a, "no gradient reaches this stage: the loss does not depend on it");
            else a->back.values = false, app_backward_goto(a, k);
        }
        return true;
    case CMD_GRADCHECK: gradcheck_here(a); return true;
    case CMD_MISTAKE: {  // the next learner's mistake (or the right formulas again), the pass rebuilt
        const int at = a->back.step;
        a->back.mistake = (a->back.mistake + 1) % MISTAKE_COUNT;
        app_backward_free(a);
        if (!build(a)) return true;
        say_mistake(a);
        if (at >= 0) app_backward_goto(a, at);
        return true;
    }
    case CMD_FIRST_DIFF:  // J in the backward pass with a mistake on: its first changed number (else the app's J)
        if (!in || !a->back.mistake || !build(a)) return false;
        if (a->back.mistake_step < 0) app_notify(a, "this mistake changes no number of this pass");
        else app_backward_goto(a, a->back.mistake_step);
        return true;
    case CMD_NEXT:  // past the last forward stage: into the backward pass, when it can be built
        if (in) app_backward_goto(a, a->back.step + 1);
        else if (a->cursor == interp_n_stages(a->session.it) - 1 && interp_done(a->session.it) &&
                 has_labels(a) && build(a))
            app_backward_goto(a, 0);
        else return false;
        return true;
    case CMD_PREV: if (in) app_backward_goto(a, a->back.step - 1); return in;
    case CMD_FIRST: if (in) app_backward_goto(a, 0); return in;
    case CMD_LAST: if (in) app_backward_goto(a, a->back.pass.n_steps - 1); return in;
    case CMD_NEXT_BLOCK:
    case CMD_PREV_BLOCK: if (in) next_block(a, act == CMD_NEXT_BLOCK ? 1 : -1); return in;
    default: return false;
    }
}

static Follow on_first(App *a, const Command *c) {
    return !a->editing && app_backward_act(a, c->kind) ? FOLLOW_TAKEN : FOLLOW_NOTHING;
}

// The step of block `first`'s (a map row's) stages that the backward pass reaches first: where
// the gradient enters the block. A layer the map shows folded (one the stage on screen is not
// in, view_map.c) is one row: all of its blocks. -1 when no gradient reaches it.
static int block_step(const App *a, int first) {
    BlockRow b = block_of(a, first);
    const BlockRow cur = block_of(a, a->cursor);
    if (b.has_layer && !block_same_layer(&cur, &b))
        for (int i = b.last + 1; i < interp_n_stages(a->session.it); i++) {
            const BlockRow n = block_of(a, i);
            if (!block_same_layer(&n, &b)) break;
            b.last = n.last, i = n.last;
        }
    for (int k = 0; k < a->back.pass.n_steps; k++) {
        const BackStep *s = &a->back.pass.steps[k];
        if (s->kind == BACK_STAGE && s->stage >= b.first && s->stage <= b.last) return k;
    }
    return -1;
}

static Follow on_command(App *a, const Command *c) {
    if (c->kind == CMD_BACK_STEP) return app_backward_goto(a, c->param), FOLLOW_TAKEN;
    // (the zone's stage is the frame's last drawn: a pass re-opened since may have fewer)
    if (c->kind != CMD_GOTO_BLOCK || !app_back_step(a) || c->param < 0 || c->param >= interp_n_stages(a->session.it))
        return FOLLOW_NOTHING;
    const int k = block_step(a, c->param);  // in the backward pass a block opens its backward step
    if (k < 0) app_notify(a, "no gradient reaches this block: the loss does not depend on it");
    else app_backward_goto(a, k);
    return FOLLOW_TAKEN;
}

const Feature feature_backward = {.name = "backward", .on_first = on_first, .on_command = on_command};
