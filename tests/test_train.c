// test_train.c: training in C.
//   - one whole step against PyTorch (tests/fixtures/train_step.safetensors, made by
//     scripts/make_train_fixture.py): the loss and every gradient within 1e-4 relative, and the
//     weights after one Adam update, and the same batch again sees the updated weights;
//   - a short run on a task learns (the loss falls), and the same seed reproduces it exactly;
//   - a loss that is not finite stops training and leaves the last good weights.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
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
}

int main(void) {
    other_programs();
    bad_config();
    schedule();
    pytorch_step();
    learns();
    stops_on_nan();
    return check_finish("test_train");
}
