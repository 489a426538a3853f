// idset.h: the stage ids of one chunk of a pass (the prelude, one decoding round), so that a
// second stage of the same id is found in constant time however many stages there are.
#ifndef STEPFORMER_IDSET_H
#define STEPFORMER_IDSET_H

#include "ops.h"

typedef struct {
    int *slot;    // [mask + 1] a stage index, or -1 for an empty slot
    size_t mask;  // slot count - 1 (a power of two minus one)
    int count;
} IdSet;

// Records stages[index] (whose id is set). Returns the index of an earlier recorded stage with
// the same id, -1 if there is none, or -2 when memory runs out.
int idset_add(IdSet *s, const Stage *stages, int index);
void idset_clear(IdSet *s);  // forgets every id (the next chunk starts)
void idset_free(IdSet *s);

#endif
