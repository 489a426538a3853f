// back_mistakes.c: the wrong formulas learners write (see back_mistakes.h).
#include "back_mistakes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_backward.h"

const char *const backward_mistake_names[MISTAKE_COUNT] = {"none", "softmax-no-sum", "layernorm-no-mean",
                                                           "dw-no-transpose"};
const char *const backward_mistake_text[MISTAKE_COUNT] = {
    "the right backward pass",
    "a learner's softmax backward: dx = p * g, without the - sum_k p_k g_k term",
    "a learner's LayerNorm backward: dx = gain * g / sigma, without the mean terms",
    "a learner's linear backward: dW = X^T g, not transposed to g^T X"};
_Static_assert(sizeof backward_mistake_names / sizeof *backward_mistake_names == MISTAKE_COUNT, "a name each");

bool backward_mistake_lookup(const char *name, BackwardMistake *out) {
    for (int i = 0; i < MISTAKE_COUNT; i++)
        if (!strcmp(name, backward_mistake_names[i])) return *out = (BackwardMistake)i, true;
    return false;
}

bool backward_mistake_applies(BackwardMistake m, const Stage *st) {
    return (m == MISTAKE_SOFTMAX_NO_SUM && st->op == OP_SOFTMAX) || (m == MISTAKE_LAYERNORM_NO_MEAN && st->op == OP_LAYER_NORM) ||
           (m == MISTAKE_DW_NO_TRANSPOSE && st->op == OP_LINEAR);
}

static void softmax_no_sum(float *dx, const float *dy, const float *y, size_t n, bool fresh) {
    for (size_t i = 0; i < n; i++) dx[i] = (fresh ? 0.0f : dx[i]) + y[i] * dy[i];
}

static void layernorm_no_mean(float *dx, const float *dy, const float *x, const float *gain, int T, int C, float eps,
                              LayerNormForm form, bool fresh) {
    for (int t = 0; t < T; t++) {
        const float *xr = x + (size_t)t * C;
        double mean = 0, var = 0;
        for (int c = 0; c < C; c++) mean += xr[c];
        mean /= C;
        for (int c = 0; c < C; c++) var += (xr[c] - mean) * (xr[c] - mean);
        const double sigma = form == LN_TORCH ? sqrt(var / C + eps) : sqrt(var / (C - 1)) + eps;
        for (int c = 0; c < C; c++) {
            float *o = dx + (size_t)t * C + c;
            *o = (fresh ? 0.0f : *o) + (float)(gain[c] * dy[(size_t)t * C + c] / sigma);
        }
    }
}

bool mistake_backward(BackwardMistake m, const Stage *st, float *const dst[STAGE_MAX_IN], const bool fresh[STAGE_MAX_IN],
                      const float *dy, const float *const in[STAGE_MAX_IN], const float *y, int B) {
    const Shape *s0 = &st->in_shape[0];
    const int rows = B * (int)shape_rows(s0), C = (int)shape_last(s0);
    switch (backward_mistake_applies(m, st) ? st->op : OP_COUNT) {
    case OP_SOFTMAX:
        if (dst[0]) softmax_no_sum(dst[0], dy, y, (size_t)rows * C, fresh[0]);
        return true;
    case OP_LAYER_NORM:  // the gain's and bias's gradients as they should be, dx wrong
        layernorm_backward(NULL, dst[1], dst[2], dy, in[0], in[1], rows, C, st->attr.eps, st->attr.ln, false);
        if (dst[0]) layernorm_no_mean(dst[0], dy, in[0], in[1], rows, C, st->attr.eps, st->attr.ln, fresh[0]);
        return true;
    case OP_LINEAR: {  // dX and db right; dW computed right, then laid out as X^T g
        const int O = st->in_shape[1].dim[0];
        float *w = dst[1] ? calloc((size_t)O * C, sizeof *w) : NULL;
        if (dst[1] && !w) return false;
        linear_backward(dst[0], w, st->attr.has_bias ? dst[2] : NULL, dy, in[0], in[1], rows, C, O, fresh[0]);
        for (int o = 0; w && o < O; o++)
            for (int i = 0; i < C; i++) dst[1][(size_t)i * O + o] += w[(size_t)o * C + i];
        free(w);
        return true;
    }
    default: return false;
    }
}
