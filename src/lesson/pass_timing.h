// pass_timing.h: the passes the browser's benchmark page times, written once so that the
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

enum { PASS_TIMINGS = 3 };

// Each pass's name, as PassTiming.name gives it.
extern const char *const pass_timing_names[PASS_TIMINGS];

// GPT-2 small's configuration in lessons/gpt2.md's names, and the seed of its random weights:
// scripts/export_onnx.py writes the same weights (`stepformer init --seed`) for ONNX Runtime.
#define PASS_GPT2_CONFIG "n_layer=12 n_head=12 n_embd=768 n_inner=3072 n_positions=1024 vocab_size=50257"
enum { PASS_GPT2_SEED = 1, PASS_GPT2_LEN = 128 };

// The dates model's whole pass (lessons/forward-pass.md in lessons_dir: its input, greedy
// decoding to the end), the base model's forward at 32 tokens (d_model 512, 6+6 layers, random
// weights, teacher forcing) and GPT-2 small's forward at 128 random ids, each after warm-up runs
// (pass_timing.c). out[PASS_TIMINGS].
bool pass_timings(const char *lessons_dir, int runs, PassTiming *out, Err *e);

#endif
