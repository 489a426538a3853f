// ablate.h: switching a piece of the model off to see what it does: every mask, every
// positional encoding, or one head of one attention. The interpreter applies an Ablation to
// each stage it runs (interp_set_ablation re-runs the pass); the program and the weights stay
// as they are.
#ifndef STEPFORMER_ABLATE_H
#define STEPFORMER_ABLATE_H

#include "ops.h"

enum { ABLATE_MAX_HEADS = 16 };

typedef struct {
    char weights[STAGE_ID_MAX];  // an attention's softmax stage id, without a "step.K." prefix
    int head;
} AblatedHead;

typedef struct {
    bool no_mask;       // every mask lets every key through
    bool no_positions;  // every add_positions adds nothing
    AblatedHead heads[ABLATE_MAX_HEADS];  // these heads' weights are zero: they add nothing
    int n_heads;
} Ablation;

// Whether anything is switched off.
bool ablation_any(const Ablation *a);
// Switches head h of the attention whose softmax is stage `st` off, or back on if it was off.
// False if the list is full.
bool ablation_toggle_head(Ablation *a, const Stage *st, int h);
// One line for the screen: "no mask, head 2 of encoder.layers.0.self_attn.weights".
void ablation_text(const Ablation *a, char *buf, size_t n);
// Changes the output of stage st (B examples; in: its inputs) as the ablation says.
void ablation_apply(const Ablation *a, const Stage *st, const float *const in[STAGE_MAX_IN], float *out, int B);

#endif
