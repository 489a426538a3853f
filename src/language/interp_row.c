// interp_row.c: one row of a stage's output, without the whole (interp.h: interp_output_row).
//
// The decode view's bars read one row of the output head. At 1024 tokens of GPT-2 the head is
// [1024, 50257]: a 79 GFLOP product whole, 77 MFLOP a row. When the budget let the head go, the
// row is computed from its inputs' rows, as the cached decoder computes a new position's row
// (rows.c's last_row): the same kernels on one row, the same bits as the pass's row.
#include <stdlib.h>
#include <string.h>

#include "interp_impl.h"
#include "packs.h"
#include "rows.h"

enum { ROW_DEPTH = 8 };  // stages a row is followed back through before the whole is read instead

static size_t row_floats(const Shape *s) { return s->ndim > 0 && s->dim[0] > 0 ? (size_t)shape_numel(s) / (size_t)s->dim[0] : 0; }

static bool row_of(Interp *it, int i, int t, float *out, int depth);

// Input q of stage st for its row t: the input's own row t when it has the stage's rows (a
// stage's, computed if it went, or the ids'), else the whole input (a weight; a position table,
// at row t). *own: a buffer this call made, for the caller to free. NULL when it cannot be had.
static const float *input_row(Interp *it, const Stage *st, Stage *one, int q, int t, float **own, int depth) {
    const Ref *r = &st->in[q];
    const Shape *s = &st->in_shape[q];
    const bool rows = s->ndim > 0 && s->dim[0] == st->shape.dim[0];
    if (st->op == OP_ADD_POSITIONS && q == 1) {  // the table: position t's encoding
        const float *d = r->kind == REF_WEIGHT ? interp_weight(it, r->index) : NULL;
        return d ? d + r->offset + row_floats(&st->shape) * (size_t)t : NULL;
    }
    if (r->kind == REF_WEIGHT) {
        const float *d = interp_weight(it, r->index);
        return d ? d + r->offset : NULL;
    }
    if (!rows) return NULL;  // a stage or ids read whole by a row-wise op: not followed here
    one->in_shape[q].dim[0] = 1;
    if (r->kind == REF_INPUT) return it->ids[r->index] + r->offset + row_floats(s) * (size_t)t;
    if (r->offset != 0 || !(*own = malloc(sizeof(float) * (row_floats(s) + 1)))) return NULL;
    return row_of(it, r->index, t, *own, depth + 1) ? *own : NULL;
}

static bool row_of(Interp *it, int i, int t, float *out, int depth) {
    const Stage *st = interp_stage(it, i);
    const size_t X = row_floats(&st->shape);
    if (X == 0 || t < 0 || t >= st->shape.dim[0]) return false;
    if (!it->evicted[i] && it->out[i]) return memcpy(out, it->out[i] + X * (size_t)t, sizeof(float) * X), true;
    if (depth >= ROW_DEPTH || !rows_row_wise(st) || ablation_any(&it->ablation)) return false;
    Stage one = *st;
    one.shape.dim[0] = 1;
    const float *in[STAGE_MAX_IN] = {0};
    float *own[STAGE_MAX_IN] = {0};
    OpWeight w = {0};  // a weight held as half goes to its kernel as it is, as exec_stage gives it
    bool ok = true;
    for (int q = 0; q < st->n_in && ok; q++)
        if (!interp_weight_half(it, st, q, &w)) ok = (in[q] = input_row(it, st, &one, q, t, &own[q], depth)) != NULL;
    if (ok) {
        w.packed = it->pack && interp_pays_to_pack(it, i, st) ? packs_get(it->packs, it->m, st) : NULL;  // as the pass
        op_exec(&one, in, &w, out, 1);
    }
    for (int q = 0; q < st->n_in; q++) free(own[q]);
    return ok;
}

bool interp_output_row(const Interp *it, int i, int t, float *out) {
    if (i < 0 || i >= it->n_done || it->B != 1 || interp_stage(it, i)->shape.ndim < 1) return false;
    return row_of((Interp *)it, i, t, out, 0);
}

const float *interp_read_row(const Interp *it, int i, int b, size_t t, float *buf) {
    const Shape *s = &interp_stage(it, i)->shape;
    if (buf && b == 0 && s->ndim == 2 && t < (size_t)s->dim[0] && interp_output_row(it, i, (int)t, buf)) return buf;
    const float *all = interp_output(it, i);
    const size_t X = s->ndim > 0 ? (size_t)s->dim[s->ndim - 1] : 1;
    return all ? all + (size_t)b * (size_t)shape_numel(s) + X * t : NULL;
}
