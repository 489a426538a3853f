// par.h: when a loop is split over the cores, and how: one home for the thresholds and for
// PAR_LOOP, used by the kernels, the interpreter's per-example loop and the trainer.
//
// A loop is split only outside any region: inside one (training's two shards) a nested
// region would run on one thread and only cost. And a loop that is not split never enters
// the OpenMP runtime: a region whose `if` clause is false still passes through it, and
// libgomp ends every region, even one of one thread, with a futex wake-up (a system call).
// Inside training's shards that was about 6000 system calls a step.
#ifndef STEPFORMER_PAR_H
#define STEPFORMER_PAR_H

#ifdef _OPENMP
#include <omp.h>
#else
// Built without OpenMP (the browser's WebAssembly has no threads here): one thread, and the
// directives below are never compiled in.
static inline int omp_in_parallel(void) { return 0; }
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_num_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
#endif

// Row-wise kernels with real arithmetic per element (softmax's exponentials, layer norm's
// sums): split once a tensor has this many elements.
#define PAR_ROWS(total) ((total) > 4096)
// Element-wise loops and copies: every output is written to a fresh part of the trace, so
// they wait on memory, and two cores keep twice as many lines in flight.
#define PAR_N(n) ((n) > 8192)

// Runs the for statement `...` under the OpenMP directive `directive` (a string: "omp parallel
// for", with its clauses) when `split` holds and no region is running already, else as a
// plain loop. Each iteration computes the same either way, so the bits do not depend on the
// choice. It reads as the pragma it replaces:
//
//     PAR_LOOP(PAR_N(n), "omp parallel for simd",
//         for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
//     );
#ifdef _OPENMP
#define PAR_LOOP(split, directive, ...)      \
    do {                                     \
        if ((split) && !omp_in_parallel()) { \
            _Pragma(directive)               \
            __VA_ARGS__                      \
        } else {                             \
            __VA_ARGS__                      \
        }                                    \
    } while (0)
#else
#define PAR_LOOP(split, directive, ...) \
    do {                                \
        (void)(split);                  \
        __VA_ARGS__                     \
    } while (0)
#endif

#endif
