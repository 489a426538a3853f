// bounds.h: the ceilings on what a file, a lesson or a program may ask for, so that a small file
// can neither hang stepformer nor take the machine's memory. Each has a default and an
// environment variable that raises (or lowers) it; an error that hits one names both.
//
//   STEPFORMER_MAX_FILE_MB      a weights or lesson file read            (default 4096)
//   STEPFORMER_MAX_TENSOR_MB    one tensor: a stage's output or a weight  (default 2048)
//   STEPFORMER_MAX_MODEL_MB     all of a model's weights                  (default 4096)
//   STEPFORMER_MAX_TRACE_MB     all stage outputs of one pass             (default 8192)
//   STEPFORMER_MAX_STAGES       stages in one pass                        (default 500000)
//   STEPFORMER_MAX_ITERATIONS   loop iterations while a program expands   (default 1000000)
//   STEPFORMER_MAX_TEXT_MB      a text file `train --task text` reads     (default 64)
#ifndef STEPFORMER_BOUNDS_H
#define STEPFORMER_BOUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h"

typedef enum {
    LIMIT_FILE_MB, LIMIT_TENSOR_MB, LIMIT_MODEL_MB, LIMIT_TRACE_MB, LIMIT_STAGES, LIMIT_ITERATIONS, LIMIT_TEXT_MB,
    LIMIT_COUNT
} LimitId;

// The limit's value: its environment variable when that holds a positive whole number, else
// the default.
long long limit_value(LimitId id);
// The same in bytes, for the _MB limits.
size_t limit_bytes(LimitId id);
// Its environment variable's name ("STEPFORMER_MAX_STAGES").
const char *limit_env(LimitId id);

// The trace budget (RunSpec.trace_budget) when none is given: a quarter of the machine's memory
// (at least 256 MB), or in the browser 1 GB, half the 2 GB the page may grow to. --trace-mb sets it.
long long trace_budget_default_mb(void);
// The memory the program may still take now, in bytes: the machine's available memory
// (MemAvailable), or in the browser the room left under the page's ceiling; 0 when it cannot tell.
double memory_free_bytes(void);
// Where that memory is, for messages: "on this machine", or "in this page".
const char *memory_free_place(void);

// Reads a whole regular file (a FIFO, a device or a folder is refused before any read) of at
// most the file limit into *out (malloc'd, with a NUL after its *n bytes). `what` names it in
// messages ("the lesson", "the model").
bool file_read_all(const char *path, const char *what, char **out, size_t *n, Err *e);
// The same within another _MB limit (LIMIT_TEXT_MB for a text to train on).
bool file_read_within(const char *path, const char *what, LimitId limit, char **out, size_t *n, Err *e);
// Opens a regular file of at most the file limit for reading, with the same checks and
// messages, for a reader that takes it in parts (safetensors: each tensor read straight into
// its place); its size in *n. NULL on error.
FILE *file_open_within(const char *path, const char *what, LimitId limit, size_t *n, Err *e);

#endif
