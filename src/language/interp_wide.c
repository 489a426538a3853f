// interp_wide.c: the weights a reader wants as float32 when the model holds them as the file
// stores them (2 bytes a number: model.h, model_place). The pass's linear layers and embeddings
// read such weights as they are (ops.h: OpWeight); anything else that reads one (a view showing a
// weight, the backward pass, a weight in another op) gets a widened copy, kept while it is read.
#include <stdlib.h>

#include "interp_impl.h"
#include "mem.h"

// Widened copies past this many floats let go of those not read since the last release.
enum { WIDE_KEEP_FLOATS = 64 << 20 };  // 256 MB

// Frees the copies not read in the current epoch until `need` more floats fit under the cap.
static void make_room(Interp *it, size_t need) {
    for (int w = 0; w < it->m->n_params && it->wide_floats + need > WIDE_KEEP_FLOATS; w++)
        if (it->wide[w] && it->wide_read[w] != it->read_epoch) {
            it->wide_floats -= (size_t)shape_numel(&it->m->weights.entries[w].shape);
            free(it->wide[w]), it->wide[w] = NULL;
        }
}

const float *interp_weight(Interp *it, int w) {
    const StEntry *en = &it->m->weights.entries[w];
    if (!en->half) return en->data;
    if (!it->wide && !(it->wide = calloc((size_t)it->m->n_params, sizeof *it->wide))) return NULL;
    if (!it->wide_read && !(it->wide_read = calloc((size_t)it->m->n_params, sizeof *it->wide_read))) return NULL;
    it->wide_read[w] = it->read_epoch;
    if (it->wide[w]) return it->wide[w];
    const size_t n = (size_t)shape_numel(&en->shape);
    make_room(it, n);
    if (!(it->wide[w] = malloc(sizeof(float) * (n ? n : 1)))) return NULL;
    mem_prefer_huge(it->wide[w], sizeof(float) * n);
    model_numbers(it->m, w, it->wide[w]);
    it->wide_floats += n;
    return it->wide[w];
}

bool interp_weight_half(const Interp *it, const Stage *st, int j, OpWeight *w) {
    const Ref *r = &st->in[j];
    if (r->kind != REF_WEIGHT || !op_takes_half(st, j)) return false;
    const StEntry *en = &it->m->weights.entries[r->index];
    if (!en->half) return false;
    w->half = en->half + r->offset;
    w->half_kind = st_half_kind(en->dtype);
    return true;
}

void interp_wide_free(Interp *it) {
    for (int w = 0; it->wide && w < it->m->n_params; w++) free(it->wide[w]);
    free(it->wide), free(it->wide_read);
    it->wide = NULL, it->wide_read = NULL, it->wide_floats = 0;
}
