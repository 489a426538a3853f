// parse.c: program text -> statements (see program.h for the language).
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

typedef struct {
    const char *s;  // the rest of the line
    const char *file;
    int line;
    Err *e;
} Lex;

static char *dup_n(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void skip_ws(Lex *l) {
    while (*l->s == ' ' || *l->s == '\t') l->s++;
}

static bool at_end(Lex *l) {
    skip_ws(l);
    return *l->s == '\0' || *l->s == '#';
}

static bool fail(Lex *l, const char *what) {
    return err_set(l->e, "%s:%d: %s", l->file, l->line, what);
}

static bool is_word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

// A plain identifier.
static char *word(Lex *l) {
    skip_ws(l);
    const char *b = l->s;
    if (!isalpha((unsigned char)*b) && *b != '_') return NULL;
    while (is_word_char(*l->s)) l->s++;
    return dup_n(b, (size_t)(l->s - b));
}

// A dotted name that may hold {expr} holes: layers.{i}, transformer.encoder.layers.{i}.
static char *path(Lex *l) {
    skip_ws(l);
    const char *b = l->s;
    int depth = 0;
    while (*l->s && (is_word_char(*l->s) || *l->s == '.' || *l->s == '{' || *l->s == '}' ||
                     (depth > 0 && *l->s != '\n'))) {
        if (*l->s == '{') depth++;
        if (*l->s == '}') depth--;
        l->s++;
    }
    return l->s > b ? dup_n(b, (size_t)(l->s - b)) : NULL;
}

static bool expect(Lex *l, char c) {
    skip_ws(l);
    if (*l->s != c) return false;
    l->s++;
    return true;
}

static bool keyword(Lex *l, const char *kw) {
    skip_ws(l);
    size_t n = strlen(kw);
    if (strncmp(l->s, kw, n) != 0 || is_word_char(l->s[n])) return false;
    l->s += n;
    return true;
}

// An expression runs to the next top-level ',' or ')'.
static char *expr_text(Lex *l) {
    skip_ws(l);
    const char *b = l->s;
    int depth = 0;
    while (*l->s && *l->s != '#') {
        if (*l->s == '(') depth++;
        if (*l->s == ')' && depth-- == 0) break;
        if (*l->s == ',' && depth == 0) break;
        l->s++;
    }
    const char *end = l->s;
    while (end > b && isspace((unsigned char)end[-1])) end--;
    return end > b ? dup_n(b, (size_t)(end - b)) : NULL;
}

static bool parse_arg(Lex *l, Arg *a) {
    skip_ws(l);
    memset(a, 0, sizeof *a);
    if (*l->s == '@') {
        l->s++;
        a->kind = ARG_WEIGHT;
        a->text = path(l);
        return a->text || fail(l, "expected a weight name after '@'");
    }
    const char *save = l->s;
    char *w = word(l);
    if (w && strcmp(w, "transpose") == 0 && expect(l, '(')) {
        free(w);
        a->kind = ARG_TRANSPOSED;
        a->text = word(l);
        if (!a->text || !expect(l, ')')) return fail(l, "expected transpose(name)");
        return true;
    }
    skip_ws(l);
    if (w && *l->s == '=' && l->s[1] != '=') {
        l->s++;
        a->kind = ARG_KEYWORD;
        a->key = w;
        a->text = expr_text(l);
        return a->text || fail(l, "expected a value after '='");
    }
    const char *after = l->s;
    skip_ws(l);
    if (w && (*l->s == ',' || *l->s == ')')) {
        a->kind = ARG_TENSOR;  // a bare name: a tensor, or a number for a def parameter
        a->text = w;
        return true;
    }
    (void)after;
    free(w);
    l->s = save;
    a->kind = ARG_EXPR;
    a->text = expr_text(l);
    return a->text || fail(l, "expected an argument");
}

static bool parse_args(Lex *l, Stmt *st) {
    if (!expect(l, '(')) return fail(l, "expected '('");
    skip_ws(l);
    if (expect(l, ')')) return true;
    for (;;) {
        Arg *na = realloc(st->args, sizeof *na * (size_t)(st->n_args + 1));
        if (!na) return fail(l, "out of memory");
        st->args = na;
        if (!parse_arg(l, &st->args[st->n_args++])) return false;
        if (expect(l, ')')) return true;
        if (!expect(l, ',')) return fail(l, "expected ',' or ')' between arguments");
    }
}

static bool push_arg(Lex *l, Stmt *st, ArgKind kind, char *key, char *text) {
    Arg *na = realloc(st->args, sizeof *na * (size_t)(st->n_args + 1));
    if (!na) {
        free(key), free(text);
        return fail(l, "out of memory");
    }
    st->args = na;
    st->args[st->n_args++] = (Arg){kind, key, text};
    return true;
}

// param @name [d0, d1] INIT [if EXPR]   or   buffer @name [...] INIT [if EXPR],
// INIT = word or word(expr)
static bool parse_param(Lex *l, Stmt *st) {
    const char *form = st->fixed ? "expected: buffer @NAME [dims] INIT" : "expected: param @NAME [dims] INIT";
    skip_ws(l);
    if (*l->s != '@') return fail(l, form);
    l->s++;
    if (!(st->name = path(l)) || !expect(l, '[')) return fail(l, form);
    for (;;) {
        skip_ws(l);
        const char *b = l->s;
        while (*l->s && *l->s != ',' && *l->s != ']' && *l->s != '#') l->s++;
        const char *end = l->s;
        while (end > b && isspace((unsigned char)end[-1])) end--;
        if (end == b) return fail(l, "a tensor dimension is empty");
        if (st->n_args == SHAPE_MAX_DIMS) return fail(l, "a tensor has at most 4 dimensions");
        if (!push_arg(l, st, ARG_EXPR, NULL, dup_n(b, (size_t)(end - b)))) return false;
        if (expect(l, ']')) break;
        if (!expect(l, ',')) return fail(l, "expected ',' or ']' between dimensions");
    }
    if (!(st->text = word(l)))
        return fail(l, "expected how it starts: xavier, normal(STD), uniform(BOUND), zeros, ones, sinusoid or sinusoid_halves");
    if (expect(l, '(')) {
        char *a = expr_text(l);
        if (!a || !expect(l, ')')) return free(a), fail(l, "expected INIT(NUMBER)");
        if (!push_arg(l, st, ARG_KEYWORD, dup_n("init", 4), a)) return false;
    }
    st->in_out = keyword(l, "in_out");
    if (keyword(l, "if") && !(st->cond = expr_text(l))) return fail(l, "expected a condition after 'if'");
    return true;
}

// Parses one statement that is not `end`. The caller handles nesting.
static bool parse_stmt(Lex *l, Stmt *st) {
    const char *save = l->s;  // `param`, `buffer` and `default` may also name tensors
    if ((keyword(l, "param") || (st->fixed = keyword(l, "buffer"))) && (skip_ws(l), *l->s == '@')) {
        st->kind = ST_PARAM;
        return parse_param(l, st);
    }
    l->s = save, st->fixed = false;
    if (keyword(l, "default") && (skip_ws(l), *l->s != '=')) {
        st->kind = ST_DEFAULT;
        if (!(st->name = word(l)) || !expect(l, '=') || !(st->text = expr_text(l)))
            return fail(l, "expected: default NAME = EXPR");
        return true;
    }
    l->s = save;
    if (keyword(l, "tie") && (skip_ws(l), *l->s == '@')) {  // `tie = ...` names a tensor
        st->kind = ST_TIE;
        for (; *l->s == '@'; skip_ws(l)) {
            l->s++;
            char *name = path(l);
            if (!name || !push_arg(l, st, ARG_WEIGHT, NULL, name)) return name ? false : fail(l, "expected: tie @NAME @NAME ...");
        }
        if (st->n_args < 2) return fail(l, "expected: tie @NAME @NAME ... (two names or more)");
        if (keyword(l, "if") && !(st->cond = expr_text(l))) return fail(l, "expected a condition after 'if'");
        return true;
    }
    l->s = save;
    if (keyword(l, "input")) {
        st->kind = ST_INPUT;
        return (st->name = word(l)) || fail(l, "expected: input NAME");
    }
    if (keyword(l, "output")) {
        st->kind = ST_OUTPUT;
        if (!(st->name = word(l)) || !expect(l, '=') || !(st->text = word(l)))
            return fail(l, "expected: output NAME = tensor");
        return true;
    }
    if (keyword(l, "block")) {
        st->kind = ST_BLOCK;
        if (!(st->name = path(l))) return fail(l, "expected: block NAME [weights PREFIX]");
        if (keyword(l, "weights") && !(st->text = path(l)))
            return fail(l, "expected a weight prefix after 'weights'");
        return true;
    }
    if (keyword(l, "for")) {
        st->kind = ST_FOR;
        if (!(st->name = word(l)) || !keyword(l, "in") || !(st->text = expr_text(l)))
            return fail(l, "expected: for VAR in COUNT");
        return true;
    }
    if (keyword(l, "def")) {
        st->kind = ST_DEF;
        if (!(st->name = word(l))) return fail(l, "expected: def NAME(params)");
        if (!parse_args(l, st)) return false;
        for (int i = 0; i < st->n_args; i++)
            if (st->args[i].kind != ARG_TENSOR) return fail(l, "def parameters must be plain names");
        return true;
    }
    if (keyword(l, "return")) {
        st->kind = ST_RETURN;
        return (st->text = word(l)) || fail(l, "expected: return NAME");
    }
    if (keyword(l, "decode")) {
        st->kind = ST_DECODE;
        if (!(st->name = word(l)) || !keyword(l, "from") || !(st->text = word(l)))
            return fail(l, "expected: decode INPUT from IDS [cached]");
        st->cached = keyword(l, "cached");
        return true;
    }
    if (!(st->name = word(l))) return fail(l, "expected a statement (NAME = op(...), block, for, def, ...)");
    if (!expect(l, '=')) return fail(l, "expected '=' after the name");
    if (!(st->text = word(l))) return fail(l, "expected an op, a def or a name after '='");
    skip_ws(l);
    if (*l->s != '(') {
        st->kind = ST_ALIAS;
        return true;
    }
    st->kind = ST_ASSIGN;
    return parse_args(l, st);
}

// Names a program binds (tensors, inputs, outputs, defs and their parameters) fit in 31 bytes.
static bool check_names(Lex *l, const Stmt *st) {
    char why[160];
    // A block's name and a param's are paths: stage ids and weight names have their own checks.
    const bool named = st->kind != ST_BLOCK && st->kind != ST_PARAM;
    for (int i = -1; i < st->n_args; i++) {
        const char *n = i < 0 ? (named ? st->name : NULL) : st->kind == ST_DEF ? st->args[i].text : NULL;
        if (n && strlen(n) > PROGRAM_NAME_MAX) {
            snprintf(why, sizeof why, "the name '%.40s...' is longer than %d characters", n, PROGRAM_NAME_MAX);
            return fail(l, why);
        }
    }
    return true;
}

static bool is_block(StmtKind k) {
    return k == ST_BLOCK || k == ST_FOR || k == ST_DEF || k == ST_DECODE;
}

// Each input must be one the interpreter feeds: src, and the target (decode's, else tgt).
static bool check_inputs(const Program *p, Err *e) {
    const Stmt *d = p->decode < p->n ? &p->stmts[p->decode] : NULL;
    if (d && program_input(p, d->name) < 0)
        return err_set(e, "%s:%d: decode %s: there is no input '%s' (declare it with 'input %s')",
                       p->file, d->line, d->name, d->name, d->name);
    const char *target = d ? d->name : "tgt";
    int slot = 0;
    for (int i = 0; i < p->n; i++) {
        const Stmt *st = &p->stmts[i];
        if (st->kind != ST_INPUT) continue;
        if (program_input(p, st->name) != slot++)
            return err_set(e, "%s:%d: input '%s' is declared twice", p->file, st->line, st->name);
        if (strcmp(st->name, "src") != 0 && strcmp(st->name, target) != 0)
            return err_set(e, "%s:%d: input '%s': the interpreter feeds two inputs, 'src' (the "
                           "source ids) and '%s' (the target ids)", p->file, st->line, st->name, target);
    }
    return true;
}

static bool check_structure(Program *p, Err *e) {
    p->decode = p->n;
    for (int i = 0; i < p->n; i++) {
        Stmt *st = &p->stmts[i];
        if (st->kind == ST_INPUT) {
            if (p->n_inputs == PROGRAM_MAX_INPUTS)
                return err_set(e, "%s:%d: at most %d inputs", p->file, st->line, PROGRAM_MAX_INPUTS);
            p->inputs[p->n_inputs++] = st->name;
        }
        if (st->kind == ST_DECODE) {
            if (p->decode != p->n)
                return err_set(e, "%s:%d: a program has at most one decode loop", p->file, st->line);
            p->decode = i;
        }
    }
    // decode, def and tie must stand at the top level.
    static const char *const top_only[ST_COUNT] = {[ST_DECODE] = "decode", [ST_DEF] = "def", [ST_TIE] = "tie"};
    for (int i = 0; i < p->n; i++) {
        const Stmt *st = &p->stmts[i];
        if (!is_block(st->kind)) continue;
        for (int j = i + 1; j < st->end; j++)
            if (top_only[p->stmts[j].kind])
                return err_set(e, "%s:%d: '%s' must stand at the top level, not inside another "
                               "block", p->file, p->stmts[j].line, top_only[p->stmts[j].kind]);
    }
    return check_inputs(p, e);
}

bool program_parse(Program *p, const char *file, const SourceLine *lines, int n, Err *e) {
    memset(p, 0, sizeof *p);
    p->file = dup_n(file, strlen(file));
    int open[64], depth = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        Lex l = {lines[i].text, file, lines[i].line, e};
        if (at_end(&l)) continue;
        if (keyword(&l, "end")) {
            if (depth == 0) ok = fail(&l, "'end' without an open block, for, def or decode");
            else p->stmts[open[--depth]].end = p->n;
            if (ok && !at_end(&l)) ok = fail(&l, "unexpected text after 'end'");
            continue;
        }
        Stmt *ns = realloc(p->stmts, sizeof *ns * (size_t)(p->n + 1));
        if (!ns) return err_code(e, ERR_MEMORY, "out of memory");
        p->stmts = ns;
        Stmt *st = &p->stmts[p->n];
        memset(st, 0, sizeof *st);
        st->line = lines[i].line;
        ok = parse_stmt(&l, st) && check_names(&l, st);
        p->n++;
        if (ok && !at_end(&l)) ok = fail(&l, "unexpected text at the end of the line");
        if (ok && is_block(st->kind)) {
            if (depth == 64) ok = fail(&l, "blocks nested too deeply");
            else open[depth++] = p->n - 1;
        }
    }
    if (ok && depth > 0)
        ok = err_set(e, "%s:%d: this %s has no matching 'end'", file, p->stmts[open[depth - 1]].line,
                     p->stmts[open[depth - 1]].kind == ST_DEF ? "def" : "block");
    if (ok) ok = check_structure(p, e);
    if (!ok) program_free(p);
    return ok;
}

bool program_parse_text(Program *p, const char *file, const char *text, Err *e) {
    int n = 1;
    for (const char *c = text; *c; c++) n += *c == '\n';
    SourceLine *lines = calloc((size_t)n, sizeof *lines);
    char *copy = dup_n(text, strlen(text));
    if (!lines || !copy) {
        free(lines);
        free(copy);
        return err_code(e, ERR_MEMORY, "out of memory");
    }
    int k = 0;
    for (char *s = copy; s; k++) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        lines[k] = (SourceLine){k + 1, s};
        s = nl ? nl + 1 : NULL;
    }
    bool ok = program_parse(p, file, lines, k, e);
    free(lines);
    free(copy);
    return ok;
}

void program_free(Program *p) {
    for (int i = 0; i < p->n; i++) {
        Stmt *st = &p->stmts[i];
        for (int j = 0; j < st->n_args; j++) {
            free(st->args[j].key);
            free(st->args[j].text);
        }
        free(st->args);
        free(st->name);
        free(st->text);
        free(st->cond);
    }
    free(p->stmts);
    free(p->file);
    memset(p, 0, sizeof *p);
}

bool program_has_decoder(const Program *p) { return p->decode < p->n; }

bool program_decoder_only(const Program *p) { return p->decode < p->n && p->n_inputs == 1; }

int program_next(const Program *p, int i) { return is_block(p->stmts[i].kind) ? p->stmts[i].end : i + 1; }

int program_find_def(const Program *p, const char *name) {
    for (int i = 0; i < p->n; i = program_next(p, i))
        if (p->stmts[i].kind == ST_DEF && strcmp(p->stmts[i].name, name) == 0) return i;
    return -1;
}

int program_input(const Program *p, const char *name) {
    for (int i = 0; i < p->n_inputs; i++)
        if (strcmp(p->inputs[i], name) == 0) return i;
    return -1;
}
