// decoding.c: a sampled round's distributions and draw, beam search's hypotheses, and Z's cycle
// of choices (decoding.h).
#include "decoding.h"

#include <stdio.h>
#include <stdlib.h>

const char *const decoding_names[DECODING_COUNT] = {"greedy", "sampling", "beam"};

DecodingKind decoding_kind(const DecodeChoice *c) {
    return c->beam >= 2 ? DECODING_BEAM : c->temperature > 0 ? DECODING_SAMPLING : DECODING_GREEDY;
}

void decoding_text(const DecodeChoice *c, char *buf, size_t n) {
    if (decoding_kind(c) == DECODING_BEAM) {
        snprintf(buf, n, "beam search: width %d", c->beam);
        return;
    }
    if (decoding_kind(c) == DECODING_GREEDY) {
        snprintf(buf, n, "greedy");
        return;
    }
    char k[32] = "", p[32] = "";
    if (c->top_k > 0) snprintf(k, sizeof k, ", top-k %d", c->top_k);
    if (c->top_p > 0 && c->top_p < 1) snprintf(p, sizeof p, ", top-p %g", c->top_p);
    snprintf(buf, n, "sampling: temperature %g%s%s, seed %llu", c->temperature, k, p, (unsigned long long)c->seed);
}

DecodeChoice decoding_next(const DecodeChoice *now, const DecodeChoice *given, int V) {
    DecodeChoice next = {.seed = given->seed};
    switch (decoding_kind(now)) {
    case DECODING_GREEDY:
        next.temperature = given->temperature > 0 ? given->temperature : 1;
        if (given->temperature > 0) next.top_k = given->top_k, next.top_p = given->top_p;
        break;
    case DECODING_SAMPLING:
        next.beam = given->beam >= 2 ? given->beam : 3;
        next.beam = next.beam <= V ? next.beam : V;
        if (next.beam < 2) next.beam = 0;
        break;
    case DECODING_BEAM:
    case DECODING_COUNT: break;
    }
    return next;
}

void sample_round_close(SampleRound *s) {
    free(s->model), free(s->tempered), free(s->kept), free(s->order);
    s->model = s->tempered = s->kept = NULL, s->order = NULL;
}

bool sample_round_open(SampleRound *s, const Interp *it, int argmax, int r, int b) {
    const Chooser *ch = interp_chooser(it);
    *s = (SampleRound){.scores = -1};
    if (!ch || decoding_kind(chooser_choice(ch)) != DECODING_SAMPLING || argmax < 0) return false;
    s->scores = interp_scores_of(it, argmax);
    const Stage *st = s->scores >= 0 ? interp_stage(it, s->scores) : NULL;
    if (!st || st->shape.ndim < 1 || b < 0 || b >= interp_batch(it)) return false;
    const int V = st->shape.dim[st->shape.ndim - 1], T = (int)(shape_numel(&st->shape) / V);
    s->row = T - 1, s->V = V;
    s->model = malloc(sizeof *s->model * (size_t)V), s->tempered = malloc(sizeof *s->tempered * (size_t)V);
    s->kept = malloc(sizeof *s->kept * (size_t)V), s->order = malloc(sizeof *s->order * 2 * (size_t)V);
    // The last row alone when it can be had so (a budget let the head go: one row recomputed)
    float *line = malloc(sizeof *line * (size_t)V);
    const float *row = interp_read_row(it, s->scores, b, (size_t)(T - 1), line);
    if (!s->model || !s->tempered || !s->kept || !s->order || !row) {
        free(line);
        sample_round_close(s);
        return false;
    }
    const DecodeChoice *c = chooser_choice(ch), plain = {.temperature = 1}, hot = {.temperature = c->temperature};
    sample_dist(s->model, s->order, row, V, &plain);
    sample_dist(s->tempered, s->order, row, V, &hot);
    s->n_kept = sample_dist(s->kept, s->order, row, V, c);
    free(line);
    s->after_top_k = c->top_k > 0 && c->top_k < V ? c->top_k : V;
    s->argmax = s->order[0];
    s->pick = chooser_pick(ch, r, b);
    return true;
}

int beam_tokens(const Chooser *ch, int r, int j, int *tokens, int max) {
    if (r < 0 || r + 1 > max) return 0;
    for (int k = r; k >= 0; k--) {
        int n;
        const BeamLive *live = chooser_live(ch, k, &n);
        if (!live || j < 0 || j >= n) return 0;
        tokens[k] = live[j].token, j = live[j].parent;
    }
    return r + 1;
}
