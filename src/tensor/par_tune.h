// par_tune.h: how many threads the next unit of repeated work gets (a greedy round), chosen
// from how long the earlier units took.
//
// Every product and kernel splits its work evenly over the threads and waits for the last one,
// so a core that another program holds (a browser, a build, a neighbour on a shared machine)
// holds up every step: beside a busy loop on the second core, `stepformer run` on the base
// model took about twice as long on two threads as on one (docs/benchmarks.md). The tuner
// starts with every thread and now and then runs a unit or two with fewer (or, after a switch,
// more); when they are clearly faster than the units before them, it keeps the new count.
// Probes that lose come less often (after 4 units, then 8, 16, then every 32), and a unit much
// slower than the ones before it brings the next probe forward, so a core taken mid-run is
// noticed within a few units.
//
// The thread count never changes a bit: every kernel computes each element in the same order
// on any number of threads (gemm.c, par.h).
#ifndef STEPFORMER_PAR_TUNE_H
#define STEPFORMER_PAR_TUNE_H

#include <stdbool.h>

enum { TUNE_KEEP = 5 };  // units at the current count that a probe is compared with

typedef struct {
    int most;                   // threads available (omp_get_max_threads() when made)
    int now;                    // the count the units run with
    bool probing;               // the next unit is a probe's, on `probe` threads
    int probe;
    double probe_sum;           // seconds of the probe's units so far
    int probe_units;
    bool down;                  // the next probe tries fewer threads (with more than two choices)
    int since, gap;             // units at `now` since the last probe, and before the next one
    double recent[TUNE_KEEP];   // seconds of the last units at `now`, oldest first
    int n_recent;
    int units, units_fewer;     // units recorded, and how many of them ran on fewer than `most`
} ThreadTune;

void tune_init(ThreadTune *t, int most);
// The threads the next unit should run on.
int tune_threads(const ThreadTune *t);
// The unit just run (on tune_threads' count) took `seconds`.
void tune_record(ThreadTune *t, double seconds);

#endif
