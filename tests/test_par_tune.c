// test_par_tune.c: the thread tuner of greedy rounds (src/tensor/par_tune.h), on unit times
// made up to stand for a quiet machine, a busy core, a core taken and given back mid-run and
// many cores; then a greedy pass run by interp_run (tuned, on two threads where there are two)
// against the same pass stepped on one thread: every stage the same bits.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "par.h"
#include "par_tune.h"
#include "session.h"

// Seconds a unit takes on n threads: `work` split over the free cores, with some loss to the
// splitting; with a thread on a `busy` core, every kernel waits for it (measured: the base
// model's `run` took 5.2 s on two threads beside a busy loop, and 2.3-2.6 s on one).
typedef struct {
    double work;  // seconds on one free core
    int busy;     // cores held by another program (taken from the last one)
    int cores;
} Machine;

static double unit_time(const Machine *m, int n) {
    if (n <= m->cores - m->busy) return m->work / n * (1 + 0.1 * (n - 1));  // some loss to splitting
    return m->work / n * 4.4;
}

// Runs `units` units on machine m; returns the threads the last one ran on; *fewer counts the
// units on fewer threads than the tuner has.
static int run_units(ThreadTune *t, const Machine *m, int units, int *fewer) {
    int n = 0;
    *fewer = 0;
    for (int u = 0; u < units; u++) {
        n = tune_threads(t);
        CHECK(n >= 1 && n <= t->most, "unit %d: %d threads of %d", u, n, t->most);
        *fewer += n < t->most;
        tune_record(t, unit_time(m, n));
    }
    return n;
}

static void test_quiet(void) {
    ThreadTune t;
    tune_init(&t, 2);
    const Machine m = {0.010, 0, 2};
    int fewer;
    CHECK(run_units(&t, &m, 200, &fewer) == 2 && t.now == 2, "a quiet machine keeps two threads (%d)", t.now);
    // probes after 4 units, then 8, 16, then every 32 (at units 5, 14, 31, 64, 97, 130, 163, 196),
    // each over after one unit, slower than the basis
    CHECK(fewer == 8 && t.units_fewer == 8 && t.units == 200, "%d probes on one thread (units_fewer %d)", fewer, t.units_fewer);
}

static void test_busy(void) {
    ThreadTune t;
    tune_init(&t, 2);
    const Machine m = {0.010, 1, 2};
    int fewer;
    const int n = run_units(&t, &m, 100, &fewer);
    CHECK(n == 1 && t.now == 1, "a busy second core: one thread (%d)", t.now);
    // 4 units on two threads, the probe's two that win, then 94 on one less four probes of two
    // (after 4, 8, 16 and 32 more; each over after its first unit, slower than the basis)
    CHECK(fewer == 92, "%d of 100 units on one thread", fewer);
}

static void test_taken_and_given_back(void) {
    ThreadTune t;
    tune_init(&t, 2);
    Machine m = {0.010, 0, 2};
    int fewer;
    run_units(&t, &m, 150, &fewer);  // probes have backed off to every 32 units
    CHECK(t.now == 2 && t.gap == 32, "quiet: two threads, a probe every %d units", t.gap);
    m.busy = 1;
    int switched = -1;
    for (int u = 0; u < 10 && switched < 0; u++) {
        tune_record(&t, unit_time(&m, tune_threads(&t)));
        if (t.now == 1) switched = u;
    }
    // three slow units make a new basis, the fourth and fifth are the probe that wins
    CHECK(switched == 4, "a core taken: one thread after %d units", switched);
    int n = run_units(&t, &m, 100, &fewer);
    CHECK(n == 1 && t.gap == 32, "busy: one thread (%d), probes of two every %d units", n, t.gap);
    m.busy = 0;
    int back = -1;
    for (int u = 0; u < 100 && back < 0; u++) {
        tune_record(&t, unit_time(&m, tune_threads(&t)));
        if (t.now == 2) back = u;
    }
    CHECK(back >= 0 && back <= 32, "the core given back: two threads again after %d units", back);
}

// Two lucky units on one thread give up a core where two threads are only a little faster (the
// cached decoder's rounds on this machine: 12.6 ms on two, 14 on one); the next probe of two
// threads takes it back, though it wins by less than a probe of one thread must.
static void test_lucky_probe(void) {
    ThreadTune t;
    tune_init(&t, 2);
    for (int u = 0; u < 4; u++) tune_record(&t, 0.0126);
    CHECK(tune_threads(&t) == 1, "the first probe after 4 units (%d threads)", tune_threads(&t));
    tune_record(&t, 0.009), tune_record(&t, 0.009);
    CHECK(t.now == 1, "two lucky units: one thread (%d)", t.now);
    int back = -1;
    for (int u = 0; u < 20 && back < 0; u++) {
        tune_record(&t, tune_threads(&t) == 1 ? 0.014 : 0.0126);
        if (t.now == 2) back = u;
    }
    CHECK(back == 5, "two threads again after %d units (4 on one, then the probe's two)", back);
    t.now = 2, t.n_recent = 0, t.since = 0, t.gap = 4;
    for (int u = 0; u < 4; u++) tune_record(&t, 0.0126);
    tune_record(&t, 0.0115), tune_record(&t, 0.0115);
    CHECK(t.now == 2, "one thread 9%% faster is not enough to give up a core (%d threads)", t.now);
}

// Units that grow a little each time (a greedy round has one more position than the last) never
// make the tuner leave the faster count.
static void test_growing_units(void) {
    ThreadTune t;
    tune_init(&t, 2);
    Machine m = {0.005, 0, 2};
    for (int u = 0; u < 300; u++) {
        tune_record(&t, unit_time(&m, tune_threads(&t)));
        m.work *= 1.01;
    }
    CHECK(t.now == 2, "growing units on a quiet machine: two threads (%d)", t.now);
}

// Sixteen threads, six cores held: the tuner halves down to 8 (all free), and does not go to 4.
static void test_many_cores(void) {
    ThreadTune t;
    tune_init(&t, 16);
    const Machine m = {0.040, 6, 16};
    int fewer;
    run_units(&t, &m, 300, &fewer);
    CHECK(t.now == 8, "16 threads, 10 cores free: %d threads", t.now);
}

static void test_one_thread(void) {
    ThreadTune t;
    tune_init(&t, 1);
    const Machine m = {0.010, 0, 1};
    int fewer;
    CHECK(run_units(&t, &m, 50, &fewer) == 1 && fewer == 0 && !t.probing, "one thread: nothing to choose");
    tune_init(&t, 0);
    CHECK(tune_threads(&t) == 1, "no threads named: one");
}

// A greedy pass on a model whose products are split over the cores (d_model 256, d_ff 1024):
// interp_run, whose rounds run on the tuner's counts, against stepping on one thread.
static void test_same_bits(bool cached) {
    ModelConfig cfg = config_base();
    cfg.d_model = 256, cfg.nhead = 4, cfg.num_encoder_layers = cfg.num_decoder_layers = 2, cfg.dim_feedforward = 1024;
    cfg.src_vocab_size = cfg.tgt_vocab_size = 64, cfg.max_positions = 64;
    Session s;
    Err e = {{0}};
    if (!session_open_random(&s, &cfg, NULL, 5, 12, 1, &e)) {
        CHECK(false, "random session: %s", e.msg);
        return;
    }
    const int threads = omp_get_max_threads();
    const RunSpec spec = {s.src, 12, NULL, 0, 40, 1, true, cached};
    Interp *a = interp_new(&s.lesson.program, &s.model, &spec, &e), *b = interp_new(&s.lesson.program, &s.model, &spec, &e);
    CHECK(a && b && interp_run(a, &e), "tuned run: %s", e.msg);
    CHECK(omp_get_max_threads() == threads, "interp_run gives back the thread count (%d, was %d)", omp_get_max_threads(), threads);
    omp_set_num_threads(1);
    StepStatus st = STEP_RAN;
    while (b && (st = interp_step(b, &e)) == STEP_RAN)
        ;
    omp_set_num_threads(threads);
    CHECK(st == STEP_DONE, "stepped run: %s", e.msg);
    if (!a || !b || st != STEP_DONE) return interp_free(a), interp_free(b), session_close(&s);
    int same = 0, n = interp_n_stages(a), gen, rounds, fewer;
    StopReason why;
    interp_generated(a, &gen, &why);
    for (int i = 0; i < n && i < interp_n_stages(b); i++)
        same += !memcmp(interp_output(a, i), interp_output(b, i), sizeof(float) * (size_t)shape_numel(&interp_stage(a, i)->shape));
    CHECK(n == interp_n_stages(b) && same == n, "%s: %d of %d stages the same bits", cached ? "cached" : "plain", same, n);
    interp_threads_used(a, &rounds, &fewer);
    // a round a token (the last one's eos aside): rounds 1 .. gen - 1 are timed (round 0 also runs
    // the encoder), and the probe after 4 of them ran on one thread
    const int want = threads > 1 ? gen - (why == STOP_MAX_LEN) : 0;
    CHECK(rounds == want, "%d rounds timed, %d generated on %d threads", rounds, gen, threads);
    CHECK(threads < 2 || gen < 10 || fewer >= 1, "a probe ran on fewer threads (%d of %d rounds)", fewer, rounds);
    interp_free(a), interp_free(b);
    session_close(&s);
}

int main(void) {
    test_quiet();
    test_busy();
    test_taken_and_given_back();
    test_lucky_probe();
    test_growing_units();
    test_many_cores();
    test_one_thread();
    test_same_bits(true);
    test_same_bits(false);
    return check_finish("test_par_tune");
}
