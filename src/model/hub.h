// hub.h: a model folder as the Hugging Face hub ships it: config.json, the weights as
// model.safetensors or as shards listed by model.safetensors.index.json, and tokenizer.json.
//
// config.json's model_type picks the built-in program of its family (hub_families); its numbers
// and true/false fields become configuration items under their own names (n_embd, hidden_size,
// rope_theta, ...), which that program reads. A field whose value the program cannot honour
// (an activation it does not compute, rope_scaling) is refused with one line naming it.
#ifndef STEPFORMER_HUB_H
#define STEPFORMER_HUB_H

#include "err.h"
#include "safetensors.h"
#include "tokenizer.h"

typedef struct {
    const char *model_type;  // config.json's "model_type"
    const char *program;     // the built-in lesson whose program runs it ("gpt2.md")
    const char *extra;       // configuration the family implies ("qkv_bias=1 o_bias=0"), or ""
    // Keys load with or without the model class's prefix: the program names them as the hub's
    // usual files do, and a file saved from the other class is renamed to match.
    const char *strip;       // a prefix taken off the keys that have it ("transformer."), or ""
    const char *add;         // a prefix given to the keys that lack it ("model."), or ""
    const char *top;         // prefixes of keys that stay as they are ("lm_head. final_logits_bias"), or ""
    // What a folder saved for this family writes in its config.json (hub_save): the class,
    // the config.json fields its program reads (numbers; `bools` written true/false).
    const char *architecture;  // "GPT2LMHeadModel"
    const char *fields;        // "n_layer n_head ..."
    const char *bools;         // "tie_word_embeddings ...", or ""
    // The activation: the config.json field, the values the program computes (a folder with
    // another is refused; hub_save writes the first) and why.
    const char *act_field, *act, *act_why;  // "activation_function", "gelu_new gelu_pytorch_tanh", ...
    const char *start;         // the config.json field of the id decoding starts from (bos_id)
    // A key the files may hold in place of one the program names, renamed to it when the file
    // lacks that one: "FROM TO" (Marian's model.shared.weight, which transformers saves in place
    // of the three tied embeddings), or NULL.
    const char *alias;
    const char *tokenizer_files;  // the files its tokenizer is ("tokenizer.json"; Marian's three), which
                                  // the page fetches with the weights; NULL: tokenizer.json
} HubFamily;

extern const HubFamily hub_families[];
extern const int hub_n_families;
// Pairs of config.json fields the programs read as one number, the first: Marian's encoder and
// decoder are alike. A folder where they differ is refused; hub_save writes the second as the first.
extern const char *const hub_same[][2];
extern const int hub_n_same;

typedef struct {
    char dir[4096];
    char model_type[64];
    char name_or_path[256];  // config.json's "_name_or_path", or ""
    const HubFamily *family;
    char *conf_text;         // "name=value ..." from config.json (malloc'd)
    char conf_from[4200];    // "DIR/config.json", for messages
} HubFolder;

// Whether path is a regular file.
bool hub_file_exists(const char *path);
// Whether path is a folder (a hub snapshot), not a file.
bool hub_is_folder(const char *path);
// The family whose program is the lesson file `program` names ("lessons/gpt2.md": gpt2), or NULL.
const HubFamily *hub_family_of_program(const char *program);
// Reads DIR/config.json: the family and the configuration. Fails with one line naming the file
// and what is wrong (no config.json, a model_type with no program: naming those there are).
bool hub_read_config(HubFolder *h, const char *dir, Err *e);
// Reads the folder's weights (one file, or every shard its index names) into f, F16 and BF16
// widened to float32, with the keys renamed to the family's prefix.
// Without model.safetensors or its index, pytorch_model.bin is read (torch_bin.h: nothing in it
// is run); *from_bin says so.
bool hub_read_weights(const HubFolder *h, StFile *f, bool *from_bin, Err *e);
// The files a weights index (model.safetensors.index.json) names, each once in the order its
// weight_map first names it, separated by spaces, into out (cap bytes); false (e set) when the
// index cannot be read or names something that is not a file name.
bool hub_shard_names(const char *index, char *out, size_t cap, Err *e);
void hub_free(HubFolder *h);

// The tokenizers of folder DIR (hub_tok.c), the source side's and the target side's:
//   tokenizer.json: one tokenizer for both (*src == *tgt);
//   Marian's files, as MarianTokenizer reads them: source.spm with vocab.json for the source,
//     target.spm with vocab.json for the target, or with target_vocab.json when config.json sets
//     share_encoder_decoder_embeddings false.
// Both NULL (and true) when the folder has neither. Free with hub_tokenizers_free.
bool hub_tokenizers(const char *dir, Tokenizer **src, Tokenizer **tgt, Err *e);
void hub_tokenizers_free(Tokenizer *src, Tokenizer *tgt);
// How the folder asks to be decoded, when it asks for a beam: "num_beams 4, forced_eos_token_id 0
// (generation_config.json)", from generation_config.json or else config.json;
// "" when neither sets num_beams above 1. stepformer shows it and decodes greedily unless asked.
void hub_generation(const char *dir, char *buf, size_t n);

#endif
