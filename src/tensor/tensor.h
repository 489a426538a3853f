// tensor.h: shapes and the named tensor every part of stepformer passes around.
//
// Every tensor is float32, row-major, contiguous. Token ids travel as float32 too (exact
// integers up to 2^24), so the trace can hold every stage's output in one representation.
#ifndef STEPFORMER_TENSOR_H
#define STEPFORMER_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHAPE_MAX_DIMS 4

typedef struct {
    int ndim;
    int dim[SHAPE_MAX_DIMS];
} Shape;

Shape shape1(int a);
Shape shape2(int a, int b);
Shape shape3(int a, int b, int c);
int64_t shape_numel(const Shape *s);
bool shape_eq(const Shape *a, const Shape *b);
int shape_last(const Shape *s);  // the last dimension: a row's length
int shape_rows(const Shape *s);  // how many rows of that length: the product of the others
// Writes "[6 x 64]" (or "[]" for a scalar) into buf; returns buf.
char *shape_str(const Shape *s, char *buf, size_t n);

// What the numbers in a tensor mean, so a viewer can choose how to draw them.
typedef enum {
    TK_VALUES,  // signed activations: diverging colour map around 0
    TK_PROBS,   // probabilities in [0, 1]: sequential colour map
    TK_IDS,     // token ids: shown as tokens
    TK_COUNT
} TensorKind;

typedef struct {
    const char *name;  // weight key or stage id (not owned)
    Shape shape;
    float *data;  // [shape] (not owned)
} TensorView;

#endif
