// hub_save.c: a model written as a folder in the hub's layout (hub_save.h).
#define _XOPEN_SOURCE 700  // realpath
#include "hub_save.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "declare.h"

// Calls f on each space-separated word of list.
static void each_word(const char *list, void (*f)(const char *word, void *arg), void *arg) {
    char word[64];
    for (const char *s = list; *s;) {
        while (*s == ' ') s++;
        size_t n = strcspn(s, " ");
        if (n && n < sizeof word) {
            memcpy(word, s, n), word[n] = '\0';
            f(word, arg);
        }
        s += n;
    }
}

typedef struct {
    cJSON *root;
    const Conf *conf;
    bool as_bool;
} FieldWriter;

static void write_field(const char *name, void *arg) {
    const FieldWriter *w = arg;
    double v;
    bool known = conf_get(w->conf, name, &v);
    for (int k = 0; !known && k < hub_n_same; k++) known = !strcmp(name, hub_same[k][1]) && conf_get(w->conf, hub_same[k][0], &v);
    if (!known) return;
    if (w->as_bool) cJSON_AddBoolToObject(w->root, name, v != 0);
    else cJSON_AddNumberToObject(w->root, name, v);
}

static const char *const torch_dtypes[3] = {[ST_F32] = "float32", [ST_F16] = "float16", [ST_BF16] = "bfloat16"};

// config.json: the family's class and fields, the token ids, the dtype and the name.
static char *config_json(const Model *m, const HubFamily *fam, StDtype dtype, const char *name) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "_name_or_path", name);
    cJSON *arch = cJSON_AddArrayToObject(root, "architectures");
    cJSON_AddItemToArray(arch, cJSON_CreateString(fam->architecture));
    cJSON_AddStringToObject(root, "model_type", fam->model_type);
    FieldWriter w = {root, &m->conf, false};
    each_word(fam->fields, write_field, &w);
    w.as_bool = true;
    each_word(fam->bools, write_field, &w);
    char act[32];  // the first of the values the program computes
    snprintf(act, sizeof act, "%.*s", (int)strcspn(fam->act, " "), fam->act);
    cJSON_AddStringToObject(root, fam->act_field, act);
    if (m->cfg.bos_id.set) cJSON_AddNumberToObject(root, fam->start, m->cfg.bos_id.id);  // bos_token_id, decoder_start_token_id
    if (m->cfg.eos_id.set) cJSON_AddNumberToObject(root, "eos_token_id", m->cfg.eos_id.id);
    if (m->cfg.pad_id.set && strcmp(fam->start, "bos_token_id")) cJSON_AddNumberToObject(root, "pad_token_id", m->cfg.pad_id.id);
    cJSON_AddStringToObject(root, "torch_dtype", torch_dtypes[dtype]);
    char *s = cJSON_Print(root);
    cJSON_Delete(root);
    return s;
}

static bool write_text(const char *path, const char *text, Err *e) {
    FILE *f = fopen(path, "wb");
    if (!f) return err_set(e, "%s: cannot write: %s", path, strerror(errno));
    const size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n && fputc('\n', f) != EOF;
    ok = fclose(f) == 0 && ok;
    return ok || err_set(e, "%s: write failed: %s", path, strerror(errno));
}

// A copy of `from` at `to`; nothing when the two are one file (the folder's own tokenizer.json
// given as --tokenizer: opening it to write would empty it first).
static bool copy_file(const char *from, const char *to, Err *e) {
    char a[PATH_MAX], b[PATH_MAX];
    if (realpath(from, a) && realpath(to, b) && !strcmp(a, b)) return true;
    FILE *in = fopen(from, "rb");
    if (!in) return err_set(e, "%s: cannot read: %s", from, strerror(errno));
    FILE *out = fopen(to, "wb");
    if (!out) return fclose(in), err_set(e, "%s: cannot write: %s", to, strerror(errno));
    char buf[65536];
    size_t n;
    bool ok = true;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    ok = !ferror(in) && ok;
    fclose(in);
    ok = fclose(out) == 0 && ok;
    return ok || err_set(e, "%s: copying %s failed: %s", to, from, strerror(errno));
}

// Whether weight i is the second (or later) name of a tie that is on and holds the first's
// numbers: the hub's files leave such a tensor out (lm_head when tie_word_embeddings).
static bool tied_copy(const Model *m, const Program *p, int i) {
    const StEntry *en = &m->weights.entries[i];
    for (int s = 0; s < p->n; s++) {
        const Stmt *st = &p->stmts[s];
        if (!program_tie_on(st, &m->conf)) continue;
        const int first = model_weight_index(m, st->args[0].text);
        for (int k = 1; first >= 0 && k < st->n_args; k++)
            if (!strcmp(st->args[k].text, en->name) && model_same_numbers(m, first, i)) return true;
    }
    return false;
}

// Whether weight i is the first name of a tie that is on whose other names are left out.
static bool has_copies(const Model *m, const Program *p, int i) {
    for (int s = 0; s < p->n; s++) {
        const Stmt *st = &p->stmts[s];
        if (!program_tie_on(st, &m->conf) || strcmp(st->args[0].text, m->weights.entries[i].name)) continue;
        for (int k = 1; k < st->n_args; k++) {
            const int w = model_weight_index(m, st->args[k].text);
            if (w >= 0 && tied_copy(m, p, w)) return true;
        }
    }
    return false;
}

static bool save_weights(const Model *m, const Program *p, const HubFamily *fam, const char *path, StDtype dtype, Err *e) {
    StTensor *t = calloc((size_t)m->weights.n_entries + 1, sizeof *t);
    int *which = calloc((size_t)m->weights.n_entries + 1, sizeof *which);
    if (!t || !which) return free(t), free(which), err_code(e, ERR_MEMORY, "out of memory");
    // The family's alias names a table that stands for its tied copies (Marian's model.shared.weight
    // for the encoder's, the decoder's and the head's), as transformers saves it.
    char alias[128] = "";
    const char *to = fam->alias ? strchr(fam->alias, ' ') : NULL;
    if (to) snprintf(alias, sizeof alias, "%.*s", (int)(to - fam->alias), fam->alias);
    int n = 0;
    for (int i = 0; i < m->weights.n_entries; i++) {
        const StEntry *en = &m->weights.entries[i];
        const bool shared = to && !strcmp(en->name, to + 1) && has_copies(m, p, i);
        if (!tied_copy(m, p, i)) which[n] = i, t[n++] = (StTensor){shared ? alias : en->name, en->shape, en->data};
    }
    StMeta meta[1] = {{"format", "pt"}};  // what transformers' save_pretrained writes
    ModelNumbers get = {m, which, NULL};  // a tensor held as half (data NULL) is widened as it is written
    const bool ok = st_save_stream(path, t, n, meta, 1, dtype, model_numbers_get, &get, e);
    free(get.buf), free(t), free(which);
    return ok;
}

bool hub_save(const Model *m, const Program *p, const char *dir, StDtype dtype, const char *tokenizer,
              const char *name, Err *e) {
    const HubFamily *fam = hub_family_of_program(p->file);
    if (!fam) {
        char list[256] = "";
        for (int k = 0; k < hub_n_families; k++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", hub_families[k].program);
        return err_set(e, "%s: a folder in the hub's layout is written for a family's own program (%s), whose "
                       "config.json names a model_type", p->file, list);
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return err_set(e, "%s: cannot make the folder: %s", dir, strerror(errno));
    if (!hub_is_folder(dir)) return err_set(e, "%s: not a folder", dir);
    char path[4200];
    char *json = config_json(m, fam, dtype, name);
    if (!json) return err_code(e, ERR_MEMORY, "out of memory");
    snprintf(path, sizeof path, "%s/config.json", dir);
    bool ok = write_text(path, json, e);
    free(json);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    ok = ok && save_weights(m, p, fam, path, dtype, e);
    if (!ok || !tokenizer) return ok;
    if (!hub_is_folder(tokenizer)) {
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        return copy_file(tokenizer, path, e);
    }
    static const char *const marian[] = {"source.spm", "target.spm", "vocab.json", "target_vocab.json"};
    for (int i = 0; ok && i < 4; i++) {  // a Marian folder's tokenizer: its files (target_vocab.json when it has one)
        char from[4200];
        snprintf(from, sizeof from, "%s/%s", tokenizer, marian[i]);
        snprintf(path, sizeof path, "%s/%s", dir, marian[i]);
        if (i < 3 || access(from, R_OK) == 0) ok = copy_file(from, path, e);
    }
    return ok;
}
