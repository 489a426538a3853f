// train_step.c: one optimisation step on a given batch (TrainState, see train.h).
//
// The batch is split in two halves, each with its own interpreters, activations and gradients,
// until the two weight gradients are added. The split does not depend on the number of
// threads, so a seed gives the same numbers on one core or two.
//
// A half runs its examples in passes whose trace (every stage's output up to the logits, which
// the backward pass reads) stays within PASS_TRACE_BYTES: a step that traced all its examples at
// once wrote tens of megabytes, more than the caches hold, and each kernel then waited on memory
// for the lines it wrote (an add of 32K floats run a second time, over its warm output, took
// 3.9 us against its first run's 14.6). Each pass adds its gradients to the weights' in the
// order the examples come, so every weight's gradient is the same chain of adds as in one pass
// over the half: the same bits. The passes depend on the program's shapes only, never on the
// machine.
//
// Who runs a pass does not change a bit, so the halves share their work: a pass's forward
// reads only the weights and its examples, and a half's backward passes run one at a time, in
// order. Each thread runs its own half's passes; when its half has nothing it can start (the
// half is done, or its next backward waits for a forward the other thread runs), it takes the
// other half's next forward pass, into an interpreter of its own, or the other's next backward
// pass once its forward is done: so a thread whose core a neighbour took for a while does less,
// and a thread with nothing to start yields its core (the kernel may have put both threads on
// one). Beside a busy loop on the second core the bench's step took 18-22 ms at the median,
// against 24-36 ms when each thread ran its own half and waited at a barrier; the same in
// quiet minutes (docs/benchmarks.md).

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels_backward.h"
#include "par.h"
#include "train.h"

// 2.5 MB: on the bench's tiny model (0.55 MB of trace an example), passes of 4 examples took
// 3-8% less time a step than one pass of 32 (18 MB), 7-10% at the tenth percentile; passes of
// 2, 6, 7 or 8 examples gained less or nothing (alternating in one process, Zen 4: docs/benchmarks.md).
// POOL: a half's passes in flight at once, each in an interpreter of its own: a pass waiting
// for its backward, one in its forward, and the one whose backward runs.
enum { SHARDS = 2, POOL = 3, PASS_TRACE_BYTES = 5 << 19 };

#ifdef _OPENMP
typedef omp_lock_t Lock;
static void lock_init(Lock *l) { omp_init_lock(l); }
static void lock_free(Lock *l) { omp_destroy_lock(l); }
static void lock_take(Lock *l) { omp_set_lock(l); }
static void lock_give(Lock *l) { omp_unset_lock(l); }
#else  // one thread (the browser): nothing to guard
typedef int Lock;
static void lock_init(Lock *l) { *l = 0; }
static void lock_free(Lock *l) { (void)l; }
static void lock_take(Lock *l) { (void)l; }
static void lock_give(Lock *l) { (void)l; }
#endif

typedef struct {
    Interp *it;  // teacher forcing over the pass's examples; kept between steps (same shapes)
    bool busy;   // a pass holds it, from its forward to the end of its backward
} Slot;

typedef struct {
    int first, rows;  // the examples of the batch this half takes
    int per, passes;  // examples in each pass but the last (which takes the rest); passes in all
    Slot pool[POOL];  // interpreters over `per` examples, made when first needed
    int pooled;       // pool[0, pooled) have been taken (one whose making failed is NULL, made
                      // again when next taken)
    int pool_most;    // how many may be: POOL, or 1 where one pass's trace outgrows PASS_TRACE_BYTES
    Slot last;        // over the last pass's examples, when fewer than per (else its it is NULL)
    int *slot;        // [passes] the slot each pass holds: its index in pool, or POOL for `last`
    bool *ready;      // [passes] its forward is done (this step)
    int next_f, next_b;  // the next pass to start forward, and backward
    bool b_busy;      // a backward pass of this half runs (they run in order, one at a time)
    int logits;       // the stage that publishes "logits"
    int V;            // its last dimension: the vocabulary, or the classes
    Grads *g;
    float *dlogits;   // [per, T, V], or [per, C] for a classifier (made with the first pass)
    StepStats s;
} Shard;

struct TrainState {
    Model *m;
    const Program *p;
    StepConfig c;
    Shard sh[SHARDS];
    int n;            // halves in use (1 for a batch of one)
    Adam adam;
    Lock lock;        // guards the halves' pass bookkeeping, `failed`, `e` and `helped` in a step
    bool failed;
    Err e;            // the first failure of a step
    int helped;       // forward and backward passes of a half its own thread did not run (last step)
};

TrainState *train_state_new(Model *m, const Program *p, const StepConfig *c, Err *e) {
    TrainState *ts = calloc(1, sizeof *ts);
    if (!ts) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    ts->m = m, ts->p = p, ts->c = *c, ts->n = c->batch >= SHARDS ? SHARDS : 1;
    lock_init(&ts->lock);
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

// Drops a half's interpreters and pass bookkeeping (first_pass makes them).
static void drop_passes(Shard *h) {
    for (int i = 0; i < POOL; i++) interp_free(h->pool[i].it), h->pool[i] = (Slot){0};
    interp_free(h->last.it), h->last = (Slot){0};
    free(h->dlogits), free(h->slot), free(h->ready);
    h->dlogits = NULL, h->slot = NULL, h->ready = NULL, h->pooled = h->passes = 0;
}

void train_state_free(TrainState *ts) {
    if (!ts) return;
    for (int k = 0; k < SHARDS; k++) {
        drop_passes(&ts->sh[k]);
        grads_free(ts->sh[k].g);
    }
    adam_free(&ts->adam);
    lock_free(&ts->lock);
    free(ts);
}

Grads *train_state_grads(TrainState *ts) { return ts->sh[0].g; }

int train_state_helped(const TrainState *ts) { return ts->helped; }

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

// An interpreter for n examples of half h, keeping what its backward pass reads.
static Interp *pass_interp(TrainState *ts, const Shard *h, int n, const float *src, const float *tgt_in, Err *e) {
    const RunSpec spec = pass_spec(ts, h->first, n, src, tgt_in);
    Interp *it = interp_new(ts->p, ts->m, &spec, e);
    if (it && !keep_for_backward(it, h->logits, e)) interp_free(it), it = NULL;
    return it;
}

// The first pass of a half: finds the logits, checks that the loss can reach the weights
// through them and that their shape fits the labels, splits the half into passes and makes
// room for the logits' gradient. On failure the half keeps nothing (first_pass runs again).
static bool make_passes(TrainState *ts, Shard *h, const float *src, const float *tgt_in, Err *e) {
    RunSpec spec = pass_spec(ts, h->first, h->rows, src, tgt_in);
    Interp *it = interp_new(ts->p, ts->m, &spec, e);
    if (!it) return false;
    int n;
    const ProgramOutput *o = interp_outputs(it, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(o[i].name, "logits")) h->logits = o[i].stage;
    bool ok = h->logits >= 0 ||
              err_set(e, "%s publishes no 'logits' to train on (add: output logits = ...)", ts->p->file);
    ok = ok && backward_check(it, h->logits, e);
    const Stage *st = ok ? interp_stage(it, h->logits) : NULL;
    const int64_t per_row = st ? shape_numel(&st->shape) : 0, V = st ? st->shape.dim[st->shape.ndim - 1] : 0;
    char sh[64];
    if (ok && per_row != (int64_t)labels_per_row(&ts->c) * V)
        ok = err_set(e, "%s:%d: logits is %s for each example, but training needs %s", ts->p->file, st->line,
                     shape_str(&st->shape, sh, sizeof sh),
                     ts->c.tgt_len > 0 ? "a row of scores per target token, [T, tgt_vocab_size]"
                                       : "one row of class scores, [num_classes]");
    double floats = 0;  // the trace of one example, up to the logits
    for (int i = 0; ok && i <= h->logits; i++) floats += (double)shape_numel(&interp_stage(it, i)->shape);
    interp_free(it);  // no stage has run: nothing is lost
    if (!ok) return false;
    h->V = (int)V;
    h->per = ts->c.pass_examples > 0 ? (ts->c.pass_examples < h->rows ? ts->c.pass_examples : h->rows)
                                      : examples_per_pass(h->rows, floats);
    h->passes = (h->rows + h->per - 1) / h->per;
    h->pool_most = (double)h->per * floats * sizeof(float) <= PASS_TRACE_BYTES ? POOL : 1;
    const int last = h->rows % h->per;
    h->pool[0].it = pass_interp(ts, h, h->per, src, tgt_in, e), h->pooled = 1;
    if (!h->pool[0].it || (last && !(h->last.it = pass_interp(ts, h, last, src, tgt_in, e)))) return false;
    h->dlogits = malloc(sizeof(float) * (size_t)h->per * (size_t)per_row);
    h->slot = calloc((size_t)h->passes, sizeof *h->slot), h->ready = calloc((size_t)h->passes, sizeof *h->ready);
    return (h->dlogits && h->slot && h->ready) || err_set(e, "out of memory for the gradient of the logits");
}

static bool first_pass(TrainState *ts, Shard *h, const float *src, const float *tgt_in, Err *e) {
    drop_passes(h);
    const bool ok = make_passes(ts, h, src, tgt_in, e);
    if (!ok) drop_passes(h);
    return ok;
}

bool train_state_prepare(TrainState *ts, const float *src, const float *tgt_in, Err *e) {
    for (int k = 0; k < ts->n; k++)
        if (!ts->sh[k].dlogits && !first_pass(ts, &ts->sh[k], src, tgt_in, e)) return false;
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

// ---- the step: passes shared between the threads ----

typedef enum { JOB_NONE, JOB_WAIT, JOB_FORWARD, JOB_BACKWARD } JobKind;

typedef struct {
    JobKind kind;  // NONE: every backward pass has started, or the step failed; WAIT: no job can start yet
    int shard, pass;
} Job;

typedef struct {  // what every job of a step reads
    const float *src, *tgt_in, *tgt_out;
    int total;    // the batch's labels that count (the loss's divisor)
} StepData;

// Examples in pass p of half h.
static int pass_rows(const Shard *h, int p) { return p + 1 < h->passes ? h->per : h->rows - p * h->per; }

// A free interpreter for pass p of h, taken: its index (POOL: h->last), or -1 when every one
// is busy. A new pool slot is taken with no interpreter yet: its forward job makes it.
static int take_slot(Shard *h, int p) {
    if (pass_rows(h, p) < h->per) return h->last.busy = true, POOL;
    for (int i = 0; i < h->pooled; i++)
        if (!h->pool[i].busy) return h->pool[i].busy = true, i;
    if (h->pooled >= h->pool_most) return -1;
    h->pool[h->pooled].busy = true;
    return h->pooled++;
}

static Slot *slot_of(Shard *h, int p) { return h->slot[p] == POOL ? &h->last : &h->pool[h->slot[p]]; }

// The next job for the thread whose own half is `own` (under the lock): its half's next
// backward pass, else its next forward pass; then the same of the other half.
static Job pick(TrainState *ts, int own) {
    if (ts->failed) return (Job){JOB_NONE, 0, 0};
    bool left = false;
    for (int o = 0; o < ts->n; o++)
        for (int back = 1; back >= 0; back--) {
            const int k = (own + o) % ts->n;
            Shard *h = &ts->sh[k];
            left = left || h->next_b < h->passes;
            if (back && !h->b_busy && h->next_b < h->passes && h->ready[h->next_b]) {
                h->b_busy = true;
                return (Job){JOB_BACKWARD, k, h->next_b++};
            }
            const int slot = !back && h->next_f < h->passes ? take_slot(h, h->next_f) : -1;
            if (slot >= 0) {
                h->slot[h->next_f] = slot;
                return (Job){JOB_FORWARD, k, h->next_f++};
            }
        }
    return (Job){left ? JOB_WAIT : JOB_NONE, 0, 0};
}

// Pass p's forward, in its slot's interpreter (made here the first time).
static bool run_forward(TrainState *ts, Shard *h, int p, const StepData *d, Err *e) {
    Slot *s = slot_of(h, p);
    if (!s->it && !(s->it = pass_interp(ts, h, h->per, d->src, d->tgt_in, e))) return false;
    return forward(ts, s->it, h->logits, h->first + p * h->per, pass_rows(h, p), d->src, d->tgt_in, e);
}

// Pass p's loss and backward pass: its gradients add to what the half's earlier passes left
// (the first pass starts them from zero); the loss is divided by the whole batch's count.
static bool run_backward(TrainState *ts, Shard *h, int p, const StepData *d, Err *e) {
    const int T = labels_per_row(&ts->c), N = pass_rows(h, p) * T, V = h->V;
    const float pad = ignored_label(ts);
    const float *out = d->tgt_out + (size_t)(h->first + p * h->per) * T;
    Interp *it = slot_of(h, p)->it;
    if (p == 0) grads_zero(h->g);
    const float *logits = interp_output(it, h->logits);
    int tokens;
    const float loss = cross_entropy(h->dlogits, logits, out, N, V, ts->c.label_smoothing, pad, d->total, &tokens);
    h->s.loss += loss, h->s.tokens += tokens;
    h->s.token_acc += (float)right_answers(logits, out, N, V, pad);
    if (!isfinite(loss)) return err_set(e, "the loss is not a finite number (%g)", (double)loss);
    return backward(h->g, it, h->logits, h->dlogits, e);
}

// A thread's share of the step: jobs until none is left. `own`: the half it starts with.
static void work(TrainState *ts, int own, const StepData *d) {
    int helped = 0;
    for (;;) {
        lock_take(&ts->lock);
        const Job j = pick(ts, own);
        lock_give(&ts->lock);
        if (j.kind == JOB_NONE) break;
        if (j.kind == JOB_WAIT) {  // the other thread runs what comes next: let it have the core
            sched_yield();
            continue;
        }
        Shard *h = &ts->sh[j.shard];
        Err e = {{0}};
        const bool ok = j.kind == JOB_FORWARD ? run_forward(ts, h, j.pass, d, &e) : run_backward(ts, h, j.pass, d, &e);
        helped += j.shard != own;
        lock_take(&ts->lock);
        if (!ok && !ts->failed) ts->failed = true, ts->e = e;
        if (j.kind == JOB_FORWARD) h->ready[j.pass] = true;
        else h->b_busy = false, slot_of(h, j.pass)->busy = false;
        lock_give(&ts->lock);
    }
    lock_take(&ts->lock);
    ts->helped += helped;
    lock_give(&ts->lock);
}

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Whether the second thread is still held back (StepConfig.hold_second, for tests): until
// the first has started a pass of the second half, or until every pass is done; never past a
// failure.
static bool held(TrainState *ts, int hold) {
    lock_take(&ts->lock);
    bool wait = hold == 1 && ts->n > 1 && ts->sh[1].next_f == 0;
    for (int k = 0; k < ts->n && hold > 1; k++)
        wait = wait || ts->sh[k].next_b < ts->sh[k].passes || ts->sh[k].b_busy;
    wait = wait && !ts->failed;
    lock_give(&ts->lock);
    return wait;
}

// Holds the second thread back while held() says so, for at most 10 s: a test of code that
// never lets it go fails rather than hangs.
static void hold_back(TrainState *ts, int hold) {
    const double t0 = seconds_now();
    while (held(ts, hold) && seconds_now() - t0 < 10) {
    }
}

bool train_state_step(TrainState *ts, const float *src, const float *tgt_in, const float *tgt_out, StepStats *s,
                      Err *e) {
    if (!train_state_prepare(ts, src, tgt_in, e)) return false;
    const int N = ts->c.batch * labels_per_row(&ts->c);
    const float pad = ignored_label(ts);
    StepData d = {src, tgt_in, tgt_out, 0};
    for (int r = 0; r < N; r++) d.total += tgt_out[r] != pad;
    ts->failed = false, ts->helped = 0;
    for (int k = 0; k < ts->n; k++) {  // a failed step may have left passes in flight
        Shard *h = &ts->sh[k];
        h->next_f = h->next_b = 0, h->b_busy = false, h->last.busy = false, h->s = (StepStats){0};
        for (int i = 0; i < POOL; i++) h->pool[i].busy = false;
        memset(h->ready, 0, sizeof *h->ready * (size_t)h->passes);
    }
#pragma omp parallel num_threads(SHARDS) if (ts->n > 1)
    {
        const int me = omp_get_thread_num();
        if (me > 0 && ts->c.hold_second > 0) hold_back(ts, ts->c.hold_second);
        work(ts, me % ts->n, &d);
    }
    *s = (StepStats){0};  // also on failure: the trainer reads the loss that stopped it
    for (int k = 0; k < ts->n; k++) {
        const Shard *h = &ts->sh[k];
        s->loss += h->s.loss, s->token_acc += h->s.token_acc, s->tokens += h->s.tokens;
    }
    if (ts->failed) {
        if (e) *e = ts->e;
        return false;
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
