// quiz.c: a lesson's questions answered from the trace, and answers graded (quiz.h).
#include "quiz.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const grade_names[GRADE_COUNT] = {[GRADE_RIGHT] = "right", [GRADE_WRONG] = "wrong",
                                               [GRADE_MALFORMED] = "malformed"};

int quiz_stage(const Lesson *l, const Question *q, const Interp *it, Err *e) {
    if (q->at[0]) {
        bool by_round;
        char what[600];
        snprintf(what, sizeof what, "%s:%d: the question's `at:` names a stage, but the pass", l->path, q->at_line);
        return interp_find_stage(it, q->at, what, &by_round, e);
    }
    for (int i = 0; q->cell >= 0 && i < interp_n_stages(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (lesson_cell_of_line(l, st->line) == q->cell || lesson_cell_of_line(l, st->call_line) == q->cell) return i;
    }
    err_set(e, "%s:%d: this question has no `at:` and no program cell after it computes a stage; name the stage "
               "with `at:`", l->path, q->line);
    return -1;
}

// The tokens along the last axis of stage k (NULL when it has none): its ids and vocabulary.
static const Vocab *column_tokens(const Interp *it, int k, const float **ids, int *len) {
    const Stage *st = interp_stage(it, k);
    const int slot = st->axes.slot[st->shape.ndim - 1];
    if (slot < 0) return NULL;
    *ids = interp_input_ids(it, slot, len);
    const Model *m = interp_model(it);
    return !strcmp(interp_program(it)->inputs[slot], "src") ? &m->src_vocab : &m->tgt_vocab;
}

// Where row q->row (of head q->head) starts in stage k's output, and its length; false with a
// message when the question's head or row is outside the tensor.
static bool find_row(const Lesson *l, const Question *q, const Interp *it, int k, Answer *a, size_t *off,
                     int *cols, Err *e) {
    const Shape *sh = &interp_stage(it, k)->shape;
    const char *id = interp_stage(it, k)->id;
    if (sh->ndim < 1 || sh->ndim > 3)
        return err_set(e, "%s:%d: stage %s is a tensor of %d axes; a question reads a row of a matrix, a [heads, rows, "
                          "columns] tensor or a vector", l->path, q->line, id, sh->ndim);
    const int heads = sh->ndim == 3 ? (int)sh->dim[0] : 1, rows = sh->ndim >= 2 ? (int)sh->dim[sh->ndim - 2] : 1;
    *cols = (int)sh->dim[sh->ndim - 1];
    if (q->head > heads)
        return err_set(e, "%s:%d: head %d, but stage %s has %d head%s", l->path, q->line, q->head, id, heads,
                       heads == 1 ? "" : "s");
    a->row = q->row >= 0 ? q->row : q->kind == QUESTION_TOKEN ? rows - 1 : -1;
    if (a->row < 0 && rows > 1)
        return err_set(e, "%s:%d: stage %s has %d rows: say which with `row:` (0 to %d)", l->path, q->line, id, rows,
                       rows - 1);
    if (a->row < 0) a->row = 0;
    if (a->row >= rows)
        return err_set(e, "%s:%d: row %d, but stage %s has rows 0 to %d", l->path, q->line, a->row, id, rows - 1);
    a->head = sh->ndim == 3 ? q->head : 0;
    *off = ((size_t)(q->head - 1) * (size_t)rows + (size_t)a->row) * (size_t)*cols;
    return true;
}

// "3 ('a')": a column and, when its axis has tokens, the token there.
static void say_column(char *out, size_t n, const Interp *it, int k, int col) {
    const float *ids;
    int len = 0;
    const Vocab *v = column_tokens(it, k, &ids, &len);
    if (v && col < len) snprintf(out, n, "%d ('%s')", col, vocab_token(v, (int)ids[col]));
    else snprintf(out, n, "%d", col);
}

// The answer from the question's row (row[cols]) of stage a->stage.
static bool answer_from_row(Answer *a, const Lesson *l, const Question *q, const Interp *it, const float *row, int cols,
                            Err *e) {
    if (q->kind == QUESTION_VALUE) {
        if (q->column >= cols)
            return err_set(e, "%s:%d: column %d, but stage %s has columns 0 to %d", l->path, q->line, q->column,
                           interp_stage(it, a->stage)->id, cols - 1);
        a->index = q->column, a->value = row[q->column];
        snprintf(a->text, sizeof a->text, "%.*f", q->decimals, a->value);
        snprintf(a->precise, sizeof a->precise, "%.6f", a->value);
        return true;
    }
    int best = 0;
    for (int c = 1; c < cols; c++)
        if (row[c] > row[best]) best = c;
    a->index = best, a->value = row[best];
    snprintf(a->precise, sizeof a->precise, "%.6f", a->value);
    if (q->kind == QUESTION_ARGMAX) {
        say_column(a->text, sizeof a->text, it, a->stage, best);
        return true;
    }
    const Vocab *tv = &interp_model(it)->tgt_vocab;
    if (cols != tv->n)
        return err_set(e, "%s:%d: a token question reads a row over the target vocabulary (%d tokens), but stage %s "
                          "has %d columns", l->path, q->line, tv->n, interp_stage(it, a->stage)->id, cols);
    snprintf(a->text, sizeof a->text, "'%s' (id %d)", vocab_token(tv, best), best);
    return true;
}

bool quiz_answer(Answer *a, const Lesson *l, const Question *q, const Interp *it, Err *e) {
    *a = (Answer){.stage = quiz_stage(l, q, it, e)};
    if (a->stage < 0) return false;
    if (a->stage >= interp_n_done(it))
        return err_set(e, "%s:%d: stage %s has not run yet", l->path, q->line, interp_stage(it, a->stage)->id);
    size_t off = 0;
    int cols = 0;
    if (!find_row(l, q, it, a->stage, a, &off, &cols, e)) return false;
    // The row alone where it can be read so (a budget let the output head go: one row recomputed)
    float *own = malloc(sizeof(float) * (size_t)cols);
    const float *row = interp_read_row(it, a->stage, 0, off / (size_t)cols, own);
    if (!row) return free(own), err_set(e, "%s:%d: stage %s could not be read (out of memory)", l->path, q->line,
                                        interp_stage(it, a->stage)->id);
    const bool ok = answer_from_row(a, l, q, it, row, cols, e);
    free(own);
    return ok;
}

// The typed text without spaces at its ends (a typed space token stays a space).
static void trimmed(char *out, size_t n, const char *s) {
    if (s[0] == ' ' && s[1] == '\0') {
        snprintf(out, n, " ");
        return;
    }
    while (isspace((unsigned char)*s)) s++;
    snprintf(out, n, "%s", s);
    for (size_t k = strlen(out); k && isspace((unsigned char)out[k - 1]);) out[--k] = '\0';
}

static bool whole_number(const char *s, long *v) {
    char *end;
    *v = strtol(s, &end, 10);
    return end != s && !*end;
}

// An argmax answer: a column number, or the token of exactly one column.
static Grade grade_argmax(const Answer *a, const Interp *it, const char *t, Err *e) {
    const int cols = (int)interp_stage(it, a->stage)->shape.dim[interp_stage(it, a->stage)->shape.ndim - 1];
    long v;
    if (whole_number(t, &v)) {
        if (v < 0 || v >= cols)
            return err_set(e, "'%s' is not a position here: answer 0 to %d (or a token)", t, cols - 1), GRADE_MALFORMED;
        return quiz_grade_column(a, (int)v);
    }
    const float *ids;
    int len = 0, found = -1, n_found = 0;
    const Vocab *voc = column_tokens(it, a->stage, &ids, &len);
    for (int c = 0; voc && c < len && c < cols; c++)
        if (!strcmp(vocab_token(voc, (int)ids[c]), t)) found = c, n_found++;
    if (n_found == 1) return quiz_grade_column(a, found);
    if (n_found > 1)
        return err_set(e, "'%s' stands at %d positions: answer with the position's number", t, n_found), GRADE_MALFORMED;
    return err_set(e, "'%s' is neither a position (0 to %d) nor a token of this row's columns", t, cols - 1),
           GRADE_MALFORMED;
}

Grade quiz_grade(const Answer *a, const Question *q, const Interp *it, const char *typed, Err *e) {
    char t[128];
    trimmed(t, sizeof t, typed);
    if (!t[0]) return err_set(e, "no answer typed"), GRADE_MALFORMED;
    if (q->kind == QUESTION_ARGMAX) return grade_argmax(a, it, t, e);
    if (q->kind == QUESTION_VALUE) {
        char *end;
        const double v = strtod(t, &end);
        if (end == t || *end || !isfinite(v))
            return err_set(e, "'%s' is not a number (write it like 0.42)", t), GRADE_MALFORMED;
        const double scale = pow(10.0, q->decimals);
        return round(v * scale) == round(a->value * scale) ? GRADE_RIGHT : GRADE_WRONG;
    }
    const Vocab *tv = &interp_model(it)->tgt_vocab;
    const int id = vocab_find(tv, t, strlen(t));
    long v;
    if (id >= 0) return id == a->index ? GRADE_RIGHT : GRADE_WRONG;
    if (whole_number(t, &v) && v >= 0 && v < tv->n) return v == a->index ? GRADE_RIGHT : GRADE_WRONG;
    return err_set(e, "'%s' is not a target token (nor a token id 0 to %d)", t, tv->n - 1), GRADE_MALFORMED;
}

Grade quiz_grade_column(const Answer *a, int column) { return column == a->index ? GRADE_RIGHT : GRADE_WRONG; }
