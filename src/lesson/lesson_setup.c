// lesson_setup.c: the `lesson` block of a lesson file: which model, which input.
#define _XOPEN_SOURCE 700  // strdup
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "course.h"
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

// The keys of the `lesson` block. setup_item parses each; the switch there names every one, so
// a key added here without its parser (or the reverse) does not compile. docs/lessons.md
// describes each, and tests/test_docs.c checks that it does.
typedef enum {
    KEY_MODEL, KEY_CONFIG, KEY_VOCAB, KEY_SEED, KEY_INPUT, KEY_SRC_IDS, KEY_TARGET, KEY_TGT_IDS,
    KEY_MAX_LEN, KEY_CORRUPT, KEY_CORRECT, KEY_CORRECT_MODEL, KEY_TEMPERATURE, KEY_TOP_K, KEY_TOP_P,
    KEY_SAMPLE_SEED, KEY_BEAM, KEY_COUNT
} SetupKey;

const char *const lesson_setup_keys[KEY_COUNT] = {
    [KEY_MODEL] = "model", [KEY_CONFIG] = "config", [KEY_VOCAB] = "vocab", [KEY_SEED] = "seed",
    [KEY_INPUT] = "input", [KEY_SRC_IDS] = "src_ids", [KEY_TARGET] = "target",
    [KEY_TGT_IDS] = "tgt_ids", [KEY_MAX_LEN] = "max_len", [KEY_CORRUPT] = "corrupt",
    [KEY_CORRECT] = "correct", [KEY_CORRECT_MODEL] = "correct_model", [KEY_TEMPERATURE] = "temperature",
    [KEY_TOP_K] = "top_k", [KEY_TOP_P] = "top_p", [KEY_SAMPLE_SEED] = "sample_seed", [KEY_BEAM] = "beam"};
const int lesson_setup_n_keys = KEY_COUNT;

static SetupKey setup_key(const char *key) {
    int k = 0;
    while (k < KEY_COUNT && strcmp(key, lesson_setup_keys[k]) != 0) k++;
    return (SetupKey)k;
}

static bool unknown_key(const char *key, const char *where, Err *e) {
    char known[400];
    int n = 0;
    for (int k = 0; k < KEY_COUNT && n < (int)sizeof known; k++)
        n += snprintf(known + n, sizeof known - (size_t)n, "%s%s", k ? ", " : "", lesson_setup_keys[k]);
    return err_set(e, "%s: unknown setup key '%s' (known: %s)", where, key, known);
}

static bool setup_config(LessonSetup *s, const char *val, int line, const char *where, Err *e) {
    Conf probe = {0};  // checked against the program when the model is made
    char w[340];
    snprintf(w, sizeof w, "%s: config", where);
    bool ok = conf_parse(&probe, val, w, true, false, e);
    conf_free(&probe);
    if (ok) snprintf(s->config, sizeof s->config, "%s", val), s->config_line = line;
    return ok;
}

// seed and max_len: a whole number from lo to hi.
static bool setup_whole(const char *key, const char *val, long lo, long hi, long *out, const char *where,
                        Err *e) {
    char *end;
    long v = strtol(val, &end, 10);
    if (end != val && !*end && v >= lo && v <= hi) return *out = v, true;
    return err_set(e, "%s: %s needs a whole number, not '%s'", where, key, val);
}

// temperature and top_p: a number in (0, hi].
static bool setup_real(const char *key, const char *val, double hi, double *out, const char *where, Err *e) {
    char *end;
    const double v = strtod(val, &end);
    if (end != val && !*end && v > 0 && v <= hi) return *out = v, true;
    if (!strcmp(key, "temperature"))
        return err_set(e, "%s: temperature needs a number above 0, not '%s' (greedy decoding, the default, is "
                       "temperature 0: leave the key out)", where, val);
    return err_set(e, "%s: %s needs a number in (0, %g], not '%s'", where, key, hi, val);
}

// correct: a lesson file of the folder (or a path relative to it) that can be read; another
// name gets the closest lesson of the folder as a suggestion.
static bool setup_correct(LessonSetup *s, const Lesson *l, const char *val, const char *where, Err *e) {
    resolve_path(s->correct, sizeof s->correct, l->path, val);
    FILE *f = fopen(s->correct, "rb");
    if (f) return fclose(f), true;
    char dir[512];
    const char *slash = strrchr(s->correct, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - s->correct) : 1, slash ? s->correct : ".");
    char near[COURSE_PATH_MAX];
    const bool has = course_nearest(dir, slash ? slash + 1 : s->correct, near, sizeof near);
    err_set(e, "%s: correct: no lesson file '%s' in %s%s%s%s", where, val, dir, has ? " (did you mean '" : "",
            has ? near : "", has ? "'?)" : "");
    s->correct[0] = '\0';
    return false;
}

static bool setup_item(LessonSetup *s, const Lesson *l, const char *key, const char *val, int line,
                       const char *where, Err *e) {
    long v = 0;
    switch (setup_key(key)) {
    case KEY_MODEL:
        s->model_random = !strcmp(val, "random");
        if (!s->model_random) resolve_path(s->model_path, sizeof s->model_path, l->path, val);
        return true;
    case KEY_CONFIG: return setup_config(s, val, line, where, e);
    case KEY_VOCAB:
        if (strcmp(val, "chars") != 0)
            return err_set(e, "%s: vocab: only 'chars' is known (printable ASCII)", where);
        return s->vocab_chars = true;
    case KEY_SEED:
        if (!setup_whole(key, val, 0, LONG_MAX, &v, where, e)) return false;
        return s->seed = (unsigned long long)v, true;
    case KEY_MAX_LEN:
        if (!setup_whole(key, val, 1, 100000, &v, where, e)) return false;
        return s->max_len = (int)v, true;
    case KEY_INPUT: return snprintf(s->input, sizeof s->input, "%s", val), true;
    case KEY_SRC_IDS: return snprintf(s->src_ids, sizeof s->src_ids, "%s", val), true;
    case KEY_TARGET: return snprintf(s->target, sizeof s->target, "%s", val), true;
    case KEY_TGT_IDS: return snprintf(s->tgt_ids, sizeof s->tgt_ids, "%s", val), true;
    case KEY_CORRUPT: return snprintf(s->corrupt, sizeof s->corrupt, "%s", val), true;
    case KEY_CORRECT: return setup_correct(s, l, val, where, e);
    case KEY_CORRECT_MODEL: return resolve_path(s->correct_model, sizeof s->correct_model, l->path, val), true;
    case KEY_TEMPERATURE: return setup_real(key, val, 100, &s->choice.temperature, where, e);
    case KEY_TOP_P: return setup_real(key, val, 1, &s->choice.top_p, where, e);
    case KEY_TOP_K:
        if (!setup_whole(key, val, 1, 1 << 24, &v, where, e)) return false;
        return s->choice.top_k = (int)v, true;
    case KEY_BEAM:
        if (!setup_whole(key, val, 2, 1 << 16, &v, where, e)) return false;
        return s->choice.beam = (int)v, true;
    case KEY_SAMPLE_SEED:
        if (!setup_whole(key, val, 0, LONG_MAX, &v, where, e)) return false;
        return s->choice.seed = (uint64_t)v, true;
    case KEY_COUNT: break;
    }
    return unknown_key(key, where, e);
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
