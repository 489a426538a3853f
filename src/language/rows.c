// rows.c: the cached decoder's step (rows.h).
//
// Dimensions: T positions this round (last round had T-1), H heads, X any row width, K the
// inner dimension of a product.
#include "rows.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include "kernels_llm.h"
#include "ops.h"

// now is prev with one more position on axis `ax` (every other axis the same).
static bool grown_on(const Shape *now, const Shape *prev, int ax) {
    if (now->ndim != prev->ndim || ax < 0 || ax >= now->ndim) return false;
    for (int d = 0; d < now->ndim; d++)
        if (now->dim[d] != prev->dim[d] + (d == ax)) return false;
    return true;
}

// The new row of a row-wise op on [T, ...] tensors: its inputs' last rows (the positional
// table's row T-1), into out's last row, after last round's rows.
static void last_row(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN],
                     const OpWeight *w, const float *prev, float *out) {
    const int T = st->shape.dim[0];
    const size_t row = (size_t)shape_numel(&st->shape) / (size_t)T;
    Stage one = *st;
    const float *in1[STAGE_MAX_IN];
    one.shape.dim[0] = 1;
    for (int j = 0; j < st->n_in; j++) {
        in1[j] = in[j];
        if (kin[j] == ROWS_GROWN) {
            in1[j] += (size_t)shape_numel(&st->in_shape[j]) / (size_t)T * (size_t)(T - 1);
            one.in_shape[j].dim[0] = 1;
        }
    }
    if (st->op == OP_ADD_POSITIONS) in1[1] = in[1] + row * (size_t)(T - 1);  // position T-1's encoding
    if (out != prev) memcpy(out, prev, sizeof(float) * row * (size_t)(T - 1));
    op_exec(&one, in1, w, out + row * (size_t)(T - 1), 1);
}

// Copies last round's [H, T-1, X] into the first T-1 rows of each head of [H, T, W] (W = X, or
// X + 1 for a square that grew a column). out may be prev's own buffer, grown in place: a row
// never moves to an earlier place, so going from the last row to the first reads each row
// before anything is written over it.
static void copy_heads(float *out, const float *prev, int H, int T, int X, int W) {
    if (X == W) {  // each head's rows are one block
        for (int h = H - 1; h >= 0; h--) {
            float *to = out + (size_t)h * T * X;
            const float *from = prev + (size_t)h * (T - 1) * X;
            if (to != from) memmove(to, from, sizeof(float) * (size_t)(T - 1) * X);
        }
        return;
    }
    for (int h = H - 1; h >= 0; h--)
        for (int t = T - 2; t >= 0; t--) {
            float *to = out + ((size_t)h * T + t) * W;
            const float *from = prev + ((size_t)h * (T - 1) + t) * X;
            if (to != from) memmove(to, from, sizeof(float) * (size_t)X);
        }
}

// Head h's new (last) row of x: held alone (x is [H, X], a ROWS_NEW kind) or the last of the
// whole [H, T, X]'s rows. `one_head`: x has a single head, which serves every head.
static const float *new_row(const float *x, RowsKind k, bool one_head, int h, int T, int X) {
    const size_t head = one_head ? 0 : rows_is_new(k) ? (size_t)X : (size_t)T * X;
    return x + h * head + (rows_is_new(k) ? 0 : (size_t)(T - 1) * X);
}

// The weights times the values, when the weights' rows above the new one are 0 on the new key
// (a causal softmax's): an earlier row's sum gains nothing, so only the new row is computed.
static bool weights_values_row(const Stage *st, const RowsKind kin[STAGE_MAX_IN], const Shape *ps) {
    if (st->op != OP_MATMUL || st->shape.ndim > 3) return false;
    int ab[2], bb[2], T, N, K;
    matmul_sizes(st, ab, bb, &T, &N, &K);
    return (kin[0] == ROWS_SQUARE0 || kin[0] == ROWS_NEW0) && kin[1] == ROWS_GROWN && !st->attr.b_transposed && K == T &&
           grown_on(&st->shape, ps, st->shape.ndim - 2);
}

// matmul, per head: the new row only, the new row and column of Q Kᵀ, or whole. A side with one
// head (multi-query attention's keys and values) serves every head: it steps 0 floats a head.
static RowsKind matmul_rows(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN],
                            const float *prev, const Shape *ps, float *out) {
    const Shape *o = &st->shape;
    const int nd = o->ndim;
    int ab[2], bb[2], T, N, K;
    matmul_sizes(st, ab, bb, &T, &N, &K);
    if (nd > 3) return op_exec(st, in, NULL, out, 1), ROWS_WHOLE;
    const int H = nd == 3 ? o->dim[0] : 1;
    const bool bt = st->attr.b_transposed;
    const size_t a_head = ab[1] == 1 ? 0 : (size_t)T * K, b_head = bb[1] == 1 ? 0 : (size_t)K * N;
    const bool a_grown = kin[0] == ROWS_GROWN, row_only = grown_on(o, ps, nd - 2);
    if ((a_grown || kin[0] == ROWS_NEW) && kin[1] == ROWS_SAME && row_only) {  // against fixed keys or values (the memory)
        copy_heads(out, prev, H, T, N, N);
        for (int h = 0; h < H; h++)
            sgemm(out + ((size_t)h * T + T - 1) * N, N, new_row(in[0], kin[0], ab[1] == 1, h, T, K), K, in[1] + h * b_head,
                  bt ? K : N, NULL, 1, N, K, bt);
        return ROWS_GROWN;
    }
    const bool square = N == T && ps->ndim == nd && ps->dim[nd - 2] == T - 1 && ps->dim[nd - 1] == T - 1 &&
                        (nd == 2 || ps->dim[0] == H);
    if (a_grown && kin[1] == ROWS_GROWN && bt && square) {  // Q Kᵀ: a new query, and a new key
        copy_heads(out, prev, H, T, T - 1, T);
        for (int h = 0; h < H; h++) {
            const float *q = in[0] + h * a_head, *k = in[1] + h * b_head;
            float *c = out + (size_t)h * T * T;
            sgemm(c + (size_t)(T - 1) * T, T, q + (size_t)(T - 1) * K, K, k, K, NULL, 1, T, K, true);
            if (T > 1) sgemm(c + T - 1, T, q, K, k + (size_t)(T - 1) * K, K, NULL, T - 1, 1, K, true);
        }
        return ROWS_SQUARE;
    }
    if (weights_values_row(st, kin, ps)) {
        // weights · values: an earlier row's weight on the new position is 0, so it is unchanged;
        // the weights' new rows are the whole [H, T, T]'s or, held alone, [H, T] (ROWS_NEW0)
        copy_heads(out, prev, H, T, N, N);
        for (int h = 0; h < H; h++)
            sgemm(out + ((size_t)h * T + T - 1) * N, N, new_row(in[0], kin[0], ab[1] == 1, h, T, K), K, in[1] + h * b_head, N,
                  NULL, 1, N, K, false);
        return ROWS_GROWN;
    }
    op_exec(st, in, NULL, out, 1);
    return ROWS_WHOLE;
}

// RoPE on [H, T, D]: a row turns by the angles of its own position alone, so on a grown input
// each head's new row is the new position's rotation and the rest are last round's.
static RowsKind rope_rows(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN],
                          const float *prev, const Shape *ps, float *out) {
    const Shape *o = &st->shape;
    if (o->ndim != 3 || (kin[0] != ROWS_GROWN && kin[0] != ROWS_NEW) || !grown_on(o, ps, 1))
        return op_exec(st, in, NULL, out, 1), ROWS_WHOLE;
    const int H = o->dim[0], T = o->dim[1], D = o->dim[2];
    copy_heads(out, prev, H, T, D, D);
    for (int h = 0; h < H; h++)
        rope_forward(out + ((size_t)h * T + T - 1) * D, new_row(in[0], kin[0], false, h, T, D), 1, 1, D, T - 1,
                     st->attr.theta, st->attr.adjacent);
    return ROWS_GROWN;
}

// The new column of a square, above its new row: all -inf (hidden from earlier positions)?
static bool new_column_hidden(const float *x, const Shape *s) {
    const int H = s->ndim == 3 ? s->dim[0] : 1, T = s->dim[s->ndim - 1];
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T - 1; t++)
            if (!(isinf(x[((size_t)h * T + t) * T + T - 1]) && x[((size_t)h * T + t) * T + T - 1] < 0)) return false;
    return true;
}

// Softmax of a square whose new column is hidden from the earlier rows: those rows are last
// round's, with 0 on the new key; only the new row of each head is computed.
static void softmax_square(const Stage *st, const float *x, const float *prev, float *out) {
    const Shape *s = &st->shape;
    const int H = s->ndim == 3 ? s->dim[0] : 1, T = s->dim[s->ndim - 1];
    copy_heads(out, prev, H, T, T - 1, T);
    for (int h = 0; h < H; h++) {
        float *o = out + (size_t)h * T * T;
        for (int t = 0; t < T - 1; t++) o[(size_t)t * T + T - 1] = 0.0f;  // exp(-inf) / sum
        softmax_forward(o + (size_t)(T - 1) * T, x + (size_t)h * T * T + (size_t)(T - 1) * T, 1, T);
    }
}

static bool cheap_op(Op op) { return op == OP_SCALE || op == OP_MASK || op == OP_SOFTMAX; }

// split_heads of a grown input, or merge_heads of grown heads (or their new rows alone): one
// more row (heads_rows).
static bool heads_op(const Stage *st, const RowsKind kin[STAGE_MAX_IN], const Shape *ps) {
    if (st->op == OP_SPLIT_HEADS) return kin[0] == ROWS_GROWN && grown_on(&st->shape, ps, 1);
    return st->op == OP_MERGE_HEADS && (kin[0] == ROWS_GROWN || kin[0] == ROWS_NEW) && grown_on(&st->shape, ps, 0);
}

// Cheap ops (copies and element-wise work on heads) run whole, but the softmax of a square
// whose new column is hidden; what they give follows from their input.
static RowsKind cheap(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN],
                      const float *prev, const Shape *ps, float *out) {
    const bool hidden = st->op == OP_SOFTMAX && (kin[0] == ROWS_SQUARE || kin[0] == ROWS_SQUARE0) &&
                        new_column_hidden(in[0], &st->in_shape[0]);
    const int nd = st->shape.ndim, T = st->shape.dim[nd - 1];
    if (hidden && ps->ndim == nd && ps->dim[nd - 1] == T - 1 && ps->dim[nd - 2] == T - 1) {
        softmax_square(st, in[0], prev, out);
        return ROWS_SQUARE0;
    }
    op_exec(st, in, NULL, out, 1);
    for (int j = 1; j < st->n_in; j++)
        if (kin[j] != ROWS_SAME && kin[j] != ROWS_GROWN) return ROWS_WHOLE;
    if (kin[0] == ROWS_GROWN) return ROWS_GROWN;  // row-wise on a grown input
    const bool square = kin[0] == ROWS_SQUARE || kin[0] == ROWS_SQUARE0;
    if (square && (st->op == OP_SCALE || st->op == OP_MASK)) return ROWS_SQUARE;
    return hidden ? ROWS_SQUARE0 : ROWS_WHOLE;
}

// repeat and concat copy numbers: they run whole. Their rows are last round's and a new one when
// every input's are and the axis they work on is not the positions' (the one a grown tensor
// grew on: its second last, or its only one).
static RowsKind copies(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN],
                       const Shape *ps, float *out) {
    op_exec(st, in, NULL, out, 1);
    const int nd = st->shape.ndim, positions = nd >= 2 ? nd - 2 : 0;
    bool grown = st->attr.axis != positions && grown_on(&st->shape, ps, positions);
    for (int j = 0; j < st->n_in; j++) grown = grown && kin[j] == ROWS_GROWN;
    return grown ? ROWS_GROWN : ROWS_WHOLE;
}

static bool copy_op(Op op) { return op == OP_REPEAT || op == OP_CONCAT; }

// Ops whose output row t is computed from their inputs' rows t alone (scale and the softmaxes
// only on [T, X]: on heads, the rows are [H, T, X]).
static bool row_wise_op(const Stage *st) {
    switch (st->op) {
    case OP_EMBEDDING: case OP_LINEAR: case OP_LAYER_NORM: case OP_ACTIVATION: case OP_RELU: case OP_GELU:
    case OP_ARGMAX: case OP_ADD_POSITIONS: case OP_ADD: case OP_GELU_TANH: case OP_SILU: case OP_MUL: case OP_RMS_NORM:
    case OP_BAN:
        return true;
    case OP_SCALE: case OP_SOFTMAX: case OP_LOG_SOFTMAX: return st->shape.ndim == 2;
    default: return false;
    }
}

bool rows_row_wise(const Stage *st) { return row_wise_op(st); }

// Splitting a grown [T, H*D] into heads, or merging grown heads (whole, or held as new rows
// alone: k) into [T, H*D]: last round's rows (prev, or out itself, grown in place), then each
// head's new row copied.
static void heads_rows(const Stage *st, const float *x, RowsKind k, const float *prev, float *out) {
    const bool split = st->op == OP_SPLIT_HEADS;
    const Shape *heads = split ? &st->shape : &st->in_shape[0];
    const int H = heads->dim[0], T = heads->dim[1], D = heads->dim[2];
    const size_t row = (size_t)H * D;
    if (split) copy_heads(out, prev, H, T, D, D);
    else if (out != prev) memcpy(out, prev, sizeof(float) * row * (size_t)(T - 1));
    for (int h = 0; h < H; h++) {
        if (split) memcpy(out + ((size_t)h * T + T - 1) * D, x + row * (size_t)(T - 1) + (size_t)h * D, sizeof(float) * D);
        else memcpy(out + row * (size_t)(T - 1) + (size_t)h * D, new_row(x, k, false, h, T, D), sizeof(float) * D);
    }
}

// Whether stage st ([H, T, X]) has one row a head more than last round (prev_shape), and (*square)
// whether its last axis grew too: a square of attention, [H, T, T].
static bool rows_grew(const Stage *st, const Shape *ps, bool *square) {
    const Shape *o = &st->shape;
    *square = false;
    if (o->ndim != 3 || ps->ndim != 3 || o->dim[0] != ps->dim[0] || o->dim[1] != ps->dim[1] + 1) return false;
    *square = o->dim[2] == o->dim[1] && ps->dim[2] == ps->dim[1];
    return *square || o->dim[2] == ps->dim[2];
}

// A product whose new rows are computed alone: Q Kᵀ with a new key too (the square's row), or
// against fixed keys or values, or the weights (0 on the new key above) times grown values.
static RowsKind matmul_new(const Stage *st, const RowsKind kin[STAGE_MAX_IN], bool square) {
    int ab[2], bb[2], T, N, K;
    matmul_sizes(st, ab, bb, &T, &N, &K);
    const bool bt = st->attr.b_transposed, rows_above = kin[0] == ROWS_GROWN || kin[0] == ROWS_NEW;
    if (rows_above && bt && kin[1] == ROWS_GROWN && square) return ROWS_NEW_SQUARE;
    if (rows_above && kin[1] == ROWS_SAME && !square) return ROWS_NEW;
    if (kin[0] == ROWS_NEW0 && kin[1] == ROWS_GROWN && !bt && K == T && !square) return ROWS_NEW;
    return ROWS_WHOLE;
}

RowsKind rows_new_kind(const Stage *st, const RowsKind kin[STAGE_MAX_IN], const Shape *prev_shape) {
    bool square;
    if (!rows_grew(st, prev_shape, &square)) return ROWS_WHOLE;
    const RowsKind k = kin[0];
    const RowsKind other = k == ROWS_NEW ? ROWS_NEW : ROWS_NEW_SQUARE;  // what a row-wise op on k keeps knowing
    switch (st->op) {
    case OP_SPLIT_HEADS: return k == ROWS_GROWN && !square ? ROWS_NEW : ROWS_WHOLE;
    case OP_ROPE: return (k == ROWS_GROWN || k == ROWS_NEW) && !square ? ROWS_NEW : ROWS_WHOLE;  // by its position alone
    case OP_MATMUL: return matmul_new(st, kin, square);
    case OP_SCALE:  // -inf times a positive number stays -inf
        if (!rows_is_new(k)) return ROWS_WHOLE;
        return k == ROWS_NEW_HIDDEN && st->attr.scale > 0 ? ROWS_NEW_HIDDEN : other;
    case OP_MASK:  // the new query is the last position: the causal mask hides none of its keys
        if (!rows_is_new(k) || (st->attr.has_pad && kin[1] != ROWS_GROWN && kin[1] != ROWS_SAME)) return ROWS_WHOLE;
        return k != ROWS_NEW && (st->attr.causal || k == ROWS_NEW_HIDDEN) ? ROWS_NEW_HIDDEN : other;
    case OP_SOFTMAX:  // exp(-inf) is 0, and the rows' sums are unchanged
        if (!rows_is_new(k)) return ROWS_WHOLE;
        return k == ROWS_NEW_HIDDEN ? ROWS_NEW0 : other;
    default: return ROWS_WHOLE;
    }
}

void rows_exec_new(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN], float *out) {
    const Shape *o = &st->shape;
    const int H = o->dim[0], T = o->dim[1], X = o->dim[2];
    switch (st->op) {
    case OP_SPLIT_HEADS: split_heads_forward(out, in[0] + (size_t)(T - 1) * H * X, 1, H, X); return;
    case OP_ROPE:
        for (int h = 0; h < H; h++)
            rope_forward(out + (size_t)h * X, new_row(in[0], kin[0], false, h, T, X), 1, 1, X, T - 1, st->attr.theta,
                         st->attr.adjacent);
        return;
    case OP_MATMUL: {  // each head's new row, as matmul_rows computes it
        int ab[2], bb[2], M, N, K;
        matmul_sizes(st, ab, bb, &M, &N, &K);
        const bool bt = st->attr.b_transposed;
        const size_t b_head = bb[1] == 1 ? 0 : (size_t)K * N;
        for (int h = 0; h < H; h++)
            sgemm(out + (size_t)h * N, N, new_row(in[0], kin[0], ab[1] == 1, h, T, K), K, in[1] + h * b_head, bt ? K : N,
                  NULL, 1, N, K, bt);
        return;
    }
    default: {
        Stage one = *st;  // scale, mask or softmax on [H, 1, X]: each head's new row
        one.shape.dim[1] = 1;
        for (int j = 0; j < st->n_in; j++)
            if (rows_is_new(kin[j])) one.in_shape[j].dim[1] = 1;
        op_exec(&one, in, NULL, out, 1);
    }
    }
}

bool rows_reads_new(const Stage *st, const RowsKind kin[STAGE_MAX_IN], const Shape *prev_shape) {
    switch (st->op) {
    case OP_MATMUL: {
        const bool row_only = st->shape.ndim <= 3 && grown_on(&st->shape, prev_shape, st->shape.ndim - 2);
        return (kin[0] == ROWS_NEW0 && weights_values_row(st, kin, prev_shape)) ||
               (kin[0] == ROWS_NEW && kin[1] == ROWS_SAME && row_only);
    }
    case OP_MERGE_HEADS: return kin[0] == ROWS_NEW && heads_op(st, kin, prev_shape);
    case OP_ROPE: return kin[0] == ROWS_NEW && grown_on(&st->shape, prev_shape, 1);
    default: return false;
    }
}

RowsReader rows_new_reader(const Stage *st, int q) {
    if (q != 0) return ROWS_READS_WHOLE;
    switch (st->op) {
    case OP_SCALE: case OP_MASK: case OP_SOFTMAX: return ROWS_READS_NEW_IF_NEW;
    case OP_MATMUL:  // Q Kᵀ's square path reads every query; the weights' products take new rows
        return st->attr.b_transposed ? ROWS_READS_NEW_IF_NEW : ROWS_READS_NEW;
    case OP_ROPE: case OP_MERGE_HEADS: return ROWS_READS_NEW;
    default: return ROWS_READS_WHOLE;
    }
}

RowsKind rows_exec(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN],
                   const OpWeight *w, const float *prev, const Shape *prev_shape, float *out) {
    bool same = true;
    for (int j = 0; j < st->n_in; j++) {
        assert(!rows_is_new(kin[j]) || rows_reads_new(st, kin, prev_shape));  // else given whole (interp.c)
        if (kin[j] == ROWS_WHOLE) return op_exec(st, in, w, out, 1), ROWS_WHOLE;
        same = same && kin[j] == ROWS_SAME;
    }
    if (same && shape_eq(&st->shape, prev_shape)) {  // e.g. the memory's keys and values
        if (out != prev) memcpy(out, prev, sizeof(float) * (size_t)shape_numel(&st->shape));
        return ROWS_SAME;
    }
    bool rows_in = grown_on(&st->shape, prev_shape, 0);  // row-wise: grown inputs have T rows too
    for (int j = 0; j < st->n_in && rows_in; j++)
        rows_in = kin[j] == ROWS_SAME || (kin[j] == ROWS_GROWN && st->in_shape[j].dim[0] == st->shape.dim[0]);
    if (row_wise_op(st) && rows_in && kin[0] == ROWS_GROWN && ((st->op != OP_ADD && st->op != OP_MUL) || kin[1] == ROWS_GROWN)) {
        last_row(st, in, kin, w, prev, out);
        return ROWS_GROWN;
    }
    if (heads_op(st, kin, prev_shape)) return heads_rows(st, in[0], kin[0], prev, out), ROWS_GROWN;
    if (st->op == OP_MATMUL) return matmul_rows(st, in, kin, prev, prev_shape, out);
    if (st->op == OP_ROPE) return rope_rows(st, in, kin, prev, prev_shape, out);
    if (cheap_op(st->op)) return cheap(st, in, kin, prev, prev_shape, out);
    if (copy_op(st->op)) return copies(st, in, kin, prev_shape, out);
    return op_exec(st, in, w, out, 1), ROWS_WHOLE;
}

double rows_multiply_adds(const Stage *st, RowsKind kind) {
    if (st->op != OP_LINEAR && st->op != OP_MATMUL) return 0;
    const double all = op_flops(st) / 2;
    const Shape *o = &st->shape;
    const int T = o->ndim >= 2 ? o->dim[o->ndim - 2] : 1;
    switch (kind) {
    case ROWS_SAME: return 0;
    case ROWS_GROWN: case ROWS_NEW: case ROWS_NEW_SQUARE:  // one row of T
        return all / (st->op == OP_LINEAR ? st->in_shape[0].dim[0] : T);
    case ROWS_SQUARE: case ROWS_SQUARE0: return all * (2.0 * T - 1) / ((double)T * T);  // a row and a column
    default: return all;
    }
}

bool rows_ran_whole(const Stage *st, RowsKind kind) {
    if (kind == ROWS_WHOLE) return true;
    if (kind == ROWS_SAME || rows_is_new(kind) || row_wise_op(st)) return false;
    if (copy_op(st->op)) return true;
    return cheap_op(st->op) && !(st->op == OP_SOFTMAX && kind == ROWS_SQUARE0);  // the softmax of a square: its new row
}

const char *rows_note(const Stage *st, RowsKind kind) {
    if (kind != ROWS_WHOLE && rows_ran_whole(st, kind))
        return "cached decoder: ran whole (cheap); its earlier rows are the round before's";
    switch (kind) {
    case ROWS_SAME: return "cached decoder: copied whole from the round before (it reads nothing that changed)";
    case ROWS_GROWN: return "cached decoder: only the new position's row computed; the rows above are the round before's";
    case ROWS_SQUARE: case ROWS_SQUARE0:
        return "cached decoder: only the new row and column computed; the rest is the round before's";
    case ROWS_NEW: case ROWS_NEW_SQUARE: case ROWS_NEW_HIDDEN: case ROWS_NEW0:
        return "cached decoder: only the new query's row computed and kept (no later stage reads the rows above: "
               "they are recomputed to be shown)";
    default: return NULL;
    }
}
