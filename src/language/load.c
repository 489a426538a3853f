// load.c: a model for a program: the configuration resolved from its sources, the program's
// declarations settled on it, then the tensors read from a file or initialised (model_io.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "hub.h"
#include "load.h"

// Notes (for stderr) the configuration names a user gave that the program never uses.
static void note_unused(Model *m, const Program *p) {
    size_t k = strlen(m->note);
    int n = 0;
    for (int i = 0; i < m->conf.n; i++) {
        const ConfItem *it = &m->conf.items[i];
        if (!it->given || conf_is_setting(it->name) || program_mentions(p, it->name)) continue;
        if (k < sizeof m->note)
            k += (size_t)snprintf(m->note + k, sizeof m->note - k, "%s%s (%s)", n++ ? ", " : k ? "\n" : "",
                                  it->name, it->from);
    }
    if (n && k < sizeof m->note)
        snprintf(m->note + k, sizeof m->note - k, ": not used by %s, ignored", p->file);
}

// Whether the C code or the program reads a configuration name: the settings, what the
// program's text uses, the input length, and the vocabulary size of each input it has.
static bool used(const Program *p, const char *name) {
    return conf_is_setting(name) || program_mentions(p, name) || !strcmp(name, "max_positions") ||
           (!strcmp(name, "src_vocab_size") && program_input(p, "src") >= 0) ||
           (!strcmp(name, "tgt_vocab_size") && program_input(p, "tgt") >= 0);
}

// Once noted, the names nothing uses are dropped: saved as metadata, they would later read as
// given values that this program ignores.
static void drop_unused(Model *m, const Program *p) {
    int k = 0;
    for (int i = 0; i < m->conf.n; i++)
        if (used(p, m->conf.items[i].name)) m->conf.items[k++] = m->conf.items[i];
    m->conf.n = k;
}

// Whether a configuration item was written by the user in --config or a lesson's config: (the
// file's metadata and the flags are not typed by hand there).
static bool typed(const ConfItem *it) { return !strcmp(it->from, "--config") || strstr(it->from, ": config"); }

// A name typed in --config or config: that the program never uses, but within a few letters of
// one it does (or of a setting): a misspelling, which would otherwise run the lesson at another
// size. An error naming the closest name.
static bool misspelt(const Model *m, const Program *p, Err *e) {
    enum { SETTINGS = 16 };
    const char **names = malloc(sizeof *names * (size_t)(m->conf.n + SETTINGS));
    if (!names) return err_code(e, ERR_MEMORY, "out of memory");
    int n = conf_setting_names(names, SETTINGS);
    for (int i = 0; i < m->conf.n; i++)
        if (used(p, m->conf.items[i].name)) names[n++] = m->conf.items[i].name;
    bool ok = true;
    for (int i = 0; i < m->conf.n && ok; i++) {
        const ConfItem *it = &m->conf.items[i];
        if (!it->given || !typed(it) || used(p, it->name)) continue;
        const char *near = err_closest(it->name, names, n);
        if (near) ok = err_set(e, "%s: '%s' is not a name %s uses: did you mean '%s'?", it->from, it->name, p->file, near);
    }
    free(names);
    return ok;
}

// The program a model is made for: its file's name and an FNV-1a hash of its statements, saved
// with the model so that a file opened with another program can say which one made it.
static void made_for(Model *m, const Program *p) {
    const char *base = strrchr(p->file, '/');
    snprintf(m->program, sizeof m->program, "%s", base ? base + 1 : p->file);
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < p->n; i++) {
        const Stmt *s = &p->stmts[i];
        const char *parts[3] = {s->name, s->text, s->cond};  // a param's `if` last, when it has one
        const int n = 2 + s->n_args + (s->cond != NULL);
        for (int k = 0; k < n; k++) {
            const char *t = k < 2 ? parts[k] : k < 2 + s->n_args ? s->args[k - 2].text : parts[2];
            for (; t && *t; t++) h = (h ^ (unsigned char)*t) * 1099511628211ull;
            h = (h ^ 0xFF) * 1099511628211ull;  // a separator: "ab","c" is not "a","bc"
        }
    }
    snprintf(m->program_hash, sizeof m->program_hash, "fnv1a-%016llx", h);  // never read as a number
}

// Resolves the configuration and the declarations (file may be NULL).
static bool resolve(Model *m, const Program *p, const ConfSpec *cs, const StFile *f, const char *path, Err *e) {
    made_for(m, p);
    if (!conf_apply(&m->conf, cs, e)) return false;
    if (f && !conf_from_meta(&m->conf, f, path, e)) return false;
    if (!program_declare(p, &m->conf, f, path, &m->params, &m->n_params, &m->n_absent, e)) return false;
    return misspelt(m, p, e) && model_check_config(m, path ? path : p->file, e);
}

// For each declared tensor the file lacks, a name tied to it (`tie`) that the file holds, or
// NULL: nanoGPT's checkpoints may hold transformer.wte.weight without lm_head.weight. Ties chain:
// Marian's lm_head is tied to the decoder's table, which is tied to the encoder's, which the
// file may hold alone.
static const char **tied_sources(const Model *m, const Program *p, const StFile *f) {
    const char **from = calloc((size_t)m->n_params + 1, sizeof *from);
    for (bool found = true; from && found;) {
        found = false;
        for (int i = 0; i < m->n_params; i++) {
            if (from[i] || st_find(f, m->params[i].name)) continue;
            for (int s = 0; s < p->n && !from[i]; s++) {
                const Stmt *t = &p->stmts[s];
                bool named = false;
                for (int k = 0; program_tie_on(t, &m->conf) && k < t->n_args; k++) named = named || !strcmp(t->args[k].text, m->params[i].name);
                for (int k = 0; named && k < t->n_args && !from[i]; k++) {
                    const int w = model_weight_index(m, t->args[k].text);
                    from[i] = st_find(f, t->args[k].text) ? t->args[k].text : w >= 0 && w < m->n_params ? from[w] : NULL;
                }
                found = found || from[i];
            }
        }
    }
    return from;
}

// Fresh weights tied by a `tie` start as one tensor: the others copy the first name's numbers
// (names of another shape are left alone; the backward pass says so).
static void tie_fresh(Model *m, const Program *p) {
    for (int s = 0; s < p->n; s++) {
        const Stmt *t = &p->stmts[s];
        const StEntry *first = program_tie_on(t, &m->conf) ? model_weight(m, t->args[0].text) : NULL;
        for (int k = 1; first && k < t->n_args; k++) {
            const int w = model_weight_index(m, t->args[k].text);
            if (w >= 0 && !m->params[w].fixed && shape_eq(&m->weights.entries[w].shape, &first->shape))
                memcpy(m->weights.entries[w].data, first->data, sizeof(float) * (size_t)shape_numel(&first->shape));
        }
    }
}

bool model_from_file(Model *m, StFile *f, const char *path, const Program *p, const ConfSpec *cs, Err *e) {
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "%s", path);
    static const ConfSpec none;
    bool ok = resolve(m, p, cs ? cs : &none, f, path, e) && (model_declare(m, e) || err_prefix(e, "%s", path));
    const char **from = ok ? tied_sources(m, p, f) : NULL;
    const StEntry **src = ok ? calloc((size_t)m->n_params + 1, sizeof *src) : NULL;
    if (ok && (!from || !src)) ok = err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0; ok && i < m->n_params; i++) src[i] = st_find(f, from[i] ? from[i] : m->params[i].name);
    ok = ok && (model_place(m, src, cs && cs->widen, e) || err_prefix(e, "%s", path));
    f->later = cs ? cs->later : NULL;
    ok = ok && model_copy_from(m, f, path, p->file, from, e) && model_read_vocab(m, f, path, e);
    free(from), free(src);
    if (ok) note_unused(m, p), drop_unused(m, p);
    st_free(f);
    if (!ok) model_free(m);
    return ok;
}

// A hub folder: its weights, and config.json as a source of configuration below the flags.
static bool load_folder(Model *m, const char *dir, const Program *p, const ConfSpec *cs, Err *e) {
    HubFolder h;
    StFile f;
    if (!hub_read_config(&h, dir, e)) return false;
    bool from_bin;
    if (!hub_read_weights(&h, &f, &from_bin, e)) return hub_free(&h), false;
    for (int i = 0; i < f.n_meta; i++) free(f.meta[i].name), free(f.meta[i].value);
    f.n_meta = 0;  // a folder's configuration is its config.json, whatever else wrote metadata
    static const ConfSpec none;
    ConfSpec all = cs ? *cs : none;
    conf_spec_add_file(&all, h.conf_text, h.conf_from);
    bool ok = model_from_file(m, &f, dir, p, &all, e);
    static const char no_tokenizer[] = "the model folder has no tokenizer.json (nor Marian's source.spm and vocab.json), so it "
                                       "takes no text: give ids (--src-ids)";
    Tokenizer *src = NULL, *tgt = NULL;
    if (ok && !hub_tokenizers(dir, &src, &tgt, e)) ok = false, model_free(m);  // all or nothing: a tokenizer that fails fails the model
    if (ok && !src) m->src_vocab.no_text = m->tgt_vocab.no_text = no_tokenizer;
    if (ok && src && !model_use_tokenizers(m, src, tgt, e)) model_free(m), ok = false;  // the model holds them: model_free frees them
    if (ok && from_bin) {  // which file was read: the folder has no safetensors
        const size_t k = strlen(m->note);
        snprintf(m->note + k, sizeof m->note - k, "%sread %s/pytorch_model.bin (no model.safetensors): its pickle was read "
                 "as a state_dict, nothing in it run", k ? "; " : "", dir);
    }
    if (ok) {
        hub_generation(dir, m->generation, sizeof m->generation);
        snprintf(m->family, sizeof m->family, "%s", h.model_type);
        snprintf(m->name_or_path, sizeof m->name_or_path, "%s", h.name_or_path);
    }
    hub_free(&h);
    return ok;
}

bool model_load(Model *m, const char *path, const Program *p, const ConfSpec *cs, Err *e) {
    StFile f;
    memset(m, 0, sizeof *m);
    if (hub_is_folder(path)) return load_folder(m, path, p, cs, e);
    if (!st_open(&f, path, e)) return false;
    return model_from_file(m, &f, path, p, cs, e);
}

bool model_init_random(Model *m, const Program *p, const ConfSpec *cs, uint64_t seed, Err *e) {
    memset(m, 0, sizeof *m);
    static const ConfSpec none;
    bool ok = resolve(m, p, cs ? cs : &none, NULL, NULL, e) &&
              ((model_declare(m, e) && model_place(m, NULL, false, e)) || err_prefix(e, "%s", p->file)) &&
              model_read_vocab(m, NULL, p->file, e);
    if (!ok) {
        model_free(m);
        return false;
    }
    model_init_weights(m, seed);
    tie_fresh(m, p);
    note_unused(m, p);
    drop_unused(m, p);
    return true;
}

bool model_init_config(Model *m, const Program *p, const ModelConfig *c, uint64_t seed, Err *e) {
    char text[512];
    config_text(c, text, sizeof text);
    ConfSpec cs = {0};
    conf_spec_add(&cs, text, "the configuration", false);
    return model_init_random(m, p, &cs, seed, e);
}
