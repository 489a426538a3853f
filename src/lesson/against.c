// against.c: a mistake beside its correct program (see against.h).
#include "against.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const match_kind_names[MATCH_COUNT] = {
    [MATCH_SAME] = "the same", [MATCH_VALUES] = "other values", [MATCH_SHAPE] = "another shape",
    [MATCH_MISSING] = "no counterpart"};

// ids as "3,4,5" (heap; NULL when out of memory).
static char *ids_text(const float *ids, int n) {
    char *s = malloc((size_t)n * 12 + 1);
    if (!s) return NULL;
    size_t at = 0;
    s[0] = '\0';
    for (int i = 0; i < n; i++) at += (size_t)snprintf(s + at, 13, "%s%d", i ? "," : "", (int)ids[i]);
    return s;
}

bool against_open(Session *c, Session *m, const SessionSpec *spec, Err *e) {
    memset(c, 0, sizeof *c);
    const LessonSetup *ls = &m->lesson.setup;
    if (!ls->correct[0])
        return err_set(e, "%s: this lesson names no correct program (add `correct: LESSON.md` to its lesson block)",
                       m->lesson.path);
    if (!interp_run(m->it, e)) return false;
    SessionSpec cs = *spec;
    cs.lesson_path = m->lesson.path, cs.program_path = ls->correct, cs.builtin_lesson = NULL;
    if (ls->correct_model[0]) cs.model_path = ls->correct_model;
    char *src = ids_text(m->src, m->run.S), *tgt = m->run.tgt ? ids_text(m->run.tgt, m->run.T) : NULL;
    cs.input = NULL, cs.src_ids = src, cs.target = NULL, cs.tgt_ids = tgt, cs.greedy = !m->run.tgt;
    cs.max_len = m->run.max_new;
    bool ok = src && (!m->run.tgt || tgt);
    if (!ok) err_code(e, ERR_MEMORY, "out of memory");
    ok = ok && session_open(c, &cs, e);
    if (ok && !interp_run(c->it, e)) session_close(c), ok = false;
    if (!ok) err_prefix(e, "%s, its correct program %s", m->lesson.path, ls->correct);
    free(src), free(tgt);
    return ok;
}

float against_max_diff(const float *a, const float *b, size_t n) {
    float m = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i] == b[i]) continue;
        const float d = isfinite(a[i]) && isfinite(b[i]) ? fabsf(a[i] - b[i]) : INFINITY;
        if (!(d <= m)) m = d;  // a NaN counts as the largest difference
    }
    return m == m ? m : INFINITY;
}

bool against_match(Against *a, const Interp *mistake, const Interp *correct, Err *e) {
    memset(a, 0, sizeof *a);
    a->first = -1;
    if (!interp_done(mistake) || !interp_done(correct))
        return err_set(e, "both passes must have run to their ends before they are matched");
    a->n = interp_n_done(mistake);
    a->stage = calloc((size_t)(a->n > 0 ? a->n : 1), sizeof *a->stage);
    if (!a->stage) return err_code(e, ERR_MEMORY, "out of memory");
    int matched = 0;
    for (int i = 0; i < a->n; i++) {
        StageMatch *s = &a->stage[i];
        const Stage *st = interp_stage(mistake, i);
        s->other = interp_find(correct, st->id);
        if (s->other < 0) {
            s->kind = MATCH_MISSING, a->n_missing++;
            continue;
        }
        matched++;
        const Stage *ot = interp_stage(correct, s->other);
        if (!shape_eq(&st->shape, &ot->shape)) s->kind = MATCH_SHAPE;
        else {
            s->max_diff = against_max_diff(interp_output(mistake, i), interp_output(correct, s->other),
                                           (size_t)shape_numel(&st->shape));
            s->kind = s->max_diff > AGAINST_TOLERANCE ? MATCH_VALUES : MATCH_SAME;
        }
        if (s->kind != MATCH_SAME && a->first < 0) a->first = i;
    }
    a->n_unmatched = interp_n_done(correct) - matched;
    return true;
}

void against_free(Against *a) {
    free(a->stage);
    memset(a, 0, sizeof *a);
}
