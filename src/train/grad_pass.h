// grad_pass.h: the gradient of one pass's loss against given labels: what `trace --labels
// --grads`, the gradient checks and the backward lessons run (the trainer has its own batched
// step, train.h, over the same backward pass).
//
// The loss: the mean over the labels that count (not the model's pad id) of the cross-entropy
// of the published `logits` row against its label, with no label smoothing; for a program that
// publishes only `log_probs`, the mean negative log-likelihood. One label per row of the scored
// tensor: an encoder-decoder's [T, V] logits take T labels (the next token at each target
// position), a classifier's [C] scores take one class.
#ifndef STEPFORMER_GRAD_PASS_H
#define STEPFORMER_GRAD_PASS_H

#include "backward.h"

typedef struct {
    int scored;        // the stage the loss reads: published logits, else log_probs
    bool log_probs;    // it holds log-probabilities: the loss is their mean NLL
    int rows, V;       // labels it takes, and the classes each row scores
    int counted;       // labels that count (not the pad id)
    double loss;
    int untied;        // the line of a `tie` whose tensors differ in this model (left untied), or 0
} LossInfo;

// Which stage the loss reads and how many labels it takes (the pass need not have run).
bool loss_target(const Interp *it, LossInfo *li, Err *e);

// Parses "5,9,3" into at most cap ids (whole numbers). False with a message naming `what`.
bool labels_parse(const char *text, const char *what, float *out, int cap, int *n, Err *e);

// Runs the pass to its end, then the loss of the scored stage against labels [n] and the
// backward pass from it into g (zeroed first; tied tensors summed). Every gradient is checked
// to be finite. dscored: room for the loss's gradient ([rows * V] floats).
bool grad_pass(Grads *g, Interp *it, const float *labels, int n, float *dscored, LossInfo *li, Err *e);

// The loss alone, for a pass that has run (what a gradient check perturbs and re-measures),
// in float64. dscored may be NULL; otherwise it receives dloss/dscored.
bool loss_value(const Interp *it, const LossInfo *li, const float *labels, double *loss, float *dscored, Err *e);

#endif
