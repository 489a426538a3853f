// lesson_setup.c: the `lesson` block of a lesson file: which model, which input.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h"

bool lesson_setup_parse(LessonSetup *s, const Lesson *l, int first, int last, Err *e);

ModelConfig lesson_small_config(void) {
    return (ModelConfig){.d_model = 64, .nhead = 4, .num_encoder_layers = 2,
                         .num_decoder_layers = 2, .dim_feedforward = 128,
                         .src_vocab_size = VOCAB_CHARS_SIZE, .tgt_vocab_size = VOCAB_CHARS_SIZE,
                         .max_positions = 64,
                         .layer_norm_eps = 1e-5f, .activation = ACT_RELU, .layer_norm = LN_TORCH,
                         .bos_id = {true, VOCAB_BOS}, .eos_id = {true, VOCAB_EOS}, .pad_id = {true, VOCAB_PAD},
                         .unk_id = {true, VOCAB_UNK}};
}

static void resolve_path(char *out, size_t n, const char *lesson_path, const char *rel) {
    const char *slash = strrchr(lesson_path, '/');
    if (rel[0] == '/' || !slash) snprintf(out, n, "%s", rel);
    else snprintf(out, n, "%.*s/%s", (int)(slash - lesson_path), lesson_path, rel);
}

static bool setup_item(LessonSetup *s, const Lesson *l, const char *key, const char *val, int line,
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
    if (!strcmp(key, "config")) {  // checked against the program when the model is made
        Conf probe = {0};
        char w[340];
        snprintf(w, sizeof w, "%s: config", where);
        bool ok = conf_parse(&probe, val, w, true, false, e);
        conf_free(&probe);
        if (ok) snprintf(s->config, sizeof s->config, "%s", val), s->config_line = line;
        return ok;
    }
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
        if (!setup_item(s, l, key, v, ln, where, e)) return false;
    }
    return true;
}
