// interp_transient.h: the transient outputs of a pass that keeps only what a later reader needs
// (interp_set_transient). A transient stage's buffer goes, once the last stage reading it has
// run, on top of a pool; the next transient stage takes the buffer released last that is large
// enough. It knows the stages and the output buffers it is given, never the interpreter: the
// interpreter (interp.c) calls it, not the other way round.
#ifndef STEPFORMER_INTERP_TRANSIENT_H
#define STEPFORMER_INTERP_TRANSIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "ops.h"

typedef struct {
    int *last_reader;   // [stages] a transient stage's last reader, else -1 (NULL: every output kept)
    float **pool;       // [n_pool] buffers released, the last on top (counted in the trace's floats)
    size_t *pool_size;  // [n_pool] floats each holds
    int n_pool;
} Transient;

// The plan for stages[0, n): which are transient (transient[i]) and who reads each last. The
// pool held before is freed. False (e set, t unchanged) out of memory.
bool transient_plan(Transient *t, const Stage *stages, int n, const bool *transient, Err *e);
// Stage i, whose buffer is *out (of *out_size floats), takes a released buffer of at least
// `need` floats if it is transient, has none and one is free (true).
bool transient_take(Transient *t, int i, size_t need, float **out, size_t *out_size);
// Stage c (st) has run: the transient outputs it read last (out[q], out_size[q]) go to the pool.
void transient_release(Transient *t, int c, const Stage *st, float **out, size_t *out_size);
// Whether stage i's output is transient: gone once its last reader has run.
bool transient_gone(const Transient *t, int i);
// The plan and the pool's buffers freed: every output kept again.
void transient_free(Transient *t);

#endif
