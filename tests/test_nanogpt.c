// test_nanogpt.c: lessons/nanogpt.md runs karpathy/nanoGPT's GPT as nanoGPT's code computes it.
// The fixtures (scripts/make_nanogpt_fixtures.py) were made in PyTorch by a GPT with nanoGPT's
// modules and state_dict names and converted by scripts/torch2st.py: a bias=True model saved as
// a raw state_dict with the attn.bias mask buffers, and a bias=False one saved as train.py's
// ckpt.pt after torch.compile. `trace` must give PyTorch's logits and attention maps at every
// prompt position to 1e-4, and `run` the ids nanoGPT's generate() appends (argmax). Also: a
// file holding wte without lm_head, the configuration contradicting a file, the tie's
// gradient, the lesson's stated numbers, and the language's `param ... if`.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"
#include "session.h"

#define NANO FIXTURES "/nanogpt"
#define PROGRAM LESSONS "/nanogpt.md"
static const char *const bias_config = "n_layer=2 n_head=4 n_embd=32 block_size=16 vocab_size=50 bias=1";

// `trace`'s dump against the case: logits [P, V] and every layer's maps [n_head, P, P].
static void compare_dump(const char *dump, const StFile *c, const char *what) {
    StFile d;
    Err e = {{0}};
    if (!st_load(&d, dump, &e)) {
        CHECK(false, "%s: %s", what, e.msg);
        return;
    }
    int compared = 0;
    for (int i = 0; i < c->n_entries; i++) {
        const StEntry *want = &c->entries[i], *got = st_find(&d, want->name);
        if (strcmp(want->name, "logits") && !strstr(want->name, ".self_attn.weights")) continue;
        CHECK(got && shape_eq(&got->shape, &want->shape), "%s: the dump's %s has PyTorch's shape", what, want->name);
        if (!got || !shape_eq(&got->shape, &want->shape)) continue;
        char label[200];
        snprintf(label, sizeof label, "%s %s", what, want->name);
        CHECK_CLOSE(got->data, want->data, shape_numel(&want->shape), 1e-4, label);
        compared++;
    }
    CHECK(compared == 3, "%s: logits and two layers' maps compared (%d)", what, compared);
    st_free(&d);
}

// `run --json`'s output_ids against the case's generated ids; returns the parsed JSON.
static cJSON *expect_generated(const StFile *c, const char *what) {
    cJSON *j = cJSON_Parse(out);
    const cJSON *ids = cJSON_GetObjectItem(j, "output_ids");
    const StEntry *want = st_find(c, "generated");
    const int n = want->shape.dim[0];
    bool same = cJSON_IsArray(ids) && cJSON_GetArraySize(ids) == n;
    for (int i = 0; same && i < n; i++) same = cJSON_GetArrayItem(ids, i)->valueint == (int)want->data[i];
    CHECK(same, "%s: run gives nanoGPT's %d greedy ids: %s", what, n, out);
    return j;
}

// One fixture model: its case's prompt through trace and run, with `config` (or none).
static void fixture(const char *name, const char *model, const char *config, const char *note) {
    char path[400], ids[256], dump[400], cfg[200] = "";
    snprintf(path, sizeof path, NANO "/%s.case0.safetensors", name);
    StFile c;
    Err e = {{0}};
    if (!st_load(&c, path, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    ids_csv(st_find(&c, "idx"), ids, sizeof ids);
    if (config) snprintf(cfg, sizeof cfg, "--config '%s'", config);
    snprintf(dump, sizeof dump, "%s/%s.trace.safetensors", dir, name);
    int code = run("trace --program '%s' --model '%s' %s --src-ids %s --dump '%s'", PROGRAM, model, cfg, ids, dump);
    CHECK(code == 0, "%s: trace exits 0: %s", name, err);
    if (note) CHECK(strstr(err, note) != NULL, "%s: stderr says '%s': %s", name, note, err);
    else CHECK(!strstr(err, "ignored"), "%s: nothing ignored: %s", name, err);
    if (code == 0) compare_dump(dump, &c, name);
    code = run("run --program '%s' --model '%s' %s --src-ids %s --max-len %s --json", PROGRAM, model, cfg, ids,
               st_meta(&c, "max_new_tokens"));
    CHECK(code == 0, "%s: run exits 0: %s", name, err);
    cJSON_Delete(expect_generated(&c, name));
    st_free(&c);
}

// Writes the tensors of `from` but `drop` (NULL: all), with its metadata or none.
static bool rewrite(const char *from, const char *to, const char *drop, bool metadata) {
    StFile f;
    Err e = {{0}};
    if (!st_load(&f, from, &e)) return false;
    StTensor *t = calloc((size_t)f.n_entries + 1, sizeof *t);
    int n = 0;
    for (int i = 0; i < f.n_entries; i++)
        if (!drop || strcmp(f.entries[i].name, drop)) t[n++] = (StTensor){f.entries[i].name, f.entries[i].shape, f.entries[i].data};
    const bool ok = st_save(to, t, n, metadata ? f.meta : NULL, metadata ? f.n_meta : 0, &e);
    CHECK(ok, "%s", e.msg);
    free(t);
    st_free(&f);
    return ok;
}

// nanoGPT's state_dict holds lm_head.weight and wte as one tensor; a file with only wte loads
// (the tie gives lm_head its numbers) and computes the same.
static void wte_only(void) {
    char path[400];
    snprintf(path, sizeof path, "%s/wte-only.safetensors", dir);
    if (rewrite(NANO "/gpt_nobias.safetensors", path, "lm_head.weight", true)) fixture("gpt_nobias", path, NULL, NULL);
}

// A configuration that contradicts the file is an error naming the tensor, the line and `if`.
static void config_mismatch(void) {
    char with[400], without[400];
    snprintf(with, sizeof with, "%s/bias-nometa.safetensors", dir);
    snprintf(without, sizeof without, "%s/nobias-nometa.safetensors", dir);
    if (!rewrite(NANO "/gpt_bias.safetensors", with, NULL, false) ||
        !rewrite(NANO "/gpt_nobias.safetensors", without, NULL, false))
        return;
    EXPECT(run("trace --program '%s' --model '%s' --config 'n_head=4 bias=0' --src-ids 1,2", PROGRAM, with), 1, err,
           "the file holds 'transformer.h.0.ln_1.bias', but " PROGRAM ":");
    CHECK(strstr(err, "leaves it out (its `if` is 0)") && strchr(err, '\n') && !strchr(strchr(err, '\n') + 1, '\n'),
          "one line: %s", err);
    // No metadata and no bias=0: GPTConfig's default bias=1 asks for biases the file lacks.
    EXPECT(run("trace --program '%s' --model '%s' --config n_head=4 --src-ids 1,2", PROGRAM, without), 1, err,
           "missing tensor 'transformer.h.0.ln_1.bias' (declared at " PROGRAM ":");
    CHECK(strstr(err, "where its `if` is not 0: does the configuration describe this file?"), "%s", err);
    EXPECT(run("trace --program '%s' --model '%s' --src-ids 1,2", PROGRAM, with), 1, err, "n_head");
    // The converted files carry their configuration: --config cannot contradict it.
    EXPECT(run("trace --program '%s' --model '%s' --config bias=1 --src-ids 1,2", PROGRAM, NANO "/gpt_nobias.safetensors"),
           1, err, "bias is 1 in --config, but 0 in the metadata of");
}

// The loss's gradient reaches wte through the embedding and through the tied head: both names
// hold the sum. The gradient checks pass through LayerNorms without a bias.
static void gradients(void) {
    char grads[400];
    snprintf(grads, sizeof grads, "%s/grads.safetensors", dir);
    const char *model = NANO "/gpt_nobias.safetensors", *prompt = "--src-ids 5,9,31,2,44,17 --labels 9,31,2,44,17,8";
    int code = run("trace --program '%s' --model '%s' %s --grads '%s'", PROGRAM, model, prompt, grads);
    CHECK(code == 0, "trace --grads: %s", err);
    StFile g;
    Err e = {{0}};
    if (code == 0 && st_load(&g, grads, &e)) {
        const StEntry *a = st_find(&g, "lm_head.weight"), *b = st_find(&g, "transformer.wte.weight");
        CHECK(a && b && shape_eq(&a->shape, &b->shape) && !memcmp(a->data, b->data, sizeof(float) * 50 * 32),
              "the tied names hold the same gradient");
        double norm = 0;
        for (int i = 0; a && i < 50 * 32; i++) norm += (double)a->data[i] * a->data[i];
        CHECK(norm > 1e-6, "and it is not zero (%g)", norm);
        CHECK(!st_find(&g, "transformer.h.0.ln_1.bias"), "no bias, no gradient of one");
        st_free(&g);
    }
    static const char *const checked[] = {"transformer.h.0.ln_1.weight", "decoder.x0", "transformer.wte.weight"};
    for (int k = 0; k < 3; k++) {
        code = run("trace --program '%s' --model '%s' %s --gradcheck %s", PROGRAM, model, prompt, checked[k]);
        CHECK(code == 0, "--gradcheck %s agrees: %s%s", checked[k], out, err);
    }
}

// Fresh weights: the tie starts lm_head as wte's copy; bias=0 declares no bias at all.
static void fresh(void) {
    char path[400];
    for (int bias = 0; bias < 2; bias++) {
        snprintf(path, sizeof path, "%s/fresh%d.safetensors", dir, bias);
        int code = run("init --program '%s' --config 'n_layer=3 n_head=2 n_embd=8 block_size=6 vocab_size=11 bias=%d' "
                       "--out '%s' --seed 9", PROGRAM, bias, path);
        CHECK(code == 0, "init: %s", err);
        StFile f;
        Err e = {{0}};
        if (code || !st_load(&f, path, &e)) continue;
        const StEntry *a = st_find(&f, "lm_head.weight"), *b = st_find(&f, "transformer.wte.weight");
        CHECK(a && b && !memcmp(a->data, b->data, sizeof(float) * 11 * 8), "fresh tied weights start equal");
        // wte, wpe, ln_f, lm_head and six a layer; with bias, ln_f's and six more a layer
        CHECK(f.n_entries == (bias ? 4 + 1 + 3 * 12 : 4 + 3 * 6), "bias=%d: %d tensors", bias, f.n_entries);
        const StEntry *proj = st_find(&f, "transformer.h.2.mlp.c_proj.weight");
        double ss = 0;
        for (int i = 0; proj && i < 8 * 32; i++) ss += (double)proj->data[i] * proj->data[i];
        CHECK(proj && fabs(sqrt(ss / 256) - 0.02 / sqrt(6)) < 0.0025, "c_proj starts with std 0.02/sqrt(2 n_layer): %g",
              sqrt(ss / 256));
        st_free(&f);
    }
}

// The characters a session generated, as text.
static void generated_text(const Session *s, char *buf, size_t n) {
    int count;
    StopReason why;
    const float *ids = interp_generated(s->it, &count, &why);
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s", vocab_token(&s->model.tgt_vocab, (int)ids[i]));
}

// The last row of round k's probs: the largest probability, and that of token `tok`.
static double round_pick(const Session *s, int k, const char *tok, double *p_tok) {
    char id[64];
    snprintf(id, sizeof id, "step.%d.generator.probs", k);
    const int i = interp_find(s->it, id);
    if (i < 0) return -1;
    const Shape *sh = &interp_stage(s->it, i)->shape;
    const float *row = interp_output(s->it, i) + (size_t)(sh->dim[0] - 1) * sh->dim[1];
    double best = 0;
    for (int v = 0; v < sh->dim[1]; v++) {
        best = fmax(best, row[v]);
        if (tok && !strcmp(vocab_token(&s->model.tgt_vocab, v), tok)) *p_tok = row[v];
    }
    return best;
}

// A round's first self-attention map: its shape, and whether its first query row sees only
// itself and nothing above the diagonal is read.
static void expect_triangle(const Session *s, int k, int T) {
    char id[80];
    snprintf(id, sizeof id, "step.%d.decoder.layers.0.self_attn.weights", k);
    const int i = interp_find(s->it, id);
    const Stage *st = i >= 0 ? interp_stage(s->it, i) : NULL;
    CHECK(st && shape_eq(&st->shape, &(Shape){3, {4, T, T}}), "%s is 4 x %d x %d", id, T, T);
    if (!st) return;
    const float *w = interp_output(s->it, i);
    bool lower = true;
    for (int h = 0; h < 4; h++)
        for (int q = 0; q < T; q++)
            for (int c = q + 1; c < T; c++) lower = lower && w[((size_t)h * T + q) * T + c] == 0.0f;
    CHECK(lower && w[0] == 1.0f && w[(size_t)3 * T * T] == 1.0f, "%s: the first row reads itself, nothing above", id);
}

// What the lesson's narration states, and PyTorch's logits and ids on the lesson's model.
static void lesson_numbers(void) {
    StFile c;
    Err e = {{0}};
    if (!st_load(&c, NANO "/rhymes.case0.safetensors", &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    char dump[400];
    snprintf(dump, sizeof dump, "%s/rhymes.trace.safetensors", dir);
    int code = run("trace --program '%s' --model '%s' --input '%s' --dump '%s'", PROGRAM,
                   LESSONS "/../assets/models/nanogpt-rhymes.safetensors", st_meta(&c, "prompt"), dump);
    CHECK(code == 0, "trace on the lesson's model: %s", err);
    if (code == 0) compare_dump(dump, &c, "rhymes");
    Session s;
    SessionSpec spec = {.lesson_path = PROGRAM};
    if (!session_open(&s, &spec, &e) || !interp_run(s.it, &e)) {
        CHECK(false, "the lesson runs: %s", e.msg);
        st_free(&c);
        return;
    }
    char text[256];
    generated_text(&s, text, sizeof text);
    CHECK(!strcmp(text, " box. the hen sat on the pen.") && !strcmp(text, st_meta(&c, "generated_text")),
          "the lesson writes PyTorch's ' box. the hen sat on the pen.': '%s'", text);
    double p_b = 0, p_p = 0, worst = 1;
    round_pick(&s, 1, "b", &p_b), round_pick(&s, 1, "p", &p_p);
    CHECK_STATED(p_b, 0.957, 3, "step.1's b");
    CHECK_STATED(p_p, 0.038, 3, "step.1's p");
    for (int k = 0; k < 29; k++)
        if (k != 1) worst = fmin(worst, round_pick(&s, k, NULL, NULL));
    CHECK(worst >= p_b, "every other round is as sure or surer: %.4f", worst);
    expect_triangle(&s, 0, 18);
    expect_triangle(&s, 28, 46);
    int first;
    CHECK(session_set_input(&s, "the dog sat on the", &first, &e) && interp_run(s.it, &e), "E: %s", e.msg);
    generated_text(&s, text, sizeof text);
    CHECK(!strcmp(text, " log. the fox sat on the box."), "the dog's rhyme: '%s'", text);
    session_close(&s);
    st_free(&c);
}

// ---- the language's `param ... if` ----

// Runs a program (a lesson on fresh weights) written to a file; returns its exit code.
static int run_program(const char *config, const char *program) {
    char path[400];
    snprintf(path, sizeof path, "%s/optional.md", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "# t\n\n```lesson\nmodel: random\nconfig: d_model=4 src_vocab_size=9 %s\nsrc_ids: 1,2,3\n```\n\n"
               "```program\ninput src\nparam @e [src_vocab_size, d_model] normal(1)\nparam @g [d_model] ones\n"
               "x = embedding(src, @e)\n%s```\n", config, program);
    fclose(f);
    return run("lesson '%s' --headless --print %s", path, strstr(program, "y =") ? "y" : "x");
}

static void optional_weights(void) {
    const char *ln = "param @b [d_model] normal(1) if with_b\ny = layer_norm(x, @g, @b)\noutput y = y\n";
    EXPECT(run_program("with_b=1", ln), 0, out, "layer_norm");
    char with[4096];
    snprintf(with, sizeof with, "%s", out);
    EXPECT(run_program("with_b=0", ln), 0, out, "layer_norm");
    CHECK(strcmp(with, out) != 0, "the shift is added only where the weight is declared");
    EXPECT(run_program("with_b=0", "param @b [d_model] zeros if with_b\ny = linear(x, @b, @g)\n"), 1, err,
           "optional.md:15: linear: the weight 'b' is absent here (its `param ... if` is 0); only an op's last argument");
    EXPECT(run_program("with_b=0", "param @b [d_model] zeros if with_b\ny = add(x, @b)\n"), 1, err,
           "optional.md:15: add needs the weight 'b', but it is absent here");
    EXPECT(run_program("", "param @b [d_model] zeros if\ny = x\n"), 1, err, "optional.md:14: expected a condition after 'if'");
    EXPECT(run_program("", "param @b [d_model] zeros if nothing_sets_me\ny = x\n"), 1, err, "'nothing_sets_me' is not set");
    EXPECT(run_program("with_b=0", "param @b [d_model] zeros if with_b\nparam @b [d_model] zeros\ny = x\n"), 1, err,
           "optional.md:15: 'b' is declared here, but line 14 leaves it out (its `if` is 0)");
}

int main(void) {
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    fixture("gpt_bias", NANO "/gpt_bias.safetensors", bias_config,
            "transformer.h.0.attn.bias, transformer.h.1.attn.bias: 2 tensors of " NANO
            "/gpt_bias.safetensors not declared by the program, ignored");
    fixture("gpt_nobias", NANO "/gpt_nobias.safetensors", NULL, NULL);
    wte_only();
    config_mismatch();
    gradients();
    fresh();
    lesson_numbers();
    optional_weights();
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "removing %s", dir);
    return check_finish("test_nanogpt");
}
