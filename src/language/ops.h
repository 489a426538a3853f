// ops.h: the operations a program line can call, and the stage: one kernel call with its
// inputs, attributes, output shape and where in the program it came from.
#ifndef STEPFORMER_OPS_H
#define STEPFORMER_OPS_H

#include "err.h"
#include "kernels.h"
#include "model.h"
#include "tensor.h"

typedef enum {
    OP_EMBEDDING,      // ids, table            -> [T, C]   (x scale, default sqrt(d_model))
    OP_ADD_POSITIONS,  // x, table [P, C], [P, 1, C] or [1, P, C] -> [T, C]
    OP_LINEAR,         // x [T, I] or [I], W [O, I], b [O] -> [T, O] or [O] (chunk k of n: rows k*O/n..)
    OP_SPLIT_HEADS,    // x [T, H*D]            -> [H, T, D]
    OP_MERGE_HEADS,    // x [H, T, D]           -> [T, H*D]
    OP_MATMUL,         // a [.., M, K], b [.., K, N] -> [.., M, N]; leading axes broadcast (torch.matmul)
    OP_TRANSPOSE,      // x [B, M, N]           -> [B, N, M]
    OP_SCALE,          // x                     -> x * by
    OP_MASK,           // x [H, Tq, Tk], ids    -> x with -inf where hidden
    OP_SOFTMAX,        // x [.., n]             -> rows sum to 1
    OP_LOG_SOFTMAX,    // x [.., n]
    OP_ADD,            // a, b (same shape)
    OP_LAYER_NORM,     // x [T, C], g [C], b [C] (b optional)
    OP_ACTIVATION,     // x: relu or gelu, as the model's config says
    OP_RELU,
    OP_GELU,
    OP_ARGMAX,         // x [T, V]              -> ids [T]
    OP_POSITIONAL_TABLE,  // (no inputs)         -> [positions, width] sinusoidal table (defaults:
                          //                         max_positions, d_model, base 10000)
    OP_RESHAPE,        // x, d0, d1, ...        -> the same numbers as [d0, d1, ...] (-1: the rest)
    OP_PERMUTE,        // x, p0, p1, ...        -> axes reordered: axis k is x's axis p_k
    OP_CHUNK,          // x [.., N]             -> [.., N/chunks]: piece `chunk` of the last axis
    OP_MAX_POOL,       // x [T, C] (, ids [T])  -> [C] the maximum over positions (pad skipped)
    OP_MEAN_POOL,      // x [T, C] (, ids [T])  -> [C] the mean over positions (pad skipped)
    OP_REPEAT,         // x                     -> axis `axis` `times` times as long (each entry
                       //                          repeated in place, or the whole axis tiled)
    OP_CONCAT,         // a, b (, c, d)         -> joined along axis `axis`; the others equal
    OP_GELU_TANH,      // x                     -> GELU with the tanh approximation (GPT-2's gelu_new)
    OP_SILU,           // x                     -> x sigmoid(x)
    OP_MUL,            // a, b (same shape)     -> a * b, element by element (SwiGLU's gate)
    OP_RMS_NORM,       // x [T, C], g [C]       -> g x / sqrt(mean(x^2) + eps)
    OP_ROPE,           // x [H, T, D]           -> each column pair turned by position * frequency
    OP_BAN,            // x [.., V]             -> x with column `id` at -inf: a token never chosen
    OP_COUNT
} Op;

typedef struct {
    const char *name;     // as written in programs
    int min_in, max_in;   // tensor arguments
    const char *attrs;    // allowed keyword attributes, space separated
    const char *formula;  // the maths, for the lesson panel
    const char *kernel;   // the C function that computes it (kernels.c)
    const char *summary;  // one line: what it does
    const char *ran;      // when the run uses a faster kernel than `kernel` (which is then the
                          // plain loop it matches): what ran, for the lesson panel; else NULL
} OpInfo;

extern const OpInfo op_info[OP_COUNT];

// Looks an op up by its program name; false if there is none.
bool op_lookup(const char *name, Op *out);
// Whether every Op has its row in op_info (a test guards this).
bool op_table_complete(void);

typedef enum { REF_STAGE, REF_INPUT, REF_WEIGHT } RefKind;

typedef struct {
    RefKind kind;
    int index;      // stage index, input slot, or weight entry index in the model
    size_t offset;  // floats into that tensor where this view starts (linear's chunk)
} Ref;

typedef struct {
    float scale;       // embedding: multiplier; scale: `by`
    int chunk, chunks;  // linear: use rows chunk*O/chunks .. of W and b (columns, with w_in_out)
    bool w_in_out;     // linear: W is stored [I, O_all] (GPT-2's Conv1D), its rows w_ld floats apart
    int w_ld;
    int heads;         // split_heads
    bool causal;       // mask
    bool b_transposed;  // matmul with transpose(b)
    bool has_bias;     // linear
    float eps;         // layer_norm
    LayerNormForm ln;  // layer_norm
    Activation act;    // activation
    float pad_id;      // mask: key ids equal to this are hidden
    bool has_pad;      // mask: a pad id exists and key ids were given
    int positions, width;  // positional_table
    float base;            // positional_table
    int dims[SHAPE_MAX_DIMS];  // reshape: the new shape (one may be -1); permute: the order
    int n_dims;
    int axis;          // repeat, concat: the axis (as written, negative from the end; op_infer
                       // makes it 0 .. ndim-1)
    int times;         // repeat: how many copies
    bool interleave;   // repeat: each entry `times` times in place (repeat_interleave), or not:
                       // the whole axis `times` times over (Tensor.repeat)
    float theta;       // rope: the base of the frequencies (rope_theta)
    bool adjacent;     // rope: pairs (2i, 2i+1), not (i, i + D/2)
    int id;            // ban: the column set to -inf (Marian's pad: bad_words_ids)
} OpAttrs;

// Which input's tokens index each axis of a tensor (so a viewer can label rows and columns):
// an input slot, AXIS_HEADS for the attention-head axis, or AXIS_NONE (e.g. d_model).
enum { AXIS_NONE = -1, AXIS_HEADS = -2 };
typedef struct {
    signed char slot[SHAPE_MAX_DIMS];
} AxisTokens;

// Where a stage sits in the architecture, read off its id: "step.3.decoder.layers.1.cross_attn.q"
// is round 3, the decoder, layer 1, sublayer "cross_attn", name "q".
typedef enum { PART_ENCODER, PART_DECODER, PART_GENERATOR, PART_OTHER, PART_COUNT } Part;
typedef struct {
    Part part;
    bool has_layer;
    int layer;
    char sublayer[32];  // self_attn, cross_attn, or "" outside attention
    char name[32];      // the last component: q, scores, norm1, logits, ...
} StageWhere;
#define STAGE_ID_MAX 112
#define STAGE_MAX_IN 4

typedef struct {
    char id[STAGE_ID_MAX];  // "encoder.layers.0.self_attn.scores"
    Op op;
    int n_in;
    Ref in[STAGE_MAX_IN];
    Shape in_shape[STAGE_MAX_IN];
    char in_name[STAGE_MAX_IN][STAGE_ID_MAX];  // what each input is: stage id, input or weight key
    OpAttrs attr;
    Shape shape;      // of the output
    TensorKind kind;  // of the output
    AxisTokens axes;  // of the output
    // Provenance.
    int line;       // line of the op in the program's source
    int call_line;  // line of the def call that produced it, or 0 at top level
    int step;       // greedy decoding step (0 for everything before or without decoding)
    bool in_decode;  // belongs to the decoding loop's body
    unsigned input_deps;  // bit s set: depends (maybe indirectly) on input slot s
    // What it is, settled when the program is expanded (roles.c), for the views to read.
    StageWhere where;      // its part, layer and sublayer, from the block path of its id
    int role;              // a StageRole: its step of an attention computation, or ROLE_NONE
    int att_weights;       // with a role: the index of that attention's softmax stage
    char attr_text[48];    // an attribute as the program wrote it (scale's by=), or ""
    int kv_heads;          // an attention's scores and weights: how many key/value heads its
                           // query heads share (as many as the query heads in multi-head
                           // attention, fewer in grouped-query, 1 in multi-query); else 0
    bool kv_tiled;         // those key/value heads reach the query heads tiled (query head h
                           // reads key head h mod kv_heads), not in groups (h / (H / kv_heads))
} Stage;

StageWhere stage_where(const Stage *st);

// What the stages before an attention map's softmax did, read off the ops that feed it when
// the program is expanded (roles.c): whatever the program calls them.
// ROLE_CONTEXT is the weighted sum the weights make (a matmul of the softmax with the values).
typedef enum { ROLE_NONE, ROLE_SCORES, ROLE_SCALED, ROLE_MASKED, ROLE_WEIGHTS, ROLE_CONTEXT, ROLE_COUNT } StageRole;
extern const char *const role_names[ROLE_COUNT];  // "", "scores", "scaled", "masked", "weights", "context"

// The key/value head (from 0) that query head h of attention stage st reads (roles.c): h itself
// in multi-head attention, h / (H / kv_heads) in groups, h mod kv_heads tiled.
int stage_kv_head(const Stage *st, int h);

// Checks the inputs of `st` (shapes already filled in) and sets its output shape and kind.
// `where` is "file:line" for messages.
bool op_infer(Stage *st, const ModelConfig *cfg, const char *where, Err *e);

// The token axes of the output, from those of the inputs (after op_infer).
void op_axes(Stage *st, const AxisTokens in[STAGE_MAX_IN]);
AxisTokens axes_none(void);

// Runs the kernel of `st` on a batch of B examples (exec.c). Activations hold B examples one
// after another ([B, shape]); weights are shared. in[i] point at the inputs' data (already
// moved by each Ref's offset), out at B * shape_numel(&st->shape) floats.
// w (or NULL): the weight of a linear or an embedding in another form than floats, in[1] then
// unread (NULL when it is held as half).
typedef struct {
    const float *packed;    // linear's W packed by sgemm_pack (packs.h), or NULL
    const uint16_t *half;   // in[1] held as the file stores it (op_takes_half), moved by its offset, or NULL
    HalfKind half_kind;
} OpWeight;
void op_exec(const Stage *st, const float *const in[STAGE_MAX_IN], const OpWeight *w, float *out, int B);
// Whether input j of st may be a weight held 2 bytes a number: linear's weight (either layout)
// and the embedding's table, which their kernels widen as they read.
bool op_takes_half(const Stage *st, int j);

// Whether input j is a strided view of its tensor: a chunk of a weight stored [in, out], whose
// rows are w_ld apart. Such an input is shown, and its gradient kept, as the whole tensor
// (*whole), the view's columns starting *col floats in.
bool stage_input_strided(const Stage *st, int j, Shape *whole, size_t *col);

// Floats between one example and the next in input j: 0 for a (shared) weight.
size_t op_in_stride(const Stage *st, int j);

// matmul's sizes: each side's leading (batch) axes right-aligned into two, a missing axis 1
// (torch.matmul's broadcasting: out's batch axis is the larger; a side whose axis is 1 serves
// every index along it), and the product's M, N and K.
void matmul_sizes(const Stage *st, int a_batch[2], int b_batch[2], int *M, int *N, int *K);

// repeat and concat see a tensor as [outer, n, inner] around the axis they work on (n its size).
void axis_split(const Shape *s, int axis, int *outer, int *n, int *inner);

// Floating-point operations one run of the stage costs (multiply-add = 2).
double op_flops(const Stage *st);
// A matrix product (linear, matmul): op_flops counts its multiply-adds, 2·M·N·K; any other op
// counts one a number.
bool stage_is_product(const Stage *st);

#endif
