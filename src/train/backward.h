// backward.h: gradients over the same stages the forward pass ran, last to first.
//
// There is no second copy of the model: the backward pass walks the interpreter's stage list in
// reverse, and for each stage whose output received a gradient it runs that op's backward
// kernel, adding into the gradients of the stage's inputs: earlier stages' outputs, or the
// model's weights (a gradient arena laid out like the weight arena). The positional table is a
// fixed buffer, as in PyTorch, and gets no gradient.
#ifndef STEPFORMER_BACKWARD_H
#define STEPFORMER_BACKWARD_H

#include "interp.h"

typedef struct Grads Grads;

Grads *grads_new(const Model *m, Err *e);
void grads_free(Grads *g);
// The gradient of every weight, laid out like m->weights.arena ([grads_size] floats).
float *grads_weights(Grads *g);
size_t grads_size(const Grads *g);
// The gradient of one weight tensor (NULL for a frozen one).
float *grads_of(Grads *g, const char *name);
void grads_zero(Grads *g);

// The program's `tie` groups (program.h) whose tensors hold the same numbers in the model:
// each such group is one tensor of the original, so grads_sum_ties gives every name of it the
// sum of their gradients. False, naming the line, for a name the program does not declare or
// names of different shapes. A group whose numbers differ stays untied (said in *untied, may be
// NULL: the first such group's line, or 0).
bool grads_tie(Grads *g, const Program *p, int *untied, Err *e);
void grads_sum_ties(Grads *g);
// The gradient that reached stage k's output in the last pass ([B, shape]), or NULL if none did.
const float *grads_stage(const Grads *g, int k);
// Check every gradient the pass writes: the first that is not finite stops the pass, naming the
// stage whose backward kernel made it (off by default: the trainer checks its loss instead).
void grads_check_finite(Grads *g, bool on);
// Off by default: every stage's gradient stays for grads_stage. On (the trainer, which reads
// none of them): a stage's buffer is handed on once its backward kernel ran, to the next stage
// that needs one, so the pass works in a few buffers the cache still holds instead of one for
// every stage, and grads_stage then finds none. The numbers are the same either way.
void grads_recycle(Grads *g, bool on);
// Runs one of the learners' wrong formulas (a BackwardMistake, back_mistakes.h) in place of the
// right one, for the gradient-check lesson; MISTAKE_NONE (0) puts the right one back.
void grads_set_mistake(Grads *g, int mistake);

// The stepped view of the pass (the window's backward stages): what stage i's backward kernel
// alone sends to each input, given the gradient that reached its output in the last pass.
// out[j] must hold backward_input_floats(it, i, j) floats (NULL: not wanted); it is cleared and
// receives input j's share (its part of the input's gradient, or of the weight's: dW). Inputs
// that take no gradient (token ids, buffers) are left cleared. False if no gradient reached i.
// Summed over the readers of a tensor, the shares are its gradient (test_grads holds them to it).
bool backward_contributions(const Grads *g, const Interp *it, int i, float *const out[STAGE_MAX_IN]);
size_t backward_input_floats(const Interp *it, int i, int j);
// Whether input j of stage i takes a gradient: an earlier stage, or a weight that is not a buffer.
bool backward_input_takes(const Interp *it, int i, int j);

// Whether gradients from stage `from` reach every weight it depends on: false, naming the op
// and its program line, when an op with no backward pass (argmax) lies between them.
bool backward_check(const Interp *it, int from, Err *e);

// The stages of the pass up to `from` whose outputs the backward pass from `from` never reads
// (transient[i], for every stage of it: true for an output only later stages of the forward
// read), for interp_set_transient. The mistakes of grads_set_mistake may read more: a pass
// with one keeps every output.
void backward_transient(const Interp *it, int from, bool *transient);
// Whether stage st's backward kernel reads its output, or its input j (backward_reads.c). An op
// not named there is taken to read them all.
bool backward_reads_output(const Stage *st);
bool backward_reads_input(const Stage *st, int j);

// Runs the backward pass from stage `from`, whose output's gradient is dfrom ([B, shape of
// from]). Weight gradients are ADDED to what g holds (zero it first for a fresh step).
bool backward(Grads *g, const Interp *it, int from, const float *dfrom, Err *e);

#endif
