// probe.h: asking a trained model what it relies on, without writing code.
//
// Activation patching: two teacher-forced passes of the same length, a clean one and a
// corrupted one. One stage's output (or one head's slice of an attention's context, or one
// position's row) is copied from the clean pass into the corrupted one and everything after it
// re-run; the effect is how far that moves the logit of the target token back towards its
// clean value: (patched - corrupted) / (clean - corrupted), 1 when the piece carries all of it.
//
// Attribution: the same cells estimated to first order, from one backward pass of the target's
// logit on the corrupted run: sum over the cell of dlogit/dx * (clean x - corrupted x), divided
// by (clean - corrupted) like the effect. It is what patching would give if the model were
// linear from that cell on; where the two differ, what follows the cell is not (a softmax that
// saturates, a ReLU that turns over).
//
// The logit lens: each layer's output (the residual stream) sent through the stages that turn
// the last layer's output into logits (the final norm and the output projection, whatever the
// program calls them, run by the same kernels), to see at which layer the answer appears.
#ifndef STEPFORMER_PROBE_H
#define STEPFORMER_PROBE_H

#include "interp.h"

enum { PROBE_MAX_ROWS = 64, PROBE_MAX_COLS = 512 };

typedef enum { SWEEP_RESID, SWEEP_HEADS, SWEEP_COUNT } Sweep;
extern const char *const sweep_names[SWEEP_COUNT];  // "resid", "heads"

// Where the target's logit is read: the last row of the scored stage (published logits), at
// column `token`.
typedef struct {
    int scored, row, token;
    double clean, corrupt;  // the logit in the two passes
} PatchTarget;

typedef struct {
    char label[STAGE_ID_MAX];  // the layer output or attention patched ("encoder.layers.1")
    int stage;                 // the stage patched (in both passes: the same program and lengths)
    int n;                     // positions (resid) or heads (heads)
    double effect[PROBE_MAX_COLS];  // (patched - corrupt) / (clean - corrupt) for each
    double logit[PROBE_MAX_COLS];   // the patched logit itself
    double attribution[PROBE_MAX_COLS];  // gradient x activation: the first-order estimate of the effect
} PatchRow;

typedef struct {
    Sweep sweep;
    PatchTarget target;
    PatchRow rows[PROBE_MAX_ROWS];
    int n_rows;
} PatchSweep;

// The target's logit in a pass that has run, at the last row of its published logits.
bool patch_target(PatchTarget *t, const Interp *it, int token, Err *e);

// Sweeps every layer output over its positions (resid) or every attention over its heads
// (heads), patching clean into corrupt one cell at a time. Both passes must have run, on the
// same program and model, with inputs of the same lengths; corrupt is left as it was.
bool patch_sweep(PatchSweep *out, const Interp *clean, Interp *corrupt, Sweep sweep, int token, Err *e);

// One patch: stage `id`'s output, or only head `head` (>= 0) of an attention's context, or only
// position `pos` (>= 0, a row). Returns the patched logit in *logit and, when top is not NULL,
// the token the patched pass then predicts at that row. The corrupted pass is left as it was.
bool patch_one(const Interp *clean, Interp *corrupt, const char *id, int head, int pos, int token, double *logit, int *top,
               Err *e);

// ---- the logit lens ----
typedef struct {
    char label[STAGE_ID_MAX];  // the layer output read ("decoder.layers.0.norm3")
    int stage;
    int rows;                  // positions
    int top[PROBE_MAX_COLS][3];     // the three likeliest tokens at each position
    float prob[PROBE_MAX_COLS][3];  // their probabilities
} LensRow;

typedef struct {
    LensRow rows[PROBE_MAX_ROWS];
    int n_rows;
    int V;  // the vocabulary the logits score
} Lens;

// The lens over a pass that has run: one row per layer of the part (decoder, or the encoder of
// a classifier) that feeds the published logits, the last one included, which equals the logits.
bool logit_lens(Lens *out, const Interp *it, Err *e);

#endif
