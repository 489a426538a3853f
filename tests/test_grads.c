// test_grads.c: the gradient of a pass's loss (grad_pass.h, what `trace --labels --grads`
// writes) against PyTorch autograd for the standard program and the four implementation
// lessons on their own state_dicts (fixtures made by scripts/make_grad_fixtures.py), the
// gradient check (gradcheck.h), ties, and the messages for bad labels.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "back_pass.h"
#include "gradcheck.h"
#include "session.h"

static void ids_string(const StEntry *en, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; en && i < en->shape.dim[0] && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "", (int)en->data[i]);
}

typedef struct {
    Session s;
    Grads *g;
    LossInfo li;
    float labels[64], *d;
    int n;
    char src[512], tgt[512], model[512], program[512];
} Pass;

// Opens the fixture's model and program on its inputs and runs the loss's backward pass.
static bool open_pass(Pass *p, const StFile *f, Err *e) {
    memset(p, 0, sizeof *p);
    ids_string(st_find(f, "src_ids"), p->src, sizeof p->src);
    ids_string(st_find(f, "tgt_ids"), p->tgt, sizeof p->tgt);
    snprintf(p->model, sizeof p->model, "%s/%s", FIXTURES, st_meta(f, "model"));
    snprintf(p->program, sizeof p->program, "%s/%s", FIXTURES, st_meta(f, "program"));
    const StEntry *lab = st_find(f, "labels");
    p->n = lab->shape.dim[0];
    memcpy(p->labels, lab->data, sizeof(float) * (size_t)p->n);
    SessionSpec spec = {.model_path = p->model, .src_ids = p->src};
    if (st_meta(f, "program")[0]) spec.program_path = p->program;
    if (p->tgt[0]) spec.tgt_ids = p->tgt;
    if (!session_open(&p->s, &spec, e)) return false;
    if (!loss_target(p->s.it, &p->li, e)) return false;
    p->g = grads_new(&p->s.model, e);
    p->d = malloc(sizeof(float) * (size_t)p->li.rows * (size_t)p->li.V);
    return p->g && p->d && grad_pass(p->g, p->s.it, p->labels, p->n, p->d, &p->li, e);
}

static void close_pass(Pass *p) {
    grads_free(p->g);
    free(p->d);
    if (p->s.it) session_close(&p->s);
}

// The trainer's way (grads_recycle: a few buffers handed from stage to stage) gives every
// weight the same bits as a buffer for every stage, in a first pass and in a second one whose
// buffers come back from the first with its numbers still in them; no stage's gradient is kept.
static void recycled_same(Pass *p, const char *name) {
    Err e = {{0}};
    Grads *g = grads_new(&p->s.model, &e);
    CHECK(g, "%s: %s", name, e.msg);
    if (!g) return;
    grads_recycle(g, true);
    LossInfo li = p->li;
    for (int pass = 1; pass <= 2; pass++) {
        const bool ok = grad_pass(g, p->s.it, p->labels, p->n, p->d, &li, &e);
        CHECK(ok, "%s, recycling, pass %d: %s", name, pass, e.msg);
        CHECK(ok && grads_size(g) == grads_size(p->g) &&
                  !memcmp(grads_weights(g), grads_weights(p->g), sizeof(float) * grads_size(g)),
              "%s, recycling, pass %d: the weights' gradients differ from one buffer a stage", name, pass);
    }
    CHECK(grads_stage(p->g, li.scored) && !grads_stage(g, li.scored),
          "%s: the scored stage's gradient should stay without recycling and be handed on with it", name);
    grads_free(g);
}

// Every trained weight's gradient within 1e-4 of PyTorch's (relative to its largest |gradient|
// when that exceeds 1), the loss to 1e-5, and the same set of names on both sides.
static void against_torch(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/grads/%s.safetensors", FIXTURES, name);
    StFile f;
    Err e = {{0}};
    CHECK(st_load(&f, path, &e), "%s", e.msg);
    Pass p;
    bool ok = open_pass(&p, &f, &e);
    CHECK(ok, "%s: %s", name, e.msg);
    if (ok) {
        const float want = st_find(&f, "loss")->data[0];
        CHECK(fabs(p.li.loss - want) <= 1e-5 * fmax(1.0, fabs(want)), "%s: loss %.7g, PyTorch %.7g", name, p.li.loss, want);
        int compared = 0;
        for (int w = 0; w < p.s.model.n_params; w++) {
            const ParamDecl *d = &p.s.model.params[w];
            char key[300];
            snprintf(key, sizeof key, "grad.%s", d->name);
            const StEntry *ref = st_find(&f, key);
            CHECK(d->fixed == !ref, "%s: %s is %s here but %s in PyTorch", name, d->name, d->fixed ? "a buffer" : "trained",
                  ref ? "a parameter" : "absent (a buffer)");
            if (!ref || d->fixed) continue;
            const int64_t n = shape_numel(&d->shape);
            CHECK(shape_numel(&ref->shape) == n, "%s: %s has another size in PyTorch", name, d->name);
            double big = 0;
            for (int64_t i = 0; i < n; i++) big = fmax(big, fabs(ref->data[i]));
            CHECK_CLOSE(grads_of(p.g, d->name), ref->data, n, 1e-4 * fmax(1.0, big), key);
            compared++;
        }
        int refs = 0;
        for (int i = 0; i < f.n_entries; i++) refs += !strncmp(f.entries[i].name, "grad.", 5);
        CHECK(compared == refs && compared > 10, "%s: %d gradients compared, PyTorch has %d", name, compared, refs);
        recycled_same(&p, name);
    }
    close_pass(&p);
    st_free(&f);
}

// The gradient check agrees with the backward pass on a fresh model and on the trained dates
// model (whose gradients are near 1e-4), for stage outputs and for weights.
static void gradcheck_agrees(void) {
    StFile f;
    Err e = {{0}};
    CHECK(st_load(&f, FIXTURES "/grads/post_2x2.case0.safetensors", &e), "%s", e.msg);
    Pass p;
    bool ok = open_pass(&p, &f, &e);
    CHECK(ok, "%s", e.msg);
    RunSpec spec = p.s.run;
    spec.pack_weights = false;
    Interp *it = ok ? interp_new(&p.s.lesson.program, &p.s.model, &spec, &e) : NULL;
    ok = it && interp_run(it, &e);
    const char *ids[] = {"decoder.layers.1.cross_attn.scores", "encoder.layers.0.norm1", "decoder.layers.0.self_attn.weights",
                         "generator.weight", "transformer.encoder.layers.0.self_attn.in_proj_weight"};
    for (int k = 0; ok && k < 5; k++) {
        GradCheck c;
        CHECK(gradcheck(&c, it, &p.s.model, p.g, &p.li, p.labels, ids[k], &e), "%s: %s", ids[k], e.msg);
        CHECK(c.passed && c.n == GRADCHECK_POINTS, "%s: worst relative error %.3g over %d points", ids[k], c.worst, c.n);
        CHECK(c.weight == (k >= 3), "%s is %s", ids[k], k >= 3 ? "a weight" : "a stage");
    }
    // The pass is left as it was: the logits are the same bits as before the checks.
    const int lg = interp_find(it, "generator.logits");
    CHECK(ok && memcmp(interp_output(it, lg), interp_output(p.s.it, lg), sizeof(float) * 6 * 29) == 0,
          "the checks changed the pass");
    GradCheck c;
    CHECK(!gradcheck(&c, it, &p.s.model, p.g, &p.li, p.labels, "no.such.stage", &e) && strstr(e.msg, "neither a stage"),
          "unknown id: %s", e.msg);
    CHECK(!gradcheck(&c, it, &p.s.model, p.g, &p.li, p.labels, "positional_encoding.pos_embedding", &e) &&
          strstr(e.msg, "a buffer"), "buffer: %s", e.msg);
    interp_free(it);
    close_pass(&p);
    st_free(&f);
}

// Labels of the wrong count, out of range or all pad, and text that is not ids: one message each.
static void bad_labels(void) {
    StFile f;
    Err e = {{0}};
    CHECK(st_load(&f, FIXTURES "/grads/post_2x2.case0.safetensors", &e), "%s", e.msg);
    Pass p;
    CHECK(open_pass(&p, &f, &e), "%s", e.msg);
    float lab[8] = {4, 5, 6, 7, 8, 9, 1, 1};
    CHECK(!grad_pass(p.g, p.s.it, lab, 5, p.d, &p.li, &e) && strstr(e.msg, "--labels has 5 ids, but logits is [6 x 29]"),
          "count: %s", e.msg);
    lab[2] = 29;
    CHECK(!grad_pass(p.g, p.s.it, lab, 6, p.d, &p.li, &e) && strstr(e.msg, "id 29 at position 2 is outside the 29 classes"),
          "range: %s", e.msg);
    for (int k = 0; k < 6; k++) lab[k] = 1;
    CHECK(!grad_pass(p.g, p.s.it, lab, 6, p.d, &p.li, &e) && strstr(e.msg, "every id is the pad id 1"), "pad: %s", e.msg);
    int n;
    CHECK(!labels_parse("4,x,5", "--labels", lab, 8, &n, &e) && strstr(e.msg, "at item 2"), "text: %s", e.msg);
    CHECK(!labels_parse("4,5,", "--labels", lab, 8, &n, &e) && strstr(e.msg, "ends with a comma"), "comma: %s", e.msg);
    CHECK(labels_parse("4,5,6", "--labels", lab, 8, &n, &e) && n == 3 && lab[2] == 6.0f, "good ids: %s", e.msg);
    // A gradient that is not finite stops the pass at the stage whose backward kernel made it.
    for (int k = 0; k < 6 * 29; k++) p.d[k] = k == 40 ? NAN : 0.0f;
    grads_check_finite(p.g, true);
    CHECK(!backward(p.g, p.s.it, p.li.scored, p.d, &e) && strstr(e.msg, "the backward pass of generator.logits (linear) made "
          "a gradient that is not finite"), "NaN: %s", e.msg);
    close_pass(&p);
    st_free(&f);
    // An encoder that publishes only its memory has no loss.
    SessionSpec spec = {.model_path = FIXTURES "/seeds/scratch_encoder.safetensors",
                        .program_path = LESSONS "/encoder-from-scratch.md", .src_ids = "4,5,6"};
    Session s;
    LossInfo li;
    CHECK(session_open(&s, &spec, &e), "%s", e.msg);
    CHECK(!loss_target(s.it, &li, &e) && strstr(e.msg, "publishes neither 'logits' nor 'log_probs'"), "no loss: %s", e.msg);
    session_close(&s);
    // Logits that no trained weight reaches: rows of a fixed table (a buffer).
    char path[] = "/tmp/stepformer-grads-XXXXXX";
    const int fd = mkstemp(path);
    const char lesson[] = "# no weights\n\n```lesson\nmodel: random\nconfig: d_model=4 src_vocab_size=99 max_positions=8\n"
                          "vocab: chars\ninput: ab\n```\n\n```program\ninput src\n"
                          "buffer @emb [src_vocab_size, d_model] sinusoid\n"
                          "x = embedding(src, @emb, scale=1)\n"
                          "output logits = x\n```\n";
    CHECK(fd >= 0 && write(fd, lesson, sizeof lesson - 1) == (ssize_t)(sizeof lesson - 1), "a scratch lesson");
    if (fd >= 0) close(fd);
    SessionSpec none = {.lesson_path = path};
    if (session_open(&s, &none, &e)) {
        CHECK(!loss_target(s.it, &li, &e) && strstr(e.msg, "depends on no trained weight"), "no weight: %s", e.msg);
        session_close(&s);
    } else CHECK(false, "%s", e.msg);
    unlink(path);
}

// jadore's three embeddings are tied when they hold the same numbers, and apart when not.
static void ties(void) {
    StFile f;
    Err e = {{0}};
    CHECK(st_load(&f, FIXTURES "/grads/jadore.case0.safetensors", &e), "%s", e.msg);
    Pass p;
    CHECK(open_pass(&p, &f, &e) && p.li.untied == 0, "%s (untied at line %d)", e.msg, p.li.untied);
    const int64_t n = 27 * 32;
    const float *a = grads_of(p.g, "trg_word_prj.weight"), *b = grads_of(p.g, "encoder.src_word_emb.weight");
    CHECK(!memcmp(a, b, sizeof(float) * (size_t)n), "tied names hold the same gradient");
    // The same file with one of the three changed: they are trained apart, said with the line.
    float *w = (float *)st_find(&p.s.model.weights, "trg_word_prj.weight")->data;
    w[0] += 0.5f;
    CHECK(grad_pass(p.g, p.s.it, p.labels, p.n, p.d, &p.li, &e) && p.li.untied > 0, "untied: %s, line %d", e.msg, p.li.untied);
    CHECK(memcmp(a, b, sizeof(float) * (size_t)n) != 0, "untied names keep their own gradients");
    close_pass(&p);
    st_free(&f);
}

// The stepped backward pass: each kernel's shares, summed over the readers of a tensor, are
// the fused pass's gradient of it; Adam's first step is lr * g / (|g| + eps) for each weight;
// the loss after the step is below the loss before.
static void stepped(void) {
    SessionSpec spec = {.model_path = MODELS "/dates.safetensors", .input = "22 November 2026", .target = "2026-11-22"};
    Session s;
    Err e = {{0}};
    BackPass bp;
    float labels[64];
    int n = 0;
    bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok && back_pass_next_tokens(s.it, &s.model, labels, 64, &n) && n == 11 && labels[10] == 3.0f, "next tokens");
    ok = ok && back_pass_build(&bp, s.it, &s.model, labels, n, 0, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return;
    CHECK(bp.steps[0].kind == BACK_LOSS && bp.steps[bp.n_steps - 1].kind == BACK_AFTER, "loss first, loss after last");
    const int N = interp_n_done(s.it);
    float **sum = calloc((size_t)N, sizeof *sum);
    int stage_steps = 0;
    for (int k = 0; k < bp.n_steps; k++) {
        const BackStep *b = &bp.steps[k];
        if (b->kind != BACK_STAGE) continue;
        stage_steps++;
        CHECK(k == 1 || bp.steps[k - 1].stage > b->stage, "stages last to first");
        const Stage *st = interp_stage(s.it, b->stage);
        for (int j = 0; j < st->n_in; j++) {
            if (st->in[j].kind != REF_STAGE || !b->share[j]) continue;
            const int r = st->in[j].index;
            const size_t len = backward_input_floats(s.it, b->stage, j);
            if (!sum[r]) sum[r] = calloc(len, sizeof(float));
            for (size_t q = 0; q < len; q++) sum[r][q] += b->share[j][q];
        }
    }
    int compared = 0;
    for (int i = 0; i < N; i++) {
        if (!sum[i] || !grads_stage(bp.g, i)) continue;
        const int64_t len = shape_numel(&interp_stage(s.it, i)->shape);
        double big = 0;
        for (int64_t q = 0; q < len; q++) big = fmax(big, fabs(grads_stage(bp.g, i)[q]));
        CHECK_CLOSE(sum[i], grads_stage(bp.g, i), len, 1e-6 * fmax(big, 1e-3), interp_stage(s.it, i)->id);
        compared++;
        free(sum[i]);
    }
    free(sum);
    CHECK(stage_steps > 100 && compared > 100, "%d backward steps, %d gradients compared", stage_steps, compared);
    const float *g = grads_weights(bp.g);
    double worst = 0;
    for (size_t i = 0; i < grads_size(bp.g); i++) {
        const double want = (double)BACK_LR * g[i] / (fabs((double)g[i]) + BACK_EPS);
        worst = fmax(worst, fabs(bp.update[i] - want));
    }
    CHECK(worst < 1e-7, "Adam's first step is lr * g / (|g| + eps): off by %.3g", worst);
    CHECK(bp.loss_after < bp.li.loss, "the step lowers the loss: %.6f -> %.6f", bp.li.loss, bp.loss_after);
    back_pass_free(&bp);
    session_close(&s);
}

int main(void) {
    const char *cases[] = {"post_2x2.case0", "post_2x2.case1", "pre_1x3_gelu.case0", "annotated.case0", "annotated.case1",
                           "jadore.case0", "jadore.case1", "bloem.case0", "bloem.case1"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) against_torch(cases[i]);
    gradcheck_agrees();
    bad_labels();
    ties();
    stepped();
    return check_finish("test_grads");
}
