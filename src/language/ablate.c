// ablate.c: pieces of the model switched off (see ablate.h).
#include "ablate.h"

#include <stdio.h>
#include <string.h>

bool ablation_any(const Ablation *a) { return a && (a->no_mask || a->no_positions || a->n_heads > 0); }

// A stage id without its greedy round: "step.3.decoder..." -> "decoder...".
static const char *roundless(const char *id) {
    if (strncmp(id, "step.", 5) != 0) return id;
    const char *dot = strchr(id + 5, '.');
    return dot ? dot + 1 : id;
}

bool ablation_toggle_head(Ablation *a, const Stage *st, int h) {
    const char *id = roundless(st->id);
    for (int i = 0; i < a->n_heads; i++)
        if (a->heads[i].head == h && !strcmp(a->heads[i].weights, id)) {
            a->heads[i] = a->heads[--a->n_heads];
            return true;
        }
    if (a->n_heads == ABLATE_MAX_HEADS) return false;
    AblatedHead *x = &a->heads[a->n_heads++];
    snprintf(x->weights, sizeof x->weights, "%s", id);
    x->head = h;
    return true;
}

void ablation_text(const Ablation *a, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = '\0';
    if (a->no_mask) k += (size_t)snprintf(buf + k, n - k, "no mask");
    if (a->no_positions && k < n) k += (size_t)snprintf(buf + k, n - k, "%sno positional encoding", k ? ", " : "");
    for (int i = 0; i < a->n_heads && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%shead %d of %s", k ? ", " : "", a->heads[i].head + 1, a->heads[i].weights);
}

void ablation_apply(const Ablation *a, const Stage *st, const float *const in[STAGE_MAX_IN], float *out, int B) {
    if (!ablation_any(a)) return;
    const size_t n = (size_t)shape_numel(&st->shape) * (size_t)B;
    if ((st->op == OP_MASK && a->no_mask) || (st->op == OP_ADD_POSITIONS && a->no_positions)) {
        memcpy(out, in[0], sizeof(float) * n);  // the same shape as its first input: passed through
        return;
    }
    if (st->role != ROLE_WEIGHTS || st->shape.ndim != 3) return;
    const size_t per = (size_t)st->shape.dim[1] * st->shape.dim[2], each = (size_t)shape_numel(&st->shape);
    for (int i = 0; i < a->n_heads; i++)
        if (a->heads[i].head < st->shape.dim[0] && !strcmp(a->heads[i].weights, roundless(st->id)))
            for (int b = 0; b < B; b++) memset(out + b * each + (size_t)a->heads[i].head * per, 0, sizeof(float) * per);
}
