#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

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

static bool check_id(const OptId *id, const char *name, int vocab, const char *what, Err *e) {
    if (id->set && (id->id < 0 || id->id >= vocab))
        return err_set(e, "%s: %s %d is outside the target vocabulary (0..%d)", what, name, id->id,
                       vocab - 1);
    return true;
}

bool config_check(const ModelConfig *c, const char *what, Err *e) {
    struct { const char *name; int v; int lo; } sizes[] = {
        {"d_model", c->d_model, 1}, {"nhead", c->nhead, 1},
        {"num_encoder_layers", c->num_encoder_layers, 0},
        {"num_decoder_layers", c->num_decoder_layers, 0},
        {"dim_feedforward", c->dim_feedforward, 1}, {"src_vocab_size", c->src_vocab_size, 1},
        {"tgt_vocab_size", c->tgt_vocab_size, 1}, {"positional table rows", c->max_positions, 1}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v < sizes[i].lo || sizes[i].v > (1 << 20))
            return err_set(e, "%s: %s is %d; it must be at least %d", what, sizes[i].name,
                           sizes[i].v, sizes[i].lo);
    if (c->d_model % c->nhead != 0)
        return err_set(e, "%s: nhead %d does not divide d_model %d (each head takes d_model/nhead "
                       "columns)", what, c->nhead, c->d_model);
    if (!(c->layer_norm_eps >= 0.0f) || !isfinite(c->layer_norm_eps))
        return err_set(e, "%s: layer_norm_eps must be a non-negative number", what);
    return check_id(&c->bos_id, "bos_id", c->tgt_vocab_size, what, e) &&
           check_id(&c->eos_id, "eos_id", c->tgt_vocab_size, what, e) &&
           check_id(&c->pad_id, "pad_id", c->tgt_vocab_size, what, e) &&
           check_id(&c->unk_id, "unk_id", c->tgt_vocab_size, what, e);
}

// ---- layout -------------------------------------------------------------------------------

static void attention_layout(const char *p, int C, LayoutFn fn, void *ctx) {
    char n[160];
    snprintf(n, sizeof n, "%s.in_proj_weight", p), fn(ctx, n, shape2(3 * C, C), INIT_MATRIX);
    snprintf(n, sizeof n, "%s.in_proj_bias", p), fn(ctx, n, shape1(3 * C), INIT_ZERO);
    snprintf(n, sizeof n, "%s.out_proj.weight", p), fn(ctx, n, shape2(C, C), INIT_MATRIX);
    snprintf(n, sizeof n, "%s.out_proj.bias", p), fn(ctx, n, shape1(C), INIT_ZERO);
}

static void norm_layout(const char *p, int C, LayoutFn fn, void *ctx) {
    char n[160];
    snprintf(n, sizeof n, "%s.weight", p), fn(ctx, n, shape1(C), INIT_ONE);
    snprintf(n, sizeof n, "%s.bias", p), fn(ctx, n, shape1(C), INIT_ZERO);
}

static void layer_layout(const ModelConfig *c, const char *side, int i, LayoutFn fn, void *ctx) {
    const int C = c->d_model, F = c->dim_feedforward;
    const bool dec = side[0] == 'd';
    char p[128], n[160];
    snprintf(p, sizeof p, "transformer.%s.layers.%d", side, i);
    snprintf(n, sizeof n, "%s.self_attn", p), attention_layout(n, C, fn, ctx);
    if (dec) snprintf(n, sizeof n, "%s.multihead_attn", p), attention_layout(n, C, fn, ctx);
    snprintf(n, sizeof n, "%s.linear1.weight", p), fn(ctx, n, shape2(F, C), INIT_MATRIX);
    snprintf(n, sizeof n, "%s.linear1.bias", p), fn(ctx, n, shape1(F), INIT_ZERO);
    snprintf(n, sizeof n, "%s.linear2.weight", p), fn(ctx, n, shape2(C, F), INIT_MATRIX);
    snprintf(n, sizeof n, "%s.linear2.bias", p), fn(ctx, n, shape1(C), INIT_ZERO);
    for (int k = 1; k <= (dec ? 3 : 2); k++)
        snprintf(n, sizeof n, "%s.norm%d", p, k), norm_layout(n, C, fn, ctx);
}

void model_layout(const ModelConfig *c, LayoutFn fn, void *ctx) {
    const int C = c->d_model;
    for (int i = 0; i < c->num_encoder_layers; i++) layer_layout(c, "encoder", i, fn, ctx);
    norm_layout("transformer.encoder.norm", C, fn, ctx);
    for (int i = 0; i < c->num_decoder_layers; i++) layer_layout(c, "decoder", i, fn, ctx);
    norm_layout("transformer.decoder.norm", C, fn, ctx);
    fn(ctx, "generator.weight", shape2(c->tgt_vocab_size, C), INIT_MATRIX);
    fn(ctx, "generator.bias", shape1(c->tgt_vocab_size), INIT_ZERO);
    fn(ctx, "src_tok_emb.embedding.weight", shape2(c->src_vocab_size, C), INIT_MATRIX);
    fn(ctx, "tgt_tok_emb.embedding.weight", shape2(c->tgt_vocab_size, C), INIT_MATRIX);
    Shape pe = {3, {c->max_positions, 1, C, 0}};
    fn(ctx, "positional_encoding.pos_embedding", pe, INIT_POSITIONS);
}

const StEntry *model_weight(const Model *m, const char *name) { return st_find(&m->weights, name); }

void model_free(Model *m) {
    st_free(&m->weights);
    vocab_free(&m->src_vocab);
    vocab_free(&m->tgt_vocab);
    memset(m, 0, sizeof *m);
}
