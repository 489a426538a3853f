// train_step.c: one optimisation step on a given batch (TrainState, see train.h).
//
// The batch is split in two halves, one for each core: each half runs its own forward and
// backward pass (its own interpreter, activations and gradients) with no synchronisation until
// the two weight gradients are added. The split does not depend on the number of threads, so a
// seed gives the same numbers on one core or two.
//
// A half runs its examples in passes whose trace (every stage's output up to the logits, which
// the backward pass reads) stays within PASS_TRACE_BYTES: a step that traced all its examples at
// once wrote tens of megabytes, more than the caches hold, and each kernel then waited on memory
// for the lines it wrote (an add of 32K floats run a second time, over its warm output, took
// 3.9 us against its first run's 14.6). Each pass adds its gradients to the weights' in the
// order the examples come, so every weight's gradient is the same chain of adds as in one pass
// over the half: the same bits. The passes depend on the program's shapes only, never on the
// machine.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_backward.h"
#include "par.h"
#include "train.h"

// 2.5 MB: on the bench's tiny model (0.55 MB of trace an example), passes of 4 examples took
// 3-8% less time a step than one pass of 32 (18 MB), 7-10% at the tenth percentile; passes of
// 2, 6, 7 or 8 examples gained less or nothing (alternating in one process, Zen 4: README).
enum { SHARDS = 2, PASS_TRACE_BYTES = 5 << 19 };

typedef struct {
    int first, rows;  // the examples of the batch this half takes
    int per;          // examples in each pass but the last (which takes the rest)
    Interp *it;       // teacher forcing over `per` examples; kept between steps (same shapes)
    Interp *it_last;  // over the last pass's, when fewer than per; else NULL
    int logits;       // the stage that publishes "logits"
    int V;            // its last dimension: the vocabulary, or the classes
    Grads *g;
    float *dlogits;   // [per, T, V], or [per, C] for a classifier (made with the pass)
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
        interp_free(ts->sh[k].it_last);
        grads_free(ts->sh[k].g);
        free(ts->sh[k].dlogits);
    }
    adam_free(&ts->adam);
    free(ts);
}

Grads *train_state_grads(TrainState *ts) { return ts->sh[0].g; }

// The labels each example has: T next tokens, or one class.
static int labels_per_row(const StepConfig *c) { return c->tgt_len > 0 ? c->tgt_len : 1; }

// The examples a pass takes: from `first` of the batch, `n` of them.
static RunSpec pass_spec(const TrainState *ts, int first, int n, const float *src, const float *tgt_in) {
    const bool seq = ts->c.tgt_len > 0;
    return (RunSpec){src + (size_t)first * ts->c.src_len, ts->c.src_len,
                     seq ? tgt_in + (size_t)first * ts->c.tgt_len : NULL, ts->c.tgt_len, 0, n};
}

// Examples each pass of a half of `rows` takes so that its trace, `floats` an example, fits
// PASS_TRACE_BYTES (at least one): a divisor of rows where one is at least half that many, so
// every pass is alike; else as even as passes of one size allow (the last takes the rest).
static int examples_per_pass(int rows, double floats) {
    const double fit = PASS_TRACE_BYTES / (floats * sizeof(float));
    const int most = fit < 1 ? 1 : fit > rows ? rows : (int)fit;
    for (int d = most; 2 * d >= most; d--)
        if (rows % d == 0) return d;
    const int passes = (rows + most - 1) / most;
    return (rows + passes - 1) / passes;
}

// A pass keeps only the outputs its backward pass reads (and the logits): the others' buffers
// are reused within it, still in the cache (interp_set_transient). On the bench's tiny model,
// alternating in one process, 1-3% less time a step; the same bits (test_train).
static bool keep_for_backward(Interp *it, int logits, Err *e) {
    bool *transient = malloc(sizeof *transient * (size_t)interp_n_stages(it));
    if (!transient) return err_code(e, ERR_MEMORY, "out of memory");
    backward_transient(it, logits, transient);
    const bool ok = interp_set_transient(it, transient, e);
    free(transient);
    return ok;
}

// The first pass of a half: finds the logits, checks that the loss can reach the weights
// through them and that their shape fits the labels, splits the half into passes and makes
// room for the logits' gradient.
static bool first_pass(TrainState *ts, Shard *h, const float *src, const float *tgt_in, Err *e) {
    RunSpec spec = pass_spec(ts, h->first, h->rows, src, tgt_in);
    h->it = interp_new(ts->p, ts->m, &spec, e);
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
    double floats = 0;  // the trace of one example, up to the logits
    for (int i = 0; i <= h->logits; i++) floats += (double)shape_numel(&interp_stage(h->it, i)->shape);
    h->per = ts->c.pass_examples > 0 ? (ts->c.pass_examples < h->rows ? ts->c.pass_examples : h->rows)
                                      : examples_per_pass(h->rows, floats);
    if (h->per < h->rows) {  // no stage has run: nothing is lost
        interp_free(h->it);
        spec = pass_spec(ts, h->first, h->per, src, tgt_in);
        h->it = interp_new(ts->p, ts->m, &spec, e);
        const int last = h->rows % h->per;
        if (h->it && last) {
            spec = pass_spec(ts, h->first + h->rows - last, last, src, tgt_in);
            h->it_last = interp_new(ts->p, ts->m, &spec, e);
        }
        if (!h->it || (last && !h->it_last)) return false;
    }
    if (!keep_for_backward(h->it, h->logits, e) || (h->it_last && !keep_for_backward(h->it_last, h->logits, e)))
        return false;
    h->dlogits = malloc(sizeof(float) * (size_t)h->per * (size_t)per_row);
    return h->dlogits || err_set(e, "out of memory for the gradient of the logits");
}

bool train_state_prepare(TrainState *ts, const float *src, const float *tgt_in, Err *e) {
    for (int k = 0; k < ts->n; k++)
        if (!ts->sh[k].it && !first_pass(ts, &ts->sh[k], src, tgt_in, e)) return false;
    return true;
}

// Runs the forward pass over `n` examples from `first` (the stage list is built once; later
// batches reuse it) on it.
static bool forward(TrainState *ts, Interp *it, int logits, int first, int n, const float *src, const float *tgt_in,
                    Err *e) {
    const RunSpec spec = pass_spec(ts, first, n, src, tgt_in);
    int changed;
    if (!interp_set_inputs(it, &spec, &changed, e)) return false;
    interp_rewind(it, 0);  // the weights changed since the last step: every stage re-runs
    // Only the stages up to the logits matter for the loss.
    while (interp_n_done(it) <= logits)
        switch (interp_step(it, e)) {
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

// Forward, loss and backward of one pass of a half: n examples from `first`, on it; the loss is
// divided by the whole batch's count, and the gradients add to what earlier passes left.
static bool run_pass(TrainState *ts, Shard *h, Interp *it, int first, int n, const float *src, const float *tgt_in,
                     const float *tgt_out, int total) {
    const int T = labels_per_row(&ts->c), N = n * T, V = h->V;
    const float pad = ignored_label(ts);
    const float *out = tgt_out + (size_t)first * T;
    if (!forward(ts, it, h->logits, first, n, src, tgt_in, &h->e)) return false;
    const float *logits = interp_output(it, h->logits);
    int tokens;
    const float loss = cross_entropy(h->dlogits, logits, out, N, V, ts->c.label_smoothing, pad, total, &tokens);
    h->s.loss += loss, h->s.tokens += tokens;
    h->s.token_acc += (float)right_answers(logits, out, N, V, pad);
    if (!isfinite(loss)) return err_set(&h->e, "the loss is not a finite number (%g)", (double)loss);
    return backward(h->g, it, h->logits, h->dlogits, &h->e);
}

// Every pass of one half, in the order of its examples.
static void run_shard(TrainState *ts, Shard *h, const float *src, const float *tgt_in, const float *tgt_out,
                      int total) {
    h->e.msg[0] = '\0';
    h->s = (StepStats){0};
    h->ok = h->it || first_pass(ts, h, src, tgt_in, &h->e);
    if (h->ok) grads_zero(h->g);
    for (int done = 0; h->ok && done < h->rows; done += h->per) {
        const int n = h->rows - done < h->per ? h->rows - done : h->per;
        h->ok = run_pass(ts, h, n == h->per ? h->it : h->it_last, h->first + done, n, src, tgt_in, tgt_out, total);
    }
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
