// conf.h: a model's configuration: named numbers, each remembering where it came from.
//
// The configuration is open: a program may use any name (d_model, nhead, d_k, num_classes,
// ...). Values come, in order of precedence, from --config "k=v ...", the lesson's `config:`
// line, the weights file's __metadata__, the shapes of the tensors the program declares, and
// the program's `default` lines. Two sources that give one name different values are an error
// naming both; built-in defaults (`weak`) give way silently to every other source, a program's
// `default` lines included.
//
// A few names are settings the C code itself reads (conf_to_config): the special token ids,
// layer_norm_eps, norm_first (true/false), activation (relu/gelu), layer_norm (torch/annotated).
// Their words are stored as numbers (false/true = 0/1, the index in the name table).
#ifndef STEPFORMER_CONF_H
#define STEPFORMER_CONF_H

#include <stddef.h>

#include "err.h"
#include "safetensors.h"

#define CONF_NAME_MAX 47  // config.json's share_encoder_decoder_embeddings is 32
#define CONF_MAX_ITEMS 4096  // names in one configuration: a file's metadata may not hold more

typedef struct {
    char name[CONF_NAME_MAX + 1];
    double value;
    char from[160];  // "--config", "lessons/x.md:4: config", "the metadata of F", ...
    bool given;      // written by a user (reported when the program never uses it)
    bool weak;       // a built-in default: any other source replaces it
} ConfItem;

typedef struct {
    ConfItem *items;
    int n, cap;
} Conf;

// One source of configuration text, "k=v k=v" (spaces or commas between items).
typedef struct {
    const char *text;
    const char *from;  // names it in messages
    bool weak;
    bool file;  // a model's own file (a hub folder's config.json): not typed by a user, so its
                // names no program reads are not reported
} ConfSource;

enum { CONF_MAX_SOURCES = 6 };
typedef struct {
    ConfSource s[CONF_MAX_SOURCES];  // highest precedence first
    int n;
    bool widen;  // how the model is held, not configured: every tensor as float32, whatever the
                 // file stores (--widen-weights; model.h: model_place)
    struct StReads *later;  // NULL, or where the weights' reads are listed instead of done
                            // (safetensors.h: StReads): the model is placed, its numbers not read
} ConfSpec;

// Appends a source (ignored when text is NULL or the spec is full).
void conf_spec_add(ConfSpec *cs, const char *text, const char *from, bool weak);
// The same for the configuration a model's files carry (ConfSource.file).
void conf_spec_add_file(ConfSpec *cs, const char *text, const char *from);

// Sets name = v. A name already set to another value is an error naming both sources, unless
// one of the two is weak (the strong one wins).
bool conf_set(Conf *c, const char *name, double v, const char *from, bool given, bool weak, Err *e);
const ConfItem *conf_find(const Conf *c, const char *name);
bool conf_get(const Conf *c, const char *name, double *out);
// Parses "k=v ..." into c (values: numbers, true/false, or a setting's words).
bool conf_parse(Conf *c, const char *text, const char *from, bool given, bool weak, Err *e);
// Every source of a spec, in order.
bool conf_apply(Conf *c, const ConfSpec *cs, Err *e);
// The value the first source that gives `name` gives it (before any checking: which standard
// program to load is decided before the model is).
bool conf_spec_get(const ConfSpec *cs, const char *name, double *out);
// The numeric items of a file's __metadata__ (other tools' text metadata is skipped).
bool conf_from_meta(Conf *c, const StFile *f, const char *path, Err *e);
bool conf_copy(Conf *dst, const Conf *src);
void conf_free(Conf *c);

// A settings name the C code reads (never reported as unused).
// The settings' names (at most max written to out); returns how many.
int conf_setting_names(const char **out, int max);
bool conf_is_setting(const char *name);
// The value as text: a whole number, a %.9g number, or a setting's word.
void conf_value_text(const ConfItem *it, char *buf, size_t n);

#endif
