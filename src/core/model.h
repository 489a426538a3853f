// model.h: a model is what its program declares: the configuration, and one tensor for each
// `param` / `buffer` line (see program.h), under the names the implementation the program
// mirrors gives them in its PyTorch state_dict. The standard lessons declare the tensors of
// PyTorch's Seq2SeqTransformer ("Language Translation with nn.Transformer"); the Annotated
// Transformer's lesson declares src_embed.0.lut.weight, ...; and so on.
//
// Loading checks every declared tensor against the file (present, with its declared shape),
// copies exactly those into the model and notes the file's other tensors; a fresh model
// initialises each tensor as its declaration says.
#ifndef STEPFORMER_MODEL_H
#define STEPFORMER_MODEL_H

#include "kernels.h"
#include "safetensors.h"
#include "conf.h"
#include "vocab.h"

struct Program;

typedef enum { ACT_RELU, ACT_GELU, ACT_COUNT } Activation;

typedef struct {
    bool set;
    int id;
} OptId;

// The typed view of the configuration that C code reads (conf_to_config): 0 (or unset) for a
// name the configuration does not hold.
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

typedef enum { INIT_XAVIER, INIT_NORMAL, INIT_UNIFORM, INIT_ZEROS, INIT_ONES, INIT_SINUSOID, INIT_COUNT } InitKind;
extern const char *const init_names[INIT_COUNT];

// One declared tensor.
typedef struct {
    char *name;      // the full weight key: "transformer.encoder.layers.0.linear1.weight"
    Shape shape;
    InitKind init;
    float init_arg;  // normal: the std; uniform: the bound
    bool fixed;      // a buffer: saved with the model, never trained
    int line;        // the program line that declares it
} ParamDecl;

typedef struct {
    ModelConfig cfg;             // the typed view of conf
    Conf conf;                   // every configuration value, with where it came from
    ParamDecl *params;           // [n_params] what the program declares, in its order
    int n_params;
    Vocab src_vocab, tgt_vocab;  // from metadata, or numbered "0".."V-1"
    bool has_vocab;              // the file carried src_tokens / tgt_tokens
    StFile weights;              // entries[i] is params[i]; nothing else
    char source[256];            // the file path, or "random weights (seed N)"
    char note[1024];             // what loading noticed but accepted (ignored tensors, unused
                                 // configuration names): one paragraph for stderr, or ""
} Model;

// The base configuration: d_model 512, 8 heads, 6+6 layers, d_ff 2048, vocab 1000.
ModelConfig config_base(void);
// "k=v k=v ..." for every field of c that is set (for use as a ConfSource).
void config_text(const ModelConfig *c, char *buf, size_t n);
// Reads the typed view out of a configuration.
void conf_to_config(const Conf *conf, ModelConfig *out);

// Resolves the configuration of `p` (sources, then the file's metadata and shapes, then the
// program's defaults), then checks and copies every declared tensor out of the file at `path`.
bool model_load(Model *m, const char *path, const struct Program *p, const ConfSpec *cs, Err *e);
// The same for a file already read (f is taken over, and left empty).
bool model_from_file(Model *m, StFile *f, const char *path, const struct Program *p, const ConfSpec *cs,
                     Err *e);
// Fresh weights from a seed, each as its declaration says.
bool model_init_random(Model *m, const struct Program *p, const ConfSpec *cs, uint64_t seed, Err *e);
// The same with every name of a typed configuration (what tests and benchmarks start from).
bool model_init_config(Model *m, const struct Program *p, const ModelConfig *c, uint64_t seed, Err *e);
// Writes the declared tensors, with the configuration and the vocabulary in the metadata.
bool model_save(const Model *m, const char *path, Err *e);
void model_free(Model *m);

// The tensor called `name`, or NULL; its index in *index when not NULL.
const StEntry *model_weight(const Model *m, const char *name);
int model_weight_index(const Model *m, const char *name);
// The longest input the model takes: max_positions when the configuration has it.
int model_max_len(const Model *m);

extern const char *const activation_names[ACT_COUNT];
extern const char *const layer_norm_names[LN_COUNT];

#endif
