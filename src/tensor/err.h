// err.h: how the core reports a failure at its edges (files, lessons, user input).
//
// Core functions never print or exit. A function that can fail on bad input takes an
// `Err *` as its last argument, fills it with one line naming the file / line / tensor and
// what was expected, and returns false (or NULL). The command line prints the line and
// exits 1; the window shows it on screen. A violated internal invariant is a bug, not an
// Err: it fails loudly through assert().
#ifndef STEPFORMER_ERR_H
#define STEPFORMER_ERR_H

#include <stdbool.h>

// What kind of failure it was, for callers that act on it (never read from the message).
typedef enum {
    ERR_NONE,    // no failure recorded
    ERR_FAILED,  // bad input: a file, a lesson, a program, a flag (the usual case)
    ERR_IO,      // a file could not be opened, read or written
    ERR_LIMIT,   // a ceiling of bounds.h was reached
    ERR_MEMORY,  // memory ran out
    ERR_COUNT
} ErrCode;

typedef struct {
    char msg[512];
    ErrCode code;
} Err;

// Formats the message into e (if e is not NULL), with code ERR_FAILED, and returns false, so
// callers can write `return err_set(e, "...", ...);`.
bool err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// The same with another code.
bool err_code(Err *e, ErrCode code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

// Prefixes an existing message: "where: <old message>".
bool err_prefix(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// For "did you mean": the candidate closest to `name` by edit distance (insertions, deletions,
// substitutions, and swaps of two neighbours), if it is within max(1, strlen(name) / 3) edits
// and not `name` itself; else NULL. Candidates may repeat; NULL entries are skipped.
const char *err_closest(const char *name, const char *const *candidates, int n);

#endif
