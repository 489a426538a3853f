// expand.c: statements -> the flat list of stages, with every shape checked on the way.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"
#include "bounds.h"
#include "program.h"

typedef struct {
    char name[48];
    bool is_tensor;
    double num;  // when not a tensor
    Ref ref;
    Shape shape;
    TensorKind kind;
    unsigned deps;
    AxisTokens axes;
    bool absent;  // a weight whose `param ... if` is 0: an op's last argument naming it is left out
    char label[STAGE_ID_MAX];  // stage id, input name or weight key
} Binding;

struct Expander {
    const Program *p;
    const Model *m;
    Stage *stages;
    int n, cap;
    ProgramOutput outputs[16];
    int n_outputs;
    int input_len[PROGRAM_MAX_INPUTS];
    size_t input_off[PROGRAM_MAX_INPUTS];  // floats into each input's buffer where its ids start
    Binding *env;
    int n_env, cap_env;
    int frame;          // the current def's first binding (0 at top level)
    char prefix[160];   // stage id prefix, "" at top level
    const char *weights_tpl;  // innermost `weights` prefix, already interpolated into `weights`
    char weights[160];
    int call_line;      // line of the outermost def call being expanded, 0 at top level
    int call_depth;
    int chunk_begin;    // first stage of the current prelude / decode round (duplicate ids)
    IdSet ids;          // the ids of that chunk's stages
    long long iterations;  // loop iterations so far
    long long max_stages, max_iterations;  // the limits (bounds.h), read once
    bool in_decode;
    int step;
    Binding ret;        // what the running def returned
    bool returned;
};

// ---- environment ----------------------------------------------------------------------------

static Binding *find(Expander *x, const char *name) {
    for (int i = x->n_env - 1; i >= x->frame; i--)
        if (strcmp(x->env[i].name, name) == 0) return &x->env[i];
    return NULL;
}

// Binds name to a copy of *v (which may point into env itself: taken before env can grow).
static bool bind(Expander *x, const char *name, const Binding *v, Err *e) {
    const Binding value = *v;
    Binding *b = find(x, name);
    if (!b) {
        if (x->n_env == x->cap_env) {
            int cap = x->cap_env ? 2 * x->cap_env : 64;
            Binding *ne = realloc(x->env, sizeof *ne * (size_t)cap);
            if (!ne) return err_code(e, ERR_MEMORY, "out of memory");
            x->env = ne, x->cap_env = cap;
        }
        b = &x->env[x->n_env++];
    }
    *b = value;
    snprintf(b->name, sizeof b->name, "%s", name);
    return true;
}

static bool lookup_number(void *ctx, const char *name, double *out) {
    Expander *x = ctx;
    Binding *b = find(x, name);
    if (b && !b->is_tensor) return *out = b->num, true;
    return !b && conf_get(&x->m->conf, name, out);
}

static const char *file(const Expander *x) { return x->p->file; }

// "undefined tensor 'x'", with the closest name bound in this scope when one is near.
static bool undefined(Expander *x, const char *name, int line, Err *e) {
    const char *names[256];
    int n = 0;
    for (int i = x->n_env - 1; i >= x->frame && n < 256; i--) names[n++] = x->env[i].name;
    const char *near = err_closest(name, names, n);
    if (near) return err_set(e, "%s:%d: undefined tensor '%s': did you mean '%s'?", file(x), line, name, near);
    return err_set(e, "%s:%d: undefined tensor '%s'", file(x), line, name);
}


static bool eval(Expander *x, const char *text, int line, double *out, Err *e) {
    char why[160];
    if (!expr_eval(text, lookup_number, x, out, why, sizeof why))
        return err_set(e, "%s:%d: in '%.60s%s': %s", file(x), line, text, strlen(text) > 60 ? "..." : "", why);
    return true;
}

// Copies a name template, replacing each {expr} with its integer value.
static bool interpolate(Expander *x, const char *tpl, int line, char *out, size_t n, Err *e) {
    char why[240];
    if (!expr_interpolate(tpl, lookup_number, x, out, n, why, sizeof why))
        return err_set(e, "%s:%d: in '%.60s': %s", file(x), line, tpl, why);
    return true;
}

// ---- stages --------------------------------------------------------------------------------

static bool push_stage(Expander *x, const Stage *st, Err *e) {
    if (x->n >= x->max_stages)
        return err_code(e, ERR_LIMIT, "%s:%d: the pass would have more than %lld stages (set %s to raise the limit)", file(x),
                       st->line, limit_value(LIMIT_STAGES), limit_env(LIMIT_STAGES));
    if (x->n == x->cap) {
        int cap = x->cap ? 2 * x->cap : 256;
        Stage *ns = realloc(x->stages, sizeof *ns * (size_t)cap);
        if (!ns) return err_code(e, ERR_MEMORY, "out of memory");
        x->stages = ns, x->cap = cap;
    }
    x->stages[x->n] = *st;
    const int dup = idset_add(&x->ids, x->stages, x->n);  // the same id twice in one chunk
    if (dup == -2) return err_code(e, ERR_MEMORY, "out of memory");
    if (dup >= 0)
        return err_set(e, "%s:%d: stage '%s' is already defined at line %d; give this one "
                       "another name", file(x), st->line, st->id, x->stages[dup].line);
    x->n++;
    return true;
}

static bool resolve_weight(Expander *x, const char *tpl, int line, Binding *out, Err *e) {
    char name[STAGE_ID_MAX], full[STAGE_ID_MAX];
    if (!interpolate(x, tpl, line, name, sizeof name, e)) return false;
    if (x->weights_tpl) snprintf(full, sizeof full, "%s.%s", x->weights, name);
    else snprintf(full, sizeof full, "%s", name);
    const int i = model_weight_index(x->m, full);
    if (i >= 0) {
        *out = (Binding){.is_tensor = true, .ref = {REF_WEIGHT, i, 0}, .shape = x->m->weights.entries[i].shape,
                         .kind = TK_VALUES, .axes = axes_none()};
        snprintf(out->label, sizeof out->label, "%s", full);
        return true;
    }
    for (int k = x->m->n_params; k < x->m->n_params + x->m->n_absent; k++)
        if (!strcmp(x->m->params[k].name, full)) {
            *out = (Binding){.is_tensor = true, .ref = {REF_WEIGHT, -1, 0}, .absent = true, .axes = axes_none()};
            snprintf(out->label, sizeof out->label, "%s", full);
            return true;
        }
    const char *names[512];
    int n = 0;
    for (int k = 0; k < x->m->n_params && n < 512; k++) names[n++] = x->m->params[k].name;
    const char *near = err_closest(full, names, n);
    if (near) return err_set(e, "%s:%d: the weight '%s' is not declared: did you mean '%s'?", file(x), line, full, near);
    return err_set(e, "%s:%d: the weight '%s' is not declared: add a line `param @%s [dims] INIT` "
                   "(docs/lessons.md, \"param and buffer\")", file(x), line, full, name);
}

// The value of one argument: a tensor by name, a weight, or a number.
static bool arg_value(Expander *x, const Arg *a, int line, Binding *out, Err *e) {
    if (a->kind == ARG_WEIGHT) return resolve_weight(x, a->text, line, out, e);
    if (a->kind == ARG_TENSOR || a->kind == ARG_TRANSPOSED) {
        Binding *b = find(x, a->text);
        if (b) return *out = *b, true;
        double v;
        if (a->kind == ARG_TENSOR && conf_get(&x->m->conf, a->text, &v))
            return *out = (Binding){.num = v}, true;
        return undefined(x, a->text, line, e);
    }
    *out = (Binding){.is_tensor = false};
    return eval(x, a->text, line, &out->num, e);
}

static bool has_attr(Op op, const char *key) {
    const char *list = op_info[op].attrs;
    size_t n = strlen(key);
    for (const char *s = list; (s = strstr(s, key)); s += n)
        if ((s == list || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\0')) return true;
    return false;
}

// What an attribute a line leaves out is. positional_table: one row per position the model
// takes (max_positions, or the interpreter's limit without one), d_model columns, base 10000.
static void set_defaults(Stage *st, const Model *m) {
    const ModelConfig *c = &m->cfg;
    st->attr = (OpAttrs){.scale = NAN, .chunks = 1, .heads = c->nhead, .eps = c->layer_norm_eps,
                         .ln = c->layer_norm, .act = c->activation, .positions = model_max_len(m),
                         .width = c->d_model, .base = 10000.0f, .interleave = true, .theta = 10000.0f, .id = -1};
}

static bool set_attr(Expander *x, Stage *st, const Arg *a, Err *e) {
    if (!has_attr(st->op, a->key))
        return err_set(e, "%s:%d: %s has no attribute '%s' (it takes: %s)", file(x), st->line,
                       op_info[st->op].name, a->key,
                       *op_info[st->op].attrs ? op_info[st->op].attrs : "none");
    double v;
    if (!eval(x, a->text, st->line, &v, e)) return false;
    const char *k = a->key;
    const bool whole = !strcmp(k, "chunk") || !strcmp(k, "chunks") || !strcmp(k, "heads") ||
                       !strcmp(k, "positions") || !strcmp(k, "width") || !strcmp(k, "times") || !strcmp(k, "axis") ||
                       !strcmp(k, "interleave") || !strcmp(k, "adjacent") || !strcmp(k, "id");
    if (whole && !(fabs(v) <= 1e8 && v == floor(v)))
        return err_set(e, "%s:%d: %s: %s=%g must be a whole number", file(x), st->line,
                       op_info[st->op].name, k, v);
    if (!whole && !(fabs(v) <= 3e38))
        return err_set(e, "%s:%d: %s: %s=%g is not a usable number", file(x), st->line,
                       op_info[st->op].name, k, v);
    if (!strcmp(k, "scale") || !strcmp(k, "by")) st->attr.scale = (float)v;
    else if (!strcmp(k, "chunk")) st->attr.chunk = (int)v;
    else if (!strcmp(k, "chunks")) st->attr.chunks = (int)v;
    else if (!strcmp(k, "heads")) st->attr.heads = (int)v;
    else if (!strcmp(k, "causal")) st->attr.causal = v != 0;
    else if (!strcmp(k, "eps")) st->attr.eps = (float)v;
    else if (!strcmp(k, "annotated")) st->attr.ln = v != 0 ? LN_ANNOTATED : LN_TORCH;
    else if (!strcmp(k, "positions")) st->attr.positions = (int)v;
    else if (!strcmp(k, "width")) st->attr.width = (int)v;
    else if (!strcmp(k, "base")) st->attr.base = (float)v;
    else if (!strcmp(k, "times")) st->attr.times = (int)v;
    else if (!strcmp(k, "axis")) st->attr.axis = (int)v;
    else if (!strcmp(k, "interleave")) st->attr.interleave = v != 0;
    else if (!strcmp(k, "theta")) st->attr.theta = (float)v;
    else if (!strcmp(k, "adjacent")) st->attr.adjacent = v != 0;
    else if (!strcmp(k, "id")) st->attr.id = (int)v;
    return true;
}

// Adds one tensor argument; an absent weight (`param ... if` 0) is left out, its name kept in
// *left_out (no tensor argument may follow it).
static bool add_input(Expander *x, Stage *st, const Arg *a, AxisTokens *axes, char *left_out, Err *e) {
    if (*left_out)
        return err_set(e, "%s:%d: %s: the weight '%s' is absent here (its `param ... if` is 0); only an op's "
                       "last argument may name an absent weight", file(x), st->line, op_info[st->op].name, left_out);
    if (a->kind == ARG_EXPR)
        return err_set(e, "%s:%d: %s takes tensors as arguments; write settings as key=value",
                       file(x), st->line, op_info[st->op].name);
    if (st->n_in == op_info[st->op].max_in)
        return err_set(e, "%s:%d: %s takes at most %d tensors", file(x), st->line,
                       op_info[st->op].name, op_info[st->op].max_in);
    if (a->kind == ARG_TRANSPOSED) {
        if (st->op != OP_MATMUL || st->n_in != 1)
            return err_set(e, "%s:%d: transpose(...) may only be matmul's second argument; use "
                           "t = transpose(x) elsewhere", file(x), st->line);
        st->attr.b_transposed = true;
    }
    Binding b;
    if (!arg_value(x, a, st->line, &b, e)) return false;
    if (b.absent) {
        snprintf(left_out, STAGE_ID_MAX, "%s", b.label);
        return true;
    }
    if (!b.is_tensor)
        return err_set(e, "%s:%d: '%s' is a number, but %s needs a tensor here", file(x),
                       st->line, a->text, op_info[st->op].name);
    st->in[st->n_in] = b.ref;
    st->in_shape[st->n_in] = b.shape;
    st->input_deps |= b.deps;
    axes[st->n_in] = b.axes;
    snprintf(st->in_name[st->n_in], STAGE_ID_MAX, "%s", b.label);
    st->n_in++;
    return true;
}

// One number of reshape's shape or permute's order.
static bool add_dim(Expander *x, Stage *st, const Arg *a, Err *e) {
    Binding b;
    if (!arg_value(x, a, st->line, &b, e)) return false;
    if (b.is_tensor || !(fabs(b.num) <= 1e8 && b.num == floor(b.num)))
        return err_set(e, "%s:%d: %s: '%s' must be a whole number", file(x), st->line, op_info[st->op].name, a->text);
    if (st->attr.n_dims == SHAPE_MAX_DIMS)
        return err_set(e, "%s:%d: %s: at most %d dimensions", file(x), st->line, op_info[st->op].name, SHAPE_MAX_DIMS);
    st->attr.dims[st->attr.n_dims++] = (int)b.num;
    return true;
}

// Linear's chunk k of n: rows k*R/n .. of W (and b) as a view; of a weight stored [in, out],
// columns k*R/n .. (each row of the view then w_ld floats apart).
static bool apply_chunk(Expander *x, Stage *st, Err *e) {
    OpAttrs *a = &st->attr;
    const Ref *w = &st->in[1];
    a->w_in_out = w->kind == REF_WEIGHT && x->m->params[w->index].in_out;
    a->w_ld = st->in_shape[1].dim[1];
    const int axis = a->w_in_out ? 1 : 0, R = st->in_shape[1].dim[axis];
    if (a->chunks < 1 || a->chunk < 0 || a->chunk >= a->chunks || R % a->chunks != 0)
        return err_set(e, "%s:%d: linear: chunk=%d of chunks=%d does not fit W's %d %s",
                       file(x), st->line, a->chunk, a->chunks, R, a->w_in_out ? "columns" : "rows");
    int rows = R / a->chunks;
    st->in_shape[1].dim[axis] = rows;
    st->in[1].offset = a->w_in_out ? (size_t)a->chunk * rows : (size_t)a->chunk * rows * st->in_shape[1].dim[1];
    if (st->n_in == 3) {
        st->in_shape[2].dim[0] = st->in_shape[2].dim[0] / a->chunks;
        st->in[2].offset = (size_t)a->chunk * rows;
    }
    return true;
}

static bool finish_stage(Expander *x, Stage *st, Err *e) {
    const ModelConfig *c = &x->m->cfg;
    if (st->op == OP_LINEAR) {
        st->attr.has_bias = st->n_in == 3;
        if (st->n_in >= 2 && st->in_shape[1].ndim == 2 && !apply_chunk(x, st, e)) return false;
    }
    if (st->op == OP_EMBEDDING && isnan(st->attr.scale) && st->n_in == 2)
        st->attr.scale = sqrtf((float)st->in_shape[1].dim[st->in_shape[1].ndim - 1]);
    if (st->op == OP_SCALE && isnan(st->attr.scale))
        return err_set(e, "%s:%d: scale needs by=NUMBER", file(x), st->line);
    if (st->op == OP_MASK || st->op == OP_MAX_POOL || st->op == OP_MEAN_POOL) {
        st->attr.has_pad = st->n_in == 2 && c->pad_id.set;
        st->attr.pad_id = (float)c->pad_id.id;
    }
    char where[300];
    snprintf(where, sizeof where, "%s:%d", file(x), st->line);
    if (!op_infer(st, c, where, e)) return false;
    for (int d = 0; d < st->shape.ndim; d++)
        if (st->shape.dim[d] < 1)
            return err_set(e, "%s: %s would give an empty tensor (dimension %d has size %d)", where,
                           op_info[st->op].name, d, st->shape.dim[d]);
    char sh[64];
    if ((double)shape_numel(&st->shape) * sizeof(float) > (double)limit_bytes(LIMIT_TENSOR_MB))
        return err_code(e, ERR_LIMIT, "%s: %s would give a %s tensor, more than the %lld MB one tensor may take (set %s to raise "
                       "the limit)", where, op_info[st->op].name, shape_str(&st->shape, sh, sizeof sh),
                       limit_value(LIMIT_TENSOR_MB), limit_env(LIMIT_TENSOR_MB));
    return true;
}

static bool make_stage(Expander *x, const Stmt *s, Op op, Err *e) {
    Stage st;
    memset(&st, 0, sizeof st);
    st.op = op;
    st.line = s->line;
    st.call_line = x->call_line;
    st.step = x->step;
    st.in_decode = x->in_decode;
    set_defaults(&st, x->m);
    if (snprintf(st.id, sizeof st.id, "%s%s%s", x->prefix, *x->prefix ? "." : "", s->name) >=
        (int)sizeof st.id)
        return err_set(e, "%s:%d: stage id too long", file(x), s->line);
    for (int i = 0; i < s->n_args; i++)
        if (s->args[i].kind == ARG_KEYWORD && !set_attr(x, &st, &s->args[i], e)) return false;
    AxisTokens axes[STAGE_MAX_IN];
    const bool sized = op == OP_RESHAPE || op == OP_PERMUTE;  // numbers after the tensor: dims
    char left_out[STAGE_ID_MAX] = "";
    for (int i = 0; i < s->n_args; i++) {
        if (s->args[i].kind == ARG_KEYWORD) continue;
        if (sized && st.n_in == 1) {
            if (!add_dim(x, &st, &s->args[i], e)) return false;
        } else if (!add_input(x, &st, &s->args[i], axes, left_out, e)) {
            return false;
        }
    }
    if (st.n_in < op_info[op].min_in && *left_out)
        return err_set(e, "%s:%d: %s needs the weight '%s', but it is absent here (its `param ... if` is 0)",
                       file(x), s->line, op_info[op].name, left_out);
    if (st.n_in < op_info[op].min_in)
        return err_set(e, "%s:%d: %s takes at least %d tensors, got %d", file(x), s->line,
                       op_info[op].name, op_info[op].min_in, st.n_in);
    if (!finish_stage(x, &st, e)) return false;
    op_axes(&st, axes);
    stage_describe(&st, x->stages, x->n, s);
    if (!push_stage(x, &st, e)) return false;
    Binding b = {.is_tensor = true, .ref = {REF_STAGE, x->n - 1, 0}, .shape = st.shape,
                 .kind = st.kind, .deps = st.input_deps, .axes = st.axes};
    snprintf(b.label, sizeof b.label, "%s", st.id);
    return bind(x, s->name, &b, e);
}

// ---- statements -----------------------------------------------------------------------------

static bool run_range(Expander *x, int from, int to, Err *e);

static bool call_def(Expander *x, const Stmt *s, int d, Err *e) {
    const Stmt *def = &x->p->stmts[d];
    if (s->n_args != def->n_args)
        return err_set(e, "%s:%d: %s takes %d arguments (line %d), got %d", file(x), s->line,
                       def->name, def->n_args, def->line, s->n_args);
    if (x->call_depth == 32) return err_set(e, "%s:%d: defs call each other too deeply", file(x), s->line);
    Binding *args = calloc((size_t)s->n_args + 1, sizeof *args);
    if (!args) return err_code(e, ERR_MEMORY, "out of memory");
    bool ok = true;
    for (int i = 0; i < s->n_args && ok; i++) ok = arg_value(x, &s->args[i], s->line, &args[i], e);
    const int saved_frame = x->frame, saved_line = x->call_line;
    x->frame = x->n_env;
    if (!x->call_line) x->call_line = s->line;
    x->call_depth++;
    for (int i = 0; i < s->n_args && ok; i++) ok = bind(x, def->args[i].text, &args[i], e);
    x->returned = false;
    ok = ok && run_range(x, d + 1, def->end, e);
    if (ok && !x->returned)
        ok = err_set(e, "%s:%d: def %s ended without 'return'", file(x), def->line, def->name);
    x->n_env = x->frame;
    x->frame = saved_frame;
    x->call_line = saved_line;
    x->call_depth--;
    x->returned = false;
    free(args);
    return ok && bind(x, s->name, &x->ret, e);
}

// "the ops are embedding, ...; this program's defs are attention, ...", for an unknown name.
static void list_ops_and_defs(const Program *p, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "the ops are ");
    for (int i = 0; i < OP_COUNT && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%s", i ? ", " : "", op_info[i].name);
    int defs = 0;
    for (int i = 0; i < p->n && k < n; i = program_next(p, i))
        if (p->stmts[i].kind == ST_DEF)
            k += (size_t)snprintf(buf + k, n - k, "%s%s", defs++ ? ", " : "; this program's defs are ",
                                  p->stmts[i].name);
    if (!defs && k < n) snprintf(buf + k, n - k, "; this program has no defs");
}

static bool run_assign(Expander *x, const Stmt *s, Err *e) {
    Op op;
    if (op_lookup(s->text, &op)) return make_stage(x, s, op, e);
    int d = program_find_def(x->p, s->text);
    if (d >= 0) return call_def(x, s, d, e);
    char known[512];
    list_ops_and_defs(x->p, known, sizeof known);
    const char *names[OP_COUNT + 64];
    int n = 0;
    for (int k = 0; k < OP_COUNT; k++) names[n++] = op_info[k].name;
    for (int k = 0; k < x->p->n && n < OP_COUNT + 64; k = program_next(x->p, k))
        if (x->p->stmts[k].kind == ST_DEF) names[n++] = x->p->stmts[k].name;
    const char *near = err_closest(s->text, names, n);
    if (near)
        return err_set(e, "%s:%d: unknown op '%s': did you mean '%s'? (%s)", file(x), s->line, s->text, near, known);
    return err_set(e, "%s:%d: unknown op '%s' (not an op and no def by that name): %s", file(x),
                   s->line, s->text, known);
}

static bool run_block(Expander *x, const Stmt *s, int i, Err *e) {
    char name[STAGE_ID_MAX], saved_prefix[sizeof x->prefix], saved_w[sizeof x->weights];
    if (!interpolate(x, s->name, s->line, name, sizeof name, e)) return false;
    memcpy(saved_prefix, x->prefix, sizeof saved_prefix);
    memcpy(saved_w, x->weights, sizeof saved_w);
    const char *saved_tpl = x->weights_tpl;
    size_t len = strlen(x->prefix);
    snprintf(x->prefix + len, sizeof x->prefix - len, "%s%s", len ? "." : "", name);
    bool ok = true;
    if (s->text) {
        ok = interpolate(x, s->text, s->line, x->weights, sizeof x->weights, e);
        x->weights_tpl = s->text;
    }
    ok = ok && run_range(x, i + 1, s->end, e);
    memcpy(x->prefix, saved_prefix, sizeof saved_prefix);
    memcpy(x->weights, saved_w, sizeof saved_w);
    x->weights_tpl = saved_tpl;
    return ok;
}

static bool run_for(Expander *x, const Stmt *s, int i, Err *e) {
    double count;
    if (!eval(x, s->text, s->line, &count, e)) return false;
    if (count < 0 || count > 4096 || count != floor(count))
        return err_set(e, "%s:%d: for %s in %s: the count %g is not a whole number from 0 to 4096",
                       file(x), s->line, s->name, s->text, count);
    for (int k = 0; k < (int)count && !x->returned; k++) {
        if (++x->iterations > x->max_iterations)
            return err_code(e, ERR_LIMIT, "%s:%d: for %s in %s: more than %lld loop iterations in all (set %s to raise the limit)",
                           file(x), s->line, s->name, s->text, limit_value(LIMIT_ITERATIONS),
                           limit_env(LIMIT_ITERATIONS));
        Binding v = {.num = k};
        if (!bind(x, s->name, &v, e) || !run_range(x, i + 1, s->end, e)) return false;
    }
    return true;
}

static bool run_output(Expander *x, const Stmt *s, Err *e) {
    Binding *b = find(x, s->text);
    if (!b || !b->is_tensor || b->ref.kind != REF_STAGE)
        return err_set(e, "%s:%d: output %s: '%s' is not a tensor computed by the program",
                       file(x), s->line, s->name, s->text);
    int i = 0;
    while (i < x->n_outputs && strcmp(x->outputs[i].name, s->name) != 0) i++;
    if (i == 16) return err_set(e, "%s:%d: too many outputs", file(x), s->line);
    if (i == x->n_outputs) snprintf(x->outputs[x->n_outputs++].name, sizeof x->outputs[i].name, "%s", s->name);
    x->outputs[i].stage = b->ref.index;
    return bind(x, s->name, b, e);  // the output's name also names the tensor from here on
}

static bool run_stmt(Expander *x, int i, Err *e) {
    const Stmt *s = &x->p->stmts[i];
    switch (s->kind) {
    case ST_INPUT: {
        int slot = program_input(x->p, s->name);
        Binding b = {.is_tensor = true, .ref = {REF_INPUT, slot, x->input_off[slot]},
                     .shape = shape1(x->input_len[slot]), .kind = TK_IDS, .deps = 1u << slot,
                     .axes = axes_none()};
        b.axes.slot[0] = (signed char)slot;
        snprintf(b.label, sizeof b.label, "%s", s->name);
        return bind(x, s->name, &b, e);
    }
    case ST_OUTPUT: return run_output(x, s, e);
    case ST_BLOCK: return run_block(x, s, i, e);
    case ST_FOR: return run_for(x, s, i, e);
    case ST_DEF:
    case ST_PARAM:    // declarations: the model holds them (declare.c)
    case ST_DEFAULT:
    case ST_TIE: return true;  // read by the backward pass (backward.h)
    case ST_RETURN: {
        Binding *b = find(x, s->text);
        if (!b || x->call_depth == 0)
            return err_set(e, "%s:%d: %s", file(x), s->line,
                           x->call_depth ? "return of an undefined name" : "return outside a def");
        x->ret = *b;
        x->returned = true;
        return true;
    }
    case ST_DECODE:
        return err_set(e, "%s:%d: decode is run by the interpreter", file(x), s->line);
    case ST_ASSIGN: return run_assign(x, s, e);
    case ST_ALIAS: {
        Binding *b = find(x, s->text);
        double v;
        if (b) return bind(x, s->name, b, e);
        if (conf_get(&x->m->conf, s->text, &v)) return bind(x, s->name, &(Binding){.num = v}, e);
        return undefined(x, s->text, s->line, e);
    }
    case ST_COUNT: break;
    }
    return err_set(e, "%s:%d: unknown statement", file(x), s->line);
}

static bool run_range(Expander *x, int from, int to, Err *e) {
    for (int i = from; i < to && !x->returned;) {
        if (!run_stmt(x, i, e)) return false;
        i = program_next(x->p, i);
    }
    return true;
}

// ---- public ---------------------------------------------------------------------------------

Expander *expander_new(const Program *p, const Model *m) {
    Expander *x = calloc(1, sizeof *x);
    if (x) x->p = p, x->m = m, x->max_stages = limit_value(LIMIT_STAGES), x->max_iterations = limit_value(LIMIT_ITERATIONS);
    return x;
}

void expander_free(Expander *x) {
    if (!x) return;
    free(x->stages);
    free(x->env);
    idset_free(&x->ids);
    free(x);
}

void expander_set_input(Expander *x, int slot, int len, size_t offset) {
    x->input_len[slot] = len, x->input_off[slot] = offset;
    for (int i = 0; i < x->n_env; i++)
        if (x->env[i].is_tensor && x->env[i].ref.kind == REF_INPUT && x->env[i].ref.index == slot)
            x->env[i].shape = shape1(len), x->env[i].ref.offset = offset;
}

bool expand_prelude(Expander *x, Err *e) {
    x->chunk_begin = x->n, idset_clear(&x->ids);
    return run_range(x, 0, x->p->decode, e);
}

bool expand_decode(Expander *x, bool greedy, int step, int *next_stage, Err *e) {
    const Stmt *d = &x->p->stmts[x->p->decode];
    x->chunk_begin = x->n, idset_clear(&x->ids);
    x->in_decode = true;
    x->step = step;
    if (greedy) snprintf(x->prefix, sizeof x->prefix, "step.%d", step);
    bool ok = run_range(x, x->p->decode + 1, d->end, e);
    x->prefix[0] = '\0';
    x->in_decode = false;
    if (!ok) return false;
    Binding *b = find(x, d->text);
    if (!b || !b->is_tensor || b->ref.kind != REF_STAGE || b->kind != TK_IDS)
        return err_set(e, "%s:%d: decode %s from %s: '%s' must be token ids computed in the loop "
                       "(an argmax)", file(x), d->line, d->name, d->text, d->text);
    // One id per position of what it decodes: the last one is appended each round.
    const int slot = program_input(x->p, d->name), T = slot >= 0 ? x->input_len[slot] : -1;
    char sh[64];
    if (b->shape.ndim != 1 || b->shape.dim[0] != T)
        return err_set(e, "%s:%d: decode %s from %s: '%s' must hold one id per position of %s ([%d]), but it is %s "
                       "(an argmax over the target's rows gives that)", file(x), d->line, d->name, d->text, d->text,
                       d->name, T, shape_str(&b->shape, sh, sizeof sh));
    *next_stage = b->ref.index;
    return true;
}

bool expand_rest(Expander *x, Err *e) {
    if (x->p->decode == x->p->n) return true;
    x->chunk_begin = x->n, idset_clear(&x->ids);
    return run_range(x, x->p->stmts[x->p->decode].end, x->p->n, e);
}

const Stage *expander_stages(const Expander *x, int *n) {
    *n = x->n;
    return x->stages;
}

const ProgramOutput *expander_outputs(const Expander *x, int *n) {
    *n = x->n_outputs;
    return x->outputs;
}
