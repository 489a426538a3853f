// test_mistakes.c: the mistake lessons (lessons/mistake-*.md, lessons/MISTAKES.md) state, for one
// input, the correct output and the broken one, with a few numbers that explain the difference.
// This runs each lesson and the correct program it varies through a Session, and checks every
// output and number the narration states, to the precision it states them. The trained mistake
// models (scripts/train_mistake_models.sh) are checked by their greedy outputs. A lesson whose
// model or narration changes must change here too.
#define _POSIX_C_SOURCE 200809L  // getpid
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "session.h"

#define DATE "Nov 22, 2026"

static const double PI = 3.14159265358979323846;

// ---- helpers ----

typedef struct {
    const char *input, *model, *target;  // overrides; model is a file name in assets/models
} Opts;

// Opens `path` (a lesson file) with the overrides and runs it to its end.
static bool open_path(Session *s, const char *path, Opts o) {
    char model[700];
    if (o.model) snprintf(model, sizeof model, "%s/%s", MODELS, o.model);
    SessionSpec spec = {.lesson_path = path, .input = o.input, .model_path = o.model ? model : NULL,
                        .target = o.target};
    Err e = {{0}};
    bool ok = session_open(s, &spec, &e);
    if (ok && !interp_run(s->it, &e)) {
        session_close(s);
        ok = false;
    }
    CHECK(ok, "%s: %s", path, e.msg);
    if (ok) CHECK(interp_done(s->it), "%s runs to its end", path);
    return ok;
}

static bool open_lesson(Session *s, const char *name, Opts o) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, name);
    return open_path(s, path, o);
}

// What greedy decoding wrote, and that it stopped at eos.
static void generated(const Session *s, char *buf, size_t n) {
    int len;
    StopReason why;
    const float *ids = interp_generated(s->it, &len, &why);
    buf[0] = '\0';
    CHECK(ids != NULL, "greedy decoding ran");
    if (!ids) return;
    vocab_decode(&s->model.tgt_vocab, ids, len, buf, n);
    CHECK(why == STOP_EOS, "stops at eos, not at the length limit ('%s')", buf);
}

// Runs a lesson and checks its greedy output.
static void expect_output(const char *name, Opts o, const char *want) {
    Session s;
    if (!open_lesson(&s, name, o)) return;
    char got[128];
    generated(&s, got, sizeof got);
    CHECK(!strcmp(got, want), "%s on '%s'%s%s: '%s', the narration says '%s'", name, o.input ? o.input : "its input",
          o.model ? " with " : "", o.model ? o.model : "", got, want);
    session_close(&s);
}

static const float *stage(const Session *s, const char *id, Shape *shape) {
    const int i = interp_find(s->it, id);
    CHECK(i >= 0, "stage %s exists", id);
    if (i < 0) return NULL;
    if (shape) *shape = interp_stage(s->it, i)->shape;
    const float *x = interp_output(s->it, i);
    CHECK(x != NULL, "stage %s has run", id);
    return x;
}

static int argmax_of(const float *x, int n) {
    int b = 0;
    for (int j = 1; j < n; j++) b = x[j] > x[b] ? j : b;
    return b;
}

// Round k's pick (the last row of step.k.generator.probs): its token and its probability.
static void expect_pick(const Session *s, int k, const char *token, double p, const char *what) {
    char id[64];
    snprintf(id, sizeof id, "step.%d.generator.probs", k);
    Shape sh;
    const float *probs = stage(s, id, &sh);
    if (!probs) return;
    const int T = sh.dim[0], V = sh.dim[1];
    const float *row = probs + (size_t)(T - 1) * V;
    const int a = argmax_of(row, V);
    const float fa = (float)a;
    char got[32];
    vocab_decode(&s->model.tgt_vocab, &fa, 1, got, sizeof got);
    CHECK(!strcmp(got, token), "%s: round %d picks '%s', the narration says '%s'", what, k, got, token);
    if (p > 0) CHECK_STATED(row[a], p, 2, what);
}

// The probability of `token` in round k's last row.
static double prob_of(const Session *s, int k, const char *token) {
    char id[64];
    snprintf(id, sizeof id, "step.%d.generator.probs", k);
    Shape sh;
    const float *probs = stage(s, id, &sh);
    if (!probs) return -1;
    const int T = sh.dim[0], V = sh.dim[1];
    for (int v = 0; v < V; v++) {
        const float fv = (float)v;
        char t[32];
        vocab_decode(&s->model.tgt_vocab, &fv, 1, t, sizeof t);
        if (!strcmp(t, token)) return probs[(size_t)(T - 1) * V + v];
    }
    CHECK(false, "token '%s' is in the vocabulary", token);
    return -1;
}

// The largest |a - b| over row r of two [rows, n] tensors, or over column c (r < 0).
static double row_diff(const float *a, const float *b, int r, int n) {
    double m = 0;
    for (int j = 0; j < n; j++) m = fmax(m, fabs((double)a[r * n + j] - b[r * n + j]));
    return m;
}

static double col_diff(const float *a, const float *b, int c, int rows, int n) {
    double m = 0;
    for (int r = 0; r < rows; r++) m = fmax(m, fabs((double)a[r * n + c] - b[r * n + c]));
    return m;
}

// The largest difference between rows r1 and r2 of one [rows, n] tensor.
static double rows_apart(const float *x, int r1, int r2, int n) {
    double m = 0;
    for (int j = 0; j < n; j++) m = fmax(m, fabs((double)x[r1 * n + j] - x[r2 * n + j]));
    return m;
}

// Two stages of the same id in two sessions: equal (exactly) and of equal shape.
static void expect_same_stage(const Session *a, const Session *b, const char *id, bool same) {
    Shape sa, sb;
    const float *x = stage(a, id, &sa), *y = stage(b, id, &sb);
    if (!x || !y) return;
    CHECK(shape_eq(&sa, &sb), "%s: the same shape in both", id);
    if (!shape_eq(&sa, &sb)) return;
    const double d = max_abs_diff(x, y, (long)shape_numel(&sa));
    if (same) CHECK(d == 0, "%s is the same in both passes (%g)", id, d);
    else CHECK(d > 0.1, "%s differs between the passes (%g)", id, d);
}

// A lesson with text replaced (each `from` must occur exactly once), written to a scratch file:
// the "try it" edits the narration suggests. The caller opens it with a model override.
static bool write_variant(const char *name, const char *path, const char *const *from, const char *const *to,
                         int n) {
    char src[600];
    snprintf(src, sizeof src, "%s/%s", LESSONS, name);
    FILE *f = fopen(src, "rb");
    CHECK(f != NULL, "open %s", src);
    if (!f) return false;
    static char text[1 << 17], out[1 << 17];
    const size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    for (int k = 0; k < n; k++) {
        char *at = strstr(text, from[k]);
        CHECK(at && !strstr(at + 1, from[k]), "%s holds '%s' once", name, from[k]);
        if (!at || strstr(at + 1, from[k])) return false;
        snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to[k], at + strlen(from[k]));
        memcpy(text, out, strlen(out) + 1);
    }
    char *cor = strstr(text, "\ncorrect: ");  // the scratch file is elsewhere: its correct program by its full path
    if (cor) {
        snprintf(out, sizeof out, "%.*s\ncorrect: %s/%s", (int)(cor - text), text, LESSONS, cor + strlen("\ncorrect: "));
        memcpy(text, out, strlen(out) + 1);
    }
    f = fopen(path, "wb");
    CHECK(f != NULL, "write %s", path);
    if (!f) return false;
    fputs(text, f);
    fclose(f);
    return true;
}

// Runs a variant of a lesson (on `model` from assets/models, or on the lesson's own) and checks its
// greedy output, or, with want_error, that it fails with that message.
static void expect_variant(const char *name, const char *const *from, const char *const *to, int n,
                           const char *model, const char *want, const char *want_error) {
    char path[128], m[700];
    snprintf(path, sizeof path, "/tmp/stepformer-mistake-%ld.md", (long)getpid());
    if (!write_variant(name, path, from, to, n)) return;
    if (model) snprintf(m, sizeof m, "%s/%s", MODELS, model);
    SessionSpec spec = {.lesson_path = path, .model_path = model ? m : NULL};
    Session s;
    Err e = {{0}};
    bool ok = session_open(&s, &spec, &e);
    if (ok) {
        ok = interp_run(s.it, &e);
        if (ok && want) {
            char got[128];
            generated(&s, got, sizeof got);
            CHECK(!strcmp(got, want), "%s, changed as the narration suggests: '%s', it says '%s'", name, got, want);
        }
        session_close(&s);
    }
    if (want_error) CHECK(!ok && strstr(e.msg, want_error), "%s, changed: fails with '%s': %s", name, want_error, e.msg);
    else CHECK(ok, "%s, changed: %s", name, e.msg);
    remove(path);
}

// ---- the correct pass ----

static void test_index(void) {
    expect_output("forward-pass.md", (Opts){.input = DATE}, "2026-11-22");
    expect_output("MISTAKES.md", (Opts){0}, "2026-11-22");
    // The index links every mistake lesson of the folder, and every link is a lesson there.
    char path[600];
    snprintf(path, sizeof path, "%s/MISTAKES.md", LESSONS);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "open %s", path);
    if (!f) return;
    static char text[1 << 16];
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    DIR *d = opendir(LESSONS);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        if (strncmp(de->d_name, "mistake-", 8) != 0) continue;
        char link[300];
        snprintf(link, sizeof link, "](%s)", de->d_name);
        CHECK(strstr(text, link) != NULL, "MISTAKES.md links %s", de->d_name);
        n++;
    }
    if (d) closedir(d);
    CHECK(n == 8, "eight mistake lessons (%d)", n);
    for (const char *p = strstr(text, "](mistake-"); p; p = strstr(p + 1, "](mistake-")) {
        char name[200];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p + 2, ")"), p + 2);
        snprintf(path, sizeof path, "%s/%s", LESSONS, name);
        FILE *g = fopen(path, "rb");
        CHECK(g != NULL, "MISTAKES.md links %s, which exists", name);
        if (g) fclose(g);
    }
}

// ---- 1. the positional table with base 1000 ----

static void test_pe_base_1000(void) {
    Session ok, bad;
    if (!open_lesson(&ok, "forward-pass.md", (Opts){.input = DATE})) return;
    if (!open_lesson(&bad, "mistake-pe-base-1000.md", (Opts){0})) return session_close(&ok);
    char got[128];
    generated(&bad, got, sizeof got);
    CHECK(!strcmp(got, "2026-11-2"), "base 1000: '%s'", got);
    for (int k = 0; k <= 8; k++) {
        char want[8];
        const char *answer = "2026-11-22";
        snprintf(want, sizeof want, "%c", answer[k]);
        expect_pick(&bad, k, want, 0, "base 1000, rounds 0-8 agree");
    }
    expect_pick(&ok, 9, "2", 0.91, "the correct round 9");
    expect_pick(&bad, 9, "<eos>", 0.90, "base 1000, round 9");
    // The decoder's rows differ by the two tables' difference (the same tokens in both).
    Shape sh;
    const float *a = stage(&ok, "step.9.decoder.pos", &sh), *b = stage(&bad, "step.9.decoder.pos", NULL);
    if (a && b) {
        const int T = sh.dim[0], n = sh.dim[1];
        CHECK(T == 10 && n == 48, "round 9 has 10 rows of 48");
        CHECK(row_diff(a, b, 0, n) < 1e-5, "row 0 is the same in both tables");
        CHECK(col_diff(a, b, 0, T, n) < 1e-5 && col_diff(a, b, 1, T, n) < 1e-5, "columns 0 and 1 are the same");
        CHECK_STATED(row_diff(a, b, 1, n), 0.10, 2, "largest difference at position 1");
        CHECK_STATED(row_diff(a, b, 5, n), 0.50, 2, "largest difference at position 5");
        CHECK_STATED(row_diff(a, b, 9, n), 0.90, 2, "largest difference at position 9");
    }
    const float *ea = stage(&ok, "encoder.pos", &sh), *eb = stage(&bad, "encoder.pos", NULL);
    if (ea && eb) {
        CHECK(row_diff(ea, eb, 0, 48) < 1e-5 && col_diff(ea, eb, 0, sh.dim[0], 48) < 1e-5 &&
              col_diff(ea, eb, 1, sh.dim[0], 48) < 1e-5, "encoder.pos: row 0, columns 0 and 1 agree");
        CHECK(row_diff(ea, eb, 11, 48) > 0.5, "encoder.pos: later rows differ");
    }
    session_close(&ok);
    session_close(&bad);
    // The slowest wavelengths the narration gives.
    CHECK_STATED(2 * PI * pow(1000, 46.0 / 48), 4712, 0, "the slowest pair, base 1000");
    CHECK_STATED(2 * PI * pow(10000, 46.0 / 48), 42807, 0, "the slowest pair, base 10000");
    // Which side matters: the decoder's table.
    const char *dec_from[] = {"table = positional_table(base=1000)    # MISTAKE, the same"};
    const char *dec_to[] = {"table = positional_table(base=10000)    # MISTAKE, the same"};
    expect_variant("mistake-pe-base-1000.md", dec_from, dec_to, 1, "dates.safetensors", "2026-11-22", NULL);
    const char *enc_from[] = {"table = positional_table(base=1000)      # MISTAKE: the model"};
    const char *enc_to[] = {"table = positional_table(base=10000)      # MISTAKE: the model"};
    expect_variant("mistake-pe-base-1000.md", enc_from, enc_to, 1, "dates.safetensors", "2026-11-2", NULL);
}

// ---- 2. a decoder that never reads the encoder ----

static void test_no_cross_attention(void) {
    const char *inputs[] = {DATE, "22 November 2026", "3 March 1999", "Sunday, 22 November 2026"};
    for (int i = 0; i < 4; i++) expect_output("mistake-no-cross-attention.md", (Opts){.input = inputs[i]}, "1920-0-021");
    Session ok, bad;
    if (!open_lesson(&ok, "forward-pass.md", (Opts){.input = DATE})) return;
    if (!open_lesson(&bad, "mistake-no-cross-attention.md", (Opts){0})) return session_close(&ok);
    expect_same_stage(&ok, &bad, "encoder.norm", true);
    expect_pick(&ok, 0, "2", 0.90, "the correct round 0");
    expect_pick(&bad, 0, "1", 0.67, "no cross-attention, round 0");
    Shape sh;
    if (stage(&bad, "step.3.decoder.layers.0.cross_attn.weights", &sh))
        CHECK(sh.ndim == 3 && sh.dim[1] == 4 && sh.dim[2] == 4, "the cross_attn block attends over the 4 target tokens");
    if (stage(&ok, "step.3.decoder.layers.0.cross_attn.weights", &sh))
        CHECK(sh.ndim == 3 && sh.dim[2] == 12, "the correct one over the 12 source characters");
    if (stage(&bad, "step.10.decoder.layers.0.cross_attn.weights", &sh))
        CHECK(sh.dim[0] == 4 && sh.dim[1] == 11 && sh.dim[2] == 11, "the last round's is [4, 11, 11]");
    if (stage(&ok, "step.10.decoder.layers.0.cross_attn.weights", &sh))
        CHECK(sh.dim[0] == 4 && sh.dim[1] == 11 && sh.dim[2] == 12, "the correct last round's is [4, 11, 12]");
    session_close(&ok);
    session_close(&bad);
    // The notes' own line: the memory through the self-attention's weights.
    const char *from[] = {"crossed = attention(norm1, norm1, tgt, 1)"};
    const char *to[] = {"crossed = attention(norm1, memory, src, 0)"};
    expect_variant("mistake-no-cross-attention.md", from, to, 1, "dates.safetensors", "1970-01-03", NULL);
}

// ---- 3. heads merged with a plain reshape ----

static void test_reshape_heads(void) {
    Session ok, bad;
    if (!open_lesson(&ok, "forward-pass.md", (Opts){.input = DATE})) return;
    if (!open_lesson(&bad, "mistake-reshape-heads.md", (Opts){0})) return session_close(&ok);
    char got[128];
    generated(&bad, got, sizeof got);
    CHECK(!strcmp(got, "21"), "reshape: '%s'", got);
    expect_pick(&bad, 0, "2", 0.90, "reshape, round 0");
    expect_pick(&bad, 1, "1", 0.29, "reshape, round 1");
    CHECK_STATED(prob_of(&bad, 1, "<eos>"), 0.24, 2, "reshape, round 1's <eos>");
    expect_pick(&bad, 2, "<eos>", 0, "reshape, round 2");
    expect_same_stage(&ok, &bad, "encoder.layers.0.self_attn.context", true);
    expect_same_stage(&ok, &bad, "encoder.layers.0.self_attn.concat", false);
    // Row r of concat is head r/3 for positions 4 (r mod 3) .. 4 (r mod 3) + 3.
    Shape sh;
    const float *ctx = stage(&bad, "encoder.layers.0.self_attn.context", &sh);
    const float *cat = stage(&bad, "encoder.layers.0.self_attn.concat", NULL);
    if (ctx && cat) {
        CHECK(sh.dim[0] == 4 && sh.dim[1] == 12 && sh.dim[2] == 12, "context is [4, 12, 12]");
        bool same = true;
        for (int r = 0; r < 12; r++)
            for (int p = 0; p < 4; p++)
                for (int j = 0; j < 12; j++)
                    same &= cat[r * 48 + p * 12 + j] == ctx[((r / 3) * 12 + 4 * (r % 3) + p) * 12 + j];
        CHECK(same, "row r of concat holds head r/3 + 1 at positions 4 (r mod 3) to 4 (r mod 3) + 3");
        // Against merge_heads: only row 0's first block and row 11's last one agree.
        const float *right = stage(&ok, "encoder.layers.0.self_attn.concat", NULL);
        for (int r = 0; right && r < 12; r++)
            for (int p = 0; p < 4; p++) {
                double d = 0;
                for (int j = 0; j < 12; j++) d = fmax(d, fabs((double)cat[r * 48 + p * 12 + j] - right[r * 48 + p * 12 + j]));
                const bool agree = (r == 0 && p == 0) || (r == 11 && p == 3);
                CHECK(agree ? d == 0 : d > 0.01, "row %d, block %d: %s the right concat (%g)", r, p,
                      agree ? "equals" : "differs from", d);
            }
    }
    // One query row: the reshape is the merge (round 0's decoder self-attention sees no memory).
    expect_same_stage(&ok, &bad, "step.0.decoder.layers.0.self_attn.concat", true);
    session_close(&ok);
    session_close(&bad);
    const char *from[] = {"concat = reshape(context, -1, d_model)"};
    const char *to[] = {"rows = permute(context, 1, 0, 2)\n  concat = reshape(rows, -1, d_model)"};
    expect_variant("mistake-reshape-heads.md", from, to, 1, "dates.safetensors", "2026-11-22", NULL);
}

// ---- 4. the second residual adds the layer's input ----

static void test_second_residual(void) {
    Session ok, bad;
    if (!open_lesson(&ok, "forward-pass.md", (Opts){.input = DATE})) return;
    if (!open_lesson(&bad, "mistake-second-residual.md", (Opts){0})) return session_close(&ok);
    char got[128];
    generated(&bad, got, sizeof got);
    CHECK(!strcmp(got, "2026-11-20"), "second residual: '%s'", got);
    expect_pick(&ok, 9, "2", 0.91, "the correct round 9");
    expect_pick(&bad, 9, "0", 0.91, "second residual, round 9");
    expect_same_stage(&ok, &bad, "encoder.layers.0.norm1", true);
    expect_same_stage(&ok, &bad, "encoder.layers.0.add2", false);
    // The difference of add2 is norm1 - x (x is encoder.pos in layer 0).
    Shape sh;
    const float *a = stage(&ok, "encoder.layers.0.add2", &sh), *b = stage(&bad, "encoder.layers.0.add2", NULL);
    const float *n1 = stage(&ok, "encoder.layers.0.norm1", NULL), *x = stage(&ok, "encoder.pos", NULL);
    if (a && b && n1 && x) {
        double worst = 0;
        for (long i = 0; i < (long)shape_numel(&sh); i++)
            worst = fmax(worst, fabs(((double)a[i] - b[i]) - ((double)n1[i] - x[i])));
        CHECK(worst < 1e-4, "add2's difference is norm1 - x (%g)", worst);
    }
    session_close(&ok);
    session_close(&bad);
    expect_output("mistake-second-residual.md", (Opts){.input = "22 November 2026"}, "2026-11-22");
    expect_output("mistake-second-residual.md", (Opts){.input = "22/11/2026"}, "2026-12-22");
    expect_output("forward-pass.md", (Opts){.input = "22/11/2026"}, "2026-11-22");
}

// ---- 7b. no division by sqrt(d_k) ----

typedef struct {
    double mean_max;
    int rows, above99;
} Peaks;

// The largest weight of each row of every attention map whose id contains `filter`.
static Peaks peaks(const Session *s, const char *filter) {
    Peaks p = {0};
    double sum = 0;
    for (int i = 0; i < interp_n_stages(s->it); i++) {
        const Stage *st = interp_stage(s->it, i);
        const size_t n = strlen(st->id);
        if (n < 8 || strcmp(st->id + n - 8, ".weights") || st->shape.ndim != 3 || !strstr(st->id, filter)) continue;
        const float *w = interp_output(s->it, i);
        const int rows = st->shape.dim[0] * st->shape.dim[1], K = st->shape.dim[2];
        for (int r = 0; r < rows; r++) {
            const float m = w[(size_t)r * K + argmax_of(w + (size_t)r * K, K)];
            sum += m, p.above99 += m > 0.99;
        }
        p.rows += rows;
    }
    p.mean_max = p.rows ? sum / p.rows : 0;
    return p;
}

static void test_no_scaling(void) {
    Session ok, bad;
    if (!open_lesson(&ok, "forward-pass.md", (Opts){.input = DATE})) return;
    if (!open_lesson(&bad, "mistake-no-scaling.md", (Opts){0})) return session_close(&ok);
    char got[128];
    generated(&bad, got, sizeof got);
    CHECK(!strcmp(got, "2026-11-02"), "no scaling: '%s'", got);
    CHECK(interp_find(bad.it, "encoder.layers.0.self_attn.scaled") < 0, "no scaled stage");
    const Peaks l0[2] = {peaks(&ok, "encoder.layers.0."), peaks(&bad, "encoder.layers.0.")};
    const Peaks l1[2] = {peaks(&ok, "encoder.layers.1."), peaks(&bad, "encoder.layers.1.")};
    const Peaks all[2] = {peaks(&ok, ""), peaks(&bad, "")};
    CHECK(l0[0].rows == 48 && l0[1].rows == 48, "48 rows in encoder layer 0");
    CHECK_STATED(l0[0].mean_max, 0.29, 2, "encoder layer 0, correct");
    CHECK_STATED(l0[1].mean_max, 0.61, 2, "encoder layer 0, not divided");
    CHECK_STATED(l1[0].mean_max, 0.32, 2, "encoder layer 1, correct");
    CHECK_STATED(l1[1].mean_max, 0.68, 2, "encoder layer 1, not divided");
    CHECK(all[0].rows == 1152 && all[1].rows == 1152, "1152 rows in both (%d, %d)", all[0].rows, all[1].rows);
    CHECK_STATED(all[0].mean_max, 0.57, 2, "every map, correct");
    CHECK_STATED(all[1].mean_max, 0.82, 2, "every map, not divided");
    CHECK(all[0].above99 == 94 && all[1].above99 == 292, "rows above 0.99: %d and %d", all[0].above99,
          all[1].above99);
    // The single-key rows: the <bos> row of the decoder's self-attention, 11 rounds x 2 layers x 4 heads.
    int single = 0;
    for (int i = 0; i < interp_n_stages(bad.it); i++) {
        const Stage *st = interp_stage(bad.it, i);
        if (strstr(st->id, "self_attn.weights") && strstr(st->id, "decoder")) single += st->shape.dim[0];
    }
    CHECK(single == 88, "88 rows of a single key (%d)", single);
    // Round 8, layer 1's cross-attention, last row: where the heads look.
    Shape sh;
    const float *wa = stage(&ok, "step.8.decoder.layers.1.cross_attn.weights", &sh);
    const float *wb = stage(&bad, "step.8.decoder.layers.1.cross_attn.weights", NULL);
    if (wa && wb) {
        const int T = sh.dim[1], S = sh.dim[2];
        const double correct[4] = {0.66, 0.72, 0.69, 0.91};
        for (int h = 0; h < 4; h++) {
            const float *ra = wa + ((size_t)h * T + T - 1) * S, *rb = wb + ((size_t)h * T + T - 1) * S;
            CHECK(argmax_of(ra, S) == 4, "correct head %d looks at position 4", h + 1);
            CHECK_STATED(ra[4], correct[h], 2, "correct head's weight on the first 2 of 22");
            CHECK(argmax_of(rb, S) == 7, "not divided, head %d looks at position 7", h + 1);
            if (h < 2) CHECK_STATED(rb[7], 0.99, 2, "not divided, heads 1 and 2 on the space");
        }
    }
    expect_pick(&ok, 8, "2", 0, "the correct round 8");
    expect_pick(&bad, 8, "0", 0.91, "not divided, round 8");
    session_close(&ok);
    session_close(&bad);
}

// ---- 6. the causal mask never used (a trained model) ----

static void test_no_causal_mask(void) {
    expect_output("forward-pass.md", (Opts){.input = "stepformer", .model = "reverse.safetensors"}, "remrofpets");
    Session bad;
    if (!open_lesson(&bad, "mistake-no-causal-mask.md", (Opts){0})) return;
    char got[128];
    generated(&bad, got, sizeof got);
    CHECK(!strcmp(got, "s"), "no causal mask: '%s'", got);
    expect_pick(&bad, 0, "s", 0.66, "no causal mask, round 0");
    expect_pick(&bad, 1, "<eos>", 0.88, "no causal mask, round 1");
    Shape sh;
    const float *w = stage(&bad, "step.1.decoder.layers.0.self_attn.weights", &sh);
    if (w) {
        CHECK(sh.dim[1] == 2 && sh.dim[2] == 2, "two tokens in round 1");
        for (int h = 1; h < 4; h++)  // row 0 (<bos>), key 1 (s)
            CHECK(w[(size_t)h * 4 + 1] >= 0.985, "head %d: the <bos> row on s (%g)", h + 1, w[(size_t)h * 4 + 1]);
    }
    session_close(&bad);
    // Teacher forcing: every row's pick is the next letter of the answer.
    Session tf;
    if (!open_lesson(&tf, "mistake-no-causal-mask.md", (Opts){.target = "remrofpets"})) return;
    const float *w1 = stage(&tf, "decoder.layers.1.self_attn.weights", &sh);
    if (w1) {
        const int T = sh.dim[1];
        CHECK(T == 11, "11 target positions (%d)", T);
        double lo = 1;
        for (int h = 1; h <= 2; h++)
            for (int r = 0; r + 1 < T; r++) {
                const float *row = w1 + ((size_t)h * T + r) * T;
                CHECK(argmax_of(row, T) == r + 1, "head %d, row %d looks one step right", h + 1, r);
                lo = fmin(lo, row[r + 1]);
            }
        CHECK_STATED(lo, 0.93, 2, "the smallest such weight");
    }
    Shape ns;
    const float *next = stage(&tf, "generator.next", &ns);
    if (next) {
        char text[64];
        vocab_decode(&tf.model.tgt_vocab, next, ns.dim[0] - 1, text, sizeof text);
        CHECK(!strcmp(text, "remrofpets"), "teacher-forced picks: '%s'", text);
        const float last = next[ns.dim[0] - 1];
        CHECK((int)last == tf.model.cfg.eos_id.id, "and <eos> after the last letter");
    }
    session_close(&tf);
}

// ---- 7a. no positional encoding (a trained model) ----

static void test_no_positions(void) {
    expect_output("mistake-no-positions.md", (Opts){0}, "reposmftre");
    expect_output("mistake-no-positions.md", (Opts){.input = "formerstep"}, "reposmftre");
    expect_output("forward-pass.md", (Opts){.input = "formerstep", .model = "reverse.safetensors"}, "petsremrof");
    Session s;
    if (!open_lesson(&s, "mistake-no-positions.md", (Opts){0})) return;
    CHECK(interp_find(s.it, "encoder.pos") < 0, "no positions are added");
    const float *m = stage(&s, "encoder.norm", NULL);
    if (m) {
        CHECK(rows_apart(m, 2, 8, 48) == 0, "the two e's (rows 2 and 8) are equal");
        CHECK(rows_apart(m, 6, 9, 48) == 0, "the two r's (rows 6 and 9) are equal");
    }
    session_close(&s);
    // The bundled model with its positions switched off (the window's O).
    Session b;
    if (!open_lesson(&b, "forward-pass.md", (Opts){.input = "stepformer", .model = "reverse.safetensors"})) return;
    const float *bm = stage(&b, "encoder.norm", NULL);
    if (bm) CHECK(rows_apart(bm, 2, 8, 48) > 0.1, "with positions, the e's differ");
    Ablation ab = {.no_positions = true};
    Err e = {{0}};
    bool ok = interp_set_ablation(b.it, &ab, &b.run, &e) && interp_run(b.it, &e);
    CHECK(ok, "ablation: %s", e.msg);
    if (ok) {
        char got[128];
        generated(&b, got, sizeof got);
        CHECK(!strcmp(got, "ferr"), "the bundled model without positions: '%s'", got);
    }
    session_close(&b);
}

// ---- 5. a feed-forward of width 4*4 (two trained classifiers) ----

typedef struct {
    Session s;
    int logits;  // the stage of the output `logits`
} Classifier;

static bool classifier_open(Classifier *c, const char *lesson, const char *model, const char *input) {
    if (!open_lesson(&c->s, lesson, (Opts){.model = model, .input = input})) return false;
    int n;
    const ProgramOutput *o = interp_outputs(c->s.it, &n);
    c->logits = -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(o[i].name, "logits")) c->logits = o[i].stage;
    CHECK(c->logits >= 0, "%s publishes logits", lesson);
    return c->logits >= 0 || (session_close(&c->s), false);
}

// The class (0 no, 1 yes) and the scores for one input.
static int classify(Classifier *c, const char *input, float z[2]) {
    int first;
    Err e = {{0}};
    if (!session_set_input(&c->s, input, &first, &e) || !interp_run(c->s.it, &e)) {
        CHECK(false, "%s: %s", input, e.msg);
        return -1;
    }
    const float *x = interp_output(c->s.it, c->logits);
    z[0] = x[0], z[1] = x[1];
    return x[1] > x[0];
}

static bool balanced(const char *t) {
    char want[16];
    int depth = 0;
    for (; *t; t++)
        if (*t == '(' || *t == '[') want[depth++] = *t == '(' ? ')' : ']';
        else if (depth == 0 || want[--depth] != *t) return false;
    return depth == 0;
}

static void expect_scores(Classifier *c, const char *input, int cls, const char *scores, const char *what) {
    float z[2];
    const int got = classify(c, input, z);
    char text[64];
    snprintf(text, sizeof text, "no %.2f, yes %.2f", z[0], z[1]);
    CHECK(got == cls, "%s on %s: class %d, the narration says %d", what, input, got, cls);
    if (scores) CHECK(!strcmp(text, scores), "%s on %s: '%s', the narration says '%s'", what, input, text, scores);
}

static void test_narrow_feed_forward(void) {
    Classifier narrow, wide;
    if (!classifier_open(&narrow, "mistake-narrow-feed-forward.md", NULL, NULL)) return;
    if (!classifier_open(&wide, "transformers-from-scratch.md", "mistake-ff-192.safetensors", "(([[]))]")) {
        session_close(&narrow.s);
        return;
    }
    // The lesson's own input first (what the window shows), then the other's on it.
    Shape sh;
    char cls[16] = "";
    const float *z = interp_output(narrow.s.it, narrow.logits);
    if (z) {
        const float a = z[1] > z[0];
        vocab_decode(&narrow.s.model.tgt_vocab, &a, 1, cls, sizeof cls);
    }
    CHECK(!strcmp(narrow.s.input_text, "(([[]))]") && !strcmp(cls, "yes"), "the lesson's input, '%s': '%s'",
          narrow.s.input_text, cls);
    int w16 = 0, w192 = 0;
    expect_scores(&narrow, "(([[]))]", 1, "no -2.09, yes -0.98", "width 16");
    expect_scores(&wide, "(([[]))]", 0, "no -0.58, yes -1.29", "width 192");
    if (stage(&narrow.s, "encoder.layers.0.hidden", &sh)) {
        w16 = sh.dim[1];
        CHECK(sh.dim[0] == 8, "8 rows (%d)", sh.dim[0]);
    }
    if (stage(&wide.s, "encoder.layers.0.hidden", &sh)) w192 = sh.dim[1];
    CHECK(w16 == 16 && w192 == 192, "hidden is 16 and 192 wide (%d, %d)", w16, w192);
    expect_scores(&narrow, "[()])([]", 0, NULL, "width 16");
    expect_scores(&wide, "[()])([]", 1, NULL, "width 192");
    // Every string of eight brackets with as many ( as ) and [ as ]: how many each gets wrong, and both.
    int wrong[2] = {0, 0}, both = 0, n = 0;
    for (long code = 0; code < 1L << 16; code++) {
        char t[9];
        int paren = 0, square = 0;
        for (int i = 0; i < 8; i++) {
            t[i] = "()[]"[(code >> (2 * i)) & 3];
            paren += (t[i] == '(') - (t[i] == ')'), square += (t[i] == '[') - (t[i] == ']');
        }
        t[8] = '\0';
        if (paren || square) continue;
        float s2[2];
        const int want = balanced(t);
        const bool w0 = classify(&narrow, t, s2) != want, w1 = classify(&wide, t, s2) != want;
        wrong[0] += w0, wrong[1] += w1, both += w0 && w1;
        n++;
    }
    CHECK(n == 4900 && wrong[0] == 6 && wrong[1] == 18 && both == 4, "%d strings; wrong: %d narrow, %d wide, %d both", n,
          wrong[0], wrong[1], both);
    session_close(&narrow.s);
    session_close(&wide.s);
    // The feed-forward parameters of the two blocks (d_model 48), and the two files' sizes.
    CHECK(2 * (2 * 48 * w16 + w16 + 48) == 3200 && 2 * (2 * 48 * w192 + w192 + 48) == 37344, "3 200 and 37 344");
    const char *files[2] = {"mistake-ff-16.safetensors", "mistake-ff-192.safetensors"};
    const long sizes[2] = {99544, 236184};
    for (int i = 0; i < 2; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/%s", MODELS, files[i]);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL, "open %s", path);
        if (!f) continue;
        fseek(f, 0, SEEK_END);
        CHECK(ftell(f) == sizes[i], "%s is %ld bytes (%ld)", files[i], sizes[i], ftell(f));
        fclose(f);
    }
    // As typed in the notes (16 out, 4 * d_model in), the program stops at the second linear.
    // Fresh weights of train's sizes, since no trained file has those shapes.
    const char *from[] = {"model: ../assets/models/mistake-ff-16.safetensors",
                          "param @ff.2.weight [d_model, 4*4] xavier"};
    const char *to[] = {"model: random\nconfig: d_model=48 nhead=4 num_encoder_layers=2 max_positions=32 num_classes=2\n"
                        "vocab: chars\nseed: 1",
                        "param @ff.2.weight [d_model, 4*d_model] xavier"};
    expect_variant("mistake-narrow-feed-forward.md", from, to, 2, NULL, NULL, "x's last dimension must equal W's second");
}

int main(void) {
    test_index();
    test_pe_base_1000();
    test_no_cross_attention();
    test_reshape_heads();
    test_second_residual();
    test_no_scaling();
    test_no_causal_mask();
    test_no_positions();
    test_narrow_feed_forward();
    return check_finish("test_mistakes");
}
