// test_probe.c: activation patching (layer outputs and heads), attribution and the logit lens
// (probe.h) on the dates model against PyTorch (fixtures/probe, made by
// scripts/make_probe_fixtures.py: forward hooks on nn.Transformer's layers, its attention
// written out op by op for the heads), and their messages for bad requests.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "probe.h"
#include "session.h"

// A teacher-forced pass on `input` with the decoder reading the target but its last token.
static bool open_run(Session *s, const char *input, const char *target, int *token) {
    SessionSpec spec = {.model_path = MODELS "/dates.safetensors", .input = input, .target = target};
    Err e = {{0}};
    const bool ok = session_open_scored(s, &spec, token, &e);
    CHECK(ok, "%s", e.msg);
    return ok;
}

int main(void) {
    StFile f;
    Err e = {{0}};
    if (!st_load(&f, FIXTURES "/probe/dates.safetensors", &e)) {
        CHECK(false, "%s", e.msg);
        return check_finish("test_probe");
    }
    Session clean, corrupt;
    int token = -1, token2 = -1;
    if (!open_run(&clean, st_meta(&f, "clean"), st_meta(&f, "target"), &token) ||
        !open_run(&corrupt, st_meta(&f, "corrupt"), st_meta(&f, "target"), &token2))
        return check_finish("test_probe");
    CHECK(token == (int)st_find(&f, "token")->data[0] && token == token2, "the target token as PyTorch's");
    PatchSweep *p = malloc(sizeof *p);
    CHECK(patch_sweep(p, clean.it, corrupt.it, SWEEP_RESID, token, &e), "%s", e.msg);
    CHECK(fabs(p->target.clean - st_find(&f, "clean_logit")->data[0]) < 1e-4 &&
          fabs(p->target.corrupt - st_find(&f, "corrupt_logit")->data[0]) < 1e-4, "the two logits: %g %g", p->target.clean,
          p->target.corrupt);
    const StEntry *enc = st_find(&f, "effect.encoder"), *dec = st_find(&f, "effect.decoder");
    CHECK(p->n_rows == 4, "four layers swept (%d)", p->n_rows);
    for (int r = 0; r < p->n_rows && r < 4; r++) {
        const StEntry *want = r < 2 ? enc : dec;
        const int cols = want->shape.dim[1];
        CHECK(p->rows[r].n == cols, "%s: %d positions (PyTorch %d)", p->rows[r].label, p->rows[r].n, cols);
        double worst = 0;
        for (int c = 0; c < cols && c < p->rows[r].n; c++) worst = fmax(worst, fabs(p->rows[r].effect[c] - want->data[(r % 2) * cols + c]));
        CHECK(worst < 1e-4, "%s: effects within %.3g of PyTorch's", p->rows[r].label, worst);
        const StEntry *att = st_find(&f, r < 2 ? "attribution.encoder" : "attribution.decoder");
        worst = 0;
        for (int c = 0; att && c < cols && c < p->rows[r].n; c++)
            worst = fmax(worst, fabs(p->rows[r].attribution[c] - att->data[(r % 2) * cols + c]));
        CHECK(att && worst < 1e-4, "%s: attribution within %.3g of PyTorch's", p->rows[r].label, worst);
    }
    // Every attention's heads, patched one at a time, against nn.MultiheadAttention written out.
    PatchSweep *hs = malloc(sizeof *hs);
    const StEntry *heads = st_find(&f, "effect.heads");
    CHECK(patch_sweep(hs, clean.it, corrupt.it, SWEEP_HEADS, token, &e) && heads && hs->n_rows == heads->shape.dim[0], "%s",
          e.msg);
    for (int r = 0; heads && r < hs->n_rows && r < heads->shape.dim[0]; r++)
        for (int h = 0; h < hs->rows[r].n && h < heads->shape.dim[1]; h++)
            CHECK(fabs(hs->rows[r].effect[h] - heads->data[r * heads->shape.dim[1] + h]) < 1e-4, "%s head %d: %.5f, PyTorch %.5f",
                  hs->rows[r].label, h + 1, hs->rows[r].effect[h], heads->data[r * heads->shape.dim[1] + h]);
    free(hs);
    // Patching left the corrupted pass as it was.
    PatchTarget t;
    CHECK(patch_target(&t, corrupt.it, token, &e) && t.clean == p->target.corrupt, "the corrupted pass is restored");
    // The lens: the likeliest token and its probability for each decoder layer and position.
    Lens *l = malloc(sizeof *l);
    CHECK(logit_lens(l, clean.it, &e) && l->n_rows == 2, "two decoder layers read: %s", e.msg);
    const StEntry *top = st_find(&f, "lens.top"), *pr = st_find(&f, "lens.p");
    const int T = top->shape.dim[1];
    for (int r = 0; r < l->n_rows && r < 2; r++)
        for (int t2 = 0; t2 < T; t2++) {
            CHECK(l->rows[r].top[t2][0] == (int)top->data[r * T + t2], "lens %d/%d: token %d, PyTorch %d", r, t2,
                  l->rows[r].top[t2][0], (int)top->data[r * T + t2]);
            CHECK(fabsf(l->rows[r].prob[t2][0] - pr->data[r * T + t2]) < 1e-4, "lens %d/%d: p", r, t2);
        }
    // The last layer read through the lens is the logits themselves.
    const int lg = interp_find(clean.it, "generator.logits");
    const float *x = interp_output(clean.it, lg);
    int argmax = 0;
    for (int v = 1; v < 51; v++) argmax = x[(T - 1) * 51 + v] > x[(T - 1) * 51 + argmax] ? v : argmax;
    CHECK(l->rows[1].top[T - 1][0] == argmax, "the last layer's lens is the model's own prediction");
    // Bad requests: an unknown stage, a head of a stage that has none.
    double logit;
    CHECK(!patch_one(clean.it, corrupt.it, "no.such", -1, -1, token, &logit, NULL, &e) && strstr(e.msg, "no stage 'no.such'"),
          "%s", e.msg);
    CHECK(!patch_one(clean.it, corrupt.it, "encoder.embed", 1, -1, token, &logit, NULL, &e) && strstr(e.msg, "per-head context"),
          "%s", e.msg);
    CHECK(patch_one(clean.it, corrupt.it, "decoder.layers.1.norm3", -1, T - 1, token, &logit, NULL, &e) &&
          fabs(logit - p->target.clean) < 1e-4, "the last layer's last row restores the clean logit: %s", e.msg);
    free(p), free(l);
    session_close(&clean);
    session_close(&corrupt);
    st_free(&f);
    return check_finish("test_probe");
}
