// back_pass.c: the backward pass as steps (see back_pass.h).
#include "back_pass.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optim.h"

const char *const back_kind_names[BACK_KIND_COUNT] = {"loss", "backward", "adam", "loss after"};
_Static_assert(sizeof back_kind_names / sizeof *back_kind_names == BACK_KIND_COUNT, "a name for every BackKind");

StepKind back_step_kind(BackKind k) {
    static const StepKind of[BACK_KIND_COUNT] = {
        [BACK_LOSS] = STEP_LOSS, [BACK_STAGE] = STEP_BACKWARD, [BACK_ADAM] = STEP_ADAM, [BACK_AFTER] = STEP_AFTER};
    return k >= 0 && k < BACK_KIND_COUNT ? of[k] : STEP_BACKWARD;
}

const BackOpInfo back_op_info[OP_COUNT] = {
    [OP_EMBEDDING] = {"dE[id_t] += scale * g_t   (only the rows of the ids this pass read)", "embedding_backward"},
    [OP_ADD_POSITIONS] = {"dx = g   (a fixed table takes nothing; a learned one takes g too)", "add_backward"},
    [OP_LINEAR] = {"dX = g W,   dW = g^T X,   db = sum over rows of g", "linear_backward"},
    [OP_SPLIT_HEADS] = {"dx = the heads of g put back side by side", "split_heads_backward"},
    [OP_MERGE_HEADS] = {"dx = g cut into its heads again", "merge_heads_backward"},
    [OP_MATMUL] = {"dA = g B^T,   dB = A^T g   (one product per head; a side that served every head sums "
                   "their gradients)", "matmul_broadcast_backward"},
    [OP_TRANSPOSE] = {"dx = g^T", "transpose_backward"},
    [OP_SCALE] = {"dx = s g", "scale_backward"},
    [OP_MASK] = {"dx = g, and 0 where the key was masked", "mask_backward"},
    [OP_SOFTMAX] = {"dx_j = p_j (g_j - sum_k p_k g_k)   per row: the softmax's Jacobian applied to g", "softmax_backward"},
    [OP_LOG_SOFTMAX] = {"dx_j = g_j - p_j sum_k g_k   (p = exp of the output)", "log_softmax_backward"},
    [OP_ADD] = {"da = g,   db = g   (a residual passes the gradient to both sides unchanged)", "add_backward"},
    [OP_LAYER_NORM] = {"dx = (gain / sigma) (dxh - mean(dxh) - xh mean(dxh * xh)),  dxh = g * gain;  dgain = sum g * xh,  "
                       "dbias = sum g", "layernorm_backward"},
    [OP_ACTIVATION] = {"relu: dx = g where x > 0, else 0;  gelu: dx = g (Phi(x) + x phi(x))", "relu_backward"},
    [OP_RELU] = {"dx = g where x > 0, else 0", "relu_backward"},
    [OP_GELU] = {"dx = g (Phi(x) + x phi(x))", "gelu_backward"},
    [OP_ARGMAX] = {"none: the ids do not move when x moves a little", NULL},
    [OP_POSITIONAL_TABLE] = {"none: a fixed table", NULL},
    [OP_RESHAPE] = {"dx = g read in x's shape", "add_backward"},
    [OP_PERMUTE] = {"dx = g with its axes put back", "permute_backward"},
    [OP_CHUNK] = {"dx = g in piece k, 0 in the others", "chunk_backward"},
    [OP_MAX_POOL] = {"dx[t, c] = g[c] at the position that held the maximum, else 0", "pool_backward"},
    [OP_MEAN_POOL] = {"dx[t, c] = g[c] / (positions counted)", "pool_backward"},
    [OP_REPEAT] = {"dx[.., i, ..] = the sum of g over the times copies of entry i", "repeat_backward"},
    [OP_CONCAT] = {"da, db, ... = the slices of g each input filled", "concat_backward"},
    [OP_GELU_TANH] = {"dx = g (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)),  t = tanh(sqrt(2/pi) (x + 0.044715 x^3))",
                      "gelu_tanh_backward"},
    [OP_SILU] = {"dx = g s (1 + x (1 - s)),  s = sigmoid(x)", "silu_backward"},
    [OP_BAN] = {"dx = g, but 0 in the banned column", "ban_backward"},
    [OP_MUL] = {"da = g * b,   db = g * a", "mul_backward"},
    [OP_RMS_NORM] = {"dx = r (gain g) - x r^3 mean(gain g x),  r = 1 / sqrt(mean(x^2) + eps);  dgain = sum g x r",
                     "rms_norm_backward"},
    [OP_ROPE] = {"dx = g turned back: the same pairs, by minus the angle (a rotation's transpose is its inverse)",
                 "rope_backward"},
};

const BackOpInfo *back_info_for(const Stage *st, Activation act) {
    return &back_op_info[st->op == OP_ACTIVATION ? (act == ACT_GELU ? OP_GELU : OP_RELU) : st->op];
}

bool back_op_info_complete(void) {
    for (int i = 0; i < OP_COUNT; i++)
        if (!back_op_info[i].formula) return false;
    return true;
}

bool back_pass_next_tokens(const Interp *it, const Model *m, float *labels, int cap, int *n) {
    const Program *p = interp_program(it);
    const int slot = program_has_decoder(p) ? program_input(p, p->stmts[p->decode].name) : -1;
    int len = 0;
    const float *tgt = slot >= 0 ? interp_input_ids(it, slot, &len) : NULL;
    if (!tgt || len < 1 || len > cap || !m->cfg.eos_id.set) return false;
    for (int t = 0; t + 1 < len; t++) labels[t] = tgt[t + 1];
    labels[len - 1] = (float)m->cfg.eos_id.id;
    *n = len;
    return true;
}

int back_pass_step_of(const BackPass *bp, int stage) {
    for (int k = 0; k < bp->n_steps; k++)
        if (bp->steps[k].kind == BACK_STAGE && bp->steps[k].stage == stage) return k;
    return -1;
}

static BackStep *push(BackPass *bp, BackKind kind, int stage, int weight) {
    BackStep *s = &bp->steps[bp->n_steps++];
    *s = (BackStep){.kind = kind, .stage = stage, .weight = weight};
    return s;
}

// One step per stage the gradient reached, each with its kernel's shares.
static bool stage_steps(BackPass *bp, const Interp *it, Err *e) {
    for (int i = bp->li.scored; i >= 0; i--) {
        if (!grads_stage(bp->g, i)) continue;
        BackStep *s = push(bp, BACK_STAGE, i, -1);
        const Stage *st = interp_stage(it, i);
        for (int j = 0; j < st->n_in; j++) {
            if (backward_input_takes(it, i, j) && !(s->share[j] = malloc(sizeof(float) * backward_input_floats(it, i, j))))
                return err_code(e, ERR_MEMORY, "out of memory for the backward steps");
        }
        backward_contributions(bp->g, it, i, s->share);
    }
    return true;
}

// The last stage that reads weight w (its gradient is complete once that step has run).
static int last_reader(const Interp *it, int w) {
    int last = 0;
    for (int i = 0; i < interp_n_done(it); i++) {
        const Stage *st = interp_stage(it, i);
        for (int j = 0; j < st->n_in; j++)
            if (st->in[j].kind == REF_WEIGHT && st->in[j].index == w) last = i;
    }
    return last;
}

// Adam's first step on copies of the weights, then the loss with them.
static bool adam_step(BackPass *bp, const Interp *it, const Model *m, Err *e) {
    const size_t n = grads_size(bp->g);
    Adam adam = {0};
    float *arena = malloc(sizeof(float) * (n ? n : 1));
    StEntry *entries = malloc(sizeof *entries * (size_t)(m->weights.n_entries + 1));
    bool ok = arena && entries && adam_init(&adam, n, BACK_BETA1, BACK_BETA2, BACK_EPS, e);
    if (ok) ok = (bp->update = malloc(sizeof(float) * (n ? n : 1))) != NULL;
    if (ok) {
        model_wide_copy(m, bp->update);  // the weights before, as float32 (for now)
        memcpy(arena, bp->update, sizeof(float) * n);
        adam_update(&adam, arena, grads_weights(bp->g), BACK_LR);
        bp->m = adam.m, bp->v = adam.v, adam.m = adam.v = NULL;
        bp->after = arena, arena = NULL;
    }
    for (size_t i = 0; ok && i < n; i++) bp->update[i] -= bp->after[i];
    Model moved = *m;  // the same model with the weights after the step, every one float32
    Interp *next = NULL;
    if (ok) {
        moved.weights.arena = bp->after, moved.half_arena = NULL;
        moved.weights.entries = entries;
        for (int k = 0; k < m->weights.n_entries; k++)
            entries[k] = m->weights.entries[k], entries[k].data = bp->after + m->wide_at[k], entries[k].half = NULL,
            entries[k].dtype = ST_F32;
        RunSpec spec = {0};
        int len;
        const Program *p = interp_program(it);
        const int src = program_input(p, "src"), tgt = program_has_decoder(p) ? program_input(p, p->stmts[p->decode].name) : -1;
        spec.src = src >= 0 ? interp_input_ids(it, src, &spec.S) : NULL;
        spec.tgt = tgt >= 0 ? interp_input_ids(it, tgt, &len) : NULL, spec.T = tgt >= 0 ? len : 0;
        ok = (next = interp_new(p, &moved, &spec, e)) && interp_run(next, e) &&
             loss_value(next, &bp->li, bp->labels, &bp->loss_after, NULL, e);
    }
    if (!ok && !e->msg[0]) err_code(e, ERR_MEMORY, "out of memory for the optimizer step");
    interp_free(next);
    adam_free(&adam);
    free(arena), free(entries);
    return ok;
}

bool back_pass_build(BackPass *bp, Interp *it, const Model *m, const float *labels, int n, int mistake, Err *e) {
    memset(bp, 0, sizeof *bp);
    if (!loss_target(it, &bp->li, e)) return false;
    bp->n_labels = n;
    bp->labels = malloc(sizeof(float) * (size_t)(n ? n : 1));
    bp->dscored = malloc(sizeof(float) * (size_t)bp->li.rows * (size_t)bp->li.V);
    bp->steps = calloc((size_t)interp_n_stages(it) + (size_t)m->n_params + 2, sizeof *bp->steps);
    bool ok = bp->labels && bp->dscored && bp->steps && (bp->g = grads_new(m, e));
    if (!ok && !e->msg[0]) err_code(e, ERR_MEMORY, "out of memory for the backward pass");
    if (ok) memcpy(bp->labels, labels, sizeof(float) * (size_t)n), grads_set_mistake(bp->g, mistake), bp->mistake = mistake;
    ok = ok && grad_pass(bp->g, it, labels, n, bp->dscored, &bp->li, e);
    if (ok) push(bp, BACK_LOSS, bp->li.scored, -1);
    ok = ok && stage_steps(bp, it, e) && adam_step(bp, it, m, e);
    for (int w = 0; ok && w < m->n_params; w++)
        if (!m->params[w].fixed) push(bp, BACK_ADAM, last_reader(it, w), w);
    if (ok) push(bp, BACK_AFTER, bp->li.scored, -1);
    if (!ok) back_pass_free(bp);
    return ok;
}

void back_pass_free(BackPass *bp) {
    for (int k = 0; bp->steps && k < bp->n_steps; k++)
        for (int j = 0; j < STAGE_MAX_IN; j++) free(bp->steps[k].share[j]);
    grads_free(bp->g);
    free(bp->labels), free(bp->dscored), free(bp->steps);
    free(bp->m), free(bp->v), free(bp->update), free(bp->after);
    memset(bp, 0, sizeof *bp);
}

static bool same(const float *x, const float *y, size_t n) {
    if (!x || !y) return x == y;
    return memcmp(x, y, sizeof(float) * n) == 0;
}

int back_pass_first_difference(const BackPass *x, const BackPass *y, const Interp *it, char *what, size_t n) {
    for (int k = 0; k < x->n_steps; k++) {  // x's steps in order, each beside y's step of the same stage
        const BackStep *a = &x->steps[k];
        if (a->kind != BACK_STAGE) continue;
        const int kb = back_pass_step_of(y, a->stage);
        const Stage *st = interp_stage(it, a->stage);
        if (kb < 0) {  // a gradient reaches this stage in one pass only
            snprintf(what, n, "dL/d %s", st->id);
            return k;
        }
        const BackStep *b = &y->steps[kb];
        const size_t floats = (size_t)interp_batch(it) * (size_t)shape_numel(&st->shape);
        if (!same(grads_stage(x->g, a->stage), grads_stage(y->g, b->stage), floats)) {
            snprintf(what, n, "dL/d %s", st->id);
            return k;
        }
        for (int j = 0; j < st->n_in; j++) {
            if (!backward_input_takes(it, a->stage, j) || same(a->share[j], b->share[j], backward_input_floats(it, a->stage, j)))
                continue;
            const Ref *r = &st->in[j];
            snprintf(what, n, "dL/d %s", r->kind == REF_STAGE    ? interp_stage(it, r->index)->id
                                         : r->kind == REF_WEIGHT ? interp_model(it)->weights.entries[r->index].name
                                                                 : "its input");
            return k;
        }
    }
    return -1;
}
