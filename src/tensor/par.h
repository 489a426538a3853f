// par.h: when a kernel splits its loop over the cores (OpenMP `if` clauses): one home for
// the thresholds, private to the tensor kernels. A loop is split only outside any region:
// inside one (training's two shards) a nested region would run on one thread and only cost.
#ifndef STEPFORMER_PAR_H
#define STEPFORMER_PAR_H

#include <omp.h>

// Row-wise kernels with real arithmetic per element (softmax's exponentials, layer norm's
// sums): split once a tensor has this many elements.
#define PAR_ROWS(total) if (parallel : (total) > 4096 && !omp_in_parallel())
// Element-wise loops and copies: every output is written to a fresh part of the trace, so
// they wait on memory, and two cores keep twice as many lines in flight.
#define PAR_N(n) if (parallel : (n) > 8192 && !omp_in_parallel())

#endif
