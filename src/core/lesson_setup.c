// lesson_setup.c: the `lesson` block of a lesson file: which model, which input.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h"

bool lesson_setup_parse(LessonSetup *s, const Lesson *l, int first, int last, Err *e);

bool vocab_chars(Vocab *v, Err *e) {
    memset(v, 0, sizeof *v);
    static const char *const specials[] = {"<unk>", "<pad>", "<bos>", "<eos>"};
    const int n = 4 + ('~' - ' ' + 1);
    v->tokens = calloc((size_t)n, sizeof *v->tokens);
    if (!v->tokens) return err_set(e, "out of memory");
    for (v->n = 0; v->n < n; v->n++) {
        char one[2] = {(char)(' ' + v->n - 4), '\0'};
        const char *t = v->n < 4 ? specials[v->n] : one;
        v->tokens[v->n] = malloc(strlen(t) + 1);
        if (!v->tokens[v->n]) return vocab_free(v), err_set(e, "out of memory");
        strcpy(v->tokens[v->n], t);
    }
    v->by_char = true;
    return true;
}

static ModelConfig small_config(void) {
    return (ModelConfig){.d_model = 64, .nhead = 4, .num_encoder_layers = 2,
                         .num_decoder_layers = 2, .dim_feedforward = 128,
                         .src_vocab_size = 99, .tgt_vocab_size = 99, .max_positions = 64,
                         .layer_norm_eps = 1e-5f, .activation = ACT_RELU, .layer_norm = LN_TORCH,
                         .bos_id = {true, 2}, .eos_id = {true, 3}, .pad_id = {true, 1},
                         .unk_id = {true, 0}};
}

static bool config_item(ModelConfig *c, const char *key, const char *val, const char *where,
                        Err *e) {
    static const struct { const char *k; size_t off; } ints[] = {
        {"d_model", offsetof(ModelConfig, d_model)}, {"nhead", offsetof(ModelConfig, nhead)},
        {"num_encoder_layers", offsetof(ModelConfig, num_encoder_layers)},
        {"num_decoder_layers", offsetof(ModelConfig, num_decoder_layers)},
        {"dim_feedforward", offsetof(ModelConfig, dim_feedforward)},
        {"src_vocab_size", offsetof(ModelConfig, src_vocab_size)},
        {"tgt_vocab_size", offsetof(ModelConfig, tgt_vocab_size)},
        {"max_positions", offsetof(ModelConfig, max_positions)}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(key, ints[i].k)) {
            char *end;
            long v = strtol(val, &end, 10);
            if (end == val || *end || v < 0 || v > (1 << 20))
                return err_set(e, "%s: config %s=%s is not a whole number", where, key, val);
            *(int *)((char *)c + ints[i].off) = (int)v;
            return true;
        }
    if (!strcmp(key, "norm_first") && (!strcmp(val, "true") || !strcmp(val, "false")))
        return c->norm_first = val[0] == 't', true;
    if (!strcmp(key, "activation") && (!strcmp(val, "relu") || !strcmp(val, "gelu")))
        return c->activation = val[0] == 'g' ? ACT_GELU : ACT_RELU, true;
    if (!strcmp(key, "layer_norm") && (!strcmp(val, "torch") || !strcmp(val, "annotated")))
        return c->layer_norm = val[0] == 'a' ? LN_ANNOTATED : LN_TORCH, true;
    if (!strcmp(key, "layer_norm_eps")) {
        char *end;
        c->layer_norm_eps = strtof(val, &end);
        if (end != val && !*end) return true;
    }
    return err_set(e, "%s: config %s=%s is not a setting stepformer knows (or not a valid value)",
                   where, key, val);
}

static bool parse_config(ModelConfig *c, const char *text, const char *where, Err *e) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *tok = strtok(buf, " \t,"); tok; tok = strtok(NULL, " \t,")) {
        char *eq = strchr(tok, '=');
        if (!eq) return err_set(e, "%s: config item '%s' should be key=value", where, tok);
        *eq = '\0';
        if (!config_item(c, tok, eq + 1, where, e)) return false;
    }
    return true;
}

static void resolve_path(char *out, size_t n, const char *lesson_path, const char *rel) {
    const char *slash = strrchr(lesson_path, '/');
    if (rel[0] == '/' || !slash) snprintf(out, n, "%s", rel);
    else snprintf(out, n, "%.*s/%s", (int)(slash - lesson_path), lesson_path, rel);
}

static bool setup_item(LessonSetup *s, const Lesson *l, const char *key, const char *val,
                       const char *where, Err *e) {
    struct { const char *k; char *dst; size_t n; } texts[] = {
        {"input", s->input, sizeof s->input}, {"src_ids", s->src_ids, sizeof s->src_ids},
        {"target", s->target, sizeof s->target}, {"tgt_ids", s->tgt_ids, sizeof s->tgt_ids}};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (!strcmp(key, texts[i].k)) return snprintf(texts[i].dst, texts[i].n, "%s", val), true;
    if (!strcmp(key, "model")) {
        s->model_random = !strcmp(val, "random");
        if (!s->model_random) resolve_path(s->model_path, sizeof s->model_path, l->path, val);
        return true;
    }
    if (!strcmp(key, "config")) return parse_config(&s->config, val, where, e);
    if (!strcmp(key, "vocab")) {
        if (strcmp(val, "chars") != 0)
            return err_set(e, "%s: vocab: only 'chars' is known (printable ASCII)", where);
        return s->vocab_chars = true;
    }
    char *end;
    long v = strtol(val, &end, 10);
    bool num = end != val && !*end && v >= 0;
    if (!strcmp(key, "seed") && num) return s->seed = (unsigned long long)v, true;
    if (!strcmp(key, "max_len") && num && v >= 1) return s->max_len = (int)v, true;
    if (!strcmp(key, "seed") || !strcmp(key, "max_len"))
        return err_set(e, "%s: %s needs a whole number, not '%s'", where, key, val);
    return err_set(e, "%s: unknown setup key '%s' (known: model, config, seed, vocab, input, "
                   "src_ids, target, tgt_ids, max_len)", where, key);
}

bool lesson_setup_parse(LessonSetup *s, const Lesson *l, int first, int last, Err *e) {
    s->config = small_config();
    for (int ln = first; ln <= last && ln <= l->n_lines; ln++) {
        const char *line = l->lines[ln - 1];
        while (isspace((unsigned char)*line)) line++;
        if (!*line || *line == '#') continue;
        char where[300];
        snprintf(where, sizeof where, "%s:%d", l->path, ln);
        const char *colon = strchr(line, ':');
        if (!colon) return err_set(e, "%s: expected 'key: value'", where);
        char key[32];
        snprintf(key, sizeof key, "%.*s", (int)(colon - line), line);
        for (char *k = key + strlen(key); k > key && isspace((unsigned char)k[-1]); k--) k[-1] = '\0';
        const char *val = colon + 1;
        while (isspace((unsigned char)*val)) val++;
        char v[512];
        snprintf(v, sizeof v, "%s", val);
        for (char *k = v + strlen(v); k > v && isspace((unsigned char)k[-1]); k--) k[-1] = '\0';
        if (!setup_item(s, l, key, v, where, e)) return false;
    }
    if (s->vocab_chars) s->config.src_vocab_size = s->config.tgt_vocab_size = 4 + ('~' - ' ' + 1);
    return true;
}
