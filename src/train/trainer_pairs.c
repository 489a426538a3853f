// trainer_pairs.c: the translation task (train.h): a Marian-layout program learns sentence
// pairs read by a Marian folder's tokenizers (pairs.h), and is scored by exact match of its
// greedy translations of the held-out pairs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hub.h"
#include "interp.h"
#include "trainer_impl.h"

bool pairs_setup(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    if (!c->tokenizer || !hub_is_folder(c->tokenizer))
        return err_set(e, "the translation task reads its pairs with a Marian folder's tokenizers: give --tokenizer DIR "
                       "(source.spm, target.spm, vocab.json)");
    if (!c->program) return err_set(e, "the translation task trains a translation program: give --program (lessons/marian.md)");
    if (c->block < 2 || c->block > TEXT_MAX_BLOCK)
        return err_set(e, "--block (the most tokens a side takes) must be 2 to %d (got %d)", TEXT_MAX_BLOCK, c->block);
    if (!hub_tokenizers(c->tokenizer, &t->tk, &t->tk_tgt, e)) return false;
    if (!t->tk || !tokenizer_is_marian(t->tk))
        return err_set(e, "%s: the translation task needs Marian's tokenizer (source.spm, target.spm, vocab.json)", c->tokenizer);
    return pairs_load(&t->pairs, c->data, t->tk, t->tk_tgt, t->S, t->T, e);
}

bool pairs_make_model(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    const int pad = tokenizer_id(t->tk_tgt, "<pad>"), eos = tokenizer_id(t->tk_tgt, "</s>");
    if (pad < 0) return err_set(e, "%s: vocab.json has no <pad>, which Marian's decoder starts from", c->tokenizer);
    char ids[256];
    snprintf(ids, sizeof ids, "vocab_size=%d decoder_vocab_size=%d pad_id=%d bos_id=%d eos_id=%d max_position_embeddings=%d",
             tokenizer_size(t->tk), tokenizer_size(t->tk_tgt), pad, pad, eos, c->block);
    ConfSpec cs = {.widen = true};  // training moves every weight: float32
    conf_spec_add(&cs, c->config, "the training configuration", false);
    if (c->init) return model_load(&t->m, c->init, &t->program.program, &cs, e);
    conf_spec_add(&cs, ids, c->tokenizer, false);
    if (!model_init_random(&t->m, &t->program.program, &cs, c->seed, e)) return false;
    const bool ok = model_use_tokenizers(&t->m, t->tk, t->tk_tgt, e);
    t->tk = t->tk_tgt = NULL;  // the model's now, even when it refused them (model_free frees them)
    return ok;
}

// Pair i's source as a padded row of S, its target as the decoder's input (the start id, then
// the target without its `</s>`) and labels (the target, `</s>` last), padded to T.
static void pair_rows(const PairData *d, const ModelConfig *mc, int S, int T, int i, float *src, float *tgt_in, float *tgt_out) {
    const int pad = mc->pad_id.id, start = mc->bos_id.id;
    const int *s = d->ids + d->at[i], *g = s + d->src_n[i];
    for (int k = 0; k < S; k++) src[k] = (float)(k < d->src_n[i] ? s[k] : pad);
    for (int k = 0; tgt_in && k < T; k++) {
        tgt_in[k] = (float)(k == 0 ? start : k < d->tgt_n[i] ? g[k - 1] : pad);
        tgt_out[k] = (float)(k < d->tgt_n[i] ? g[k] : pad);
    }
}

void pairs_batch(Trainer *t) {
    for (int b = 0; b < t->c.batch; b++)
        pair_rows(&t->pairs, &t->m.cfg, t->S, t->T, rng_below(&t->rng, t->pairs.n_train), t->src + (size_t)b * t->S,
                  t->tgt_in + (size_t)b * t->T, t->tgt_out + (size_t)b * t->T);
}

bool pairs_exact(const PairData *d, const Program *p, Model *m, int S, int T, int from, int n, int *right, Err *e) {
    float *src = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1) * (size_t)S);
    if (!src) return err_code(e, ERR_MEMORY, "out of memory");
    for (int b = 0; b < n; b++) pair_rows(d, &m->cfg, S, T, from + b, src + (size_t)b * S, NULL, NULL);
    RunSpec spec = {src, S, NULL, 0, T, n};
    Interp *it = interp_new(p, m, &spec, e);
    const bool ok = it && interp_run(it, e);
    for (int b = 0; ok && b < n; b++) {
        const int i = from + b, *g = d->ids + d->at[i] + d->src_n[i];
        int len;
        const float *got = interp_generated_row(it, b, &len);
        bool same = len == d->tgt_n[i] - 1;  // the target without its </s>
        for (int k = 0; same && k < len; k++) same = (int)got[k] == g[k];
        *right += same;
    }
    interp_free(it);
    free(src);
    return ok;
}

bool pairs_eval(Trainer *t, int n, double *exact, Err *e) {
    const int total = t->pairs.n - t->pairs.n_train;
    if (n <= 0 || n > total) n = total;
    int right = 0;
    for (int from = 0; from < n; from += 250)
        if (!pairs_exact(&t->pairs, &t->program.program, &t->m, t->S, t->T, t->pairs.n_train + from, n - from < 250 ? n - from : 250,
                         &right, e))
            return false;
    *exact = n ? (double)right / n : 0.0;
    return true;
}
