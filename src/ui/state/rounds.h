// rounds.h: the decoding round on screen, from the cursor's point of view: which round the cursor
// is in, what it has chosen so far and which stages it reads. The Decoding view draws it, and
// the tests read what the view shows from it.
#ifndef STEPFORMER_ROUNDS_H
#define STEPFORMER_ROUNDS_H

#include "app.h"
#include "decoding.h"

// The decoding round on screen, from the cursor's point of view.
typedef struct {
    const Interp *it;
    bool greedy;         // generating (greedy, sampling or beam search), not teacher forcing
    DecodingKind mode;   // how each token is chosen
    bool before;         // the cursor is before the decoder (still in the encoder)
    int round;           // K: the "step.K." prefix (0 in teacher forcing)
    int start;           // the ids the target starts with: 1 ([bos]) or a prompt's length
    bool prompted;       // a decoder-only program: the start is its prompt
    const float *ids;    // the target slot: the start + generated (greedy) or the target ids
    int n_ids;
    int n_gen;           // greedy: tokens generated so far (without bos and eos)
    StopReason why;
    int next, probs;     // this round's argmax and the stage it reads (-1: none)
    bool next_run, probs_run;  // ... seen from the cursor
} Round;

// The round on screen (the tests read what the view shows from it).
Round decode_round_at(const App *a);
// The token the round on screen appended, once the cursor has seen its argmax: the argmax's last
// row, what the Chooser drew, or beam search's best live hypothesis's; -1 before that.
int decode_produced(const Round *R);
// The row of scores the round on screen chose from: its last position (teacher forcing: the
// target's last row, until a column is pointed at).
int decode_last_row(const Round *R);
// A stage has run from the point of view of the cursor.
bool decode_seen(const App *a, int stage);
// The argmax the decode loop appends from, in round `round` (any round's when not greedy), or -1.
int decode_round_argmax(const Interp *it, bool greedy, int round);
// Rounds the pass has run or begun (0 before the decoder).
int decode_rounds_run(const Interp *it);
// Whether round r has chosen its token(s): the pass has gone on to round r + 1, or ended there.
bool decode_round_chosen(const Round *R, int r);

#endif
