// model_io.c: a model's tensors: the arena for what the program declared, filled from a file
// (each tensor checked) or initialised as declared, the vocabularies, and saving. Resolving
// the declarations themselves is the language's job (language/load.c).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "model.h"
#include "rng.h"

bool model_check_config(Model *m, const char *what, Err *e) {
    conf_to_config(&m->conf, &m->cfg);
    const ModelConfig *c = &m->cfg;
    const OptId *ids[] = {&c->bos_id, &c->eos_id, &c->pad_id, &c->unk_id};
    static const char *const names[] = {"bos_id", "eos_id", "pad_id", "unk_id"};
    for (int i = 0; i < 4; i++) {
        const int V = i == 3 || c->tgt_vocab_size <= 0 ? c->src_vocab_size : c->tgt_vocab_size;
        if (ids[i]->set && (ids[i]->id < 0 || (V > 0 && ids[i]->id >= V)))
            return err_set(e, "%s: %s %d is outside the vocabulary (0..%d)", what, names[i], ids[i]->id, V - 1);
    }
    if (!(c->layer_norm_eps >= 0.0f) || !isfinite(c->layer_norm_eps))
        return err_set(e, "%s: layer_norm_eps must be a non-negative number", what);
    return true;
}

static bool load_vocab(Vocab *v, const StFile *f, const char *key, int size, const char *what, bool *has, Err *e) {
    const char *json = f ? st_meta(f, key) : NULL;
    if (!json) return vocab_numbered(v, size > 0 ? size : 1, e);
    char where[320];
    snprintf(where, sizeof where, "%s: metadata %s", what, key);
    if (!vocab_from_json(v, json, where, e)) return false;
    if (size > 0 && v->n != size)
        return err_set(e, "%s holds %d tokens, but the vocabulary size is %d", where, v->n, size);
    *has = true;
    return true;
}

bool model_read_vocab(Model *m, const StFile *f, const char *what, Err *e) {
    bool hs = false, ht = false;
    if (!load_vocab(&m->src_vocab, f, "src_tokens", m->cfg.src_vocab_size, what, &hs, e) ||
        !load_vocab(&m->tgt_vocab, f, "tgt_tokens", m->cfg.tgt_vocab_size, what, &ht, e))
        return false;
    m->has_vocab = hs && ht;
    return true;
}

// One vocabulary of labels for the tokenizer's ids (a number past its last), read through it.
static bool tokenizer_vocab(Vocab *v, const Tokenizer *t, int n, Err *e) {
    vocab_free(v);
    v->tokens = calloc((size_t)n + 1, sizeof *v->tokens);
    if (!v->tokens) return err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0; i < n; i++) {
        char label[256];
        if (i < tokenizer_size(t)) tokenizer_label(t, i, label, sizeof label);
        else snprintf(label, sizeof label, "%d", i);
        const size_t len = strlen(label) + 1;
        if (!(v->tokens[i] = malloc(len))) return vocab_free(v), err_code(e, ERR_MEMORY, "out of memory");
        memcpy(v->tokens[i], label, len);
        v->n = i + 1;
    }
    v->tok = t;
    return true;
}

bool model_use_tokenizers(Model *m, Tokenizer *src, Tokenizer *tgt, Err *e) {
    if (m->tgt_tokenizer != m->tokenizer && m->tgt_tokenizer != tgt && m->tgt_tokenizer != src) tokenizer_free(m->tgt_tokenizer);
    if (m->tokenizer != src && m->tokenizer != tgt) tokenizer_free(m->tokenizer);  // a folder's own, replaced (train --init --tokenizer)
    m->tokenizer = src, m->tgt_tokenizer = tgt;
    const int nt = m->cfg.tgt_vocab_size > 0 ? m->cfg.tgt_vocab_size : m->cfg.src_vocab_size;
    const int ns = m->cfg.src_vocab_size > 0 ? m->cfg.src_vocab_size : nt;
    if (!tokenizer_vocab(&m->tgt_vocab, tgt, nt, e) || !tokenizer_vocab(&m->src_vocab, src, ns, e))
        return false;
    m->has_vocab = true;
    return true;
}

bool model_use_tokenizer(Model *m, Tokenizer *t, Err *e) { return model_use_tokenizers(m, t, t, e); }

bool model_declare(Model *m, Err *e) {
    StFile *w = &m->weights;
    w->entries = calloc((size_t)m->n_params + 1, sizeof *w->entries);
    if (!w->entries) return err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0; i < m->n_params; i++) {
        StEntry *en = &w->entries[w->n_entries++];
        en->name = malloc(strlen(m->params[i].name) + 1);
        if (!en->name) return err_code(e, ERR_MEMORY, "out of memory");
        strcpy(en->name, m->params[i].name);
        en->shape = m->params[i].shape;
    }
    return st_index(w) || err_code(e, ERR_MEMORY, "out of memory");
}

static size_t padded16(int64_t n) { return ((size_t)n + 15) / 16 * 16; }

// Whether tensor i is held as half in the numbers of an earlier tensor (a `tie`: read, and
// counted, once).
static bool half_twin(const Model *m, int i) {
    const uint16_t *h = m->weights.entries[i].half;
    for (int j = 0; j < i && h; j++)
        if (m->weights.entries[j].half == h) return true;
    return false;
}

// Whether tensor i is held as src (its file's entry, or NULL) stores it: a matrix (two axes or
// more) the file keeps as F16 or BF16 that is not read yet. Vectors (norms, biases) and buffers
// are widened: they are a thousandth of the numbers, and every kernel reads them as floats.
static bool held_half(const Model *m, int i, const StEntry *src, bool widen) {
    return !widen && src && !src->data && src->dtype != ST_F32 && m->params[i].shape.ndim >= 2 && !m->params[i].fixed;
}

bool model_place(Model *m, const StEntry *const *src, bool widen, Err *e) {
    double bytes = 0;  // checked before anything is allocated: a few bytes of config can ask for terabytes
    size_t floats = 0, halves = 0;
    m->wide_at = calloc((size_t)m->n_params + 1, sizeof *m->wide_at);
    if (!m->wide_at) return err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0; i < m->n_params; i++) {
        const int64_t n = shape_numel(&m->params[i].shape);
        m->wide_at[i] = m->n_wide, m->n_wide += padded16(n);
        const bool half = held_half(m, i, src ? src[i] : NULL, widen);
        bool twin = false;  // an earlier tensor held as the same entry of the file (a `tie`): shared
        for (int j = 0; j < i && half; j++) twin = twin || src[j] == src[i];
        if (twin) continue;
        if (half) halves += padded16(n), bytes += 2.0 * (double)n;
        else floats += padded16(n), bytes += 4.0 * (double)n;
    }
    if (bytes > (double)limit_bytes(LIMIT_MODEL_MB))
        return err_code(e, ERR_LIMIT, "the model would take %.0f MB, more than the %lld MB a model may take (set %s to raise the "
                       "limit)", bytes / (1 << 20), limit_value(LIMIT_MODEL_MB), limit_env(LIMIT_MODEL_MB));
    StFile *w = &m->weights;
    w->arena = calloc(floats ? floats : 1, sizeof(float));
    m->half_arena = halves ? calloc(halves, sizeof(uint16_t)) : NULL;
    if (!w->arena || (halves && !m->half_arena)) return err_code(e, ERR_MEMORY, "out of memory for %zu parameters", floats + halves);
    size_t at = 0, hat = 0;
    for (int i = 0; i < m->n_params; i++) {
        StEntry *en = &w->entries[i];
        if (!held_half(m, i, src ? src[i] : NULL, widen)) {
            en->data = w->arena + at, at += padded16(shape_numel(&en->shape));
            continue;
        }
        en->dtype = src[i]->dtype;
        for (int j = 0; j < i && !en->half; j++)
            if (src[j] == src[i] && w->entries[j].half) en->half = w->entries[j].half;
        if (!en->half) en->half = m->half_arena + hat, hat += padded16(shape_numel(&en->shape));
    }
    return true;
}

bool model_widen(Model *m, Err *e) {
    if (!m->half_arena) return true;
    float *arena = calloc(m->n_wide ? m->n_wide : 1, sizeof(float));
    if (!arena) return err_code(e, ERR_MEMORY, "out of memory widening the weights to float32 (%zu numbers)", m->n_wide);
    model_wide_copy(m, arena);
    for (int i = 0; i < m->n_params; i++) {
        StEntry *en = &m->weights.entries[i];
        en->data = arena + m->wide_at[i], en->half = NULL, en->dtype = ST_F32;
    }
    free(m->weights.arena), free(m->half_arena);
    m->weights.arena = arena, m->half_arena = NULL;
    return true;
}

void model_numbers(const Model *m, int i, float *to) {
    const StEntry *en = &m->weights.entries[i];
    const size_t n = (size_t)shape_numel(&en->shape);
    if (en->half) half_widen(to, en->half, n, st_half_kind(en->dtype));
    else memcpy(to, en->data, sizeof(float) * n);
}

void model_wide_copy(const Model *m, float *to) {
    memset(to, 0, sizeof(float) * m->n_wide);
    for (int i = 0; i < m->n_params; i++) model_numbers(m, i, to + m->wide_at[i]);
}

bool model_same_numbers(const Model *m, int a, int b) {
    const StEntry *x = &m->weights.entries[a], *y = &m->weights.entries[b];
    const size_t n = (size_t)shape_numel(&x->shape);
    if (!shape_eq(&x->shape, &y->shape)) return false;
    if (x->half && y->half && x->dtype == y->dtype) return !memcmp(x->half, y->half, 2 * n);
    for (size_t i = 0; i < n; i++) {  // held differently: compared as float32
        const float u = x->half ? half_to_f32(x->half[i], st_half_kind(x->dtype)) : x->data[i];
        const float v = y->half ? half_to_f32(y->half[i], st_half_kind(y->dtype)) : y->data[i];
        if (memcmp(&u, &v, sizeof u)) return false;
    }
    return true;
}

size_t model_bytes(const Model *m) {
    size_t bytes = 0;
    for (int i = 0; i < m->n_params; i++) {
        const StEntry *en = &m->weights.entries[i];
        if (!half_twin(m, i)) bytes += (size_t)shape_numel(&en->shape) * (en->half ? 2 : 4);
    }
    return bytes;
}

static void init_tensor(float *x, const ParamDecl *d, Rng *rng);  // (fresh weights, below)

// Notes the file's tensors that the program does not declare (buffers, other heads, ...).
static void note_extra(Model *m, const StFile *f, const char *path) {
    int n = 0;
    size_t k = 0;
    for (int i = 0; i < f->n_entries; i++) {
        if (model_weight_index(m, f->entries[i].name) >= 0) continue;
        if (n++ < 6 && k < sizeof m->note)
            k += (size_t)snprintf(m->note + k, sizeof m->note - k, "%s%s", n > 1 ? ", " : "", f->entries[i].name);
    }
    if (n && k < sizeof m->note)
        snprintf(m->note + k, sizeof m->note - k, "%s: %d tensor%s of %s not declared by the program, ignored",
                 n > 6 ? ", ..." : "", n, n > 1 ? "s" : "", path);
}

bool model_missing_tensor(const StFile *f, const char *path, const char *name, const char *program_file, int line, Err *e) {
    const char *made = st_meta(f, "program"), *base = strrchr(program_file, '/');
    base = base ? base + 1 : program_file;
    if (made && strcmp(made, base))
        return err_set(e, "%s: missing tensor '%s' (declared at %s:%d): the file was made for the program of %s, not %s; "
                       "run it with --program and that lesson (lessons/%s in the course)", path, name, program_file, line,
                       made, base, made);
    return err_set(e, "%s: missing tensor '%s' (declared at %s:%d)", path, name, program_file, line);
}

// A weight declared with an `if` that the file contradicts: the configuration (nanoGPT's
// `bias`) does not describe this file.
static bool optional_mismatch(const StFile *f, const char *path, const ParamDecl *d, const char *program_file, Err *e) {
    if (d->absent)
        return err_set(e, "%s: the file holds '%s', but %s:%d leaves it out (its `if` is 0): the configuration does "
                       "not describe this file", path, d->name, program_file, d->line);
    if (st_meta(f, "program")) return model_missing_tensor(f, path, d->name, program_file, d->line, e);
    return err_set(e, "%s: missing tensor '%s' (declared at %s:%d, where its `if` is not 0: does the configuration "
                   "describe this file?)", path, d->name, program_file, d->line);
}

bool model_copy_from(Model *m, const StFile *f, const char *path, const char *program_file, const char *const *from,
                     Err *e) {
    char a[64], b[64];
    for (int i = m->n_params; i < m->n_params + m->n_absent; i++)
        if (st_find(f, m->params[i].name)) return optional_mismatch(f, path, &m->params[i], program_file, e);
    for (int i = 0; i < m->n_params; i++) {
        const ParamDecl *d = &m->params[i];
        const StEntry *en = st_find(f, from && from[i] ? from[i] : d->name);
        if (!en && d->optional) return optional_mismatch(f, path, d, program_file, e);
        if (!en && d->fixed && (d->init == INIT_SINUSOID || d->init == INIT_SINUSOID_HALVES)) {
            init_tensor(m->weights.entries[i].data, d, NULL);  // a table the formula gives
            continue;
        }
        if (!en) return model_missing_tensor(f, path, d->name, program_file, d->line, e);
        if (!shape_eq(&en->shape, &d->shape))
            return err_set(e, "%s: tensor '%s' is %s in the file, but %s:%d declares %s %s", path, en->name,
                           shape_str(&en->shape, a, sizeof a), program_file, d->line, strcmp(en->name, d->name) ? d->name : "it",
                           shape_str(&d->shape, b, sizeof b));
        StEntry *to = &m->weights.entries[i];
        if (half_twin(m, i)) continue;  // read already
        if (!(to->half ? st_read_entry_half(f, en, to->half, e) : st_read_entry(f, en, to->data, e)))
            return false;  // read once, straight into place
    }
    note_extra(m, f, path);
    return true;
}

// ---- fresh weights ------------------------------------------------------------------------

// The positional table in any of its layouts: [P, d], [P, 1, d] or [1, P, d].
static void sinusoid(float *out, const Shape *s) {
    const int d = s->dim[s->ndim - 1];
    const int P = (int)(shape_numel(s) / d);
    positional_encoding(out, P, d, 10000.0f);
}

// Marian's table ([P, d]): column j < h = ceil(d/2) is sin(p / 10000^(2j/d)), column h + j is
// cos(p / 10000^(2j/d)); computed in double and rounded once, as Hugging Face builds it in numpy.
static void sinusoid_halves(float *out, const Shape *s) {
    const int d = s->dim[s->ndim - 1], h = (d + 1) / 2;
    const int P = (int)(shape_numel(s) / d);
    for (int p = 0; p < P; p++)
        for (int j = 0; j < d; j++) {
            const int i = j < h ? j : j - h;  // the frequency's index
            const double angle = p / pow(10000.0, 2.0 * i / d);
            out[(size_t)p * d + j] = (float)(j < h ? sin(angle) : cos(angle));
        }
}

static void init_tensor(float *x, const ParamDecl *d, Rng *rng) {
    const size_t n = (size_t)shape_numel(&d->shape);
    const Shape *s = &d->shape;
    float a = d->init_arg;
    switch (d->init) {
    case INIT_XAVIER: {  // U(-a, a), a = sqrt(6 / (fan_in + fan_out)), PyTorch's fans
        int64_t field = 1;
        for (int k = 2; k < s->ndim; k++) field *= s->dim[k];
        const double fan_out = (double)s->dim[0] * (double)field;
        const double fan_in = (s->ndim > 1 ? (double)s->dim[1] : 1.0) * (double)field;
        a = (float)sqrt(6.0 / (fan_in + fan_out));
    }
        /* fall through */
    case INIT_UNIFORM:
        for (size_t i = 0; i < n; i++) x[i] = (2.0f * rng_uniform(rng) - 1.0f) * a;
        return;
    case INIT_NORMAL:
        for (size_t i = 0; i < n; i++) x[i] = rng_normal(rng) * a;
        return;
    case INIT_SINUSOID: sinusoid(x, s); return;
    case INIT_SINUSOID_HALVES: sinusoid_halves(x, s); return;
    case INIT_ONES:
    case INIT_ZEROS:
    case INIT_COUNT:
        for (size_t i = 0; i < n; i++) x[i] = d->init == INIT_ONES ? 1.0f : 0.0f;
        return;
    }
}

void model_init_weights(Model *m, uint64_t seed) {
    Rng rng = {seed};
    for (int i = 0; i < m->n_params; i++) init_tensor(m->weights.entries[i].data, &m->params[i], &rng);
    snprintf(m->source, sizeof m->source, "random weights (seed %llu)", (unsigned long long)seed);
}

// ---- saving ---------------------------------------------------------------------------------

const float *model_numbers_get(void *ctx, int k) {
    ModelNumbers *g = ctx;
    const int i = g->which ? g->which[k] : k;
    free(g->buf);
    g->buf = malloc(sizeof(float) * ((size_t)shape_numel(&g->m->weights.entries[i].shape) + 1));
    if (g->buf) model_numbers(g->m, i, g->buf);
    return g->buf;
}

bool model_save(const Model *m, const char *path, Err *e) {
    const int nc = m->conf.n;
    StTensor *t = calloc((size_t)m->weights.n_entries + 1, sizeof *t);
    StMeta *meta = calloc((size_t)nc + 5, sizeof *meta);
    char (*v)[40] = calloc((size_t)nc + 1, sizeof *v);
    if (!t || !meta || !v) {
        free(t), free(meta), free(v);
        return err_code(e, ERR_MEMORY, "out of memory");
    }
    for (int i = 0; i < m->weights.n_entries; i++) {
        const StEntry *en = &m->weights.entries[i];
        t[i] = (StTensor){en->name, en->shape, en->data};  // NULL for a matrix held as half: widened as it is written
    }
    int nm = 0;
    for (int i = 0; i < nc; i++) {
        conf_value_text(&m->conf.items[i], v[i], sizeof v[i]);
        meta[nm++] = (StMeta){(char *)m->conf.items[i].name, v[i]};
    }
    if (m->program[0]) meta[nm++] = (StMeta){"program", (char *)m->program};
    if (m->program_hash[0]) meta[nm++] = (StMeta){"program_hash", (char *)m->program_hash};
    char *src = m->has_vocab ? vocab_to_json(&m->src_vocab) : NULL;
    char *tgt = m->has_vocab ? vocab_to_json(&m->tgt_vocab) : NULL;
    if (src && tgt) {
        meta[nm++] = (StMeta){"src_tokens", src};
        meta[nm++] = (StMeta){"tgt_tokens", tgt};
    }
    ModelNumbers get = {m, NULL, NULL};  // a tensor held as half (data NULL) is widened as it is written
    bool ok = st_save_stream(path, t, m->weights.n_entries, meta, nm, ST_F32, model_numbers_get, &get, e);
    free(get.buf), free(src), free(tgt), free(t), free(meta), free(v);
    return ok;
}
