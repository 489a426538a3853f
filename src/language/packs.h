// packs.h: the linear weights of a model packed once for the GEMM (sgemm_pack), for an
// interpreter whose model does not change while it lives (RunSpec.pack_weights). Each pack is
// made the first time a linear stage reads that weight (or that chunk of it) and kept.
#ifndef STEPFORMER_PACKS_H
#define STEPFORMER_PACKS_H

#include "model.h"
#include "program.h"

typedef struct {
    int entry;      // the weight: index into the model's weights
    size_t offset;  // floats into it where the [N, K] view starts (a chunk of in_proj)
    int N, K;       // N output features, K input features
    float *data;    // [sgemm_packed_floats(N, K)]
} Pack;

typedef struct {
    Pack *p;  // [n]
    int n, cap;
    size_t floats;     // held by every pack
    const Model *of;   // the model they were packed from (the first packs_get's)
} Packs;

// The packed W of linear stage st, made now if it is new; NULL when st's weight is not one of
// the model's tensors, m is not the model ps was packed from, or memory ran out (then the stage
// runs unpacked).
const float *packs_get(Packs *ps, const Model *m, const Stage *st);
void packs_free(Packs *ps);

#endif
