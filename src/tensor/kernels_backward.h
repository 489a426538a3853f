// kernels_backward.h: the gradients of the forward kernels (kernels.h has the dimension legend).
//
// Every backward kernel ADDS into its input gradients (dx += ...): a tensor read by several
// stages (a residual stream, the memory) collects the gradient of each reader. A `fresh`
// gradient is the first to reach its tensor: it holds nothing yet and is written, not read
// (0 + v, the same bits as adding to a cleared buffer), which saves clearing it first. Kernels take
// outputs first, then const inputs, then sizes, and never allocate. Each is checked against
// finite differences in tests/test_backward.c.
#ifndef STEPFORMER_KERNELS_BACKWARD_H
#define STEPFORMER_KERNELS_BACKWARD_H

#include "kernels.h"

// dtable[ids[t]] += dy[t] * scale
void embedding_backward(float *dtable,      // [V, C]
                        const float *dy,    // [T, C]
                        const float *ids,   // [T]
                        int T, int C, float scale);

// y = x wᵀ + b:  dx += dy w,  dw += dyᵀ x,  db += column sums of dy. Any of dx, dw, db may be
// NULL (not wanted). With dx_fresh, dx holds nothing yet and is written, not added to.
void linear_backward(float *dx,          // [T, I] or NULL
                     float *dw,          // [O, I] or NULL
                     float *db,          // [O] or NULL
                     const float *dy,    // [T, O]
                     const float *x,     // [T, I]
                     const float *w,     // [O, I]
                     int T, int I, int O, bool dx_fresh);

// c = a op(b) for each of B matrices: da += dc op(b)ᵀ, db += (the matching product).
void matmul_backward(float *da,          // [B, M, K] or NULL
                     float *db,          // [B, K, N] ([B, N, K] when b_transposed) or NULL
                     const float *dc,    // [B, M, N]
                     const float *a,     // [B, M, K]
                     const float *bm,    // as db
                     int B, int M, int N, int K, bool b_transposed, bool da_fresh, bool db_fresh);

// matmul_broadcast_forward's gradient: a side broadcast along an axis collects the gradient of
// every product it served (summed over that axis, as autograd sums a broadcast operand's).
void matmul_broadcast_backward(float *da,          // [A0, A1, M, K] or NULL
                               float *db,          // [B0, B1, K, N] ([.., N, K] when b_transposed) or NULL
                               const float *dc,    // [max(A0, B0), max(A1, B1), M, N]
                               const float *a,     // [A0, A1, M, K]
                               const float *bm,    // as db
                               const int a_batch[2], const int b_batch[2], int M, int N, int K, bool b_transposed,
                               bool da_fresh, bool db_fresh);

// y = xᵀ per matrix: dx += dyᵀ.
void transpose_backward(float *dx,        // [B, M, N]
                        const float *dy,  // [B, N, M]
                        int B, int M, int N, bool fresh);

void add_backward(float *dx, const float *dy, size_t n, bool fresh);             // dx += dy
void scale_backward(float *dx, const float *dy, float s, size_t n, bool fresh);  // dx += dy * s
// Masked entries (y = -inf) pass no gradient; the rest pass dy through.
void mask_backward(float *dx, const float *dy, const float *y, size_t n, bool fresh);
// y = softmax(x) per row: dx += y * (dy - sum(dy * y)).
void softmax_backward(float *dx, const float *dy, const float *y, int rows, int n, bool fresh);
// y = log_softmax(x) per row: dx += dy - exp(y) * sum(dy).
void log_softmax_backward(float *dx, const float *dy, const float *y, int rows, int n, bool fresh);

// Both LayerNorm forms; dx, dg, db may be NULL.
void layernorm_backward(float *dx,        // [T, C]
                        float *dg,        // [C]
                        float *db,        // [C]
                        const float *dy,  // [T, C]
                        const float *x,   // [T, C]
                        const float *g,   // [C]
                        int T, int C, float eps, LayerNormForm form, bool dx_fresh);

// dx = dy where x > 0, else 0. x: the input, or as well the output (y > 0 exactly where x > 0,
// and a NaN input gives y = 0): training passes y, so the input need not be kept.
void relu_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh);
// d/dx of x Phi(x) = Phi(x) + x phi(x).
void gelu_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh);

void split_heads_backward(float *dx,        // [T, H*D]
                          const float *dy,  // [H, T, D]
                          int T, int H, int D, bool fresh);
void merge_heads_backward(float *dx,        // [H, T, D]
                          const float *dy,  // [T, H*D]
                          int T, int H, int D, bool fresh);

// The shape kernels' gradients (kernels_shape.c): each routes dy back to where it came from.
void permute_backward(float *dx, const float *dy, const int dims[4], const int perm[4], int nd);
void chunk_backward(float *dx, const float *dy, int R, int N, int k, int n);
// repeat: each entry of x collects the gradients of its times copies. concat: each input takes
// its own slice of dy (dx[k] may be NULL: not wanted).
void repeat_backward(float *dx, const float *dy, int outer, int n, int inner, int times, bool interleave);
void concat_backward(float *const *dx, const float *dy, const int *n, int count, int outer, int inner);
// Max: the first position holding each column's maximum takes its gradient; mean: spread.
void pool_backward(float *dx,          // [T, C]
                   const float *dy,    // [C]
                   const float *x,     // [T, C]
                   const float *y,     // [C] the forward output
                   const float *ids,   // [T] or NULL
                   float pad_id, int T, int C, bool mean);

// Cross-entropy of softmax(logits) against targets, with label smoothing as PyTorch's
// CrossEntropyLoss(label_smoothing=e): the target distribution is (1-e) on the right token plus
// e/V everywhere. Rows whose target is `ignore` count for nothing. The loss is the sum over the
// rows that count divided by `denominator` (0: by their number, the mean); it is returned and
// its gradient written into dlogits (overwritten, not added). *count gets the rows that counted.
// A batch split in parts passes the whole batch's count as the denominator of every part.
float cross_entropy(float *dlogits,        // [N, V]
                    const float *logits,   // [N, V]
                    const float *targets,  // [N] ids
                    int N, int V, float smoothing, float ignore, int denominator, int *count);

#endif
