// interp_transient.c: a pass that keeps only what a later reader needs (interp_set_transient).
// A transient stage's buffer goes, once the last stage reading it has run, on top of a pool;
// the next transient stage takes the buffer released last that is large enough, the one most
// likely still in the cache, so a training pass writes much of its trace into cache lines it
// has just read instead of into lines memory must first bring in.
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"

bool interp_set_transient(Interp *it, const bool *transient, Err *e) {
    if (it->greedy) return err_set(e, "a greedy pass keeps every round's outputs; only a teacher-forced one can drop some");
    const int n = interp_n_stages(it);
    int *last = malloc(sizeof *last * (size_t)(n > 0 ? n : 1));
    float **pool = calloc((size_t)(n > 0 ? n : 1), sizeof *pool);
    size_t *pool_size = calloc((size_t)(n > 0 ? n : 1), sizeof *pool_size);
    if (!last || !pool || !pool_size) {
        free(last), free(pool), free(pool_size);
        return err_code(e, ERR_MEMORY, "out of memory");
    }
    for (int i = 0; i < n; i++) last[i] = -1;
    for (int c = 0; c < n; c++) {  // a transient stage's last reader; one no stage reads stays
        const Stage *st = interp_stage(it, c);
        for (int j = 0; j < st->n_in; j++)
            if (st->in[j].kind == REF_STAGE && transient[st->in[j].index]) last[st->in[j].index] = c;
    }
    transient_free(it);
    it->last_reader = last, it->pool = pool, it->pool_size = pool_size, it->n_pool = 0;
    return true;
}

bool transient_take(Interp *it, int i, size_t need) {
    if (!it->last_reader || it->last_reader[i] < 0 || it->out[i]) return false;
    for (int q = it->n_pool - 1; q >= 0; q--) {
        if (it->pool_size[q] < need) continue;
        it->out[i] = it->pool[q], it->out_size[i] = it->pool_size[q];
        const size_t above = (size_t)(it->n_pool - q - 1);
        memmove(it->pool + q, it->pool + q + 1, sizeof *it->pool * above);
        memmove(it->pool_size + q, it->pool_size + q + 1, sizeof *it->pool_size * above);
        it->n_pool--;
        return true;
    }
    return false;
}

void transient_release(Interp *it, int c) {
    if (!it->last_reader) return;
    const Stage *st = interp_stage(it, c);
    for (int j = 0; j < st->n_in; j++) {
        const int q = st->in[j].index;
        if (st->in[j].kind != REF_STAGE || it->last_reader[q] != c || !it->out[q]) continue;
        it->pool[it->n_pool] = it->out[q], it->pool_size[it->n_pool++] = it->out_size[q];
        it->out[q] = NULL, it->out_size[q] = 0;  // held by the pool: still counted in trace_floats
    }
}

bool transient_gone(const Interp *it, int i) { return it->last_reader && it->last_reader[i] >= 0; }

void transient_free(Interp *it) {
    for (int q = 0; q < it->n_pool; q++) free(it->pool[q]);
    free(it->last_reader), free(it->pool), free(it->pool_size);
    it->last_reader = NULL, it->pool = NULL, it->pool_size = NULL, it->n_pool = 0;
}
