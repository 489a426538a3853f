// view_decode.h: what the Decoding view's files share. view_decode.c draws the view: the tokens
// so far, the next token's probabilities and the attention maps; view_sample.c a round that
// sampled its token; view_beam.c beam search's hypotheses.
#ifndef STEPFORMER_VIEW_DECODE_H
#define STEPFORMER_VIEW_DECODE_H

#include "views.h"
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
// A short message in a tinted box as tall as it needs (at most r.h); returns its height.
int decode_note(Ui *ui, Rect r, const char *msg);
// The smallest of 0.01, 0.02, 0.05, 0.1, ... 1 that is at least p: a bar's full width.
float decode_nice_scale(float p);

// ---- token chips ----
typedef enum { CHIP_GIVEN, CHIP_PROMPT, CHIP_NEW, CHIP_UNKNOWN, CHIP_LATER, CHIP_MATCH, CHIP_MISS } ChipKind;
int decode_chip_h(Ui *ui, int px);
int decode_chip_w(Ui *ui, int px, const char *s, int max_w);
void decode_chip(Ui *ui, int px, Rect r, const char *s, ChipKind k);

// A sampled round in r: the model's softmax, after temperature, after top-k / top-p, and the
// draw. Returns the height used.
int view_sample(Ui *ui, const App *a, const Round *R, Rect r);
// Beam search in r: the live hypotheses of the round on screen and the finished ones. Returns
// the height used.
int view_beam(Ui *ui, const App *a, const Round *R, Rect r);

#endif
