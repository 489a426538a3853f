// backward.c: the backward pass over the interpreter's stages (see backward.h).
#include "backward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "back_mistakes.h"
#include "declare.h"
#include "kernels_backward.h"
#include "kernels_llm.h"
#include "par.h"

struct Grads {
    const Model *m;
    float *dw;       // parallel to m->weights.arena
    size_t n_dw;
    float **d;       // [n] the gradient of each stage's output ([B, shape]); NULL: none yet
    size_t *cap;     // [n] floats allocated for each
    bool *live;      // [n] a gradient reached this stage in the current pass
    int n;
    int *tied;       // [n_tied] weight indices, group after group
    int *group_end;  // [n_groups] one past the last index of each group in `tied`
    int n_tied, n_groups;
    bool check_finite;
    bool recycle;    // a stage's gradient buffer goes back to the pool once its kernel ran
    float **pool;    // [n_pool] buffers no stage holds, the last released on top
    size_t *pool_cap;  // [n_pool] floats each holds
    int n_pool;
    BackwardMistake mistake;  // a learner's wrong formula in place of the right one (none by default)
};

Grads *grads_new(const Model *m, Err *e) {
    Grads *g = calloc(1, sizeof *g);
    if (!g) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    g->m = m;
    g->n_dw = m->n_wide;  // the float32 layout of every weight, whichever way the model holds them
    g->dw = calloc(g->n_dw ? g->n_dw : 1, sizeof(float));
    if (!g->dw) {
        err_set(e, "out of memory for %zu gradients", g->n_dw);
        grads_free(g);
        return NULL;
    }
    return g;
}

void grads_free(Grads *g) {
    if (!g) return;
    for (int i = 0; i < g->n; i++) free(g->d[i]);
    for (int i = 0; i < g->n_pool; i++) free(g->pool[i]);
    free(g->pool), free(g->pool_cap);
    free(g->d), free(g->cap), free(g->live), free(g->dw), free(g->tied), free(g->group_end);
    free(g);
}

float *grads_weights(Grads *g) { return g->dw; }
size_t grads_size(const Grads *g) { return g->n_dw; }
void grads_zero(Grads *g) { memset(g->dw, 0, sizeof(float) * g->n_dw); }

// A buffer (a fixed positional table) is saved with the model but never trained.
static bool frozen(const Model *m, int index) { return m->params[index].fixed; }

float *grads_of(Grads *g, const char *name) {
    const int i = model_weight_index(g->m, name);
    return i >= 0 && !frozen(g->m, i) ? g->dw + g->m->wide_at[i] : NULL;
}

const float *grads_stage(const Grads *g, int k) { return k >= 0 && k < g->n && g->live[k] ? g->d[k] : NULL; }
void grads_check_finite(Grads *g, bool on) { g->check_finite = on; }
void grads_recycle(Grads *g, bool on) { g->recycle = on; }
void grads_set_mistake(Grads *g, int mistake) { g->mistake = (BackwardMistake)mistake; }

// Whether a tie group's tensors hold the same numbers (then the original shared one tensor).
static bool same_numbers(const Model *m, const int *idx, int n) {
    for (int k = 1; k < n; k++)
        if (!model_same_numbers(m, idx[0], idx[k])) return false;
    return true;
}

// One `tie` statement: its names as weight indices, checked; appended when the numbers agree.
static bool tie_group(Grads *g, const Program *p, const Stmt *s, int *untied, Err *e) {
    const Model *m = g->m;
    int *idx = g->tied + g->n_tied;  // room for every name of every group (grads_tie)
    for (int k = 0; k < s->n_args; k++) {
        const int w = model_weight_index(m, s->args[k].text);
        if (w < 0) return err_set(e, "%s:%d: tie names @%s, which the program does not declare", p->file, s->line, s->args[k].text);
        if (frozen(m, w)) return err_set(e, "%s:%d: tie names @%s, a buffer: buffers are never trained", p->file, s->line, s->args[k].text);
        if (k > 0 && !shape_eq(&m->weights.entries[w].shape, &m->weights.entries[idx[0]].shape))
            return err_set(e, "%s:%d: tie: @%s and @%s have different shapes", p->file, s->line, s->args[0].text, s->args[k].text);
        idx[k] = w;
    }
    if (!same_numbers(m, idx, s->n_args)) {
        if (untied && !*untied) *untied = s->line;
        return true;
    }
    g->n_tied += s->n_args;
    g->group_end[g->n_groups++] = g->n_tied;
    return true;
}

// Ties that share a name are one tensor, so their groups become one: Marian ties the encoder's
// table to the decoder's and the decoder's to the head, and all three must get the sum of the
// three gradients (summing each tie on its own would give the encoder's table only two).
static bool merge_groups(Grads *g, Err *e) {
    const int n = g->n_tied;
    int *group = malloc(sizeof *group * (size_t)(n + 1)), *out = malloc(sizeof *out * (size_t)(n + 1));
    if (!group || !out) return free(group), free(out), err_code(e, ERR_MEMORY, "out of memory");
    for (int q = 0, k = 0; q < g->n_groups; q++)
        for (; k < g->group_end[q]; k++) group[k] = q;
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (g->tied[i] == g->tied[j] && group[i] != group[j]) {
                    const int from = group[i] > group[j] ? group[i] : group[j], to = group[i] + group[j] - from;
                    for (int k = 0; k < n; k++) group[k] = group[k] == from ? to : group[k];
                    changed = true;
                }
    }
    int m = 0, groups = 0;
    for (int q = 0; q < g->n_groups; q++) {
        const int start = m;
        for (int k = 0; k < n; k++) {
            bool seen = group[k] != q;
            for (int j = start; !seen && j < m; j++) seen = out[j] == g->tied[k];
            if (!seen) out[m++] = g->tied[k];
        }
        if (m > start) g->group_end[groups++] = m;
    }
    memcpy(g->tied, out, sizeof *out * (size_t)m);
    g->n_tied = m, g->n_groups = groups;
    free(group), free(out);
    return true;
}

bool grads_tie(Grads *g, const Program *p, int *untied, Err *e) {
    int names = 0, groups = 0;
    if (untied) *untied = 0;
    for (int i = 0; i < p->n; i++)
        if (p->stmts[i].kind == ST_TIE) names += p->stmts[i].n_args, groups++;
    free(g->tied), free(g->group_end);
    g->n_tied = g->n_groups = 0;
    g->tied = malloc(sizeof *g->tied * (size_t)(names + 1));
    g->group_end = malloc(sizeof *g->group_end * (size_t)(groups + 1));
    if (!g->tied || !g->group_end) return err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0; i < p->n; i++)
        if (program_tie_on(&p->stmts[i], &g->m->conf) && !tie_group(g, p, &p->stmts[i], untied, e)) return false;
    return merge_groups(g, e);
}

void grads_sum_ties(Grads *g) {
    const StFile *f = &g->m->weights;
    for (int q = 0, first = 0; q < g->n_groups; first = g->group_end[q++]) {
        const int *idx = g->tied + first, n = g->group_end[q] - first;
        float *sum = g->dw + g->m->wide_at[idx[0]];
        const size_t len = (size_t)shape_numel(&f->entries[idx[0]].shape);
        for (int k = 1; k < n; k++) {
            const float *d = g->dw + g->m->wide_at[idx[k]];
            for (size_t i = 0; i < len; i++) sum[i] += d[i];
        }
        for (int k = 1; k < n; k++) memcpy(g->dw + g->m->wide_at[idx[k]], sum, sizeof(float) * len);
    }
}

// Room for every stage's gradient; none has received one yet.
static bool prepare(Grads *g, const Interp *it, Err *e) {
    const int n = interp_n_stages(it);
    if (n > g->n) {
        float **d = realloc(g->d, sizeof *d * (size_t)n);
        size_t *cap = realloc(g->cap, sizeof *cap * (size_t)n);
        bool *live = realloc(g->live, sizeof *live * (size_t)n);
        float **pool = realloc(g->pool, sizeof *pool * (size_t)n);
        size_t *pool_cap = realloc(g->pool_cap, sizeof *pool_cap * (size_t)n);
        if (d) g->d = d;
        if (cap) g->cap = cap;
        if (live) g->live = live;
        if (pool) g->pool = pool;
        if (pool_cap) g->pool_cap = pool_cap;
        if (!d || !cap || !live || !pool || !pool_cap) return err_code(e, ERR_MEMORY, "out of memory");
        for (int i = g->n; i < n; i++) g->d[i] = NULL, g->cap[i] = 0;
        g->n = n;
    }
    memset(g->live, 0, sizeof *g->live * (size_t)n);
    return true;
}

// Recycling (grads_recycle): stage k gets the buffer released last that holds n floats, the
// one most likely still in the cache; its own smaller one, if any, goes to the pool.
static void take_from_pool(Grads *g, int k, size_t n) {
    for (int q = g->n_pool - 1; q >= 0; q--) {
        if (g->pool_cap[q] < n) continue;
        float *d = g->pool[q];
        const size_t cap = g->pool_cap[q];
        if (g->d[k]) {  // a swap: the stage's own buffer takes the taken one's place
            g->pool[q] = g->d[k], g->pool_cap[q] = g->cap[k];
        } else {  // out of the pool, the ones above it moving down
            const size_t above = (size_t)(g->n_pool - q - 1);
            memmove(g->pool + q, g->pool + q + 1, sizeof *g->pool * above);
            memmove(g->pool_cap + q, g->pool_cap + q + 1, sizeof *g->pool_cap * above);
            g->n_pool--;
        }
        g->d[k] = d, g->cap[k] = cap;
        return;
    }
}

// Once stage k's kernel ran, no later step of the pass reads its gradient: its buffer goes on
// top of the pool.
static void release(Grads *g, int k) {
    if (!g->d[k] || g->n_pool >= g->n) return;
    g->pool[g->n_pool] = g->d[k], g->pool_cap[g->n_pool++] = g->cap[k];
    g->d[k] = NULL, g->cap[k] = 0, g->live[k] = false;
}

// The gradient buffer of stage k's output, cleared on first use in this pass (unless the
// first writer overwrites it: `overwrite`).
static float *stage_grad_for(Grads *g, const Interp *it, int k, bool overwrite) {
    const size_t n = (size_t)shape_numel(&interp_stage(it, k)->shape) * interp_batch(it);
    if (!g->live[k]) {
        if (g->recycle && g->cap[k] < n) take_from_pool(g, k, n);
        if (g->cap[k] < n) {
            free(g->d[k]);
            g->d[k] = malloc(sizeof(float) * n);
            g->cap[k] = g->d[k] ? n : 0;
        }
        if (g->d[k] && !overwrite) memset(g->d[k], 0, sizeof(float) * n);
        g->live[k] = g->d[k] != NULL;
    }
    return g->d[k];
}

// Whether op's backward kernel can write input j's gradient outright (its `fresh` flag).
static bool writes_fresh(Op op, int j) {
    switch (op) {
    case OP_ADD: case OP_MATMUL: case OP_MUL: return j <= 1;
    case OP_ADD_POSITIONS: case OP_LINEAR: case OP_RESHAPE: case OP_SCALE: case OP_SOFTMAX: case OP_LOG_SOFTMAX:
    case OP_LAYER_NORM: case OP_ACTIVATION: case OP_RELU: case OP_GELU: case OP_SPLIT_HEADS: case OP_MERGE_HEADS:
    case OP_TRANSPOSE: case OP_MASK: case OP_GELU_TANH: case OP_SILU: case OP_RMS_NORM: case OP_ROPE: case OP_BAN:
        return j == 0;
    default: return false;
    }
}

// Whether input j of stage st is the first gradient to reach its stage in this pass, and the
// kernel writes it outright: then its buffer is not cleared first. Not when another input of
// st is the same stage (x + x): the second would overwrite the first.
static bool first_writer(const Grads *g, const Stage *st, int j) {
    const Ref *r = &st->in[j];
    if (r->kind != REF_STAGE || g->live[r->index] || !writes_fresh(st->op, j)) return false;
    for (int q = 0; q < st->n_in; q++)
        if (q != j && st->in[q].kind == REF_STAGE && st->in[q].index == r->index) return false;
    return true;
}

// Where input j of stage i sends its gradient: an earlier stage, a weight, or nowhere.
// `fresh`: the stage's buffer is handed over uncleared, for its first writer.
static float *destination(Grads *g, const Interp *it, int i, int j, bool fresh) {
    const Stage *st = interp_stage(it, i);
    const Ref *r = &st->in[j];
    if (r->kind == REF_STAGE) return stage_grad_for(g, it, r->index, fresh);
    if (r->kind == REF_WEIGHT) {
        if (frozen(g->m, r->index)) return NULL;
        return g->dw + g->m->wide_at[r->index] + r->offset;
    }
    return NULL;  // token ids
}


// The ops that mix rows within one example, one example at a time.
static void one_example(const Stage *st, float *const dst[STAGE_MAX_IN], const bool fresh[STAGE_MAX_IN],
                        const float *dy, const float *const in[STAGE_MAX_IN], const float *y) {
    const Shape *s0 = &st->in_shape[0];
    const size_t n = (size_t)shape_numel(&st->shape);
    const int nd = s0->ndim;
    switch (st->op) {
    case OP_ADD:
    case OP_ADD_POSITIONS:  // a learned table's first T rows are its first n numbers
        if (dst[1]) add_backward(dst[1], dy, n, fresh[1]);
        if (dst[0]) add_backward(dst[0], dy, n, fresh[0]);
        return;
    case OP_PERMUTE:
        if (dst[0]) permute_backward(dst[0], dy, s0->dim, st->attr.dims, nd);
        return;
    case OP_MUL:  // a weight times an activation: one example at a time
        mul_backward(dst[0], dst[1], dy, in[0], in[1], n, fresh[0], fresh[1]);
        return;
    case OP_ROPE:
        if (dst[0]) rope_backward(dst[0], dy, s0->dim[0], s0->dim[1], s0->dim[2], 0, st->attr.theta, st->attr.adjacent, fresh[0]);
        return;
    case OP_MAX_POOL:
    case OP_MEAN_POOL:
        if (dst[0])
            pool_backward(dst[0], dy, in[0], y, st->attr.has_pad ? in[1] : NULL, st->attr.pad_id, s0->dim[0],
                          s0->dim[1], st->op == OP_MEAN_POOL);
        return;
    case OP_SPLIT_HEADS:
        if (dst[0]) split_heads_backward(dst[0], dy, s0->dim[0], st->attr.heads, s0->dim[1] / st->attr.heads, fresh[0]);
        return;
    case OP_MERGE_HEADS:
        if (dst[0]) merge_heads_backward(dst[0], dy, s0->dim[1], s0->dim[0], s0->dim[2], fresh[0]);
        return;
    case OP_MATMUL: {
        int ab[2], bb[2], M, N, K;
        matmul_sizes(st, ab, bb, &M, &N, &K);
        matmul_broadcast_backward(dst[0], dst[1], dy, in[0], in[1], ab, bb, M, N, K, st->attr.b_transposed, fresh[0],
                                  fresh[1]);
        return;
    }
    case OP_REPEAT: {
        int outer, len, inner;
        axis_split(s0, st->attr.axis, &outer, &len, &inner);
        if (dst[0]) repeat_backward(dst[0], dy, outer, len, inner, st->attr.times, st->attr.interleave);
        return;
    }
    case OP_CONCAT: {
        int outer, len[STAGE_MAX_IN], inner;
        for (int j = 0; j < st->n_in; j++) axis_split(&st->in_shape[j], st->attr.axis, &outer, &len[j], &inner);
        concat_backward(dst, dy, len, st->n_in, outer, inner);
        return;
    }
    case OP_TRANSPOSE:
        if (dst[0]) transpose_backward(dst[0], dy, nd == 3 ? s0->dim[0] : 1, s0->dim[nd - 2], shape_last(s0), fresh[0]);
        return;
    case OP_MASK:
        if (dst[0]) mask_backward(dst[0], dy, y, n, fresh[0]);
        return;
    default: return;
    }
}

static void per_example(const Stage *st, float *const dst[STAGE_MAX_IN], const bool fresh[STAGE_MAX_IN],
                        const float *dy, const float *const in[STAGE_MAX_IN], const float *y, int B) {
    const size_t n = (size_t)shape_numel(&st->shape);
    size_t stride[STAGE_MAX_IN] = {0};
    bool shared = false;  // a weight's gradient collects from every example: no threads then
    for (int j = 0; j < st->n_in; j++) {
        stride[j] = op_in_stride(st, j);
        shared = shared || (dst[j] && stride[j] == 0);
    }
    PAR_LOOP(B > 1 && !shared, "omp parallel for schedule(static)",
        for (int b = 0; b < B; b++) {
            float *db[STAGE_MAX_IN] = {0};
            const float *ib[STAGE_MAX_IN] = {0};
            for (int j = 0; j < st->n_in; j++) {
                db[j] = dst[j] ? dst[j] + (size_t)b * stride[j] : NULL;
                ib[j] = in[j] ? in[j] + (size_t)b * stride[j] : NULL;
            }
            one_example(st, db, fresh, dy + (size_t)b * n, ib, y + (size_t)b * n);
        }
    );
}

static void run_op_backward(const Interp *it, int i, float *const dst[STAGE_MAX_IN], const bool fresh[STAGE_MAX_IN],
                            const float *dy, const float *y, const float *const in[STAGE_MAX_IN]);

// Stage i's backward kernel: dy ([B, its shape]) into the input gradients dst (NULL: not wanted).
// False when its output or an input it reads could not be had (out of memory recomputing it
// under a trace budget); nothing is written then. (Training's transient outputs the kernel does
// not read are gone by now, NULL, and not asked for: backward_reads_output, backward_reads_input.)
static bool run_kernel(const Interp *it, int i, float *const dst[STAGE_MAX_IN], const bool fresh[STAGE_MAX_IN],
                       const float *dy, BackwardMistake mistake) {
    const Stage *st = interp_stage(it, i);
    const float *y = interp_output(it, i);
    const float *in[STAGE_MAX_IN] = {0};
    bool have = y || !backward_reads_output(st);
    for (int j = 0; j < st->n_in; j++) have = ((in[j] = interp_input(it, i, j)) || !backward_reads_input(st, j)) && have;
    if (!have && mistake == MISTAKE_NONE) return false;
    if (mistake == MISTAKE_NONE || !mistake_backward(mistake, st, dst, fresh, dy, in, y, interp_batch(it)))
        run_op_backward(it, i, dst, fresh, dy, y, in);
    return true;
}

static void run_op_backward(const Interp *it, int i, float *const dst[STAGE_MAX_IN], const bool fresh[STAGE_MAX_IN],
                            const float *dy, const float *y, const float *const in[STAGE_MAX_IN]) {
    const Stage *st = interp_stage(it, i);
    const int B = interp_batch(it);
    const Shape *s0 = &st->in_shape[0];
    const size_t n = (size_t)shape_numel(&st->shape) * B;
    switch (st->op) {
    case OP_EMBEDDING:
        if (dst[1]) embedding_backward(dst[1], dy, in[0], B * s0->dim[0], shape_last(&st->shape), st->attr.scale);
        return;
    case OP_LINEAR:
        if (st->attr.w_in_out) {
            linear_in_out_backward(dst[0], dst[1], st->attr.has_bias ? dst[2] : NULL, dy, in[0], in[1], B * shape_rows(s0),
                                   shape_last(s0), shape_last(&st->shape), st->attr.w_ld, fresh[0]);
            return;
        }
        linear_backward(dst[0], dst[1], st->attr.has_bias ? dst[2] : NULL, dy, in[0], in[1], B * shape_rows(s0),
                        shape_last(s0), st->in_shape[1].dim[0], fresh[0]);
        return;
    case OP_RESHAPE:
        if (dst[0]) add_backward(dst[0], dy, n, fresh[0]);
        return;
    case OP_CHUNK:
        if (dst[0]) chunk_backward(dst[0], dy, B * shape_rows(s0), shape_last(s0), st->attr.chunk, st->attr.chunks);
        return;
    case OP_SCALE:
        if (dst[0]) scale_backward(dst[0], dy, st->attr.scale, n, fresh[0]);
        return;
    case OP_SOFTMAX:
        if (dst[0]) softmax_backward(dst[0], dy, y, B * shape_rows(s0), shape_last(s0), fresh[0]);
        return;
    case OP_LOG_SOFTMAX:
        if (dst[0]) log_softmax_backward(dst[0], dy, y, B * shape_rows(s0), shape_last(s0), fresh[0]);
        return;
    case OP_LAYER_NORM:
        layernorm_backward(dst[0], dst[1], dst[2], dy, in[0], in[1], B * s0->dim[0], s0->dim[1], st->attr.eps,
                           st->attr.ln, fresh[0]);
        return;
    case OP_ACTIVATION:
    case OP_RELU:
    case OP_GELU:
        if (!dst[0]) return;
        if (st->op == OP_GELU || (st->op == OP_ACTIVATION && st->attr.act == ACT_GELU))
            gelu_backward(dst[0], dy, in[0], n, fresh[0]);
        else relu_backward(dst[0], dy, y, n, fresh[0]);  // y > 0 exactly where x > 0 (NaN: neither)
        return;
    case OP_GELU_TANH:
        if (dst[0]) gelu_tanh_backward(dst[0], dy, in[0], n, fresh[0]);
        return;
    case OP_SILU:
        if (dst[0]) silu_backward(dst[0], dy, in[0], n, fresh[0]);
        return;
    case OP_BAN:
        if (dst[0]) ban_backward(dst[0], dy, n / (size_t)shape_last(s0), shape_last(s0), st->attr.id, fresh[0]);
        return;
    case OP_RMS_NORM:
        rms_norm_backward(dst[0], dst[1], dy, in[0], in[1], B * s0->dim[0], s0->dim[1], st->attr.eps, fresh[0]);
        return;
    case OP_MUL:
        if (op_in_stride(st, 0) && op_in_stride(st, 1)) {
            mul_backward(dst[0], dst[1], dy, in[0], in[1], n, fresh[0], fresh[1]);
            return;
        }
        per_example(st, dst, fresh, dy, in, y, B);
        return;
    case OP_ARGMAX:
    case OP_POSITIONAL_TABLE:
    case OP_COUNT: return;  // ids and fixed tables pass no gradient
    default: per_example(st, dst, fresh, dy, in, y, B); return;
    }
}

static bool stage_backward(Grads *g, const Interp *it, int i) {
    const Stage *st = interp_stage(it, i);
    float *dst[STAGE_MAX_IN] = {0};
    bool fresh[STAGE_MAX_IN] = {0};  // decided for every input before any buffer is handed out
    for (int j = 0; j < st->n_in; j++) fresh[j] = first_writer(g, st, j);
    for (int j = 0; j < st->n_in; j++) dst[j] = destination(g, it, i, j, fresh[j]);
    const bool ran = run_kernel(it, i, dst, fresh, g->d[i], g->mistake);
    interp_release_reads(it);  // the forward's outputs it read may go again (a trace budget)
    return ran;
}

size_t backward_input_floats(const Interp *it, int i, int j) {
    const Stage *st = interp_stage(it, i);
    Shape whole;
    size_t col;
    if (stage_input_strided(st, j, &whole, &col)) return (size_t)shape_numel(&whole);  // the whole weight's layout
    const size_t n = (size_t)shape_numel(&st->in_shape[j]);
    return st->in[j].kind == REF_STAGE ? n * (size_t)interp_batch(it) : n;
}

bool backward_input_takes(const Interp *it, int i, int j) {
    const Ref *r = &interp_stage(it, i)->in[j];
    return r->kind == REF_STAGE || (r->kind == REF_WEIGHT && !frozen(interp_model(it), r->index));
}

bool backward_contributions(const Grads *g, const Interp *it, int i, float *const out[STAGE_MAX_IN]) {
    const Stage *st = interp_stage(it, i);
    const float *dy = grads_stage(g, i);
    if (!dy) return false;
    float *dst[STAGE_MAX_IN] = {0};
    const bool fresh[STAGE_MAX_IN] = {0};  // added into cleared buffers
    for (int j = 0; j < st->n_in; j++) {
        dst[j] = backward_input_takes(it, i, j) ? out[j] : NULL;
        if (dst[j]) memset(dst[j], 0, sizeof(float) * backward_input_floats(it, i, j));
        Shape whole;
        size_t col;
        if (dst[j] && stage_input_strided(st, j, &whole, &col)) dst[j] += col;  // written in place in the whole
    }
    return run_kernel(it, i, dst, fresh, dy, g->mistake);
}

// An op with no backward pass: argmax's ids are piecewise constant in x, so no gradient exists.
static bool has_backward(Op op) { return op != OP_ARGMAX; }

bool backward_check(const Interp *it, int from, Err *e) {
    bool *learn = calloc((size_t)from + 1, sizeof *learn), *reach = calloc((size_t)from + 1, sizeof *reach);
    bool ok = learn && reach;
    if (!ok) err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0; ok && i <= from; i++) {  // learn[i]: stage i's output depends on a weight
        const Stage *st = interp_stage(it, i);
        for (int j = 0; j < st->n_in; j++)
            learn[i] = learn[i] || st->in[j].kind == REF_WEIGHT || (st->in[j].kind == REF_STAGE && learn[st->in[j].index]);
    }
    if (ok) reach[from] = true;
    for (int i = from; ok && i >= 0; i--) {  // reach[i]: the loss depends on stage i
        const Stage *st = interp_stage(it, i);
        if (!reach[i]) continue;
        if (!has_backward(st->op) && learn[i])
            ok = err_set(e, "%s:%d: %s has no backward pass, but %s depends on its result (stage %s), so the "
                         "weights before it cannot be trained", interp_program(it)->file, st->line,
                         op_info[st->op].name, interp_stage(it, from)->id, st->id);
        for (int j = 0; j < st->n_in; j++)
            if (st->in[j].kind == REF_STAGE) reach[st->in[j].index] = true;
    }
    free(learn), free(reach);
    return ok;
}

// The first element of n that is not finite, or n.
static size_t first_bad(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return i;
    return n;
}

// After stage i's backward kernel: every gradient it wrote must be finite.
static bool finite_after(Grads *g, const Interp *it, int i, Err *e) {
    const Stage *st = interp_stage(it, i);
    for (int j = 0; j < st->n_in; j++) {
        const Ref *r = &st->in[j];
        const float *d = NULL;
        size_t n = (size_t)shape_numel(&st->in_shape[j]);
        if (r->kind == REF_STAGE) d = g->live[r->index] ? g->d[r->index] : NULL, n *= (size_t)interp_batch(it);
        else if (r->kind == REF_WEIGHT && !frozen(g->m, r->index))
            d = g->dw + g->m->wide_at[r->index] + r->offset;
        const size_t bad = d ? first_bad(d, n) : n;
        if (bad < n)
            return err_set(e, "%s:%d: the backward pass of %s (%s) made a gradient that is not finite (%g at element %zu "
                           "of d%s)", interp_program(it)->file, st->line, st->id, op_info[st->op].name, (double)d[bad],
                           bad, st->in_name[j]);
    }
    return true;
}

bool backward(Grads *g, const Interp *it, int from, const float *dfrom, Err *e) {
    if (!prepare(g, it, e)) return false;
    float *d = stage_grad_for(g, it, from, true);  // written whole just below
    if (!d) return err_set(e, "out of memory for gradients");
    memcpy(d, dfrom, sizeof(float) * (size_t)shape_numel(&interp_stage(it, from)->shape) * interp_batch(it));
    for (int i = from; i >= 0; i--) {
        const Stage *st = interp_stage(it, i);
        if (g->live[i] && !stage_backward(g, it, i))
            return err_code(e, ERR_MEMORY, "%s: out of memory recomputing its forward output or inputs", st->id);
        if (g->live[i] && g->check_finite && !finite_after(g, it, i, e)) return false;
        for (int j = 0; j < st->n_in && g->live[i]; j++)
            if (st->in[j].kind == REF_STAGE && !g->d[st->in[j].index])
                return err_set(e, "out of memory for the gradient of %s", interp_stage(it, st->in[j].index)->id);
        if (g->recycle) release(g, i);
    }
    return true;
}
