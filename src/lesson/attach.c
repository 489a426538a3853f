// attach.c: reading a lesson's `steps` block (attach.h) and matching its words to steps.
#include "attach.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

const char *const step_kind_names[STEP_KIND_COUNT] = {
    [STEP_FORWARD] = "forward", [STEP_BACKWARD] = "backward", [STEP_LOSS] = "loss",
    [STEP_ADAM] = "adam", [STEP_AFTER] = "after"};

static const char *const attach_keys[] = {"forward", "backward"};

// One word of a `forward:` or `backward:` line.
static bool attach_word(Attachment *a, StepKind kind, const char *word, const char *where, int ln, Err *e) {
    if (a->n_words == ATTACH_MAX_WORDS)
        return err_set(e, "%s: more than %d words in one `steps` block", where, ATTACH_MAX_WORDS);
    if (strlen(word) >= ATTACH_WORD_MAX) return err_set(e, "%s: '%.40s...' is too long for a stage pattern", where, word);
    StepWord *w = &a->words[a->n_words];
    *w = (StepWord){.kind = kind, .by = MATCH_ID, .line = ln};
    snprintf(w->pattern, sizeof w->pattern, "%s", word);
    for (int k = STEP_LOSS; k < STEP_KIND_COUNT; k++)
        if (!strcmp(word, step_kind_names[k])) {
            if (kind != STEP_BACKWARD)
                return err_set(e, "%s: `%s` is a step of the backward pass: write it under `backward:`", where, word);
            w->kind = (StepKind)k, w->by = MATCH_KIND;
            return a->n_words++, true;
        }
    if (op_lookup(word, &w->op)) return w->by = MATCH_OP, a->n_words++, true;
    if (strchr(word, '.') || strchr(word, '*')) return a->n_words++, true;
    const char *names[OP_COUNT + 3];
    int n = 0;
    for (int o = 0; o < OP_COUNT; o++)
        if (op_info[o].name) names[n++] = op_info[o].name;
    for (int k = STEP_LOSS; k < STEP_KIND_COUNT; k++) names[n++] = step_kind_names[k];
    const char *near = err_closest(word, names, n);
    return err_set(e, "%s: '%s' names no step: write an op (layer_norm), a pattern over stage ids with a dot or * "
                      "(encoder.layers.*.norm1), or under `backward:` loss, adam or after%s%s%s",
                   where, word, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}

// One `key: words` line (blank lines are skipped).
static bool attach_line(Attachment *a, const char *path, int ln, const char *text, Err *e) {
    char where[600];
    snprintf(where, sizeof where, "%s:%d", path, ln);
    while (isspace((unsigned char)*text)) text++;
    if (!*text) return true;
    const char *colon = strchr(text, ':');
    char key[32];
    size_t kn = colon ? (size_t)(colon - text) : 0;
    while (kn && isspace((unsigned char)text[kn - 1])) kn--;
    snprintf(key, sizeof key, "%.*s", (int)kn, text);
    const StepKind kind = !strcmp(key, "forward") ? STEP_FORWARD : STEP_BACKWARD;
    if (!colon || (strcmp(key, "forward") != 0 && strcmp(key, "backward") != 0)) {
        const char *near = colon ? err_closest(key, attach_keys, 2) : NULL;
        return err_set(e, "%s: expected `forward: WORDS` or `backward: WORDS` in a `steps` block%s%s%s", where,
                       near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    const int had = a->n_words;
    for (const char *s = colon + 1;;) {
        while (isspace((unsigned char)*s)) s++;
        if (!*s) break;
        const size_t len = strcspn(s, " \t\r\n");
        char word[ATTACH_WORD_MAX + 8];
        snprintf(word, sizeof word, "%.*s", (int)(len < ATTACH_WORD_MAX + 4 ? len : ATTACH_WORD_MAX + 4), s);
        if (!attach_word(a, kind, word, where, ln, e)) return false;
        s += len;
    }
    return a->n_words > had || err_set(e, "%s: `%s:` names no steps", where, key);
}

bool attach_parse(Attachment *a, const char *path, char *const *lines, int first, int last, Err *e) {
    *a = (Attachment){.line = first - 1};
    for (int ln = first; ln <= last; ln++)
        if (!attach_line(a, path, ln, lines[ln - 1], e)) return false;
    return a->n_words > 0 || err_set(e, "%s:%d: this `steps` block names no steps (`backward: loss adam`, "
                                        "`forward: layer_norm`; docs/lessons.md)", path, a->line);
}

// The id without its greedy round's prefix: "step.3.decoder.x" -> "decoder.x".
static const char *round_free(const char *id) {
    if (strncmp(id, "step.", 5) != 0) return id;
    const char *s = id + 5;
    while (isdigit((unsigned char)*s)) s++;
    return s > id + 5 && *s == '.' ? s + 1 : id;
}

bool attach_word_matches(const StepWord *w, StepKind kind, Op op, const char *id) {
    if (w->kind != kind) return false;
    switch (w->by) {
    case MATCH_KIND: return true;
    case MATCH_OP: return w->op == op;
    case MATCH_ID: return id && fnmatch(w->pattern, round_free(id), 0) == 0;
    }
    return false;
}
