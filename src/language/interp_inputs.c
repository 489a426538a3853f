// interp_inputs.c: a run's inputs checked against the program and the model, and stored: the
// source, a target for teacher forcing, or the start of generating (bos, or a decoder-only
// program's prompt), copied into each row of a beam.
#include "interp_impl.h"

#include <stdlib.h>
#include <string.h>

// Checks one input: not empty, within the positional table, every id in the vocabulary.
static bool check_ids(const Interp *it, const float *ids, int n, int vocab, const char *side, Err *e) {
    const int P = model_max_len(it->m);
    if (vocab <= 0)
        return err_set(e, "the program reads %s ids, but the configuration gives no %s_vocab_size", side,
                       side[0] == 's' ? "src" : "tgt");
    if (!ids || n < 1) return err_set(e, "the %s input is empty: give at least one token", side);
    if (n > P)
        return err_set(e, "the %s has %d tokens, more than the %d positions of the model's "
                       "positional table", side, n, P);
    for (int i = 0; i < n * it->rows_in; i++)
        if (!(ids[i] >= 0 && ids[i] < (float)vocab) || ids[i] != (float)(int)ids[i])
            return err_set(e, "%s id %g at position %d is not in the vocabulary (0..%d)", side,
                           (double)ids[i], i % n, vocab - 1);
    return true;
}

// The rounds that fit the positions: round r reads start + r ids, and at most P.
static int max_new_of(const Interp *it, const RunSpec *s) {
    const int room = model_max_len(it->m) - (it->prompted && s->S > 0 ? s->S : 1) + 1;
    return s->max_new < room ? s->max_new : room;
}

// Checks the spec's inputs against the program and the model, changing nothing.
bool interp_check_inputs(const Interp *it, const RunSpec *s, Err *e) {
    const ModelConfig *c = &it->m->cfg;
    if (it->src >= 0 && !check_ids(it, s->src, s->S, c->src_vocab_size, "source", e)) return false;
    if (it->tgt < 0) return true;
    if (s->choice.beam != it->choice.beam && (s->choice.beam >= 2 || it->choice.beam >= 2))
        return err_set(e, "a beam of another width needs a new run");  // its rows are the batch
    if (!s->tgt && !decode_check(&s->choice, c->tgt_vocab_size, e)) return false;
    if (s->tgt && s->choice.beam >= 2) return err_set(e, "beam search generates: it takes no target");
    if (s->tgt) return check_ids(it, s->tgt, s->T, c->tgt_vocab_size, "target", e);
    if (it->prompted && s->S > 0) {
        if (!check_ids(it, s->src, s->S, c->tgt_vocab_size, "prompt", e)) return false;
    } else if (!c->bos_id.set)
        return err_set(e, "greedy decoding starts from bos, but the model names no bos_id: "
                       "pass --bos ID");
    if (max_new_of(it, s) < 1) return err_set(e, "the most tokens to generate must be at least 1");
    return true;
}

static bool reserve_ids(Interp *it, int slot, size_t need) {
    if (it->ids_cap[slot] >= need) return true;
    float *p = realloc(it->ids[slot], sizeof(float) * need);
    if (!p) return false;
    it->ids[slot] = p, it->ids_cap[slot] = need;
    return true;
}

// Sampling and beam search keep what each round chose; greedy decoding needs nothing.
static bool new_chooser(Interp *it, Err *e) {
    chooser_free(it->ch);
    it->ch = NULL;
    if (decode_is_greedy(&it->choice)) return true;
    const ModelConfig *c = &it->m->cfg;
    const size_t B = (size_t)it->B;
    it->ch = chooser_new(&it->choice, it->B, it->max_new, c->tgt_vocab_size, c->eos_id.set ? c->eos_id.id : -1);
    free(it->rows), free(it->gen);
    it->rows = malloc(sizeof *it->rows * B), it->gen = malloc(sizeof *it->gen * B * (size_t)it->max_new);
    return (it->ch && it->rows && it->gen) || err_code(e, ERR_MEMORY, "out of memory");
}

// Copies checked inputs in. A greedy target gets room for every round's block: round r holds
// [B, r + 1] ids, so a stage of an earlier round still reads the ids it ran on.
static void copy_rows(const Interp *it, float *dst, const float *src, size_t n) {  // [B, n] <- [rows_in, n]
    for (int b = 0; b < it->B; b++) memcpy(dst + b * n, src + (size_t)(b % it->rows_in) * n, sizeof(float) * n);
}

bool interp_store_inputs(Interp *it, const RunSpec *s, Err *e) {
    const size_t B = (size_t)it->B;
    if (it->src >= 0) {
        if (!reserve_ids(it, it->src, B * s->S)) return err_code(e, ERR_MEMORY, "out of memory");
        copy_rows(it, it->ids[it->src], s->src, (size_t)s->S);
        it->len[it->src] = s->S;
    }
    if (it->tgt < 0) return true;
    it->greedy = s->tgt == NULL, it->tgt_off = 0;
    if (!it->greedy) {
        if (!reserve_ids(it, it->tgt, B * s->T)) return err_code(e, ERR_MEMORY, "out of memory");
        copy_rows(it, it->ids[it->tgt], s->tgt, (size_t)s->T);
        it->len[it->tgt] = s->T;
        return true;
    }
    it->max_new = max_new_of(it, s);
    it->max_new_cut = it->max_new < s->max_new;
    const size_t M = (size_t)it->max_new;
    int *rs = realloc(it->round_start, sizeof *rs * (M + 2));
    if (!rs) return err_code(e, ERR_MEMORY, "out of memory");
    it->round_start = rs;
    const bool from_prompt = it->prompted && s->S > 0;
    const size_t L0 = from_prompt ? (size_t)s->S : 1;  // round r reads L0 + r ids
    if (!reserve_ids(it, it->tgt, B * ((M + 1) * L0 + M * (M + 1) / 2))) return err_code(e, ERR_MEMORY, "out of memory");
    for (size_t b = 0; b < B; b++) {
        if (from_prompt) memcpy(it->ids[it->tgt] + b * L0, s->src + (b % (size_t)it->rows_in) * L0, sizeof(float) * L0);
        else it->ids[it->tgt][b] = (float)it->m->cfg.bos_id.id;
        it->gen_len[b] = 0, it->finished[b] = false;
    }
    it->len[it->tgt] = it->start_len = (int)L0;
    return new_chooser(it, e);
}
