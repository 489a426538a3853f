// choose.h: what a decoding round appends when it is not greedy's argmax (sample.h has the
// arithmetic): a sampled token per example, or beam search's k hypotheses. The interpreter
// hands each round's last rows of scores to a Chooser, which keeps what every round chose so
// the Decoding view can show it and the tests can check it.
//
// Beam search with width k (rows of the batch are the hypotheses, all of one length):
//   round 0 expands the prompt (one row) into its k likeliest tokens; each later round scores
//   every live hypothesis h and token v as score(h) + log p(v | h), and walks the 2k best in
//   order: an eos among the first k finishes its hypothesis (kept aside with its score), any
//   other token continues one, until k continue. Search ends when k hypotheses have finished,
//   none is live, or the last round has run (the live ones then count as finished). The answer
//   is the finished hypothesis with the best normalised score, sum(log p) / its length
//   (eos counted); ties go to the one that finished first.
//
// Dimension legend: B = rows (examples, or hypotheses), V = vocabulary, R = rounds at most.
#ifndef STEPFORMER_CHOOSE_H
#define STEPFORMER_CHOOSE_H

#include "sample.h"

typedef struct {
    int token;   // what was appended
    int argmax;  // what greedy decoding would have appended
    int kept;    // tokens left after top-k and top-p
    double u;    // the draw
} SamplePick;

typedef struct {
    int parent;    // the row (hypothesis) of the round before it grew from
    int token;     // the token it appended
    double score;  // sum of log p of its tokens
} BeamLive;

typedef struct {
    float *ids;    // [n] its tokens, eos last when it produced one
    int n;
    double score;  // sum of log p
    double norm;   // score / n
    int round;     // the round it finished in
} BeamDone;

typedef struct Chooser Chooser;

// eos: the end token, or -1. Returns NULL when out of memory.
Chooser *chooser_new(const DecodeChoice *c, int B, int rounds, int V, int eos);
void chooser_free(Chooser *ch);
const DecodeChoice *chooser_choice(const Chooser *ch);

// Round r: scores [B] rows of V logits (the last position of each row); gen [B, r] the tokens
// each row generated before this round. Writes tokens [B] to append and parents [B], the row
// each new row extends (b itself when sampling; for beams, rows past the live ones copy row 0
// and are dead). *done: beam search has ended. False only when out of memory.
bool chooser_round(Chooser *ch, int r, const float *const *scores, const float *gen, int *tokens, int *parents,
                   bool *done);

// Sampling: what round r chose for example b (NULL before that round).
const SamplePick *chooser_pick(const Chooser *ch, int r, int b);
// Beam search: the hypotheses live after round r (*n of them), the ones finished in or before
// it (*n_done), and the answer (NULL before any finished).
const BeamLive *chooser_live(const Chooser *ch, int r, int *n);
const BeamDone *chooser_done(const Chooser *ch, int *n_done);
const BeamDone *chooser_best(const Chooser *ch);
// Rows live going into round r (all B when sampling).
int chooser_live_rows(const Chooser *ch, int r);

#endif
