// grad_pass.c: one pass's loss against labels, and its backward pass (see grad_pass.h).
#include "grad_pass.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// Whether stage `from` depends on a weight that is trained (not a buffer).
static bool reaches_weight(const Interp *it, int from, Err *e) {
    bool *reach = calloc((size_t)from + 1, sizeof *reach), found = false;
    if (!reach) return err_code(e, ERR_MEMORY, "out of memory");
    const Model *m = interp_model(it);
    reach[from] = true;
    for (int i = from; i >= 0 && !found; i--) {
        const Stage *st = interp_stage(it, i);
        for (int j = 0; j < st->n_in && reach[i]; j++) {
            if (st->in[j].kind == REF_STAGE) reach[st->in[j].index] = true;
            found = found || (st->in[j].kind == REF_WEIGHT && !m->params[st->in[j].index].fixed);
        }
    }
    free(reach);
    return found || err_set(e, "%s:%d: %s depends on no trained weight, so the loss has no gradient to give",
                            interp_program(it)->file, interp_stage(it, from)->line, interp_stage(it, from)->id);
}

bool loss_target(const Interp *it, LossInfo *li, Err *e) {
    int n, logits = -1, log_probs = -1;
    const ProgramOutput *o = interp_outputs(it, &n);
    for (int i = 0; i < n; i++) {
        if (!strcmp(o[i].name, "logits")) logits = o[i].stage;
        if (!strcmp(o[i].name, "log_probs")) log_probs = o[i].stage;
    }
    const Program *p = interp_program(it);
    if (logits < 0 && log_probs < 0)
        return err_set(e, "%s publishes neither 'logits' nor 'log_probs', so there is no loss to take a gradient of "
                       "(add: output logits = ...)", p->file);
    *li = (LossInfo){.scored = logits >= 0 ? logits : log_probs, .log_probs = logits < 0};
    const Stage *st = interp_stage(it, li->scored);
    li->V = (int)shape_last(&st->shape);
    li->rows = (int)(shape_numel(&st->shape) / li->V);
    if (st->shape.ndim > 2) {
        char sh[64];
        return err_set(e, "%s:%d: %s is %s: the loss needs one row of scores per label, [rows, classes] or [classes]",
                       p->file, st->line, li->log_probs ? "log_probs" : "logits", shape_str(&st->shape, sh, sizeof sh));
    }
    return backward_check(it, li->scored, e) && reaches_weight(it, li->scored, e);
}

bool labels_parse(const char *text, const char *what, float *out, int cap, int *n, Err *e) {
    *n = 0;
    for (const char *s = text; *s;) {
        char *end;
        errno = 0;
        const long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > 1 << 24 || (*end && *end != ','))
            return err_set(e, "%s: '%s' is not a list of whole numbers like 5,9,3 (at item %d)", what, text, *n + 1);
        if (*n == cap) return err_set(e, "%s: more than %d ids", what, cap);
        out[(*n)++] = (float)v;
        s = *end ? end + 1 : end;
        if (*end && !*s) return err_set(e, "%s: '%s' ends with a comma", what, text);
    }
    return *n > 0 || err_set(e, "%s: no ids given", what);
}

// Whether label k counts: not the model's pad id.
static bool counts(const Model *m, float label) { return !(m->cfg.pad_id.set && label == (float)m->cfg.pad_id.id); }

static bool check_labels(const Interp *it, LossInfo *li, const float *labels, int n, Err *e) {
    const Model *m = interp_model(it);
    const Stage *st = interp_stage(it, li->scored);
    char sh[64];
    shape_str(&st->shape, sh, sizeof sh);
    const char *name = li->log_probs ? "log_probs" : "logits";
    if (n != li->rows && st->shape.ndim == 1)
        return err_set(e, "--labels has %d ids, but %s is %s, one row of class scores: give one id, the class", n, name, sh);
    if (n != li->rows)
        return err_set(e, "--labels has %d id%s, but %s is %s: give one id per row (%d), the next token at each target "
                       "position", n, n == 1 ? "" : "s", name, sh, li->rows);
    li->counted = 0;
    for (int k = 0; k < n; k++) {
        if (!counts(m, labels[k])) continue;
        if (labels[k] >= (float)li->V)
            return err_set(e, "--labels: id %d at position %d is outside the %d classes of %s %s", (int)labels[k], k, li->V,
                           name, sh);
        li->counted++;
    }
    return li->counted > 0 || err_set(e, "--labels: every id is the pad id %d, so no row counts", m->cfg.pad_id.id);
}

bool loss_value(const Interp *it, const LossInfo *li, const float *labels, double *loss, float *dscored, Err *e) {
    const float *x = interp_output(it, li->scored);
    if (!x) return err_set(e, "the pass has not reached %s", interp_stage(it, li->scored)->id);
    const Model *m = interp_model(it);
    double sum = 0;
    for (int r = 0; r < li->rows; r++) {
        const float *row = x + (size_t)r * li->V;
        float *d = dscored ? dscored + (size_t)r * li->V : NULL;
        if (d) memset(d, 0, sizeof(float) * (size_t)li->V);
        if (!counts(m, labels[r])) continue;
        const int y = (int)labels[r];
        if (li->log_probs) {
            sum -= row[y];
            if (d) d[y] = (float)(-1.0 / li->counted);
            continue;
        }
        double top = row[0], z = 0;
        for (int v = 1; v < li->V; v++) top = row[v] > top ? row[v] : top;
        for (int v = 0; v < li->V; v++) z += exp((double)row[v] - top);
        sum += top + log(z) - row[y];
        for (int v = 0; d && v < li->V; v++)
            d[v] = (float)((exp((double)row[v] - top) / z - (v == y)) / li->counted);
    }
    *loss = sum / li->counted;
    return isfinite(*loss) || err_set(e, "the loss is not a finite number (%g): %s holds values that are not finite",
                                      *loss, interp_stage(it, li->scored)->id);
}

bool grad_pass(Grads *g, Interp *it, const float *labels, int n, float *dscored, LossInfo *li, Err *e) {
    if (!interp_run(it, e) || !check_labels(it, li, labels, n, e)) return false;
    if (!grads_tie(g, interp_program(it), &li->untied, e)) return false;
    if (!loss_value(it, li, labels, &li->loss, dscored, e)) return false;
    grads_zero(g);
    grads_check_finite(g, true);
    if (!backward(g, it, li->scored, dscored, e)) return false;
    grads_sum_ties(g);
    return true;
}
