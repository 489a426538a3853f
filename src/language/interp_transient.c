// interp_transient.c: a pass that keeps only what a later reader needs (interp_transient.h).
// A transient stage's buffer goes, once the last stage reading it has run, on top of a pool;
// the next transient stage takes the buffer released last that is large enough, the one most
// likely still in the cache, so a training pass writes much of its trace into cache lines it
// has just read instead of into lines memory must first bring in.
#include "interp_transient.h"

#include <stdlib.h>
#include <string.h>

bool transient_plan(Transient *t, const Stage *stages, int n, const bool *transient, Err *e) {
    int *last = malloc(sizeof *last * (size_t)(n > 0 ? n : 1));
    float **pool = calloc((size_t)(n > 0 ? n : 1), sizeof *pool);
    size_t *pool_size = calloc((size_t)(n > 0 ? n : 1), sizeof *pool_size);
    if (!last || !pool || !pool_size) {
        free(last), free(pool), free(pool_size);
        return err_code(e, ERR_MEMORY, "out of memory");
    }
    for (int i = 0; i < n; i++) last[i] = -1;
    for (int c = 0; c < n; c++) {  // a transient stage's last reader; one no stage reads stays
        const Stage *st = &stages[c];
        for (int j = 0; j < st->n_in; j++)
            if (st->in[j].kind == REF_STAGE && transient[st->in[j].index]) last[st->in[j].index] = c;
    }
    transient_free(t);
    t->last_reader = last, t->pool = pool, t->pool_size = pool_size, t->n_pool = 0;
    return true;
}

bool transient_take(Transient *t, int i, size_t need, float **out, size_t *out_size) {
    if (!t->last_reader || t->last_reader[i] < 0 || *out) return false;
    for (int q = t->n_pool - 1; q >= 0; q--) {
        if (t->pool_size[q] < need) continue;
        *out = t->pool[q], *out_size = t->pool_size[q];
        const size_t above = (size_t)(t->n_pool - q - 1);
        memmove(t->pool + q, t->pool + q + 1, sizeof *t->pool * above);
        memmove(t->pool_size + q, t->pool_size + q + 1, sizeof *t->pool_size * above);
        t->n_pool--;
        return true;
    }
    return false;
}

void transient_release(Transient *t, int c, const Stage *st, float **out, size_t *out_size) {
    if (!t->last_reader) return;
    for (int j = 0; j < st->n_in; j++) {
        const int q = st->in[j].index;
        if (st->in[j].kind != REF_STAGE || t->last_reader[q] != c || !out[q]) continue;
        t->pool[t->n_pool] = out[q], t->pool_size[t->n_pool++] = out_size[q];
        out[q] = NULL, out_size[q] = 0;  // held by the pool: still counted in the trace's floats
    }
}

bool transient_gone(const Transient *t, int i) { return t->last_reader && t->last_reader[i] >= 0; }

void transient_free(Transient *t) {
    for (int q = 0; q < t->n_pool; q++) free(t->pool[q]);
    free(t->last_reader), free(t->pool), free(t->pool_size);
    t->last_reader = NULL, t->pool = NULL, t->pool_size = NULL, t->n_pool = 0;
}
