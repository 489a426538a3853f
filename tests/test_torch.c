// test_torch.c: the whole model against PyTorch. Each fixture case (made by
// scripts/make_fixtures.py with Debian's python3-torch) holds the inputs and PyTorch's memory,
// logits, every per-head attention map and a greedy decode; stepformer must match the maps
// and logits to 1e-4 and produce the same greedy ids.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "session.h"

static const float *expect(const StFile *f, const char *name, const Shape *want, const char *ctx) {
    const StEntry *en = st_find(f, name);
    CHECK(en != NULL, "%s: the fixture has no '%s'", ctx, name);
    if (!en) return NULL;
    char a[64], b[64];
    CHECK(shape_eq(&en->shape, want), "%s: %s is %s in PyTorch but %s here", ctx, name,
          shape_str(&en->shape, a, sizeof a), shape_str(want, b, sizeof b));
    return shape_eq(&en->shape, want) ? en->data : NULL;
}

static void ids_string(const StEntry *en, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < en->shape.dim[0] && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "", (int)en->data[i]);
}

// Compares one stage's output (by stage id) with the fixture tensor of the same name.
static void compare_stage(const Interp *it, const StFile *f, const char *id, const char *ctx) {
    int i = interp_find(it, id);
    CHECK(i >= 0, "%s: no stage '%s'", ctx, id);
    if (i < 0) return;
    const Stage *st = interp_stage(it, i);
    const float *want = expect(f, id, &st->shape, ctx);
    char what[256];
    snprintf(what, sizeof what, "%s %s", ctx, id);
    if (want) CHECK_CLOSE(interp_output(it, i), want, shape_numel(&st->shape), 1e-4, what);
}

// Every tensor of the case is a published output or a stage id; each must match PyTorch.
static void teacher_forced(const SessionSpec *base, const StFile *f, const char *ctx) {
    char src[512], tgt[512];
    ids_string(st_find(f, "src_ids"), src, sizeof src);
    SessionSpec spec = *base;
    spec.src_ids = src;
    if (st_find(f, "tgt_ids")) ids_string(st_find(f, "tgt_ids"), tgt, sizeof tgt), spec.tgt_ids = tgt;
    Session s;
    Err e = {{0}};
    bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "%s: %s", ctx, e.msg);
    if (!ok) return;
    int n_out, compared = 0, maps = 0;
    const ProgramOutput *outs = interp_outputs(s.it, &n_out);
    for (int j = 0; j < f->n_entries; j++) {
        const char *name = f->entries[j].name;
        if (!strcmp(name, "src_ids") || !strcmp(name, "tgt_ids") || !strcmp(name, "greedy_ids")) continue;
        int k = 0;
        while (k < n_out && strcmp(outs[k].name, name) != 0) k++;
        if (k == n_out) {
            compare_stage(s.it, f, name, ctx);
            maps++;
            continue;
        }
        const Stage *st = interp_stage(s.it, outs[k].stage);
        const float *want = expect(f, name, &st->shape, ctx);
        char what[256];
        snprintf(what, sizeof what, "%s %s", ctx, name);
        if (want) CHECK_CLOSE(interp_output(s.it, outs[k].stage), want, shape_numel(&st->shape), 1e-4, what);
        compared++;
    }
    CHECK(compared >= 1 && maps >= 1, "%s: %d outputs and %d attention maps compared", ctx, compared, maps);
    session_close(&s);
}

static void greedy(const SessionSpec *base, const StFile *f, const char *ctx) {
    char src[512];
    ids_string(st_find(f, "src_ids"), src, sizeof src);
    const char *max_len = st_meta(f, "max_len"), *stop = st_meta(f, "greedy_stop");
    SessionSpec spec = *base;
    spec.src_ids = src, spec.greedy = true, spec.max_len = max_len ? atoi(max_len) : 8;
    Session s;
    Err e = {{0}};
    bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "%s greedy: %s", ctx, e.msg);
    if (!ok) return;
    int n;
    StopReason why;
    const float *ids = interp_generated(s.it, &n, &why);
    const StEntry *want = st_find(f, "greedy_ids");
    CHECK(want && want->shape.dim[0] == n, "%s greedy: %d tokens here, %d in PyTorch", ctx, n,
          want ? want->shape.dim[0] : -1);
    if (want && want->shape.dim[0] == n)
        CHECK(memcmp(ids, want->data, sizeof(float) * (size_t)n) == 0, "%s greedy: ids differ", ctx);
    CHECK(stop && strcmp(stop, stop_names[why]) == 0, "%s greedy: stopped at %s, PyTorch at %s",
          ctx, stop_names[why], stop ? stop : "?");
    // The decoder's self-attention grows one row per round: round k attends over k+1 tokens.
    for (int k = 0; k < n; k++) {
        char id[128];
        snprintf(id, sizeof id, "step.%d.decoder.layers.0.self_attn.weights", k);
        int i = interp_find(s.it, id);
        CHECK(i >= 0 && interp_stage(s.it, i)->shape.dim[1] == k + 1, "%s: %s should have %d rows",
              ctx, id, k + 1);
    }
    session_close(&s);
}

// Every greedy round's embedding read the ids that round ran on (bos, then the tokens PyTorch
// generated before it), even after later rounds appended more; a re-run gives the same rows.
static void rounds_keep_their_ids(Interp *it, StFile c[2], int bos) {
    Err e = {{0}};
    for (int k = 0;; k++) {
        char id[64];
        snprintf(id, sizeof id, "step.%d.decoder.embed", k);
        const int i = interp_find(it, id);
        if (i < 0) break;
        const float *ids = interp_input(it, i, 0);  // [2, k + 1]
        for (int b = 0; b < 2; b++) {
            const StEntry *want = st_find(&c[b], "greedy_ids");
            bool same = ids[(size_t)b * (k + 1)] == (float)bos;
            for (int j = 1; j <= k && j - 1 < want->shape.dim[0]; j++)
                same = same && ids[(size_t)b * (k + 1) + j] == want->data[j - 1];
            CHECK(same, "round %d, example %d: the embedding's input ids", k, b);
        }
        const size_t n = (size_t)shape_numel(&interp_stage(it, i)->shape) * 2;
        float *before = malloc(sizeof(float) * n);
        memcpy(before, interp_output(it, i), sizeof(float) * n);
        interp_rewind(it, i);
        CHECK(interp_step(it, &e) == STEP_RAN && !memcmp(before, interp_output(it, i), sizeof(float) * n),
              "re-running %s gives the same rows", id);
        free(before);
        CHECK(interp_run(it, &e), "%s", e.msg);
    }
}

// Two cases of one model padded into a batch: every real row must still match PyTorch, and
// batched greedy decoding must give each case its own ids.
static void batched(void) {
    StFile c[2];
    Err e = {{0}};
    if (!st_load(&c[0], FIXTURES "/post_2x2.case0.safetensors", &e) || !st_load(&c[1], FIXTURES "/post_2x2.case1.safetensors", &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    Model m;
    Lesson l;
    CHECK(lesson_parse(&l, "forward-pass.md", session_builtin_lesson("forward-pass.md", NULL), &e), "%s", e.msg);
    CHECK(model_load(&m, FIXTURES "/post_2x2.safetensors", &l.program, NULL, &e), "%s", e.msg);
    const float pad = (float)m.cfg.pad_id.id;
    int S = 0, T = 0, Sb[2], Tb[2];
    for (int b = 0; b < 2; b++) {
        Sb[b] = st_find(&c[b], "src_ids")->shape.dim[0], Tb[b] = st_find(&c[b], "tgt_ids")->shape.dim[0];
        S = Sb[b] > S ? Sb[b] : S, T = Tb[b] > T ? Tb[b] : T;
    }
    float src[2 * 16], tgt[2 * 16];
    for (int b = 0; b < 2; b++) {
        for (int i = 0; i < S; i++) src[b * S + i] = i < Sb[b] ? st_find(&c[b], "src_ids")->data[i] : pad;
        for (int i = 0; i < T; i++) tgt[b * T + i] = i < Tb[b] ? st_find(&c[b], "tgt_ids")->data[i] : pad;
    }
    RunSpec spec = {src, S, tgt, T, 0, 2};
    Interp *it = interp_new(&l.program, &m, &spec, &e);
    CHECK(it && interp_run(it, &e), "batched teacher forcing: %s", e.msg);
    const int V = m.cfg.tgt_vocab_size, H = m.cfg.nhead;
    const float *logits = it ? interp_output(it, interp_find(it, "generator.logits")) : NULL;
    const float *cross = it ? interp_output(it, interp_find(it, "decoder.layers.1.cross_attn.weights")) : NULL;
    for (int b = 0; b < 2 && logits; b++) {
        char what[64];
        snprintf(what, sizeof what, "batch row %d logits", b);
        CHECK_CLOSE(logits + (size_t)b * T * V, st_find(&c[b], "logits")->data, (long)Tb[b] * V, 1e-4, what);
        const float *want = st_find(&c[b], "decoder.layers.1.cross_attn.weights")->data;  // [H, Tb, Sb]
        double worst = 0;
        for (int h = 0; h < H; h++)
            for (int q = 0; q < Tb[b]; q++)
                for (int k = 0; k < Sb[b]; k++)
                    worst = fmax(worst, fabs(cross[(((size_t)b * H + h) * T + q) * S + k] - want[((size_t)h * Tb[b] + q) * Sb[b] + k]));
        CHECK(worst <= 1e-4, "batch row %d cross-attention: %g", b, worst);
    }
    interp_free(it);
    RunSpec greedy = {src, S, NULL, 0, 8, 2};
    it = interp_new(&l.program, &m, &greedy, &e);
    CHECK(it && interp_run(it, &e), "batched greedy: %s", e.msg);
    for (int b = 0; b < 2 && it; b++) {
        int n;
        const float *ids = interp_generated_row(it, b, &n);
        const StEntry *want = st_find(&c[b], "greedy_ids");
        CHECK(n == want->shape.dim[0] && !memcmp(ids, want->data, sizeof(float) * (size_t)n),
              "batched greedy row %d: %d tokens (PyTorch %d)", b, n, want->shape.dim[0]);
    }
    if (it) rounds_keep_their_ids(it, c, m.cfg.bos_id.id);
    interp_free(it);
    lesson_free(&l);
    model_free(&m);
    st_free(&c[0]), st_free(&c[1]);
}

int main(void) {
    batched();
    // The standard lessons on nn.Transformer's files, and the lessons of the implementations in
    // the notes on state_dicts saved by independent PyTorch versions of them (fixtures/seeds).
    static const struct {
        const char *dir, *model, *program;
        int cases;
        const char *config;  // what a file without metadata needs (as --config)
    } models[] = {
        {FIXTURES, "post_2x2", NULL, 2, NULL},
        {FIXTURES, "pre_1x3_gelu", NULL, 2, NULL},
        {FIXTURES, "post_dk2", NULL, 1, NULL},
        {FIXTURES, "annotated", NULL, 1, NULL},
        {FIXTURES, "nometa", NULL, 1, "nhead=4 bos_id=2 eos_id=3 pad_id=1"},
        {FIXTURES "/seeds", "annotated", LESSONS "/annotated-transformer.md", 2, NULL},
        {FIXTURES "/seeds", "scratch_encoder", LESSONS "/encoder-from-scratch.md", 2, NULL},
        {FIXTURES "/seeds", "jadore", LESSONS "/attention-is-all-you-need-pytorch.md", 2, NULL},
        {FIXTURES "/seeds", "jadore_nometa", LESSONS "/attention-is-all-you-need-pytorch.md", 1,
         "nhead=4 d_k=6 d_v=10 bos_id=2 eos_id=3 pad_id=1"},
        {FIXTURES "/seeds", "bloem", LESSONS "/transformers-from-scratch.md", 2, NULL},
    };
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        char model[512];
        snprintf(model, sizeof model, "%s/%s.safetensors", models[m].dir, models[m].model);
        SessionSpec spec = {.model_path = model, .program_path = models[m].program, .config = models[m].config};
        for (int k = 0; k < models[m].cases; k++) {
            char path[600], ctx[128];
            snprintf(path, sizeof path, "%s/%s.case%d.safetensors", models[m].dir, models[m].model, k);
            snprintf(ctx, sizeof ctx, "%s.case%d%s", models[m].model, k, models[m].program ? " (seeds)" : "");
            StFile f;
            Err e;
            bool ok = st_load(&f, path, &e);
            CHECK(ok, "%s", e.msg);
            if (!ok) continue;
            teacher_forced(&spec, &f, ctx);
            if (st_find(&f, "greedy_ids")) greedy(&spec, &f, ctx);
            st_free(&f);
        }
    }
    return check_finish("test_torch");
}
