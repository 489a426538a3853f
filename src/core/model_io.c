// model_io.c: loading a model from .safetensors (metadata, shapes, flags), checking every
// tensor against the configuration, random initialisation and saving.
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rng.h"

static const struct {
    const char *key;
    size_t offset;
} int_keys[] = {
    {"d_model", offsetof(ModelConfig, d_model)},
    {"nhead", offsetof(ModelConfig, nhead)},
    {"num_encoder_layers", offsetof(ModelConfig, num_encoder_layers)},
    {"num_decoder_layers", offsetof(ModelConfig, num_decoder_layers)},
    {"dim_feedforward", offsetof(ModelConfig, dim_feedforward)},
    {"src_vocab_size", offsetof(ModelConfig, src_vocab_size)},
    {"tgt_vocab_size", offsetof(ModelConfig, tgt_vocab_size)},
    {"max_positions", offsetof(ModelConfig, max_positions)},
};

static const struct {
    const char *key;
    size_t offset;
} id_keys[] = {
    {"bos_id", offsetof(ModelConfig, bos_id)},
    {"eos_id", offsetof(ModelConfig, eos_id)},
    {"pad_id", offsetof(ModelConfig, pad_id)},
    {"unk_id", offsetof(ModelConfig, unk_id)},
};

static bool parse_int(const char *s, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < -(1L << 30) || v > (1L << 30)) return false;
    *out = (int)v;
    return true;
}

static int pick(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static bool bad_meta(Err *e, const char *where, const char *key, const char *val, const char *want) {
    return err_set(e, "%s %s = \"%s\" is not %s", where, key, val, want);
}

// Counts layers.0, layers.1, ... of one side; fails if the file holds a layer past a gap.
static bool count_layers(const StFile *f, const char *side, int *n, const char *what, Err *e) {
    char name[128];
    for (*n = 0;; (*n)++) {
        snprintf(name, sizeof name, "transformer.%s.layers.%d.self_attn.in_proj_weight", side, *n);
        if (!st_find(f, name)) break;
    }
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "transformer.%s.layers.", side);
    for (int i = 0; i < f->n_entries; i++) {
        const char *nm = f->entries[i].name;
        if (strncmp(nm, prefix, (size_t)plen) == 0 && atoi(nm + plen) >= *n)
            return err_set(e, "%s: tensor '%s' belongs to %s layer %d, but layer %d has no "
                           "self_attn.in_proj_weight", what, nm, side, atoi(nm + plen), *n);
    }
    return true;
}

static bool need_2d(const StFile *f, const char *name, const StEntry **out, const char *what, Err *e) {
    *out = st_find(f, name);
    if (!*out) return err_set(e, "%s: missing tensor '%s'", what, name);
    if ((*out)->shape.ndim != 2 && strcmp(name, "positional_encoding.pos_embedding") != 0)
        return err_set(e, "%s: tensor '%s' should be a matrix", what, name);
    return true;
}

// What the tensor shapes alone say about the configuration.
static bool infer_from_shapes(ModelConfig *c, const StFile *f, const char *what, Err *e) {
    const StEntry *se, *te, *pe;
    if (!need_2d(f, "src_tok_emb.embedding.weight", &se, what, e) ||
        !need_2d(f, "tgt_tok_emb.embedding.weight", &te, what, e) ||
        !need_2d(f, "positional_encoding.pos_embedding", &pe, what, e))
        return false;
    c->src_vocab_size = se->shape.dim[0];
    c->d_model = se->shape.dim[1];
    c->tgt_vocab_size = te->shape.dim[0];
    c->max_positions = pe->shape.dim[0];
    if (!count_layers(f, "encoder", &c->num_encoder_layers, what, e) ||
        !count_layers(f, "decoder", &c->num_decoder_layers, what, e))
        return false;
    const StEntry *l1 = st_find(f, "transformer.encoder.layers.0.linear1.weight");
    if (!l1) l1 = st_find(f, "transformer.decoder.layers.0.linear1.weight");
    c->dim_feedforward = l1 && l1->shape.ndim == 2 ? l1->shape.dim[0] : 1;
    return true;
}

// Sets one configuration item from its text. The keys are nn.Transformer's argument names
// (plus max_positions and the special token ids); `where` names the source in messages.
static bool config_item(ModelConfig *c, const char *key, const char *val, const char *where,
                        Err *e) {
    int n;
    for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++)
        if (!strcmp(key, int_keys[i].key)) {
            if (!parse_int(val, &n)) return bad_meta(e, where, key, val, "an integer");
            *(int *)((char *)c + int_keys[i].offset) = n;
            return true;
        }
    for (size_t i = 0; i < sizeof id_keys / sizeof id_keys[0]; i++)
        if (!strcmp(key, id_keys[i].key)) {
            if (!parse_int(val, &n)) return bad_meta(e, where, key, val, "an integer");
            *(OptId *)((char *)c + id_keys[i].offset) = (OptId){true, n};
            return true;
        }
    int k;
    if (!strcmp(key, "norm_first")) {
        if ((k = pick(val, (const char *const[]){"false", "true"}, 2)) < 0)
            return bad_meta(e, where, key, val, "\"true\" or \"false\"");
        return c->norm_first = k == 1, true;
    }
    if (!strcmp(key, "activation")) {
        if ((k = pick(val, activation_names, ACT_COUNT)) < 0)
            return bad_meta(e, where, key, val, "\"relu\" or \"gelu\"");
        return c->activation = (Activation)k, true;
    }
    if (!strcmp(key, "layer_norm")) {
        if ((k = pick(val, layer_norm_names, LN_COUNT)) < 0)
            return bad_meta(e, where, key, val, "\"torch\" or \"annotated\"");
        return c->layer_norm = (LayerNormForm)k, true;
    }
    if (!strcmp(key, "layer_norm_eps")) {
        char *end;
        c->layer_norm_eps = strtof(val, &end);
        if (end == val || *end) return bad_meta(e, where, key, val, "a number");
        return true;
    }
    return err_set(e, "%s: '%s' is not a setting stepformer knows", where, key);
}

bool config_parse(ModelConfig *c, const char *text, const char *where, Err *e) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    char *rest = NULL;  // strtok_r: the window's trainer thread parses configurations too
    for (char *tok = strtok_r(buf, " \t,", &rest); tok; tok = strtok_r(NULL, " \t,", &rest)) {
        char *eq = strchr(tok, '=');
        if (!eq) return err_set(e, "%s: config item '%s' should be key=value", where, tok);
        *eq = '\0';
        if (!config_item(c, tok, eq + 1, where, e)) return false;
    }
    return true;
}

// Metadata values override what shapes suggested; the tensor check then catches any
// disagreement between the two. Returns whether nhead was given.
static bool apply_metadata(ModelConfig *c, const StFile *f, bool *has_nhead, const char *what,
                           Err *e) {
    const int enc = c->num_encoder_layers, dec = c->num_decoder_layers;
    char where[300];
    snprintf(where, sizeof where, "%s: metadata", what);
    for (int i = 0; i < f->n_meta; i++) {
        const char *key = f->meta[i].name;
        if (!strcmp(key, "src_tokens") || !strcmp(key, "tgt_tokens") || !strcmp(key, "max_positions"))
            continue;  // vocabularies are read later; the table's rows give max_positions
        if (!config_item(c, key, f->meta[i].value, where, e)) {
            if (strstr(e->msg, "is not a setting")) continue;  // other tools' metadata is fine
            return false;
        }
    }
    if (c->num_encoder_layers != enc || c->num_decoder_layers != dec)
        return err_set(e, "%s: metadata num_encoder_layers = %d and num_decoder_layers = %d, but "
                       "the file holds %d and %d such layers", what, c->num_encoder_layers,
                       c->num_decoder_layers, enc, dec);
    *has_nhead = st_meta(f, "nhead") != NULL;
    return true;
}

// A flag fills what the metadata left out; contradicting the metadata is an error.
#define OVERRIDE(has, key, same, assign, fmt, flagval, metaval)                                \
    if (ov->has) {                                                                             \
        if (st_meta(f, key) && !(same))                                                        \
            return err_set(e, "%s: the flag says %s " fmt " but the file's metadata says " fmt, \
                           what, key, flagval, metaval);                                       \
        assign;                                                                                \
    }

static bool apply_overrides(ModelConfig *c, const StFile *f, const ModelOverrides *ov,
                            bool *has_nhead, const char *what, Err *e) {
    OVERRIDE(has_nhead, "nhead", c->nhead == ov->nhead, (c->nhead = ov->nhead, *has_nhead = true),
             "%d", ov->nhead, c->nhead)
    OVERRIDE(has_norm_first, "norm_first", c->norm_first == ov->norm_first,
             c->norm_first = ov->norm_first, "%d", ov->norm_first, c->norm_first)
    OVERRIDE(has_layer_norm, "layer_norm", c->layer_norm == ov->layer_norm,
             c->layer_norm = ov->layer_norm, "%s", layer_norm_names[ov->layer_norm],
             layer_norm_names[c->layer_norm])
    OVERRIDE(has_activation, "activation", c->activation == ov->activation,
             c->activation = ov->activation, "%s", activation_names[ov->activation],
             activation_names[c->activation])
    OVERRIDE(has_eps, "layer_norm_eps", c->layer_norm_eps == ov->eps, c->layer_norm_eps = ov->eps,
             "%g", (double)ov->eps, (double)c->layer_norm_eps)
    OVERRIDE(has_bos, "bos_id", c->bos_id.id == ov->bos, c->bos_id = ((OptId){true, ov->bos}),
             "%d", ov->bos, c->bos_id.id)
    OVERRIDE(has_eos, "eos_id", c->eos_id.id == ov->eos, c->eos_id = ((OptId){true, ov->eos}),
             "%d", ov->eos, c->eos_id.id)
    OVERRIDE(has_pad, "pad_id", c->pad_id.id == ov->pad, c->pad_id = ((OptId){true, ov->pad}),
             "%d", ov->pad, c->pad_id.id)
    return true;
}

typedef struct {
    const StFile *f;
    const ModelConfig *c;
    const char *what;
    Err *e;
    bool ok;
} CheckCtx;

static void check_tensor(void *ctx, const char *name, Shape want, int kind) {
    (void)kind;
    CheckCtx *k = ctx;
    if (!k->ok) return;
    const StEntry *en = st_find(k->f, name);
    char a[64], b[64];
    if (!en)
        k->ok = err_set(k->e, "%s: missing tensor '%s' (a model with %d encoder and %d decoder "
                        "layers needs it)", k->what, name, k->c->num_encoder_layers,
                        k->c->num_decoder_layers);
    else if (!shape_eq(&en->shape, &want))
        k->ok = err_set(k->e, "%s: tensor '%s' has shape %s, but the configuration (d_model %d, "
                        "dim_feedforward %d, vocab %d/%d) needs %s", k->what, name,
                        shape_str(&en->shape, a, sizeof a), k->c->d_model, k->c->dim_feedforward,
                        k->c->src_vocab_size, k->c->tgt_vocab_size, shape_str(&want, b, sizeof b));
}

static bool load_vocab(Vocab *v, const StFile *f, const char *key, int size, const char *what,
                       bool *has, Err *e) {
    const char *json = st_meta(f, key);
    if (!json) return vocab_numbered(v, size, e);
    char where[320];
    snprintf(where, sizeof where, "%s: metadata %s", what, key);
    if (!vocab_from_json(v, json, where, e)) return false;
    if (v->n != size)
        return err_set(e, "%s holds %d tokens, but the vocabulary size is %d", where, v->n, size);
    *has = true;
    return true;
}

static bool configure(Model *m, const ModelOverrides *ov, const char *what, Err *e) {
    ModelConfig *c = &m->cfg;
    *c = (ModelConfig){.norm_first = false, .layer_norm_eps = 1e-5f, .activation = ACT_RELU,
                       .layer_norm = LN_TORCH};
    bool has_nhead = false;
    if (!infer_from_shapes(c, &m->weights, what, e) ||
        !apply_metadata(c, &m->weights, &has_nhead, what, e) ||
        !apply_overrides(c, &m->weights, ov, &has_nhead, what, e))
        return false;
    if (!has_nhead)
        return err_set(e, "%s: the file has no nhead in its metadata and its shapes cannot tell "
                       "the number of heads: pass --nhead N", what);
    if (!config_check(c, what, e)) return false;
    CheckCtx k = {&m->weights, c, what, e, true};
    model_layout(c, check_tensor, &k);
    if (!k.ok) return false;
    bool hs = false, ht = false;
    if (!load_vocab(&m->src_vocab, &m->weights, "src_tokens", c->src_vocab_size, what, &hs, e) ||
        !load_vocab(&m->tgt_vocab, &m->weights, "tgt_tokens", c->tgt_vocab_size, what, &ht, e))
        return false;
    m->has_vocab = hs && ht;
    return true;
}

bool model_load(Model *m, const char *path, const ModelOverrides *ov, Err *e) {
    memset(m, 0, sizeof *m);
    static const ModelOverrides none;
    if (!st_load(&m->weights, path, e)) return false;
    snprintf(m->source, sizeof m->source, "%s", path);
    if (!configure(m, ov ? ov : &none, path, e)) {
        model_free(m);
        return false;
    }
    return true;
}

// ---- random initialisation -----------------------------------------------------------------

typedef struct {
    StFile *f;
    size_t at;  // floats used in the arena so far (sizing pass: counted only)
    Rng rng;
    int P, C;
} InitCtx;

static void size_tensor(void *ctx, const char *name, Shape s, int kind) {
    (void)name, (void)kind;
    InitCtx *k = ctx;
    k->at += ((size_t)shape_numel(&s) + 15) / 16 * 16;
    k->f->n_entries++;
}

static void init_tensor(void *ctx, const char *name, Shape s, int kind) {
    InitCtx *k = ctx;
    StEntry *en = &k->f->entries[k->f->n_entries++];
    size_t n = (size_t)shape_numel(&s);
    en->name = malloc(strlen(name) + 1);
    if (en->name) strcpy(en->name, name);
    en->shape = s;
    en->data = k->f->arena + k->at;
    k->at += (n + 15) / 16 * 16;
    if (kind == INIT_MATRIX) {
        // Xavier uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
        const float a = sqrtf(6.0f / (float)(s.dim[0] + s.dim[1]));
        for (size_t i = 0; i < n; i++) en->data[i] = (2.0f * rng_uniform(&k->rng) - 1.0f) * a;
    } else if (kind == INIT_POSITIONS) {
        positional_encoding(en->data, k->P, k->C, 10000.0f);
    } else {
        for (size_t i = 0; i < n; i++) en->data[i] = kind == INIT_ONE ? 1.0f : 0.0f;
    }
}

bool model_init_random(Model *m, const ModelConfig *cfg, uint64_t seed, Err *e) {
    memset(m, 0, sizeof *m);
    if (!config_check(cfg, "configuration", e)) return false;
    m->cfg = *cfg;
    InitCtx k = {&m->weights, 0, {seed}, cfg->max_positions, cfg->d_model};
    model_layout(cfg, size_tensor, &k);
    m->weights.arena = calloc(k.at ? k.at : 1, sizeof(float));  // alignment gaps read as 0
    m->weights.entries = calloc((size_t)m->weights.n_entries, sizeof(StEntry));
    if (!m->weights.arena || !m->weights.entries) {
        model_free(m);
        return err_set(e, "out of memory for %zu parameters", k.at);
    }
    m->weights.n_entries = 0;
    k.at = 0;
    model_layout(cfg, init_tensor, &k);
    snprintf(m->source, sizeof m->source, "random weights (seed %llu)", (unsigned long long)seed);
    if (!vocab_numbered(&m->src_vocab, cfg->src_vocab_size, e) ||
        !vocab_numbered(&m->tgt_vocab, cfg->tgt_vocab_size, e)) {
        model_free(m);
        return false;
    }
    return true;
}

// ---- saving ---------------------------------------------------------------------------------

typedef struct {
    const Model *m;
    StTensor *t;
    int n;
} SaveCtx;

static void collect_tensor(void *ctx, const char *name, Shape s, int kind) {
    (void)s, (void)kind;
    SaveCtx *k = ctx;
    const StEntry *en = model_weight(k->m, name);
    assert(en);  // a loaded or initialised model has every tensor of its layout
    k->t[k->n++] = (StTensor){en->name, en->shape, en->data};
}

bool model_save(const Model *m, const char *path, Err *e) {
    const ModelConfig *c = &m->cfg;
    StTensor *t = calloc((size_t)m->weights.n_entries + 1, sizeof *t);
    if (!t) return err_set(e, "out of memory");
    SaveCtx k = {m, t, 0};
    model_layout(c, collect_tensor, &k);
    char v[16][32];
    StMeta meta[24];
    int nm = 0;
    for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++) {
        snprintf(v[nm], sizeof v[nm], "%d", *(const int *)((const char *)c + int_keys[i].offset));
        meta[nm] = (StMeta){(char *)int_keys[i].key, v[nm]}, nm++;
    }
    snprintf(v[nm], sizeof v[nm], "%.9g", (double)c->layer_norm_eps);  // round-trips a float
    meta[nm] = (StMeta){"layer_norm_eps", v[nm]}, nm++;
    meta[nm++] = (StMeta){"norm_first", c->norm_first ? "true" : "false"};
    meta[nm++] = (StMeta){"activation", (char *)activation_names[c->activation]};
    meta[nm++] = (StMeta){"layer_norm", (char *)layer_norm_names[c->layer_norm]};
    for (size_t i = 0; i < sizeof id_keys / sizeof id_keys[0]; i++) {
        const OptId *id = (const OptId *)((const char *)c + id_keys[i].offset);
        if (!id->set) continue;
        snprintf(v[nm], sizeof v[nm], "%d", id->id);
        meta[nm] = (StMeta){(char *)id_keys[i].key, v[nm]}, nm++;
    }
    char *src = m->has_vocab ? vocab_to_json(&m->src_vocab) : NULL;
    char *tgt = m->has_vocab ? vocab_to_json(&m->tgt_vocab) : NULL;
    if (src && tgt) {
        meta[nm++] = (StMeta){"src_tokens", src};
        meta[nm++] = (StMeta){"tgt_tokens", tgt};
    }
    bool ok = st_save(path, t, k.n, meta, nm, e);
    free(src);
    free(tgt);
    free(t);
    return ok;
}
