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

typedef struct {
    char msg[512];
} Err;

// Formats the message into e (if e is not NULL) and returns false, so callers can
// write `return err_set(e, "...", ...);`.
bool err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Prefixes an existing message: "where: <old message>".
bool err_prefix(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
