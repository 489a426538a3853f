// hub.c: a model folder as the hub ships it (hub.h).
#include "hub.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bounds.h"
#include "conf.h"
#include "torch_bin.h"

#define LLAMA_FIELDS                                                                                          \
    "num_hidden_layers num_attention_heads num_key_value_heads hidden_size intermediate_size head_dim "       \
    "max_position_embeddings vocab_size rms_norm_eps rope_theta"
#define SILU_WHY "the LLaMA family's program computes SwiGLU with SiLU"
const HubFamily hub_families[] = {
    {"gpt2", "gpt2.md", "", "transformer.", "", "lm_head.", "GPT2LMHeadModel",
     "n_layer n_head n_embd n_inner n_positions vocab_size layer_norm_epsilon", "", "activation_function",
     "gelu_new gelu_pytorch_tanh", "GPT-2's program computes GELU with the tanh approximation", "bos_token_id"},
    {"llama", "llama.md", "", "", "model.", "lm_head.", "LlamaForCausalLM", LLAMA_FIELDS,
     "tie_word_embeddings attention_bias mlp_bias", "hidden_act", "silu", SILU_WHY, "bos_token_id"},
    {"qwen2", "llama.md", "qkv_bias=1 o_bias=0", "", "model.", "lm_head.",  // biases on q, k and v; none on o_proj
     "Qwen2ForCausalLM", LLAMA_FIELDS, "tie_word_embeddings", "hidden_act", "silu", SILU_WHY, "bos_token_id"},
    {"marian", "marian.md", "", "", "model.", "lm_head. final_logits_bias", "MarianMTModel",
     "d_model encoder_layers decoder_layers encoder_attention_heads decoder_attention_heads encoder_ffn_dim "
     "decoder_ffn_dim max_position_embeddings vocab_size decoder_vocab_size",
     "scale_embedding share_encoder_decoder_embeddings tie_word_embeddings", "activation_function", "swish silu",
     "Marian's program computes its feed-forward with SiLU (swish)", "decoder_start_token_id",
     "model.shared.weight model.encoder.embed_tokens.weight", "source.spm target.spm vocab.json"},
};
const int hub_n_families = (int)(sizeof hub_families / sizeof hub_families[0]);

const char *const hub_same[][2] = {{"encoder_attention_heads", "decoder_attention_heads"}, {"encoder_ffn_dim", "decoder_ffn_dim"}};
const int hub_n_same = (int)(sizeof hub_same / sizeof hub_same[0]);

bool hub_is_folder(const char *path) {
    struct stat s;
    return path && stat(path, &s) == 0 && S_ISDIR(s.st_mode);
}

const HubFamily *hub_family_of_program(const char *program) {
    const char *base = program ? strrchr(program, '/') : NULL;
    base = base ? base + 1 : program;
    for (int k = 0; base && k < hub_n_families; k++)
        if (!strcmp(hub_families[k].program, base)) return &hub_families[k];
    return NULL;
}

bool hub_file_exists(const char *path) {
    struct stat s;
    return stat(path, &s) == 0 && S_ISREG(s.st_mode);
}

static bool word_in(const char *w, const char *list) {
    const size_t n = strlen(w);
    for (const char *s = strstr(list, w); s; s = strstr(s + 1, w))
        if ((s == list || s[-1] == ' ') && (s[n] == ' ' || !s[n])) return true;
    return false;
}

static bool check_strings(const HubFolder *h, const cJSON *root, Err *e) {
    const HubFamily *f = h->family;  // the activation its program computes
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, f->act_field);
    if (cJSON_IsString(act) && !word_in(act->valuestring, f->act))
        return err_set(e, "%s: \"%s\" is \"%s\", which stepformer does not compute (%s: %s)", h->conf_from,
                       f->act_field, act->valuestring, f->act_why, f->act);
    // Switches whose other setting the programs do not compute: refused, not run wrong.
    static const struct {
        const char *field;
        bool value;  // the one the programs compute
        const char *why;
    } switches[] = {
        {"scale_attn_weights", true, "GPT-2's program divides the scores by sqrt(head width)"},
        {"scale_attn_by_inverse_layer_idx", false, "GPT-2's program does not scale by the layer's index"},
        {"reorder_and_upcast_attn", false, "GPT-2's program computes attention in float32 as it is"},
        {"use_sliding_window", false, "the LLaMA family's program attends to every earlier position"},
        {"normalize_before", false, "Marian's program normalises after each sublayer (post-norm)"},
        {"add_final_layer_norm", false, "Marian's program has no final norm"},
        {"normalize_embedding", false, "Marian's program does not normalise the embeddings"},
        {"static_position_embeddings", true, "Marian's program adds the fixed sinusoidal table"},
    };
    for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, switches[k].field);
        if (cJSON_IsBool(v) && cJSON_IsTrue(v) != switches[k].value)
            return err_set(e, "%s: \"%s\" is %s, which stepformer does not compute (%s)", h->conf_from, switches[k].field,
                           switches[k].value ? "false" : "true", switches[k].why);
    }
    for (int k = 0; k < hub_n_same; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, hub_same[k][0]),
                    *b = cJSON_GetObjectItemCaseSensitive(root, hub_same[k][1]);
        if (cJSON_IsNumber(a) && cJSON_IsNumber(b) && a->valuedouble != b->valuedouble)
            return err_set(e, "%s: \"%s\" is %g and \"%s\" %g: stepformer's Marian program takes them equal", h->conf_from,
                           hub_same[k][0], a->valuedouble, hub_same[k][1], b->valuedouble);
    }
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    if (rs && !cJSON_IsNull(rs))
        return err_set(e, "%s: \"rope_scaling\" is set; stepformer computes plain RoPE only (rope_scaling null)",
                       h->conf_from);
    return true;
}

// Appends "name=value " to the text (names too long for a configuration item are left out:
// no program reads them).
static bool append(char **text, size_t *len, size_t *cap, const char *name, double v) {
    if (strlen(name) > CONF_NAME_MAX) return true;
    char item[CONF_NAME_MAX + 40];
    const int n = snprintf(item, sizeof item, "%s=%.17g ", name, v);
    if (*len + (size_t)n + 1 > *cap) {
        const size_t c = (*cap + (size_t)n + 1) * 2;
        char *t = realloc(*text, c);
        if (!t) return false;
        *text = t, *cap = c;
    }
    memcpy(*text + *len, item, (size_t)n + 1);
    *len += (size_t)n;
    return true;
}

// The numbers and true/false fields, then bos_id and eos_id (stepformer's names) from the
// token ids when those are single numbers, then what the family implies.
static bool conf_items(HubFolder *h, const cJSON *root, Err *e) {
    size_t len = 0, cap = 256;
    h->conf_text = calloc(cap, 1);
    bool ok = h->conf_text != NULL;
    for (const cJSON *it = root->child; it && ok; it = it->next) {
        if (cJSON_IsBool(it)) ok = append(&h->conf_text, &len, &cap, it->string, cJSON_IsTrue(it) ? 1 : 0);
        else if (cJSON_IsNumber(it) && isfinite(it->valuedouble))
            ok = append(&h->conf_text, &len, &cap, it->string, it->valuedouble);
    }
    const char *const ids[][2] = {{h->family->start, "bos_id"}, {"eos_token_id", "eos_id"}, {"pad_token_id", "pad_id"}};
    for (int k = 0; k < 3 && ok; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, ids[k][0]);
        if (cJSON_IsNumber(v)) ok = append(&h->conf_text, &len, &cap, ids[k][1], v->valuedouble);
    }
    if (ok && h->family->extra[0]) {
        const size_t n = strlen(h->family->extra);
        char *t = len + n + 2 > cap ? realloc(h->conf_text, len + n + 2) : h->conf_text;
        ok = t != NULL;
        if (ok) h->conf_text = t, memcpy(t + len, h->family->extra, n + 1);
    }
    return ok || err_code(e, ERR_MEMORY, "%s: out of memory", h->conf_from);
}

static bool family_of(HubFolder *h, const cJSON *root, Err *e) {
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!cJSON_IsString(mt))
        return err_set(e, "%s: no \"model_type\" (it names the family: gpt2, llama, qwen2)", h->conf_from);
    snprintf(h->model_type, sizeof h->model_type, "%s", mt->valuestring);
    for (int k = 0; k < hub_n_families; k++)
        if (!strcmp(hub_families[k].model_type, mt->valuestring)) h->family = &hub_families[k];
    if (h->family) return true;
    char list[256] = "";
    for (int k = 0; k < hub_n_families; k++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", hub_families[k].model_type);
    return err_set(e, "%s: model_type \"%s\" has no program in stepformer (it opens %s)", h->conf_from, mt->valuestring,
                   list);
}

bool hub_read_config(HubFolder *h, const char *dir, Err *e) {
    memset(h, 0, sizeof *h);
    snprintf(h->dir, sizeof h->dir, "%s", dir);
    snprintf(h->conf_from, sizeof h->conf_from, "%s/config.json", dir);
    if (!hub_file_exists(h->conf_from))
        return err_set(e, "%s: a model folder needs config.json, and this one has none", dir);
    char *text;
    size_t n;
    if (!file_read_all(h->conf_from, "the model's configuration", &text, &n, e)) return false;
    cJSON *root = cJSON_ParseWithLength(text, n);
    free(text);
    bool ok = root && cJSON_IsObject(root);
    if (!ok) err_set(e, "%s: not a JSON object", h->conf_from);
    ok = ok && family_of(h, root, e) && check_strings(h, root, e) && conf_items(h, root, e);
    const cJSON *name = ok ? cJSON_GetObjectItemCaseSensitive(root, "_name_or_path") : NULL;
    if (cJSON_IsString(name)) snprintf(h->name_or_path, sizeof h->name_or_path, "%s", name->valuestring);
    cJSON_Delete(root);
    if (!ok) hub_free(h);
    return ok;
}

// Moves every entry of `part` into `all` (names must not repeat): numbers in memory copied into
// one new arena, deferred entries (st_open) with their files.
static bool merge(StFile *all, StFile *part, const char *what, Err *e) {
    size_t floats = 0;
    const StFile *both[2] = {all, part};
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < both[q]->n_entries; i++)
            if (both[q]->entries[i].data) floats += ((size_t)shape_numel(&both[q]->entries[i].shape) + 15) / 16 * 16;
    for (int i = 0; i < part->n_entries; i++)
        if (st_find(all, part->entries[i].name)) {
            err_set(e, "%s: tensor '%s' is in two shards", what, part->entries[i].name);
            return st_free(part), false;
        }
    float *arena = calloc(floats ? floats : 1, sizeof(float));
    StEntry *entries = calloc((size_t)(all->n_entries + part->n_entries) + 1, sizeof *entries);
    char **sources = realloc(all->sources, sizeof *sources * (size_t)(all->n_sources + part->n_sources + 1));
    if (sources) all->sources = sources;
    if (!arena || !entries || !sources)
        return free(arena), free(entries), st_free(part), err_code(e, ERR_MEMORY, "%s: out of memory", what);
    const int first_source = all->n_sources;  // part's files follow all's
    for (int k = 0; k < part->n_sources; k++) all->sources[all->n_sources++] = part->sources[k];
    part->n_sources = 0;
    size_t at = 0;
    int n = 0;
    for (int q = 0; q < 2; q++)
        for (int i = 0; i < both[q]->n_entries; i++) {
            StEntry *src = &both[q]->entries[i];
            entries[n] = *src;
            if (!src->data && q == 1) entries[n].source += first_source;
            src->name = NULL;
            if (src->data) {
                const size_t k = (size_t)shape_numel(&src->shape);
                memcpy(arena + at, src->data, sizeof(float) * k);
                entries[n].data = arena + at;
                at += (k + 15) / 16 * 16;
            }
            n++;
        }
    free(all->entries), free(all->arena);
    all->entries = entries, all->arena = arena, all->n_entries = n;
    part->n_entries = 0;  // its names moved
    st_free(part);
    return st_index(all) || err_code(e, ERR_MEMORY, "%s: out of memory", what);
}

// The bytes a safetensors file's tensors take held in a model, read off its header alone: 2 a
// number for a matrix the file stores as F16 or BF16 (model.h: model_place), else 4 (0 when the
// header cannot be read: st_open then says what is wrong).
static double header_bytes(const char *path) {
    FILE *f = fopen(path, "rb");
    unsigned char b[8];
    double total = 0;
    if (f && fread(b, 1, 8, f) == 8) {
        unsigned long long n = 0;
        for (int i = 7; i >= 0; i--) n = (n << 8) | b[i];
        char *h = n < (1ull << 30) ? malloc((size_t)n + 1) : NULL;
        cJSON *root = h && fread(h, 1, (size_t)n, f) == n ? cJSON_ParseWithLength(h, (size_t)n) : NULL;
        for (const cJSON *t = root ? root->child : NULL; t; t = t->next) {
            double k = 1;
            const cJSON *shape = cJSON_GetObjectItemCaseSensitive(t, "shape"), *dtype = cJSON_GetObjectItemCaseSensitive(t, "dtype");
            for (const cJSON *d = cJSON_IsArray(shape) ? shape->child : NULL; d; d = d->next) k *= cJSON_IsNumber(d) ? d->valuedouble : 0;
            const bool half = cJSON_IsString(dtype) && (!strcmp(dtype->valuestring, "F16") || !strcmp(dtype->valuestring, "BF16"));
            total += cJSON_IsArray(shape) ? k * (half && cJSON_GetArraySize(shape) >= 2 ? 2 : 4) : 0;
        }
        cJSON_Delete(root);
        free(h);
    }
    if (f) fclose(f);
    return total;
}

// Refuses, before anything is read, weights that would not fit (header_bytes: safetensors are
// read straight into the model) in the memory the machine has free.
static bool fits(const HubFolder *h, double need, Err *e) {
    const double have = memory_free_bytes();
    if (have <= 0 || need <= have) return true;
    return err_set(e, "%s: the weights need about %.1f GB in memory (4 bytes a number, 2 for a matrix stored as F16 or "
                   "BF16), but there are %.1f GB free %s", h->dir, need / 1e9, have / 1e9, memory_free_place());
}

bool hub_shard_names(const char *index, char *out, size_t cap, Err *e) {
    char *text;
    size_t n, k = 0;
    out[0] = '\0';
    if (!file_read_all(index, "the weights' index", &text, &n, e)) return false;
    cJSON *root = cJSON_ParseWithLength(text, n);
    free(text);
    const cJSON *map = root ? cJSON_GetObjectItemCaseSensitive(root, "weight_map") : NULL;
    bool ok = cJSON_IsObject(map) || err_set(e, "%s: no \"weight_map\" object", index);
    for (const cJSON *it = ok ? map->child : NULL; it && ok; it = it->next) {
        if (!cJSON_IsString(it) || !it->valuestring[0] || strpbrk(it->valuestring, "/ ")) {
            ok = err_set(e, "%s: weight_map's '%s' is not a file name in the folder", index, it->string);
            break;
        }
        bool seen = false;  // each shard once, in the order the map first names it
        for (const cJSON *p = map->child; p != it && !seen; p = p->next) seen = !strcmp(p->valuestring, it->valuestring);
        if (seen) continue;
        const size_t len = strlen(it->valuestring);
        if (k + len + 2 > cap) ok = err_set(e, "%s: weight_map names too many files", index);
        else k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? " " : "", it->valuestring);
    }
    cJSON_Delete(root);
    return ok;
}

static bool read_shards(const HubFolder *h, const char *index, StFile *f, Err *e) {
    char names[8192], path[4400];
    memset(f, 0, sizeof *f);
    if (!hub_shard_names(index, names, sizeof names, e)) return false;
    double bytes = 0;  // every shard's, before any is read
    for (const char *p = names; *p;) {
        const int len = (int)strcspn(p, " ");
        snprintf(path, sizeof path, "%s/%.*s", h->dir, len, p);
        bytes += header_bytes(path);
        p += len + (p[len] == ' ');
    }
    bool ok = fits(h, bytes, e);
    for (const char *p = names; *p && ok;) {
        const int len = (int)strcspn(p, " ");
        snprintf(path, sizeof path, "%s/%.*s", h->dir, len, p);
        p += len + (p[len] == ' ');
        if (!hub_file_exists(path)) {
            ok = err_set(e, "%s: names %s, which the folder does not have", index, strrchr(path, '/') + 1);
            break;
        }
        StFile part;
        ok = st_open(&part, path, e) && merge(f, &part, path, e);
    }
    if (!ok) st_free(f);
    return ok;
}

static bool starts(const char *s, const char *p) { return *p && !strncmp(s, p, strlen(p)); }

// Whether s starts with one of the space-separated prefixes of list.
static bool starts_any(const char *s, const char *list) {
    for (const char *p = list; *p;) {
        while (*p == ' ') p++;
        const size_t n = strcspn(p, " ");
        if (n && !strncmp(s, p, n)) return true;
        p += n;
    }
    return false;
}

static char *joined(const char *a, const char *b) {
    char *s = malloc(strlen(a) + strlen(b) + 1);
    return s ? strcat(strcpy(s, a), b) : NULL;
}

// Renames the keys to the family's prefix (HubFamily.strip, .add); two keys that become one are
// an error naming both.
static bool canonical_names(const HubFamily *fam, StFile *f, const char *what, Err *e) {
    for (int i = 0; i < f->n_entries; i++) {
        char *name = f->entries[i].name, *renamed = NULL;
        if (starts_any(name, fam->top)) continue;
        if (starts(name, fam->strip)) renamed = joined("", name + strlen(fam->strip));
        else if (*fam->add && !starts(name, fam->add)) renamed = joined(fam->add, name);
        else continue;
        if (!renamed) return err_code(e, ERR_MEMORY, "%s: out of memory", what);
        free(name);
        f->entries[i].name = renamed;
    }
    if (!st_index(f)) return err_code(e, ERR_MEMORY, "%s: out of memory", what);
    // The alias: renamed when the file lacks the name it stands for, else dropped (a copy of a
    // tied table: the numbers the program reads are under the other name).
    const size_t from_n = fam->alias ? strcspn(fam->alias, " ") : 0;
    const char *to = fam->alias ? fam->alias + from_n + 1 : NULL;
    for (int i = 0; to && i < f->n_entries; i++)
        if (strlen(f->entries[i].name) == from_n && !strncmp(f->entries[i].name, fam->alias, from_n)) {
            const bool drop = st_find(f, to) != NULL;
            char *renamed = drop ? NULL : joined("", to);
            if (!drop && !renamed) return err_code(e, ERR_MEMORY, "%s: out of memory", what);
            free(f->entries[i].name);
            if (renamed) f->entries[i].name = renamed;
            else memmove(f->entries + i, f->entries + i + 1, sizeof *f->entries * (size_t)(f->n_entries - i - 1)), f->n_entries--;
            if (!st_index(f)) return err_code(e, ERR_MEMORY, "%s: out of memory", what);
            break;
        }
    for (int i = 1; i < f->n_entries; i++) {
        const char *a = f->entries[f->by_name[i - 1]].name, *b = f->entries[f->by_name[i]].name;
        if (!strcmp(a, b)) return err_set(e, "%s: the file holds '%s' both with and without the prefix", what, a);
    }
    return true;
}

bool hub_read_weights(const HubFolder *h, StFile *f, bool *from_bin, Err *e) {
    char one[4200], index[4200];
    snprintf(one, sizeof one, "%s/model.safetensors", h->dir);
    snprintf(index, sizeof index, "%s/model.safetensors.index.json", h->dir);
    bool ok;
    char bin[4200];
    snprintf(bin, sizeof bin, "%s/pytorch_model.bin", h->dir);
    *from_bin = false;
    if (hub_file_exists(one)) ok = fits(h, header_bytes(one), e) && st_open(f, one, e);
    else if (hub_file_exists(index)) ok = read_shards(h, index, f, e);
    else if ((*from_bin = hub_file_exists(bin))) ok = torch_bin_load(f, bin, e);  // PyTorch's pickle, never run
    else
        return err_set(e, "%s: no model.safetensors, model.safetensors.index.json or pytorch_model.bin in the folder",
                       h->dir);
    if (ok && !canonical_names(h->family, f, h->dir, e)) st_free(f), ok = false;
    return ok;
}

void hub_free(HubFolder *h) {
    free(h->conf_text);
    h->conf_text = NULL;
}
