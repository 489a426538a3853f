// gradcheck.c: numerical gradients beside analytic ones (see gradcheck.h).
#include "gradcheck.h"
#include "declare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TWINS = 16 };

// The tensor under check: where its numbers live, and its analytic gradient.
typedef struct {
    float *x;           // a weight's numbers (NULL: a stage's output, set through the interpreter)
    float *twin[MAX_TWINS];  // the weights `tie`d to it that hold its numbers: one tensor, moved together
    int n_twins;
    const float *now;   // its values now
    const float *grad;  // the analytic gradient, as many
    size_t n;
    int stage;          // the stage whose output it is, or the first stage to re-run after a weight
} Target;

// The names a `tie` gives weight w's tensor, when they hold its numbers (as grads_tie ties
// them): the gradient is their sum, so the check moves them all.
static bool find_twins(Target *t, const Program *p, Model *m, int w, Err *e) {
    const StEntry *en = &m->weights.entries[w];
    const size_t bytes = sizeof(float) * (size_t)shape_numel(&en->shape);
    for (int s = 0; s < p->n; s++) {
        const Stmt *st = &p->stmts[s];
        bool named = false, same = true;
        for (int k = 0; program_tie_on(st, &m->conf) && k < st->n_args; k++) {
            const int o = model_weight_index(m, st->args[k].text);
            named = named || o == w;
            same = same && o >= 0 && shape_eq(&m->weights.entries[o].shape, &en->shape) &&
                   !memcmp(m->weights.entries[o].data, en->data, bytes);
        }
        for (int k = 0; named && same && k < st->n_args; k++) {
            float *d = m->weights.entries[model_weight_index(m, st->args[k].text)].data;
            if (d == en->data) continue;
            if (t->n_twins == MAX_TWINS) return err_set(e, "--gradcheck %s: more than %d tied names", en->name, MAX_TWINS);
            t->twin[t->n_twins++] = d;
        }
    }
    return true;
}

static bool find_target(Target *t, GradCheck *out, Interp *it, Model *m, const Grads *g, const char *id, Err *e) {
    const int k = interp_find(it, id);
    if (k >= 0) {
        const float *d = grads_stage(g, k);
        if (!d) return err_set(e, "--gradcheck %s: the loss does not depend on this stage, so its gradient is 0", id);
        *t = (Target){.now = interp_output(it, k), .grad = d,
                      .n = (size_t)shape_numel(&interp_stage(it, k)->shape) * interp_batch(it), .stage = k};
        return true;
    }
    const int w = model_weight_index(m, id);
    if (w < 0) return err_set(e, "--gradcheck: '%s' is neither a stage of this pass nor a weight of the model", id);
    if (m->params[w].fixed) return err_set(e, "--gradcheck %s: a buffer, never trained, has no gradient", id);
    if (m->weights.entries[w].half && !model_widen(m, e)) return false;  // moved one number at a time: float32
    StEntry *en = &m->weights.entries[w];
    out->weight = true;
    *t = (Target){.x = en->data, .now = en->data, .grad = grads_of((Grads *)g, id), .n = (size_t)shape_numel(&en->shape)};
    return find_twins(t, interp_program(it), m, w, e);
}

// The loss with element i of the target set to v (the pass re-run from where it matters).
static bool loss_at(Interp *it, const Target *t, size_t i, float v, const LossInfo *li, const float *labels,
                    double *loss, Err *e) {
    for (int k = 0; t->x && k < t->n_twins; k++) t->twin[k][i] = v;
    if (t->x) t->x[i] = v, interp_rewind(it, 0);
    else if (!interp_set_values(it, t->stage, i, &v, 1, e)) return false;
    return interp_run(it, e) && loss_value(it, li, labels, loss, NULL, e);
}

enum { CANDIDATES = 8 * GRADCHECK_POINTS };  // elements tried, for points without a kink

// The elements to check: those with the largest |gradient| (finite values only), where the
// float32 pass's round-off is smallest beside the difference.
static int choose(const Target *t, size_t *idx) {
    int n = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (!isfinite(t->now[i]) || t->grad[i] == 0.0f) continue;
        int at = n < CANDIDATES ? n++ : CANDIDATES;
        while (at > 0 && fabsf(t->grad[i]) > fabsf(t->grad[idx[at - 1]])) {
            if (at < CANDIDATES) idx[at] = idx[at - 1];
            at--;
        }
        if (at < CANDIDATES) idx[at] = i;
    }
    return n;
}

// Whether stage k is a ReLU: its input's sign decides which of two formulas holds.
static bool is_relu(const Stage *st) { return st->op == OP_RELU || (st->op == OP_ACTIVATION && st->attr.act == ACT_RELU); }

// Whether any ReLU after the target sees an input change sign between x - h and x + h: then
// the loss has a kink inside the step and no difference quotient measures its gradient.
// Each ReLU input's signs at x + h are packed into `signs` (bits), then compared at x - h.
static bool kink_within(Interp *it, const Target *t, size_t i, float v, double h, const LossInfo *li,
                        const float *labels, bool *kink, Err *e) {
    size_t bits = 0;
    for (int k = t->stage; k < interp_n_stages(it); k++)
        if (is_relu(interp_stage(it, k))) bits += (size_t)shape_numel(&interp_stage(it, k)->shape) * interp_batch(it);
    unsigned char *signs = calloc(bits / 8 + 1, 1);
    if (!signs) return err_code(e, ERR_MEMORY, "out of memory");
    double loss;
    *kink = false;
    for (int side = 0; side < 2 && !*kink; side++) {
        if (!loss_at(it, t, i, (float)(side ? v - h : v + h), li, labels, &loss, e)) return free(signs), false;
        size_t b = 0;
        for (int k = t->stage; k < interp_n_stages(it) && !*kink; k++) {
            if (!is_relu(interp_stage(it, k))) continue;
            const float *x = interp_input(it, k, 0);
            const size_t n = (size_t)shape_numel(&interp_stage(it, k)->shape) * interp_batch(it);
            for (size_t q = 0; q < n && !*kink; q++, b++) {
                const unsigned char bit = (unsigned char)(1u << (b % 8)), pos = x[q] > 0.0f;
                if (!side) signs[b / 8] |= pos ? bit : 0;
                else *kink = ((signs[b / 8] & bit) != 0) != pos;
            }
        }
    }
    free(signs);
    return true;
}

// The central difference at step h (the steps as float32 holds them, the quotient in float64).
static bool central(Interp *it, const Target *t, size_t i, float v, double h, const LossInfo *li, const float *labels,
                    double *out, Err *e) {
    const float up = (float)(v + h), down = (float)(v - h);
    double lu, ld;
    if (!loss_at(it, t, i, up, li, labels, &lu, e) || !loss_at(it, t, i, down, li, labels, &ld, e)) return false;
    *out = (lu - ld) / ((double)up - (double)down);
    return true;
}

// Ridders' extrapolation: central differences from step h, shrinking by SHRINK, each column of the
// tableau cancelling the next even power of h; the estimate kept is the one whose neighbours
// agree best, and that disagreement is its error. It stops when a new row is worse than that.
enum { TABLEAU = 8 };
#define SHRINK 1.4
static bool ridders(Interp *it, const Target *t, size_t i, double h, const LossInfo *li, const float *labels, GradPoint *p,
                    Err *e) {
    const float v = t->now[i];
    double a[TABLEAU][TABLEAU];
    p->numeric = 0, p->error = INFINITY;
    for (int r = 0; r < TABLEAU; r++, h /= SHRINK) {
        if (!central(it, t, i, v, h, li, labels, &a[r][0], e)) return false;
        double fac = SHRINK * SHRINK;
        for (int c = 1; c <= r; c++, fac *= SHRINK * SHRINK) {
            a[r][c] = (a[r][c - 1] * fac - a[r - 1][c - 1]) / (fac - 1);
            const double err = fmax(fabs(a[r][c] - a[r][c - 1]), fabs(a[r][c] - a[r - 1][c - 1]));
            if (err <= p->error) p->error = err, p->numeric = a[r][c];
        }
        if (r > 0 && fabs(a[r][r] - a[r - 1][r - 1]) >= 2 * p->error) break;
    }
    if (!isfinite(p->error)) p->numeric = a[0][0], p->error = fabs(a[0][0]);
    return loss_at(it, t, i, v, li, labels, &(double){0}, e);  // put back
}

bool gradcheck(GradCheck *out, Interp *it, Model *m, const Grads *g, const LossInfo *li, const float *labels,
               const char *id, Err *e) {
    memset(out, 0, sizeof *out);
    snprintf(out->what, sizeof out->what, "%s", id);
    Target t = {0};
    if (!find_target(&t, out, it, m, g, id, e)) return false;
    size_t idx[CANDIDATES];
    const int n = choose(&t, idx);
    if (!n) return err_set(e, "--gradcheck %s: every element's gradient is 0 (or its value not finite)", id);
    bool ok = true;
    for (int q = 0; q < n && ok && out->n < GRADCHECK_POINTS; q++) {
        const float v = t.now[idx[q]];
        double h = GRADCHECK_H * fmax(1.0, fabs((double)v));
        // The smallest step whose loss change stands well above the float32 pass's round-off.
        const double floor = 1e-6 * fmax(1.0, li->loss) / fabs((double)t.grad[idx[q]]);
        bool kink = true;
        for (; ok && kink && h >= floor; h /= 4)
            ok = kink_within(it, &t, idx[q], v, h, li, labels, &kink, e) &&
                 loss_at(it, &t, idx[q], v, li, labels, &(double){0}, e);  // put back
        if (!ok || kink) {
            out->kinked += ok;
            continue;
        }
        GradPoint *p = &out->pt[out->n++];
        *p = (GradPoint){.index = idx[q], .value = v, .h = h * 4, .analytic = t.grad[idx[q]]};
        ok = ridders(it, &t, idx[q], p->h, li, labels, p, e);
        p->rel_error = fabs(p->analytic - p->numeric) / fmax(fmax(fabs(p->analytic), fabs(p->numeric)), 1e-30);
        p->agrees = fabs(p->analytic - p->numeric) <= GRADCHECK_TOLERANCE * fmax(fabs(p->analytic), fabs(p->numeric)) +
                                                       2 * p->error;
        out->worst = fmax(out->worst, p->rel_error);
        out->disagree += !p->agrees;
    }
    out->passed = ok && out->n > 0 && out->disagree == 0;
    return ok;
}
