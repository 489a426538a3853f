// ops.c: the op table, shape checking, and the dispatch from a stage to its kernel.
#include "ops.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const OpInfo op_info[OP_COUNT] = {
    [OP_EMBEDDING] = {"embedding", 2, 2, "scale", "x[t] = E[id(t)] * scale   (scale = sqrt(d_model))",
                      "embedding_forward", "looks up each token's row of the embedding table"},
    [OP_ADD_POSITIONS] = {"add_positions", 2, 2, "",
                          "x[t] = e[t] + PE[t];  PE[t, 2i] = sin(t / 10000^(2i/d)), "
                          "PE[t, 2i+1] = cos(t / 10000^(2i/d))",
                          "add_forward", "adds the positional encoding of each position"},
    [OP_LINEAR] = {"linear", 2, 3, "chunk chunks", "y = x W^T + b", "linear_reference",
                   "a learned linear map of every row",
                   "ran: the blocked GEMM of gemm.c, which the tests hold to this loop"},
    [OP_SPLIT_HEADS] = {"split_heads", 1, 1, "heads", "head h = columns h*d_k .. (h+1)*d_k - 1",
                        "split_heads_forward", "cuts the columns into one slice per head"},
    [OP_MERGE_HEADS] = {"merge_heads", 1, 1, "", "y = concat(head_1, ..., head_h)",
                        "merge_heads_forward", "puts the heads' columns side by side again"},
    [OP_MATMUL] = {"matmul", 2, 2, "", "C[h] = A[h] B[h]   (one product per head; a side with 1 head serves every head)",
                   "matmul_reference", "a matrix product for each head",
                   "ran: the blocked GEMM of gemm.c, which the tests hold to this loop"},
    [OP_TRANSPOSE] = {"transpose", 1, 1, "", "y = x^T", "transpose_forward",
                      "swaps rows and columns"},
    [OP_SCALE] = {"scale", 1, 1, "by", "y = x * s   (attention: s = 1 / sqrt(d_k))",
                  "scale_forward", "multiplies every entry by one number"},
    [OP_MASK] = {"mask", 1, 2, "causal", "y = x, or -inf where a query may not see the key",
                 "mask_forward", "hides keys: the future (causal) and padding"},
    [OP_SOFTMAX] = {"softmax", 1, 1, "", "p_j = exp(x_j - max) / sum_k exp(x_k - max)",
                    "softmax_reference", "turns each row into probabilities that sum to 1",
                    "ran: the vectorised softmax of softmax.c, which the tests hold to this loop"},
    [OP_LOG_SOFTMAX] = {"log_softmax", 1, 1, "", "log p_j = x_j - max - log sum_k exp(x_k - max)",
                        "log_softmax_forward", "log-probabilities of each row"},
    [OP_ADD] = {"add", 2, 2, "", "y = a + b", "add_forward",
                "the residual connection: adds a sublayer's output to its input"},
    [OP_LAYER_NORM] = {"layer_norm", 2, 3, "eps annotated",
                       "y = g (x - mean) / sqrt(var + eps) + b", "layernorm_forward",
                       "normalises each row to mean 0 and variance 1, then scales and shifts"},
    [OP_ACTIVATION] = {"activation", 1, 1, "", "relu(x) = max(0, x)  or  gelu(x) = x Phi(x)",
                       "relu_forward", "the feed-forward non-linearity the model was built with"},
    [OP_RELU] = {"relu", 1, 1, "", "relu(x) = max(0, x)", "relu_forward", "zeroes negatives"},
    [OP_GELU] = {"gelu", 1, 1, "", "gelu(x) = x (1 + erf(x / sqrt 2)) / 2", "gelu_forward",
                 "a smooth ReLU"},
    [OP_ARGMAX] = {"argmax", 1, 1, "", "id = argmax_j x_j", "argmax_forward",
                   "picks the most likely token of each row"},
    [OP_POSITIONAL_TABLE] = {"positional_table", 0, 0, "positions width base",
                             "PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(p / base^(2i/d))",
                             "positional_encoding", "builds the sinusoidal table"},
    [OP_RESHAPE] = {"reshape", 1, 1, "", "y = the same numbers read as another shape (PyTorch's view)",
                    "memcpy", "reinterprets the numbers in another shape; nothing moves"},
    [OP_PERMUTE] = {"permute", 1, 1, "", "y[i_p0, i_p1, ...] = x[i_0, i_1, ...]", "permute_forward",
                    "reorders the axes (PyTorch's permute)"},
    [OP_CHUNK] = {"chunk", 1, 1, "chunk chunks", "y = x[..., k*N/n : (k+1)*N/n]", "chunk_forward",
                  "takes one of n equal pieces of the last axis"},
    [OP_MAX_POOL] = {"max_pool", 1, 2, "", "y[c] = max_t x[t, c]", "pool_forward",
                     "keeps each column's largest value over the positions"},
    [OP_MEAN_POOL] = {"mean_pool", 1, 2, "", "y[c] = mean_t x[t, c]", "pool_forward",
                      "averages each column over the positions"},
    [OP_REPEAT] = {"repeat", 1, 1, "times axis interleave",
                   "y[.., j, ..] = x[.., j / times, ..]   (interleave=0: x[.., j mod n, ..])", "repeat_forward",
                   "repeats each entry of one axis in place (the key/value heads of grouped-query attention)"},
    [OP_CONCAT] = {"concat", 2, STAGE_MAX_IN, "axis", "y = [a | b | ...] along the axis", "concat_forward",
                   "joins tensors end to end along one axis"},
    [OP_GELU_TANH] = {"gelu_tanh", 1, 1, "", "gelu_tanh(x) = x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2",
                      "gelu_tanh_reference", "GPT-2's smooth ReLU (gelu_new): GELU with tanh in place of erf",
                      "ran: gelu_tanh_forward, this loop with the softmax's vectorised exponential, held to it"},
    [OP_SILU] = {"silu", 1, 1, "", "silu(x) = x / (1 + exp(-x))", "silu_reference",
                 "the smooth gate of LLaMA's feed-forward (SiLU, also called swish)",
                 "ran: silu_forward, this loop with the softmax's vectorised exponential, held to it"},
    [OP_MUL] = {"mul", 2, 2, "", "y = a * b   (element by element)", "mul_forward",
                "multiplies two tensors entry by entry: SwiGLU's gate times its value"},
    [OP_RMS_NORM] = {"rms_norm", 2, 2, "eps", "y = g x / sqrt(mean(x^2) + eps)", "rms_norm_forward",
                     "scales each row to root-mean-square 1 (no mean taken away, no bias), then by g"},
    [OP_ROPE] = {"rope", 1, 1, "theta adjacent",
                 "pair i of position p turns by p / theta^(2i/D):  y_a = x_a cos - x_b sin,  y_b = x_b cos + x_a sin",
                 "rope_forward", "rotary positions: turns each pair of a head's columns by an angle that grows with the position"},
    [OP_BAN] = {"ban", 1, 1, "id", "y = x, but y[.., id] = -inf", "ban_forward",
                "a token that is never chosen: its score set to -inf (Marian's pad, bad_words_ids)"},
};

// Every op has a row: a missing one would leave a NULL name (checked by op_table_complete).
bool op_table_complete(void) {
    for (int i = 0; i < OP_COUNT; i++)
        if (!op_info[i].name || !op_info[i].formula || !op_info[i].kernel) return false;
    return true;
}

bool op_lookup(const char *name, Op *out) {
    for (int i = 0; i < OP_COUNT; i++)
        if (op_info[i].name && strcmp(op_info[i].name, name) == 0) {
            *out = (Op)i;
            return true;
        }
    return false;
}


// A shape error naming the op and every input with its shape.
static bool shape_err(const Stage *st, const char *where, Err *e, const char *why) {
    char buf[400], sh[64];
    int n = snprintf(buf, sizeof buf, "%s: %s: %s (", where, op_info[st->op].name, why);
    for (int i = 0; i < st->n_in && n < (int)sizeof buf; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s is %s", i ? ", " : "", st->in_name[i],
                      shape_str(&st->in_shape[i], sh, sizeof sh));
    return err_set(e, "%s)", buf);
}

static bool need_ndim(const Stage *st, int i, int lo, int hi, const char *where, Err *e) {
    int nd = st->in_shape[i].ndim;
    if (nd >= lo && nd <= hi) return true;
    char why[128];
    snprintf(why, sizeof why, "%s must have %d%s%d dimensions", st->in_name[i], lo,
             hi > lo ? " to " : "", hi > lo ? hi : lo);
    if (hi == lo) snprintf(why, sizeof why, "%s must have %d dimensions", st->in_name[i], lo);
    return shape_err(st, where, e, why);
}

// Each side's batch axes (all but its last two), right-aligned into two; a missing axis is 1.
static void batch_of(const Shape *s, int batch[2]) {
    batch[0] = batch[1] = 1;
    for (int k = s->ndim - 3, slot = 1; k >= 0; k--, slot--) batch[slot] = s->dim[k];
}

void matmul_sizes(const Stage *st, int a_batch[2], int b_batch[2], int *M, int *N, int *K) {
    const Shape *a = &st->in_shape[0], *b = &st->in_shape[1];
    batch_of(a, a_batch), batch_of(b, b_batch);
    *M = a->dim[a->ndim - 2], *K = shape_last(a);
    *N = st->attr.b_transposed ? b->dim[b->ndim - 2] : shape_last(b);
}

// torch.matmul's rule: the inner sizes agree, and each batch axis is equal on both sides or 1
// on one of them (that side serves every index along it).
static bool infer_matmul(Stage *st, const char *where, Err *e) {
    const Shape *a = &st->in_shape[0], *b = &st->in_shape[1];
    if (!need_ndim(st, 0, 2, SHAPE_MAX_DIMS, where, e) || !need_ndim(st, 1, 2, SHAPE_MAX_DIMS, where, e)) return false;
    int ab[2], bb[2], M, N, K;
    matmul_sizes(st, ab, bb, &M, &N, &K);
    const int bk = st->attr.b_transposed ? shape_last(b) : b->dim[b->ndim - 2];
    if (K != bk) return shape_err(st, where, e, "inner dimensions differ");
    for (int k = 0; k < 2; k++)
        if (ab[k] != bb[k] && ab[k] != 1 && bb[k] != 1) {
            char why[200];
            snprintf(why, sizeof why, "the leading dimensions %d and %d differ: each must be equal on both sides, or 1 "
                     "on one side (which then serves every index)", ab[k], bb[k]);
            return shape_err(st, where, e, why);
        }
    const int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    st->shape.ndim = nd;
    for (int k = 0; k < nd - 2; k++) {
        const int slot = k + 4 - nd;  // the batch slot of out's axis k
        st->shape.dim[k] = ab[slot] > bb[slot] ? ab[slot] : bb[slot];
    }
    st->shape.dim[nd - 2] = M, st->shape.dim[nd - 1] = N;
    return true;
}

static bool infer_linear(Stage *st, const char *where, Err *e) {
    const Shape *x = &st->in_shape[0], *w = &st->in_shape[1];
    if (!need_ndim(st, 0, 1, 2, where, e) || !need_ndim(st, 1, 2, 2, where, e)) return false;
    const bool io = st->attr.w_in_out;
    const int I = w->dim[io ? 0 : 1], O = w->dim[io ? 1 : 0];
    if (shape_last(x) != I)
        return shape_err(st, where, e, io ? "x's last dimension must equal W's first (W is stored [in x out])"
                                          : "x's last dimension must equal W's second (W is [out x in])");
    const Shape *b = &st->in_shape[2];  // [O], or a [1, O] row (Marian's final_logits_bias)
    if (st->n_in == 3 && !((b->ndim == 1 && b->dim[0] == O) || (b->ndim == 2 && b->dim[0] == 1 && b->dim[1] == O)))
        return shape_err(st, where, e, "the bias must have one entry per output of W ([O], or a [1, O] row)");
    st->shape = x->ndim == 1 ? shape1(O) : shape2(x->dim[0], O);
    return true;
}

static bool infer_norm(Stage *st, const char *where, Err *e) {
    if (!need_ndim(st, 0, 2, 2, where, e)) return false;
    int C = shape_last(&st->in_shape[0]);
    for (int i = 1; i < st->n_in; i++)  // the bias may be left out (nanoGPT's bias=False)
        if (st->in_shape[i].ndim != 1 || st->in_shape[i].dim[0] != C)
            return shape_err(st, where, e, "gain and bias must have one entry per column of x");
    st->shape = st->in_shape[0];
    return true;
}

static bool infer_rope(Stage *st, const char *where, Err *e) {
    if (!need_ndim(st, 0, 3, 3, where, e)) return false;
    if (shape_last(&st->in_shape[0]) % 2)
        return shape_err(st, where, e, "a head's width must be even: its columns turn in pairs");
    if (!(st->attr.theta > 1.0f))
        return shape_err(st, where, e, "theta= (rope_theta) must be above 1");
    st->shape = st->in_shape[0];
    return true;
}

static bool infer_heads(Stage *st, const char *where, Err *e) {
    const Shape *x = &st->in_shape[0];
    if (st->op == OP_MERGE_HEADS) {
        if (!need_ndim(st, 0, 3, 3, where, e)) return false;
        st->shape = shape2(x->dim[1], x->dim[0] * x->dim[2]);
        return true;
    }
    if (!need_ndim(st, 0, 2, 2, where, e)) return false;
    int H = st->attr.heads;
    if (H <= 0 || x->dim[1] % H != 0) {
        char why[96];
        snprintf(why, sizeof why, "heads=%d must divide the %d columns", H, x->dim[1]);
        return shape_err(st, where, e, why);
    }
    st->shape = shape3(H, x->dim[0], x->dim[1] / H);
    return true;
}

static bool infer_mask(Stage *st, const char *where, Err *e) {
    if (!need_ndim(st, 0, 3, 3, where, e)) return false;
    const Shape *x = &st->in_shape[0];
    if (st->n_in == 2 && (st->in_shape[1].ndim != 1 || st->in_shape[1].dim[0] != x->dim[2]))
        return shape_err(st, where, e, "the key ids must have one entry per key (x's last dimension)");
    st->shape = *x;
    return true;
}

static bool infer_tokens(Stage *st, const ModelConfig *cfg, const char *where, Err *e) {
    (void)cfg;
    const Shape *a = &st->in_shape[0], *t = &st->in_shape[1];
    if (st->op == OP_EMBEDDING) {
        if (!need_ndim(st, 0, 1, 1, where, e) || !need_ndim(st, 1, 2, 2, where, e)) return false;
        st->shape = shape2(a->dim[0], t->dim[1]);
        return true;
    }
    // add_positions: the table is [P, C], [P, 1, C] (the tutorial's buffer) or [1, P, C].
    if (!need_ndim(st, 0, 2, 2, where, e) || !need_ndim(st, 1, 2, 3, where, e)) return false;
    const int rows = t->ndim == 3 && t->dim[0] == 1 ? t->dim[1] : t->dim[0];
    if (shape_last(t) != a->dim[1] || (t->ndim == 3 && t->dim[1] != 1 && t->dim[0] != 1))
        return shape_err(st, where, e, "the table must be [positions x d_model], [positions x 1 x d_model] "
                         "or [1 x positions x d_model] for this x");
    if (a->dim[0] > rows) {
        char why[128];
        snprintf(why, sizeof why, "%d positions, but the table has only %d rows", a->dim[0], rows);
        return shape_err(st, where, e, why);
    }
    st->shape = *a;
    return true;
}

static bool infer_reshape(Stage *st, const char *where, Err *e) {
    const OpAttrs *a = &st->attr;
    const int64_t n = shape_numel(&st->in_shape[0]);
    int64_t known = 1;
    int free_axis = -1;
    char why[160];
    if (a->n_dims < 1) return shape_err(st, where, e, "give the new shape: reshape(x, d0, d1, ...)");
    for (int k = 0; k < a->n_dims; k++) {
        if (a->dims[k] == -1 && free_axis < 0) free_axis = k;
        else if (a->dims[k] >= 1) known *= a->dims[k];
        else return shape_err(st, where, e, "each new dimension is a positive whole number, or -1 once");
    }
    if ((free_axis < 0 && known != n) || (free_axis >= 0 && n % known != 0)) {
        snprintf(why, sizeof why, "%lld numbers do not fill the new shape", (long long)n);
        return shape_err(st, where, e, why);
    }
    st->shape.ndim = a->n_dims;
    for (int k = 0; k < a->n_dims; k++) st->shape.dim[k] = k == free_axis ? (int)(n / known) : a->dims[k];
    return true;
}

static bool infer_permute(Stage *st, const char *where, Err *e) {
    const OpAttrs *a = &st->attr;
    const Shape *x = &st->in_shape[0];
    unsigned seen = 0;
    bool ok = a->n_dims == x->ndim;
    for (int k = 0; k < a->n_dims && ok; k++) {
        ok = a->dims[k] >= 0 && a->dims[k] < x->ndim && !(seen & (1u << a->dims[k]));
        seen |= 1u << (ok ? a->dims[k] : 0);
    }
    if (!ok) return shape_err(st, where, e, "give each axis of x exactly once: permute(x, 1, 0, 2)");
    st->shape.ndim = x->ndim;
    for (int k = 0; k < x->ndim; k++) st->shape.dim[k] = x->dim[a->dims[k]];
    return true;
}

static bool infer_pieces(Stage *st, const char *where, Err *e) {
    const Shape *x = &st->in_shape[0];
    if (st->op == OP_CHUNK) {
        const OpAttrs *a = &st->attr;
        if (a->chunks < 1 || a->chunk < 0 || a->chunk >= a->chunks || shape_last(x) % a->chunks != 0)
            return shape_err(st, where, e, "chunk=k of chunks=n needs 0 <= k < n and n dividing the last axis");
        st->shape = *x;
        st->shape.dim[x->ndim - 1] = shape_last(x) / a->chunks;
        return true;
    }
    if (!need_ndim(st, 0, 2, 2, where, e)) return false;
    if (st->n_in == 2 && (st->in_shape[1].ndim != 1 || st->in_shape[1].dim[0] != x->dim[0]))
        return shape_err(st, where, e, "the ids must have one entry per position (x's rows)");
    st->shape = shape1(x->dim[1]);
    return true;
}

void axis_split(const Shape *s, int axis, int *outer, int *n, int *inner) {
    *outer = *inner = 1;
    for (int k = 0; k < axis; k++) *outer *= s->dim[k];
    for (int k = axis + 1; k < s->ndim; k++) *inner *= s->dim[k];
    *n = s->dim[axis];
}

// The axis= of repeat and concat, counted from the end when negative, made 0 .. ndim-1.
static bool resolve_axis(Stage *st, const char *where, Err *e) {
    const int nd = st->in_shape[0].ndim, ax = st->attr.axis < 0 ? st->attr.axis + nd : st->attr.axis;
    if (nd < 1 || ax < 0 || ax >= nd) {
        char why[120];
        snprintf(why, sizeof why, "axis=%d is not an axis of a tensor of %d dimensions (0 to %d, or -1 for the last)",
                 st->attr.axis, nd, nd - 1);
        return shape_err(st, where, e, why);
    }
    st->attr.axis = ax;
    return true;
}

static bool infer_repeat(Stage *st, const char *where, Err *e) {
    if (!resolve_axis(st, where, e)) return false;
    if (st->attr.times < 1) return shape_err(st, where, e, "times= must be a whole number of 1 or more");
    if ((int64_t)st->in_shape[0].dim[st->attr.axis] * st->attr.times > (1 << 30))
        return shape_err(st, where, e, "times= makes the axis longer than 2^30");
    st->shape = st->in_shape[0];
    st->shape.dim[st->attr.axis] *= st->attr.times;
    return true;
}

static bool infer_concat(Stage *st, const char *where, Err *e) {
    if (!resolve_axis(st, where, e)) return false;
    const Shape *a = &st->in_shape[0];
    st->shape = *a;
    for (int j = 1; j < st->n_in; j++) {
        const Shape *b = &st->in_shape[j];
        bool fits = b->ndim == a->ndim;
        for (int k = 0; k < a->ndim && fits; k++) fits = k == st->attr.axis || b->dim[k] == a->dim[k];
        if (!fits) return shape_err(st, where, e, "every tensor must have the same shape but along the axis");
        if ((int64_t)st->shape.dim[st->attr.axis] + b->dim[st->attr.axis] > (1 << 30))
            return shape_err(st, where, e, "the joined axis would be longer than 2^30");
        st->shape.dim[st->attr.axis] += b->dim[st->attr.axis];
    }
    return true;
}

bool op_infer(Stage *st, const ModelConfig *cfg, const char *where, Err *e) {
    st->kind = TK_VALUES;
    switch (st->op) {
    case OP_EMBEDDING:
    case OP_ADD_POSITIONS: return infer_tokens(st, cfg, where, e);
    case OP_LINEAR: return infer_linear(st, where, e);
    case OP_SPLIT_HEADS:
    case OP_MERGE_HEADS: return infer_heads(st, where, e);
    case OP_MATMUL: return infer_matmul(st, where, e);
    case OP_TRANSPOSE:
        if (!need_ndim(st, 0, 2, 3, where, e)) return false;
        st->shape = st->in_shape[0];
        st->shape.dim[st->shape.ndim - 1] = st->in_shape[0].dim[st->shape.ndim - 2];
        st->shape.dim[st->shape.ndim - 2] = shape_last(&st->in_shape[0]);
        return true;
    case OP_MASK: return infer_mask(st, where, e);
    case OP_ADD:
    case OP_MUL:
        if (!shape_eq(&st->in_shape[0], &st->in_shape[1]))
            return shape_err(st, where, e, "both sides must have the same shape");
        st->shape = st->in_shape[0];
        return true;
    case OP_LAYER_NORM:
    case OP_RMS_NORM: return infer_norm(st, where, e);
    case OP_ROPE: return infer_rope(st, where, e);
    case OP_POSITIONAL_TABLE:
        if (st->attr.positions < 1 || st->attr.width < 1 || st->attr.positions > 100000 ||
            st->attr.width > 100000 || !(st->attr.base > 1.0f))
            return err_set(e, "%s: positional_table needs positions >= 1, width >= 1 and base > 1, not "
                           "positions=%d width=%d base=%g (left out, they are max_positions, d_model "
                           "and 10000)", where, st->attr.positions, st->attr.width, (double)st->attr.base);
        st->shape = shape2(st->attr.positions, st->attr.width);
        return true;
    case OP_RESHAPE: return infer_reshape(st, where, e);
    case OP_PERMUTE: return infer_permute(st, where, e);
    case OP_CHUNK:
    case OP_MAX_POOL:
    case OP_MEAN_POOL: return infer_pieces(st, where, e);
    case OP_REPEAT: return infer_repeat(st, where, e);
    case OP_CONCAT: return infer_concat(st, where, e);
    case OP_ARGMAX:
        if (!need_ndim(st, 0, 2, 2, where, e)) return false;
        st->shape = shape1(st->in_shape[0].dim[0]);
        st->kind = TK_IDS;
        return true;
    case OP_SOFTMAX:
    case OP_LOG_SOFTMAX:
    case OP_SCALE:
    case OP_ACTIVATION:
    case OP_RELU:
    case OP_GELU:
    case OP_GELU_TANH:
    case OP_SILU:
    case OP_BAN:
        if (!need_ndim(st, 0, 1, SHAPE_MAX_DIMS, where, e)) return false;
        if (st->op == OP_BAN && (st->attr.id < 0 || st->attr.id >= shape_last(&st->in_shape[0])))
            return shape_err(st, where, e, "id= must name a column of x (0 to its last dimension - 1)");
        st->shape = st->in_shape[0];
        if (st->op == OP_SOFTMAX) st->kind = TK_PROBS;
        return true;
    case OP_COUNT: break;
    }
    assert(!"unknown op");
    return false;
}

AxisTokens axes_none(void) {
    AxisTokens a;
    for (int i = 0; i < SHAPE_MAX_DIMS; i++) a.slot[i] = AXIS_NONE;
    return a;
}

void op_axes(Stage *st, const AxisTokens in[STAGE_MAX_IN]) {
    AxisTokens out = axes_none();
    const int nd = st->shape.ndim, nd0 = st->in_shape[0].ndim;
    if (st->n_in == 0) {  // made from nothing: no token axes
        st->axes = out;
        return;
    }
    switch (st->op) {
    case OP_EMBEDDING: out.slot[0] = in[0].slot[0]; break;  // one row per token id
    case OP_SPLIT_HEADS:  // [H, T, D]
        out.slot[0] = AXIS_HEADS;
        out.slot[1] = in[0].slot[0];
        break;
    case OP_MERGE_HEADS: out.slot[0] = in[0].slot[1]; break;  // [T, H*D]
    case OP_TRANSPOSE:
        out = in[0];
        out.slot[nd - 1] = in[0].slot[nd - 2];
        out.slot[nd - 2] = in[0].slot[nd - 1];
        break;
    case OP_MATMUL: {  // rows from a; columns from b's last axis (its rows when transposed)
        const int nd1 = st->in_shape[1].ndim;
        for (int k = 0; k < nd - 2; k++) {  // a batch axis: from the side that has it whole
            const int ka = k - (nd - nd0), kb = k - (nd - nd1);
            const bool from_a = ka >= 0 && (kb < 0 || st->in_shape[0].dim[ka] == st->shape.dim[k]);
            out.slot[k] = from_a ? in[0].slot[ka] : in[1].slot[kb];
        }
        out.slot[nd - 2] = in[0].slot[nd0 - 2];
        out.slot[nd - 1] = in[1].slot[st->attr.b_transposed ? nd1 - 2 : nd1 - 1];
        break;
    }
    case OP_REPEAT:  // heads repeated are heads still; a token axis repeated is no longer one token each
    case OP_CONCAT: {
        out = in[0];
        bool heads = out.slot[st->attr.axis] == AXIS_HEADS;
        for (int j = 1; j < st->n_in; j++) heads = heads && in[j].slot[st->attr.axis] == AXIS_HEADS;
        if (!heads && !(st->op == OP_REPEAT && st->attr.times == 1)) out.slot[st->attr.axis] = AXIS_NONE;
        break;
    }
    case OP_LINEAR: if (nd == nd0) out.slot[0] = in[0].slot[0]; break;
    case OP_ARGMAX: out.slot[0] = in[0].slot[0]; break;
    case OP_MAX_POOL:
    case OP_MEAN_POOL: break;  // positions pooled away
    case OP_PERMUTE:
        for (int k = 0; k < nd; k++) out.slot[k] = in[0].slot[st->attr.dims[k]];
        break;
    case OP_RESHAPE:  // leading axes that keep their size keep their tokens; an axis of nhead is heads
        for (int k = 0; k < nd && k < nd0 && st->shape.dim[k] == st->in_shape[0].dim[k]; k++)
            out.slot[k] = in[0].slot[k];
        for (int k = 1; k < nd && nd >= 3; k++)
            if (out.slot[k] == AXIS_NONE && st->shape.dim[k] == st->attr.heads) out.slot[k] = AXIS_HEADS;
        break;
    default: out = in[0]; break;  // elementwise and row-wise ops keep their input's axes
    }
    st->axes = out;
}

double op_flops(const Stage *st) {
    const Shape *s0 = &st->in_shape[0];
    if (st->op == OP_LINEAR) return 2.0 * (double)shape_numel(&st->shape) * shape_last(s0);
    if (st->op == OP_MATMUL) return 2.0 * (double)shape_numel(&st->shape) * shape_last(s0);
    return (double)shape_numel(&st->shape);
}

bool stage_is_product(const Stage *st) { return st->op == OP_LINEAR || st->op == OP_MATMUL; }

StageWhere stage_where(const Stage *st) {
    StageWhere w = {.part = PART_OTHER};
    const char *s = st->id;
    if (!strncmp(s, "step.", 5)) {  // a greedy round: skip "step.N."
        s += 5;
        while (*s && *s != '.') s++;
        if (*s) s++;
    }
    static const char *const parts[] = {"encoder.", "decoder.", "generator."};
    for (int p = 0; p < 3; p++)
        if (!strncmp(s, parts[p], strlen(parts[p]))) {
            w.part = (Part)p;
            s += strlen(parts[p]);
        }
    if (!strncmp(s, "layers.", 7)) {
        w.has_layer = true;
        w.layer = atoi(s + 7);
        s = strchr(s + 7, '.');
        s = s ? s + 1 : "";
    }
    const char *dot = strchr(s, '.');
    if (dot && (!strncmp(s, "self_attn.", 10) || !strncmp(s, "cross_attn.", 11))) {
        snprintf(w.sublayer, sizeof w.sublayer, "%.*s", (int)(dot - s), s);
        s = dot + 1;
    }
    const char *last = strrchr(s, '.');
    snprintf(w.name, sizeof w.name, "%s", last ? last + 1 : s);
    return w;
}

bool stage_input_strided(const Stage *st, int j, Shape *whole, size_t *col) {
    if (st->op != OP_LINEAR || !st->attr.w_in_out || j != 1 || st->attr.w_ld == shape_last(&st->in_shape[1])) return false;
    *whole = shape2(st->in_shape[1].dim[0], st->attr.w_ld);
    *col = st->in[1].offset;
    return true;
}
