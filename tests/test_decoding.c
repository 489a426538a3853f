// test_decoding.c: the Decoding view of a generating pass, drawn off screen, against references
// of its own:
//   - greedy on a decoder-only program: the round on screen, its prompt and the token it appends
//     (the argmax of the round's last row of logits), the prompt drawn marked;
//   - sampling: each round's three distributions against a plain softmax with the cuts done by
//     hand, the draw u against the documented splitmix64 sequence, the token against a walk of
//     the kept probabilities, and what the next round was fed;
//   - beam search: every live hypothesis's tokens against the rows the next round ran on, its
//     score against log-softmaxes summed by hand, the finished ones and the answer;
//   - the alignment strip: the new token's row of cross-attention, the heads' mean or one head,
//     against the map's numbers averaged here;
//   - Z: the cycle greedy -> sampling -> beam -> greedy, each pass the same as a session opened
//     with that choice, the lesson's own settings, the stage kept, switched-off pieces kept, and
//     the errors for a teacher-forced pass and a program with no decoder; B after beam search.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rng.h"
#include "scene.h"
#include "view_decode.h"

enum { W = 1280, H = 720, MIN_PX = 14, MAXV = 64, MAXT = 64 };
static const char *gpt = TESTS "/programs/gpt_tiny.md";

static bool open_at(Scene *s, const char *lesson, const DecodeChoice *c) {
    SessionSpec spec = {.lesson_path = lesson};
    if (c) spec.choice = *c, spec.has_choice = true;
    if (!scene_open(s, W, H, &spec)) return false;
    Err e = {{0}};
    const bool ok = interp_run(s->a.session.it, &e);
    CHECK(ok, "%s: %s", lesson, e.msg);
    if (!ok) scene_close(s);
    return ok;
}

// Moves to stage `id` in the Decoding view and draws the window; false when there is no such stage.
static bool draw_at(Scene *s, const char *id) {
    const int k = interp_find(s->a.session.it, id);
    CHECK(k >= 0, "the pass has a stage %s", id);
    if (k < 0) return false;
    app_goto(&s->a, k);
    s->a.view = VIEW_DECODE;
    app_draw(&s->ui, &s->a);
    gfx_present(s->g);
    int px = 0;
    const char *text = "";
    if (gfx_smallest_text(s->g, &px, &text)) CHECK(px >= MIN_PX, "%s: text of %d px (\"%s\")", id, px, text);
    return true;
}

// Pixels of colour c in the centre column (between the map and the lesson panel at 1280 wide).
static long centre_pixels(Scene *s, Rgba c) {
    Rgba *px = malloc(sizeof *px * W * H);
    long n = 0;
    if (px && gfx_read(s->g, px))
        for (int y = 40; y < H - 60; y++)
            for (int x = 250; x < 930; x++) n += px[y * W + x].r == c.r && px[y * W + x].g == c.g && px[y * W + x].b == c.b;
    free(px);
    return n;
}

// The last row of the scores round r chose from, example b: [V].
static const float *scores_row(const Interp *it, int r, int b, int *V) {
    const int k = interp_scores_of(it, decode_round_argmax(it, true, r));
    const Stage *st = interp_stage(it, k);
    *V = st->shape.dim[st->shape.ndim - 1];
    const int T = st->shape.dim[0];
    return interp_output(it, k) + (size_t)b * T * *V + (size_t)(T - 1) * *V;
}

// The ids round r ran on, example b ([start + r] of them): the input of its embedding.
static const float *round_ids(const Interp *it, int r, int b, int *T) {
    for (int i = 0; i < interp_n_stages(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (st->in_decode && st->step == r && st->op == OP_EMBEDDING) {
            *T = st->shape.dim[0];
            return interp_input(it, i, 0) + (size_t)b * *T;
        }
    }
    *T = 0;
    return NULL;
}

static int argmax_f(const float *x, int n) {
    int b = 0;
    for (int i = 1; i < n; i++) b = x[i] > x[b] ? i : b;
    return b;
}

// ---- greedy ----

static void test_greedy(void) {
    Scene s;
    if (!open_at(&s, gpt, NULL)) return;
    const Interp *it = s.a.session.it;
    int n;
    StopReason why;
    const float *gen = interp_generated(it, &n, &why);
    char id[64];
    for (int r = 0; r < n; r++) {
        snprintf(id, sizeof id, "step.%d.decoder.next", r);
        if (!draw_at(&s, id)) break;
        const Round R = decode_round_at(&s.a);
        int V, T;
        const float *ids = round_ids(it, r, 0, &T), *x = scores_row(it, r, 0, &V);
        CHECK(R.mode == DECODING_GREEDY && R.prompted && R.start == 3 && R.round == r, "round %d: greedy, a prompt of 3", r);
        CHECK(T == 3 + r && ids[0] == 3 && ids[1] == 5 && ids[2] == 4, "round %d runs on the prompt 3 5 4 and %d more", r, r);
        CHECK(decode_last_row(&R) == T - 1, "the bars read the round's last row (%d)", decode_last_row(&R));
        CHECK(decode_produced(&R) == argmax_f(x, V) && decode_produced(&R) == (int)gen[r],
              "round %d appends the argmax %d (view %d, generated %d)", r, argmax_f(x, V), decode_produced(&R), (int)gen[r]);
        CHECK(centre_pixels(&s, theme_light.encoder) > 500, "round %d: the prompt's chips are drawn marked", r);
    }
    if (draw_at(&s, "step.1.decoder.logits")) {
        const Round R = decode_round_at(&s.a);
        CHECK(R.round == 1 && decode_produced(&R) == -1, "before its argmax the round's token is not shown");
    }
    scene_close(&s);
    // An encoder-decoder starts from <bos>: no prompt chips.
    char path[600];
    snprintf(path, sizeof path, "%s/greedy-decoding.md", LESSONS);
    if (!open_at(&s, path, NULL)) return;
    if (draw_at(&s, "step.3.generator.next")) {
        const Round R = decode_round_at(&s.a);
        CHECK(!R.prompted && R.start == 1 && decode_last_row(&R) == 3, "<bos> starts; round 3 reads row 3");
        CHECK(centre_pixels(&s, theme_light.encoder) == 0, "no prompt chips for an encoder-decoder");
    }
    scene_close(&s);
}

// ---- sampling ----

// softmax(x / t), then top-k, then top-p, then renormalised, by hand: a selection sort.
static void dist_by_hand(const float *x, int V, const DecodeChoice *c, double *p, double *kept, int *after_k, int *n_kept) {
    double top = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++) top = fmax(top, (double)x[v] / c->temperature);
    for (int v = 0; v < V; v++) sum += p[v] = exp((double)x[v] / c->temperature - top);
    for (int v = 0; v < V; v++) p[v] /= sum;
    int ord[MAXV];
    bool used[MAXV] = {false};
    for (int r = 0; r < V; r++) {
        int b = -1;
        for (int v = 0; v < V; v++)
            if (!used[v] && (b < 0 || p[v] > p[b])) b = v;
        used[b] = true, ord[r] = b;
    }
    int keep = c->top_k > 0 && c->top_k < V ? c->top_k : V;
    *after_k = keep;
    double mass = 0, left = 0;
    for (int r = 0; c->top_p > 0 && c->top_p < 1 && r < keep; r++)
        if ((mass += p[ord[r]]) >= c->top_p) keep = r + 1;
    *n_kept = keep;
    for (int v = 0; v < V; v++) kept[v] = 0;
    for (int r = 0; r < keep; r++) left += p[ord[r]];
    for (int r = 0; r < keep; r++) kept[ord[r]] = p[ord[r]] / left;
}

static double max_diff(const double *a, const double *b, int n) {
    double d = 0;
    for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

static void test_sampling(void) {
    const DecodeChoice c = {.temperature = 1.5, .top_k = 6, .top_p = 0.9, .seed = 6};
    Scene s;
    if (!open_at(&s, gpt, &c)) return;
    const Interp *it = s.a.session.it;
    int n, differs = 0, cut_p = 0;
    StopReason why;
    const float *gen = interp_generated(it, &n, &why);
    CHECK(why == STOP_EOS && n >= 3, "seed 6 writes %d tokens, then <eos>", n);
    Rng rng = {c.seed};
    for (int r = 0; r <= n && r < MAXT; r++) {
        char id[64];
        snprintf(id, sizeof id, "step.%d.decoder.next", r);
        if (!draw_at(&s, id)) break;
        const Round R = decode_round_at(&s.a);
        SampleRound sr;
        if (!sample_round_open(&sr, it, R.next, r, 0)) {
            CHECK(false, "round %d: the view has the sampled round", r);
            break;
        }
        int V, T, after_k, n_kept;
        const float *x = scores_row(it, r, 0, &V);
        double model[MAXV], hot[MAXV], kept[MAXV], dummy[MAXV];
        const DecodeChoice plain = {.temperature = 1};
        dist_by_hand(x, V, &plain, model, dummy, &after_k, &n_kept);
        dist_by_hand(x, V, &c, hot, kept, &after_k, &n_kept);
        CHECK(sr.V == V && sr.row == 3 + r - 1 && max_diff(sr.model, model, V) < 1e-12 && max_diff(sr.tempered, hot, V) < 1e-12,
              "round %d: the softmax and the tempered distribution (row %d) match a plain loop", r, sr.row);
        CHECK(max_diff(sr.kept, kept, V) < 1e-12 && sr.after_top_k == after_k && sr.n_kept == n_kept,
              "round %d: top-k keeps %d (view %d), top-p %d (view %d), the kept p match", r, after_k, sr.after_top_k, n_kept, sr.n_kept);
        const double u = (double)(rng_u64(&rng) >> 11) * 0x1p-53;
        double sum = 0;
        int tok = -1, last = -1;
        for (int v = 0; v < V && tok < 0; v++)
            if (kept[v] > 0 && (last = v, (sum += kept[v]) > u)) tok = v;
        tok = tok < 0 ? last : tok;
        const int fed = r < n ? (int)gen[r] : s.a.session.model.cfg.eos_id.id;
        CHECK(sr.pick && sr.pick->u == u && sr.pick->token == tok && decode_produced(&R) == tok && tok == fed,
              "round %d: u %.17g (view %.17g), token %d (view %d, appended %d)", r, u, sr.pick ? sr.pick->u : -1, tok,
              decode_produced(&R), fed);
        CHECK(sr.pick && sr.pick->argmax == argmax_f(x, V) && sr.argmax == argmax_f(x, V), "round %d: the argmax", r);
        const float *ids = round_ids(it, r, 0, &T);
        for (int i = 0; i < r && ids; i++) CHECK(ids[3 + i] == gen[i], "round %d ran on what was drawn before it", r);
        CHECK(centre_pixels(&s, theme_light.grid) > 200, "round %d: the cut tokens' tracks are greyed", r);
        differs += tok != argmax_f(x, V), cut_p += n_kept < after_k;
        sample_round_close(&sr);
    }
    CHECK(differs > 0 && cut_p > 0, "some round draws other than the argmax (%d) and some top-p cuts (%d)", differs, cut_p);
    scene_close(&s);
}

// ---- beam search ----

static double log_softmax_at(const float *x, int V, int v) {
    double top = x[argmax_f(x, V)], sum = 0;
    for (int i = 0; i < V; i++) sum += exp((double)x[i] - top);
    return (double)x[v] - top - log(sum);
}

// Live hypothesis j after round r: its tokens from the rows round r + 1 ran on (when it ran),
// its score by hand through its ancestors' rows.
static void check_live(const Interp *it, int r, int j, int start) {
    const Chooser *ch = interp_chooser(it);
    int toks[MAXT], anc[MAXT], n, V, T;
    const BeamLive *live = chooser_live(ch, r, &n);
    CHECK(beam_tokens(ch, r, j, toks, MAXT) == r + 1, "round %d, #%d: %d tokens", r, j, r + 1);
    anc[r] = j;
    for (int q = r; q > 0; q--) anc[q - 1] = chooser_live(ch, q, &n)[anc[q]].parent;
    double score = 0;
    for (int q = 0; q <= r; q++) {
        const float *x = scores_row(it, q, q ? anc[q - 1] : 0, &V);
        score += log_softmax_at(x, V, toks[q]);
    }
    CHECK(fabs(score - live[j].score) < 1e-9, "round %d, #%d: sum log p %.12f by hand, %.12f", r, j, score, live[j].score);
    const float *ids = round_ids(it, r + 1, j, &T);
    for (int q = 0; ids && q <= r; q++)
        CHECK(ids[start + q] == toks[q], "round %d, #%d: token %d is what row %d of round %d ran on", r, j, q, j, r + 1);
}

// A hypothesis that finished with <eos> in round q: its score is its parent's plus log p(eos).
static void check_done(const Interp *it, const BeamDone *d, int start, int eos) {
    const Chooser *ch = interp_chooser(it);
    if (d->ids[d->n - 1] != (float)eos) return;  // counted at max_len: a live one, checked as such
    int T, V, n = 1, p = d->round == 0 ? 0 : -1;
    if (d->round > 0) chooser_live(ch, d->round - 1, &n);  // the rows round d->round ran
    for (int b = 0; b < n && p < 0; b++) {
        const float *ids = round_ids(it, d->round, b, &T);
        bool same = true;
        for (int q = 0; q < d->n - 1; q++) same = same && ids[start + q] == d->ids[q];
        if (same) p = b;
    }
    CHECK(p >= 0, "a row of round %d ran on the finished hypothesis", d->round);
    if (p < 0) return;
    const double before = d->round ? chooser_live(ch, d->round - 1, &n)[p].score : 0;
    const float *x = scores_row(it, d->round, p, &V);
    const double want = before + log_softmax_at(x, V, eos);
    CHECK(fabs(want - d->score) < 1e-9 && fabs(d->norm - d->score / d->n) < 1e-15,
          "finished in round %d: %.12f by hand, %.12f", d->round, want, d->score);
}

static void beam_lesson(const char *lesson, const char *next_fmt, int want_done) {
    const DecodeChoice c = {.beam = 3};
    Scene s;
    if (!open_at(&s, lesson, &c)) return;
    const Interp *it = s.a.session.it;
    const int start = interp_start_len(it), eos = s.a.session.model.cfg.eos_id.id;
    const int rounds = decode_rounds_run(it);
    for (int r = 0; r < rounds; r++) {
        char id[64];
        snprintf(id, sizeof id, next_fmt, r);
        if (!draw_at(&s, id)) break;
        const Round R = decode_round_at(&s.a);
        int n;
        const BeamLive *live = chooser_live(interp_chooser(it), r, &n);
        CHECK(R.mode == DECODING_BEAM && R.round == r && (!live || decode_produced(&R) == live[0].token),
              "round %d: beam search, row 0 appends the best live one's token", r);
        for (int j = 0; j < n; j++) check_live(it, r, j, start);
    }
    int n_done, len;
    StopReason why;
    const BeamDone *d = chooser_done(interp_chooser(it), &n_done), *best = chooser_best(interp_chooser(it));
    int top = 0, eos_done = 0;
    for (int i = 0; i < n_done; i++) check_done(it, &d[i], start, eos), eos_done += d[i].ids[d[i].n - 1] == (float)eos;
    for (int i = 1; i < n_done; i++) top = d[i].norm > d[top].norm ? i : top;
    const float *g = interp_generated(it, &len, &why);
    CHECK(best == &d[top] && len == best->n - (best->ids[best->n - 1] == (float)eos) && !memcmp(g, best->ids, sizeof *g * (size_t)len),
          "the answer is the finished one with the best mean log p, and what the pass wrote");
    CHECK(eos_done >= want_done, "%s: %d finished with <eos> (want at least %d)", lesson, eos_done, want_done);
    scene_close(&s);
}

static void test_beam(void) {
    beam_lesson(gpt, "step.%d.decoder.next", 0);
    char path[600];
    snprintf(path, sizeof path, "%s/greedy-decoding.md", LESSONS);
    beam_lesson(path, "step.%d.generator.next", 3);
}

// ---- Z ----

// What a session opened on `lesson` with choice c (NULL: the lesson's own) generates, as "6,6,0".
static void written_by(const char *lesson, const DecodeChoice *c, char *out, size_t n) {
    Session ss;
    Err e = {{0}};
    SessionSpec spec = {.lesson_path = lesson};
    if (c) spec.choice = *c, spec.has_choice = true;
    out[0] = '\0';
    if (!session_open(&ss, &spec, &e) || !interp_run(ss.it, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    int len;
    StopReason why;
    const float *g = interp_generated(ss.it, &len, &why);
    for (int i = 0; i < len; i++) snprintf(out + strlen(out), n - strlen(out), "%s%d", i ? "," : "", (int)g[i]);
    session_close(&ss);
}

static void written_now(const App *a, char *out, size_t n) {
    int len;
    StopReason why;
    const float *g = interp_generated(a->session.it, &len, &why);
    out[0] = '\0';
    for (int i = 0; i < len; i++) snprintf(out + strlen(out), n - strlen(out), "%s%d", i ? "," : "", (int)g[i]);
}

// Z from the mode `a` is in, then the pass is checked against a session opened with `want`.
static void press_z(Scene *s, const char *lesson, const DecodeChoice *want, const char *stay) {
    app_act(&s->a, CMD_DECODING, 0);
    const DecodeChoice *c = &s->a.session.run.choice;
    char got[300], ref[300], name[160];
    decoding_text(want, name, sizeof name);
    CHECK(!s->a.error[0] && c->temperature == want->temperature && c->top_k == want->top_k && c->top_p == want->top_p &&
              c->beam == want->beam && (c->temperature == 0 || c->seed == want->seed),
          "Z: %s (error '%s')", name, s->a.error);
    CHECK(strstr(s->a.notice, name) != NULL, "the notice names '%s': %s", name, s->a.notice);
    written_now(&s->a, got, sizeof got);
    written_by(lesson, want, ref, sizeof ref);
    CHECK(!strcmp(got, ref), "%s writes %s, as a session opened so: %s", name, got, ref);
    CHECK(interp_batch(s->a.session.it) == (want->beam >= 2 ? want->beam : 1), "%s: a row per hypothesis", name);
    if (stay) CHECK(!strcmp(interp_stage(s->a.session.it, s->a.cursor)->id, stay), "%s: still on %s", name, stay);
    draw_at(s, interp_stage(s->a.session.it, s->a.cursor)->id);
}

// A copy of gpt_tiny.md with `keys` added to its lesson block.
static void lesson_with(const char *keys, char *path, size_t n) {
    // The process id too: test_decoding and its AVX2 twin run side by side under ctest -j.
    snprintf(path, n, "/tmp/stepformer-decoding-%d-%d.md", (int)getpid(), (int)strlen(keys));
    FILE *in = fopen(gpt, "r"), *out = fopen(path, "w");
    char line[600];
    while (in && out && fgets(line, sizeof line, in)) {
        fputs(line, out);
        if (!strncmp(line, "max_len:", 8)) fputs(keys, out);
    }
    if (in) fclose(in);
    if (out) fclose(out);
}

static void test_switch(void) {
    Scene s;
    if (!open_at(&s, gpt, NULL)) return;
    const char *stay = "step.1.decoder.layers.0.attn.weights";
    app_goto(&s.a, interp_find(s.a.session.it, stay));
    const DecodeChoice greedy = {0}, sampling = {.temperature = 1}, beam = {.beam = 3};
    press_z(&s, gpt, &sampling, stay);
    char first[300], again[300];
    written_now(&s.a, first, sizeof first);
    press_z(&s, gpt, &beam, stay);
    press_z(&s, gpt, &greedy, stay);
    press_z(&s, gpt, &sampling, stay);
    written_now(&s.a, again, sizeof again);
    CHECK(!strcmp(first, again), "sampling twice with seed 0 writes the same tokens: %s, %s", first, again);
    // A piece switched off stays off through a new interpreter (another beam width): the pass is
    // the one a new run with the mask off writes.
    app_act(&s.a, CMD_ABLATE_MASK, 0);
    app_act(&s.a, CMD_DECODING, 0);
    CHECK(s.a.session.run.choice.beam == 3 && interp_ablation(s.a.session.it)->no_mask, "the mask stays off in the beam's pass");
    Err e = {{0}};
    RunSpec r = s.a.session.run;
    Interp *ref = interp_new(&s.a.session.lesson.program, &s.a.session.model, &r, &e);
    const Ablation off = {.no_mask = true};
    CHECK(ref && interp_set_ablation(ref, &off, &r, &e) && interp_run(ref, &e), "%s", e.msg);
    if (ref) {
        int n1, n2;
        StopReason w1, w2;
        const float *g1 = interp_generated(ref, &n1, &w1), *g2 = interp_generated(s.a.session.it, &n2, &w2);
        CHECK(n1 == n2 && !memcmp(g1, g2, sizeof *g1 * (size_t)n1), "the maskless beam writes what a new maskless run does");
        interp_free(ref);
    }
    scene_close(&s);
    // The lesson's own settings: its sampling, or its beam's width.
    char path[300];
    lesson_with("temperature: 0.7\ntop_k: 4\nsample_seed: 9\n", path, sizeof path);
    if (open_at(&s, path, NULL)) {
        CHECK(decoding_kind(&s.a.session.run.choice) == DECODING_SAMPLING, "the lesson samples");
        press_z(&s, path, &beam, NULL);
        press_z(&s, path, &greedy, NULL);
        press_z(&s, path, &(DecodeChoice){.temperature = 0.7, .top_k = 4, .seed = 9}, NULL);
        scene_close(&s);
    }
    remove(path);
    lesson_with("beam: 4\n", path, sizeof path);
    if (open_at(&s, path, NULL)) {
        press_z(&s, path, &greedy, NULL);
        press_z(&s, path, &sampling, NULL);
        press_z(&s, path, &(DecodeChoice){.beam = 4}, NULL);
        scene_close(&s);
    }
    remove(path);
}

// B after beam search: the pass is opened again teacher-forced on the answer (no beam: a
// teacher-forced pass searches nothing).
static void test_backward_after_beam(void) {
    Scene s;
    if (!open_at(&s, gpt, &(DecodeChoice){.beam = 3})) return;
    int n;
    StopReason why;
    char text[200], want[300];
    const float *g = interp_generated(s.a.session.it, &n, &why);
    vocab_decode(&s.a.session.model.tgt_vocab, g, n, text, sizeof text);
    snprintf(want, sizeof want, "teacher-forced on the answer it wrote, '%s'", text);
    app_act(&s.a, CMD_BACKWARD, 0);
    CHECK(!s.a.error[0] && s.a.loaded && s.a.session.run.tgt && decode_is_greedy(&s.a.session.run.choice) &&
              strstr(s.a.notice, want), "B after beam search: '%s' (error '%s')", s.a.notice, s.a.error);
    scene_close(&s);
}

// Z where no token is chosen: an error that names why, and nothing changes.
static void test_switch_refused(const char *lesson, const char *why) {
    Scene s;
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, lesson);
    if (!open_at(&s, path, NULL)) return;
    const Interp *before = s.a.session.it;
    app_act(&s.a, CMD_DECODING, 0);
    CHECK(strstr(s.a.error, why) && s.a.session.it == before && decode_is_greedy(&s.a.session.run.choice),
          "%s: Z says '%s': %s", lesson, why, s.a.error);
    scene_close(&s);
}

// While sampling or beam search chose the token, the choosing stage (a round's argmax) says so
// in the Stage view and the lesson panel, naming the token the draw appended (the Chooser's own
// record), and never "picks the most likely token"; in greedy decoding it is the argmax's.
static void test_choice_says(void) {
    const DecodeChoice sample = {.temperature = 1.5, .seed = 6}, beam = {.beam = 3};
    const DecodeChoice *choices[3] = {&sample, &beam, NULL};
    for (int k = 0; k < 3; k++) {
        Scene s;
        SessionSpec spec = {.lesson_path = LESSONS "/greedy-decoding.md"};
        if (choices[k]) spec.choice = *choices[k], spec.has_choice = true;
        if (!scene_open(&s, 1280, 720, &spec)) return;
        gfx_note_texts(s.g, true);
        Err e = {{0}};
        CHECK(interp_run(s.a.session.it, &e), "%s", e.msg);
        const Interp *it = s.a.session.it;
        for (int r = 0; r < 3; r++) {
            const int at = decode_round_argmax(it, true, r);
            if (at < 0) break;
            app_goto(&s.a, at);
            s.a.view = VIEW_STAGE;
            app_draw(&s.ui, &s.a);
            char note[400], want[200];
            const char *formula;
            const bool says = app_choice_note(&s.a, at, note, sizeof note, &formula);
            CHECK(says == (choices[k] != NULL), "round %d: a note exactly when not greedy (%d)", r, says);
            CHECK(scene_drew(&s, "picks the most likely token") == !choices[k], "round %d: 'the most likely' only in greedy", r);
            if (k == 0) {
                const SamplePick *p = chooser_pick(interp_chooser(it), r, 0);
                const char *tok = p ? vocab_token(&s.a.session.model.tgt_vocab, p->token) : "?";
                snprintf(want, sizeof want, "round %d drew '%s'", r, strcmp(tok, " ") ? tok : "\xe2\x90\xa3");
                CHECK(p && strstr(note, want), "sampling, round %d: '%s' in '%s'", r, want, note);
                CHECK(scene_drew(&s, "This pass samples (Z): round"), "the Stage view says so");
                CHECK(scene_drew(&s, "(sampled, Z)"),
                      "the Stage view and the program's title say so");
            }
            if (k == 1) CHECK(strstr(note, "beam of 3") && scene_drew(&s, "This pass searches with a beam of 3"), "beam: %s", note);
        }
        scene_close(&s);
    }
}

// ---- the alignment strip ----

// Whether a text drawn in the last frame is exactly `what`.
static bool drew_exactly(const Scene *s, const char *what) {
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s->g, &notes);
    for (int i = 0; i < n; i++)
        if (!strcmp(notes[i].text, what)) return true;
    return false;
}

// The strip under an encoder-decoder's tokens: the last row of the round's last cross-attention
// map, the heads' mean (or the head picked), one number per source token, against a loop here.
static void test_alignment(void) {
    Scene s;
    char path[600];
    snprintf(path, sizeof path, "%s/greedy-decoding.md", LESSONS);
    if (!open_at(&s, path, NULL)) return;
    gfx_note_texts(s.g, true);
    const Interp *it = s.a.session.it;
    int cross = -1;
    for (int i = 0; i < interp_n_stages(it); i++) {
        const Stage *st = interp_stage(it, i);
        if (st->in_decode && st->step == 3 && st->role == ROLE_WEIGHTS && st->axes.slot[1] != st->axes.slot[2]) cross = i;
    }
    CHECK(cross >= 0, "round 3 has a cross-attention map");
    for (int pick = -1; cross >= 0 && pick < 2; pick += 2) {  // the mean, then head 2
        s.a.all_heads = pick < 0, s.a.head = pick < 0 ? 0 : pick;
        if (!draw_at(&s, "step.3.generator.next")) break;
        const Stage *st = interp_stage(it, cross);
        const int NH = st->shape.dim[0], T = st->shape.dim[1], S = st->shape.dim[2];
        const float *x = interp_output(it, cross);
        int found = 0;
        for (int k = 0; k < S; k++) {
            double w = 0;
            for (int h = pick < 0 ? 0 : pick; h < (pick < 0 ? NH : pick + 1); h++) w += x[((size_t)h * T + T - 1) * S + k];
            if (pick < 0) w /= NH;
            char num[16];
            snprintf(num, sizeof num, "%.2f", w);
            found += drew_exactly(&s, num);
        }
        CHECK(found == S, "%s: all %d weights of the last row drawn (%d found)", pick < 0 ? "the mean" : "head 2", S, found);
        char says[64];
        if (pick < 0) snprintf(says, sizeof says, "the mean of its %d heads", NH);
        else snprintf(says, sizeof says, "head 2 of %d", NH);
        CHECK(scene_drew(&s, "reads the source here") && scene_drew(&s, says), "the caption says whose row: %s", says);
    }
    scene_close(&s);
}

// The Positions view on a Marian model: the paper's table beside Marian's stored one, and the
// check that Marian's column j is the paper's 2j (sin) and its d/2 + j the paper's 2j + 1 (cos),
// against the closed form computed here in double precision.
static void test_marian_positions(void) {
    Scene s;
    SessionSpec spec = {.lesson_path = LESSONS "/marian.md", .model_path = FIXTURES "/hub/marian-tok",
                        .input = "The black cat sleeps."};
    if (!scene_open(&s, W, H, &spec)) return;
    gfx_note_texts(s.g, true);
    s.a.view = VIEW_PE;
    app_draw(&s.ui, &s.a);
    const StEntry *w = model_weight(&s.a.session.model, "model.encoder.embed_positions.weight");
    double worst = 1;
    if (w) {
        const int P = w->shape.dim[0], D = w->shape.dim[1];
        worst = 0;
        for (int p = 0; p < P; p++)
            for (int j = 0; j < D / 2; j++) {
                const double angle = p / pow(10000.0, 2.0 * j / D);
                worst = fmax(worst, fabs(w->data[(size_t)p * D + j] - sin(angle)));
                worst = fmax(worst, fabs(w->data[(size_t)p * D + D / 2 + j] - cos(angle)));
            }
    }
    CHECK(worst < 1e-5, "the stored table is sin in its first half, cos in its second (%.2g)", worst);
    CHECK(s.a.pe.source == PE_SOURCE_HALVES && scene_drew(&s, "the paper's table (left) and Marian's (right)") &&
          scene_drew(&s, "Marian's column j is the paper's 2j"), "the view sets the two tables side by side and says how");
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s.g, &notes);
    double shown = -1;
    for (int i = 0; i < n; i++) {
        const char *at = strstr(notes[i].text, "PE's columns reordered, max diff ");
        if (at) shown = atof(at + strlen("PE's columns reordered, max diff "));
    }
    CHECK(shown >= 0 && shown < 1e-5, "the view measures the reordered columns the same (%.2g)", shown);
    scene_close(&s);
}

int main(void) {
    test_marian_positions();
    test_alignment();
    test_choice_says();
    test_greedy();
    test_sampling();
    test_beam();
    test_switch();
    test_backward_after_beam();
    test_switch_refused("masks.md", "teacher-forced");
    test_switch_refused("transformers-from-scratch.md", "no decoder");
    return check_finish("test_decoding");
}
