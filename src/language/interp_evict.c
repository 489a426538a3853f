// interp_evict.c: what the trace holds, and getting back what it let go.
//
// Two things drop a stage's output. Greedy decoding keeps whole only the round being run and
// the round looked at (evict_round). A trace budget (RunSpec.trace_budget) keeps, besides the
// outputs small enough to keep always, the outputs read across blocks (the residual stream
// between layers, the encoder's memory, the masks: keep[]) and the block being run; when the
// outputs held pass the budget, the other outputs go, oldest first, the blocks read last
// going last, and the cheap to recompute before the dear (a product summing many terms: dear()).
// The buffer a dropped output leaves serves the recomputed one that needed the room, when their
// sizes agree (interp_make_room's `reuse`). A block (a segment) is a run of stages of one round,
// part and layer.
//
// An output that went is recomputed when read (interp.c's stage_data, on the plan of
// interp_plan_recompute): the stages it needs that went too, then it, in the pass's order, on
// the same kernels and the same inputs: the same bits as if it had been kept. This file plans;
// interp.c runs.
#include "interp_impl.h"
#include "rows.h"

#include <stdlib.h>

int interp_round_of(const Interp *it, int i) {
    if (!it->greedy || it->n_rounds == 0 || i < it->round_start[0] || i >= it->round_start[it->n_rounds]) return -1;
    int lo = 0, hi = it->n_rounds - 1;  // the last round whose start is <= i
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (it->round_start[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

bool interp_to_spares(Interp *it, int i) {
    if (it->n_spare == it->spare_cap) {
        const int cap = it->spare_cap ? 2 * it->spare_cap : 64;
        float **sp = realloc(it->spare, sizeof *sp * (size_t)cap);
        if (sp) it->spare = sp;
        size_t *ss = realloc(it->spare_size, sizeof *ss * (size_t)cap);
        if (ss) it->spare_size = ss;
        if (!sp || !ss) return false;
        it->spare_cap = cap;
    }
    it->spare[it->n_spare] = it->out[i], it->spare_size[it->n_spare++] = it->out_size[i];
    it->out[i] = NULL, it->out_size[i] = 0;
    return true;
}

void interp_evict_round(Interp *it, int k) {
    for (int i = it->round_start[k]; i < it->round_start[k + 1] && i < it->n_done; i++) {
        if (it->evicted[i] || !it->out[i] || it->out_size[i] <= INTERP_KEEP_FLOATS) continue;
        if (it->stage_read[i] == it->read_epoch) continue;  // a reader still holds it
        if (!interp_to_spares(it, i)) return;  // then the rest of round k stays whole
        it->evicted[i] = true;
    }
    if (it->viewed_round == k) it->viewed_round = -1;
}

static int n_stages(const Interp *it) {
    int n;
    expander_stages(it->x, &n);
    return n;
}

// Whether stage i is in the same block as stage i - 1.
static bool same_segment(const Interp *it, int i) {
    const StageWhere a = interp_stage_at(it, i - 1)->where, b = interp_stage_at(it, i)->where;
    return interp_round_of(it, i - 1) == interp_round_of(it, i) && a.part == b.part && a.has_layer == b.has_layer &&
           (!a.has_layer || a.layer == b.layer);
}

// Whether stage i may be held as its new rows alone (interp_new_rows_candidate), from its
// readers' answers, which come later in its round and so are set already (indexed backwards).
static bool new_rows_ok(const Interp *it, int i) {
    const int k = interp_round_of(it, i);
    const Stage *st = interp_stage_at(it, i);
    if (!it->cached || k < 1 || st->shape.ndim != 3) return false;
    switch (st->op) {
    case OP_SPLIT_HEADS: case OP_ROPE: case OP_MATMUL: case OP_SCALE: case OP_MASK: case OP_SOFTMAX: break;
    default: return false;
    }
    for (int c = i + 1; c < it->round_start[k + 1]; c++) {
        const Stage *r = interp_stage_at(it, c);
        for (int q = 0; q < r->n_in; q++) {
            if (r->in[q].kind != REF_STAGE || r->in[q].index != i) continue;
            const RowsReader how = r->in[q].offset != 0 ? ROWS_READS_WHOLE : rows_new_reader(r, q);
            if (how == ROWS_READS_WHOLE || (how == ROWS_READS_NEW_IF_NEW && !it->new_ok[c])) return false;
        }
    }
    return true;
}

void interp_index_stages(Interp *it) {
    const int n = n_stages(it);
    for (int i = it->n_indexed; i < n; i++) {
        const Stage *st = interp_stage_at(it, i);
        it->seg[i] = i == 0 ? 0 : it->seg[i - 1] + !same_segment(it, i);
        it->keep[i] = false;
        for (int q = 0; q < st->n_in; q++)
            if (st->in[q].kind == REF_STAGE && it->seg[st->in[q].index] != it->seg[i]) it->keep[st->in[q].index] = true;
    }
    for (int i = n - 1; i >= it->n_indexed; i--) it->new_ok[i] = new_rows_ok(it, i);  // readers first (a round comes whole)
    it->n_indexed = n;
}

// Floats stage i's buffer takes (give_buffer's `want`).
static size_t stage_floats(const Interp *it, int i) {
    const size_t need = (size_t)shape_numel(&interp_stage_at(it, i)->shape) * (size_t)it->B + 1;
    return interp_want_floats(it->greedy, need);
}

bool interp_new_rows_candidate(const Interp *it, int i) { return it->new_ok[i]; }

size_t interp_min_trace_bytes(const Interp *it) {
    size_t kept = 0, block = 0, most = 0;
    const int n = n_stages(it);
    const int from_round = it->n_rounds - (it->cached ? 2 : 1);  // the cached decoder keeps the round before too
    for (int i = 0; i < n; i++) {
        const int r = interp_round_of(it, i);
        if (r >= 0 && r < from_round) continue;  // greedy rounds before those are let go whole
        const size_t f = stage_floats(it, i);
        if (interp_new_rows_candidate(it, i))  // its new rows, held past its block (interp.c's new_rows)
            kept += interp_want_floats(true, interp_new_rows_floats(interp_stage_at(it, i)));
        if (it->keep[i] || f <= INTERP_KEEP_FLOATS) {
            kept += f;
            continue;
        }
        block = i > 0 && it->seg[i] == it->seg[i - 1] ? block + f : f;
        if (block > most) most = block;
    }
    return (kept + most) * sizeof(float);
}

// A product that sums many terms a value (a linear layer's 768 or 3072, attention's context over
// the positions) costs 2K flops a float to recompute; an attention map's scores (K = 64, the
// head's width) 128, and an element-wise op a few. Dear outputs go last, the cheap first, so a
// step back into a block recomputes its large cheap maps and keeps its products: GPT-2's c_proj,
// 3 MB, takes 4.8 GFLOP to compute again; its block's attention maps, 48 MB each, far less.
enum { DEAR_FLOPS_PER_FLOAT = 256 };
static bool dear(const Interp *it, int j) {
    const Stage *st = interp_stage_at(it, j);
    return op_flops(st) >= (double)DEAR_FLOPS_PER_FLOAT * (double)shape_numel(&st->shape);
}

static bool droppable(const Interp *it, int j) {
    return !it->evicted[j] && it->out[j] && it->out_size[j] > INTERP_KEEP_FLOATS && !it->keep[j] && !it->pinned[j];
}

// Stage j read in this epoch (a reader may still hold its pointer); block seg read in this
// epoch or the one before (likely to be read again).
static bool read_now(const Interp *it, int j) { return it->stage_read[j] == it->read_epoch; }
static bool read_lately(const Interp *it, int seg) { return it->seg_read[seg] + 1 >= it->read_epoch && it->seg_read[seg]; }

// A spare of exactly `reuse` floats moved first in the list (it serves the buffer coming);
// whether there is one.
static bool spare_for(Interp *it, size_t reuse) {
    for (int k = 0; reuse && k < it->n_spare; k++)
        if (it->spare_size[k] == reuse) {
            float *p = it->spare[k];
            it->spare[k] = it->spare[0], it->spare_size[k] = it->spare_size[0];
            it->spare[0] = p, it->spare_size[0] = reuse;
            return true;
        }
    return false;
}

// Drops output j: freed, or kept as the spare the buffer coming takes (`*reuse` floats, then 0).
static void drop(Interp *it, int j, size_t *need, size_t *reuse) {
    if (*reuse && it->out_size[j] == *reuse && interp_to_spares(it, j)) {
        *need -= *reuse, *reuse = 0;  // its pages are the process's already: no faults, no zeroing
        it->evicted[j] = true;
        return;
    }
    it->trace_floats -= it->out_size[j];
    free(it->out[j]);
    it->out[j] = NULL, it->out_size[j] = 0, it->evicted[j] = true;
}

void interp_make_room(Interp *it, size_t need, size_t reuse, int protect, bool reading) {
    if (!it->budget_floats || it->transient.last_reader) return;
    reuse = reuse <= need ? reuse : 0;
    const bool has = spare_for(it, reuse);  // then spare 0 serves it: the rest may go
    if (has) need -= reuse, reuse = 0;
    while (it->trace_floats + need > it->budget_floats && it->n_spare > (has ? 1 : 0)) {
        it->trace_floats -= it->spare_size[--it->n_spare];
        free(it->spare[it->n_spare]);
    }
    const int n = n_stages(it);
    const int running = it->n_done < n ? it->seg[it->n_done] : -1, shown = it->n_done > 0 ? it->seg[it->n_done - 1] : -1;
    int first_held = it->evict_from;  // stays when no pass scans
    // Pass 0 drops the cheap outputs of blocks not shown or read lately; pass 1 their dear ones
    // too; pass 2 any but the running block's, the protected one's and what a reader holds.
    for (int pass = 0; pass < 3 && it->trace_floats + need > it->budget_floats; pass++) {
        first_held = it->n_done;
        for (int j = it->evict_from; j < it->n_done; j++) {
            if (!droppable(it, j)) continue;
            const int s = it->seg[j];
            if (s == running || s == protect || (reading && read_now(it, j)) ||
                (pass < 2 && (s == shown || read_lately(it, s))) || (pass == 0 && dear(it, j)) ||
                it->trace_floats + need <= it->budget_floats) {
                if (j < first_held) first_held = j;
                continue;
            }
            drop(it, j, &need, &reuse);
        }
    }
    if (first_held > it->evict_from) it->evict_from = first_held;
}

size_t interp_one_buffer(Interp *it, int i) {
    const Stage *st = interp_stage_at(it, i);
    for (int q = 0; q < st->n_in; q++)
        if (st->in[q].kind == REF_STAGE && it->evicted[st->in[q].index]) return 0;  // more to recompute
    return stage_floats(it, i);
}

int interp_plan_recompute(Interp *it, int i) {
    int pending = 1, lo = i;
    it->mark[i] = true;
    for (int j = i; j >= 0 && pending > 0; j--) {  // inputs come before their readers
        if (!it->mark[j]) continue;
        pending--, lo = j;
        const Stage *st = interp_stage_at(it, j);
        for (int q = 0; q < st->n_in; q++) {
            const int x = st->in[q].index;
            if (st->in[q].kind == REF_STAGE && it->evicted[x] && !it->mark[x]) it->mark[x] = true, pending++;
        }
    }
    return lo;
}

size_t interp_recompute_floats(Interp *it, int i) {
    size_t floats = 0;
    for (int j = interp_plan_recompute(it, i); j <= i; j++)
        if (it->mark[j]) floats += stage_floats(it, j), it->mark[j] = false;
    return floats;
}

void interp_note_read(Interp *it, int i) { it->seg_read[it->seg[i]] = it->stage_read[i] = it->read_epoch; }

void interp_release_reads(const Interp *it) { ((Interp *)it)->read_epoch++; }

bool interp_budget_check(Interp *it, bool refuse, Err *e) {
    const size_t least = interp_min_trace_bytes(it), mb = 1024 * 1024;
    it->min_floats = least / sizeof(float);
    if (!it->budget_floats || it->budget_floats >= it->min_floats) return true;
    if (!refuse || !it->budget_given) return it->budget_floats = it->min_floats, true;
    const long long need = (long long)((least + mb - 1) / mb);
    return err_set(e, "a trace budget of %lld MB is too small for this pass: what it keeps and its largest block take "
                   "%lld MB (--trace-mb %lld is the smallest that works)",
                   (long long)(it->budget_floats * sizeof(float) / mb), need, need);
}

// Packing a weight once keeps a second copy of it, which makes the products faster (the pass run
// again, a greedy round of one row). Always without a budget and in a greedy round after the
// first (the cached decoder's rows, one at a time); otherwise while the packs fit in the budget
// beside the least the trace needs. Packed or not, the product has the same bits.
bool interp_pays_to_pack(const Interp *it, int i, const Stage *st) {
    if (!it->budget_floats || interp_round_of(it, i) > 0) return true;
    const Shape *in = &st->in_shape[0];
    const int K = in->ndim > 0 ? in->dim[in->ndim - 1] : 1, N = st->shape.ndim > 0 ? st->shape.dim[st->shape.ndim - 1] : 1;
    return it->packs->floats + sgemm_packed_floats(N, K) + it->min_floats <= it->budget_floats;
}

size_t interp_trace_budget(const Interp *it) { return it->budget_floats * sizeof(float); }

size_t interp_trace_bytes(const Interp *it) { return it->trace_floats * sizeof(float); }
