// half.h: numbers stored in 2 bytes, as model files keep them: IEEE half precision (F16) and
// bfloat16 (BF16). A model keeps its F16 and BF16 matrices so; the kernels that read them (the
// matrix product's packing, the embedding's lookup) widen them to float32 as they go, and every
// such value is a float32, so the result is the same bits as widening first.
#ifndef STEPFORMER_HALF_H
#define STEPFORMER_HALF_H

#include <stddef.h>
#include <stdint.h>

typedef enum { HALF_F16, HALF_BF16, HALF_COUNT } HalfKind;

// One number (exact; a NaN comes out quiet, as the vector instructions make it).
float f16_to_f32(uint16_t h);
float bf16_to_f32(uint16_t h);
float half_to_f32(uint16_t h, HalfKind kind);
// n numbers, h[i] to out[i]: the same bits as half_to_f32 on each.
void half_widen(float *out,         // [n]
                const uint16_t *h,  // [n]
                size_t n, HalfKind kind);

#endif
