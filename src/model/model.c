// model.c: the configuration's typed view, and looking tensors up.
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const activation_names[ACT_COUNT] = {"relu", "gelu"};
const char *const layer_norm_names[LN_COUNT] = {"torch", "annotated"};

ModelConfig config_base(void) {
    return (ModelConfig){.d_model = 512, .nhead = 8, .num_encoder_layers = 6,
                         .num_decoder_layers = 6, .dim_feedforward = 2048,
                         .src_vocab_size = 1000, .tgt_vocab_size = 1000, .max_positions = 128,
                         .norm_first = false, .layer_norm_eps = 1e-5f,
                         .activation = ACT_RELU, .layer_norm = LN_TORCH,
                         .bos_id = {true, 2}, .eos_id = {true, 3}, .pad_id = {true, 1},
                         .unk_id = {true, 0}};
}

// The int fields of ModelConfig under their configuration names.
#define INT_FIELDS(X)                                                                           \
    X(d_model) X(nhead) X(num_encoder_layers) X(num_decoder_layers) X(dim_feedforward)          \
    X(src_vocab_size) X(tgt_vocab_size) X(max_positions)
#define ID_FIELDS(X) X(bos_id) X(eos_id) X(pad_id) X(unk_id)

void config_text(const ModelConfig *c, char *buf, size_t n) {
    size_t k = 0;
#define PUT_INT(f) if (c->f && k < n) k += (size_t)snprintf(buf + k, n - k, #f "=%d ", c->f);
#define PUT_ID(f) if (c->f.set && k < n) k += (size_t)snprintf(buf + k, n - k, #f "=%d ", c->f.id);
    buf[0] = '\0';
    INT_FIELDS(PUT_INT)
    ID_FIELDS(PUT_ID)
    if (k < n)
        snprintf(buf + k, n - k, "layer_norm_eps=%.9g norm_first=%s activation=%s layer_norm=%s",
                 (double)c->layer_norm_eps, c->norm_first ? "true" : "false", activation_names[c->activation],
                 layer_norm_names[c->layer_norm]);
#undef PUT_INT
#undef PUT_ID
}

static int whole(const Conf *conf, const char *name, int otherwise) {
    double v;
    if (!conf_get(conf, name, &v) || !(fabs(v) <= (1 << 30)) || v != floor(v)) return otherwise;
    return (int)v;
}

void conf_to_config(const Conf *conf, ModelConfig *c) {
    memset(c, 0, sizeof *c);
    double v;
#define GET_INT(f) c->f = whole(conf, #f, 0);
#define GET_ID(f) c->f.set = conf_get(conf, #f, &v) && v == floor(v) && fabs(v) < (1 << 24), c->f.id = c->f.set ? (int)v : 0;
    INT_FIELDS(GET_INT)
    ID_FIELDS(GET_ID)
#undef GET_INT
#undef GET_ID
    c->layer_norm_eps = conf_get(conf, "layer_norm_eps", &v) ? (float)v : 1e-5f;
    c->norm_first = whole(conf, "norm_first", 0) == 1;
    c->activation = whole(conf, "activation", 0) == 1 ? ACT_GELU : ACT_RELU;
    c->layer_norm = whole(conf, "layer_norm", 0) == 1 ? LN_ANNOTATED : LN_TORCH;
}

int model_weight_index(const Model *m, const char *name) {
    const StEntry *en = st_find(&m->weights, name);
    return en ? (int)(en - m->weights.entries) : -1;
}

const StEntry *model_weight(const Model *m, const char *name) {
    int i = model_weight_index(m, name);
    return i < 0 ? NULL : &m->weights.entries[i];
}

int model_max_len(const Model *m) {
    enum { NO_TABLE_LIMIT = 1024 };  // a program without a positional table of fixed rows
    return m->cfg.max_positions > 0 ? m->cfg.max_positions : NO_TABLE_LIMIT;
}

void model_free(Model *m) {
    st_free(&m->weights);
    free(m->half_arena), free(m->wide_at);
    vocab_free(&m->src_vocab);
    vocab_free(&m->tgt_vocab);
    for (int i = 0; i < m->n_params + m->n_absent; i++) free(m->params[i].name);
    free(m->params);
    conf_free(&m->conf);
    if (m->tgt_tokenizer != m->tokenizer) tokenizer_free(m->tgt_tokenizer);
    tokenizer_free(m->tokenizer);
    memset(m, 0, sizeof *m);
}
