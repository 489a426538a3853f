// queries.c: read-only questions the views and features ask of the App (app.h).
#include <stdio.h>
#include <string.h>

#include "app.h"

static const Interp *interp(const App *a) { return a->loaded ? a->session.it : NULL; }

const char *const view_names[VIEW_COUNT] = {"Stage", "Attention", "Decoding", "Positions", "Training", "Compare", "Patch"};

ViewKind app_view_for(const App *a, int i) {
    const Stage *st = interp_stage(a->session.it, i);
    if (st->shape.ndim == 3 && st->axes.slot[0] == AXIS_HEADS && st->axes.slot[1] >= 0 && st->axes.slot[2] >= 0)
        return VIEW_ATTENTION;
    return st->where.part == PART_GENERATOR ? VIEW_DECODE : VIEW_STAGE;
}

int stage_axis_labels(const App *a, int stage, int axis, const char **labels, int max) {
    const Interp *it = interp(a);
    if (!it) return 0;
    const Stage *st = interp_stage(it, stage);
    if (axis < 0 || axis >= st->shape.ndim) return 0;
    int slot = st->axes.slot[axis], len;
    if (slot < 0) return 0;
    const float *ids = interp_input_ids(it, slot, &len);
    const Model *m = &a->session.model;
    const Vocab *v = strcmp(a->session.lesson.program.inputs[slot], "src") == 0 ? &m->src_vocab : &m->tgt_vocab;
    int n = st->shape.dim[axis] < len ? st->shape.dim[axis] : len;
    n = n < max ? n : max;
    for (int i = 0; i < n; i++) {
        labels[i] = vocab_token(v, (int)ids[i]);
        if (!strcmp(labels[i], " ")) labels[i] = "\xe2\x90\xa3";  // a space, shown as the open box
    }
    return n;
}

// An attention step (scores, scaled, masked, weights) is shown itself; any other stage shows the
// last attention map passed (never one ahead).
int attention_stage_for(const App *a, int cursor) {
    const Interp *it = interp(a);
    if (!it || interp_n_done(it) == 0) return -1;
    const Stage *st = interp_stage(it, cursor);
    if (st->role >= ROLE_SCORES && st->role <= ROLE_WEIGHTS) return cursor;  // a step of a map: as it is
    if (st->role == ROLE_CONTEXT) return st->att_weights;
    for (int i = cursor; i >= 0; i--)
        if (interp_stage(it, i)->role == ROLE_WEIGHTS) return i;
    return -1;
}

int attention_step(const App *a, int weights, int role) {
    const Interp *it = interp(a);
    for (int i = weights; it && i >= 0 && i >= weights - 64; i--)
        if (interp_stage(it, i)->att_weights == weights && interp_stage(it, i)->role == role) return i;
    return -1;
}

const char *const attention_kind_names[ATT_COUNT] = {"Self-attention", "Masked self-attention", "Cross-attention"};

AttentionKind attention_kind(const App *a, int weights) {
    const Stage *st = interp_stage(interp(a), weights);
    const int nd = st->shape.ndim, mk = attention_step(a, weights, ROLE_MASKED);
    if (st->axes.slot[nd - 2] != st->axes.slot[nd - 1]) return ATT_CROSS;
    return mk >= 0 && interp_stage(interp(a), mk)->attr.causal ? ATT_MASKED : ATT_SELF;
}

const float *attention_mask_for(const App *a, int stage, int h) {
    const Interp *it = interp(a);
    const Stage *st = interp_stage(it, stage);
    if (st->role != ROLE_WEIGHTS) return NULL;
    const int m = attention_step(a, stage, ROLE_MASKED);
    if (m < 0 || !shape_eq(&interp_stage(it, m)->shape, &st->shape) || !interp_output(it, m)) return NULL;
    const int n = st->shape.ndim;
    return interp_output(it, m) + (size_t)h * st->shape.dim[n - 2] * st->shape.dim[n - 1];
}

void batch_title(const App *a, const char *view, const char *what, char *s, size_t n) {
    const int B = interp_batch(a->session.it);
    if (B <= 1) snprintf(s, n, "%s: %s", view, what);
    else if (a->session.run.choice.beam >= 2) snprintf(s, n, "%s: hypothesis row 1 of %d (Decoding shows all %d)", view, B, B);
    else snprintf(s, n, "%s: example 1 of the batch of %d", view, B);
}

const char *stage_short_name(const char *name, const char *from, bool weight) {
    if (weight) {
        const char *last = strrchr(name, '.');
        if (!last) return name;
        const char *p = last;
        while (p > name && p[-1] != '.') p--;
        return p > name ? p : name;
    }
    size_t common = 0;
    for (size_t k = 0; name[k] && name[k] == from[k]; k++)
        if (name[k] == '.') common = k + 1;
    return name[common] ? name + common : name;
}

int vocab_column_labels(const App *a, int cols, const char **labels, int max) {
    const Vocab *tv = &a->session.model.tgt_vocab;
    if (cols != tv->n || cols > max) return 0;
    for (int k = 0; k < cols; k++) labels[k] = strcmp(tv->tokens[k], " ") ? tv->tokens[k] : "\xe2\x90\xa3";
    return cols;
}

static bool fresh(const App *a) { return a->back.built && a->back.generation == a->generation; }

bool app_back_ready(const App *a) { return a->loaded && fresh(a); }

const BackStep *app_back_step(const App *a) {
    return app_back_ready(a) && a->back.step >= 0 ? &a->back.pass.steps[a->back.step] : NULL;
}

BlockRange app_narration(const App *a) {
    const BlockRange none = {0, 0, NOT_ATTACHED};
    const Interp *it = a->session.it;
    if (!a->loaded || !it || a->cursor < 0 || a->cursor >= interp_n_stages(it)) return none;
    const BackStep *s = app_back_step(a);
    LessonParts parts;
    Err e = {{0}};
    if (!lesson_parts_of_run(&parts, &a->session.lesson, it, &e)) return none;
    const BlockRange r = lesson_narration_of(&parts, &a->session.lesson, s ? back_step_kind(s->kind) : STEP_FORWARD,
                                             interp_stage(it, a->cursor));
    lesson_parts_free(&parts);
    return r;
}

bool app_back_gradients(const App *a) { return app_back_step(a) && !a->back.values; }

const StageMatch *app_against_at(const App *a, int i) {
    if (!a->loaded || !a->against.open || a->against.generation != a->generation ||
        strcmp(a->against.lesson, a->session.lesson.path) || i < 0 || i >= a->against.match.n)
        return NULL;
    return &a->against.match.stage[i];
}

void app_pin_input(const App *a, const char *when, char *s, size_t n) {
    const bool prompt = program_decoder_only(&a->session.lesson.program);
    snprintf(s, n, "%s, %s '%s': %s", when, prompt ? "prompt" : "input", a->session.input_text, a->source);
}

const char *decode_shown(const App *a, int id) {
    const char *s = vocab_token(&a->session.model.tgt_vocab, id);
    return !strcmp(s, " ") ? "\xe2\x90\xa3" : s;
}

const char *const quiz_phase_names[QUIZ_PHASE_COUNT] = {[QUIZ_NONE] = "none", [QUIZ_WAITING] = "waiting",
                                                        [QUIZ_TOLD] = "told"};

const char *const card_names[CARD_COUNT] = {"none", "opening", "closing"};

bool app_choice_note(const App *a, int stage, char *s, size_t n, const char **formula) {
    const Interp *it = interp(a);
    const DecodeChoice *c = a->loaded ? &a->session.run.choice : NULL;
    if (!it || !c || decode_is_greedy(c) || a->session.run.tgt || stage < 0 || stage >= interp_n_done(it)) return false;
    const Stage *st = interp_stage(it, stage);
    if (st->op != OP_ARGMAX || !st->in_decode) return false;
    const float *out = interp_output(it, stage);
    const int argmax = out ? (int)out[shape_numel(&st->shape) - 1] : -1;  // its last row: what the round appends from
    if (c->beam >= 2) {
        snprintf(s, n, "This pass searches with a beam of %d (Z): each hypothesis row appends the token the search "
                 "kept for it, not this argmax (the Decoding view shows the beams).", c->beam);
        *formula = "score(h + v) = score(h) + log p(v | h); the best continue";
        return true;
    }
    const SamplePick *p = chooser_pick(interp_chooser(it), st->step, 0);
    char cut[80] = "";
    if (c->top_k > 0) snprintf(cut, sizeof cut, ", top-k %d", c->top_k);
    if (c->top_p > 0 && c->top_p < 1) snprintf(cut + strlen(cut), sizeof cut - strlen(cut), ", top-p %g", c->top_p);
    if (!p) snprintf(s, n, "This pass samples (Z): the round draws its token from softmax(logits / %g)%s.", c->temperature, cut);
    else {
        char drew[64];
        snprintf(drew, sizeof drew, "%s", decode_shown(a, p->token));
        snprintf(s, n, "This pass samples (Z): round %d drew '%s' from softmax(logits / %g)%s; this argmax, '%s', is "
                 "what greedy decoding would have written.", st->step, drew, c->temperature, cut, decode_shown(a, argmax));
    }
    *formula = "token ~ p_j = exp(x_j / T) / sum_k exp(x_k / T), after top-k / top-p";
    return true;
}

int weight_row_labels(const App *a, const char *name, int rows, const char **labels, int max) {
    if (!a->loaded || !name) return 0;
    const bool src_side = strstr(name, "src_tok_emb") != NULL;
    const Vocab *v = src_side ? &a->session.model.src_vocab : &a->session.model.tgt_vocab;
    if (!(src_side || strstr(name, "tgt_tok_emb") || strstr(name, "generator.")) || rows != v->n || rows > max) return 0;
    for (int k = 0; k < rows; k++) labels[k] = strcmp(v->tokens[k], " ") ? v->tokens[k] : "\xe2\x90\xa3";
    return rows;
}
