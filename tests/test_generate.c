// test_generate.c: generating from a decoder-only program: the prompt continued (each token the
// argmax of a teacher-forced pass over what came before), the cached decoder bit for bit,
// sampling's distribution against a plain loop and its frequencies over many draws, a seeded
// run re-derived from the documented rule, beam search against an exhaustive search and a
// plain re-implementation, and the bad inputs.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"
#include "session.h"

static const char *gpt = TESTS "/programs/gpt_tiny.md";
enum { V = 8, EOS = 2, MAXT = 32 };
static const float prompt[] = {3, 5, 4};
enum { L0 = 3 };

static bool open_gpt(Session *s) {
    SessionSpec spec = {.lesson_path = gpt, .greedy = true};
    Err e = {{0}};
    const bool ok = session_open(s, &spec, &e);
    CHECK(ok, "%s", e.msg);
    return ok;
}

static Interp *run(const Session *s, const float *tgt, int T, int max_new, const DecodeChoice *c, bool cached) {
    RunSpec r = {prompt, L0, tgt, T, max_new, 1, true, cached};
    if (c) r.choice = *c;
    Err e = {{0}};
    Interp *it = interp_new(&s->lesson.program, &s->model, &r, &e);
    if (it && !interp_run(it, &e)) interp_free(it), it = NULL;
    CHECK(it, "run: %s", e.msg);
    return it;
}

// The last row of `logits` of a teacher-forced pass over ids [T].
static void last_logits(const Session *s, const float *ids, int T, double *out) {
    Interp *it = run(s, ids, T, 0, NULL, false);
    if (!it) return;
    const int k = interp_find(it, "decoder.logits");
    const float *x = interp_output(it, k);
    CHECK(interp_stage(it, k)->shape.dim[0] == T, "forced pass over %d ids", T);
    for (int v = 0; v < V; v++) out[v] = x[(size_t)(T - 1) * V + v];
    interp_free(it);
}

static int argmax_d(const double *x, int n) {
    int b = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[b]) b = i;
    return b;
}

static void log_softmax_d(double *x, int n) {
    double top = x[argmax_d(x, n)], sum = 0;
    for (int i = 0; i < n; i++) sum += exp(x[i] - top);
    for (int i = 0; i < n; i++) x[i] -= top + log(sum);
}

// Greedy: each new token is the argmax of a forced pass over the prompt and the tokens before.
static void test_prompt_continued(const Session *s) {
    Interp *it = run(s, NULL, 0, 8, NULL, false);
    if (!it) return;
    int n;
    StopReason why;
    const float *g = interp_generated(it, &n, &why);
    CHECK(interp_start_len(it) == L0, "the target starts as the prompt (%d ids)", interp_start_len(it));
    CHECK(n == 8 || why == STOP_EOS, "%d tokens", n);
    float ids[MAXT];
    memcpy(ids, prompt, sizeof prompt);
    for (int i = 0; i < n; i++) ids[L0 + i] = g[i];
    for (int i = 0; i <= n && i < 8; i++) {
        double lg[V];
        last_logits(s, ids, L0 + i, lg);
        const int want = i < n ? (int)g[i] : EOS;
        CHECK(argmax_d(lg, V) == want, "round %d: argmax %d, generated %d", i, argmax_d(lg, V), want);
    }
    interp_free(it);
}

// The cached decoder: every stage of every round the same bits as the plain one, and it did copy.
static void test_cached_identical(const Session *s) {
    Interp *a = run(s, NULL, 0, 10, NULL, false), *b = run(s, NULL, 0, 10, NULL, true);
    if (!a || !b) return;
    CHECK(interp_n_stages(a) == interp_n_stages(b), "%d / %d stages", interp_n_stages(a), interp_n_stages(b));
    int same = 0, copied = 0;
    for (int i = 0; i < interp_n_stages(a) && i < interp_n_stages(b); i++) {
        const Stage *st = interp_stage(a, i);
        const size_t n = (size_t)shape_numel(&st->shape);
        same += !strcmp(st->id, interp_stage(b, i)->id) && !memcmp(interp_output(a, i), interp_output(b, i), n * sizeof(float));
        copied += interp_stage_rows(b, i) != ROWS_WHOLE;
    }
    CHECK(same == interp_n_stages(a), "%d of %d stages identical", same, interp_n_stages(a));
    CHECK(copied > 100, "the cached decoder computed only new rows in %d stages", copied);
    interp_free(a), interp_free(b);
}

// A plain version of the documented rule: softmax / temperature, top-k, top-p, renormalised.
static void naive_dist(const float *lg, int n, const DecodeChoice *c, double *p) {
    double top = -INFINITY, sum = 0;
    for (int v = 0; v < n; v++) top = fmax(top, lg[v] / c->temperature);
    for (int v = 0; v < n; v++) sum += p[v] = exp(lg[v] / c->temperature - top);
    for (int v = 0; v < n; v++) p[v] /= sum;
    bool keep[64] = {0};
    double mass = 0;
    for (int r = 0; r < n; r++) {  // pick the next largest not yet kept (lower id on ties)
        int best = -1;
        for (int v = 0; v < n; v++)
            if (!keep[v] && (best < 0 || p[v] > p[best])) best = v;
        if ((c->top_k && r >= c->top_k) || (c->top_p > 0 && c->top_p < 1 && mass >= c->top_p)) break;
        keep[best] = true, mass += p[best];
    }
    for (int v = 0; v < n; v++) p[v] = keep[v] ? p[v] / mass : 0;
}

static void test_distribution(void) {
    Rng rng = {11};
    float lg[40];
    for (int v = 0; v < 40; v++) lg[v] = 3 * rng_normal(&rng);
    lg[7] = lg[8];  // a tie
    const double temps[] = {0.5, 1, 2.5}, ps[] = {0, 0.3, 0.9, 1};
    const int ks[] = {0, 1, 5, 40};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int k = 0; k < 4; k++) {
                const DecodeChoice c = {temps[a], ks[k], ps[b], 0, 0};
                double got[40], want[40];
                int order[80];
                sample_dist(got, order, lg, 40, &c);
                naive_dist(lg, 40, &c, want);
                double d = 0;
                for (int v = 0; v < 40; v++) d = fmax(d, fabs(got[v] - want[v]));
                CHECK(d < 1e-12, "T=%g top_k=%d top_p=%g: differs by %g", temps[a], ks[k], ps[b], d);
            }
}

// Many draws: each token's share within 5 standard deviations of its probability; cut tokens never.
static void test_frequencies(void) {
    const float lg[6] = {2.0f, 1.5f, 0.2f, -1.0f, 1.9f, 0.0f};
    const DecodeChoice c = {0.8, 4, 0.9, 0, 0};
    double p[6];
    int order[12], count[6] = {0};
    sample_dist(p, order, lg, 6, &c);
    uint64_t state = 5;
    enum { N = 200000 };
    for (int i = 0; i < N; i++) count[sample_pick(p, 6, sample_draw(&state))]++;
    for (int v = 0; v < 6; v++) {
        const double f = (double)count[v] / N, sd = sqrt(p[v] * (1 - p[v]) / N);
        CHECK(p[v] == 0 ? count[v] == 0 : fabs(f - p[v]) <= 5 * sd, "token %d: %.4f drawn, p %.4f", v, f, p[v]);
    }
}

// splitmix64, written out again: the draws the documentation describes.
static double draw(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

// A seeded run, re-derived round by round from forced passes and the documented rule.
static void test_seeded(const Session *s) {
    const DecodeChoice c = {1.7, 6, 0.95, 42, 0};
    Interp *a = run(s, NULL, 0, 8, &c, false), *b = run(s, NULL, 0, 8, &c, true);
    if (!a || !b) return;
    int n, nb;
    StopReason why;
    const float *g = interp_generated(a, &n, &why), *gb = interp_generated(b, &nb, &why);
    CHECK(n == nb && !memcmp(g, gb, sizeof *g * (size_t)n), "the same seed, cached or not: the same tokens");
    float ids[MAXT];
    memcpy(ids, prompt, sizeof prompt);
    uint64_t state = 42;
    int differs = 0;
    for (int i = 0; i <= n && i < 8; i++) {
        double lg[V], p[V];
        float lf[V];
        last_logits(s, ids, L0 + i, lg);
        for (int v = 0; v < V; v++) lf[v] = (float)lg[v];
        naive_dist(lf, V, &c, p);
        const double u = draw(&state);
        int tok = -1;
        double sum = 0;
        for (int v = 0; v < V && tok < 0; v++)
            if (p[v] > 0 && (sum += p[v]) > u) tok = v;
        const int want = i < n ? (int)g[i] : EOS;
        CHECK(tok == want, "round %d: the rule draws %d, the run appended %d", i, tok, want);
        differs += tok != argmax_d(lg, V);
        const SamplePick *pk = chooser_pick(interp_chooser(a), i, 0);
        CHECK(pk && pk->token == want && pk->argmax == argmax_d(lg, V) && pk->u == u, "round %d's record", i);
        if (i < n) ids[L0 + i] = g[i];
    }
    CHECK(differs > 0, "sampling at temperature 1.7 chose something other than the argmax at least once");
    interp_free(a), interp_free(b);
}

// Beam search as wide as the vocabulary over two rounds is an exhaustive search.
static void test_beam_exhaustive(const Session *s) {
    const DecodeChoice c = {0, 0, 0, 0, V};
    Interp *it = run(s, NULL, 0, 2, &c, false);
    if (!it) return;
    double l0[V], best = -INFINITY;
    float ids[L0 + 2], want[2] = {0, 0};
    int want_n = 0;
    memcpy(ids, prompt, sizeof prompt);
    last_logits(s, ids, L0, l0);
    log_softmax_d(l0, V);
    if (l0[EOS] > best) best = l0[EOS], want[0] = EOS, want_n = 1;
    for (int x1 = 0; x1 < V; x1++) {
        if (x1 == EOS) continue;
        double l1[V];
        ids[L0] = (float)x1;
        last_logits(s, ids, L0 + 1, l1);
        log_softmax_d(l1, V);
        for (int x2 = 0; x2 < V; x2++)
            if ((l0[x1] + l1[x2]) / 2 > best) best = (l0[x1] + l1[x2]) / 2, want[0] = (float)x1, want[1] = (float)x2, want_n = 2;
    }
    const BeamDone *d = chooser_best(interp_chooser(it));
    CHECK(d && fabs(d->norm - best) < 1e-9, "beam's best %.12g, exhaustive %.12g", d ? d->norm : NAN, best);
    CHECK(d && d->n == want_n && d->ids[0] == want[0] && (want_n < 2 || d->ids[1] == want[1]),
          "beam's best is the exhaustive search's sequence");
    interp_free(it);
}

typedef struct {
    float ids[8];
    int n;
    double score;
} Hyp;

// Beam search written plainly over forced passes: the reference for a narrower beam.
static void test_beam_plain(const Session *s) {
    enum { K = 3, R = 5 };
    const DecodeChoice c = {0, 0, 0, 0, K};
    Interp *it = run(s, NULL, 0, R, &c, false);
    if (!it) return;
    Hyp live[K] = {{{0}, 0, 0}}, done[64];
    int n_live = 1, n_done = 0;
    for (int r = 0; r < R && n_live > 0 && n_done < K; r++) {
        Hyp cand[2 * K];
        int nc = 0;
        for (int h = 0; h < n_live; h++) {
            float ids[MAXT];
            double lp[V];
            memcpy(ids, prompt, sizeof prompt);
            memcpy(ids + L0, live[h].ids, sizeof(float) * (size_t)live[h].n);
            last_logits(s, ids, L0 + live[h].n, lp);
            log_softmax_d(lp, V);
            for (int v = 0; v < V; v++) {  // insert into the 2K best (stable: earlier first on ties)
                Hyp x = live[h];
                x.ids[x.n++] = (float)v, x.score += lp[v];
                int at = nc;
                while (at > 0 && x.score > cand[at - 1].score) at--;
                if (at >= 2 * K) continue;
                for (int j = (nc < 2 * K ? nc : 2 * K - 1); j > at; j--) cand[j] = cand[j - 1];
                cand[at] = x, nc += nc < 2 * K;
            }
        }
        int nl = 0;
        for (int i = 0; i < nc && nl < K; i++)
            if ((int)cand[i].ids[cand[i].n - 1] != EOS) live[nl++] = cand[i];
            else if (i < K) done[n_done++] = cand[i];
        n_live = nl;
        if (r == R - 1)
            for (int j = 0; j < n_live; j++) done[n_done++] = live[j];
    }
    int best = 0;
    for (int i = 1; i < n_done; i++)
        if (done[i].score / done[i].n > done[best].score / done[best].n) best = i;
    const BeamDone *d = chooser_best(interp_chooser(it));
    CHECK(d && n_done > 0 && d->n == done[best].n && fabs(d->score - done[best].score) < 1e-9 &&
              !memcmp(d->ids, done[best].ids, sizeof(float) * (size_t)d->n),
          "beam K=3: the plain search's answer");
    interp_free(it);
}

static void expect_error(const char *what, const DecodeChoice *c, const char *src_ids, const char *target, const char *needle) {
    SessionSpec spec = {.lesson_path = gpt, .src_ids = src_ids, .tgt_ids = target, .greedy = !target,
                        .has_choice = true, .choice = *c};
    Session s;
    Err e = {{0}};
    const bool ok = session_open(&s, &spec, &e);
    CHECK(!ok && strstr(e.msg, needle), "%s: %s", what, ok ? "opened" : e.msg);
    if (ok) session_close(&s);
}

static void test_errors(void) {
    const DecodeChoice greedy = {0}, hot = {-1, 0, 0, 0, 0}, p = {1, 0, 1.5, 0, 0}, wide = {0, 0, 0, 0, V + 1};
    expect_error("temperature below 0", &hot, NULL, NULL, "greedy decoding, the default, is temperature 0");
    expect_error("top-p 1.5", &p, NULL, NULL, "(0, 1]");
    expect_error("a beam wider than the vocabulary", &wide, NULL, NULL, "wider than the vocabulary");
    expect_error("a prompt longer than the positions", &greedy, "3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3", NULL,
                 "24");
    const DecodeChoice beam = {0, 0, 0, 0, 3};
    expect_error("a beam with a target", &beam, NULL, "3,4", "takes no target");
}

// Passes that share one model's packed weights (RunSpec.packs, a session's): a second pass
// packs nothing again and gives the first one's bits at every stage; the packs serve no other
// model.
static void test_shared_packs(const Session *s) {
    Packs shared = {0};
    RunSpec r = {prompt, L0, NULL, 0, 6, 1, true, true};
    r.packs = &shared;
    Err e = {{0}};
    Interp *a = interp_new(&s->lesson.program, &s->model, &r, &e), *b = NULL;
    const bool ran_a = a && interp_run(a, &e);
    const int made = shared.n;
    const size_t floats = shared.floats;
    if (ran_a) b = interp_new(&s->lesson.program, &s->model, &r, &e);
    const bool ran_b = b && interp_run(b, &e);
    CHECK(ran_a && ran_b, "two passes sharing packs: %s", e.msg);
    CHECK(made > 0 && shared.n == made && shared.floats == floats,
          "the first pass packed %d weights (%zu floats); after the second, %d (%zu floats)", made, floats, shared.n,
          shared.floats);
    int differ = 0, linear = -1;
    for (int i = 0; ran_b && i < interp_n_stages(a); i++) {
        const Shape *sh = &interp_stage(a, i)->shape;
        const float *x = interp_output(a, i), *y = interp_output(b, i);
        differ += !x || !y || memcmp(x, y, sizeof(float) * (size_t)shape_numel(sh)) != 0;
        if (interp_stage(a, i)->op == OP_LINEAR && interp_stage(a, i)->in[1].kind == REF_WEIGHT) linear = i;
    }
    CHECK(ran_b && differ == 0 && interp_n_stages(a) == interp_n_stages(b),
          "the pass on shared packs: %d of %d stages not the first pass's bits", differ, ran_b ? interp_n_stages(a) : 0);
    const Model other = s->model;  // the same numbers, another model as far as the packs know
    CHECK(linear >= 0 && !packs_get(&shared, &other, interp_stage(a, linear)), "packs made from one model served another");
    interp_free(a), interp_free(b);
    packs_free(&shared);
}

int main(void) {
    Session s;
    if (open_gpt(&s)) {
        test_prompt_continued(&s);
        test_cached_identical(&s);
        test_seeded(&s);
        test_beam_exhaustive(&s);
        test_beam_plain(&s);
        test_shared_packs(&s);
        session_close(&s);
    }
    test_distribution();
    test_frequencies();
    test_errors();
    return check_finish("test_generate");
}
