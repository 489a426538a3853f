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
#include "tokenizer.h"
#include "vocab.h"

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

// INIT_SINUSOID: the paper's table, sin and cos interleaved; INIT_SINUSOID_HALVES: Marian's, sin
// in the first half of the columns and cos in the second. A buffer started either way that the
// file lacks is computed (model_copy_from): the formula is the tensor.
typedef enum {
    INIT_XAVIER, INIT_NORMAL, INIT_UNIFORM, INIT_ZEROS, INIT_ONES, INIT_SINUSOID, INIT_SINUSOID_HALVES, INIT_COUNT
} InitKind;
extern const char *const init_names[INIT_COUNT];

// One declared tensor.
typedef struct {
    char *name;      // the full weight key: "transformer.encoder.layers.0.linear1.weight"
    Shape shape;
    InitKind init;
    float init_arg;  // normal: the std; uniform: the bound
    bool fixed;      // a buffer: saved with the model, never trained
    int line;        // the program line that declares it
    bool absent;     // its `if` is 0: declared, but there is no tensor (see Model.n_absent)
    bool optional;   // declared with an `if` (present or absent as the configuration says)
    bool in_out;     // a linear weight stored [in, out] (GPT-2's Conv1D): linear reads it so
} ParamDecl;

typedef struct {
    ModelConfig cfg;             // the typed view of conf
    Conf conf;                   // every configuration value, with where it came from
    ParamDecl *params;           // [n_params + n_absent] what the program declares, in its order,
    int n_params;                // then the n_absent weights an `if` left out (no tensor)
    int n_absent;
    Vocab src_vocab, tgt_vocab;  // from metadata, or numbered "0".."V-1"
    bool has_vocab;              // the file carried src_tokens / tgt_tokens
    StFile weights;              // entries[i] is params[i]; nothing else: each F32 (data, in
                                 // weights.arena) or held as the file stores it (half; see model_place)
    uint16_t *half_arena;        // the matrices held as F16 or BF16, 2 bytes a number, or NULL
    size_t *wide_at;             // [n_params] where tensor i starts among all the numbers as float32:
    size_t n_wide;               // the layout of gradients and Adam's moments (weights.arena's too
                                 // when nothing is half), n_wide floats in all
    char source[256];            // the file path, or "random weights (seed N)"
    char family[64];             // a hub folder's model_type ("gpt2"), or ""
    char name_or_path[256];      // a hub folder's _name_or_path, or ""
    struct Tokenizer *tokenizer; // a hub folder's tokenizer (owned), or NULL: the source side's
    struct Tokenizer *tgt_tokenizer;  // the target side's: the same, or Marian's own (owned)
    char generation[160];        // how a hub folder asks to be decoded (hub_generation), or ""
    char note[1024];             // what loading noticed but accepted (ignored tensors, unused
                                 // configuration names): one paragraph for stderr, or ""
    char program[128];           // the program it was made for (its file's name), saved as metadata
    char program_hash[24];       // "fnv1a-" and a hash of that program's statements, saved beside it
} Model;

// The base configuration: d_model 512, 8 heads, 6+6 layers, d_ff 2048, vocab 1000.
ModelConfig config_base(void);
// "k=v k=v ..." for every field of c that is set (for use as a ConfSource).
void config_text(const ModelConfig *c, char *buf, size_t n);
// Reads the typed view out of a configuration.
void conf_to_config(const Conf *conf, ModelConfig *out);

// Loading a file against a program, or fresh weights for it, needs the program that declares
// the tensors: model_load and model_init_random live with the language (language/load.h).
// What they are made of, once the declarations are settled in m->params and m->conf:

// Sets the typed view from m->conf and checks that its sizes and token ids make sense
// together (`what` names the model in messages).
bool model_check_config(Model *m, const char *what, Err *e);
// The entries, named and shaped, with nothing to hold their numbers yet (model_place).
bool model_declare(Model *m, Err *e);
// Room for every declared tensor's numbers (16-float aligned). src[i] is the file's entry that
// tensor i will be read from (src may be NULL: fresh weights). A matrix (two axes or more) that
// the file stores as F16 or BF16 is held so, 2 bytes a number (StEntry.half): the kernels that
// read matrices widen them as they go, with the same results. Tensors tied to one entry of the
// file share it then. With `widen`, or for anything else, float32 in weights.arena.
bool model_place(Model *m, const StEntry *const *src, bool widen, Err *e);
// Every tensor held as half made float32, in place (training, and --widen-weights, need them so):
// weights.arena then has the wide_at layout.
bool model_widen(Model *m, Err *e);
// Tensor i's numbers as float32, whichever way it is held.
void model_numbers(const Model *m, int i, float *to);  // to: [shape of tensor i]
// For st_save_stream: tensor k of a list is the model's tensor which[k] (k when which is NULL),
// its numbers as float32 in buf (freed by the caller after the write).
typedef struct {
    const Model *m;
    const int *which;
    float *buf;
} ModelNumbers;
const float *model_numbers_get(void *ctx, int k);
// Every tensor's numbers as float32 at wide_at, the padding 0.
void model_wide_copy(const Model *m, float *to);  // to: [n_wide]
// Whether tensors a and b hold the same numbers, bit for bit.
bool model_same_numbers(const Model *m, int a, int b);
// The bytes the weights take (a shared tensor once).
size_t model_bytes(const Model *m);
// Copies every declared tensor out of f: a missing one, or one of another shape, is an error
// naming it and the line of `program_file` that declares it. from[i] (from may be NULL) names
// the file's tensor that params[i] reads when the file lacks its own name (a `tie`), or is
// NULL. The file's other tensors are listed in m->note.
bool model_copy_from(Model *m, const StFile *f, const char *path, const char *program_file, const char *const *from,
                     Err *e);
// Initialises every declared tensor as its declaration says, from a seed.
void model_init_weights(Model *m, uint64_t seed);
// The vocabularies from f's metadata (src_tokens, tgt_tokens), or numbered ones when f is NULL
// or has none.
bool model_read_vocab(Model *m, const StFile *f, const char *what, Err *e);
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

// "PATH: missing tensor 'NAME' (declared at FILE:LINE)", and when the file says it was made for
// another program (its "program" metadata), which one, and how to run it with that program.
bool model_missing_tensor(const StFile *f, const char *path, const char *name, const char *program_file, int line, Err *e);

// Gives the model a tokenizer (taken over): its vocabularies become the tokenizer's labels, and
// text is encoded and ids decoded through it. One the model had (a folder's own) is freed.
bool model_use_tokenizer(Model *m, struct Tokenizer *t, Err *e);
// The same with a tokenizer for each side (Marian's source.spm and target.spm); tgt may be src.
bool model_use_tokenizers(Model *m, struct Tokenizer *src, struct Tokenizer *tgt, Err *e);

#endif
