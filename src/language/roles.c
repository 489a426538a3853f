// roles.c: what a stage is, settled once when the program is expanded, so that the views read
// fields instead of parsing ids every frame.
//
// An attention map is recognised by what it is, not by its name: a softmax whose rows are
// queries and whose columns are keys (its last two axes are token axes), with or without a
// leading head axis. Walking back from it through its first inputs gives the steps that made
// it: a mask, a scale, and the matmul of queries and keys (each optional but the matmul).
#include <stdio.h>
#include <string.h>

#include "program.h"

const char *const role_names[ROLE_COUNT] = {"", "scores", "scaled", "masked", "weights", "context"};

// A softmax over [heads, queries, keys] or [queries, keys].
static bool attention_softmax(const Stage *st) {
    const int nd = st->shape.ndim;
    if (st->op != OP_SOFTMAX || nd < 2 || nd > 3) return false;
    if (nd == 3 && st->axes.slot[0] != AXIS_HEADS) return false;
    return st->axes.slot[nd - 2] >= 0 && st->axes.slot[nd - 1] >= 0;
}

// The stage feeding `st` through its first input, when it is an earlier stage of this list.
static Stage *source_of(const Stage *st, Stage *stages, int n) {
    return st->n_in > 0 && st->in[0].kind == REF_STAGE && st->in[0].index < n ? &stages[st->in[0].index] : NULL;
}

// How many key heads the query heads of `scores` (queries times keys) share: the keys' head axis
// before a repeat along it (grouped-query attention; *tiled when the repeat tiles rather than
// interleaves), 1 for keys without a head axis or with one head that every query head reads
// (multi-query attention, by matmul's broadcasting), else as many as the query heads.
static void key_heads(const Stage *scores, Stage *stages, int n, int *kv, bool *tiled) {
    const Shape *k = &scores->in_shape[1];
    *kv = k->ndim == 3 ? k->dim[0] : 1, *tiled = false;
    const Stage *s = scores->in[1].kind == REF_STAGE && scores->in[1].index < n ? &stages[scores->in[1].index] : NULL;
    if (s && s->op == OP_TRANSPOSE) s = source_of(s, stages, n);
    if (s && s->op == OP_REPEAT && s->attr.axis == 0 && s->shape.ndim == 3 && s->shape.dim[0] == *kv)
        *kv = s->in_shape[0].dim[0], *tiled = !s->attr.interleave;
}

// Marks the steps before the softmax (stage index w): mask, then scale, then the matmul; each,
// and the softmax, learns how many key heads the query heads share.
static void mark_steps(Stage *softmax, Stage *stages, int n, int w) {
    static const struct {
        Op op;
        StageRole role;
    } steps[] = {{OP_MASK, ROLE_MASKED}, {OP_SCALE, ROLE_SCALED}, {OP_MATMUL, ROLE_SCORES}};
    Stage *marked[4] = {softmax};
    int n_marked = 1;
    Stage *s = source_of(softmax, stages, n);
    const int nd = softmax->shape.ndim;
    int kv = nd == 3 ? softmax->shape.dim[0] : 1;
    bool tiled = false;
    for (size_t k = 0; k < sizeof steps / sizeof steps[0] && s; k++) {
        if (s->op != steps[k].op) continue;  // this step is not there: try the next kind
        s->role = steps[k].role, s->att_weights = w;
        marked[n_marked++] = s;
        if (steps[k].role == ROLE_SCORES) {
            key_heads(s, stages, n, &kv, &tiled);
            break;
        }
        s = source_of(s, stages, n);
    }
    for (int i = 0; i < n_marked; i++) marked[i]->kv_heads = kv, marked[i]->kv_tiled = tiled;
}

int stage_kv_head(const Stage *st, int h) {
    const int H = st->shape.ndim == 3 ? st->shape.dim[0] : 1;
    if (st->kv_heads < 1 || st->kv_heads >= H) return h;
    return st->kv_tiled ? h % st->kv_heads : h / (H / st->kv_heads);
}

void stage_describe(Stage *st, Stage *stages, int n, const Stmt *s) {
    st->where = stage_where(st);
    st->role = ROLE_NONE, st->att_weights = -1, st->kv_heads = 0, st->kv_tiled = false;
    for (int i = 0; s && i < s->n_args; i++)
        if (s->args[i].kind == ARG_KEYWORD && !strcmp(s->args[i].key, "by"))
            snprintf(st->attr_text, sizeof st->attr_text, "%s", s->args[i].text);
    const Stage *w = source_of(st, stages, n);
    if (st->op == OP_MATMUL && w && w->role == ROLE_WEIGHTS) {  // the weights times the values
        st->role = ROLE_CONTEXT, st->att_weights = st->in[0].index;
        return;
    }
    if (!attention_softmax(st)) return;
    st->role = ROLE_WEIGHTS, st->att_weights = n;
    mark_steps(st, stages, n, n);
}
