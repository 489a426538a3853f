// fuzz.h: what the libFuzzer harnesses share: small limits, one thread, the input as text.
#ifndef STEPFORMER_FUZZ_H
#define STEPFORMER_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

// Limits (STEPFORMER_MAX_*) low enough that every input runs in milliseconds, and one
// OpenMP thread: the harnesses run side by side on a small machine.
static inline void fuzz_small_limits(void) {
    setenv("STEPFORMER_MAX_FILE_MB", "16", 1);
    setenv("STEPFORMER_MAX_TENSOR_MB", "16", 1);
    setenv("STEPFORMER_MAX_MODEL_MB", "64", 1);
    setenv("STEPFORMER_MAX_TRACE_MB", "64", 1);
    setenv("STEPFORMER_MAX_STAGES", "2000", 1);
    setenv("STEPFORMER_MAX_ITERATIONS", "20000", 1);
    setenv("OMP_NUM_THREADS", "1", 1);
}

// The bytes as a NUL-terminated string (malloc'd; the text ends at the first NUL byte).
static inline char *fuzz_text(const uint8_t *data, size_t n) {
    char *s = malloc(n + 1);
    if (!s) abort();
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

#endif
