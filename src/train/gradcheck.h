// gradcheck.h: a gradient check you can see. A few elements of one tensor (a stage's output,
// or a weight) are moved by +h and -h, the pass re-run from there, and the loss's central
// difference (L(x+h) - L(x-h)) / 2h set beside the analytic gradient the backward pass gave.
// One step is not enough for a trained model, whose gradients are small: a large h errs by
// the curvature (h^2), a small one by the float32 pass's round-off. So the differences are
// taken at several steps and extrapolated to h = 0 (Ridders' method), with an error estimate.
//
// A ReLU whose input changes sign between x - h and x + h puts a kink in the loss, and no
// difference across it measures a gradient: such elements are passed over (and counted), and
// the next largest gradients taken instead. A weight that a `tie` shares with other names (the
// same numbers) is one tensor: its gradient is the sum of theirs, so all of them are moved. A smaller h would not do: on a trained model the
// float32 pass's round-off would then swamp the difference.
//
// The perturbation, the loss and the quotients are float64; the pass itself runs in float32
// as always, so agreement is not to the last bit: a few parts in a thousand on a fresh model,
// up to a few percent on a trained one whose gradients are near 1e-4: a point agrees when the
// two differ by at most 5% of the larger plus twice the extrapolation's own error estimate.
// A backward formula that is wrong (softmax's gradient without its sum term, LayerNorm's
// without its mean terms, dW without the transpose) misses by tens of percent or more.
#ifndef STEPFORMER_GRADCHECK_H
#define STEPFORMER_GRADCHECK_H

#include "grad_pass.h"

enum { GRADCHECK_POINTS = 6 };
#define GRADCHECK_H 0.05         // the first step: h * max(1, |x|), then smaller ones
#define GRADCHECK_TOLERANCE 5e-2  // a relative error above this fails the check

typedef struct {
    size_t index;      // element of the tensor ([B, shape] for a stage, flat for a weight)
    double value;      // the element before the check
    double h;          // the first (largest) step taken
    double analytic;   // from the backward pass
    double numeric;    // the central differences, extrapolated to h = 0 (Ridders)
    double error;      // the extrapolation's own error estimate
    double rel_error;  // |analytic - numeric| / max(|analytic|, |numeric|)
    bool agrees;       // |analytic - numeric| <= GRADCHECK_TOLERANCE * max(|a|, |n|) + 2 * error
} GradPoint;

typedef struct {
    char what[STAGE_ID_MAX];  // the stage id or weight name checked
    bool weight;              // a weight (else a stage's output)
    GradPoint pt[GRADCHECK_POINTS];
    int n;
    int kinked;               // elements passed over: a ReLU turns over within +-h of them
    double worst;             // the largest rel_error
    int disagree;             // points that do not agree
    bool passed;              // some points checked, and every one agrees
} GradCheck;

// Checks the gradient of the loss (li, labels: as grad_pass ran them on it, with g its
// gradients) with respect to stage or weight `id`. The elements checked: the ones with the
// largest |analytic gradient| (finite values only), largest first. The
// pass must not pack its weights (RunSpec.pack_weights false) when `id` is a weight; the
// weight is put back bit for bit, and the pass left as it was.
bool gradcheck(GradCheck *out, Interp *it, Model *m, const Grads *g, const LossInfo *li, const float *labels,
               const char *id, Err *e);

#endif
