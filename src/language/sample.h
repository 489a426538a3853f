// sample.h: how a decoding round chooses its token, besides greedy's argmax: sampling with a
// temperature, top-k and top-p (nucleus) from a seeded generator, and the arithmetic of beam
// search. Pure functions over one row of scores; the interpreter (interp.c) calls them and keeps
// what each round chose, and the Decoding view shows it.
//
// Dimension legend: V = the vocabulary (the width of a row of logits).
//
// Sampling, exactly (so the same seed gives the same tokens on every machine, given the same
// logits):
//   1. p = softmax(logits / temperature), computed in double precision;
//   2. top-k: keep the k largest p (ties: the lower id first), zero the rest;
//   3. top-p: sort the kept tokens by p, largest first (ties: lower id first), keep the shortest
//      prefix whose sum reaches top_p (at least one token), zero the rest;
//   4. renormalise the kept p to sum to 1;
//   5. u = the next draw of splitmix64 (rng.h) seeded with `seed`, as (u64 >> 11) * 2^-53, one
//      draw a round (a batch: one per example, in order);
//   6. walk the kept tokens in id order, adding up p: the token is the first at which the sum
//      exceeds u (the last kept token if rounding leaves the sum short of u).
// Only the logits can differ between machines (the vector paths round differently, by about
// 1e-6); a token changes only when u falls that close to a boundary of step 6.
#ifndef STEPFORMER_SAMPLE_H
#define STEPFORMER_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

typedef struct {
    double temperature;  // 0: greedy (argmax); > 0: sample from softmax(logits / temperature)
    int top_k;           // 0: no cut; else keep only the k likeliest tokens
    double top_p;        // 0 or 1: no cut; else keep the likeliest tokens whose mass reaches it
    uint64_t seed;       // the generator's seed
    int beam;            // 0 or 1: no beam search; k >= 2: beam search with k hypotheses
} DecodeChoice;

// Greedy: no temperature, no beam.
static inline bool decode_is_greedy(const DecodeChoice *c) { return c->temperature <= 0 && c->beam < 2; }

// Checks a choice against a vocabulary of V tokens: temperature >= 0 (0 is greedy), top_k in
// [0, V], top_p in (0, 1] (0 meaning none), beam in [0, V], and not both sampling and a beam.
bool decode_check(const DecodeChoice *c, int V, Err *e);

// The distribution sampling draws from: steps 1-4 above. probs [V]; logits [V]; order [2V] is
// scratch (on return its first V hold the tokens, likeliest first). Returns how many tokens were kept.
int sample_dist(double *probs, int *order, const float *logits, int V, const DecodeChoice *c);
// Step 6: the token for the draw u in [0, 1) from probs [V] (zero where cut).
int sample_pick(const double *probs, int V, double u);
// Step 5: the draw for a round.
double sample_draw(uint64_t *state);

// Beam search's scores: logp [V] = log_softmax(logits [V]), in double precision.
void beam_log_probs(double *logp, const float *logits, int V);
// Length normalisation: a hypothesis of n generated tokens (its eos counted) scores
// sum(log p) / n, so a long answer is not beaten by a short one for its length alone.
static inline double beam_normalised(double score, int n) { return n > 0 ? score / n : score; }

#endif
