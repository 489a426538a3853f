// pairs.h: the translation task's data: a file of sentence pairs, one a line, "SOURCE<TAB>TARGET",
// read as a Marian folder's tokens (each side by its own tokenizer, `</s>` last), split into a
// training part and a held-out part: the file's 10th, 20th, 30th, ... pair (non-empty line) is
// held out, as the text task holds out lines (so `awk 'NR % 10 == 0'` lists them).
//
// A pair either side of which is longer than the model takes (its source more than S tokens,
// its target more than T - 1 before its `</s>`) is left out of its part, and counted. Each failure is one
// message naming the file and the line: a line without a tab, a file with no pair that fits.
#ifndef STEPFORMER_PAIRS_H
#define STEPFORMER_PAIRS_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "tokenizer.h"

enum { PAIRS_HOLD_EVERY = 10 };

typedef struct PairData {
    int *ids;          // every pair's source ids, then its target ids (each `</s>` last)
    size_t *at;        // [n] where pair i's source starts in ids
    int *src_n, *tgt_n;  // [n] their lengths
    bool *held;        // [n] read as the file's 10th, 20th, ... pair (before the split)
    int n, n_train;    // pairs [0, n_train) are trained on, [n_train, n) held out
    int read;          // pairs the file holds (its non-empty lines)
    int skipped;       // pairs left out for their length
} PairData;

// Reads `path`: pairs whose source fits S tokens and whose target fits T - 1 (with its `</s>`).
bool pairs_load(PairData *d, const char *path, const Tokenizer *src, const Tokenizer *tgt, int S, int T, Err *e);
void pairs_free(PairData *d);

#endif
