// test_course.c: the course's lessons say what the viewer will see, with numbers; this runs each
// lesson headless through a Session and checks those numbers, to the precision the narration
// gives them. A lesson whose model or narration changes must change here too.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "course.h"
#include "rows.h"
#include "session.h"
#include "back_mistakes.h"
#include "back_pass.h"
#include "gradcheck.h"
#include "probe.h"
#include "train.h"

// ---- helpers ----

static const double PI = 3.14159265358979323846;

// Opens lesson `name` (a file in lessons/, or a built-in lesson when `builtin`), with optional
// overrides, and runs it to its end.
static bool run_lesson(Session *s, const char *name, bool builtin, const char *input, const char *model,
                       const char *target, bool greedy) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, name);
    char model_path[600];
    if (model) snprintf(model_path, sizeof model_path, "%s/%s", MODELS, model);
    SessionSpec spec = {.lesson_path = builtin ? NULL : path, .builtin_lesson = builtin ? name : NULL,
                        .input = input, .model_path = model ? model_path : NULL, .target = target,
                        .greedy = greedy};
    Err e = {{0}};
    bool ok = session_open(s, &spec, &e) && interp_run(s->it, &e);
    CHECK(ok, "%s: %s", name, e.msg);
    if (!ok) return false;
    CHECK(interp_done(s->it), "%s runs to its end", name);
    return true;
}

// The output of stage `id`, with its shape; NULL (and a failed check) if it is not there.
static const float *stage(const Session *s, const char *id, Shape *shape) {
    int i = interp_find(s->it, id);
    CHECK(i >= 0, "stage %s exists", id);
    if (i < 0) return NULL;
    if (shape) *shape = interp_stage(s->it, i)->shape;
    const float *x = interp_output(s->it, i);
    CHECK(x != NULL, "stage %s has run", id);
    return x;
}

// Root mean square of row r of a [rows x n] matrix.
static double row_rms(const float *x, int r, int n) {
    double s = 0;
    for (int j = 0; j < n; j++) s += (double)x[(size_t)r * n + j] * x[(size_t)r * n + j];
    return sqrt(s / n);
}

static double mean_row_rms(const float *x, int rows, int n) {
    double s = 0;
    for (int r = 0; r < rows; r++) s += row_rms(x, r, n);
    return s / rows;
}

static int argmax_row(const float *x, int n) {
    int b = 0;
    for (int j = 1; j < n; j++) b = x[j] > x[b] ? j : b;
    return b;
}

static double max_abs(const float *x, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

// The text greedy decoding produced.
static void generated(const Session *s, char *buf, size_t n, StopReason *why) {
    int len;
    const float *ids = interp_generated(s->it, &len, why);
    vocab_decode(&s->model.tgt_vocab, ids, len, buf, n);
}

// Greedy decoding of `input` by a model on a program, as `stepformer run` does it.
static void decode_with(const char *lesson, bool builtin, const char *model, const char *input, char *out,
                        size_t n) {
    Session s;
    out[0] = '\0';
    if (!run_lesson(&s, lesson, builtin, input, model, NULL, true)) return;
    StopReason why;
    generated(&s, out, n, &why);
    CHECK(why == STOP_EOS, "%s on %s stops at eos", model, input);
    session_close(&s);
}

// ---- the lessons ----

static void test_self_attention(void) {
    Session s;
    if (!run_lesson(&s, "self-attention.md", false, NULL, NULL, NULL, false)) return;
    Shape sh;
    const float *sc = stage(&s, "encoder.bare.scores", &sh), *w = stage(&s, "encoder.bare.weights", NULL);
    const float *pos = stage(&s, "encoder.pos", NULL), *ctx = stage(&s, "encoder.bare.context", NULL);
    const float *qk = stage(&s, "encoder.layers.0.self_attn.weights", NULL);
    if (!sc || !w || !pos || !ctx || !qk) return session_close(&s);
    const int S = sh.dim[1];
    CHECK(S == 10, "10 characters (%d)", S);
    double dmin = 1e9, dmax = -1e9;
    for (int i = 0; i < S; i++) {
        const double d = sc[i * S + i];
        dmin = d < dmin ? d : dmin, dmax = d > dmax ? d : dmax;
        CHECK(argmax_row(sc + i * S, S) == i, "row %d's largest score is on the diagonal", i);
        CHECK(argmax_row(w + i * S, S) == i, "row %d's largest weight is on the diagonal", i);
    }
    CHECK_STATED(dmin, 59.5, 1, "smallest diagonal score");
    CHECK_STATED(dmax, 73.5, 1, "largest diagonal score");
    CHECK_STATED(w[7 * S + 7], 1.0, 4, "the 0 on itself");
    CHECK_STATED(w[9 * S + 9], 1.0, 4, "the 6 on itself");
    CHECK_STATED(w[3 * S + 3], 0.52, 2, "the first 1 on itself");
    CHECK_STATED(w[3 * S + 4], 0.48, 2, "the first 1 on the second");
    for (int r = 7; r <= 9; r += 2) {
        double d = 0;
        for (int j = 0; j < 48; j++) d = fmax(d, fabs(ctx[r * 48 + j] - pos[r * 48 + j]));
        CHECK(d < 1e-4, "row %d's output is its input (%g)", r, d);
    }
    // Queries and keys: 6 of 40 rows on the diagonal; head 2's year; head 1's day.
    int self = 0;
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < S; i++) self += argmax_row(qk + (h * S + i) * S, S) == i;
    CHECK(self == 6, "%d of 40 rows have their largest weight on the diagonal", self);
    const double year[4] = {0.36, 0.48, 0.55, 0.49};
    for (int r = 6; r <= 9; r++) {
        const float *row = qk + (1 * S + r) * S;
        CHECK(argmax_row(row, S) == 7, "head 2, row %d looks at the 0 of 2026", r);
        CHECK_STATED(row[7], year[r - 6], 2, "head 2, a year digit on the 0");
    }
    CHECK(argmax_row(qk + 0 * S, S) == 2 && argmax_row(qk + 1 * S, S) == 2, "head 1: the day's 2s on the first slash");
    CHECK_STATED(qk[0 * S + 2], 0.52, 2, "head 1, first 2");
    CHECK_STATED(qk[1 * S + 2], 0.48, 2, "head 1, second 2");
    // These are the model's own first-layer weights.
    Session f;
    if (run_lesson(&f, "forward-pass.md", true, "22/11/2026", NULL, "2026-11-22", false)) {
        const float *ref = stage(&f, "encoder.layers.0.self_attn.weights", NULL);
        if (ref) CHECK_CLOSE(qk, ref, 4 * S * S, 1e-6, "the forward pass's layer-0 weights");
        session_close(&f);
    }
    session_close(&s);
}

static void test_scaling(void) {
    Session s;
    if (!run_lesson(&s, "scaling.md", false, NULL, NULL, NULL, false)) return;
    const char *ids[3] = {"encoder.layers.0.self_attn.unscaled.weights", "encoder.layers.0.self_attn.weights",
                          "encoder.layers.0.self_attn.by_sqrt_dmodel.weights"};
    // The table of head 2's largest weight per row.
    const double table[3][10] = {{0.33, 0.32, 0.51, 0.43, 0.54, 0.77, 0.96, 0.99, 0.99, 0.98},
                                 {0.16, 0.16, 0.24, 0.18, 0.21, 0.32, 0.36, 0.48, 0.55, 0.49},
                                 {0.13, 0.13, 0.17, 0.14, 0.15, 0.19, 0.20, 0.25, 0.28, 0.26}};
    const double mean_max[3] = {0.57, 0.28, 0.18};
    const int above[3] = {5, 0, 0};
    const int S = 10;
    for (int c = 0; c < 3; c++) {
        const float *w = stage(&s, ids[c], NULL);
        if (!w) continue;
        double sum = 0, top = 0;
        int n9 = 0, n5 = 0;
        for (int h = 0; h < 4; h++)
            for (int r = 0; r < S; r++) {
                const float *row = w + (h * S + r) * S;
                const double m = row[argmax_row(row, S)];
                sum += m, n9 += m > 0.9, n5 += m > 0.5, top = fmax(top, m);
                if (h == 1) CHECK_STATED(m, table[c][r], 2, ids[c]);
            }
        CHECK_STATED(sum / 40, mean_max[c], 2, "average largest weight");
        CHECK(n9 == above[c], "%s: %d rows above 0.9", ids[c], n9);
        if (c == 0) CHECK(n5 == 24, "24 rows above one half, not divided (%d)", n5);
        if (c == 2) CHECK(top <= 0.31, "no row above 0.31 (%f)", top);
    }
    const float *sc = stage(&s, "encoder.layers.0.self_attn.scores", NULL);
    if (sc) {
        double m = 0, v = 0, lo = 1e9, hi = -1e9;
        for (int i = 0; i < 400; i++) m += sc[i] / 400.0, lo = fmin(lo, sc[i]), hi = fmax(hi, sc[i]);
        for (int i = 0; i < 400; i++) v += (sc[i] - m) * (sc[i] - m) / 400.0;
        CHECK_STATED(sqrt(v), 3.40, 2, "the scores' standard deviation");
        CHECK_STATED(lo, -9.5, 1, "the smallest score");
        CHECK_STATED(hi, 14.2, 1, "the largest score");
    }
    const float *scaled = stage(&s, "encoder.layers.0.self_attn.scaled", NULL);
    const double spread[4] = {1.10, 1.22, 0.82, 0.70};
    for (int h = 0; scaled && h < 4; h++) {
        double m = 0, v = 0;
        for (int i = 0; i < 100; i++) m += scaled[h * 100 + i] / 100.0;
        for (int i = 0; i < 100; i++) v += (scaled[h * 100 + i] - m) * (scaled[h * 100 + i] - m) / 100.0;
        CHECK_STATED(sqrt(v), spread[h], 2, "a head's spread after / sqrt(d_k)");
    }
    CHECK_STATED(exp(14.0) / exp(4.0), 22000, -3, "exp(14) / exp(4)");
    CHECK_STATED(sqrt(12.0), 3.46, 2, "sqrt(12)");
    CHECK_STATED(sqrt(48.0), 6.93, 2, "sqrt(48)");
    session_close(&s);
}

static void test_multi_head(void) {
    Session s;
    if (!run_lesson(&s, "multi-head.md", false, NULL, NULL, NULL, false)) return;
    const float *e0 = stage(&s, "encoder.layers.0.self_attn.weights", NULL);
    const float *c1 = stage(&s, "decoder.layers.1.cross_attn.weights", NULL);
    const float *c0 = stage(&s, "decoder.layers.0.cross_attn.weights", NULL);
    const float *next = stage(&s, "generator.next", NULL), *logits = stage(&s, "generator.logits", NULL);
    if (!e0 || !c1 || !c0 || !next || !logits) return session_close(&s);
    const int S = 16, T = 11;
#define E0(h, q, k) e0[((h) * S + (q)) * S + (k)]
    const double to0[4] = {0.50, 0.53, 0.55, 0.45}, to_space2[3] = {0.58, 0.63, 0.83};
    for (int r = 12; r < 16; r++) CHECK_STATED(E0(1, r, 13), to0[r - 12], 2, "head 2: year digit on the 0");
    for (int r = 0; r < 3; r++) CHECK_STATED(E0(1, r, 2), to_space2[r], 2, "head 2: day on the space");
    double lo = 1, hi = 0;
    for (int r = 12; r < 16; r++) lo = fmin(lo, E0(3, r, 2)), hi = fmax(hi, E0(3, r, 2));
    CHECK_STATED(lo, 0.42, 2, "head 4: year on the space, least");
    CHECK_STATED(hi, 0.56, 2, "head 4: year on the space, most");
    CHECK_STATED(E0(2, 5, 5), 0.78, 2, "head 3: v on itself");
    CHECK(max_abs(e0, (size_t)S * S) < 0.32, "head 1 has nothing at 0.32 or above");
#undef E0
#define C(x, h, q, k) x[((h) * T + (q)) * S + (k)]
    // Rows 1-3 write 0, 2, 6 and look at positions 13, 14, 15; rows 8 and 9 write the day.
    const int col[5] = {13, 14, 15, 0, 1}, row[5] = {1, 2, 3, 8, 9};
    const double val[5] = {0.69, 0.94, 0.95, 0.70, 0.64};
    for (int i = 0; i < 5; i++) {
        CHECK(argmax_row(&C(c1, 1, row[i], 0), S) == col[i], "pointer head, row %d -> %d", row[i], col[i]);
        CHECK_STATED(C(c1, 1, row[i], col[i]), val[i], 2, "pointer head weight");
    }
    CHECK_STATED(C(c0, 3, 5, 5), 0.97, 2, "month head, first 1");
    CHECK_STATED(C(c0, 3, 6, 5), 0.90, 2, "month head, second 1");
#undef C
    char buf[64];
    vocab_decode(&s.model.tgt_vocab, next, T - 1, buf, sizeof buf);
    CHECK(!strcmp(buf, "2026-11-22") && (int)next[T - 1] == s.model.cfg.eos_id.id, "next: %s", buf);
    Session f;
    if (run_lesson(&f, "forward-pass.md", true, "22 November 2026", NULL, "2026-11-22", false)) {
        const float *ref = stage(&f, "generator.logits", NULL);
        if (ref) CHECK_CLOSE(logits, ref, T * 51, 1e-6, "the forward pass's logits");
        session_close(&f);
    }
    session_close(&s);
}

static void test_positional_encoding(void) {
    Session s;
    if (!run_lesson(&s, "positional-encoding.md", false, NULL, NULL, NULL, false)) return;
    const float *pe8 = stage(&s, "table.pe8", NULL), *sim = stage(&s, "table.similarity", NULL);
    const double row1[8] = {0.8415, 0.5403, 0.0998, 0.9950, 0.0100, 0.99995, 0.0010, 0.9999995};
    const double row2[8] = {0.9093, -0.4161, 0.1987, 0.9801, 0.0200, 0.9998, 0.0020, 1.0000};
    for (int j = 0; pe8 && j < 8; j++) {
        CHECK(fabs(pe8[8 + j] - row1[j]) < 1e-4, "PE(1, %d) = %f, not %f", j, pe8[8 + j], row1[j]);
        CHECK_STATED(pe8[16 + j], row2[j], 4, "PE(2, j)");
        CHECK(pe8[j] == (j % 2 ? 1.0f : 0.0f), "row 0 is 0, 1, 0, 1, ...");
    }
    // The notes' slip: sin(0.01) where sin(0.1) belongs.
    CHECK(pe8 && fabs(pe8[10] - 0.0100) > 0.08, "PE(1, 2) is not sin(0.01)");
    if (sim) {
        double lo = 1e9;
        int at = -1;
        for (int p = 0; p < 32; p++) CHECK_STATED(sim[p * 32 + p], 24.0, 2, "the diagonal");
        for (int p = 0; p + 1 < 32; p++) CHECK_STATED(sim[p * 32 + p + 1], 23.12, 2, "neighbours");
        CHECK_STATED(sim[5 * 32 + 8], 18.93, 2, "distance 3");
        CHECK(fabs(sim[5 * 32 + 8] - sim[20 * 32 + 23]) < 1e-4, "(5, 8) equals (20, 23)");
        for (int q = 0; q < 32; q++)
            if (sim[q] < lo) lo = sim[q], at = q;
        CHECK_STATED(lo, 11.92, 2, "the lowest similarity");
        CHECK(at == 22, "at distance 22 (%d)", at);
    }
    // Wavelengths of d_model = 48: 6.3 ... 42 807, ratio 1.47; five pairs turn within 32.
    int turning = 0;
    for (int i = 0; i < 24; i++) turning += 2 * PI * pow(10000.0, 2.0 * i / 48) < 32;
    CHECK(turning == 5, "%d pairs turn within 32 positions", turning);
    const double wl[5] = {6.3, 9.2, 13.5, 19.9, 29.2};
    for (int i = 0; i < 5; i++) CHECK_STATED(2 * PI * pow(10000.0, 2.0 * i / 48), wl[i], 1, "a wavelength");
    CHECK_STATED(2 * PI * pow(10000.0, 46.0 / 48), 42807, 0, "the longest wavelength");
    CHECK_STATED(pow(10000.0, 2.0 / 48), 1.47, 2, "the ratio of wavelengths");
    // Equal letters stay equal without positions: e at 2 and 8, r at 6 and 9.
    const float *mem = stage(&s, "encoder.norm", NULL);
    if (mem) {
        CHECK(!memcmp(mem + 2 * 48, mem + 8 * 48, 48 * sizeof(float)), "the two e rows are equal");
        CHECK(!memcmp(mem + 6 * 48, mem + 9 * 48, 48 * sizeof(float)), "the two r rows are equal");
    }
    char out[64];
    StopReason why;
    generated(&s, out, sizeof out, &why);
    CHECK(!strcmp(out, "restfmpore") && why == STOP_EOS, "without positions: %s", out);
    session_close(&s);
    decode_with("forward-pass.md", true, "reverse.safetensors", "stepformer", out, sizeof out);
    CHECK(!strcmp(out, "remrofpets"), "with positions: %s", out);
    const char *anagrams[2] = {"formerstep", "remrofpets"}, *reversed[2] = {"petsremrof", "stepformer"};
    for (int i = 0; i < 2; i++) {
        decode_with("positional-encoding.md", false, "reverse-no-pe.safetensors", anagrams[i], out, sizeof out);
        CHECK(!strcmp(out, "restfmpore"), "without positions, %s: %s", anagrams[i], out);
        decode_with("forward-pass.md", true, "reverse.safetensors", anagrams[i], out, sizeof out);
        CHECK(!strcmp(out, reversed[i]), "with positions, %s: %s", anagrams[i], out);
    }
    int in_place = 0;
    for (int i = 0; i < 10; i++) in_place += "restfmpore"[i] == "remrofpets"[i];
    CHECK(in_place == 3 && "restfmpore"[6] == 'p', "3 letters in place (%d)", in_place);
}

static void test_encoder_layer(void) {
    Session s;
    if (!run_lesson(&s, "encoder-layer.md", false, NULL, NULL, NULL, false)) return;
    const int S = 16, C = 48;
    const float *pos = stage(&s, "encoder.pos", NULL), *att = stage(&s, "encoder.layers.0.self_attn.out_proj", NULL);
    const float *add1 = stage(&s, "encoder.layers.0.add1", NULL);
    if (!pos || !att || !add1) return session_close(&s);
    CHECK_STATED(mean_row_rms(pos, S, C), 1.18, 2, "the input's row RMS");
    CHECK_STATED(mean_row_rms(att, S, C), 0.56, 2, "attention's row RMS");
    double mlo = 1e9, mhi = -1e9, slo = 1e9, shi = -1e9;
    for (int r = 0; r < S; r++) {
        double m = 0, v = 0;
        for (int j = 0; j < C; j++) m += add1[r * C + j] / (double)C;
        for (int j = 0; j < C; j++) v += (add1[r * C + j] - m) * (add1[r * C + j] - m) / C;
        mlo = fmin(mlo, m), mhi = fmax(mhi, m), slo = fmin(slo, sqrt(v)), shi = fmax(shi, sqrt(v));
    }
    CHECK_STATED(mlo, 0.17, 2, "add1's smallest row mean");
    CHECK_STATED(mhi, 0.70, 2, "add1's largest row mean");
    CHECK_STATED(slo, 0.90, 2, "add1's smallest row std");
    CHECK_STATED(shi, 1.54, 2, "add1's largest row std");
    const double diff[2] = {0.032, 0.035};
    for (int l = 0; l < 2; l++) {
        char id[96], ida[96], g[96];
        snprintf(id, sizeof id, "encoder.layers.%d.norm1", l);
        snprintf(ida, sizeof ida, "encoder.layers.%d.norm1_annotated", l);
        const float *n = stage(&s, id, NULL), *na = stage(&s, ida, NULL);
        snprintf(g, sizeof g, "transformer.encoder.layers.%d.norm1.bias", l);
        const StEntry *be = model_weight(&s.model, g);
        const float *bias = be ? be->data : NULL;
        CHECK(bias != NULL, "the bias %s", g);
        if (!n || !na || !bias) continue;
        double d = 0, rlo = 9, rhi = 0;
        for (int i = 0; i < S * C; i++) {
            d = fmax(d, fabs(n[i] - na[i]));
            const double zt = n[i] - bias[i % C], za = na[i] - bias[i % C];
            if (fabs(zt) > 0.1) rlo = fmin(rlo, za / zt), rhi = fmax(rhi, za / zt);
        }
        CHECK_STATED(d, diff[l], 3, "torch vs annotated");
        CHECK_STATED(rlo, 0.9895, 4, "the annotated factor, least");
        CHECK_STATED(rhi, 0.9895, 4, "the annotated factor, most");
        for (int k = 1; k <= 2; k++) {
            snprintf(id, sizeof id, "encoder.layers.%d.norm%d", l, k);
            const float *x = stage(&s, id, NULL);
            if (!x) continue;
            const double rms = mean_row_rms(x, S, C);
            CHECK(rms >= 0.995 && rms < 1.025, "%s: average row RMS %f within 1.00-1.02", id, rms);
            if (l == 0 && k == 2) CHECK_STATED(rms, 1.01, 2, "norm2's row RMS in layer 0");
            if (k == 2)
                for (int i = 0; i < S * C; i++)
                    if (x[i] < -3.25 || x[i] > 3.4) {
                        CHECK(false, "%s[%d] = %f outside -3.2 .. 3.4", id, i, x[i]);
                        break;
                    }
        }
    }
    CHECK_STATED(sqrt(47.0 / 48.0), 0.9895, 4, "sqrt(47/48)");
    const float *memory = stage(&s, "encoder.norm", NULL);
    Session f;
    if (memory && run_lesson(&f, "forward-pass.md", true, "22 November 2026", NULL, "2026-11-22", false)) {
        const float *ref = stage(&f, "encoder.norm", NULL);
        if (ref) CHECK_CLOSE(memory, ref, S * C, 1e-6, "the forward pass's memory");
        session_close(&f);
    }
    session_close(&s);
    // Pre-norm, the same input: the stream grows.
    Session p;
    if (!run_lesson(&p, "pre-norm.md", true, "22 November 2026", NULL, NULL, false)) return;
    const char *at[3] = {"encoder.pos", "encoder.layers.0.add2", "encoder.layers.1.add2"};
    const double rms[3] = {1.22, 1.50, 1.92};
    for (int i = 0; i < 3; i++) {
        const float *x = stage(&p, at[i], NULL);
        if (x) CHECK_STATED(mean_row_rms(x, S, C), rms[i], 2, at[i]);
    }
    const float *x = stage(&p, "encoder.layers.1.add2", NULL), *d = stage(&p, "step.10.decoder.layers.1.add3", NULL);
    if (x) CHECK_STATED(max_abs(x, (size_t)S * C), 7.74, 2, "the pre-norm encoder's largest entry");
    if (d) CHECK_STATED(max_abs(d, 11 * (size_t)C), 43.5, 1, "the pre-norm decoder's largest entry");
    session_close(&p);
}

static void test_masks(void) {
    Session s;
    if (!run_lesson(&s, "masks.md", false, NULL, NULL, NULL, false)) return;
    const int S = 13, T = 11;
    const float *mem = stage(&s, "encoder.norm", NULL), *logits = stage(&s, "generator.logits", NULL);
    const float *w = stage(&s, "encoder.layers.0.self_attn.weights", NULL);
    const float *u = stage(&s, "encoder.layers.0.self_attn.unmasked", NULL);
    const float *dm = stage(&s, "decoder.layers.0.self_attn.masked", NULL);
    const float *dw = stage(&s, "decoder.layers.0.self_attn.weights", NULL);
    const float *du = stage(&s, "decoder.layers.0.self_attn.unmasked", NULL);
    const float *cw = stage(&s, "decoder.layers.1.cross_attn.weights", NULL), *next = stage(&s, "generator.next", NULL);
    if (!mem || !logits || !w || !u || !dm || !dw || !du || !cw || !next) return session_close(&s);
    for (int h = 0; h < 4; h++)
        for (int q = 0; q < S; q++)
            for (int k = 10; k < S; k++) CHECK(w[(h * S + q) * S + k] == 0.0f, "pad weights are exactly 0");
    const double leak[4] = {0.43, 0.55, 0.66, 0.74};
    for (int r = 6; r < 10; r++) {
        const float *row = u + (1 * S + r) * S;
        CHECK_STATED(row[10] + row[11] + row[12], leak[r - 6], 2, "head 2, a year digit's weight on the pads");
    }
    for (int h = 0; h < 4; h++) {
        int hidden = 0;
        for (int q = 0; q < T; q++)
            for (int k = 0; k < T; k++) {
                const bool above = k > q, inf = isinf(dm[(h * T + q) * T + k]) && dm[(h * T + q) * T + k] < 0;
                hidden += inf;
                CHECK(above == inf, "-inf exactly above the diagonal (head %d, %d, %d)", h, q, k);
                if (above) CHECK(dw[(h * T + q) * T + k] == 0.0f, "no weight on the future");
            }
        CHECK(hidden == 55, "55 hidden cells in head %d (%d)", h + 1, hidden);
        CHECK(dw[h * T * T] == 1.0f, "row 0 is all on <bos>");
    }
    double future[4];
    for (int h = 0; h < 4; h++) {
        future[h] = 0;
        for (int k = 1; k < T; k++) future[h] += du[h * T * T + k];
    }
    CHECK_STATED(future[0], 0.64, 2, "<bos> would look ahead, head 1");
    CHECK_STATED(future[3], 0.94, 2, "<bos> would look ahead, head 4");
    CHECK(future[1] < future[3] && future[2] < future[3] && future[0] < future[1] && future[0] < future[2],
          "heads 1 and 4 are the least and the most");
    for (int h = 0; h < 4; h++)
        for (int q = 0; q < T; q++)
            for (int k = 10; k < S; k++) CHECK(cw[(h * T + q) * S + k] == 0.0f, "cross-attention: pads at 0");
    char buf[64];
    vocab_decode(&s.model.tgt_vocab, next, T - 1, buf, sizeof buf);
    CHECK(!strcmp(buf, "2026-11-22") && (int)next[T - 1] == s.model.cfg.eos_id.id, "the answer: %s", buf);
    // The same pass without the pads: the same memory rows and logits.
    Session f;
    if (run_lesson(&f, "forward-pass.md", true, "22/11/2026", NULL, "2026-11-22", false)) {
        const float *ref = stage(&f, "encoder.norm", NULL), *rl = stage(&f, "generator.logits", NULL);
        if (ref) CHECK_CLOSE(mem, ref, 10 * 48, 1e-6, "memory without the pads");
        if (rl) CHECK_CLOSE(logits, rl, T * 51, 1e-6, "logits without the pads");
        session_close(&f);
    }
    // Row t of the teacher-forced pass is greedy round t.
    Session g;
    if (run_lesson(&g, "masks.md", false, NULL, NULL, NULL, true)) {
        for (int t = 0; t < T; t++) {
            char id[64];
            snprintf(id, sizeof id, "step.%d.generator.logits", t);
            Shape sh;
            const float *gl = stage(&g, id, &sh);
            if (gl) CHECK_CLOSE(logits + t * 51, gl + (size_t)(sh.dim[0] - 1) * 51, 51, 1e-4, id);
        }
        session_close(&g);
    }
    session_close(&s);
}

static void test_cross_attention(void) {
    Session s;
    if (!run_lesson(&s, "cross-attention.md", false, NULL, NULL, NULL, false)) return;
    const int S = 12, T = 11;
    Shape q, k, v;
    stage(&s, "decoder.layers.0.cross_attn.q", &q);
    stage(&s, "decoder.layers.0.cross_attn.k", &k);
    stage(&s, "decoder.layers.0.cross_attn.v", &v);
    CHECK(q.dim[0] == T && k.dim[0] == S && v.dim[0] == S && q.dim[1] == 48, "q [11, 48], k and v [12, 48]");
    Shape ws;
    const float *c1 = stage(&s, "decoder.layers.1.cross_attn.weights", &ws);
    const float *c0 = stage(&s, "decoder.layers.0.cross_attn.weights", NULL), *next = stage(&s, "generator.next", NULL);
    if (!c1 || !c0 || !next) return session_close(&s);
    CHECK(ws.dim[0] == 4 && ws.dim[1] == T && ws.dim[2] == S, "the maps are 11 x 12");
    const int row[5] = {0, 1, 2, 3, 8}, col[5] = {8, 9, 10, 11, 4};
    const double val[5] = {0.81, 0.76, 0.98, 0.95, 0.72};
    for (int i = 0; i < 5; i++) {
        const float *r = c1 + (1 * T + row[i]) * S;
        CHECK(argmax_row(r, S) == col[i], "pointer head: row %d -> %d", row[i], col[i]);
        CHECK_STATED(r[col[i]], val[i], 2, "pointer head weight");
    }
    CHECK_STATED(c0[(3 * T + 5) * S + 2], 0.99, 2, "month head on v, first 1");
    CHECK_STATED(c0[(3 * T + 6) * S + 2], 0.96, 2, "month head on v, second 1");
    char buf[64];
    vocab_decode(&s.model.tgt_vocab, next, T - 1, buf, sizeof buf);
    CHECK(!strcmp(buf, "2026-11-22") && (int)next[T - 1] == s.model.cfg.eos_id.id, "the answer: %s", buf);
    session_close(&s);
    // With the day first (the multi-head lesson's source), the same head finds 13-15 and 0, 1.
    Session m;
    if (!run_lesson(&m, "multi-head.md", false, NULL, NULL, NULL, false)) return;
    const float *w = stage(&m, "decoder.layers.1.cross_attn.weights", NULL);
    const int mrow[5] = {1, 2, 3, 8, 9}, mcol[5] = {13, 14, 15, 0, 1};
    for (int i = 0; w && i < 5; i++)
        CHECK(argmax_row(w + (1 * T + mrow[i]) * 16, 16) == mcol[i], "day first: row %d -> %d", mrow[i], mcol[i]);
    session_close(&m);
}

static void test_greedy_decoding(void) {
    Session s;
    if (!run_lesson(&s, "greedy-decoding.md", false, NULL, NULL, NULL, false)) return;
    char out[64];
    StopReason why;
    generated(&s, out, sizeof out, &why);
    CHECK(!strcmp(out, "2026-07-22") && why == STOP_EOS, "the answer: %s", out);
    const char *picks[11] = {"2", "0", "2", "6", "-", "0", "7", "-", "2", "2", "<eos>"};
    const double prob[11] = {0.90, 0.90, 0.85, 0.89, 0.90, 0.90, 0.36, 0.90, 0.91, 0.92, 0.90};
    for (int k = 0; k < 11; k++) {
        char id[64];
        Shape sh;
        snprintf(id, sizeof id, "step.%d.generator.probs", k);
        const float *p = stage(&s, id, &sh);
        if (!p) continue;
        CHECK(sh.dim[0] == k + 1, "%s has %d rows", id, k + 1);
        const float *last = p + (size_t)k * 51;
        const int best = argmax_row(last, 51);
        CHECK(!strcmp(vocab_token(&s.model.tgt_vocab, best), picks[k]), "%s picks %s, not %s", id, picks[k],
              vocab_token(&s.model.tgt_vocab, best));
        CHECK_STATED(last[best], prob[k], 2, id);
        double second = 0;
        for (int j = 0; j < 51; j++)
            if (j != best) second = fmax(second, last[j]);
        if (k != 6) CHECK(second <= 0.03, "%s: no other character above 0.03 (%f)", id, second);
        if (k == 6) {
            const char *who[3] = {"7", "6", "1"};
            const double pr[3] = {0.355, 0.275, 0.033};
            for (int i = 0; i < 3; i++)
                CHECK_STATED(last[vocab_find(&s.model.tgt_vocab, who[i], 1)], pr[i], 3, "step 6's candidates");
        }
    }
    const float *c = stage(&s, "step.6.decoder.layers.1.cross_attn.weights", NULL);
    const double onj[4] = {0.57, 1.00, 0.91, 0.96};
    for (int h = 0; c && h < 4; h++) CHECK_STATED(c[(h * 7 + 6) * 9 + 3], onj[h], 2, "step 6's last row on the J");
    Shape a, b;
    stage(&s, "step.0.decoder.layers.0.self_attn.weights", &a);
    stage(&s, "step.10.decoder.layers.0.self_attn.weights", &b);
    CHECK(a.dim[0] == 4 && a.dim[1] == 1 && a.dim[2] == 1 && b.dim[1] == 11 && b.dim[2] == 11, "the maps grow");
    int enc = 0;
    for (int i = 0; i < interp_n_stages(s.it); i++) enc += !strcmp(interp_stage(s.it, i)->id, "encoder.embed");
    CHECK(enc == 1, "the encoder runs once (%d)", enc);
    session_close(&s);
    Session j;
    if (run_lesson(&j, "greedy-decoding.md", false, "22 Jun 2026", NULL, NULL, false)) {
        const float *p = stage(&j, "step.6.generator.probs", NULL);
        if (p) {
            const int best = argmax_row(p + 6 * 51, 51);
            CHECK(!strcmp(vocab_token(&j.model.tgt_vocab, best), "6"), "June: 6");
            CHECK_STATED(p[6 * 51 + best], 0.90, 2, "June's 6");
        }
        session_close(&j);
    }
    // The ceiling label smoothing sets: 0.9 + 0.1 / 51.
    CHECK_STATED(0.9 + 0.1 / 51, 0.902, 3, "the smoothed target");
}

// Greedy decoding of the Training view's example with a trainer's current weights, as the view
// does it; the last round's cross-attention of the last decoder layer into w [4, 11, 16].
// The cached decoder: the same answer as the plain one, and the work it states.
static void test_cached_decoding(void) {
    Session s, plain;
    if (!run_lesson(&s, "cached-decoding.md", false, NULL, NULL, NULL, false)) return;
    char out[64], out2[64];
    StopReason why;
    generated(&s, out, sizeof out, &why);
    CHECK(!strcmp(out, "2026-11-22") && why == STOP_EOS, "cached: %s", out);
    if (run_lesson(&plain, "greedy-decoding.md", false, "22 November 2026", NULL, NULL, false)) {
        generated(&plain, out2, sizeof out2, &why);
        CHECK(!strcmp(out, out2), "plain %s, cached %s", out2, out);
        session_close(&plain);
    }
    double all = 0, done = 0;
    int kinds[ROWS_KIND_COUNT] = {0}, round = 0, first10 = interp_find(s.it, "step.10.decoder.embed");
    for (int i = 0; i < interp_n_stages(s.it); i++) {
        const Stage *st = interp_stage(s.it, i);
        if (strncmp(st->id, "step.", 5)) continue;
        all += rows_multiply_adds(st, ROWS_WHOLE);
        done += rows_multiply_adds(st, interp_stage_rows(s.it, i));
        const RowsKind k = interp_stage_rows(s.it, i);
        if (first10 >= 0 && i >= first10) kinds[rows_ran_whole(st, k) ? ROWS_WHOLE : k]++, round++;
    }
    // The same counts in closed form, from the model's sizes: per layer, round of T positions
    // (S source tokens), the plain decoder does 4Td² + 2T²d (self-attention), 2Td² + 2Sd² + 2TSd
    // (cross), 2Tdf (feed-forward), plus TdV (generator); the cached one, after round 0, one row
    // of each linear but the memory's k and v (copied), Td for the scores' new row, Td for the
    // new row of weights·V, and Sd twice in cross-attention.
    const ModelConfig *c = &s.model.cfg;
    const double d = c->d_model, f = c->dim_feedforward, V = c->tgt_vocab_size, L = c->num_decoder_layers;
    int S = 0;
    interp_input_ids(s.it, program_input(&s.lesson.program, "src"), &S);
    double plain_ref = 0, cached_ref = 0;
    for (int T = 1; T <= 11; T++) {
        const double layer = 4 * T * d * d + 2.0 * T * T * d + 2 * T * d * d + 2 * S * d * d + 2.0 * T * S * d + 2 * T * d * f;
        const double layer1 = 4 * d * d + 2.0 * T * d + 2 * d * d + 2.0 * S * d + 2 * d * f;
        plain_ref += L * layer + T * d * V;
        cached_ref += T == 1 ? L * layer + d * V : L * layer1 + d * V;
    }
    CHECK(fabs(all - plain_ref) <= 1e-9 * plain_ref && fabs(done - cached_ref) <= 1e-9 * cached_ref,
          "multiply-adds %.0f / %.0f, closed form %.0f / %.0f", all, done, plain_ref, cached_ref);
    CHECK_STATED(all * 1e-6, 5.53, 2, "plain multiply-adds (millions)");
    CHECK_STATED(done * 1e-6, 0.80, 2, "cached multiply-adds (millions)");
    CHECK_STATED(all / done, 7.0, 1, "times fewer");
    const int alone = kinds[ROWS_NEW] + kinds[ROWS_NEW_SQUARE] + kinds[ROWS_NEW_HIDDEN] + kinds[ROWS_NEW0];
    CHECK(round == 76 && kinds[ROWS_GROWN] == 44 && alone == 24 && kinds[ROWS_SQUARE] + kinds[ROWS_SQUARE0] == 0 &&
              kinds[ROWS_SAME] == 8 && kinds[ROWS_WHOLE] == 0,
          "step.10: %d stages, %d one row, %d the new row alone, %d row and column, %d copied, %d whole", round,
          kinds[ROWS_GROWN], alone, kinds[ROWS_SQUARE] + kinds[ROWS_SQUARE0], kinds[ROWS_SAME], kinds[ROWS_WHOLE]);
    session_close(&s);
}

static void decode_example(Trainer *t, char *out, size_t n, float *w) {
    const Model *m = trainer_model(t);
    float src[64];
    int S, len;
    Err e = {{0}};
    out[0] = '\0';
    CHECK(vocab_encode(&m->src_vocab, "22 November 2026", "source", src, 64, &S, &e), "%s", e.msg);
    RunSpec spec = {src, S, NULL, 0, 11, 1};
    Interp *it = interp_new(trainer_program(t), m, &spec, &e);
    CHECK(it && interp_run(it, &e), "the example runs: %s", e.msg);
    if (it) {
        StopReason why;
        const float *ids = interp_generated(it, &len, &why);
        vocab_decode(&m->tgt_vocab, ids, len, out, n);
        const int k = interp_find(it, "step.10.decoder.layers.1.cross_attn.weights");
        if (k >= 0 && interp_output(it, k)) memcpy(w, interp_output(it, k), sizeof(float) * 4 * 11 * 16);
        else memset(w, 0, sizeof(float) * 4 * 11 * 16);
    }
    interp_free(it);
}

// The Training view's run, replayed without a window: train_job_start's configuration (the
// defaults for dates, 200 held-out examples), checked at the steps the lesson names. Under the
// sanitizers (several times slower) it stops after step 161: the same code, fewer steps.
#if defined(__SANITIZE_ADDRESS__)
enum { TRAIN_STEPS = 161 };
#else
enum { TRAIN_STEPS = 501 };
#endif
static void test_training(void) {
    Session s;
    if (!run_lesson(&s, "training.md", false, NULL, NULL, NULL, false)) return;
    char out[64];
    StopReason why;
    generated(&s, out, sizeof out, &why);
    CHECK(!strcmp(out, "2026-11-22"), "the bundled model: %s", out);
    const float *c = stage(&s, "step.10.decoder.layers.1.cross_attn.weights", NULL);
    const int row[3] = {1, 2, 3}, col[3] = {13, 14, 15};
    const double val[3] = {0.69, 0.94, 0.95};
    for (int i = 0; c && i < 3; i++) CHECK_STATED(c[(1 * 11 + row[i]) * 16 + col[i]], val[i], 2, "the trained pointer head");
    session_close(&s);
    // The bundled reverse model: an anti-diagonal in every head of the last decoder layer.
    Session r;
    if (run_lesson(&r, "forward-pass.md", true, "attention", "reverse.safetensors", NULL, false)) {
        const float *w = stage(&r, "step.9.decoder.layers.1.cross_attn.weights", NULL);
        for (int h = 0; w && h < 4; h++)
            for (int q = 0; q < 9; q++)
                CHECK(argmax_row(w + (h * 10 + q) * 9, 9) == 8 - q, "reverse: head %d, row %d on column %d", h + 1, q,
                      8 - q);
        generated(&r, out, sizeof out, &why);
        CHECK(!strcmp(out, "noitnetta"), "reverse: %s", out);
        session_close(&r);
    }
    // The smallest loss label smoothing 0.1 allows over 51 characters, and ln 51.
    const double eps = 0.1, V = 51, top = 1 - eps + eps / V, other = eps / V;
    CHECK_STATED(-top * log(top) - (V - 1) * other * log(other), 0.70, 2, "the loss floor");
    CHECK_STATED(log(51.0), 3.93, 2, "ln 51");
    CHECK_STATED(top, 0.902, 3, "the smoothed target");

    TrainConfig c0 = train_defaults(TASK_DATES);
    c0.steps = 1 << 30, c0.held_out = 200;  // the view trains until stopped
    Err e = {{0}};
    Trainer *t = trainer_new(&c0, &e);
    CHECK(t != NULL, "%s", e.msg);
    if (!t) return;
    static float w[4 * 11 * 16];
    for (int step = 1; step <= TRAIN_STEPS; step++) {
        StepStats st = {0};
        if (!trainer_step(t, &st, &e)) {
            CHECK(false, "step %d: %s", step, e.msg);
            break;
        }
        if (step == 1) CHECK_STATED(st.loss, 4.1, 1, "the first loss");
        if (step == 500) CHECK(st.loss > 0.70 && st.loss < 0.75, "the loss just above 0.70 at step 500 (%f)", st.loss);
        if (step == 250 || step == 500) {
            double acc = 0;
            CHECK(trainer_eval(t, 200, &acc, &e), "%s", e.msg);
            CHECK_STATED(100 * acc, step == 250 ? 51.0 : 90.5, 1, "held-out exact match");
        }
        if (step == 161 || step == 301 || step == 501) {
            decode_example(t, out, sizeof out, w);
            CHECK(!strcmp(out, step == 161 ? "2026-12-12" : "2026-11-22"), "step %d: %s", step, out);
        }
        if (step == 161) CHECK(max_abs(w, 4 * 11 * 16) <= 0.47, "no cell above 0.47 at step 161 (%f)", max_abs(w, 4 * 11 * 16));
        if (step == 501) {
#define W(h, q, k) w[((h) * 11 + (q)) * 16 + (k)]
            CHECK_STATED(W(0, 8, 0), 0.69, 2, "head 1, the day");
            CHECK_STATED(W(2, 3, 15), 0.84, 2, "head 3, the 6");
            CHECK_STATED(W(3, 5, 3), 0.78, 2, "head 4, the first 1 on N");
            CHECK_STATED(W(3, 6, 3), 0.80, 2, "head 4, the second 1 on N");
#undef W
        }
    }
    trainer_free(t);
}

// lessons/README.md lists the course in its order: these twenty first (other lessons may be
// listed after them, or not at all).
// The sum of the squares of n numbers, rooted.
static double norm2(const float *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)x[i] * x[i];
    return sqrt(s);
}

static void test_backprop(void) {
    Session s;
    if (!run_lesson(&s, "backprop.md", false, NULL, NULL, NULL, false)) return;
    float labels[32];
    int n = 0;
    BackPass bp;
    Err e = {{0}};
    CHECK(back_pass_next_tokens(s.it, &s.model, labels, 32, &n) && n == 11, "11 labels, the next characters");
    if (!back_pass_build(&bp, s.it, &s.model, labels, n, 0, &e)) {
        CHECK(false, "%s", e.msg);
        session_close(&s);
        return;
    }
    CHECK_STATED(bp.li.loss, 0.103098, 6, "the loss");
    const float *logits = stage(&s, "generator.logits", NULL);
    double lo = 1, hi = 0, worst_sum = 0, min = 0;
    int min_row = -1;
    for (int r = 0; logits && r < 11; r++) {
        double z = 0, top = logits[r * 51];
        for (int v = 0; v < 51; v++) top = fmax(top, logits[r * 51 + v]);
        for (int v = 0; v < 51; v++) z += exp(logits[r * 51 + v] - top);
        const double p = exp(logits[r * 51 + (int)labels[r]] - top) / z;
        lo = fmin(lo, p), hi = fmax(hi, p);
        double sum = 0;
        for (int v = 0; v < 51; v++) {
            sum += bp.dscored[r * 51 + v];
            if (bp.dscored[r * 51 + v] < min) min = bp.dscored[r * 51 + v], min_row = r;
        }
        worst_sum = fmax(worst_sum, fabs(sum));
    }
    CHECK_STATED(lo, 0.893, 3, "the least sure row's p");
    CHECK_STATED(hi, 0.910, 3, "the surest row's p");
    CHECK(worst_sum < 1e-9, "every row of dL/dlogits sums to 0: %.3g", worst_sum);
    CHECK_STATED(min, -0.0097, 4, "the most negative dL/dlogits");
    CHECK(min_row == 1, "in row 1 (%d)", min_row);
    // LayerNorm's backward: rows sum to 0 and are orthogonal to the normalised row.
    const int add1 = interp_find(s.it, "encoder.layers.0.add1");
    const float *g = grads_stage(bp.g, add1), *x = interp_output(s.it, add1);
    double worst = 0, big = 0;
    for (int r = 0; g && r < 16; r++) {
        double mean = 0, var = 0, sum = 0, dot = 0;
        for (int c = 0; c < 48; c++) mean += x[r * 48 + c] / 48.0;
        for (int c = 0; c < 48; c++) var += (x[r * 48 + c] - mean) * (x[r * 48 + c] - mean) / 48.0;
        for (int c = 0; c < 48; c++) {
            sum += g[r * 48 + c], dot += g[r * 48 + c] * (x[r * 48 + c] - mean) / sqrt(var + 1e-5);
            big = fmax(big, fabs(g[r * 48 + c]));
        }
        worst = fmax(worst, fmax(fabs(sum), fabs(dot)));
    }
    CHECK(g && worst <= 1e-6 * big, "LayerNorm's gradient rows: sum and dot with x-hat within 1e-6 of the largest (%.3g / %.3g)",
          worst, big);
    CHECK_STATED(norm2(g, 16 * 48), 0.00350, 5, "|g| at encoder.layers.0.add1");
    const int out_proj = interp_find(s.it, "encoder.layers.0.self_attn.out_proj");
    CHECK(!memcmp(grads_stage(bp.g, out_proj), g, sizeof(float) * 16 * 48), "the residual sends g unchanged to out_proj");
    CHECK_STATED(norm2(grads_stage(bp.g, interp_find(s.it, "encoder.embed")), 16 * 48), 0.00440, 5, "|g| at the embeddings");
    CHECK_STATED(bp.loss_after, 0.082078, 6, "the loss after Adam's step");
    back_pass_free(&bp);
    session_close(&s);
}

// One gradient check of `id` on the lesson's pass, with the backward pass built with `mistake`.
static bool check_with(Session *s, Interp *it, int mistake, const char *id, GradCheck *c) {
    float labels[32];
    int n = 0;
    BackPass bp;
    Err e = {{0}};
    bool ok = back_pass_next_tokens(s->it, &s->model, labels, 32, &n) &&
              back_pass_build(&bp, s->it, &s->model, labels, n, mistake, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return false;
    ok = gradcheck(c, it, &s->model, bp.g, &bp.li, bp.labels, id, &e);
    CHECK(ok, "%s: %s", id, e.msg);
    back_pass_free(&bp);
    return ok;
}

static void test_gradient_checking(void) {
    Session s;
    if (!run_lesson(&s, "gradient-checking.md", false, NULL, NULL, NULL, false)) return;
    RunSpec spec = s.run;
    spec.pack_weights = false;
    Err e = {{0}};
    Interp *it = interp_new(&s.lesson.program, &s.model, &spec, &e);
    if (!it || !interp_run(it, &e)) {
        CHECK(false, "%s", e.msg);
        interp_free(it);
        session_close(&s);
        return;
    }
    GradCheck c;
    // Every stage, all 117, and every trained weight pass with the right formulas.
    float labels[32];
    int n = 0, stages = 0, weights = 0, passed = 0;
    BackPass bp;
    if (back_pass_next_tokens(s.it, &s.model, labels, 32, &n) && back_pass_build(&bp, s.it, &s.model, labels, n, 0, &e)) {
        for (int i = 0; i < interp_n_stages(it); i++) {
            if (!grads_stage(bp.g, i)) continue;
            stages++;
            passed += gradcheck(&c, it, &s.model, bp.g, &bp.li, bp.labels, interp_stage(it, i)->id, &e) && c.passed;
        }
        for (int w = 0; w < s.model.n_params; w++) {
            if (s.model.params[w].fixed) continue;
            weights++;
            passed += gradcheck(&c, it, &s.model, bp.g, &bp.li, bp.labels, s.model.params[w].name, &e) && c.passed;
        }
        back_pass_free(&bp);
    }
    CHECK(stages == 117 && passed == stages + weights, "%d of %d stages and %d weights pass", passed, stages, weights);
    if (check_with(&s, it, MISTAKE_SOFTMAX_NO_SUM, "decoder.layers.1.cross_attn.masked", &c)) {
        CHECK(!c.passed, "softmax-no-sum is caught");
        CHECK_STATED(c.pt[0].analytic, 0.00082, 5, "the wrong score gradient");
        CHECK(fabs(c.pt[0].numeric) < 1e-5, "where finite differences find almost nothing (%.3g)", c.pt[0].numeric);
    }
    if (check_with(&s, it, MISTAKE_LAYERNORM_NO_MEAN, "encoder.layers.0.add1", &c)) {
        CHECK(!c.passed && c.pt[0].rel_error > 0.95, "layernorm-no-mean fails by nearly 100%% (%.3f)", c.pt[0].rel_error);
        CHECK_STATED(c.pt[0].analytic, 0.0182, 4, "the wrong largest element");
        CHECK_STATED(c.pt[0].numeric, 0.00008, 5, "the true one");
    }
    if (check_with(&s, it, MISTAKE_DW_NO_TRANSPOSE, "generator.weight", &c)) CHECK(!c.passed, "dw-no-transpose: a weight fails");
    if (check_with(&s, it, MISTAKE_DW_NO_TRANSPOSE, "decoder.layers.1.cross_attn.masked", &c))
        CHECK(c.passed, "dw-no-transpose: a stage still passes");
    if (check_with(&s, it, MISTAKE_NONE, "generator.weight", &c)) CHECK(c.passed && c.worst < 1e-5, "exact to 1e-5: %.3g", c.worst);
    interp_free(it);
    session_close(&s);
}

static void test_which_head(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/which-head.md", LESSONS);
    Session run[2];
    Err e = {{0}};
    int token;
    SessionSpec spec = {.lesson_path = path};
    Lesson l;
    CHECK(lesson_load(&l, path, &e), "%s", e.msg);
    spec.target = l.setup.target, spec.input = l.setup.input;
    const bool ok0 = session_open_scored(&run[0], &spec, &token, &e);
    spec.input = l.setup.corrupt;
    const bool ok1 = ok0 && session_open_scored(&run[1], &spec, &token, &e);
    CHECK(ok1, "%s", e.msg);
    static PatchSweep rs, hs;
    static Lens lens;
    if (ok1 && patch_sweep(&rs, run[0].it, run[1].it, SWEEP_RESID, token, &e) &&
        patch_sweep(&hs, run[0].it, run[1].it, SWEEP_HEADS, token, &e) && logit_lens(&lens, run[0].it, &e)) {
        CHECK_STATED(rs.target.clean, 5.967, 3, "the clean logit");
        CHECK_STATED(rs.target.corrupt, -0.201, 3, "the corrupted logit");
        CHECK_STATED(rs.rows[0].effect[5], 0.980, 3, "encoder layer 0, position 5");
        CHECK_STATED(rs.rows[1].effect[5], 0.993, 3, "encoder layer 1, position 5");
        for (int k = 0; k < 2; k++) {
            CHECK(fabs(rs.rows[k].effect[4] - 0.28) < 0.01, "position 4: about 0.28 (%.3f)", rs.rows[k].effect[4]);
            CHECK(rs.rows[k].effect[3] <= 0.03, "position 3: 0.03 at most (%.3f)", rs.rows[k].effect[3]);
            for (int c = 0; c < 16; c++)
                CHECK(c == 3 || c == 4 || c == 5 || fabs(rs.rows[k].effect[c]) < 0.01, "the day and year carry nothing (%d: %.3f)",
                      c, rs.rows[k].effect[c]);
        }
        CHECK_STATED(rs.rows[3].effect[6], 1.000, 3, "decoder layer 1 at the last position");
        CHECK_STATED(rs.rows[2].effect[6], 0.206, 3, "decoder layer 0 at the last position");
        const PatchRow *cross = &hs.rows[hs.n_rows - 1];
        CHECK(strstr(cross->label, "decoder.layers.1.cross_attn") != NULL, "the last attention swept: %s", cross->label);
        CHECK_STATED(cross->effect[1], 0.592, 3, "head 2");
        CHECK_STATED(cross->effect[3], 0.613, 3, "head 4");
        CHECK_STATED(cross->attribution[1], 0.156, 3, "head 2's attribution");
        CHECK_STATED(cross->attribution[3], 0.207, 3, "head 4's attribution");
        double other = 0;
        for (int k = 0; k < hs.n_rows; k++)
            for (int c = 0; c < hs.rows[k].n; c++)
                if (!(k == hs.n_rows - 1 && (c == 1 || c == 3))) other = fmax(other, hs.rows[k].effect[c]);
        CHECK(other <= 0.0805, "no other head restores more than 0.08 (%.4f)", other);
        const Vocab *v = &run[0].model.tgt_vocab;
        CHECK(!strcmp(vocab_token(v, lens.rows[0].top[6][0]), "-") && !strcmp(vocab_token(v, lens.rows[1].top[6][0]), "1"),
              "the lens at position 6: '-' then '1'");
        CHECK_STATED(lens.rows[0].prob[6][0], 0.231, 3, "layer 0's '-'");
        CHECK_STATED(lens.rows[1].prob[6][0], 0.897, 3, "layer 1's '1'");
    } else CHECK(!ok1, "%s", e.msg);
    if (ok1) session_close(&run[1]);
    if (ok0) session_close(&run[0]);
    lesson_free(&l);
}

static void test_readme(void) {
    static const char *const order[] = {
        "self-attention.md", "scaling.md", "multi-head.md", "positional-encoding.md", "encoder-layer.md",
        "masks.md", "cross-attention.md", "forward-pass.md", "greedy-decoding.md", "cached-decoding.md", "pre-norm.md", "training.md",
        "backprop.md", "gradient-checking.md", "which-head.md", "transformers-from-scratch.md", "encoder-from-scratch.md", "annotated-transformer.md",
        "attention-is-all-you-need-pytorch.md"};
    const int n = (int)(sizeof order / sizeof order[0]);
    Course c;
    Err e = {{0}};
    CHECK(course_load(&c, LESSONS, &e), "%s", e.msg);
    for (int i = 0; i < n; i++) {
        const bool ok = i < c.n && c.items[i].listed && !strcmp(strrchr(c.items[i].path, '/') + 1, order[i]);
        CHECK(ok, "README.md lists %s in place %d (%s)", order[i], i + 1, i < c.n ? c.items[i].path : "nothing");
    }
    course_free(&c);
}

int main(void) {
    test_readme();
    test_self_attention();
    test_scaling();
    test_multi_head();
    test_positional_encoding();
    test_encoder_layer();
    test_masks();
    test_cross_attention();
    test_greedy_decoding();
    test_cached_decoding();
    test_training();
    test_backprop();
    test_gradient_checking();
    test_which_head();
    return check_finish("test_course");
}
