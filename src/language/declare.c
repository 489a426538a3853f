// declare.c: what a program declares. Walks the program's structure (blocks, loops, def calls,
// the decode body) without running any op, and evaluates each `param` / `buffer` line: its
// full weight name and its shape. Configuration names come from the Conf being resolved; a
// dimension written as a single unset name takes its size from the file's tensor of that name,
// and a loop count that is an unset name counts the layers the file holds.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "declare.h"
#include "bounds.h"

enum { DECL_MAX_VARS = 256, DECL_MAX_DEPTH = 32, DECL_MAX_COUNT = 4096, DECL_MAX_TENSORS = 20000 };
enum { DECL_SLOTS = 1 << 15 };  // the hash of declared names: a power of two over twice DECL_MAX_TENSORS
#define DECL_MAX_FLOATS ((int64_t)1 << 30)  // 4 GB: one tensor larger than this is refused

typedef struct {
    char name[PROGRAM_NAME_MAX + 1];
    double v;
    bool known;  // false: a tensor argument of a def (no number)
} Var;

typedef struct {
    const Program *p;
    Conf *conf;
    const StFile *file;  // or NULL
    const char *path;
    bool strict;         // unknown names are errors (the last pass)
    bool defaults;       // `default` lines apply
    bool probe;          // counting layers: params only count hits in the file
    int hits;
    int progress;        // configuration names bound in this pass
    Var vars[DECL_MAX_VARS];
    int n_vars, frame;
    char weights[160];
    bool has_weights;
    int depth;
    ParamDecl *decls;
    int n, cap;
    int *slot;  // [DECL_SLOTS] 1 + the index of a declaration whose name hashes there, 0 for none
    long long iterations, max_iterations;  // loop iterations in this pass, and the limit
    Err *e;
} Walk;

const char *const init_names[INIT_COUNT] = {"xavier", "normal", "uniform", "zeros", "ones", "sinusoid", "sinusoid_halves"};

static bool lookup(void *ctx, const char *name, double *out) {
    Walk *w = ctx;
    for (int i = w->n_vars - 1; i >= w->frame; i--)
        if (!strcmp(w->vars[i].name, name)) return w->vars[i].known && (*out = w->vars[i].v, true);
    return conf_get(w->conf, name, out);
}

static bool is_name(const char *s) {
    if (!isalpha((unsigned char)*s) && *s != '_') return false;
    while (isalnum((unsigned char)*s) || *s == '_') s++;
    return *s == '\0';
}

// An expression that cannot be evaluated yet: an error on the last pass, else "skip this".
static bool unknown(Walk *w, const Stmt *s, const char *text, const char *why, bool *skip) {
    *skip = true;
    if (!w->strict) return true;
    return err_set(w->e, "%s:%d: in '%.60s': %s", w->p->file, s->line, text, why);
}

static bool eval(Walk *w, const Stmt *s, const char *text, double *out, bool *skip) {
    char why[240];
    *skip = false;
    if (expr_eval(text, lookup, w, out, why, sizeof why)) return true;
    return unknown(w, s, text, why, skip);
}

static bool push_var(Walk *w, const Stmt *s, const char *name, double v, bool known) {
    if (w->n_vars == DECL_MAX_VARS) return err_set(w->e, "%s:%d: too many nested names", w->p->file, s->line);
    Var *x = &w->vars[w->n_vars++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->v = v, x->known = known;
    return true;
}

static bool run_range(Walk *w, int from, int to);

// The slot of the declaration called `name`, or the empty slot where it would go (open
// addressing), so that a program of many tensors is not checked in time quadratic in them.
static int *slot_of(Walk *w, const char *name) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (const char *c = name; *c; c++) h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
    size_t k = (size_t)h & (DECL_SLOTS - 1);
    while (w->slot[k] && strcmp(w->decls[w->slot[k] - 1].name, name) != 0) k = (k + 1) & (DECL_SLOTS - 1);
    return &w->slot[k];
}

// Adds a declaration (absent: its `if` is 0, so it names no tensor).
static bool add_decl(Walk *w, const Stmt *s, const char *full, Shape shape, InitKind init, float arg, bool absent) {
    int *slot = slot_of(w, full);
    if (*slot) {
        const int i = *slot - 1;
        char a[64], b[64];
        if (w->decls[i].absent != absent)
            return err_set(w->e, absent ? "%s:%d: '%s' is left out here (its `if` is 0), but line %d declares it"
                                        : "%s:%d: '%s' is declared here, but line %d leaves it out (its `if` is 0)",
                           w->p->file, s->line, full, w->decls[i].line);
        if (!absent && (!shape_eq(&w->decls[i].shape, &shape) || w->decls[i].fixed != s->fixed))
            return err_set(w->e, "%s:%d: '%s' is declared again as %s%s, but line %d declared it as %s%s",
                           w->p->file, s->line, full, s->fixed ? "a buffer " : "", shape_str(&shape, a, sizeof a),
                           w->decls[i].line, w->decls[i].fixed ? "a buffer " : "", shape_str(&w->decls[i].shape, b, sizeof b));
        return true;  // a def declares its weights once per call: the same tensor
    }
    if (w->n >= DECL_MAX_TENSORS)  // (a 96-layer model declares about 1500)
        return err_set(w->e, "%s:%d: more than %d tensors declared: a program may declare at most that many",
                       w->p->file, s->line, DECL_MAX_TENSORS);
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 64;
        ParamDecl *nd = realloc(w->decls, sizeof *nd * (size_t)cap);
        if (!nd) return err_code(w->e, ERR_MEMORY, "out of memory");
        w->decls = nd, w->cap = cap;
    }
    char *name = malloc(strlen(full) + 1);
    if (!name) return err_code(w->e, ERR_MEMORY, "out of memory");
    strcpy(name, full);
    w->decls[w->n++] = (ParamDecl){name, shape, init, arg, s->fixed, s->line, absent, s->cond != NULL, s->in_out};
    *slot = w->n;
    return true;
}

// Binds dimension d (a single unset name) from the file's tensor, when the file has it.
static bool bind_from_file(Walk *w, const Stmt *s, const char *full, int d) {
    const char *name = s->args[d].text;
    double v;
    if (!w->file || !is_name(name) || lookup(w, name, &v)) return true;
    const StEntry *en = st_find(w->file, full);
    if (!en || en->shape.ndim != s->n_args - (s->n_args && s->args[s->n_args - 1].kind == ARG_KEYWORD))
        return true;
    char from[300];
    snprintf(from, sizeof from, "the shape of '%s' in %s", full, w->path);
    w->progress++;
    return conf_set(w->conf, name, en->shape.dim[d], from, false, false, w->e);
}

static bool shape_of(Walk *w, const Stmt *s, const char *full, Shape *shape, bool *skip) {
    memset(shape, 0, sizeof *shape);
    int64_t numel = 1;
    for (int d = 0; d < s->n_args && s->args[d].kind == ARG_EXPR; d++) {
        double v;
        if (!bind_from_file(w, s, full, d)) return false;
        if (w->strict && w->file && !st_find(w->file, full) && !expr_eval(s->args[d].text, lookup, w, &v, NULL, 0))
            return model_missing_tensor(w->file, w->path, full, w->p->file, s->line, w->e);
        if (!eval(w, s, s->args[d].text, &v, skip)) return false;
        if (*skip) return true;
        if (!(v >= 1 && v <= (1 << 24) && v == floor(v)))
            return err_set(w->e, "%s:%d: '%s': dimension %d is %s = %g; it must be a whole number from 1 to %d",
                           w->p->file, s->line, full, d, s->args[d].text, v, 1 << 24);
        shape->dim[shape->ndim++] = (int)v;
        numel *= (int64_t)v;
        if (numel > DECL_MAX_FLOATS)
            return err_set(w->e, "%s:%d: '%s' would hold more than 2^30 numbers", w->p->file, s->line, full);
    }
    return true;
}

static bool run_param(Walk *w, const Stmt *s) {
    char name[STAGE_ID_MAX], full[STAGE_ID_MAX + 160], why[240];
    bool skip = false;
    if (!expr_interpolate(s->name, lookup, w, name, sizeof name, why, sizeof why))
        return unknown(w, s, s->name, why, &skip);
    if (w->has_weights) snprintf(full, sizeof full, "%s.%s", w->weights, name);
    else snprintf(full, sizeof full, "%s", name);
    if (strlen(full) >= STAGE_ID_MAX)
        return err_set(w->e, "%s:%d: the weight name '%.60s...' is longer than %d characters", w->p->file,
                       s->line, full, STAGE_ID_MAX - 1);
    if (w->probe) {
        w->hits += w->file && st_find(w->file, full);
        return true;
    }
    if (s->cond) {  // `if EXPR`: a weight the configuration leaves out is declared absent
        double on;
        if (!eval(w, s, s->cond, &on, &skip)) return false;
        if (skip) return true;
        if (on == 0) return add_decl(w, s, full, (Shape){0}, INIT_ZEROS, 0.0f, true);
    }
    Shape shape;
    if (!shape_of(w, s, full, &shape, &skip)) return false;
    if (skip) return true;
    int init = 0;
    while (init < INIT_COUNT && strcmp(init_names[init], s->text) != 0) init++;
    if (init == INIT_COUNT)
        return err_set(w->e, "%s:%d: '%s' is not a way to start a tensor (known: xavier, normal(STD), "
                       "uniform(BOUND), zeros, ones, sinusoid, sinusoid_halves)", w->p->file, s->line, s->text);
    const bool takes = init == INIT_NORMAL || init == INIT_UNIFORM;
    const bool has = s->n_args && s->args[s->n_args - 1].kind == ARG_KEYWORD;
    if (takes != has)
        return err_set(w->e, "%s:%d: %s %s", w->p->file, s->line, s->text,
                       takes ? "needs its number: normal(STD) or uniform(BOUND)" : "takes no number");
    double arg = 0;
    if (has && !eval(w, s, s->args[s->n_args - 1].text, &arg, &skip)) return false;
    if (skip) return true;
    return add_decl(w, s, full, shape, (InitKind)init, (float)arg, false);
}

// Counts the layers the file holds for `for VAR in NAME`: how many values of VAR declare a
// tensor the file has.
static bool count_layers(Walk *w, const Stmt *s, int i, double *count) {
    const bool saved = w->probe;
    w->probe = true;
    int k = 0;
    for (; k < DECL_MAX_COUNT; k++) {
        w->hits = 0;
        if (!push_var(w, s, s->name, k, true)) return false;
        bool ok = run_range(w, i + 1, s->end);
        w->n_vars--;
        if (!ok) return false;
        if (!w->hits) break;
    }
    w->probe = saved;
    *count = k;
    char from[300];
    snprintf(from, sizeof from, "the layers found in %s", w->path);
    w->progress++;
    return conf_set(w->conf, s->text, k, from, false, false, w->e);
}

static bool run_for(Walk *w, const Stmt *s, int i) {
    double count;
    char why[240];
    if (!expr_eval(s->text, lookup, w, &count, why, sizeof why)) {
        bool skip;
        if (w->file && is_name(s->text) && !w->probe) {
            if (!count_layers(w, s, i, &count)) return false;
        } else {
            return unknown(w, s, s->text, why, &skip);
        }
    }
    if (count < 0 || count > DECL_MAX_COUNT || count != floor(count))
        return err_set(w->e, "%s:%d: for %s in %s: the count %g is not a whole number from 0 to %d",
                       w->p->file, s->line, s->name, s->text, count, DECL_MAX_COUNT);
    for (int k = 0; k < (int)count; k++) {
        if (++w->iterations > w->max_iterations)
            return err_code(w->e, ERR_LIMIT, "%s:%d: for %s in %s: more than %lld loop iterations in all (set %s to raise the limit)",
                           w->p->file, s->line, s->name, s->text, w->max_iterations, limit_env(LIMIT_ITERATIONS));
        if (!push_var(w, s, s->name, k, true)) return false;
        bool ok = run_range(w, i + 1, s->end);
        w->n_vars--;
        if (!ok) return false;
    }
    return true;
}

static bool run_block(Walk *w, const Stmt *s, int i) {
    char saved[sizeof w->weights], why[240];
    const bool saved_has = w->has_weights;
    memcpy(saved, w->weights, sizeof saved);
    if (s->text) {
        bool skip;
        if (!expr_interpolate(s->text, lookup, w, w->weights, sizeof w->weights, why, sizeof why)) {
            memcpy(w->weights, saved, sizeof saved);
            return unknown(w, s, s->text, why, &skip);
        }
        w->has_weights = true;
    }
    bool ok = run_range(w, i + 1, s->end);
    memcpy(w->weights, saved, sizeof saved);
    w->has_weights = saved_has;
    return ok;
}

// A def call: numbers are bound (a param's shape may use them), tensors are not.
static bool run_call(Walk *w, const Stmt *s, int d) {
    const Stmt *def = &w->p->stmts[d];
    if (s->n_args != def->n_args || w->depth == DECL_MAX_DEPTH) return true;  // the expander says why
    double v[64];
    bool known[64];
    for (int i = 0; i < s->n_args && i < 64; i++) {
        char why[240];
        known[i] = s->args[i].kind != ARG_WEIGHT && s->args[i].kind != ARG_TRANSPOSED &&
                   expr_eval(s->args[i].text, lookup, w, &v[i], why, sizeof why);
    }
    const int saved_frame = w->frame, saved_n = w->n_vars;
    w->frame = w->n_vars;
    bool ok = true;
    for (int i = 0; i < s->n_args && i < 64 && ok; i++) ok = push_var(w, s, def->args[i].text, v[i], known[i]);
    w->depth++;
    ok = ok && run_range(w, d + 1, def->end);
    w->depth--;
    w->frame = saved_frame, w->n_vars = saved_n;
    return ok;
}

static bool run_default(Walk *w, const Stmt *s) {
    double v;
    char why[240], from[300];
    const ConfItem *set = conf_find(w->conf, s->name);
    if (!w->defaults || w->probe || (set && !set->weak)) return true;  // a program's default beats a built-in one
    if (!expr_eval(s->text, lookup, w, &v, why, sizeof why)) return true;  // needed later? then said there
    snprintf(from, sizeof from, "the default at %s:%d", w->p->file, s->line);
    w->progress++;
    return conf_set(w->conf, s->name, v, from, false, false, w->e);
}

static bool run_range(Walk *w, int from, int to) {
    for (int i = from; i < to;) {
        const Stmt *s = &w->p->stmts[i];
        bool ok = true;
        int d;
        switch (s->kind) {
        case ST_PARAM: ok = run_param(w, s); break;
        case ST_DEFAULT: ok = run_default(w, s); break;
        case ST_FOR: ok = run_for(w, s, i); break;
        case ST_BLOCK: ok = run_block(w, s, i); break;
        case ST_DECODE: ok = run_range(w, i + 1, s->end); break;
        case ST_ASSIGN:
            if ((d = program_find_def(w->p, s->text)) >= 0) ok = run_call(w, s, d);
            break;
        default: break;
        }
        if (!ok) return false;
        i = program_next(w->p, i);
    }
    return true;
}

static void drop(Walk *w) {
    for (int i = 0; i < w->n; i++) free(w->decls[i].name);
    w->n = 0;
    memset(w->slot, 0, sizeof *w->slot * DECL_SLOTS);
}

static bool pass(Walk *w, bool strict, bool defaults) {
    drop(w);
    w->strict = strict, w->defaults = defaults, w->progress = 0;
    w->n_vars = w->frame = 0, w->has_weights = false, w->depth = 0, w->iterations = 0;
    return run_range(w, 0, w->p->n);
}

// Moves the absent declarations after the others, each part in program order; returns how
// many are absent.
static int absent_last(ParamDecl *d, int n) {
    if (n == 0) return 0;  // (d may be NULL)
    ParamDecl *absent = malloc(sizeof *absent * (size_t)n);
    if (!absent) return -1;
    int k = 0, a = 0;
    for (int i = 0; i < n; i++) {
        if (d[i].absent) absent[a++] = d[i];
        else d[k++] = d[i];
    }
    memcpy(d + k, absent, sizeof *absent * (size_t)a);
    free(absent);
    return a;
}

bool program_declare(const Program *p, Conf *conf, const StFile *file, const char *path, ParamDecl **out,
                     int *n, int *n_absent, Err *e) {
    Walk *w = calloc(1, sizeof *w);
    if (!w) return err_code(e, ERR_MEMORY, "out of memory");
    *w = (Walk){.p = p, .conf = conf, .file = file, .path = path ? path : "", .e = e,
                .max_iterations = limit_value(LIMIT_ITERATIONS), .slot = calloc(DECL_SLOTS, sizeof(int))};
    if (!w->slot) return free(w), err_code(e, ERR_MEMORY, "out of memory");
    bool ok = true;
    // Shapes bind names first; defaults fill what they leave; each pass may enable the next.
    for (int round = 0; ok && round < 64; round++) {
        ok = pass(w, false, false);
        if (ok && !w->progress) ok = pass(w, false, true);
        if (ok && !w->progress) break;
    }
    ok = ok && pass(w, true, true);
    *n_absent = ok ? absent_last(w->decls, w->n) : 0;
    if (*n_absent < 0) ok = err_code(e, ERR_MEMORY, "out of memory"), *n_absent = 0;
    if (!ok) {
        drop(w);
        free(w->decls);
        w->decls = NULL;
    }
    *out = w->decls, *n = ok ? w->n - *n_absent : 0;
    free(w->slot);
    free(w);
    return ok;
}

void param_decls_free(ParamDecl *d, int n) {
    for (int i = 0; i < n; i++) free(d[i].name);
    free(d);
}

static bool mentions(const char *text, const char *name) {
    const size_t n = strlen(name);
    for (const char *s = text; text && (s = strstr(s, name)); s += n) {
        const bool before = s > text && (isalnum((unsigned char)s[-1]) || s[-1] == '_' || s[-1] == '.');
        const bool after = isalnum((unsigned char)s[n]) || s[n] == '_';
        if (!before && !after) return true;
    }
    return false;
}

// Whether an op call leaves out an attribute whose default is the configuration value `name`.
static bool uses_default(const Stmt *s, const char *name) {
    static const struct { const char *op, *attr, *name; } implied[] = {
        {"positional_table", "positions", "max_positions"},
        {"positional_table", "width", "d_model"},
        {"split_heads", "heads", "nhead"},
    };
    if (s->kind != ST_ASSIGN) return false;
    for (size_t k = 0; k < sizeof implied / sizeof implied[0]; k++) {
        if (strcmp(s->text, implied[k].op) != 0 || strcmp(name, implied[k].name) != 0) continue;
        bool given = false;
        for (int j = 0; j < s->n_args; j++)
            given = given || (s->args[j].kind == ARG_KEYWORD && !strcmp(s->args[j].key, implied[k].attr));
        if (!given) return true;
    }
    return false;
}

bool program_mentions(const Program *p, const char *name) {
    for (int i = 0; i < p->n; i++) {
        const Stmt *s = &p->stmts[i];
        if ((s->kind == ST_DEFAULT && !strcmp(s->name, name)) || uses_default(s, name)) return true;
        if (mentions(s->text, name) || (s->kind != ST_ASSIGN && s->kind != ST_ALIAS && mentions(s->name, name)))
            return true;
        for (int j = 0; j < s->n_args; j++)
            if (mentions(s->args[j].text, name)) return true;
        if (mentions(s->cond, name)) return true;
    }
    return false;
}

static bool conf_lookup(void *ctx, const char *name, double *out) { return conf_get(ctx, name, out); }

bool program_tie_on(const Stmt *s, const Conf *conf) {
    double v = 1.0;
    return s->kind == ST_TIE && (!s->cond || (expr_eval(s->cond, conf_lookup, (void *)conf, &v, NULL, 0) && v != 0));
}
