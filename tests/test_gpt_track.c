// test_gpt_track.c: the numbers the decoder-only lessons state (causal-self-attention.md,
// gpt-block.md, beam-search.md), recomputed from the trace with plain loops: weights read off
// the attention maps, softmaxes and log-softmaxes of the logits, tensor sizes summed from the
// model files, and held-out dates checked by the task's own solver.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"
#include "session.h"
#include "tasks.h"

static bool open_lesson(Session *s, const char *name, const char *input, const DecodeChoice *c) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, name);
    SessionSpec spec = {.lesson_path = path, .input = input, .greedy = true};
    if (c) spec.choice = *c, spec.has_choice = true;
    Err e = {{0}};
    const bool ok = session_open(s, &spec, &e) && interp_run(s->it, &e);
    CHECK(ok, "%s: %s", name, e.msg);
    if (!ok && s->it) session_close(s);
    return ok;
}

static const float *out(const Session *s, const char *id, Shape *sh) {
    const int i = interp_find(s->it, id);
    CHECK(i >= 0, "stage %s", id);
    if (i < 0) return NULL;
    if (sh) *sh = interp_stage(s->it, i)->shape;
    return interp_output(s->it, i);
}

static void generated(const Session *s, char *text, size_t n) {
    int len;
    StopReason why;
    const float *ids = interp_generated(s->it, &len, &why);
    vocab_decode(&s->model.tgt_vocab, ids, len, text, n);
}

// log p of every token at row t of a [T, V] logits tensor, in double precision.
static void log_probs(const float *x, int t, int V, double *lp) {
    double top = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++) top = fmax(top, x[(size_t)t * V + v]);
    for (int v = 0; v < V; v++) sum += exp(x[(size_t)t * V + v] - top);
    for (int v = 0; v < V; v++) lp[v] = x[(size_t)t * V + v] - top - log(sum);
}

static void test_causal(void) {
    Session s;
    if (!open_lesson(&s, "causal-self-attention.md", NULL, NULL)) return;
    char text[128];
    generated(&s, text, sizeof text);
    CHECK(!strcmp(text, "2026-11-22"), "the answer: %s", text);
    Shape sh;
    const float *w0 = out(&s, "step.0.decoder.layers.0.self_attn.weights", &sh);
    if (w0) {
        const int H = sh.dim[0], T = sh.dim[1];
        int above = 0, first = 0;
        for (int h = 0; h < H; h++) {
            first += w0[(size_t)h * T * T] == 1.0f;
            for (int q = 0; q < T; q++)
                for (int k = q + 1; k < T; k++) above += w0[((size_t)h * T + q) * T + k] != 0.0f;
        }
        CHECK(T == 17 && above == 0 && first == H, "17 rows, nothing above the diagonal (%d), row 0 all on itself (%d of %d)",
              above, first, H);
    }
    const float *w = out(&s, "step.10.decoder.layers.1.self_attn.weights", &sh);
    if (w) {
        const int T = sh.dim[1];
        const float *h4 = w + (size_t)3 * T * T;
        CHECK(T == 27, "27 characters in the last round");
        CHECK_STATED(h4[21 * T + 5], 0.858, 3, "head 4, the first '-' on the v of November");
        CHECK_STATED(h4[22 * T + 5], 0.985, 3, "head 4, the month's first digit on the v");
        CHECK_STATED(h4[24 * T + 0], 0.838, 3, "head 4, the second '-' on the day's first digit");
    }
    session_close(&s);
}

static long file_numbers(const char *path) {
    StFile f;
    Err e = {{0}};
    if (!st_load(&f, path, &e)) {
        CHECK(false, "%s", e.msg);
        return -1;
    }
    long n = 0;
    for (int i = 0; i < f.n_entries; i++) n += (long)shape_numel(&f.entries[i].shape);
    st_free(&f);
    return n;
}

// 200 dates drawn as `examples --task dates --count 200 --seed 999` draws them.
static void held_out(Session *gpt, Session *ed, int *gpt_right, int *ed_right, int *one_digit_misses, int *misses) {
    Rng rng = {999};
    char src[64], tgt[64], in[80], got[128];
    for (int i = 0; i < 200; i++) {
        task_example(TASK_DATES, &rng, src, sizeof src, tgt, sizeof tgt);
        Err e = {{0}};
        int first;
        snprintf(in, sizeof in, "%s=", src);
        if (session_set_input(gpt, in, &first, &e) && interp_run(gpt->it, &e)) {
            generated(gpt, got, sizeof got);
            const bool right = !strcmp(got, tgt);
            *gpt_right += right, *misses += !right;
            // the only wrong character is the tens digit of a day of one digit
            *one_digit_misses += !right && tgt[8] == '0' && !strncmp(got, tgt, 8) && !strcmp(got + 9, tgt + 9);
        }
        CHECK(!e.msg[0], "%s: %s", in, e.msg);
        if (session_set_input(ed, src, &first, &e) && interp_run(ed->it, &e)) {
            generated(ed, got, sizeof got);
            *ed_right += !strcmp(got, tgt);
        }
    }
}

static void test_gpt_block(void) {
    CHECK(file_numbers(MODELS "/dates-gpt.safetensors") == 109876, "the GPT's numbers");
    CHECK(file_numbers(MODELS "/dates.safetensors") == 116387, "the encoder-decoder's numbers");
    Session gpt, ed;
    if (!open_lesson(&gpt, "gpt-block.md", NULL, NULL)) return;
    char text[128];
    generated(&gpt, text, sizeof text);
    CHECK(!strcmp(text, "2045-03-29"), "9 march 2045 -> %s", text);
    Shape sh;
    const float *x = out(&gpt, "step.8.generator.logits", &sh);
    if (x) {
        const int T = sh.dim[0], V = sh.dim[1];
        double lp[128];
        log_probs(x, T - 1, V, lp);
        const Vocab *vb = &gpt.model.tgt_vocab;
        CHECK_STATED(exp(lp[vocab_find(vb, "2", 1)]), 0.339, 3, "p(2)");
        CHECK_STATED(exp(lp[vocab_find(vb, "1", 1)]), 0.326, 3, "p(1)");
        CHECK_STATED(exp(lp[vocab_find(vb, "0", 1)]), 0.304, 3, "p(0)");
    }
    if (open_lesson(&ed, "forward-pass.md", "22 November 2026", NULL)) {
        int g = 0, r = 0, one = 0, miss = 0;
        held_out(&gpt, &ed, &g, &r, &one, &miss);
        CHECK(g == 185 && r == 200 && one == 14 && miss == 15, "GPT %d, encoder-decoder %d of 200; %d of %d misses one-digit days",
              g, r, one, miss);
        session_close(&ed);
    }
    session_close(&gpt);
}

// The mean log-probability of what a greedy pass wrote, its eos counted, from each round's logits.
static double greedy_score(const Session *s, int *n_out) {
    int n;
    StopReason why;
    const float *ids = interp_generated(s->it, &n, &why);
    double sum = 0, lp[256];
    for (int r = 0; r <= n; r++) {
        char id[64];
        snprintf(id, sizeof id, "step.%d.generator.logits", r);
        Shape sh;
        const float *x = out(s, id, &sh);
        if (!x) return NAN;
        log_probs(x, sh.dim[0] - 1, sh.dim[1], lp);
        sum += lp[r < n ? (int)ids[r] : s->model.cfg.eos_id.id];
    }
    *n_out = n + 1;
    return sum;
}

static void test_beam(void) {
    Session g, b;
    if (!open_lesson(&g, "beam-search.md", "qu", &(DecodeChoice){0})) return;
    char text[128];
    generated(&g, text, sizeof text);
    int n;
    const double sum = greedy_score(&g, &n);
    CHECK(!strcmp(text, "iler"), "greedy from qu: %s", text);
    CHECK_STATED(sum, -7.036, 3, "greedy's sum");
    CHECK_STATED(sum / n, -1.407, 3, "greedy's mean");
    Shape sh;
    const float *x = out(&g, "step.1.generator.logits", &sh);
    if (x) {
        double lp[256];
        log_probs(x, sh.dim[0] - 1, sh.dim[1], lp);
        CHECK_STATED(lp[vocab_find(&g.model.tgt_vocab, "l", 1)], -1.571, 3, "log p(l) after qui");
        CHECK_STATED(lp[vocab_find(&g.model.tgt_vocab, "n", 1)], -1.833, 3, "log p(n) after qui");
    }
    session_close(&g);
    if (!open_lesson(&b, "beam-search.md", NULL, NULL)) return;
    generated(&b, text, sizeof text);
    const BeamDone *best = chooser_best(interp_chooser(b.it));
    CHECK(!strcmp(text, "ing") && best, "beam from qu: %s", text);
    if (best) {
        CHECK_STATED(best->score, -4.139, 3, "beam's sum");
        CHECK_STATED(best->norm, -1.035, 3, "beam's mean");
    }
    session_close(&b);
    // From dis: greedy's longer word has the better mean; beam search stopped first.
    if (open_lesson(&g, "beam-search.md", "dis", &(DecodeChoice){0})) {
        generated(&g, text, sizeof text);
        const double gs = greedy_score(&g, &n);
        CHECK(!strcmp(text, "tration"), "greedy from dis: %s", text);
        CHECK_STATED(gs / n, -0.908, 3, "greedy's mean from dis");
        session_close(&g);
    }
    if (open_lesson(&b, "beam-search.md", "dis", NULL)) {
        generated(&b, text, sizeof text);
        best = chooser_best(interp_chooser(b.it));
        CHECK(!strcmp(text, "ters") && best, "beam from dis: %s", text);
        if (best) CHECK_STATED(best->norm, -1.097, 3, "beam's mean from dis");
        session_close(&b);
    }
}

int main(void) {
    test_causal();
    test_gpt_block();
    test_beam();
    return check_finish("test_gpt_track");
}
