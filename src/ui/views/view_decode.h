// view_decode.h: the Decoding view's parts. view_decode.c draws the view: the tokens so far, the
// next token's probabilities and the attention maps, and calls these two for a round that sampled
// its token (view_sample.c) and for beam search's hypotheses (view_beam.c). The round they all
// draw is rounds.h's; the chips are chips.h's.
#ifndef STEPFORMER_VIEW_DECODE_H
#define STEPFORMER_VIEW_DECODE_H

#include "chips.h"
#include "rounds.h"
#include "views.h"

// A sampled round in r: the model's softmax, after temperature, after top-k / top-p, and the
// draw. Returns the height used.
int view_sample(Ui *ui, const App *a, const Round *R, Rect r);
// Beam search in r: the live hypotheses of the round on screen and the finished ones. Returns
// the height used.
int view_beam(Ui *ui, const App *a, const Round *R, Rect r);
// The alignment strip (view_align.c): the new token's row of cross-attention map `stage` (layer
// `layer` of `layers`) over the source tokens. Returns the height used (0: no room).
int view_align(Ui *ui, const App *a, const Round *R, Rect r, int stage, int layer, int layers);

#endif
