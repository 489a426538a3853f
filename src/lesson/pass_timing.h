// pass_timing.h: the two passes the browser's benchmark page times, written once so that the
// native run it is compared with (`stepformer bench --only browser`, one thread) times exactly
// the same work.
#ifndef STEPFORMER_PASS_TIMING_H
#define STEPFORMER_PASS_TIMING_H

#include <stdbool.h>

#include "err.h"

typedef struct {
    const char *name;  // what was timed
    double median_ms, min_ms;
    int runs, stages;  // timed runs; stages of one pass
} PassTiming;

enum { PASS_TIMINGS = 2 };

// The dates model's whole pass (lessons/forward-pass.md in lessons_dir: its input, greedy
// decoding to the end) and the base model's forward at 32 tokens (d_model 512, 6+6 layers,
// random weights, teacher forcing), each after warm-up runs (pass_timing.c). out[PASS_TIMINGS].
bool pass_timings(const char *lessons_dir, int runs, PassTiming *out, Err *e);

#endif
