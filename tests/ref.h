// ref.h: naive twins of the kernels: plain loops, double accumulation, written from the
// definitions and independent of src/core. The kernel tests compare against these.
#ifndef STEPFORMER_REF_H
#define STEPFORMER_REF_H

#include <stdbool.h>

// C[b] = A[b] · op(B[b]); op(B) = B [K, N] or, transposed, B stored [N, K]. Optional bias [N].
void ref_matmul(float *c, const float *a, const float *b, const float *bias, int B, int M, int N,
                int K, bool bt);
void ref_embedding(float *out, const float *ids, const float *table, int T, int C, float scale);
// The paper's formula in double: sin(p / base^(2i/C)), cos(...).
void ref_positional(double *pe, int P, int C, double base);
void ref_transpose(float *out, const float *x, int B, int M, int N);
void ref_mask(float *out, const float *x, const float *key_ids, float pad, bool causal, int H,
              int Tq, int Tk);
void ref_softmax(float *out, const float *x, int rows, int n, bool log_form);
// annotated: unbiased std with eps added to it; otherwise biased variance with eps inside.
void ref_layernorm(float *out, const float *x, const float *g, const float *b, int T, int C,
                   double eps, bool annotated);
void ref_gelu(float *out, const float *x, int n);
void ref_split_heads(float *out, const float *x, int T, int H, int D);
void ref_merge_heads(float *out, const float *x, int T, int H, int D);

#endif
