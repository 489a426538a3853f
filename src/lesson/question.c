// question.c: reading a lesson's `question` block (question.h).
#include "question.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const question_kind_names[QUESTION_KIND_COUNT] = {
    [QUESTION_ARGMAX] = "argmax", [QUESTION_VALUE] = "value", [QUESTION_TOKEN] = "token"};

typedef enum { QK_AT, QK_ASK, QK_KIND, QK_HEAD, QK_ROW, QK_COLUMN, QK_DECIMALS, QK_TRIES, QK_COUNT } QuestionKey;
static const char *const question_keys[QK_COUNT] = {
    [QK_AT] = "at", [QK_ASK] = "ask", [QK_KIND] = "kind", [QK_HEAD] = "head",
    [QK_ROW] = "row", [QK_COLUMN] = "column", [QK_DECIMALS] = "decimals", [QK_TRIES] = "tries"};

// A whole number in [lo, hi] from all of s.
static bool whole(const char *s, int lo, int hi, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

static bool question_item(Question *q, QuestionKey k, const char *val, const char *where, bool *seen, Err *e) {
    switch (k) {
    case QK_AT:
        if (strlen(val) >= sizeof q->at) return err_set(e, "%s: the stage id is too long", where);
        snprintf(q->at, sizeof q->at, "%s", val);
        return true;
    case QK_ASK:
        if (!*val) return err_set(e, "%s: `ask:` is empty; write the question the class is asked", where);
        if (strlen(val) >= sizeof q->ask)
            return err_set(e, "%s: the question is longer than %d characters", where, QUESTION_ASK_MAX - 1);
        snprintf(q->ask, sizeof q->ask, "%s", val);
        return true;
    case QK_KIND: {
        int m = 0;
        while (m < QUESTION_KIND_COUNT && strcmp(val, question_kind_names[m]) != 0) m++;
        if (m < QUESTION_KIND_COUNT) return q->kind = (QuestionKind)m, seen[QK_KIND] = true;
        const char *near = err_closest(val, question_kind_names, QUESTION_KIND_COUNT);
        return err_set(e, "%s: unknown kind '%s'%s%s%s (kinds: argmax, value, token)", where, val,
                       near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    case QK_HEAD:
        return whole(val, 1, 1 << 16, &q->head) || err_set(e, "%s: head '%s' is not a head number (1, 2, ...)", where, val);
    case QK_ROW:
        return whole(val, 0, INT_MAX, &q->row) || err_set(e, "%s: row '%s' is not a row number (0, 1, ...)", where, val);
    case QK_COLUMN:
        return whole(val, 0, INT_MAX, &q->column) ||
               err_set(e, "%s: column '%s' is not a column number (0, 1, ...)", where, val);
    case QK_DECIMALS:
        return whole(val, 0, QUESTION_MAX_DECIMALS, &q->decimals) ||
               err_set(e, "%s: decimals '%s' is not a whole number from 0 to %d", where, val, QUESTION_MAX_DECIMALS);
    case QK_TRIES:
        return whole(val, 1, QUESTION_MAX_TRIES, &q->tries) ||
               err_set(e, "%s: tries '%s' is not a whole number from 1 to %d (answers before the answer is shown)", where,
                       val, QUESTION_MAX_TRIES);
    case QK_COUNT: break;
    }
    return false;
}

// One `key: value` line (blank lines are skipped).
static bool question_line(Question *q, const char *path, int ln, const char *text, bool *seen, Err *e) {
    char where[600];
    snprintf(where, sizeof where, "%s:%d", path, ln);
    while (isspace((unsigned char)*text)) text++;
    if (!*text) return true;
    const char *colon = strchr(text, ':');
    if (!colon) return err_set(e, "%s: expected `key: value` in a question block (keys: at, ask, kind, head, row, "
                                  "column, decimals, tries)", where);
    char key[32], val[QUESTION_ASK_MAX + 64];
    size_t kn = (size_t)(colon - text);
    while (kn && isspace((unsigned char)text[kn - 1])) kn--;
    snprintf(key, sizeof key, "%.*s", (int)kn, text);
    const char *v = colon + 1;
    while (isspace((unsigned char)*v)) v++;
    snprintf(val, sizeof val, "%s", v);
    for (size_t n = strlen(val); n && isspace((unsigned char)val[n - 1]);) val[--n] = '\0';
    int k = 0;
    while (k < QK_COUNT && strcmp(key, question_keys[k]) != 0) k++;
    if (k == QK_COUNT) {
        const char *near = err_closest(key, question_keys, QK_COUNT);
        return err_set(e, "%s: unknown question key '%s'%s%s%s (keys: at, ask, kind, head, row, column, decimals, tries)",
                       where, key, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    if (seen[k]) return err_set(e, "%s: a second `%s:` in this question", where, key);
    seen[k] = true;
    if (k == QK_AT) q->at_line = ln;
    return question_item(q, (QuestionKey)k, val, where, seen, e);
}

bool question_parse(Question *q, const char *path, char *const *lines, int first, int last, Err *e) {
    *q = (Question){.line = first - 1, .cell = -1, .head = 1, .row = -1, .column = -1, .decimals = 2,
                    .at_line = first - 1, .tries = 1};
    bool seen[QK_COUNT] = {0};
    for (int ln = first; ln <= last; ln++)
        if (!question_line(q, path, ln, lines[ln - 1], seen, e)) return false;
    if (!seen[QK_ASK]) return err_set(e, "%s:%d: this question has no `ask:` line (what the class is asked)", path, q->line);
    if (!seen[QK_KIND])
        return err_set(e, "%s:%d: this question has no `kind:` line (argmax, value or token)", path, q->line);
    if (q->kind == QUESTION_VALUE && q->column < 0)
        return err_set(e, "%s:%d: a `value` question needs `column:` (and `row:` for a matrix)", path, q->line);
    if (q->kind != QUESTION_VALUE && seen[QK_DECIMALS])
        return err_set(e, "%s:%d: `decimals:` is for `value` questions; an %s answer is a position or a token",
                       path, q->line, question_kind_names[q->kind]);
    if (q->kind != QUESTION_VALUE && q->column >= 0)
        return err_set(e, "%s:%d: `column:` is the answer of an %s question, not a part of it", path, q->line,
                       question_kind_names[q->kind]);
    return true;
}
