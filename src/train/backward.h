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

// Whether gradients from stage `from` reach every weight it depends on: false, naming the op
// and its program line, when an op with no backward pass (argmax) lies between them.
bool backward_check(const Interp *it, int from, Err *e);

// Runs the backward pass from stage `from`, whose output's gradient is dfrom ([B, shape of
// from]). Weight gradients are ADDED to what g holds (zero it first for a fresh step).
bool backward(Grads *g, const Interp *it, int from, const float *dfrom, Err *e);

#endif
