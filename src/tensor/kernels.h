// kernels.h: the forward kernels of the Transformer, one function per operation.
//
// Dimension legend (used in every shape comment below):
//   T   rows of a sequence tensor (S for the source, T for the target)
//   Tq  query positions, Tk key positions (attention)
//   C   d_model, the width of every residual-stream vector
//   H   nhead, the number of attention heads
//   D   d_k = C / H, the width of one head
//   F   dim_feedforward, the hidden width of the feed-forward block
//   V   vocabulary size
//   P   rows of the positional-encoding table (the longest sequence the model takes)
//   B   batch of independent matrices in a batched matmul (here: heads)
//
// Conventions: outputs first, then const inputs, then sizes. Kernels never allocate,
// print or exit. All tensors are row-major float32; token ids are float32 holding exact
// integers. Each kernel has a naive twin in tests/ref.c that it must match.
#ifndef STEPFORMER_KERNELS_H
#define STEPFORMER_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "half.h"

// out[t, :] = table[ids[t], :] * scale   (scale = sqrt(C) in the Transformer)
void embedding_forward(float *out,          // [T, C]
                       const float *ids,    // [T] token ids, each in [0, V)
                       const float *table,  // [V, C]
                       int T, int C, float scale);

// The same with the table held as the file stores it, 2 bytes a number (half.h): each row
// widened, then scaled, so out is the same bits as with the table widened first.
void embedding_forward_half(float *out,             // [T, C]
                            const float *ids,       // [T] token ids, each in [0, V)
                            const uint16_t *table,  // [V, C]
                            HalfKind kind, int T, int C, float scale);

// The sinusoidal table of "Attention Is All You Need", computed in float32 the way
// PyTorch's tutorial builds it: pe[p, 2i] = sin(p * w_i), pe[p, 2i+1] = cos(p * w_i),
// w_i = exp(-(2i) * ln(base) / C). C may be odd (the last column is then a sine).
void positional_encoding(float *pe,  // [P, C]
                         int P, int C, float base);

// out = a + b, element by element (residual connections, adding positions).
void add_forward(float *out, const float *a, const float *b, size_t n);

// out = x * s
void scale_forward(float *out, const float *x, float s, size_t n);

// out = x · wᵀ + b: a linear layer with PyTorch's weight layout [out, in].
void linear_forward(float *out,      // [T, O]
                    const float *x,  // [T, I]
                    const float *w,  // [O, I]
                    const float *b,  // [O], or NULL for no bias
                    int T, int I, int O);

// out[b] = a[b] · bm[b] for each of B matrices; with b_transposed, bm[b] is stored
// [N, K] and used as its transpose (q · kᵀ without materialising kᵀ).
void matmul_forward(float *out,       // [B, M, N]
                    const float *a,   // [B, M, K]
                    const float *bm,  // [B, K, N], or [B, N, K] when b_transposed
                    int B, int M, int N, int K, bool b_transposed);

// The same products with torch.matmul's broadcasting over the leading (batch) axes. Each side's
// batch axes come right-aligned as two, a missing axis 1: a is [A0, A1, M, K], b [B0, B1, K, N].
// out's batch is [max(A0, B0), max(A1, B1)]; the sizes of an axis are equal or one of them is 1,
// and a side whose axis is 1 serves every index along it (one key head for every query head).
void matmul_broadcast_forward(float *out,           // [max(A0, B0), max(A1, B1), M, N]
                              const float *a,       // [A0, A1, M, K]
                              const float *bm,      // [B0, B1, K, N], or [B0, B1, N, K] when b_transposed
                              const int a_batch[2],  // {A0, A1}
                              const int b_batch[2],  // {B0, B1}
                              int M, int N, int K, bool b_transposed);

// Which matrix of a side with batch axes `batch` serves out's matrix (i, j): along an axis of
// size 1, its only one.
size_t matmul_batch_index(const int batch[2], int i, int j);

// out[b] = x[b]ᵀ for each of B matrices.
void transpose_forward(float *out,      // [B, N, M]
                       const float *x,  // [B, M, N]
                       int B, int M, int N);

// Attention masking: out = x, with -inf where a query may not look. With causal, query q
// sees key k only if k <= q + (Tk - Tq). With key_ids, keys whose id is pad_id are hidden.
void mask_forward(float *out,            // [H, Tq, Tk]
                  const float *x,        // [H, Tq, Tk]
                  const float *key_ids,  // [Tk], or NULL for no padding mask
                  float pad_id, bool causal, int H, int Tq, int Tk);

// Row softmax, numerically stable (the row maximum is subtracted first). A row whose
// entries are all -inf (every key masked) becomes all zeros: it attends to nothing.
// softmax_forward (softmax.c) runs, vectorised, with exp_forward's exponential and a row's sum
// taken in vector lanes; softmax_reference is the plain loop with libm's expf that it matches
// to within a few units in the last place (the lesson panel shows this one).
void softmax_forward(float *out, const float *x, int rows, int n);    // [rows, n]
void softmax_reference(float *out, const float *x, int rows, int n);  // [rows, n]

// out = e^x, element by element: the exponential softmax_forward uses, vectorised, within
// 2 units in the last place of e^x; 0 below -104, +inf above 88.73.
void exp_forward(float *out, const float *x, size_t n);
// out = x sigmoid(a), element by element, on that exponential: x / (1 + e^-|a|) where a >= 0, and
// x e^-|a| / (1 + e^-|a|) where not, so nothing leaves the floats (gelu_tanh, silu).
void sigmoid_times_forward(float *out,      // [n]
                           const float *x,  // [n]
                           const float *a,  // [n]
                           size_t n);

// Row log-softmax, stable; an all -inf row becomes all -inf.
void log_softmax_forward(float *out, const float *x, int rows, int n);  // [rows, n]

typedef enum {
    LN_TORCH,      // nn.LayerNorm: (x - mean) / sqrt(var + eps), var biased (divide by C)
    LN_ANNOTATED,  // Annotated Transformer: (x - mean) / (std + eps), std unbiased (C - 1)
    LN_COUNT
} LayerNormForm;

// The statistics of LN_ROWS rows (or fewer, R) of layer_norm, side by side: each row's mean,
// its unbiased std (the annotated form's) and the factor its deviations are multiplied by.
// Each row's sums are the same chain of adds in the same order as that row alone (so the same
// bits, whichever rows run with it), but R independent chains keep the adder busy where one
// chain would wait on each add; with AVX2 and C a multiple of 8, eight rows go as the eight
// lanes of a vector (layernorm8.h). Forward and backward both start from these.
enum { LN_ROWS = 8 };
void layernorm_stats(float mean[LN_ROWS], float std[LN_ROWS], float inv[LN_ROWS],
                     const float *x,  // [R, C]
                     int R, int C, float eps, LayerNormForm form);

// out[t] = g * normalised(x[t]) + b, normalised as `form` says; b may be NULL (no bias).
void layernorm_forward(float *out,      // [T, C]
                       const float *x,  // [T, C]
                       const float *g,  // [C]
                       const float *b,  // [C] or NULL
                       int T, int C, float eps, LayerNormForm form);

void relu_forward(float *out, const float *x, size_t n);
// GELU with the exact erf form (PyTorch's default): x * (1 + erf(x / sqrt 2)) / 2.
void gelu_forward(float *out, const float *x, size_t n);

// [T, H*D] -> [H, T, D]: head h takes columns h*D .. h*D+D-1.
void split_heads_forward(float *out,      // [H, T, D]
                         const float *x,  // [T, H*D]
                         int T, int H, int D);

// [H, T, D] -> [T, H*D]: the inverse of split_heads (the "concat" of the paper).
void merge_heads_forward(float *out,      // [T, H*D]
                         const float *x,  // [H, T, D]
                         int T, int H, int D);

// out[t] = the index of the largest x[t, :] (the first one on ties), as a float id.
// The index of the largest of x[0..n) (the first of equals).
int row_argmax(const float *x, int n);
void argmax_forward(float *out,      // [T]
                    const float *x,  // [T, V]
                    int T, int V);

// The matrix multiply under linear and matmul: C = A · op(B) (+ bias per column), with
// op(B) = B [K, N] or, with b_transposed, B stored [N, K]. Leading dimensions are row strides.
void sgemm(float *c, int ldc,         // [M, N]
           const float *a, int lda,   // [M, K]
           const float *b, int ldb,   // [K, N] or [N, K]
           const float *bias,         // [N] or NULL
           int M, int N, int K, bool b_transposed);

// sgemm with B held 2 bytes a number (half.h), laid out as sgemm's b: each tile of it is widened
// as it is packed, so C is sgemm's on B widened, bit for bit, without B ever widened whole.
void sgemm_half(float *c, int ldc,             // [M, N]
                const float *a, int lda,       // [M, K]
                const uint16_t *b, int ldb,    // [K, N] or [N, K]
                HalfKind kind,
                const float *bias,             // [N] or NULL
                int M, int N, int K, bool b_transposed);

// C += A · op(B): the same product, added to what C holds (for gradients).
void sgemm_acc(float *c, int ldc,         // [M, N]
               const float *a, int lda,   // [M, K]
               const float *b, int ldb,   // [K, N] or [N, K]
               int M, int N, int K, bool b_transposed);

// C = Aᵀ · B (accumulate: C += Aᵀ · B) with A stored [K, M]: gradients of weights (dyᵀ · x)
// without a transposed copy.
void sgemm_tn(float *c, int ldc,         // [M, N]
              const float *a, int lda,   // [K, M]
              const float *b, int ldb,   // [K, N]
              int M, int N, int K, bool accumulate);

// The loops linear and matmul compute, written plainly: the lesson panel shows these, and
// test_kernels holds the blocked GEMM (sgemm, sgemm_prepacked) to them.
void linear_reference(float *out,      // [T, O]
                      const float *x,  // [T, I]
                      const float *w,  // [O, I]
                      const float *b,  // [O] or NULL
                      int T, int I, int O);
void matmul_reference(float *out,           // [max(A0, B0), max(A1, B1), M, N]
                      const float *a,       // [A0, A1, M, K]
                      const float *bm,      // [B0, B1, K, N], or [B0, B1, N, K] when b_transposed
                      const int a_batch[2],  // {A0, A1}
                      const int b_batch[2],  // {B0, B1}
                      int M, int N, int K, bool b_transposed);

// A weight packed once into the panels sgemm's micro-kernel reads, so products with it skip
// packing op(B) on every call (a linear over a few rows spends as long packing the weight as
// multiplying by it). The packed product is sgemm's, bit for bit: the same micro-kernel adds
// the same terms in the same order.
size_t sgemm_packed_floats(int N, int K);       // room the packed op(B) [K, N] takes
// That room, allocated on a cache line (no row of a panel the micro-kernel loads as one vector
// straddles two); NULL when out of memory. Release it with free().
float *sgemm_packed_new(int N, int K);
void sgemm_pack(float *packed,                   // [sgemm_packed_floats(N, K)]
                const float *b, int ldb,         // [K, N] or [N, K]
                int N, int K, bool b_transposed);
void sgemm_prepacked(float *c, int ldc,          // [M, N]
                     const float *a, int lda,    // [M, K]
                     const float *packed,        // op(B) [K, N], from sgemm_pack
                     const float *bias,          // [N] or NULL
                     int M, int N, int K);
// linear_forward with W packed by sgemm_pack(packed, w, I, O, I, true).
void linear_forward_packed(float *out,           // [T, O]
                           const float *x,       // [T, I]
                           const float *packed,  // Wᵀ [I, O], packed
                           const float *b,       // [O] or NULL
                           int T, int I, int O);

// ---- moving numbers between axes (kernels_shape.c) ----

// out = x with its axes reordered: out's axis k is x's axis perm[k] (PyTorch's permute).
void permute_forward(float *out,          // [dims[perm[0]], ..., dims[perm[nd-1]]]
                     const float *x,      // [dims[0], ..., dims[nd-1]]
                     const int dims[4], const int perm[4], int nd);

// Piece k of n along the last axis (PyTorch's chunk(n, dim=-1)[k]).
void chunk_forward(float *out,      // [R, N/n]
                   const float *x,  // [R, N]
                   int R, int N, int k, int n);

// Along one axis, seen as x [outer, n, inner]: out [outer, n * times, inner]. With interleave,
// out's entry j along the axis is x's entry j / times: each entry `times` times in place
// (torch.repeat_interleave(x, times, dim), the `repeat_kv` of grouped-query attention: key
// head g serves query heads g*times .. g*times + times-1). Without, it is x's entry j % n: the
// whole axis `times` times over (x.repeat along that axis).
void repeat_forward(float *out,      // [outer, n * times, inner]
                    const float *x,  // [outer, n, inner]
                    int outer, int n, int inner, int times, bool interleave);

// The count tensors x[k] [outer, n[k], inner] side by side along the axis (torch.cat).
void concat_forward(float *out,              // [outer, n[0] + ... + n[count-1], inner]
                    const float *const *x,   // count tensors, x[k] [outer, n[k], inner]
                    const int *n, int count, int outer, int inner);

// out[c] = the maximum (or, with mean, the mean) of x[t, c] over the positions t whose id is
// not pad_id (every position when ids is NULL); 0 if no position counts.
void pool_forward(float *out,        // [C]
                  const float *x,    // [T, C]
                  const float *ids,  // [T] or NULL
                  float pad_id, int T, int C, bool mean);

// Which micro-kernel sgemm picked for this CPU: "avx512", "avx2" or "baseline".
const char *sgemm_kernel_name(void);

#endif
