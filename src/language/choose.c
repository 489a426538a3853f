// choose.c: sampling's record of draws and beam search's hypotheses (choose.h).
#include "choose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct Chooser {
    DecodeChoice c;
    int B, R, V, eos;
    uint64_t state;     // the generator, one draw a round and example
    double *probs;      // [V]
    int *order;         // [2V]
    SamplePick *picks;  // [R, B]
    int n_picked;       // rounds picked
    // beam search
    double *logp;     // [V]
    BeamLive *live;   // [R, B] live hypotheses after each round
    int *n_live;      // [R]
    BeamDone *done;   // [cap_done]
    int n_done, cap_done;
    int best;         // index into done, or -1
    BeamLive *cand;   // [2B] the best candidates of a round, best first
};

Chooser *chooser_new(const DecodeChoice *c, int B, int rounds, int V, int eos) {
    Chooser *ch = calloc(1, sizeof *ch);
    if (!ch) return NULL;
    ch->c = *c, ch->B = B, ch->R = rounds, ch->V = V, ch->eos = eos, ch->state = c->seed, ch->best = -1;
    const size_t RB = (size_t)rounds * (size_t)B;
    ch->probs = malloc(sizeof *ch->probs * (size_t)V);
    ch->order = malloc(sizeof *ch->order * 2 * (size_t)V);
    ch->picks = calloc(RB, sizeof *ch->picks);
    ch->logp = malloc(sizeof *ch->logp * (size_t)V);
    ch->live = calloc(RB, sizeof *ch->live);
    ch->n_live = calloc((size_t)rounds, sizeof *ch->n_live);
    ch->cand = malloc(sizeof *ch->cand * 2 * (size_t)B);
    if (!ch->probs || !ch->order || !ch->picks || !ch->logp || !ch->live || !ch->n_live || !ch->cand) {
        chooser_free(ch);
        return NULL;
    }
    return ch;
}

void chooser_free(Chooser *ch) {
    if (!ch) return;
    for (int i = 0; i < ch->n_done; i++) free(ch->done[i].ids);
    free(ch->done), free(ch->probs), free(ch->order), free(ch->picks), free(ch->logp);
    free(ch->live), free(ch->n_live), free(ch->cand);
    free(ch);
}

const DecodeChoice *chooser_choice(const Chooser *ch) { return &ch->c; }

static int argmax_row(const float *x, int V) {
    int best = 0;
    for (int v = 1; v < V; v++)
        if (x[v] > x[best]) best = v;
    return best;
}

static void sample_round(Chooser *ch, int r, const float *const *scores, int *tokens, int *parents) {
    for (int b = 0; b < ch->B; b++) {
        SamplePick *p = &ch->picks[(size_t)r * ch->B + b];
        p->kept = sample_dist(ch->probs, ch->order, scores[b], ch->V, &ch->c);
        p->u = sample_draw(&ch->state);
        p->token = sample_pick(ch->probs, ch->V, p->u);
        p->argmax = argmax_row(scores[b], ch->V);
        tokens[b] = p->token, parents[b] = b;
    }
    ch->n_picked = r + 1;
}

// Keeps cand [0, *n) the best `cap` candidates seen, best first (equal scores: the earlier).
static void offer(BeamLive *cand, int *n, int cap, BeamLive x) {
    if (*n == cap && !(x.score > cand[cap - 1].score)) return;
    int i = *n < cap ? (*n)++ : cap - 1;
    while (i > 0 && x.score > cand[i - 1].score) cand[i] = cand[i - 1], i--;
    cand[i] = x;
}

// A finished hypothesis: row `parent`'s r generated tokens, then `token`.
static bool finish(Chooser *ch, int r, const float *gen, BeamLive h) {
    if (ch->n_done == ch->cap_done) {
        const int cap = ch->cap_done ? ch->cap_done * 2 : 2 * ch->B;
        BeamDone *d = realloc(ch->done, sizeof *d * (size_t)cap);
        if (!d) return false;
        ch->done = d, ch->cap_done = cap;
    }
    BeamDone *d = &ch->done[ch->n_done];
    d->ids = malloc(sizeof *d->ids * (size_t)(r + 1));
    if (!d->ids) return false;
    if (r > 0) memcpy(d->ids, gen + (size_t)h.parent * r, sizeof *d->ids * (size_t)r);
    d->ids[r] = (float)h.token, d->n = r + 1, d->score = h.score, d->round = r;
    d->norm = beam_normalised(h.score, d->n);
    if (ch->best < 0 || d->norm > ch->done[ch->best].norm) ch->best = ch->n_done;
    ch->n_done++;
    return true;
}

static bool beam_round(Chooser *ch, int r, const float *const *scores, const float *gen, int *tokens,
                       int *parents, bool *done) {
    const int k = ch->B, rows = r == 0 ? 1 : ch->n_live[r - 1];
    int n = 0;
    for (int b = 0; b < rows; b++) {
        const double base = r == 0 ? 0 : ch->live[(size_t)(r - 1) * k + b].score;
        beam_log_probs(ch->logp, scores[b], ch->V);
        for (int v = 0; v < ch->V; v++) offer(ch->cand, &n, 2 * k, (BeamLive){b, v, base + ch->logp[v]});
    }
    BeamLive *next = &ch->live[(size_t)r * k];
    int live = 0;
    for (int i = 0; i < n && live < k; i++) {
        if (ch->cand[i].token != ch->eos) next[live++] = ch->cand[i];
        else if (i < k && !finish(ch, r, gen, ch->cand[i])) return false;
    }
    ch->n_live[r] = live;
    *done = ch->n_done >= k || live == 0 || r + 1 == ch->R;
    for (int j = 0; *done && j < live && r + 1 == ch->R; j++)  // the last round: live ones count
        if (!finish(ch, r, gen, next[j])) return false;
    for (int j = 0; j < k; j++)
        tokens[j] = j < live ? next[j].token : next[0].token, parents[j] = j < live ? next[j].parent : 0;
    return true;
}

bool chooser_round(Chooser *ch, int r, const float *const *scores, const float *gen, int *tokens, int *parents,
                   bool *done) {
    *done = false;
    if (r < 0 || r >= ch->R) return true;
    if (ch->c.beam >= 2) return beam_round(ch, r, scores, gen, tokens, parents, done);
    sample_round(ch, r, scores, tokens, parents);
    return true;
}

const SamplePick *chooser_pick(const Chooser *ch, int r, int b) {
    return r >= 0 && r < ch->n_picked && b >= 0 && b < ch->B && ch->c.beam < 2 ? &ch->picks[(size_t)r * ch->B + b]
                                                                              : NULL;
}

const BeamLive *chooser_live(const Chooser *ch, int r, int *n) {
    *n = r >= 0 && r < ch->R ? ch->n_live[r] : 0;
    return *n ? &ch->live[(size_t)r * ch->B] : NULL;
}

const BeamDone *chooser_done(const Chooser *ch, int *n_done) {
    *n_done = ch->n_done;
    return ch->done;
}

const BeamDone *chooser_best(const Chooser *ch) { return ch->best >= 0 ? &ch->done[ch->best] : NULL; }

int chooser_live_rows(const Chooser *ch, int r) {
    if (ch->c.beam < 2) return ch->B;
    return r == 0 ? 1 : r - 1 < ch->R ? ch->n_live[r - 1] : 0;
}
