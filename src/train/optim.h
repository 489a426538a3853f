// optim.h: Adam, and the warm-up learning-rate schedule of "Attention Is All You Need".
#ifndef STEPFORMER_OPTIM_H
#define STEPFORMER_OPTIM_H

#include <stddef.h>

#include "err.h"

typedef struct {
    float *m, *v;  // [n] first and second moment estimates
    size_t n;
    int t;         // updates made so far
    float beta1, beta2, eps;
} Adam;

bool adam_init(Adam *a, size_t n, float beta1, float beta2, float eps, Err *e);
void adam_free(Adam *a);
// One update, as torch.optim.Adam: p -= lr * m_hat / (sqrt(v_hat) + eps), bias-corrected.
void adam_update(Adam *a, float *params, const float *grads, float lr);

// lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), step counted from 1.
float noam_lr(int d_model, int step, int warmup, float factor);

#endif
