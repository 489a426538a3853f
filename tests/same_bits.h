// same_bits.h: how many stages two passes of one program hold bit for bit the same (the
// cached decoder against the plain one). Each output is copied before the other is read, since
// reading a stage of an evicted round recomputes it into the pass's own buffers.
#ifndef STEPFORMER_SAME_BITS_H
#define STEPFORMER_SAME_BITS_H

#include <stdlib.h>
#include <string.h>

#include "interp.h"

// Stages of a whose id and bits equal b's stage of the same index; -1 when the lists differ in length.
static inline int same_bits_stages(const Interp *a, const Interp *b) {
    const int n = interp_n_stages(a);
    if (n != interp_n_stages(b)) return -1;
    int same = 0;
    for (int i = 0; i < n; i++) {
        const size_t bytes = sizeof(float) * (size_t)shape_numel(&interp_stage(a, i)->shape);
        float *x = malloc(bytes);
        if (!x) return -1;
        memcpy(x, interp_output(a, i), bytes);
        same += !strcmp(interp_stage(a, i)->id, interp_stage(b, i)->id) && !memcmp(x, interp_output(b, i), bytes);
        free(x);
    }
    return same;
}

#endif
