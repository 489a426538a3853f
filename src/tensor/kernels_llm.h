// kernels_llm.h: the kernels the families of real models add to the paper's: GPT-2's GELU with
// the tanh approximation and its Conv1D weights stored [in, out]; LLaMA's RMSNorm, SiLU, the
// elementwise product of SwiGLU, and rotary positions (RoPE). Forward and backward side by side;
// the backward kernels follow kernels_backward.h (they add into their outputs; `fresh` writes).
//
// Dimensions: T positions, C width, H heads, D a head's width, I and O a linear map's input
// and output features, ldw the row stride of a weight stored [I, O_all] (one chunk of O_all).
#ifndef STEPFORMER_KERNELS_LLM_H
#define STEPFORMER_KERNELS_LLM_H

#include <stdbool.h>
#include <stddef.h>

// gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): Hugging Face's gelu_new.
void gelu_tanh_forward(float *out, const float *x, size_t n);
void gelu_tanh_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh);

// silu(x) = x sigmoid(x) (SiLU, also called swish).
void silu_forward(float *out, const float *x, size_t n);
// The plain loops these two compute (vectorised, x sigmoid(a) on exp_forward's exponential): the
// lesson panel shows them, and test_kernels holds the kernels to them.
void gelu_tanh_reference(float *out, const float *x, size_t n);
void silu_reference(float *out, const float *x, size_t n);
void silu_backward(float *dx, const float *dy, const float *x, size_t n, bool fresh);

// A banned column: out = x with column id of every row at -inf (a token never chosen: softmax
// gives it 0, argmax never picks it). Backward: dx = dy, but 0 in column id.
void ban_forward(float *out,      // [rows, n]
                 const float *x,  // [rows, n]
                 size_t rows, int n, int id);
void ban_backward(float *dx,       // [rows, n]
                  const float *dy, // [rows, n]
                  size_t rows, int n, int id, bool fresh);

// out = a * b, element by element. da += dy * b, db += dy * a (either may be NULL).
void mul_forward(float *out, const float *a, const float *b, size_t n);
void mul_backward(float *da, float *db, const float *dy, const float *a, const float *b, size_t n, bool da_fresh,
                  bool db_fresh);

// y = g * x / sqrt(mean(x^2) + eps), each row (T rows of C).
void rms_norm_forward(float *out,      // [T, C]
                      const float *x,  // [T, C]
                      const float *g,  // [C]
                      int T, int C, float eps);
// dx += r (g dy) - x r^3 mean(g dy x), dg += sum over rows of dy x r  (r = 1/sqrt(mean(x^2)+eps)).
void rms_norm_backward(float *dx,        // [T, C] or NULL
                       float *dg,        // [C] or NULL
                       const float *dy,  // [T, C]
                       const float *x,   // [T, C]
                       const float *g,   // [C]
                       int T, int C, float eps, bool dx_fresh);

// Rotary positions on q or k [H, T, D]: position p = pos0 + t turns each pair of columns by the
// angle p * theta^(-2i/D), pair i being (i, i + D/2) (Hugging Face's rotate_half) or, with
// adjacent, (2i, 2i + 1) (Meta's checkpoints, llama2.c). The angles are computed as Hugging Face
// computes them (inv_freq in float32, p * inv_freq in float32, cos and sin of that).
void rope_forward(float *out,      // [H, T, D]
                  const float *x,  // [H, T, D]
                  int H, int T, int D, int pos0, float theta, bool adjacent);
// The gradient turns back: dx += the rotation by -angle of dy.
void rope_backward(float *dx, const float *dy, int H, int T, int D, int pos0, float theta, bool adjacent, bool fresh);
// The angle of pair i at position p, and the pair's two columns.
float rope_angle(int p, int i, int D, float theta);
void rope_pair(int i, int D, bool adjacent, int *c0, int *c1);

// out = x w (+ b): a linear map whose weight is stored [I, O_all] (GPT-2's Conv1D), of which
// columns w[:, 0..O) are used (w already moved to the chunk), each row ldw floats apart.
void linear_in_out_forward(float *out,      // [T, O]
                           const float *x,  // [T, I]
                           const float *w,  // [I, ldw]
                           const float *b,  // [O] or NULL
                           int T, int I, int O, int ldw);
// dx += dy wᵀ, dw += xᵀ dy, db += column sums of dy (each may be NULL).
void linear_in_out_backward(float *dx,        // [T, I] or NULL
                            float *dw,        // [I, ldw] or NULL
                            float *db,        // [O] or NULL
                            const float *dy,  // [T, O]
                            const float *x,   // [T, I]
                            const float *w,   // [I, ldw]
                            int T, int I, int O, int ldw, bool dx_fresh);

#endif
