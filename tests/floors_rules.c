// floors_rules.c: the rules test_floors.c holds a source tree to (floors.h), each a function
// adding what breaks it to a list of violations.
//   - every file is on a floor (its folder is in the table);
//   - no two files share a base name (include directories are flat);
//   - a file includes headers of its own floor and the floors below only;
//   - no function is defined (not static) in two files, but in two alternative files;
//   - a file calls functions defined on its own floor and the floors below only;
//   - a function declared in a header is defined on the header's floor;
//   - within a floor, no circle of .c files calling each other.
// A call is resolved to a function defined in the calling file first (static or not), then
// skipped if a function-like macro of that name is defined in the file or in any header, then
// to the non-static definitions and the static ones of headers. A name defined nowhere in the
// tree (the C library, SDL, cJSON...) is no one's concern. A file off the floors is reported
// once as such and otherwise left out.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floors.h"

const char *floors_kind_name(ViolationKind k) {
    static const char *const names[] = {"not on a floor", "include", "call", "same base name",
                                        "duplicate definition", "declared on another floor", "circle"};
    return names[k];
}

static void add(Violations *out, ViolationKind kind, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void add(Violations *out, ViolationKind kind, const char *file, int line, const char *fmt, ...) {
    if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 16;
        out->v = realloc(out->v, sizeof *out->v * (size_t)out->cap);
        if (!out->v) abort();
    }
    Violation *v = &out->v[out->n++];
    v->kind = kind, v->line = line;
    snprintf(v->file, sizeof v->file, "%s", file);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->what, sizeof v->what, fmt, ap);
    va_end(ap);
}

void floors_free_violations(Violations *v) {
    free(v->v);
    memset(v, 0, sizeof *v);
}

// A definition of a function some file may call: a non-static one, or a static one in a header.
typedef struct {
    const char *name;
    int file, line;
    bool is_static;
} Def;

typedef struct {
    const Tree *t;
    const FloorPlan *plan;
    Def *defs;  // sorted by name, then file
    int n_defs;
    Violations *out;
} Ctx;

static int by_name(const void *a, const void *b) {
    const Def *x = a, *y = b;
    const int c = strcmp(x->name, y->name);
    return c ? c : x->file != y->file ? x->file - y->file : x->line - y->line;
}

static void index_defs(Ctx *c) {
    int n = 0;
    for (int i = 0; i < c->t->n; i++) n += c->t->f[i].defs.n;
    c->defs = malloc(sizeof *c->defs * (size_t)(n ? n : 1));
    if (!c->defs) abort();
    c->n_defs = 0;
    for (int i = 0; i < c->t->n; i++) {
        const SrcFile *f = &c->t->f[i];
        for (int k = 0; k < f->defs.n; k++) {
            const Fact *d = &f->defs.v[k];
            if (!d->is_static || f->header) c->defs[c->n_defs++] = (Def){d->name, i, d->line, d->is_static};
        }
    }
    qsort(c->defs, (size_t)c->n_defs, sizeof *c->defs, by_name);
    int kept = 0;  // a file defining a name twice (two branches of an #if) defines it once
    for (int k = 0; k < c->n_defs; k++)
        if (!kept || c->defs[kept - 1].file != c->defs[k].file || strcmp(c->defs[kept - 1].name, c->defs[k].name))
            c->defs[kept++] = c->defs[k];
    c->n_defs = kept;
}

// The definitions of `name`: *n of them from the returned one on (NULL: none).
static const Def *defs_of(const Ctx *c, const char *name, int *n) {
    int lo = 0, hi = c->n_defs;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (strcmp(c->defs[mid].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    for (*n = 0; lo + *n < c->n_defs && !strcmp(c->defs[lo + *n].name, name);) (*n)++;
    return *n ? &c->defs[lo] : NULL;
}

static bool alternatives(const Ctx *c, int a, int b) {
    for (int k = 0; k < c->plan->n_alternatives; k++) {
        const char *const *p = c->plan->alternatives[k];
        const char *x = c->t->f[a].base, *y = c->t->f[b].base;
        if ((!strcmp(x, p[0]) && !strcmp(y, p[1])) || (!strcmp(x, p[1]) && !strcmp(y, p[0]))) return true;
    }
    return false;
}

// Whether `name`'s definitions d[0, n) are more than one, not all alternatives of each other.
static bool is_duplicate(const Ctx *c, const Def *d, int n) {
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (!alternatives(c, d[i].file, d[j].file)) return true;
    return false;
}

static const char *floor_name(const Ctx *c, int floor) { return c->plan->floors[floor].folder; }

// Whether a file on floor `from` may use one on floor `to`: its own floor or a lower one.
static bool may_use(const Ctx *c, int from, int to) {
    return from == to || c->plan->floors[to].level < c->plan->floors[from].level;
}

static const char *direction(const Ctx *c, int from, int to) {
    return c->plan->floors[to].level > c->plan->floors[from].level ? "up" : "sideways";
}

static void check_on_floor(Ctx *c) {
    for (int i = 0; i < c->t->n; i++) {
        const SrcFile *f = &c->t->f[i];
        if (f->floor < 0)
            add(c->out, V_NO_FLOOR, f->path, 1, "%.*s/ is no floor's folder, nor in one", (int)(f->base - f->path - 1),
                f->base == f->path ? "." : f->path);
    }
}

static void check_same_names(Ctx *c) {
    for (int i = 0; i < c->t->n; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(c->t->f[i].base, c->t->f[j].base))
                add(c->out, V_SAME_NAME, c->t->f[i].path, 1, "%s has the base name of %s", c->t->f[i].path, c->t->f[j].path);
}

static int header_named(const Ctx *c, const char *base) {
    for (int i = 0; i < c->t->n; i++)
        if (!strcmp(c->t->f[i].base, base)) return i;
    return -1;
}

static void check_includes(Ctx *c) {
    for (int i = 0; i < c->t->n; i++) {
        const SrcFile *f = &c->t->f[i];
        for (int k = 0; f->floor >= 0 && k < f->includes.n; k++) {
            const int h = header_named(c, f->includes.v[k].name);
            if (h < 0 || c->t->f[h].floor < 0 || may_use(c, f->floor, c->t->f[h].floor)) continue;
            add(c->out, V_INCLUDE, f->path, f->includes.v[k].line, "includes %s, %s from %s (%d) to %s (%d)",
                c->t->f[h].path, direction(c, f->floor, c->t->f[h].floor), floor_name(c, f->floor),
                c->plan->floors[f->floor].level, floor_name(c, c->t->f[h].floor), c->plan->floors[c->t->f[h].floor].level);
        }
    }
}

static void check_duplicates(Ctx *c) {
    for (int i = 0; i < c->n_defs;) {
        int n;
        const Def *d = defs_of(c, c->defs[i].name, &n);
        if (n > 1 && strcmp(d->name, "main") && is_duplicate(c, d, n)) {
            char where[768] = "";
            for (int k = 1; k < n; k++) {
                const size_t len = strlen(where);
                snprintf(where + len, sizeof where - len, "%s%s:%d", k > 1 ? ", " : "", c->t->f[d[k].file].path, d[k].line);
            }
            add(c->out, V_DUPLICATE, c->t->f[d->file].path, d->line, "%s is defined here and in %s", d->name, where);
        }
        i += n;
    }
}

static bool has_fact(const Facts *fs, const char *name) {
    for (int k = 0; k < fs->n; k++)
        if (!strcmp(fs->v[k].name, name)) return true;
    return false;
}

static bool is_macro(const Ctx *c, int file, const char *name) {
    if (has_fact(&c->t->f[file].macros, name)) return true;
    for (int i = 0; i < c->t->n; i++)
        if (c->t->f[i].header && has_fact(&c->t->f[i].macros, name)) return true;
    return false;
}

// The file a call of `name` in `file` reaches; -1: its own, a macro, nothing in the tree, or
// a duplicate (reported as such). *alt: how many files it may reach (alternatives), from *first.
static int callee(const Ctx *c, int file, const char *name, const Def **first, int *alt) {
    *alt = 0, *first = NULL;
    if (has_fact(&c->t->f[file].defs, name) || is_macro(c, file, name)) return -1;
    const Def *d = defs_of(c, name, alt);
    if (!d || is_duplicate(c, d, *alt)) return *alt = 0, -1;
    *first = d;
    return d->file;
}

static void check_calls(Ctx *c) {
    for (int i = 0; i < c->t->n; i++) {
        const SrcFile *f = &c->t->f[i];
        for (int k = 0; f->floor >= 0 && k < f->calls.n; k++) {
            const Def *d;
            int n;
            callee(c, i, f->calls.v[k].name, &d, &n);
            for (int a = 0; a < n; a++) {
                const int to = c->t->f[d[a].file].floor;
                if (to < 0 || may_use(c, f->floor, to)) continue;
                add(c->out, V_CALL, f->path, f->calls.v[k].line, "calls %s, defined at %s:%d, %s from %s (%d) to %s (%d)",
                    d->name, c->t->f[d[a].file].path, d[a].line, direction(c, f->floor, to), floor_name(c, f->floor),
                    c->plan->floors[f->floor].level, floor_name(c, to), c->plan->floors[to].level);
            }
        }
    }
}

static void check_declared(Ctx *c) {
    for (int i = 0; i < c->t->n; i++) {
        const SrcFile *h = &c->t->f[i];
        for (int k = 0; h->header && h->floor >= 0 && k < h->protos.n; k++) {
            int n;
            const Def *d = h->protos.v[k].is_static ? NULL : defs_of(c, h->protos.v[k].name, &n);
            for (int a = 0; d && a < n; a++) {
                const SrcFile *def = &c->t->f[d[a].file];
                if (def->header || def->floor < 0 || def->floor == h->floor) continue;
                add(c->out, V_DECLARED, h->path, h->protos.v[k].line, "declares %s on %s, defined at %s:%d on %s",
                    d->name, floor_name(c, h->floor), def->path, d[a].line, floor_name(c, def->floor));
            }
        }
    }
}

// calls[a * n + b]: the first call in .c file a of a function defined in .c file b of the same
// floor (a != b), or NULL.
static const Fact **call_graph(const Ctx *c) {
    const int n = c->t->n;
    const Fact **g = calloc((size_t)n * (size_t)n, sizeof *g);
    if (!g) abort();
    for (int a = 0; a < n; a++) {
        const SrcFile *f = &c->t->f[a];
        for (int k = 0; !f->header && f->floor >= 0 && k < f->calls.n; k++) {
            const Def *d;
            int alt;
            const int b = callee(c, a, f->calls.v[k].name, &d, &alt);
            if (b >= 0 && b != a && alt == 1 && !c->t->f[b].header && c->t->f[b].floor == f->floor && !g[a * n + b])
                g[a * n + b] = &f->calls.v[k];
        }
    }
    return g;
}

static void reach_from(const Fact **g, int n, int a, bool *seen) {
    seen[a] = true;
    for (int b = 0; b < n; b++)
        if (g[a * n + b] && !seen[b]) reach_from(g, n, b, seen);
}

// Each circle (files that reach each other through calls) once, at its first file, naming
// each file with the call that leads on to the next one in it.
static void check_circles(Ctx *c) {
    const int n = c->t->n;
    const Fact **g = call_graph(c);
    bool *reach = calloc((size_t)n * (size_t)n, sizeof *reach);
    if (!reach) abort();
    for (int a = 0; a < n; a++) reach_from(g, n, a, reach + (size_t)a * (size_t)n);
    for (int a = 0; a < n; a++) {
        bool first = true, any = false;
        for (int b = 0; b < n; b++)
            if (b != a && reach[a * n + b] && reach[b * n + a]) first = first && b > a, any = true;
        if (!any || !first) continue;
        char what[1024] = "";
        for (int x = a; x < n; x++) {
            if (x != a && !(reach[a * n + x] && reach[x * n + a])) continue;
            for (int y = 0; y < n; y++)  // the call leading on from x within the circle
                if (y != x && g[x * n + y] && reach[y * n + a]) {
                    const size_t len = strlen(what);
                    snprintf(what + len, sizeof what - len, "%s%s:%d calls %s (%s)", len ? "; " : "", c->t->f[x].path,
                             g[x * n + y]->line, g[x * n + y]->name, c->t->f[y].path);
                    break;
                }
        }
        const Fact *lead = NULL;
        for (int y = 0; !lead && y < n; y++)
            if (y != a && g[a * n + y] && reach[y * n + a]) lead = g[a * n + y];
        add(c->out, V_CIRCLE, c->t->f[a].path, lead ? lead->line : 1, "circle on %s: %s",
            floor_name(c, c->t->f[a].floor), what);
    }
    free(reach);
    free(g);
}

void floors_check(const Tree *t, const FloorPlan *plan, Violations *out) {
    Ctx c = {.t = t, .plan = plan, .out = out};
    index_defs(&c);
    check_on_floor(&c);
    check_same_names(&c);
    check_includes(&c);
    check_duplicates(&c);
    check_calls(&c);
    check_declared(&c);
    check_circles(&c);
    free(c.defs);
}
