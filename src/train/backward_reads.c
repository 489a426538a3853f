// backward_reads.c: what each op's backward kernel reads of the forward pass (backward.h): its
// output, its inputs. The backward pass asks only for those (what it does not read may be gone:
// training's transient outputs), and training keeps only those (backward_transient).
#include "backward.h"

bool backward_reads_output(const Stage *st) {
    switch (st->op) {
    case OP_SOFTMAX: case OP_LOG_SOFTMAX: case OP_MASK: case OP_RELU: case OP_MAX_POOL: case OP_MEAN_POOL: return true;
    case OP_ACTIVATION: return st->attr.act != ACT_GELU;  // relu's mask, from y (gelu reads x)
    case OP_EMBEDDING: case OP_LINEAR: case OP_RESHAPE: case OP_CHUNK: case OP_SCALE: case OP_LAYER_NORM: case OP_GELU:
    case OP_ADD: case OP_ADD_POSITIONS: case OP_PERMUTE: case OP_SPLIT_HEADS: case OP_MERGE_HEADS: case OP_MATMUL:
    case OP_REPEAT: case OP_CONCAT: case OP_TRANSPOSE: case OP_ARGMAX: case OP_POSITIONAL_TABLE: case OP_GELU_TANH:
    case OP_SILU: case OP_MUL: case OP_RMS_NORM: case OP_ROPE: case OP_BAN:
        return false;
    default: return true;
    }
}

bool backward_reads_input(const Stage *st, int j) {
    switch (st->op) {
    case OP_EMBEDDING: return j == 0;                   // the ids
    case OP_LINEAR: case OP_LAYER_NORM: return j <= 1;  // x (for dW, dg) and W or g (for dx); not the bias
    case OP_MATMUL: case OP_MAX_POOL: case OP_MEAN_POOL: return true;
    case OP_ACTIVATION: return st->attr.act == ACT_GELU;
    case OP_GELU: case OP_GELU_TANH: case OP_SILU: case OP_MUL: return true;
    case OP_RMS_NORM: return j <= 1;  // x and g
    case OP_ROPE: case OP_BAN: return false;
    case OP_RELU: case OP_SOFTMAX: case OP_LOG_SOFTMAX: case OP_MASK: case OP_RESHAPE: case OP_CHUNK: case OP_SCALE:
    case OP_ADD: case OP_ADD_POSITIONS: case OP_PERMUTE: case OP_SPLIT_HEADS: case OP_MERGE_HEADS: case OP_REPEAT:
    case OP_CONCAT: case OP_TRANSPOSE: case OP_ARGMAX: case OP_POSITIONAL_TABLE:
        return false;
    default: return true;
    }
}

void backward_transient(const Interp *it, int from, bool *transient) {
    const int n = interp_n_stages(it);
    for (int i = 0; i < n; i++) transient[i] = i < from && !backward_reads_output(interp_stage(it, i));
    for (int c = 0; c <= from && c < n; c++) {
        const Stage *st = interp_stage(it, c);
        for (int j = 0; j < st->n_in; j++)
            if (st->in[j].kind == REF_STAGE && backward_reads_input(st, j)) transient[st->in[j].index] = false;
    }
}
