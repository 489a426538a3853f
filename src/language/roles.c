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

// Marks the steps before the softmax (stage index w): mask, then scale, then the matmul.
static void mark_steps(Stage *softmax, Stage *stages, int n, int w) {
    static const struct {
        Op op;
        StageRole role;
    } steps[] = {{OP_MASK, ROLE_MASKED}, {OP_SCALE, ROLE_SCALED}, {OP_MATMUL, ROLE_SCORES}};
    Stage *s = source_of(softmax, stages, n);
    for (size_t k = 0; k < sizeof steps / sizeof steps[0] && s; k++) {
        if (s->op != steps[k].op) continue;  // this step is not there: try the next kind
        s->role = steps[k].role, s->att_weights = w;
        if (steps[k].role == ROLE_SCORES) break;
        s = source_of(s, stages, n);
    }
}

void stage_describe(Stage *st, Stage *stages, int n, const Stmt *s) {
    st->where = stage_where(st);
    st->role = ROLE_NONE, st->att_weights = -1;
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
