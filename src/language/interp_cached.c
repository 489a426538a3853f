// interp_cached.c: the cached decoder's side of running a stage (rows.h): what a stage's inputs
// are next to last round's, a stage kept as its new rows alone, last round's buffer handed on to
// be grown in place. interp.c's exec_stage runs a stage with these.
#include <stdlib.h>

#include "interp_impl.h"
#include "rows.h"

// What input j of stage i (in the round starting at `first`) is, next to last round's.
static RowsKind input_kind(const Interp *it, const Ref *r, int first) {
    switch (r->kind) {
    case REF_WEIGHT: return ROWS_SAME;
    case REF_INPUT: return r->index == it->tgt ? ROWS_GROWN : ROWS_SAME;  // the target: a token more
    case REF_STAGE: return r->index < first ? ROWS_SAME : it->kind[r->index];  // the prelude is fixed
    }
    return ROWS_WHOLE;
}

// What stage i's inputs are next to last round's (kin), for stage i of a cached round whose
// twin last round is `from`; returns the ROWS_NEW kind when stage i computes only its new rows
// (rows_new_kind), else ROWS_WHOLE. An input held as new rows that i cannot take so (it
// computes whole) is given whole: kin says ROWS_WHOLE.
RowsKind interp_cached_kinds(const Interp *it, int i, int from, RowsKind kin[STAGE_MAX_IN]) {
    const Stage *st = interp_stage_at(it, i);
    const Shape *ps = &interp_stage_at(it, from)->shape;
    const int first = it->round_start[interp_round_of(it, i)];
    for (int q = 0; q < st->n_in; q++) {
        kin[q] = input_kind(it, &st->in[q], first);
        if (rows_is_new(kin[q]) && (st->in[q].offset != 0 || !it->newrow[st->in[q].index])) kin[q] = ROWS_WHOLE;
    }
    RowsKind kind = rows_new_kind(st, kin, ps);
    if (kind != ROWS_WHOLE && !interp_new_rows_candidate(it, i)) kind = ROWS_WHOLE;
    const bool takes = kind != ROWS_WHOLE || rows_reads_new(st, kin, ps);
    for (int q = 0; q < st->n_in && !takes; q++)
        if (rows_is_new(kin[q])) kin[q] = ROWS_WHOLE;
    return kind;
}

// The floats interp_new_rows adds to the trace for stage i (twin `from`): none when the buffer it takes
// holds enough.
size_t interp_new_rows_growth(const Interp *it, int i, int from) {
    const size_t need = interp_new_rows_floats(interp_stage_at(it, i));
    const size_t have = it->newrow[i] ? it->newrow_size[i] : it->newrow_size[from];
    return have >= need ? 0 : interp_want_floats(true, need) - have;
}

// Stage i of a cached round, its new rows alone (kind, a ROWS_NEW kind), into newrow[i]: last
// round's twin's buffer when i has none. Its output counts as evicted: a reader has it whole.
bool interp_new_rows(Interp *it, int i, int from, const float *const in[STAGE_MAX_IN],
                     const RowsKind kin[STAGE_MAX_IN], RowsKind kind, Err *e) {
    const Stage *st = interp_stage_at(it, i);
    const size_t need = interp_new_rows_floats(st);
    if (!it->newrow[i] && it->newrow[from]) {
        it->newrow[i] = it->newrow[from], it->newrow_size[i] = it->newrow_size[from];
        it->newrow[from] = NULL, it->newrow_size[from] = 0;
    }
    if (it->newrow_size[i] < need) {
        const size_t want = interp_want_floats(true, need);
        float *grown = realloc(it->newrow[i], sizeof(float) * want);
        if (!grown) return err_code(e, ERR_MEMORY, "%s: out of memory for its new rows", st->id);
        it->trace_floats += want - it->newrow_size[i];
        it->newrow[i] = grown, it->newrow_size[i] = want;
    }
    if (it->out[i] && !interp_to_spares(it, i)) {  // a buffer from an earlier run
        it->trace_floats -= it->out_size[i];
        free(it->out[i]);
        it->out[i] = NULL, it->out_size[i] = 0;
    }
    rows_exec_new(st, in, kin, it->newrow[i]);
    it->kind[i] = kind, it->evicted[i] = true;
    return true;
}

// The same stage as i in the round before, when i can be computed from it (rows.h); -1 when
// it cannot (the first round, a batch, an ablation, rounds that differ): then i runs whole.
int interp_cached_from(const Interp *it, int i) {
    const int k = interp_round_of(it, i);
    if (k < 1 || it->B != 1 || ablation_any(&it->ablation)) return -1;
    const int j = i - (it->round_start[k] - it->round_start[k - 1]);
    const Stage *st = interp_stage_at(it, i), *was = interp_stage_at(it, j);
    return was->op == st->op && was->line == st->line && was->n_in == st->n_in ? j : -1;
}

// Hands stage j's buffer (the same stage, last round) to stage i, which then grows last
// round's rows in place instead of copying them (give_buffer lengthens it if it is short); j
// counts as evicted (recomputed on demand). False, handing nothing, when j's round is the one a
// reader looks at, its output is small enough to keep in every round, or it is already evicted.
bool interp_take_output(Interp *it, int i, int j) {
    if (it->evicted[j] || interp_round_of(it, j) == it->viewed_round || it->out_size[j] <= INTERP_KEEP_FLOATS || it->pinned[j])
        return false;
    if (it->out[i] && !interp_to_spares(it, i)) return false;  // a buffer from an earlier run: a spare now
    it->out[i] = it->out[j], it->out_size[i] = it->out_size[j];
    it->out[j] = NULL, it->out_size[j] = 0, it->evicted[j] = true;
    return true;
}
