// model.h: an encoder-decoder Transformer's configuration and weights.
//
// Weights use the key names of PyTorch's Seq2SeqTransformer ("Language Translation with
// nn.Transformer"): src_tok_emb.embedding.weight [Vs, C], tgt_tok_emb.embedding.weight
// [Vt, C], positional_encoding.pos_embedding [P, 1, C], transformer.encoder.layers.{i}.*,
// transformer.decoder.layers.{i}.*, transformer.{encoder,decoder}.norm.*, generator.*.
// The configuration rides in the file's __metadata__ under nn.Transformer's argument names.
#ifndef STEPFORMER_MODEL_H
#define STEPFORMER_MODEL_H

#include "kernels.h"
#include "safetensors.h"
#include "vocab.h"

typedef enum { ACT_RELU, ACT_GELU, ACT_COUNT } Activation;

typedef struct {
    bool set;
    int id;
} OptId;

typedef struct {
    int d_model;             // C
    int nhead;               // H
    int num_encoder_layers;  // N_enc
    int num_decoder_layers;  // N_dec
    int dim_feedforward;     // F
    int src_vocab_size;      // Vs
    int tgt_vocab_size;      // Vt
    int max_positions;       // P, rows of the positional table
    bool norm_first;         // pre-norm (true) or post-norm (false)
    float layer_norm_eps;
    Activation activation;
    LayerNormForm layer_norm;
    OptId bos_id, eos_id, pad_id, unk_id;  // target side (pad also masks source keys)
} ModelConfig;

// What the command line may supply for a file that lacks metadata. A field counts only when
// its `has_` flag is set; a value that contradicts the file's metadata is an error.
typedef struct {
    bool has_nhead, has_norm_first, has_layer_norm, has_activation, has_eps;
    bool has_bos, has_eos, has_pad;
    int nhead;
    bool norm_first;
    LayerNormForm layer_norm;
    Activation activation;
    float eps;
    int bos, eos, pad;
} ModelOverrides;

typedef struct {
    ModelConfig cfg;
    Vocab src_vocab, tgt_vocab;  // from metadata, or numbered "0".."V-1"
    bool has_vocab;              // the file carried src_tokens / tgt_tokens
    StFile weights;              // every tensor, validated against cfg
    char source[256];            // the file path, or "random (seed N)"
} Model;

// The base configuration: d_model 512, 8 heads, 6+6 layers, d_ff 2048, vocab 1000.
ModelConfig config_base(void);
// Checks sizes and relations (nhead divides d_model, ids in range, ...).
bool config_check(const ModelConfig *c, const char *what, Err *e);

// Applies "key=value" items (nn.Transformer's names, plus max_positions) to c.
bool config_parse(ModelConfig *c, const char *text, const char *where, Err *e);

bool model_load(Model *m, const char *path, const ModelOverrides *ov, Err *e);
// Fresh weights from a seed: Xavier-uniform matrices (as the PyTorch tutorial initialises
// them), zero biases, unit LayerNorm gains, the sinusoidal table in float32.
bool model_init_random(Model *m, const ModelConfig *cfg, uint64_t seed, Err *e);
bool model_save(const Model *m, const char *path, Err *e);
void model_free(Model *m);

// The tensor called `name`, or NULL.
const StEntry *model_weight(const Model *m, const char *name);

// Visits every tensor the configuration requires, in the order files are written.
typedef void (*LayoutFn)(void *ctx, const char *name, Shape shape, int init_kind);
enum { INIT_MATRIX, INIT_ZERO, INIT_ONE, INIT_POSITIONS };
void model_layout(const ModelConfig *c, LayoutFn fn, void *ctx);

extern const char *const activation_names[ACT_COUNT];
extern const char *const layer_norm_names[LN_COUNT];

#endif
