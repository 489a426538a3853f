// probe.c: activation patching and the logit lens (see probe.h).
#include "probe.h"

#include "backward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const sweep_names[SWEEP_COUNT] = {"resid", "heads"};

static int published(const Interp *it, const char *name) {
    int n;
    const ProgramOutput *o = interp_outputs(it, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(o[i].name, name)) return o[i].stage;
    return -1;
}

bool patch_target(PatchTarget *t, const Interp *it, int token, Err *e) {
    const int k = published(it, "logits");
    if (k < 0) return err_set(e, "%s publishes no 'logits' to read the target's score from", interp_program(it)->file);
    const Stage *st = interp_stage(it, k);
    const int V = (int)shape_last(&st->shape), rows = (int)(shape_numel(&st->shape) / V);
    if (token < 0 || token >= V) return err_set(e, "the target token %d is outside the %d columns of %s", token, V, st->id);
    const float *x = interp_output(it, k);
    if (!x) return err_set(e, "the pass has not reached %s", st->id);
    t->scored = k, t->row = rows - 1, t->token = token;
    t->clean = x[(size_t)t->row * V + token];
    return true;
}

static double logit_now(const Interp *it, const PatchTarget *t) {
    const Stage *st = interp_stage(it, t->scored);
    return interp_output(it, t->scored)[(size_t)t->row * shape_last(&st->shape) + t->token];
}

// The prefix of a stage id up to its layer ("decoder.layers.1"), or the id itself.
static void layer_label(const Stage *st, char *out, size_t n) {
    const char *at = strstr(st->id, "layers.");
    const char *end = at ? at + 7 : NULL;
    while (end && *end >= '0' && *end <= '9') end++;
    snprintf(out, n, "%.*s", end ? (int)(end - st->id) : (int)strlen(st->id), st->id);
}

// The last stage of each layer (its output: the residual stream after it), in pass order; only
// `part` when it is not PART_COUNT. Returns how many (at most max).
static int layer_outputs(const Interp *it, Part part, int *idx, int max) {
    int n = 0;
    for (int i = 0; i < interp_n_done(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (!st->where.has_layer || st->step || (part != PART_COUNT && st->where.part != part)) continue;
        const bool same = n > 0 && interp_stage(it, idx[n - 1])->where.part == st->where.part &&
                          interp_stage(it, idx[n - 1])->where.layer == st->where.layer;
        if (same) idx[n - 1] = i;
        else if (n < max) idx[n++] = i;
    }
    return n;
}

static bool same_shapes(const Interp *a, const Interp *b, Err *e) {
    if (interp_n_done(a) != interp_n_done(b)) return err_set(e, "the two passes differ in length: patching needs inputs of the same length");
    for (int i = 0; i < interp_n_done(a); i++)
        if (!shape_eq(&interp_stage(a, i)->shape, &interp_stage(b, i)->shape))
            return err_set(e, "%s has another shape in the two passes: patching needs inputs of the same length",
                           interp_stage(a, i)->id);
    return true;
}

// Writes clean's values of [first, first + n) into corrupt's stage k, runs on, reads the logit,
// and puts corrupt's own values (saved) back.
static bool patched(const Interp *clean, Interp *corrupt, int k, size_t first, size_t n, const float *saved,
                    const PatchTarget *t, double *logit, int *top, Err *e) {
    if (!interp_set_values(corrupt, k, first, interp_output(clean, k) + first, n, e) || !interp_run(corrupt, e)) return false;
    *logit = logit_now(corrupt, t);
    if (top) {  // the token the patched pass then predicts at the scored row
        const int V = (int)shape_last(&interp_stage(corrupt, t->scored)->shape);
        *top = row_argmax(interp_output(corrupt, t->scored) + (size_t)t->row * V, V);
    }
    return interp_set_values(corrupt, k, first, saved + first, n, e);
}

static bool sweep_row(PatchRow *r, const Interp *clean, Interp *corrupt, Sweep sweep, const PatchTarget *t, Err *e) {
    const Stage *st = interp_stage(corrupt, r->stage);
    const size_t total = (size_t)shape_numel(&st->shape);
    float *saved = malloc(sizeof(float) * total);
    if (!saved) return err_code(e, ERR_MEMORY, "out of memory");
    memcpy(saved, interp_output(corrupt, r->stage), sizeof(float) * total);
    r->n = sweep == SWEEP_HEADS ? st->shape.dim[0] : (int)shape_rows(&st->shape);
    if (r->n > PROBE_MAX_COLS) r->n = PROBE_MAX_COLS;
    const size_t each = total / (size_t)(sweep == SWEEP_HEADS ? st->shape.dim[0] : shape_rows(&st->shape));
    bool ok = true;
    for (int c = 0; c < r->n && ok; c++) {
        ok = patched(clean, corrupt, r->stage, (size_t)c * each, each, saved, t, &r->logit[c], NULL, e);
        r->effect[c] = (r->logit[c] - t->corrupt) / (t->clean - t->corrupt);
    }
    free(saved);
    return ok && interp_run(corrupt, e);
}

// Gradient x activation for every row of a sweep: one backward pass of the target's logit on the
// corrupted run, then each cell's gradient dotted with clean - corrupted there.
static bool attribute(PatchSweep *out, const Interp *clean, const Interp *corrupt, Err *e) {
    const PatchTarget *t = &out->target;
    const Stage *sc = interp_stage(corrupt, t->scored);
    const size_t n = (size_t)shape_numel(&sc->shape);
    float *seed = calloc(n, sizeof *seed);
    Grads *g = seed ? grads_new(interp_model(corrupt), e) : NULL;
    bool ok = g != NULL;
    if (ok) {
        seed[(size_t)t->row * shape_last(&sc->shape) + t->token] = 1.0f;  // d(logit)/d(logits)
        ok = backward(g, corrupt, t->scored, seed, e);
    }
    for (int k = 0; ok && k < out->n_rows; k++) {
        PatchRow *r = &out->rows[k];
        const float *d = grads_stage(g, r->stage), *a = interp_output(clean, r->stage), *b = interp_output(corrupt, r->stage);
        const size_t each = (size_t)shape_numel(&interp_stage(corrupt, r->stage)->shape) / (size_t)r->n;
        for (int c = 0; c < r->n; c++) {
            double s = 0;
            for (size_t q = (size_t)c * each; d && q < (size_t)(c + 1) * each; q++) s += (double)d[q] * (a[q] - b[q]);
            r->attribution[c] = s / (t->clean - t->corrupt);
        }
    }
    if (!ok && !e->msg[0]) err_code(e, ERR_MEMORY, "out of memory");
    grads_free(g);
    free(seed);
    return ok;
}

bool patch_sweep(PatchSweep *out, const Interp *clean, Interp *corrupt, Sweep sweep, int token, Err *e) {
    memset(out, 0, sizeof *out);
    out->sweep = sweep;
    if (!same_shapes(clean, corrupt, e) || !patch_target(&out->target, clean, token, e)) return false;
    out->target.corrupt = logit_now(corrupt, &out->target);
    if (out->target.clean == out->target.corrupt)
        return err_set(e, "the target's logit is the same in both runs (%g): nothing to restore", out->target.clean);
    int idx[PROBE_MAX_ROWS], n = 0;
    if (sweep == SWEEP_RESID) n = layer_outputs(clean, PART_COUNT, idx, PROBE_MAX_ROWS);
    for (int i = 0; sweep == SWEEP_HEADS && i < interp_n_done(clean) && n < PROBE_MAX_ROWS; i++) {
        const Stage *st = interp_stage(clean, i);
        if (st->role == ROLE_CONTEXT && st->shape.ndim == 3 && !st->step) idx[n++] = i;
    }
    if (!n) return err_set(e, "%s has no %s to sweep", interp_program(clean)->file, sweep == SWEEP_HEADS ? "attention heads" : "layers");
    for (int k = 0; k < n; k++) {
        PatchRow *r = &out->rows[out->n_rows++];
        r->stage = idx[k];
        if (sweep == SWEEP_HEADS) {  // the attention: its block ("decoder.layers.0.cross_attn")
            const char *id = interp_stage(clean, idx[k])->id, *dot = strrchr(id, '.');
            snprintf(r->label, sizeof r->label, "%.*s", dot ? (int)(dot - id) : (int)strlen(id), id);
        } else layer_label(interp_stage(clean, idx[k]), r->label, sizeof r->label);
        if (!sweep_row(r, clean, corrupt, sweep, &out->target, e)) return false;
    }
    return attribute(out, clean, corrupt, e);
}

bool patch_one(const Interp *clean, Interp *corrupt, const char *id, int head, int pos, int token, double *logit, int *top,
               Err *e) {
    PatchTarget t;
    if (!same_shapes(clean, corrupt, e) || !patch_target(&t, clean, token, e)) return false;
    const int k = interp_find(corrupt, id);
    if (k < 0 || k >= interp_n_done(corrupt)) return err_set(e, "--stage: this pass has no stage '%s'", id);
    const Stage *st = interp_stage(corrupt, k);
    const size_t total = (size_t)shape_numel(&st->shape);
    size_t first = 0, n = total;
    if (head >= 0) {
        if (st->role != ROLE_CONTEXT || st->shape.ndim != 3 || head >= st->shape.dim[0])
            return err_set(e, "--head %d: %s is not an attention's per-head context with that head (patch a 'context' stage)",
                           head + 1, id);
        n = total / (size_t)st->shape.dim[0], first = (size_t)head * n;
    } else if (pos >= 0) {
        if (st->shape.ndim != 2 || pos >= st->shape.dim[0])
            return err_set(e, "--position %d: %s is not [positions, width] with that many rows", pos, id);
        n = (size_t)st->shape.dim[1], first = (size_t)pos * n;
    }
    float *saved = malloc(sizeof(float) * total);
    if (!saved) return err_code(e, ERR_MEMORY, "out of memory");
    memcpy(saved, interp_output(corrupt, k), sizeof(float) * total);
    const bool ok = patched(clean, corrupt, k, first, n, saved, &t, logit, top, e) && interp_run(corrupt, e);
    free(saved);
    return ok;
}

// ---- the logit lens ----

// The stages from the last layer's output x to the logits, last first; false if they are not a
// chain whose every other input is a weight or token ids.
static int readout(const Interp *it, int x, int scored, int *chain, int max) {
    int n = 0;
    for (int k = scored; k != x; k = interp_stage(it, k)->in[0].index) {
        const Stage *st = interp_stage(it, k);
        if (n == max || st->n_in < 1 || st->in[0].kind != REF_STAGE) return -1;
        for (int j = 1; j < st->n_in; j++)
            if (st->in[j].kind == REF_STAGE) return -1;
        chain[n++] = k;
    }
    return n;
}

static bool lens_row(LensRow *r, const Interp *it, const int *chain, int n, int V, Err *e) {
    const float *cur = interp_output(it, r->stage);
    float *buf[2] = {NULL, NULL};
    for (int q = n - 1; q >= 0; q--) {  // nearest the layers first
        const Stage *st = interp_stage(it, chain[q]);
        const float *in[STAGE_MAX_IN] = {cur};
        for (int j = 1; j < st->n_in; j++) in[j] = interp_input(it, chain[q], j);
        float *out = realloc(buf[q & 1], sizeof(float) * ((size_t)shape_numel(&st->shape) + 1));
        if (!out) return free(buf[0]), free(buf[1]), err_code(e, ERR_MEMORY, "out of memory");
        buf[q & 1] = out;
        op_exec(st, in, NULL, out, 1);
        cur = out;
    }
    r->rows = (int)(shape_numel(&interp_stage(it, chain[0])->shape) / V);
    if (r->rows > PROBE_MAX_COLS) r->rows = PROBE_MAX_COLS;
    for (int t = 0; t < r->rows; t++) {
        const float *x = cur + (size_t)t * V;
        double top = x[0], z = 0;
        for (int v = 1; v < V; v++) top = fmax(top, x[v]);
        for (int v = 0; v < V; v++) z += exp(x[v] - top);
        for (int k = 0; k < 3; k++) {
            int best = -1;
            for (int v = 0; v < V; v++) {
                bool used = false;
                for (int q = 0; q < k; q++) used = used || r->top[t][q] == v;
                if (!used && (best < 0 || x[v] > x[best])) best = v;
            }
            r->top[t][k] = best;
            r->prob[t][k] = best >= 0 ? (float)(exp(x[best] - top) / z) : 0.0f;
        }
    }
    free(buf[0]), free(buf[1]);
    return true;
}

bool logit_lens(Lens *out, const Interp *it, Err *e) {
    memset(out, 0, sizeof *out);
    const int scored = published(it, "logits");
    if (scored < 0) return err_set(e, "%s publishes no 'logits' for the lens to read", interp_program(it)->file);
    int idx[PROBE_MAX_ROWS], chain[8];
    const Part part = program_has_decoder(interp_program(it)) ? PART_DECODER : PART_ENCODER;
    const int n = layer_outputs(it, part, idx, PROBE_MAX_ROWS);
    const int links = n ? readout(it, idx[n - 1], scored, chain, 8) : -1;
    if (links < 1)
        return err_set(e, "%s: the logits are not the last layer's output put through weights alone, so the lens cannot "
                       "read the other layers the same way", interp_program(it)->file);
    out->V = (int)shape_last(&interp_stage(it, scored)->shape);
    for (int k = 0; k < n; k++) {
        LensRow *r = &out->rows[out->n_rows++];
        r->stage = idx[k];
        snprintf(r->label, sizeof r->label, "%s", interp_stage(it, idx[k])->id);
        if (!lens_row(r, it, chain, links, out->V, e)) return false;
    }
    return true;
}
