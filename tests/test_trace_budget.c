// test_trace_budget.c: a pass under a trace budget (RunSpec.trace_budget, --trace-mb) drops the
// outputs read only inside their block and recomputes them when read. Held here to the same pass
// without a budget, bit for bit, stage by stage, read in a shuffled order (so a block is
// recomputed after others pushed it out), on models of the course:
// - lessons/gpt2.md (its folder, GPT-2's layout): greedy decoding with the cached decoder after
//   an 8-token prompt, and one round after a 63-token prompt, the longest its 64 positions take;
// - lessons/forward-pass.md (the dates model, an encoder-decoder): teacher forcing, then a
//   value changed in a dropped stage's block (patching), the pass re-run on it;
// - the backward pass over gpt2.md's 40-token prompt: every gradient, of weights and of stages.
// In the gpt2.md passes, rows of the row-wise stages are read alone first (interp_output_row):
// those the budget let go are computed from their inputs' rows, the same bits.
// The budget is the least interp_min_trace_bytes allows; one megabyte less is refused, in a
// message naming the least that works.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "grad_pass.h"
#include "rows.h"
#include "session.h"

typedef struct {
    float **out;  // [stages] each stage's output, copied
    int n;
} Copy;

static size_t floats_of(const Interp *it, int i) {
    return (size_t)shape_numel(&interp_stage(it, i)->shape) * (size_t)interp_batch(it);
}

static Copy copy_all(const Interp *it) {
    Copy c = {calloc((size_t)interp_n_done(it), sizeof(float *)), interp_n_done(it)};
    for (int i = 0; c.out && i < c.n; i++) {
        const float *d = interp_output(it, i);
        CHECK(d != NULL, "stage %d of the pass without a budget", i);
        c.out[i] = malloc(sizeof(float) * floats_of(it, i));
        if (d && c.out[i]) memcpy(c.out[i], d, sizeof(float) * floats_of(it, i));
    }
    return c;
}

static void copy_free(Copy *c) {
    for (int i = 0; c->out && i < c->n; i++) free(c->out[i]);
    free(c->out);
}

// Every stage of `it`, read in a shuffled order, has the bits of the copy.
static void same_bits(const Interp *it, const Copy *c, const char *what) {
    CHECK(interp_n_done(it) == c->n, "%s: %d stages with a budget, %d without", what, interp_n_done(it), c->n);
    int *order = malloc(sizeof(int) * (size_t)c->n);
    if (!order || interp_n_done(it) != c->n) {
        free(order);
        return;
    }
    for (int i = 0; i < c->n; i++) order[i] = i;
    unsigned r = 12345;
    for (int i = c->n - 1; i > 0; i--) {
        r = r * 1103515245u + 12345u;
        const int j = (int)((r >> 8) % (unsigned)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    // Read in pairs: the first pointer must still hold its numbers after the second read (which
    // may recompute and make room), until the reads are released.
    int differ = 0;
    for (int k = 0; k < c->n; k++) {
        const int i = order[k], prev = k % 2 ? order[k - 1] : -1;
        const float *p = prev >= 0 ? interp_output(it, prev) : NULL, *d = interp_output(it, i);
        if (!d || memcmp(d, c->out[i], sizeof(float) * floats_of(it, i))) {
            if (differ++ < 3) CHECK(false, "%s: %s differs from the pass without a budget", what, interp_stage(it, i)->id);
        }
        if (p && memcmp(p, c->out[prev], sizeof(float) * floats_of(it, prev)) && differ++ < 3)
            CHECK(false, "%s: %s changed under its reader while %s was read", what, interp_stage(it, prev)->id,
                  interp_stage(it, i)->id);
        if (k % 2) interp_release_reads(it);
    }
    CHECK(differ == 0, "%s: %d of %d stages differ", what, differ, c->n);
    // Reads may hold more than the budget until they are released; the next read then makes room.
    interp_release_reads(it);
    interp_output(it, 0);
    CHECK(interp_trace_bytes(it) <= interp_trace_budget(it), "%s: %zu bytes held after the reads, over the budget of %zu",
          what, interp_trace_bytes(it), interp_trace_budget(it));
    free(order);
    printf("  %s: %d stages, the same bits\n", what, c->n);
}

static bool open_run(Session *s, SessionSpec spec, long long mb, Err *e) {
    spec.trace_mb = mb;
    if (!session_open(s, &spec, e)) return false;
    if (interp_run(s->it, e)) return true;
    session_close(s);
    return false;
}

// The session's pass again under a budget of `bytes` (as --trace-mb gives one), run to its end;
// NULL (e set) if refused.
static Interp *rerun(const Session *s, size_t bytes, Err *e) {
    RunSpec r = s->run;
    r.trace_budget = bytes, r.trace_budget_given = true;
    Interp *it = interp_new(&s->lesson.program, &s->model, &r, e);
    if (it && !interp_run(it, e)) interp_free(it), it = NULL;
    return it;
}

// Rows 0, the middle and the last of every row-wise stage (rows.h), read alone
// (interp_output_row) before any stage is read whole: each read has the bits of the copy's row,
// the ones the budget let go computed from their inputs' rows, and the trace holds no more after.
// A row whose inputs lead back to a dropped stage that is not row-wise (merged heads) cannot be
// read alone; the generator's (the decode view's bars) always can: its inputs are rows to the
// residual stream, which is kept.
static void same_rows(const Interp *it, const Copy *c, const char *what) {
    const size_t before = interp_trace_bytes(it);
    int rows = 0, differ = 0, failed = 0;
    for (int i = 0; i < c->n && i < interp_n_done(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (!rows_row_wise(st) || st->shape.ndim < 1) continue;
        const int T = st->shape.dim[0];
        const size_t X = floats_of(it, i) / (size_t)T;
        float *row = malloc(sizeof(float) * X);
        const int ts[3] = {0, T / 2, T - 1};
        for (int k = 0; k < 3 && row; k++) {
            rows++;
            if (!interp_output_row(it, i, ts[k], row)) {
                failed++;
                CHECK(!strstr(st->id, "generator."), "%s: row %d of %s could not be read alone", what, ts[k], st->id);
            } else if (memcmp(row, c->out[i] + X * (size_t)ts[k], sizeof(float) * X) != 0 && differ++ < 3)
                CHECK(false, "%s: row %d of %s differs from the pass without a budget", what, ts[k], st->id);
        }
        free(row);
    }
    CHECK(rows > 0 && failed < rows / 2 && differ == 0, "%s: %d rows read alone, %d could not be, %d differ", what, rows,
          failed, differ);
    printf("  %s: %d of %d rows read alone, the same bits\n", what, rows - failed, rows);
    CHECK(interp_trace_bytes(it) == before, "%s: reading rows alone changed what the trace holds (%zu to %zu bytes)", what,
          before, interp_trace_bytes(it));
}

// The pass of `spec` without a budget (*s, left open, copied into *c) and under the least
// budget (returned), or NULL; the budget holds. A pass of one round: one byte less is refused,
// naming the least in megabytes (greedy rounds grow past the least their first round was
// checked against, a row each, so one byte under the last round's least still runs).
static Interp *budgeted(const SessionSpec *spec, const char *what, bool one_round, Session *s, Copy *c) {
    Err e = {{0}};
    if (!open_run(s, *spec, -1, &e)) {  // no budget
        CHECK(false, "%s: %s", what, e.msg);
        return NULL;
    }
    const size_t least = interp_min_trace_bytes(s->it), held = interp_trace_bytes(s->it), mb = 1 << 20;
    *c = copy_all(s->it);
    char want[80];
    snprintf(want, sizeof want, "--trace-mb %zu is the smallest that works", (least + mb - 1) / mb);
    Err e2 = {{0}};
    Interp *small = one_round ? rerun(s, least - 1, &e2) : NULL;
    CHECK(!small, "%s: a budget of %zu bytes, one less than the least, runs", what, least - 1);
    interp_free(small);
    CHECK(!one_round || strstr(e2.msg, want) != NULL, "%s: the message '%s' names %s", what, e2.msg, want);
    Interp *it = rerun(s, least, &e);
    if (!it) {
        CHECK(false, "%s, %zu bytes: %s", what, least, e.msg);
        copy_free(c);
        session_close(s);
        return NULL;
    }
    const size_t with = interp_trace_bytes(it);
    CHECK(!one_round || with < held, "%s: the budget of %zu bytes dropped nothing (%zu held, %zu without)", what, least,
          with, held);
    CHECK(with <= least, "%s: %zu bytes held, over the budget of %zu", what, with, least);
    printf("  %s: %zu KB held without a budget, %zu KB under the least budget, %zu KB\n", what, held >> 10, with >> 10,
           least >> 10);
    return it;
}

static void greedy_gpt2(int prompt, int new_tokens) {
    char ids[1024] = "", what[64];
    for (int i = 0, k = 0; i < prompt; i++) k += snprintf(ids + k, sizeof ids - (size_t)k, "%s%d", i ? "," : "", 100 + 37 * i);
    SessionSpec spec = {.lesson_path = LESSONS "/gpt2.md", .src_ids = ids, .max_len = new_tokens, .cached = true};
    snprintf(what, sizeof what, "gpt2.md, %d-token prompt, %d new", prompt, new_tokens);
    Session s;
    Copy c;
    Interp *it = budgeted(&spec, what, new_tokens == 1, &s, &c);
    if (!it) return;
    same_rows(it, &c, what);
    same_bits(it, &c, what);
    same_bits(it, &c, what);  // again, after the first reading pushed blocks out
    copy_free(&c);
    interp_free(it);
    session_close(&s);
}

static void teacher_forced_patched(void) {
    const SessionSpec spec = {.lesson_path = LESSONS "/forward-pass.md", .target = "2026-11-22"};
    const char *what = "forward-pass.md, teacher forcing";
    Session s;
    Copy c;
    Interp *it = budgeted(&spec, what, true, &s, &c);
    if (!it) return;
    same_bits(it, &c, what);
    copy_free(&c);
    // Patching: a value of the first layer's attention weights changed, the rest re-run.
    Err e = {{0}};
    const int k = interp_find(it, "encoder.layers.0.self_attn.weights");
    CHECK(k >= 0, "the dates lesson has encoder.layers.0.self_attn.weights");
    interp_release_reads(it);  // let the reads above go: the patched stage's block is dropped by the re-run
    const float v = 0.5f;
    const bool ok = k >= 0 && interp_set_values(it, k, 1, &v, 1, &e) && interp_set_values(s.it, k, 1, &v, 1, &e) &&
                    interp_run(it, &e) && interp_run(s.it, &e);
    CHECK(ok, "patching: %s", e.msg);
    CHECK(interp_trace_bytes(it) <= interp_trace_budget(it), "patched: %zu bytes held, over the budget of %zu",
          interp_trace_bytes(it), interp_trace_budget(it));
    if (ok) {
        c = copy_all(s.it);
        same_bits(it, &c, "forward-pass.md, patched");
        copy_free(&c);
    }
    interp_free(it);
    session_close(&s);
}

// The backward pass reads the forward's outputs through the trace: under the least budget it
// recomputes what went, and every weight's gradient and every stage's has the bits of the
// backward pass without a budget (lessons/gpt2.md's folder, one pass over a 40-token prompt).
static void backward_under_budget(void) {
    enum { T = 40 };
    char ids[400] = "";
    float labels[T];
    for (int i = 0, k = 0; i < T; i++) {
        k += snprintf(ids + k, sizeof ids - (size_t)k, "%s%d", i ? "," : "", 100 + 37 * i);
        labels[i] = (float)(200 + 37 * i);
    }
    const SessionSpec spec = {.lesson_path = LESSONS "/gpt2.md", .src_ids = ids, .force_prompt = true};
    const char *what = "gpt2.md, backward over a 40-token prompt";
    Session s;
    Copy c;
    Interp *it = budgeted(&spec, what, true, &s, &c);
    if (!it) return;
    copy_free(&c);
    Err e = {{0}};
    LossInfo la, lb;
    Grads *ga = grads_new(&s.model, &e), *gb = grads_new(&s.model, &e);
    float *da = malloc(sizeof(float) * T * 50257), *db = malloc(sizeof(float) * T * 50257);
    const bool ok = ga && gb && da && db && loss_target(s.it, &la, &e) && loss_target(it, &lb, &e) &&
                    grad_pass(ga, s.it, labels, T, da, &la, &e) && grad_pass(gb, it, labels, T, db, &lb, &e);
    CHECK(ok, "%s: %s", what, e.msg);
    if (ok) {
        CHECK(la.loss == lb.loss, "%s: loss %.9g with the budget, %.9g without", what, lb.loss, la.loss);
        CHECK(!memcmp(grads_weights(ga), grads_weights(gb), sizeof(float) * grads_size(ga)),
              "%s: the weights' gradients differ from the pass without a budget", what);
        int differ = 0;
        for (int k = 0; k < interp_n_stages(it); k++) {
            const float *a = grads_stage(ga, k), *b = grads_stage(gb, k);
            if ((a == NULL) != (b == NULL) || (a && memcmp(a, b, sizeof(float) * floats_of(it, k)))) differ++;
        }
        CHECK(differ == 0, "%s: %d stages' gradients differ", what, differ);
        printf("  %s: loss %.7g, every gradient the same bits\n", what, la.loss);
    }
    free(da), free(db);
    grads_free(ga), grads_free(gb);
    interp_free(it);
    session_close(&s);
}

int main(void) {
    greedy_gpt2(8, 4);
    greedy_gpt2(63, 1);
    teacher_forced_patched();
    backward_under_budget();
    return check_finish("test_trace_budget");
}
