// interp.c: runs stages into the trace, drives greedy decoding, re-runs after new input.
#include "interp.h"
#include "bounds.h"
#include "mem.h"
#include "interp_impl.h"
#include "par.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

const char *const stop_names[STOP_COUNT] = {"none", "eos", "max_len", "positions"};

static bool grow_outputs(Interp *it) {
    int n;
    expander_stages(it->x, &n);
    if (n <= it->out_cap) return true;
    int cap = n * 2;
    float **no = realloc(it->out, sizeof *no * (size_t)cap);
    if (no) it->out = no;
    size_t *ns = realloc(it->out_size, sizeof *ns * (size_t)cap);
    if (ns) it->out_size = ns;
    bool *ev = realloc(it->evicted, sizeof *ev * (size_t)cap);
    if (ev) it->evicted = ev;
    RowsKind *kd = realloc(it->kind, sizeof *kd * (size_t)cap);
    if (kd) it->kind = kd;
    float **nr = realloc(it->newrow, sizeof *nr * (size_t)cap);
    if (nr) it->newrow = nr;
    size_t *nz = realloc(it->newrow_size, sizeof *nz * (size_t)cap);
    if (nz) it->newrow_size = nz;
    int *sg = realloc(it->seg, sizeof *sg * (size_t)cap);
    if (sg) it->seg = sg;
    bool *kp = realloc(it->keep, sizeof *kp * (size_t)cap), *pn = realloc(it->pinned, sizeof *pn * (size_t)cap);
    if (kp) it->keep = kp;
    if (pn) it->pinned = pn;
    bool *mk = realloc(it->mark, sizeof *mk * (size_t)cap), *ok = realloc(it->new_ok, sizeof *ok * (size_t)cap);
    if (mk) it->mark = mk;
    if (ok) it->new_ok = ok;
    unsigned *sr = realloc(it->seg_read, sizeof *sr * (size_t)cap), *tr = realloc(it->stage_read, sizeof *tr * (size_t)cap);
    if (sr) it->seg_read = sr;
    if (tr) it->stage_read = tr;
    if (!no || !ns || !ev || !kd || !nr || !nz || !sg || !kp || !pn || !mk || !ok || !sr || !tr) return false;
    memset(nr + it->out_cap, 0, sizeof *nr * (size_t)(cap - it->out_cap));
    memset(nz + it->out_cap, 0, sizeof *nz * (size_t)(cap - it->out_cap));
    for (int i = it->out_cap; i < cap; i++) kd[i] = ROWS_WHOLE;
    memset(no + it->out_cap, 0, sizeof *no * (size_t)(cap - it->out_cap));
    memset(ns + it->out_cap, 0, sizeof *ns * (size_t)(cap - it->out_cap));
    memset(ev + it->out_cap, 0, sizeof *ev * (size_t)(cap - it->out_cap));
    memset(pn + it->out_cap, 0, sizeof *pn * (size_t)(cap - it->out_cap));
    memset(mk + it->out_cap, 0, sizeof *mk * (size_t)(cap - it->out_cap));
    memset(sr + it->out_cap, 0, sizeof *sr * (size_t)(cap - it->out_cap));
    memset(tr + it->out_cap, 0, sizeof *tr * (size_t)(cap - it->out_cap));
    it->out_cap = cap;
    return true;
}

// Room and an index (interp_evict.c) for the stages expanded since the last call.
static bool take_new_stages(Interp *it) {
    if (!grow_outputs(it)) return false;
    interp_index_stages(it);
    return true;
}

// Builds the stage list from scratch for the current inputs: everything before the decode
// loop, then (teacher forcing) the loop and what follows, or (greedy) the first round. `refuse`:
// a budget the user gave that cannot hold the pass is an error (else it is raised).
static bool expand_all(Interp *it, bool refuse, Err *e) {
    expander_free(it->x);
    it->x = expander_new(it->p, it->m);
    if (!it->x) return err_code(e, ERR_MEMORY, "out of memory");
    for (int s = 0; s < it->p->n_inputs; s++)
        expander_set_input(it->x, s, it->len[s], s == it->tgt ? it->tgt_off : 0);
    it->round = 0;
    it->phase = PH_FINISHED;
    it->n_rounds = 0, it->viewed_round = -1;
    it->n_indexed = 0, it->evict_from = 0, it->read_epoch++;
    bool ok = expand_prelude(it->x, e);
    if (ok && it->p->decode < it->p->n) {
        if (it->greedy) it->round_start[0] = interp_n_stages(it);
        ok = expand_decode(it->x, it->greedy, 0, &it->next_stage, e);
        if (it->greedy) it->phase = PH_ROUND, it->round_start[1] = interp_n_stages(it), it->n_rounds = 1;
        else ok = ok && expand_rest(it->x, e);
    }
    if (ok && !take_new_stages(it)) ok = err_code(e, ERR_MEMORY, "out of memory");
    for (int i = it->n_done; ok && i < it->out_cap; i++) it->evicted[i] = false, it->pinned[i] = false;  // they run again
    return ok && interp_budget_check(it, refuse, e);
}

Interp *interp_new(const Program *p, const Model *m, const RunSpec *spec, Err *e) {
    Interp *it = calloc(1, sizeof *it);
    if (!it) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    it->p = p, it->m = m, it->B = spec->batch > 0 ? spec->batch : 1, it->pack = spec->pack_weights;
    it->packs = spec->pack_weights && spec->packs ? spec->packs : &it->own_packs;  // a pass that packs nothing holds none
    it->budget_floats = spec->trace_budget / sizeof(float), it->budget_given = spec->trace_budget_given;
    it->read_epoch = 1;
    it->choice = spec->choice, it->rows_in = it->B;
    tune_init(&it->tune, omp_get_max_threads());
    if (spec->choice.beam >= 2) it->B = spec->choice.beam, it->rows_in = 1;  // one row per hypothesis
    it->cached = spec->cached || (p->decode < p->n && p->stmts[p->decode].cached);
    it->gen_len = calloc((size_t)it->B, sizeof *it->gen_len);
    it->finished = calloc((size_t)it->B, sizeof *it->finished);
    it->tokens = calloc((size_t)it->B, sizeof *it->tokens), it->parents = calloc((size_t)it->B, sizeof *it->parents);
    it->prompted = program_decoder_only(p);
    it->src = it->prompted ? -1 : program_input(p, "src");  // a decoder-only program's prompt seeds its target
    it->tgt = p->decode < p->n ? program_input(p, p->stmts[p->decode].name) : program_input(p, "tgt");
    bool ok = (it->gen_len && it->finished && it->tokens && it->parents) || err_code(e, ERR_MEMORY, "out of memory");
    ok = ok && interp_check_inputs(it, spec, e) && interp_store_inputs(it, spec, e) && expand_all(it, true, e);
    if (!ok) {
        interp_free(it);
        return NULL;
    }
    return it;
}

void interp_free(Interp *it) {
    if (!it) return;
    for (int i = 0; i < it->out_cap; i++) free(it->out[i]), free(it->newrow[i]);
    free(it->out);
    free(it->newrow), free(it->newrow_size);
    free(it->out_size);
    free(it->evicted);
    free(it->kind);
    free(it->seg), free(it->keep), free(it->pinned), free(it->mark), free(it->new_ok), free(it->seg_read), free(it->stage_read);
    for (int k = 0; k < it->n_spare; k++) free(it->spare[k]);
    free(it->spare);
    free(it->spare_size);
    free(it->round_start);
    packs_free(&it->own_packs);
    interp_wide_free(it);
    transient_free(&it->transient);
    chooser_free(it->ch);
    free(it->tokens), free(it->parents), free(it->rows), free(it->gen);
    for (int s = 0; s < PROGRAM_MAX_INPUTS; s++) free(it->ids[s]);
    expander_free(it->x);
    free(it->gen_len);
    free(it->finished);
    free(it);
}

static bool exec_stage(Interp *it, int i, bool cached, Err *e);

// Runs the stages interp_plan_recompute marked, from `lo` to i, whole: the same bits as when they
// first ran (how they were first computed is kept).
static bool recompute(Interp *it, int lo, int i) {
    Err e = {{0}};
    bool ok = true;
    for (int j = lo; j <= i; j++) {
        if (!it->mark[j]) continue;
        it->mark[j] = false;
        const RowsKind kind = it->kind[j];
        ok = ok && exec_stage(it, j, false, &e);
        it->kind[j] = kind;
        if (j < it->evict_from) it->evict_from = j;
    }
    return ok;
}

// Stage i's output, recomputed first if it was dropped (a greedy round let go, or a budget's
// block: interp_evict.c); NULL if that fails.
static const float *stage_data(Interp *it, int i) {
    if (it->evicted[i]) {
        const int k = interp_round_of(it, i), running = it->n_done > 0 ? interp_round_of(it, it->n_done - 1) : -1;
        if (k >= 0 && it->viewed_round >= 0 && it->viewed_round != k && it->viewed_round != running)
            interp_evict_round(it, it->viewed_round);
        if (k >= 0) it->viewed_round = k;
        if (!recompute(it, interp_plan_recompute(it, i), i)) return NULL;
    }
    assert(it->out[i] || transient_gone(&it->transient, i));  // a transient output: NULL once its last reader ran
    return it->out[i];
}

// The same for a reader: its block counts as read (kept until the reads are released), and room
// is made within the budget for what the read recomputes before it does.
static const float *read_stage(Interp *it, int i) {
    interp_note_read(it, i);  // (a greedy round let go whole spares it too)
    if (!it->budget_floats) return stage_data(it, i);
    const bool again = it->evicted[i];
    interp_make_room(it, again ? interp_recompute_floats(it, i) : 0, again ? interp_one_buffer(it, i) : 0, it->seg[i], true);
    return stage_data(it, i);
}

static const float *ref_data(Interp *it, const Ref *r) {
    switch (r->kind) {
    case REF_STAGE: {
        const float *d = stage_data(it, r->index);  // NULL when recomputing it ran out of memory
        return d ? d + r->offset : NULL;
    }
    case REF_INPUT: return it->ids[r->index] + r->offset;
    case REF_WEIGHT: {
        const float *d = interp_weight(it, r->index);  // NULL when widening it ran out of memory
        return d ? d + r->offset : NULL;
    }
    }
    return NULL;
}

// Whether a spare buffer of `cand` floats serves `need` better than one of `best`: one that
// fits beats one that does not; among those that fit the smallest, else the largest.
static bool better_spare(size_t cand, size_t best, size_t need) {
    if ((cand >= need) != (best >= need)) return cand >= need;
    return cand >= need ? cand < best : cand > best;
}

// A buffer of at least `need` floats for stage i: its own, a spare one (see better_spare;
// grown if it is short), or a new one. `keep`: stage i's own buffer holds rows it grows (last
// round's, take_output), so a short one is grown by realloc, which moves a large block's pages
// without copying them. False (e set) past the trace limit or memory.
static bool give_buffer(Interp *it, int i, size_t need, bool keep, Err *e) {
    if (it->out_size[i] >= need) return true;  // re-runs reuse the buffer of the last run
    if (transient_take(&it->transient, i, need, &it->out[i], &it->out_size[i])) return true;
    int best = -1;
    for (int k = 0; k < it->n_spare; k++)
        if (best < 0 || better_spare(it->spare_size[k], it->spare_size[best], need)) best = k;
    size_t held = it->out_size[i];
    float *buf = it->out[i];
    if (best >= 0 && !buf) {  // take the spare one
        buf = it->spare[best], held = it->spare_size[best];
        it->spare[best] = it->spare[--it->n_spare], it->spare_size[best] = it->spare_size[it->n_spare];
    }
    if (held < need) {
        const size_t want = interp_want_floats(it->greedy, need);
        if ((double)(it->trace_floats - held + want) * sizeof(float) > (double)limit_bytes(LIMIT_TRACE_MB)) {
            free(buf), it->trace_floats -= held, it->out[i] = NULL, it->out_size[i] = 0;
            return err_code(e, ERR_LIMIT, "%s: the pass's outputs would take more than the %lld MB a trace may take (set %s to "
                            "raise the limit)", interp_stage(it, i)->id, limit_value(LIMIT_TRACE_MB), limit_env(LIMIT_TRACE_MB));
        }
        float *grown = keep ? realloc(buf, sizeof(float) * want) : (free(buf), malloc(sizeof(float) * want));
        if (!grown && keep) free(buf);
        // Before its first write (mem.h); not again on a block realloc grew, whose pages it moved:
        // advising them anew made the kernel fault them in again, 4 KB at a time (the cached
        // decoder's [T, 50257] logits and probabilities, grown each round: 560 MB of faults in a
        // 32-token generation, a third of its time).
        if (!keep) mem_prefer_huge(grown, sizeof(float) * want);
        buf = grown;
        it->trace_floats = it->trace_floats - held + (buf ? want : 0);
        held = buf ? want : 0;
    }
    it->out[i] = buf, it->out_size[i] = held;
    return buf || err_set(e, "%s: out of memory for the output", interp_stage(it, i)->id);
}


// Runs stage i; `cached`: from the same stage of the round before, where it can (rows.h).
static bool exec_stage(Interp *it, int i, bool cached, Err *e) {
    int n;
    const Stage *st = &expander_stages(it->x, &n)[i];
    const int from = cached ? interp_cached_from(it, i) : -1;  // the same stage, last round
    RowsKind kin[STAGE_MAX_IN] = {ROWS_WHOLE};
    const RowsKind new_kind = from >= 0 ? interp_cached_kinds(it, i, from, kin) : ROWS_WHOLE;
    const float *in[STAGE_MAX_IN] = {0};
    OpWeight w = {0};  // a weight held as half goes to its kernel as it is (in[j] NULL)
    for (int j = 0; j < st->n_in; j++)
        if (!interp_weight_half(it, st, j, &w) &&
            !(in[j] = from >= 0 && rows_is_new(kin[j]) ? it->newrow[st->in[j].index] : ref_data(it, &st->in[j])))
            return err_code(e, ERR_MEMORY, "%s: out of memory recomputing its inputs", st->id);
    if (st->op == OP_EMBEDDING) {
        const int rows = st->in_shape[1].dim[0], T = st->in_shape[0].dim[0];
        for (int t = 0; t < T * it->B; t++)
            if (!(in[0][t] >= 0 && in[0][t] < (float)rows))
                return err_set(e, "%s: token id %g at position %d is outside the embedding table "
                               "%s (%d rows)", st->id, (double)in[0][t], t % T, st->in_name[1], rows);
    }
    if (new_kind != ROWS_WHOLE) return interp_new_rows(it, i, from, in, kin, new_kind, e);
    const size_t need = (size_t)shape_numel(&st->shape) * it->B + 1;
    const bool handed = from >= 0 && interp_take_output(it, i, from);  // last round's buffer, grown in place
    const float *prev = from >= 0 && !handed ? stage_data(it, from) : NULL;  // NULL: it could not be recomputed
    if (!give_buffer(it, i, need, handed, e)) return false;
    if (handed) prev = it->out[i];  // where it is now
    it->evicted[i] = false;
    w.packed = it->pack && interp_pays_to_pack(it, i, st) ? packs_get(it->packs, it->m, st) : NULL;  // never a half weight
    it->kind[i] = ROWS_WHOLE;
    if (prev) it->kind[i] = rows_exec(st, in, kin, &w, prev, &interp_stage(it, from)->shape, it->out[i]);
    else op_exec(st, in, &w, it->out[i], it->B);
    ablation_apply(&it->ablation, st, in, it->out[i], it->B);
    return true;
}

int interp_scores_of(const Interp *it, int argmax) {
    const Stage *st = interp_stage(it, argmax);
    int k = st->in[0].kind == REF_STAGE ? st->in[0].index : -1;
    if (k >= 0 && interp_stage(it, k)->op == OP_SOFTMAX && interp_stage(it, k)->in[0].kind == REF_STAGE)
        k = interp_stage(it, k)->in[0].index;
    return k;
}

// What each row appends this round: greedy's argmax (the ids stage's last row), or the chooser's
// token; parents [B]: the row each next row extends. False on error.
static bool choose(Interp *it, const float *next, int T, bool *beam_done, Err *e) {
    const int B = it->B;
    *beam_done = false;
    for (int b = 0; b < B; b++) it->tokens[b] = (int)next[(size_t)b * T + T - 1], it->parents[b] = b;
    if (!it->ch) return true;
    const int k = interp_scores_of(it, it->next_stage);
    if (k < 0) return err_set(e, "sampling and beam search read the scores the decode loop's argmax reads, "
                              "but its argmax reads no stage");
    const Stage *sc = interp_stage(it, k);
    const int V = sc->shape.dim[sc->shape.ndim - 1];
    if (V != it->m->cfg.tgt_vocab_size)
        return err_set(e, "%s has %d columns, not the %d tokens of the vocabulary", sc->id, V, it->m->cfg.tgt_vocab_size);
    const float *x = interp_output(it, k);
    if (!x) return err_code(e, ERR_MEMORY, "%s: out of memory recomputing it", sc->id);
    for (int b = 0; b < B; b++) it->rows[b] = x + ((size_t)b * T + T - 1) * V;
    const int r = it->round, G = T - it->start_len;  // tokens generated before this round
    const float *all = it->ids[it->tgt] + it->tgt_off;
    for (int b = 0; b < B && it->choice.beam >= 2; b++)  // only a finished hypothesis keeps its tokens
        memcpy(it->gen + (size_t)b * G, all + (size_t)b * T + it->start_len, sizeof(float) * (size_t)G);
    return chooser_round(it->ch, r, it->rows, it->gen, it->tokens, it->parents, beam_done) ||
           err_code(e, ERR_MEMORY, "out of memory");
}

static bool finish_rounds(Interp *it, Err *e) {
    it->phase = PH_FINISHED;
    return expand_rest(it->x, e) && (take_new_stages(it) || err_code(e, ERR_MEMORY, "out of memory"));
}

// After a round has run: each example appends its next token (or, once it has produced eos,
// padding); the loop ends when every example has finished or after max_new rounds. Beam
// search's rows are its hypotheses: each extends the row its parent was.
static bool next_round(Interp *it, Err *e) {
    const ModelConfig *c = &it->m->cfg;
    const int T = interp_stage(it, it->next_stage)->shape.dim[0], B = it->B;
    const float fill = (float)(c->pad_id.set ? c->pad_id.id : c->eos_id.set ? c->eos_id.id : 0);
    bool all = true, beam_done;
    const float *next = stage_data(it, it->next_stage);
    if (!next) return err_code(e, ERR_MEMORY, "%s: out of memory recomputing it", interp_stage(it, it->next_stage)->id);
    if (!choose(it, next, T, &beam_done, e)) return false;
    const bool beam = it->choice.beam >= 2;
    for (int b = 0; b < B && !beam; b++) {
        if (!it->finished[b] && c->eos_id.set && it->tokens[b] == c->eos_id.id) it->finished[b] = true;
        all = all && it->finished[b];
    }
    if (beam ? beam_done && it->round + 1 < it->max_new : all) it->stop = STOP_EOS;
    else if (it->round + 1 == it->max_new) it->stop = it->max_new_cut ? STOP_POSITIONS : STOP_MAX_LEN;
    if (it->stop == STOP_EOS) return finish_rounds(it, e);
    // The next round's [B, T + 1] block follows this round's [B, T] (store_inputs made room).
    const float *prev = it->ids[it->tgt] + it->tgt_off;
    float *ids = it->ids[it->tgt] + it->tgt_off + (size_t)B * T;
    for (int b = 0; b < B; b++) {
        memcpy(ids + (size_t)b * (T + 1), prev + (size_t)it->parents[b] * T, sizeof(float) * (size_t)T);
        ids[(size_t)b * (T + 1) + T] = it->finished[b] ? fill : (float)it->tokens[b];
        if (!it->finished[b]) it->gen_len[b]++;
    }
    it->tgt_off += (size_t)B * T;
    it->len[it->tgt] = T + 1;
    if (it->stop == STOP_MAX_LEN || it->stop == STOP_POSITIONS) return finish_rounds(it, e);
    it->round++;
    expander_set_input(it->x, it->tgt, it->len[it->tgt], it->tgt_off);
    if (!expand_decode(it->x, true, it->round, &it->next_stage, e)) return false;
    it->round_start[++it->n_rounds] = interp_n_stages(it);
    return (take_new_stages(it) || err_code(e, ERR_MEMORY, "out of memory")) &&
           interp_budget_check(it, false, e);  // a round a row longer may need a little more: raised

}

StepStatus interp_step(Interp *it, Err *e) {
    if (it->n_done == interp_n_stages(it) && it->phase == PH_ROUND && !next_round(it, e)) return STEP_FAILED;
    if (it->n_done == interp_n_stages(it)) return STEP_DONE;
    const int k = interp_round_of(it, it->n_done), keep = it->cached ? 2 : 1;  // the cached decoder reads the last round
    it->read_epoch++;  // a step releases the reads before it
    if (k >= keep && it->round_start[k] == it->n_done) interp_evict_round(it, k - keep);  // a round starts
    const size_t need = (size_t)shape_numel(&interp_stage(it, it->n_done)->shape) * (size_t)it->B + 1;
    const int from = it->cached && k > 0 ? interp_cached_from(it, it->n_done) : -1;  // its round-before twin, if dropped
    RowsKind kin[STAGE_MAX_IN];
    const bool new_rows_only = from >= 0 && interp_cached_kinds(it, it->n_done, from, kin) != ROWS_WHOLE;  // no output buffer
    if (new_rows_only) interp_make_room(it, interp_new_rows_growth(it, it->n_done, from), 0, -1, false);
    else {
        const size_t again = it->budget_floats && from >= 0 && it->evicted[from] ? interp_recompute_floats(it, from) : 0;
        const size_t own = it->out_size[it->n_done] >= need ? 0 : interp_want_floats(it->greedy, need);
        interp_make_room(it, own + again, again || it->out[it->n_done] ? 0 : own, -1, false);  // a spare serves a new buffer
    }
    if (!exec_stage(it, it->n_done, it->cached && k > 0, e)) return STEP_FAILED;
    transient_release(&it->transient, it->n_done, interp_stage(it, it->n_done), it->out, it->out_size);
    it->n_done++;
    return STEP_RAN;
}

#ifdef _OPENMP
// Greedy rounds, each on the thread count the tuner picks from the rounds before it
// (par_tune.h). A round is timed from its first stage to the next round's first stage (or the
// pass's end). The first round is not timed: it also runs the prelude (the encoder) and packs
// the weights.
static bool run_tuned(Interp *it, Err *e) {
    const int threads = omp_get_max_threads();
    if (it->tune.most != threads) tune_init(&it->tune, threads);
    int round = -1;
    double t0 = omp_get_wtime();
    StepStatus s;
    while ((s = interp_step(it, e)) == STEP_RAN) {
        const int k = interp_round_of(it, it->n_done - 1);
        if (k == round) continue;
        const double t = omp_get_wtime();
        if (round >= 1) tune_record(&it->tune, t - t0);
        omp_set_num_threads(tune_threads(&it->tune));
        round = k, t0 = t;
    }
    if (s == STEP_DONE && round >= 1) tune_record(&it->tune, omp_get_wtime() - t0);  // the last round
    omp_set_num_threads(threads);
    return s == STEP_DONE;
}
#endif

bool interp_run(Interp *it, Err *e) {
#ifdef _OPENMP
    if (it->greedy && omp_get_max_threads() > 1 && !omp_in_parallel()) return run_tuned(it, e);
#endif
    StepStatus s;
    while ((s = interp_step(it, e)) == STEP_RAN)
        ;
    return s == STEP_DONE;
}

void interp_threads_used(const Interp *it, int *rounds, int *rounds_fewer) {
    *rounds = it->tune.units, *rounds_fewer = it->tune.units_fewer;
}

bool interp_run_to(Interp *it, const char *id, Err *e) {
    for (;;) {
        int i = interp_find(it, id);
        if (i >= 0 && i < it->n_done) return true;
        const StepStatus s = interp_step(it, e);
        if (s == STEP_FAILED) return false;
        if (s == STEP_DONE) return err_set(e, "this pass has no stage '%s'", id);
    }
}

void interp_rewind(Interp *it, int index) {
    if (index < 0) index = 0;
    if (index < it->n_done) it->n_done = index;  // later buffers stay allocated for re-use
    for (int i = index; i < it->out_cap; i++) it->pinned[i] = false;
    if (index < it->evict_from) it->evict_from = index;  // what re-runs may be dropped again
    it->read_epoch++;
}

bool interp_set_values(Interp *it, int i, size_t first, const float *v, size_t n, Err *e) {
    if (it->greedy) return err_set(e, "values can be changed only in a teacher-forced pass, not while decoding greedily");
    if (i < 0 || i >= it->n_done) return err_set(e, "stage %d has not run", i);
    const size_t total = (size_t)shape_numel(&interp_stage(it, i)->shape) * (size_t)it->B;
    if (first > total || n > total - first)
        return err_set(e, "%s holds %zu values; %zu from %zu do not fit", interp_stage(it, i)->id, total, n, first);
    float *to = (float *)stage_data(it, i);  // the trace's own buffer, back if it was dropped
    if (!to) return err_code(e, ERR_MEMORY, "%s: out of memory recomputing it", interp_stage(it, i)->id);
    memcpy(to + first, v, sizeof(float) * n);
    interp_rewind(it, i + 1);
    it->pinned[i] = true;  // it can no longer be recomputed: the budget keeps it
    return true;
}

bool interp_done(const Interp *it) {
    return it->n_done == interp_n_stages(it) && it->phase == PH_FINISHED;
}

static bool same_ids(const float *a, int na, const float *b, int nb) {
    return na == nb && (na == 0 || memcmp(a, b, sizeof(float) * (size_t)na) == 0);
}

bool interp_set_inputs(Interp *it, const RunSpec *spec, int *first_affected, Err *e) {
    if (!interp_check_inputs(it, spec, e)) return false;  // a bad input changes nothing
    unsigned changed = 0;
    const int B = it->B;
    const bool was_greedy = it->greedy;
    if (it->src >= 0 && (it->rows_in != B || !same_ids(it->ids[it->src], it->len[it->src] * B, spec->src, spec->S * B)))
        changed |= 1u << it->src;
    if (it->tgt >= 0 && (was_greedy || !spec->tgt ||
                         !same_ids(it->ids[it->tgt], it->len[it->tgt] * B, spec->tgt, spec->T * B)))
        changed |= 1u << it->tgt;
    bool changed_len = false;
    for (int s = 0; s < it->p->n_inputs; s++)
        changed_len = changed_len || (s == it->src && spec->S != it->len[s]) ||
                      (s == it->tgt && spec->tgt && spec->T != it->len[s]);
    it->choice = spec->choice;  // sampling's settings may change; a beam's width may not (checked)
    if (!interp_store_inputs(it, spec, e)) return false;
    int first = it->n_done;
    for (int i = 0; i < it->n_done; i++)
        if (interp_stage(it, i)->input_deps & changed) {
            first = i;
            break;
        }
    *first_affected = first;
    interp_rewind(it, first);
    it->stop = STOP_NONE;
    if (!it->greedy && !was_greedy && !changed_len && interp_n_stages(it) > 0) return true;  // same stages
    return expand_all(it, false, e);  // a longer input raises the budget to its least, never refused here
}

bool interp_set_ablation(Interp *it, const Ablation *ab, const RunSpec *spec, Err *e) {
    const Ablation keep = it->ablation;
    it->ablation = *ab;
    int first;
    if (!interp_set_inputs(it, spec, &first, e)) {
        it->ablation = keep;
        return false;
    }
    interp_rewind(it, 0);  // masks and positions come before anything the inputs change
    return true;
}

const Ablation *interp_ablation(const Interp *it) { return &it->ablation; }

int interp_n_stages(const Interp *it) {
    int n;
    expander_stages(it->x, &n);
    return n;
}

int interp_n_done(const Interp *it) { return it->n_done; }

bool interp_set_transient(Interp *it, const bool *transient, Err *e) {
    if (it->greedy) return err_set(e, "a greedy pass keeps every round's outputs; only a teacher-forced one can drop some");
    int n;
    const Stage *stages = expander_stages(it->x, &n);
    return transient_plan(&it->transient, stages, n, transient, e);
}

const Stage *interp_stage(const Interp *it, int i) {
    int n;
    const Stage *s = expander_stages(it->x, &n);
    assert(i >= 0 && i < n);
    return &s[i];
}

// Reading may recompute an evicted round: the trace is the same to every reader, only held
// differently, so the Interp stays const to them.
const float *interp_output(const Interp *it, int i) { return i < it->n_done ? read_stage((Interp *)it, i) : NULL; }

int interp_find(const Interp *it, const char *id) {
    int n;
    const Stage *s = expander_stages(it->x, &n);
    for (int i = 0; i < n; i++)
        if (strcmp(s[i].id, id) == 0) return i;
    return -1;
}

const float *interp_input(const Interp *it, int i, int j) {
    const Stage *st = interp_stage(it, i);
    assert(j < st->n_in);
    if (st->in[j].kind == REF_STAGE && st->in[j].index >= it->n_done) return NULL;
    if (st->in[j].kind == REF_STAGE) {
        const float *d = read_stage((Interp *)it, st->in[j].index);
        return d ? d + st->in[j].offset : NULL;
    }
    return ref_data((Interp *)it, &st->in[j]);
}

const ProgramOutput *interp_outputs(const Interp *it, int *n) { return expander_outputs(it->x, n); }

const float *interp_input_ids(const Interp *it, int slot, int *len) {
    *len = it->len[slot];
    return it->ids[slot] + (slot == it->tgt ? it->tgt_off : 0);
}

const float *interp_generated(const Interp *it, int *n, StopReason *why) {
    *why = it->stop;
    const BeamDone *best = it->ch && it->choice.beam >= 2 ? chooser_best(it->ch) : NULL;
    if (!best) return interp_generated_row(it, 0, n);
    const bool eos = it->m->cfg.eos_id.set && best->ids[best->n - 1] == (float)it->m->cfg.eos_id.id;
    *n = best->n - eos;
    return best->ids;
}

const Chooser *interp_chooser(const Interp *it) { return it->ch; }

const float *interp_generated_row(const Interp *it, int b, int *n) {
    *n = it->tgt >= 0 ? it->gen_len[b] : 0;
    return it->tgt >= 0 ? it->ids[it->tgt] + it->tgt_off + (size_t)b * it->len[it->tgt] + it->start_len : NULL;
}

int interp_batch(const Interp *it) { return it->B; }

int interp_start_len(const Interp *it) { return it->greedy ? it->start_len : 0; }

RowsKind interp_stage_rows(const Interp *it, int i) { return i < it->n_done ? it->kind[i] : ROWS_WHOLE; }

size_t interp_held_bytes(const Interp *it) { return (it->trace_floats + it->packs->floats + it->wide_floats) * sizeof(float); }

const Program *interp_program(const Interp *it) { return it->p; }
const Model *interp_model(const Interp *it) { return it->m; }
