// exec.c: running a stage's kernel over a batch. Row-wise ops see the batch as more rows (so a
// linear layer is one matrix multiply over every example's rows); ops that mix rows within an
// example (attention's matmuls, heads, masks, positions) run once per example.
#include <assert.h>
#include <string.h>

#include "kernels_llm.h"
#include "ops.h"
#include "par.h"


size_t op_in_stride(const Stage *st, int j) {
    return st->in[j].kind == REF_WEIGHT ? 0 : (size_t)shape_numel(&st->in_shape[j]);
}

// The ops that run once per example.
static void exec_one(const Stage *st, const float *const in[STAGE_MAX_IN], float *out) {
    const Shape *s0 = &st->in_shape[0];
    const size_t n = (size_t)shape_numel(&st->shape);
    const int nd = s0->ndim;
    switch (st->op) {
    case OP_ADD_POSITIONS:  // the table's first T rows, the same for every example
    case OP_ADD: add_forward(out, in[0], in[1], n); return;
    case OP_MUL: mul_forward(out, in[0], in[1], n); return;
    case OP_SPLIT_HEADS:
        split_heads_forward(out, in[0], s0->dim[0], st->attr.heads, s0->dim[1] / st->attr.heads);
        return;
    case OP_MERGE_HEADS: merge_heads_forward(out, in[0], s0->dim[1], s0->dim[0], s0->dim[2]); return;
    case OP_MATMUL: {
        int ab[2], bb[2], M, N, K;
        matmul_sizes(st, ab, bb, &M, &N, &K);
        matmul_broadcast_forward(out, in[0], in[1], ab, bb, M, N, K, st->attr.b_transposed);
        return;
    }
    case OP_REPEAT: {
        int outer, len, inner;
        axis_split(s0, st->attr.axis, &outer, &len, &inner);
        repeat_forward(out, in[0], outer, len, inner, st->attr.times, st->attr.interleave);
        return;
    }
    case OP_CONCAT: {
        int outer, len[STAGE_MAX_IN], inner;
        for (int j = 0; j < st->n_in; j++) axis_split(&st->in_shape[j], st->attr.axis, &outer, &len[j], &inner);
        concat_forward(out, in, len, st->n_in, outer, inner);
        return;
    }
    case OP_TRANSPOSE: transpose_forward(out, in[0], nd == 3 ? s0->dim[0] : 1, s0->dim[nd - 2], shape_last(s0)); return;
    case OP_MASK:
        mask_forward(out, in[0], st->attr.has_pad ? in[1] : NULL, st->attr.pad_id, st->attr.causal, s0->dim[0],
                     s0->dim[1], s0->dim[2]);
        return;
    case OP_POSITIONAL_TABLE: positional_encoding(out, st->attr.positions, st->attr.width, st->attr.base); return;
    case OP_PERMUTE: permute_forward(out, in[0], s0->dim, st->attr.dims, nd); return;
    case OP_ROPE:  // positions 0 .. T-1 of this example
        rope_forward(out, in[0], s0->dim[0], s0->dim[1], s0->dim[2], 0, st->attr.theta, st->attr.adjacent);
        return;
    case OP_MAX_POOL:
    case OP_MEAN_POOL:
        pool_forward(out, in[0], st->attr.has_pad ? in[1] : NULL, st->attr.pad_id, s0->dim[0], s0->dim[1],
                     st->op == OP_MEAN_POOL);
        return;
    default: break;
    }
    assert(!"not a per-example op");
}

static void per_example(const Stage *st, const float *const in[STAGE_MAX_IN], float *out, int B) {
    const size_t n = (size_t)shape_numel(&st->shape);
    size_t stride[STAGE_MAX_IN] = {0};
    for (int j = 0; j < st->n_in; j++) stride[j] = op_in_stride(st, j);
    // One example takes no region at all: a region of one thread would make the kernel's own
    // parallel loop a nested region, which starts new threads on every call.
    PAR_LOOP(B > 1, "omp parallel for schedule(static)",
        for (int b = 0; b < B; b++) {
            const float *inb[STAGE_MAX_IN] = {0};
            for (int j = 0; j < st->n_in; j++) inb[j] = in[j] + (size_t)b * stride[j];
            exec_one(st, inb, out + (size_t)b * n);
        }
    );
}

bool op_takes_half(const Stage *st, int j) { return j == 1 && (st->op == OP_LINEAR || st->op == OP_EMBEDDING); }

// A linear layer whose weight is held as half: widened tile by tile as the product packs it.
static void linear_half(const Stage *st, const float *const in[STAGE_MAX_IN], const OpWeight *w, float *out, int B) {
    const Shape *s0 = &st->in_shape[0];
    const int T = B * shape_rows(s0), I = shape_last(s0), O = shape_last(&st->shape);
    const float *bias = st->attr.has_bias ? in[2] : NULL;
    if (st->attr.w_in_out) sgemm_half(out, O, in[0], I, w->half, st->attr.w_ld, w->half_kind, bias, T, O, I, false);
    else sgemm_half(out, O, in[0], I, w->half, I, w->half_kind, bias, T, O, I, true);
}

void op_exec(const Stage *st, const float *const in[STAGE_MAX_IN], const OpWeight *w, float *out, int B) {
    const Shape *s0 = &st->in_shape[0], *s1 = &st->in_shape[1];
    const size_t n = (size_t)shape_numel(&st->shape) * (size_t)B;
    const float *packed = w ? w->packed : NULL;
    switch (st->op) {
    case OP_EMBEDDING:
        if (w && w->half) embedding_forward_half(out, in[0], w->half, w->half_kind, B * s0->dim[0], s1->dim[1], st->attr.scale);
        else embedding_forward(out, in[0], in[1], B * s0->dim[0], s1->dim[1], st->attr.scale);
        return;
    case OP_LINEAR:
        if (w && w->half) linear_half(st, in, w, out, B);
        else if (st->attr.w_in_out && !packed)
            linear_in_out_forward(out, in[0], in[1], st->attr.has_bias ? in[2] : NULL, B * shape_rows(s0), shape_last(s0),
                                  shape_last(&st->shape), st->attr.w_ld);
        else if (packed)
            linear_forward_packed(out, in[0], packed, st->attr.has_bias ? in[2] : NULL, B * shape_rows(s0), shape_last(s0),
                                  shape_last(&st->shape));
        else linear_forward(out, in[0], in[1], st->attr.has_bias ? in[2] : NULL, B * shape_rows(s0), shape_last(s0), s1->dim[0]);
        return;
    case OP_RESHAPE: memcpy(out, in[0], sizeof(float) * n); return;
    case OP_CHUNK: chunk_forward(out, in[0], B * shape_rows(s0), shape_last(s0), st->attr.chunk, st->attr.chunks); return;
    case OP_SCALE: scale_forward(out, in[0], st->attr.scale, n); return;
    case OP_SOFTMAX: softmax_forward(out, in[0], B * shape_rows(s0), shape_last(s0)); return;
    case OP_LOG_SOFTMAX: log_softmax_forward(out, in[0], B * shape_rows(s0), shape_last(s0)); return;
    case OP_LAYER_NORM:
        layernorm_forward(out, in[0], in[1], st->n_in == 3 ? in[2] : NULL, B * s0->dim[0], s0->dim[1], st->attr.eps, st->attr.ln);
        return;
    case OP_ACTIVATION:
        if (st->attr.act == ACT_GELU) gelu_forward(out, in[0], n);
        else relu_forward(out, in[0], n);
        return;
    case OP_RELU: relu_forward(out, in[0], n); return;
    case OP_GELU: gelu_forward(out, in[0], n); return;
    case OP_GELU_TANH: gelu_tanh_forward(out, in[0], n); return;
    case OP_SILU: silu_forward(out, in[0], n); return;
    case OP_BAN: ban_forward(out, in[0], n / (size_t)shape_last(s0), shape_last(s0), st->attr.id); return;
    case OP_RMS_NORM: rms_norm_forward(out, in[0], in[1], B * s0->dim[0], s0->dim[1], st->attr.eps); return;
    case OP_MUL:
        if (op_in_stride(st, 0) && op_in_stride(st, 1)) {
            mul_forward(out, in[0], in[1], n);
            return;
        }
        break;
    case OP_ARGMAX: argmax_forward(out, in[0], B * s0->dim[0], s0->dim[1]); return;
    case OP_ADD:
        if (op_in_stride(st, 0) && op_in_stride(st, 1)) {  // two activations: one long add
            add_forward(out, in[0], in[1], n);
            return;
        }
        break;
    default: break;
    }
    per_example(st, in, out, B);
}
