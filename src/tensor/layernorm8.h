// layernorm8.h: LayerNorm's row sums for eight rows at once, a row per lane of an AVX2 vector
// (private to the tensor kernels). Each lane adds its row's terms in column order, the very
// chain the scalar loops of kernels.c and kernels_backward.c add for that row, with the same
// operations (no fused multiply-adds), so the bits are the same: the columns are brought into
// lanes by transposing eight by eight in registers. Used when ln8_ok(C).
#ifndef STEPFORMER_LAYERNORM8_H
#define STEPFORMER_LAYERNORM8_H

#include <stdbool.h>

// AVX2 is there and the rows are whole blocks of eight columns.
bool ln8_ok(int C);
// Each row's mean, and the sum of its squared deviations from it.
void ln8_moments(float mean[8], float ss[8],
                 const float *x,  // [8, C]
                 int C);
// sum[r] = Σ_c dy g (x - mean[r]), each term ((dy g) (x - mean[r])).
void ln8_dot(float sum[8],
             const float *dy, const float *x,  // [8, C]
             const float *g,                   // [C]
             const float mean[8], int C);
// mean_dd[r] = Σ_c inv[r] (dy g - k[r] (x - mean[r])).
void ln8_mean_dd(float mean_dd[8],
                 const float *dy, const float *x,  // [8, C]
                 const float *g,                   // [C]
                 const float mean[8], const float inv[8], const float k[8], int C);

#endif
