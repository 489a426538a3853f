// back_pass.h: the backward pass as steps to look at, after a teacher-forced forward pass:
// the loss, then every stage's backward kernel last to first (what it received and what it
// sent to each input, dX and dW), then Adam's first step for every weight (m, v, the update,
// the weight after) and the loss re-computed with the weights after the step. The window and
// the headless export step through it; nothing here changes the model.
//
// Dimension legend: B = 1 (one example), n_i = the floats of stage i's output, w = the floats
// of a weight.
#ifndef STEPFORMER_BACK_PASS_H
#define STEPFORMER_BACK_PASS_H

#include "attach.h"
#include "grad_pass.h"

typedef enum { BACK_LOSS, BACK_STAGE, BACK_ADAM, BACK_AFTER, BACK_KIND_COUNT } BackKind;
extern const char *const back_kind_names[BACK_KIND_COUNT];

typedef struct {
    BackKind kind;
    int stage;                    // BACK_STAGE: the forward stage whose backward kernel ran;
                                  // BACK_LOSS, BACK_AFTER: the scored stage; BACK_ADAM: its last reader
    int weight;                   // BACK_ADAM: the weight's index in the model, else -1
    float *share[STAGE_MAX_IN];   // BACK_STAGE: what the kernel sent to input j (owned; NULL: nothing)
} BackStep;

// What an op's backward kernel computes, for the lesson panel: its formula (g is the gradient
// that reached the stage's output) and the C function that ran (kernels_backward.c,
// kernels_shape.c), or NULL for ops that pass no gradient.
typedef struct {
    const char *formula;
    const char *kernel;
} BackOpInfo;
extern const BackOpInfo back_op_info[OP_COUNT];
bool back_op_info_complete(void);  // every op has its formula (a test guards this)
// The row for stage st: its op's, or for `activation` the model's own function's.
const BackOpInfo *back_info_for(const Stage *st, Activation act);

// Adam's settings for the step shown (the trainer's: torch.optim.Adam with these).
#define BACK_LR 1e-3f
#define BACK_BETA1 0.9f
#define BACK_BETA2 0.98f
#define BACK_EPS 1e-9f

typedef struct {
    Grads *g;
    LossInfo li;
    float *labels;       // [n_labels]
    int n_labels;
    float *dscored;      // [rows * V] the loss's gradient
    BackStep *steps;     // [n_steps] in the order they are shown
    int n_steps;
    float *m, *v, *update, *after;  // [arena] Adam's first step, laid out like the weights
    double loss_after;   // the loss with the weights after the step
    int mistake;         // the BackwardMistake it was built with (0: none)
} BackPass;

// Runs the loss and the backward pass on `it` (a teacher-forced pass of m, run to its end)
// against labels [n], and Adam's step on copies of the weights. False, e set, on bad labels,
// a program whose loss reaches no weight, or memory.
// mistake: a BackwardMistake (back_mistakes.h) to run in place of the right formula, or 0.
bool back_pass_build(BackPass *bp, Interp *it, const Model *m, const float *labels, int n, int mistake, Err *e);
void back_pass_free(BackPass *bp);

// Labels for a teacher-forced pass of an encoder-decoder: the target shifted by one, ending
// in eos (the next token at each position). False when the pass has no target or no eos id.
bool back_pass_next_tokens(const Interp *it, const Model *m, float *labels, int cap, int *n);

// The kind of step a lesson's `steps` block names it by (attach.h): loss, backward, adam, after.
StepKind back_step_kind(BackKind k);

// The step whose forward stage is `stage` (BACK_STAGE), or -1.
int back_pass_step_of(const BackPass *bp, int stage);

// The first step at which two backward passes of the same trace `it` (one with a learner's
// mistake, one without) show a different number: the gradient that reached the step's stage, or
// what its kernel sent to an input. Writes what differs into what ("dL/d encoder.layers.0.
// self_attn.masked"); -1 when every stage's step shows the same numbers.
int back_pass_first_difference(const BackPass *x, const BackPass *y, const Interp *it, char *what, size_t n);

#endif
