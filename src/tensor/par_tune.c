// par_tune.c: choosing the thread count from the units' times (par_tune.h).
#include "par_tune.h"

#include <string.h>

enum {
    PROBE_FIRST = 4,  // units at a count before its first probe
    PROBE_LAST = 32,  // the longest gap between probes
    PROBE_UNITS = 2,  // units a probe runs, unless its first is already slower than the basis
    TUNE_BASIS = 3,   // units at the current count needed before anything is compared
};
// A probe wins when its units take under a fraction of the recent units' mean: fewer threads
// must be clearly faster (units grow a little longer round by round, one more position, and
// a lucky unit should not give up a core), more threads only faster, since using every core
// is the rule and fewer the exception. Means, not medians: the rare very slow unit of a
// thread waiting on a busy core is the cost being measured.
static const double FEWER_WINS = 0.8, MORE_WINS = 0.97;
// A unit this much slower than the recent median brings the next probe forward.
static const double SLOWED = 2.0;

void tune_init(ThreadTune *t, int most) {
    memset(t, 0, sizeof *t);
    t->most = t->now = most > 1 ? most : 1;
    t->gap = PROBE_FIRST;
    t->down = true;
}

int tune_threads(const ThreadTune *t) { return t->probing ? t->probe : t->now; }

static double mean(const double *x, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    return s / n;
}

static double median(const double *x, int n) {
    double s[TUNE_KEEP];
    memcpy(s, x, sizeof *x * (size_t)n);
    for (int i = 1; i < n; i++)  // insertion sort: n is at most TUNE_KEEP
        for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
            const double v = s[j];
            s[j] = s[j - 1], s[j - 1] = v;
        }
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void keep(ThreadTune *t, double seconds) {
    if (t->n_recent == TUNE_KEEP) memmove(t->recent, t->recent + 1, sizeof *t->recent * (TUNE_KEEP - 1)), t->n_recent--;
    t->recent[t->n_recent++] = seconds;
}

// The count a probe tries from `now`: half of it or twice it, within 1 .. most; with two
// choices (one thread or two) always the other one.
static int neighbour(ThreadTune *t) {
    const int fewer = t->now / 2 > 1 ? t->now / 2 : 1, more = t->now * 2 < t->most ? t->now * 2 : t->most;
    if (t->now == 1) return more;
    if (t->now == t->most) return fewer;
    const bool down = t->down;
    t->down = !t->down;
    return down ? fewer : more;
}

// A probe's unit took `seconds`: it goes on, ends lost, or ends won (the probe's count is
// kept, and the units after it make the new basis).
static void probe_unit(ThreadTune *t, double seconds) {
    const double basis = mean(t->recent, t->n_recent);
    t->probe_sum += seconds, t->probe_units++;
    if (t->probe_units < PROBE_UNITS && seconds < basis) return;  // not lost yet: one more unit
    if (t->probe_sum < (t->probe < t->now ? FEWER_WINS : MORE_WINS) * basis * t->probe_units) {
        t->now = t->probe, t->n_recent = 0, t->gap = PROBE_FIRST;  // the basis starts afresh
    } else if (t->gap < PROBE_LAST) t->gap *= 2;
    t->probing = false, t->since = 0, t->probe_sum = 0, t->probe_units = 0;
}

void tune_record(ThreadTune *t, double seconds) {
    t->units++;
    t->units_fewer += tune_threads(t) < t->most;
    if (t->probing) return probe_unit(t, seconds);
    if (t->n_recent >= TUNE_BASIS && seconds > SLOWED * median(t->recent, t->n_recent)) {
        // The machine changed (a core taken): the units before say nothing of it now. Probe as
        // soon as a few units show the new speed.
        t->n_recent = 0, t->since = t->gap;
    }
    keep(t, seconds);
    t->since++;
    if (t->most > 1 && t->n_recent >= TUNE_BASIS && t->since >= t->gap) t->probing = true, t->probe = neighbour(t);
}
