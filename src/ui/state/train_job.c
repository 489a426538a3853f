// train_job.c: the training worker and its snapshots (see train_job.h). Where the build has
// threads (STEPFORMER_THREADS, the desktop) the worker is a thread; without them (the browser
// build) train_job_pump runs its steps in slices between frames, and the locks are no-ops.
#define _DEFAULT_SOURCE  // syscall(SYS_gettid): the worker's own priority
#include "train_job.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if STEPFORMER_THREADS
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#define LOCK(j) pthread_mutex_lock(&(j)->lock)
#define UNLOCK(j) pthread_mutex_unlock(&(j)->lock)
#else
#define LOCK(j) (void)(j)
#define UNLOCK(j) (void)(j)
#endif

enum { EXAMPLE_EVERY = 20, EVAL_EVERY = 250, EVAL_SIZE = 200 };

struct TrainJob {
#if STEPFORMER_THREADS
    pthread_mutex_t lock;
    pthread_t thread;
#endif
    bool thread_live;     // a worker runs (a thread, or slices from train_job_pump)
    double seconds;       // of training before the current slice (train_job_pump)
    atomic_bool stop;
    Trainer *trainer;
    TrainSnapshot snap;  // guarded by lock
    double loss_sum, acc_sum;  // the point being filled
    int in_point;
};

const char *train_example(Task task) {
    static const char *const examples[TASK_COUNT] = {"transformer", "attention", "transformer", "22 November 2026",
                                                     "cabbcb", "([)]"};
    return examples[task];
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

TrainJob *train_job_new(void) {
    TrainJob *j = calloc(1, sizeof *j);
#if STEPFORMER_THREADS
    if (j) pthread_mutex_init(&j->lock, NULL);
#endif
    return j;
}

void train_job_free(TrainJob *j) {
    if (!j) return;
    train_job_stop(j);
    trainer_free(j->trainer);
#if STEPFORMER_THREADS
    pthread_mutex_destroy(&j->lock);
#endif
    free(j);
}

static void token_label(char *out, const Vocab *v, int id) {
    const char *t = vocab_token(v, id);
    snprintf(out, 8, "%s", strcmp(t, " ") ? t : "\xe2\x90\xa3");  // a space shows as the open box
}

// Greedy decoding of the task's example with the current weights, into a snapshot.
static void decode_example(Trainer *t, TrainSnapshot *s) {
    const Model *m = trainer_model(t);
    float src[64];
    int S;
    Err e = {{0}};
    snprintf(s->src, sizeof s->src, "%s", train_example(s->task));
    if (!vocab_encode(&m->src_vocab, s->src, "source", src, 64, &S, &e)) return;
    RunSpec spec = {src, S, NULL, 0, task_max_tgt_len(s->task) + 1, 1};
    Interp *it = interp_new(trainer_program(t), m, &spec, &e);
    if (!it || !interp_run(it, &e)) {
        interp_free(it);
        return;
    }
    int n;
    StopReason why;
    const float *ids = interp_generated(it, &n, &why);
    vocab_decode(&m->tgt_vocab, ids, n, s->out, sizeof s->out);
    // The last round's cross-attention in the last decoder layer: every output row so far.
    char id[96];
    int k = -1;
    for (int r = task_max_tgt_len(s->task) + 1; r >= 0 && k < 0; r--) {
        snprintf(id, sizeof id, "step.%d.decoder.layers.%d.cross_attn.weights", r, m->cfg.num_decoder_layers - 1);
        k = interp_find(it, id);
    }
    const Stage *st = k >= 0 ? interp_stage(it, k) : NULL;
    if (st && shape_numel(&st->shape) <= TRAIN_ATT && st->shape.dim[1] <= TRAIN_TOKENS && S <= TRAIN_TOKENS) {
        s->heads = st->shape.dim[0], s->T = st->shape.dim[1], s->S = st->shape.dim[2];
        memcpy(s->cross, interp_output(it, k), sizeof(float) * (size_t)shape_numel(&st->shape));
        int len;
        const float *tgt = interp_input_ids(it, program_input(trainer_program(t), "tgt"), &len);
        for (int i = 0; i < s->T; i++) token_label(s->out_tok[i], &m->tgt_vocab, (int)tgt[i]);
        for (int i = 0; i < S; i++) token_label(s->src_tok[i], &m->src_vocab, (int)src[i]);
    }
    interp_free(it);
}

// Adds one step to the curves, thinning them by half when they fill up.
static void add_point(TrainJob *j, const StepStats *st) {
    TrainSnapshot *s = &j->snap;
    j->loss_sum += st->loss, j->acc_sum += st->token_acc, j->in_point++;
    if (j->in_point < s->every) return;
    if (s->n_points == TRAIN_POINTS) {
        for (int i = 0; i < TRAIN_POINTS / 2; i++) {
            s->loss[i] = (s->loss[2 * i] + s->loss[2 * i + 1]) / 2;
            s->acc[i] = (s->acc[2 * i] + s->acc[2 * i + 1]) / 2;
        }
        s->n_points = TRAIN_POINTS / 2, s->every *= 2;
    }
    s->loss[s->n_points] = (float)(j->loss_sum / j->in_point), s->acc[s->n_points] = (float)(j->acc_sum / j->in_point);
    s->n_points++;
    j->loss_sum = j->acc_sum = 0, j->in_point = 0;
}

// Between steps: the example every few steps, held-out accuracy every few hundred.
static void observe(TrainJob *j, int steps) {
    if (steps % EXAMPLE_EVERY == 1 || steps == 1) {
        TrainSnapshot tmp;
        LOCK(j);
        tmp = j->snap;
        UNLOCK(j);
        decode_example(j->trainer, &tmp);
        LOCK(j);
        memcpy(j->snap.src, tmp.src, sizeof tmp.src), memcpy(j->snap.out, tmp.out, sizeof tmp.out);
        memcpy(j->snap.src_tok, tmp.src_tok, sizeof tmp.src_tok), memcpy(j->snap.out_tok, tmp.out_tok, sizeof tmp.out_tok);
        j->snap.heads = tmp.heads, j->snap.T = tmp.T, j->snap.S = tmp.S;
        memcpy(j->snap.cross, tmp.cross, sizeof tmp.cross);
        j->snap.example_step = steps, j->snap.version++;
        UNLOCK(j);
    }
    double acc;
    Err e = {{0}};
    if (steps % EVAL_EVERY == 0 && trainer_eval(j->trainer, EVAL_SIZE, &acc, &e)) {
        LOCK(j);
        if (j->snap.n_evals < TRAIN_EVALS)
            j->snap.eval[j->snap.n_evals] = (float)acc, j->snap.eval_step[j->snap.n_evals++] = steps;
        UNLOCK(j);
    }
}

// One training step and what the view learns of it; false when the step failed (the snapshot
// then holds the error). t0: when the current run of steps started.
static bool work_one(TrainJob *j, double t0) {
    Err e = {{0}};
    StepStats st;
    const bool ok = trainer_step(j->trainer, &st, &e);
    LOCK(j);
    if (ok) {
        j->snap.steps = trainer_steps_done(j->trainer), j->snap.seconds = j->seconds + now() - t0;
        j->snap.lr = trainer_lr(j->trainer);
        add_point(j, &st);
    } else {
        snprintf(j->snap.error, sizeof j->snap.error, "%s", e.msg);
    }
    const int steps = j->snap.steps;
    UNLOCK(j);
    if (ok) observe(j, steps);
    return ok;
}

static void finished(TrainJob *j) {
    LOCK(j);
    j->snap.running = false, j->snap.stopping = false;
    UNLOCK(j);
}

#if STEPFORMER_THREADS
static void *worker(void *arg) {
    TrainJob *j = arg;
    // The window's thread comes first: training runs niced (the OpenMP threads this thread
    // starts inherit it), so frames keep time when training takes every core.
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
    const double t0 = now();
    while (!atomic_load(&j->stop) && work_one(j, t0)) {
    }
    finished(j);
    return NULL;
}

void train_job_pump(TrainJob *j, double budget_ms) { (void)j, (void)budget_ms; }
#else
void train_job_pump(TrainJob *j, double budget_ms) {
    if (!j->thread_live) return;
    const double t0 = now();
    bool ok = true;
    while (ok && !atomic_load(&j->stop) && (now() - t0) * 1000.0 < budget_ms) ok = work_one(j, t0);
    j->seconds += now() - t0;
    if (!ok || atomic_load(&j->stop)) finished(j), j->thread_live = false;
}
#endif

bool train_job_start(TrainJob *j, Task task, Err *e) {
    train_job_stop(j);
    trainer_free(j->trainer);
    TrainConfig c = train_defaults(task);
    c.steps = INT_MAX, c.held_out = EVAL_SIZE;
    j->trainer = trainer_new(&c, e);
    if (!j->trainer) return false;
    LOCK(j);
    memset(&j->snap, 0, sizeof j->snap);
    j->snap.task = task, j->snap.cfg = trainer_model(j->trainer)->cfg, j->snap.every = 1, j->snap.running = true;
    j->loss_sum = j->acc_sum = 0, j->in_point = 0, j->seconds = 0;
    UNLOCK(j);
    atomic_store(&j->stop, false);
#if STEPFORMER_THREADS
    if (pthread_create(&j->thread, NULL, worker, j) != 0) {
        j->snap.running = false;
        return err_set(e, "could not start the training thread");
    }
#endif
    j->thread_live = true;
    return true;
}

void train_job_ask_stop(TrainJob *j) {
    if (!j->thread_live) return;
    LOCK(j);
    j->snap.stopping = j->snap.running;
    UNLOCK(j);
    atomic_store(&j->stop, true);
}

void train_job_stop(TrainJob *j) {
    train_job_ask_stop(j);
    if (!j->thread_live) return;
#if STEPFORMER_THREADS
    pthread_join(j->thread, NULL);
#else
    finished(j);  // between slices: nothing runs
#endif
    j->thread_live = false;
}

bool train_job_running(TrainJob *j) {
    LOCK(j);
    const bool r = j->snap.running;
    UNLOCK(j);
    if (!r && j->thread_live) train_job_stop(j);  // it has finished: collect the thread
    return r;
}

void train_job_snapshot(TrainJob *j, TrainSnapshot *out) {
    LOCK(j);
    *out = j->snap;
    UNLOCK(j);
}

bool train_job_save(TrainJob *j, const char *path, Err *e) {
    if (!j->trainer) return err_set(e, "nothing has been trained yet");
    if (train_job_running(j)) return err_set(e, "stop training before saving");
    return trainer_save(j->trainer, path, e);
}
