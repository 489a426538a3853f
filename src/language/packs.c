// packs.c: linear weights packed once (packs.h).
#include "packs.h"

#include <stdlib.h>

const float *packs_get(Packs *ps, const Model *m, const Stage *st) {
    const Ref *w = &st->in[1];
    if (st->op != OP_LINEAR || st->n_in < 2 || w->kind != REF_WEIGHT || st->in_shape[1].ndim != 2) return NULL;
    if (m->weights.entries[w->index].half) return NULL;  // held as half to take half the memory: never a float copy
    if (ps->of && ps->of != m) return NULL;  // another model's packs
    ps->of = m;
    const bool io = st->attr.w_in_out;  // W stored [K, N_all]: op(B) is W itself
    const int N = st->in_shape[1].dim[io ? 1 : 0], K = st->in_shape[1].dim[io ? 0 : 1];
    for (int k = 0; k < ps->n; k++)
        if (ps->p[k].entry == w->index && ps->p[k].offset == w->offset && ps->p[k].N == N && ps->p[k].K == K)
            return ps->p[k].data;
    if (ps->n == ps->cap) {
        const int cap = ps->cap ? 2 * ps->cap : 32;
        Pack *p = realloc(ps->p, sizeof *p * (size_t)cap);
        if (!p) return NULL;
        ps->p = p, ps->cap = cap;
    }
    const size_t floats = sgemm_packed_floats(N, K);
    float *data = sgemm_packed_new(N, K);
    if (!data) return NULL;
    sgemm_pack(data, m->weights.entries[w->index].data + w->offset, io ? st->attr.w_ld : K, N, K, !io);
    ps->p[ps->n++] = (Pack){w->index, w->offset, N, K, data};
    ps->floats += floats;
    return data;
}

void packs_free(Packs *ps) {
    for (int k = 0; k < ps->n; k++) free(ps->p[k].data);
    free(ps->p);
    *ps = (Packs){0};
}
