// back_mistakes.h: learners' classic mistakes in the backward pass, for the gradient-check
// lesson to catch: the backward pass run with one wrong formula in place of the right one.
//   softmax-no-sum:     dx = p * g, without the "- sum_k p_k g_k" term
//   layernorm-no-mean:  dx = gain * g / sigma, without the two mean terms
//   dw-no-transpose:    dW = X^T g ([I, O]) written where g^T X ([O, I]) belongs
#ifndef STEPFORMER_BACK_MISTAKES_H
#define STEPFORMER_BACK_MISTAKES_H

#include "interp.h"

typedef enum {
    MISTAKE_NONE,
    MISTAKE_SOFTMAX_NO_SUM,
    MISTAKE_LAYERNORM_NO_MEAN,
    MISTAKE_DW_NO_TRANSPOSE,
    MISTAKE_COUNT
} BackwardMistake;

extern const char *const backward_mistake_names[MISTAKE_COUNT];  // "softmax-no-sum", ...
extern const char *const backward_mistake_text[MISTAKE_COUNT];   // what it does, one line
bool backward_mistake_lookup(const char *name, BackwardMistake *out);
// Whether mistake m changes the backward pass of stage st's op.
bool backward_mistake_applies(BackwardMistake m, const Stage *st);

// Stage st's backward pass with mistake m in place of the right formula (the other gradients of
// the stage as they should be): dy [B, out], in[j] its inputs, y its output, dst/fresh as in
// backward.c. Allocates a scratch matrix for dw-no-transpose (false if it cannot).
bool mistake_backward(BackwardMistake m, const Stage *st, float *const dst[STAGE_MAX_IN], const bool fresh[STAGE_MAX_IN],
                      const float *dy, const float *const in[STAGE_MAX_IN], const float *y, int B);

#endif
