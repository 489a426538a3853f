// optim.c: Adam and the paper's learning-rate schedule (see optim.h).
#include "optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"

bool adam_init(Adam *a, size_t n, float beta1, float beta2, float eps, Err *e) {
    memset(a, 0, sizeof *a);
    a->m = calloc(n ? n : 1, sizeof(float));
    a->v = calloc(n ? n : 1, sizeof(float));
    if (!a->m || !a->v) {
        adam_free(a);
        return err_set(e, "out of memory for the optimizer (%zu parameters)", n);
    }
    a->n = n, a->beta1 = beta1, a->beta2 = beta2, a->eps = eps;
    return true;
}

void adam_free(Adam *a) {
    free(a->m);
    free(a->v);
    memset(a, 0, sizeof *a);
}

void adam_update(Adam *a, float *p, const float *g, float lr) {
    a->t++;
    const float b1 = a->beta1, b2 = a->beta2, eps = a->eps;
    // The same operations as torch.optim.Adam (single-tensor path), in float32.
    const float bc1 = 1.0f - powf(b1, (float)a->t), bc2 = 1.0f - powf(b2, (float)a->t);
    const float step = lr / bc1, root_bc2 = sqrtf(bc2);
    float *m = a->m, *v = a->v;
    const long n = (long)a->n;
    PAR_LOOP(n > 65536, "omp parallel for schedule(static)",
        for (long i = 0; i < n; i++) {
            m[i] = m[i] * b1 + g[i] * (1.0f - b1);
            v[i] = v[i] * b2 + g[i] * g[i] * (1.0f - b2);
            p[i] -= step * m[i] / (sqrtf(v[i]) / root_bc2 + eps);
        }
    );
}

float noam_lr(int d_model, int step, int warmup, float factor) {
    if (step < 1) step = 1;
    if (warmup < 1) warmup = 1;
    const double s = step;
    return (float)(factor / sqrt((double)d_model) * fmin(1.0 / sqrt(s), s / pow(warmup, 1.5)));
}
