// test_train.c: training in C.
//   - one whole step against PyTorch (tests/fixtures/train_step.safetensors, made by
//     scripts/make_train_fixture.py): the loss and every gradient within 1e-4 relative, and the
//     weights after one Adam update, and the same batch again sees the updated weights;
//   - a half of the batch run in passes (train_step.c) gives the gradients and the weights of
//     one pass over it, bit for bit, whatever the passes' size (even or not); and a step's
//     gradients are bit for bit those of a plain pass over each half that keeps every output
//     (interp_run, cross_entropy, backward), the second half's added to the first's;
//   - a short run on a task learns (the loss falls), and the same seed reproduces it exactly;
//   - a loss that is not finite stops training and leaves the last good weights;
//   - other programs train: two encoder-decoders on a sequence task, and the classifier of
//     lessons/transformers-from-scratch.md on the classification tasks, whose loss and gradient
//     are checked against a naive cross-entropy and finite differences; programs whose loss
//     cannot reach the weights (through argmax) or whose logits do not fit the task are refused.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kernels_backward.h"
#include "session.h"
#include "train.h"

// max |a - b| <= tol * max |b| (+ a floor for all-zero tensors).
static void check_relative(const float *a, const float *b, long n, double tol, const char *what) {
    double worst = 0, scale = 0;
    for (long i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (long i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    CHECK(worst <= tol * scale + 1e-9, "%s: max difference %.3g, %.3g relative", what, worst, worst / (scale + 1e-30));
}

static void pytorch_step(void) {
    const char *path = FIXTURES "/train_step.safetensors";
    StFile f;
    Model m;
    Lesson l;
    Err e = {{0}};
    CHECK(lesson_parse(&l, "forward-pass.md", session_builtin_lesson("forward-pass.md", NULL), &e), "%s", e.msg);
    if (!st_load(&f, path, &e) || !model_load(&m, path, &l.program, NULL, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    const StEntry *src = st_find(&f, "src"), *tin = st_find(&f, "tgt_in"), *tout = st_find(&f, "tgt_out");
    StepConfig c = {src->shape.dim[0], src->shape.dim[1], tin->shape.dim[1], (float)atof(st_meta(&f, "label_smoothing")),
                    (float)atof(st_meta(&f, "beta1")), (float)atof(st_meta(&f, "beta2")),
                    (float)atof(st_meta(&f, "adam_eps"))};
    TrainState *ts = train_state_new(&m, &l.program, &c, &e);
    StepStats s;
    bool ok = ts && train_state_step(ts, src->data, tin->data, tout->data, &s, &e);
    CHECK(ok, "training step: %s", e.msg);
    if (ok) {
        const float want = st_find(&f, "loss")->data[0];
        CHECK(fabs(s.loss - want) <= 1e-4 * fabs(want), "loss %.7f, PyTorch %.7f", s.loss, want);
        int n_grads = 0;
        for (int i = 0; i < f.n_entries; i++) {
            const char *name = f.entries[i].name;
            if (strncmp(name, "grad.", 5) != 0) continue;
            float *g = grads_of(train_state_grads(ts), name + 5);
            CHECK(g != NULL, "a gradient for %s", name + 5);
            if (g) check_relative(g, f.entries[i].data, shape_numel(&f.entries[i].shape), 1e-4, name), n_grads++;
        }
        CHECK(n_grads >= 60, "every parameter's gradient compared (%d)", n_grads);
        train_state_update(ts, (float)atof(st_meta(&f, "lr")));
        for (int i = 0; i < f.n_entries; i++) {
            const char *name = f.entries[i].name;
            if (strncmp(name, "after.", 6) != 0) continue;
            const StEntry *w = model_weight(&m, name + 6);
            char gname[160];
            snprintf(gname, sizeof gname, "grad.%s", name + 6);
            const StEntry *g = st_find(&f, gname);
            // Adam's first step moves each weight by about lr * sign(gradient): where PyTorch's
            // gradient is within float noise of 0 the sign is arbitrary, so those are skipped.
            double gmax = 0, worst = 0;
            for (long k = 0; g && k < shape_numel(&g->shape); k++) gmax = fmax(gmax, fabs(g->data[k]));
            for (long k = 0; w && g && k < shape_numel(&w->shape); k++)
                if (fabs(g->data[k]) > 1e-4 * gmax) worst = fmax(worst, fabs(w->data[k] - f.entries[i].data[k]));
            CHECK(w && worst <= 2e-6, "%s after one Adam step: %.3g", name + 6, worst);
        }
        // The same batch again: the loss is that of the new weights (as a fresh state finds it).
        StepStats again, fresh;
        TrainState *ts2 = train_state_new(&m, &l.program, &c, &e);
        CHECK(train_state_step(ts, src->data, tin->data, tout->data, &again, &e) && ts2 &&
                  train_state_step(ts2, src->data, tin->data, tout->data, &fresh, &e), "%s", e.msg);
        CHECK(again.loss == fresh.loss && again.loss != s.loss, "a repeated batch sees the updated weights: "
              "%.7f, fresh state %.7f, before the update %.7f", again.loss, fresh.loss, s.loss);
        train_state_free(ts2);
    }
    train_state_free(ts);
    lesson_free(&l);
    model_free(&m);
    st_free(&f);
}

// The small encoder-decoder of the tests below, from seed 7.
static bool small_model(Lesson *l, Model *m) {
    Err e = {{0}};
    CHECK(lesson_parse(l, "forward-pass.md", session_builtin_lesson("forward-pass.md", NULL), &e), "%s", e.msg);
    ModelConfig cfg = config_base();
    cfg.d_model = 32, cfg.nhead = 4, cfg.num_encoder_layers = cfg.num_decoder_layers = 1, cfg.dim_feedforward = 64;
    cfg.src_vocab_size = cfg.tgt_vocab_size = 20, cfg.max_positions = 16;
    if (model_init_config(m, &l->program, &cfg, 7, &e)) return true;
    CHECK(false, "%s", e.msg);
    lesson_free(l);
    return false;
}

// A batch of the tests below: ids 4 to 19, the last two labels of each example pad.
static void small_batch(unsigned *r, float pad, float *src, float *tin, float *tout, int n, int L) {
    for (int i = 0; i < n; i++) {
        *r = *r * 1103515245u + 12345u, src[i] = (float)(4 + (*r >> 16) % 16);
        *r = *r * 1103515245u + 12345u, tin[i] = (float)(4 + (*r >> 16) % 16);
        *r = *r * 1103515245u + 12345u, tout[i] = i % L >= L - 2 ? pad : (float)(4 + (*r >> 16) % 16);
    }
}

// Three steps of a small encoder-decoder on fixed batches (pads among the labels), each half in
// passes of `per` examples (0: the trace budget's choice), the second thread held back as
// StepConfig.hold_second says; returns the weights and the last gradients, laid out like the
// weights, in *w and *g (the caller frees them), the losses, and how many passes' jobs the
// other half's thread ran in all (may be NULL).
enum { PASS_B = 16, PASS_L = 9, PASS_STEPS = 3 };
static bool run_held(int per, int hold, float **w, float **g, size_t *n, float loss[PASS_STEPS], int *helped) {
    Lesson l;
    Model m;
    Err e = {{0}};
    if (!small_model(&l, &m)) return false;
    const StepConfig sc = {PASS_B, PASS_L, PASS_L, 0.1f, 0.9f, 0.98f, 1e-9f, per, hold};
    TrainState *ts = train_state_new(&m, &l.program, &sc, &e);
    float src[PASS_B * PASS_L], tin[PASS_B * PASS_L], tout[PASS_B * PASS_L];
    unsigned r = 12345;
    bool ok = ts != NULL;
    for (int step = 0; ok && step < PASS_STEPS; step++) {
        small_batch(&r, (float)m.cfg.pad_id.id, src, tin, tout, PASS_B * PASS_L, PASS_L);
        StepStats st;
        ok = train_state_step(ts, src, tin, tout, &st, &e);
        loss[step] = st.loss;
        if (helped) *helped += ok ? train_state_helped(ts) : 0;
        if (ok) train_state_update(ts, 1e-3f);
    }
    CHECK(ok, "passes of %d: %s", per, e.msg);
    *n = ok ? grads_size(train_state_grads(ts)) : 0;
    *w = ok ? malloc(sizeof(float) * *n) : NULL, *g = ok ? malloc(sizeof(float) * *n) : NULL;
    if (*w && *g) {
        memcpy(*w, m.weights.arena, sizeof(float) * *n);
        memcpy(*g, grads_weights(train_state_grads(ts)), sizeof(float) * *n);
    }
    train_state_free(ts);
    model_free(&m);
    lesson_free(&l);
    return *w && *g;
}

static bool run_in_passes(int per, float **w, float **g, size_t *n, float loss[PASS_STEPS]) {
    return run_held(per, 0, w, g, n, loss, NULL);
}

static void passes_same_bits(void) {
    float *w0, *g0, loss0[PASS_STEPS];
    size_t n0;
    if (!run_in_passes(PASS_B / 2, &w0, &g0, &n0, loss0)) return;  // one pass over each half
    static const int per[] = {0, 1, 3, 4};                           // 3: passes of 3, 3 and 2
    for (size_t k = 0; k < sizeof per / sizeof per[0]; k++) {
        float *w, *g, loss[PASS_STEPS];
        size_t n;
        if (!run_in_passes(per[k], &w, &g, &n, loss)) continue;
        CHECK(n == n0 && !memcmp(g, g0, sizeof(float) * n), "passes of %d examples: the gradients of one pass, bit for bit",
              per[k]);
        CHECK(n == n0 && !memcmp(w, w0, sizeof(float) * n), "passes of %d examples: the weights after %d steps, bit for bit",
              per[k], PASS_STEPS);
        for (int s = 0; s < PASS_STEPS; s++)
            CHECK(fabsf(loss[s] - loss0[s]) <= 1e-6f * fabsf(loss0[s]), "passes of %d: step %d's loss %.8f, one pass %.8f",
                  per[k], s, loss[s], loss0[s]);
        free(w), free(g);
    }
    free(w0), free(g0);
}

// Who runs a pass changes no bit: with the second thread held back until the step is done,
// the first runs every pass of both halves (each half still adds its passes' gradients in
// order); held back until the first starts the second half, the two share it. Both against
// the same steps with no thread held back.
static void shared_passes_same_bits(void) {
    float *w0, *g0, loss0[PASS_STEPS];
    size_t n0;
    if (!run_in_passes(3, &w0, &g0, &n0, loss0)) return;  // passes of 3, 3 and 2 in each half
    for (int hold = 2; hold >= 1; hold--) {
        float *w, *g, loss[PASS_STEPS];
        size_t n;
        int helped = 0;
        if (!run_held(3, hold, &w, &g, &n, loss, &helped)) continue;
        if (hold == 2)  // each step: the 3 forward and 3 backward passes of the second half
            CHECK(helped == PASS_STEPS * 6, "the second thread held back: the first ran %d of the second half's %d jobs",
                  helped, PASS_STEPS * 6);
        else  // at least the forward pass that let the second thread go, each step
            CHECK(helped >= PASS_STEPS, "the second thread held back until the first started its half: the first ran "
                  "%d of its jobs in %d steps", helped, PASS_STEPS);
        CHECK(n == n0 && !memcmp(g, g0, sizeof(float) * n), "second thread held back (%d): the gradients, bit for bit",
              hold);
        CHECK(n == n0 && !memcmp(w, w0, sizeof(float) * n), "second thread held back (%d): the weights after %d steps, bit for bit",
              hold, PASS_STEPS);
        for (int s = 0; s < PASS_STEPS; s++)
            CHECK(loss[s] == loss0[s], "second thread held back (%d): step %d's loss %.9g, not held back %.9g", hold, s,
                  loss[s], loss0[s]);
        free(w), free(g);
    }
    free(w0), free(g0);
}

// The weights' gradient of the examples [first, first + n) of a batch, as a reader who keeps every
// output computes it: the whole pass, cross-entropy over the batch's labels, the backward pass.
static bool plain_gradient(Grads *g, const Lesson *l, const Model *m, const float *src, const float *tin,
                           const float *tout, int first, int n, int total) {
    Err e = {{0}};
    const RunSpec spec = {src + first * PASS_L, PASS_L, tin + first * PASS_L, PASS_L, 0, n};
    Interp *it = interp_new(&l->program, m, &spec, &e);
    bool ok = it && interp_run(it, &e);
    int outputs, logits = -1, tokens;
    const ProgramOutput *o = ok ? interp_outputs(it, &outputs) : NULL;
    for (int k = 0; o && k < outputs; k++)
        if (!strcmp(o[k].name, "logits")) logits = o[k].stage;
    ok = ok && logits >= 0;
    float *d = ok ? malloc(sizeof(float) * (size_t)n * PASS_L * 20) : NULL;
    ok = ok && d;
    if (ok) {
        cross_entropy(d, interp_output(it, logits), tout + first * PASS_L, n * PASS_L, 20, 0.1f, (float)m->cfg.pad_id.id,
                      total, &tokens);
        ok = backward(g, it, logits, d, &e);
    }
    CHECK(ok, "the plain pass: %s", e.msg);
    free(d);
    interp_free(it);
    return ok;
}

// One step in passes of 3 examples (3, 3, 2 in each half of 8), which keep only what the
// backward pass reads, against plain passes over the two halves.
static void step_is_plain_backward(void) {
    Lesson l;
    Model m;
    Err e = {{0}};
    if (!small_model(&l, &m)) return;
    float src[PASS_B * PASS_L], tin[PASS_B * PASS_L], tout[PASS_B * PASS_L];
    unsigned r = 99;
    small_batch(&r, (float)m.cfg.pad_id.id, src, tin, tout, PASS_B * PASS_L, PASS_L);
    int total = 0;
    for (int i = 0; i < PASS_B * PASS_L; i++) total += tout[i] != (float)m.cfg.pad_id.id;
    const StepConfig sc = {PASS_B, PASS_L, PASS_L, 0.1f, 0.9f, 0.98f, 1e-9f, 3};
    TrainState *ts = train_state_new(&m, &l.program, &sc, &e);
    Grads *a = grads_new(&m, &e), *b = grads_new(&m, &e);
    StepStats st;
    bool ok = ts && a && b && train_state_step(ts, src, tin, tout, &st, &e);
    CHECK(ok, "%s", e.msg);
    if (ok) {
        grads_zero(a), grads_zero(b);
        ok = plain_gradient(a, &l, &m, src, tin, tout, 0, PASS_B / 2, total) &&
             plain_gradient(b, &l, &m, src, tin, tout, PASS_B / 2, PASS_B / 2, total);
    }
    if (ok) {
        float *ga = grads_weights(a);
        const float *gb = grads_weights(b), *got = grads_weights(train_state_grads(ts));
        const size_t n = grads_size(a);
        size_t differ = 0;
        for (size_t i = 0; i < n; i++) ga[i] += gb[i];
        for (size_t i = 0; i < n; i++) differ += memcmp(&ga[i], &got[i], sizeof(float)) != 0;
        CHECK(differ == 0 && n == grads_size(train_state_grads(ts)),
              "a step in passes that keep only what the backward reads: %zu of %zu gradients differ from plain passes", differ, n);
    }
    grads_free(a), grads_free(b);
    train_state_free(ts);
    model_free(&m);
    lesson_free(&l);
}

static TrainConfig tiny(Task task) {
    TrainConfig c = train_defaults(task);
    c.model.d_model = 32, c.model.nhead = 4, c.model.dim_feedforward = 64;
    c.model.num_encoder_layers = c.model.num_decoder_layers = 1;
    c.batch = 32, c.held_out = 50, c.lr = 3e-3f, c.warmup = 20;
    return c;
}

// Runs n steps; returns the mean loss of the last 10.
static double run(Trainer *t, int n, double *first) {
    double tail = 0;
    Err e = {{0}};
    for (int i = 0; i < n; i++) {
        StepStats s;
        if (!trainer_step(t, &s, &e)) {
            CHECK(false, "step %d: %s", i, e.msg);
            return NAN;
        }
        if (i == 0 && first) *first = s.loss;
        if (i >= n - 10) tail += s.loss / 10;
    }
    return tail;
}

static void learns(void) {
    TrainConfig c = tiny(TASK_COPY);
    Err e = {{0}};
    Trainer *a = trainer_new(&c, &e), *b = trainer_new(&c, &e);
    CHECK(a && b, "%s", e.msg);
    if (!a || !b) return trainer_free(a), trainer_free(b);
    double first = 0;
    const double la = run(a, 150, &first), lb = run(b, 150, NULL);
    CHECK(la < 0.7 * first, "the copy task's loss falls: %.3f -> %.3f", first, la);
    CHECK(la == lb, "the same seed reproduces the run exactly (%.9f vs %.9f)", la, lb);
    double exact = -1;
    CHECK(trainer_eval(a, 50, &exact, &e) && exact >= 0 && exact <= 1, "held-out accuracy: %s", e.msg);
    trainer_free(a), trainer_free(b);
}

static void stops_on_nan(void) {
    TrainConfig c = tiny(TASK_REVERSE);
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    if (!t) {
        CHECK(false, "%s", e.msg);
        return;
    }
    StepStats s;
    for (int i = 0; i < 3; i++) CHECK(trainer_step(t, &s, &e), "%s", e.msg);
    // Something breaks the weights (as a diverging update would): the next loss is not finite.
    Model *m = trainer_model_mut(t);
    const StEntry *w = model_weight(m, "generator.bias");
    w->data[5] = NAN;
    CHECK(!trainer_step(t, &s, &e) && strstr(e.msg, "not a finite number") && strstr(e.msg, "last good weights"),
          "a non-finite loss stops training with a message: %s", e.msg);
    bool finite = true;
    for (int i = 0; i < m->weights.n_entries; i++)
        for (long k = 0; k < shape_numel(&m->weights.entries[i].shape); k++)
            finite = finite && isfinite(m->weights.entries[i].data[k]);
    CHECK(finite && trainer_steps_done(t) == 3, "the weights are put back to the last good ones");
    CHECK(trainer_step(t, &s, &e) && isfinite(s.loss), "and training can go on from them: %s", e.msg);
    trainer_free(t);
}

// The paper's schedule, from its formula: lr = d^-0.5 * min(step^-0.5, step * warmup^-1.5).
static void schedule(void) {
    const int d = 512, w = 4000;
    CHECK(fabs(noam_lr(d, w, w, 1.0f) - 1.0 / sqrt(512.0 * 4000.0)) < 1e-9, "the peak at step = warmup");
    CHECK(fabs(noam_lr(d, 100, w, 1.0f) - 100.0 / sqrt(512.0) / pow(4000.0, 1.5)) < 1e-9, "linear before it");
    CHECK(fabs(noam_lr(d, 16000, w, 2.0f) - 2.0 / sqrt(512.0 * 16000.0)) < 1e-9, "1/sqrt(step) after it, times the factor");
    TrainConfig c = tiny(TASK_COPY);
    c.schedule = SCHED_PAPER, c.lr = 1.0f, c.warmup = 10;
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    CHECK(t && fabs(trainer_lr(t) - noam_lr(c.model.d_model, 1, 10, 1.0f)) < 1e-9, "the trainer follows it");
    trainer_free(t);
}

static void bad_config(void) {
    TrainConfig c = tiny(TASK_COPY);
    Err e = {{0}};
    c.steps = -5;
    CHECK(!trainer_new(&c, &e) && strstr(e.msg, "steps cannot be negative (got -5)"), "%s", e.msg);
    c.steps = 10, c.batch = 0;
    CHECK(!trainer_new(&c, &e) && strstr(e.msg, "at least one example (got 0)"), "%s", e.msg);
}

// Programs other than nn.Transformer's train too, and their weights load back under their own names.
static void other_programs(void) {
    static const char *const programs[] = {LESSONS "/annotated-transformer.md",
                                           LESSONS "/attention-is-all-you-need-pytorch.md"};
    for (int k = 0; k < 2; k++) {
        TrainConfig c = tiny(TASK_COPY);
        c.program = programs[k];
        c.config = k == 1 ? "d_k=6 d_v=10" : NULL;
        Err e = {{0}};
        Trainer *t = trainer_new(&c, &e);
        CHECK(t != NULL, "%s: %s", programs[k], e.msg);
        if (!t) continue;
        double first = 0;
        const double last = run(t, 150, &first);
        // (the second adds and normalises inside each sublayer and scales its logits down: slower to start)
        CHECK(last < (k == 0 ? 0.7 : 0.9) * first, "%s: the loss falls: %.3f -> %.3f", programs[k], first, last);
        char path[64];
        snprintf(path, sizeof path, "/tmp/stepformer-trained-%d-%d.safetensors", k, (int)getpid());
        Lesson l;
        Model m;
        bool ok = trainer_save(t, path, &e) && lesson_load(&l, programs[k], &e);
        ok = ok && model_load(&m, path, &l.program, NULL, &e);
        CHECK(ok, "%s: saved and loaded again: %s", programs[k], e.msg);
        if (ok) {
            const StEntry *w = &trainer_model(t)->weights.entries[3];
            CHECK(m.n_params == trainer_model(t)->n_params && !strcmp(model_weight(&m, w->name)->name, w->name) &&
                      !memcmp(model_weight(&m, w->name)->data, w->data, sizeof(float) * (size_t)shape_numel(&w->shape)),
                  "%s: the same tensors under the same names", programs[k]);
            model_free(&m);
            lesson_free(&l);
        }
        remove(path);
        trainer_free(t);
    }
    TrainConfig c = tiny(TASK_COPY);
    c.program = LESSONS "/transformers-from-scratch.md";
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    CHECK(!t && strstr(e.msg, "no decoder"), "a classifier on a sequence task is refused: %s", e.msg);
    trainer_free(t);
    c = tiny(TASK_BRACKETS);
    c.program = LESSONS "/annotated-transformer.md";
    t = trainer_new(&c, &e);
    CHECK(!t && strstr(e.msg, "has a decoder loop"), "an encoder-decoder on a classification task is refused: %s",
          e.msg);
    trainer_free(t);
}

// The loss of the classifier on one batch: cross-entropy of each example's class scores,
// computed here from the logits of a separate forward pass, averaged over the batch.
static double naive_class_loss(const Lesson *l, const Model *m, const float *src, int S, const float *labels, int B,
                               int C) {
    Err e = {{0}};
    RunSpec spec = {src, S, NULL, 0, 0, B};
    Interp *it = interp_new(&l->program, m, &spec, &e);
    if (!it || !interp_run(it, &e)) {
        CHECK(false, "forward pass: %s", e.msg);
        interp_free(it);
        return NAN;
    }
    const float *z = interp_output(it, interp_find(it, "classifier.logits"));
    double loss = 0;
    for (int b = 0; b < B; b++) {
        double mx = -INFINITY, sum = 0;
        for (int c = 0; c < C; c++) mx = fmax(mx, z[b * C + c]);
        for (int c = 0; c < C; c++) sum += exp(z[b * C + c] - mx);
        loss += (log(sum) + mx - z[b * C + (int)labels[b]]) / B;
    }
    interp_free(it);
    return loss;
}

// One classifier step on a hand-made padded batch: its loss equals the naive one, and the
// gradient of a few weights matches central differences of that naive loss.
static void classifier_step(void) {
    Lesson l;
    Model m = {0};
    Err e = {{0}};
    ConfSpec cs = {0};
    conf_spec_add(&cs, "d_model=16 nhead=2 num_encoder_layers=1 src_vocab_size=10 max_positions=8 num_classes=3 "
                  "pad_id=1", "the test", false);
    bool ok = lesson_load(&l, LESSONS "/transformers-from-scratch.md", &e) && model_init_random(&m, &l.program, &cs, 7, &e);
    CHECK(ok, "the classifier initialises: %s", e.msg);
    if (!ok) return;
    enum { B = 3, S = 5, C = 3 };
    const float src[B * S] = {4, 5, 6, 7, 8, 9, 4, 1, 1, 1, 5, 5, 5, 6, 1}, labels[B] = {2, 0, 1};
    const StepConfig sc = {B, S, 0, 0.0f, 0.9f, 0.98f, 1e-9f};
    TrainState *ts = train_state_new(&m, &l.program, &sc, &e);
    StepStats st;
    ok = ts && train_state_step(ts, src, NULL, labels, &st, &e);
    CHECK(ok, "a classifier step: %s", e.msg);
    if (ok) {
        const double want = naive_class_loss(&l, &m, src, S, labels, B, C);
        CHECK(fabs(st.loss - want) < 1e-5 && st.tokens == B, "loss %.7f, naive %.7f, over %d examples", st.loss,
              want, st.tokens);
        static const char *const names[] = {"toprobs.weight", "tblocks.0.attention.to_keys.weight",
                                            "pos_embedding.weight", "tblocks.0.ff.0.bias"};
        for (int k = 0; k < 4; k++) {
            StEntry *w = (StEntry *)model_weight(&m, names[k]);
            const float *g = grads_of(train_state_grads(ts), names[k]);
            for (int i = 0; w && g && i < 5; i++) {
                const int j = (int)((i * 7919L) % shape_numel(&w->shape));
                const float keep = w->data[j], h = 2e-3f;
                w->data[j] = keep + h;
                const double up = naive_class_loss(&l, &m, src, S, labels, B, C);
                w->data[j] = keep - h;
                const double down = naive_class_loss(&l, &m, src, S, labels, B, C);
                w->data[j] = keep;
                const double fd = (up - down) / (2 * h);
                CHECK(fabs(g[j] - fd) < 2e-3 + 2e-2 * fabs(fd), "d loss / d %s[%d]: %.6f, differences %.6f",
                      names[k], j, g[j], fd);
            }
            CHECK(w && g, "%s has a gradient", names[k]);
        }
    }
    train_state_free(ts);
    model_free(&m);
    lesson_free(&l);
}

// Writes a lesson whose program is given, for the refusals below.
static bool write_lesson(const char *path, const char *program) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fprintf(f, "# A test\n\n```program\n%s```\n", program);
    return fclose(f) == 0;
}

// The classification tasks train the classifier (the built-in lesson by default); the model
// it saves loads again and answers as the trainer's model does; bad programs are refused.
static void classifier_learns(void) {
    TrainConfig c = tiny(TASK_MAJORITY);
    c.batch = 64;
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    CHECK(t != NULL, "majority: %s", e.msg);
    if (!t) return;
    double first = 0, exact = -1;
    const double last = run(t, 200, &first);
    CHECK(last < 0.6 * first, "majority: the loss falls: %.3f -> %.3f", first, last);
    CHECK(trainer_eval(t, 50, &exact, &e) && exact > 0.5, "majority: held-out accuracy %.2f (chance is about "
          "0.17): %s", exact, e.msg);
    char path[64];
    snprintf(path, sizeof path, "/tmp/stepformer-majority-%d.safetensors", (int)getpid());
    Lesson l;
    Model m;
    bool ok = trainer_save(t, path, &e) && lesson_load(&l, LESSONS "/transformers-from-scratch.md", &e);
    ok = ok && model_load(&m, path, &l.program, NULL, &e);
    CHECK(ok, "majority: saved and loaded again: %s", e.msg);
    if (ok) {
        const float src[4] = {4, 6, 5, 5};  // "acbb": b
        const float labels[1] = {1};
        const double a = naive_class_loss(&l, &m, src, 4, labels, 1, 6);
        const double b = naive_class_loss(&l, trainer_model(t), src, 4, labels, 1, 6);
        CHECK(a == b, "the reloaded model scores 'acbb' as the trained one does (%.9f, %.9f)", a, b);
        CHECK(m.tgt_vocab.n == 6 && !strcmp(vocab_token(&m.tgt_vocab, 1), "b"), "the class names are saved");
        model_free(&m);
        lesson_free(&l);
    }
    remove(path);
    trainer_free(t);

    c = tiny(TASK_BRACKETS);
    c.program = LESSONS "/transformers-from-scratch.md";
    t = trainer_new(&c, &e);
    CHECK(t != NULL, "brackets: %s", e.msg);
    if (t) {
        const double l2 = run(t, 150, &first);
        CHECK(l2 < 0.9 * first, "brackets: the loss falls: %.3f -> %.3f", first, l2);
    }
    trainer_free(t);

    snprintf(path, sizeof path, "/tmp/stepformer-argmax-%d.md", (int)getpid());
    ok = write_lesson(path, "input src\n"
                            "param @emb [src_vocab_size, d_model] normal(1)\n"
                            "param @out [num_classes, d_model] xavier\n"
                            "x = embedding(src, @emb, scale=1)\n"
                            "ids = argmax(x)\n"
                            "y = embedding(ids, @emb, scale=1)\n"
                            "pooled = max_pool(y)\n"
                            "logits = linear(pooled, @out)\n"
                            "output logits = logits\n");
    c = tiny(TASK_MAJORITY);
    c.program = path;
    t = ok ? trainer_new(&c, &e) : NULL;
    CHECK(ok && !t && strstr(e.msg, ":8: argmax has no backward pass"), "argmax between the weights and the loss "
          "is refused before training, naming the op and line: %s", e.msg);
    trainer_free(t);
    ok = write_lesson(path, "input src\n"
                            "param @emb [src_vocab_size, d_model] normal(1)\n"
                            "param @out [num_classes, d_model] xavier\n"
                            "x = embedding(src, @emb, scale=1)\n"
                            "logits = linear(x, @out)\n"
                            "output logits = logits\n");
    t = ok ? trainer_new(&c, &e) : NULL;
    CHECK(ok && !t && strstr(e.msg, "one row of class scores"), "logits of the wrong shape are refused: %s", e.msg);
    trainer_free(t);
    remove(path);
}

int main(void) {
    passes_same_bits();
    shared_passes_same_bits();
    step_is_plain_backward();
    classifier_step();
    classifier_learns();
    other_programs();
    bad_config();
    schedule();
    pytorch_step();
    learns();
    stops_on_nan();
    return check_finish("test_train");
}
