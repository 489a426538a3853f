// decoding.h: the numbers the Decoding view shows of a round that sampled or searched, worked
// out from the trace and the Chooser (choose.h) in one place, so that the view draws them and
// the tests check them; and the ways of choosing a token that Z switches between.
//
// Dimension legend: V = the vocabulary (the width of a row of scores).
#ifndef STEPFORMER_DECODING_H
#define STEPFORMER_DECODING_H

#include <stddef.h>

#include "interp.h"

typedef enum { DECODING_GREEDY, DECODING_SAMPLING, DECODING_BEAM, DECODING_COUNT } DecodingKind;
extern const char *const decoding_names[DECODING_COUNT];  // "greedy", "sampling", "beam"

DecodingKind decoding_kind(const DecodeChoice *c);
// The choice in words: "greedy", "sampling: temperature 1, seed 0", "sampling: temperature 0.8,
// top-k 5, top-p 0.9, seed 3", "beam search: width 3".
void decoding_text(const DecodeChoice *c, char *buf, size_t n);
// Z's next choice after `now`: greedy, then sampling, then beam search, then greedy again.
// Sampling takes `given`'s settings (the lesson's or the command line's) when they sample, else
// temperature 1 with given's seed; beam search takes given's width when it has one, else 3, at
// most V (a vocabulary under 2 tokens has no beam: greedy again).
DecodeChoice decoding_next(const DecodeChoice *now, const DecodeChoice *given, int V);

// How round r drew example b's token, as the Chooser drew it.
typedef struct {
    int scores;        // the stage of scores it drew from (interp_scores_of the round's argmax)
    int row;           // its row: the round's last position
    int V;
    double *model;     // [V] softmax(scores): the model's own distribution (temperature 1, no cut)
    double *tempered;  // [V] softmax(scores / temperature)
    double *kept;      // [V] after top-k and top-p, divided by what is left; 0 where cut
    int *order;        // [2V]; the first V: the tokens by tempered probability, likeliest first
    int after_top_k;   // tokens top-k leaves (V without a top-k)
    int n_kept;        // tokens left after top-k and top-p
    int argmax;        // the likeliest token (greedy's)
    const SamplePick *pick;  // the draw; NULL until the round has been drawn
} SampleRound;

// Round r of a sampling pass, whose argmax is stage `argmax`. False (nothing to close) when the
// pass does not sample, the scores have not run, or memory runs out.
bool sample_round_open(SampleRound *s, const Interp *it, int argmax, int r, int b);
void sample_round_close(SampleRound *s);

// Beam search: the tokens of hypothesis j live after round r, tokens [r + 1], found through each
// round's parents. Returns r + 1, or 0 when there is no such hypothesis (or max is too small).
int beam_tokens(const Chooser *ch, int r, int j, int *tokens, int max);

#endif
