// train_step.c: one optimisation step on a given batch (TrainState, see train.h).
//
// The batch is split in two halves, one for each core: each half runs its own forward and
// backward pass (its own interpreter, activations and gradients) with no synchronisation until
// the two weight gradients are added. The split does not depend on the number of threads, so a
// seed gives the same numbers on one core or two.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_backward.h"
#include "par.h"
#include "train.h"

enum { SHARDS = 2 };

typedef struct {
    int first, rows;  // the examples of the batch this half takes
    Interp *it;       // teacher forcing over them; kept between steps (same shapes)
    int logits;       // the stage that publishes "logits"
    int V;            // its last dimension: the vocabulary, or the classes
    Grads *g;
    float *dlogits;   // [rows, T, V], or [rows, C] for a classifier (made with the pass)
    StepStats s;
    Err e;
    bool ok;
} Shard;

struct TrainState {
    Model *m;
    const Program *p;
    StepConfig c;
    Shard sh[SHARDS];
    int n;            // halves in use (1 for a batch of one)
    Adam adam;
};

TrainState *train_state_new(Model *m, const Program *p, const StepConfig *c, Err *e) {
    TrainState *ts = calloc(1, sizeof *ts);
    if (!ts) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    ts->m = m, ts->p = p, ts->c = *c, ts->n = c->batch >= SHARDS ? SHARDS : 1;
    bool ok = true;
    for (int k = 0; k < ts->n && ok; k++) {
        Shard *h = &ts->sh[k];
        h->first = k == 0 ? 0 : (c->batch + 1) / 2;
        h->rows = ts->n == 1 ? c->batch : k == 0 ? (c->batch + 1) / 2 : c->batch / 2;
        h->logits = -1;
        h->g = grads_new(m, e);
        ok = h->g;
        if (ok) grads_recycle(h->g, true);  // a step reads no stage's gradient after its pass
    }
    // Tensors the original shares (the program's `tie`) take the sum of their gradients and so
    // stay equal through training.
    if (!ok || !grads_tie(ts->sh[0].g, p, NULL, e) ||
        !adam_init(&ts->adam, grads_size(ts->sh[0].g), c->beta1, c->beta2, c->eps, e)) {
        train_state_free(ts);
        return NULL;
    }
    return ts;
}

void train_state_free(TrainState *ts) {
    if (!ts) return;
    for (int k = 0; k < SHARDS; k++) {
        interp_free(ts->sh[k].it);
        grads_free(ts->sh[k].g);
        free(ts->sh[k].dlogits);
    }
    adam_free(&ts->adam);
    free(ts);
}

Grads *train_state_grads(TrainState *ts) { return ts->sh[0].g; }

// The labels each example has: T next tokens, or one class.
static int labels_per_row(const StepConfig *c) { return c->tgt_len > 0 ? c->tgt_len : 1; }

// The first pass of a half: finds the logits, checks that the loss can reach the weights
// through them and that their shape fits the labels, and makes room for their gradient.
static bool first_pass(TrainState *ts, Shard *h, const RunSpec *spec, Err *e) {
    h->it = interp_new(ts->p, ts->m, spec, e);
    if (!h->it) return false;
    int n;
    const ProgramOutput *o = interp_outputs(h->it, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(o[i].name, "logits")) h->logits = o[i].stage;
    if (h->logits < 0) return err_set(e, "%s publishes no 'logits' to train on (add: output logits = ...)", ts->p->file);
    if (!backward_check(h->it, h->logits, e)) return false;
    const Stage *st = interp_stage(h->it, h->logits);
    const int64_t per_row = shape_numel(&st->shape), V = st->shape.dim[st->shape.ndim - 1];
    char sh[64];
    if (per_row != (int64_t)labels_per_row(&ts->c) * V)
        return err_set(e, "%s:%d: logits is %s for each example, but training needs %s", ts->p->file, st->line,
                       shape_str(&st->shape, sh, sizeof sh),
                       ts->c.tgt_len > 0 ? "a row of scores per target token, [T, tgt_vocab_size]"
                                         : "one row of class scores, [num_classes]");
    h->V = (int)V;
    h->dlogits = malloc(sizeof(float) * (size_t)h->rows * (size_t)per_row);
    return h->dlogits || err_set(e, "out of memory for the gradient of the logits");
}

static RunSpec shard_spec(const TrainState *ts, const Shard *h, const float *src, const float *tgt_in) {
    const bool seq = ts->c.tgt_len > 0;
    return (RunSpec){src + (size_t)h->first * ts->c.src_len, ts->c.src_len,
                     seq ? tgt_in + (size_t)h->first * ts->c.tgt_len : NULL, ts->c.tgt_len, 0, h->rows};
}

bool train_state_prepare(TrainState *ts, const float *src, const float *tgt_in, Err *e) {
    for (int k = 0; k < ts->n; k++) {
        const RunSpec spec = shard_spec(ts, &ts->sh[k], src, tgt_in);
        if (!ts->sh[k].it && !first_pass(ts, &ts->sh[k], &spec, e)) return false;
    }
    return true;
}

// Runs the forward pass of one half (the stage list is built once; later batches reuse it).
static bool forward(TrainState *ts, Shard *h, const float *src, const float *tgt_in, Err *e) {
    RunSpec spec = shard_spec(ts, h, src, tgt_in);
    if (!h->it) {
        if (!first_pass(ts, h, &spec, e)) return false;
    } else {
        int first;
        if (!interp_set_inputs(h->it, &spec, &first, e)) return false;
        interp_rewind(h->it, 0);  // the weights changed since the last step: every stage re-runs
    }
    // Only the stages up to the logits matter for the loss.
    while (interp_n_done(h->it) <= h->logits)
        switch (interp_step(h->it, e)) {
        case STEP_FAILED: return false;
        case STEP_DONE: return err_set(e, "the pass ended before the logits");
        case STEP_RAN: break;
        }
    return true;
}

static int right_answers(const float *logits, const float *tgt_out, int N, int V, float pad) {
    int right = 0;
    for (int r = 0; r < N; r++) {
        if (tgt_out[r] == pad) continue;
        right += row_argmax(logits + (size_t)r * V, V) == (int)tgt_out[r];
    }
    return right;
}

// The label that counts for nothing: pad in a target; none for a classifier's classes.
static float ignored_label(const TrainState *ts) {
    return (float)(ts->c.tgt_len > 0 && ts->m->cfg.pad_id.set ? ts->m->cfg.pad_id.id : -1);
}

// Forward, loss and backward of one half; the loss is divided by the whole batch's count.
static void run_shard(TrainState *ts, Shard *h, const float *src, const float *tgt_in, const float *tgt_out,
                      int total) {
    const int T = labels_per_row(&ts->c), N = h->rows * T;
    const float pad = ignored_label(ts);
    const float *out = tgt_out + (size_t)h->first * T;
    h->e.msg[0] = '\0';
    h->ok = forward(ts, h, src, tgt_in, &h->e);
    if (!h->ok) return;
    const int V = h->V;
    const float *logits = interp_output(h->it, h->logits);
    h->s.loss = cross_entropy(h->dlogits, logits, out, N, V, ts->c.label_smoothing, pad, total, &h->s.tokens);
    h->s.token_acc = (float)right_answers(logits, out, N, V, pad);
    if (!isfinite(h->s.loss)) {
        h->ok = err_set(&h->e, "the loss is not a finite number (%g)", (double)h->s.loss);
        return;
    }
    grads_zero(h->g);
    h->ok = backward(h->g, h->it, h->logits, h->dlogits, &h->e);
}

bool train_state_step(TrainState *ts, const float *src, const float *tgt_in, const float *tgt_out, StepStats *s,
                      Err *e) {
    const int N = ts->c.batch * labels_per_row(&ts->c);
    const float pad = ignored_label(ts);
    int total = 0;
    for (int r = 0; r < N; r++) total += tgt_out[r] != pad;
#pragma omp parallel for num_threads(SHARDS) schedule(static, 1) if (ts->n > 1)
    for (int k = 0; k < ts->n; k++) run_shard(ts, &ts->sh[k], src, tgt_in, tgt_out, total);
    *s = (StepStats){0};
    for (int k = 0; k < ts->n; k++) {
        const Shard *h = &ts->sh[k];
        s->loss += h->s.loss, s->token_acc += h->s.token_acc, s->tokens += h->s.tokens;
        if (!h->ok) {
            if (e) *e = h->e;
            return false;
        }
    }
    s->token_acc = s->tokens ? s->token_acc / s->tokens : 0.0f;
    if (ts->n > 1) {  // the whole batch's gradient: the second half's added to the first's
        float *a = grads_weights(ts->sh[0].g);
        const float *b = grads_weights(ts->sh[1].g);
        const size_t n = grads_size(ts->sh[0].g);
        PAR_LOOP(PAR_N(n), "omp parallel for simd",
            for (size_t i = 0; i < n; i++) a[i] += b[i];
        );
    }
    grads_sum_ties(ts->sh[0].g);
    return true;
}

void train_state_update(TrainState *ts, float lr) {
    adam_update(&ts->adam, ts->m->weights.arena, grads_weights(ts->sh[0].g), lr);
}
