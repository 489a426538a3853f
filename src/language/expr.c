// expr.c: the arithmetic of program attributes and loop counts, e.g. `1 / sqrt(d_k)`.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"

typedef struct {
    const char *s;
    ExprLookup lookup;
    void *ctx;
    char *why;
    int why_n;
    bool ok;
    int depth;  // brackets, calls and signs open around the current primary
} Ev;

enum { EXPR_MAX_DEPTH = 200 };

static double fail(Ev *v, const char *fmt, const char *arg) {
    if (v->ok) snprintf(v->why, (size_t)v->why_n, fmt, arg);
    v->ok = false;
    return 0.0;
}

static void ws(Ev *v) {
    while (isspace((unsigned char)*v->s)) v->s++;
}

static double sum(Ev *v);

static double call(Ev *v, const char *fn) {
    ws(v);
    if (*v->s != '(') return fail(v, "'%s' is a function: write it as %s(x)", fn);
    v->s++;
    double x = sum(v);
    ws(v);
    if (*v->s != ')') return fail(v, "missing ')' after the argument of %s", fn);
    v->s++;
    if (strcmp(fn, "sqrt") == 0) return sqrt(x);
    if (strcmp(fn, "exp") == 0) return exp(x);
    return log(x);
}

static double primary_at(Ev *v);

static double primary(Ev *v) {
    if (v->depth == EXPR_MAX_DEPTH) return fail(v, "expression nested more than 200 deep%s", "");
    v->depth++;
    const double x = primary_at(v);
    v->depth--;
    return x;
}

static double primary_at(Ev *v) {
    ws(v);
    if (*v->s == '(') {
        v->s++;
        double x = sum(v);
        ws(v);
        if (*v->s != ')') return fail(v, "missing ')'%s", "");
        v->s++;
        return x;
    }
    if (*v->s == '-') {
        v->s++;
        return -primary(v);
    }
    if (isdigit((unsigned char)*v->s) || *v->s == '.') {
        char *end;
        double x = strtod(v->s, &end);
        v->s = end;
        return x;
    }
    if (isalpha((unsigned char)*v->s) || *v->s == '_') {
        char name[64];
        int n = 0;
        while ((isalnum((unsigned char)*v->s) || *v->s == '_') && n < 63) name[n++] = *v->s++;
        name[n] = '\0';
        if (!strcmp(name, "sqrt") || !strcmp(name, "exp") || !strcmp(name, "log"))
            return call(v, name);
        double x;
        if (!v->lookup(v->ctx, name, &x)) {
            if (v->ok)
                snprintf(v->why, (size_t)v->why_n, "'%s' is not set: it is no loop variable or def "
                         "parameter, and no configuration gives it (pass --config %s=VALUE)", name, name);
            v->ok = false;
            return 0.0;
        }
        return x;
    }
    char c[2] = {*v->s, 0};
    return fail(v, *c ? "unexpected '%s'" : "expression ends too soon%s", c);
}

static double product(Ev *v) {
    double x = primary(v);
    for (;;) {
        ws(v);
        if (*v->s == '*') v->s++, x *= primary(v);
        else if (*v->s == '/') v->s++, x /= primary(v);
        else return x;
    }
}

static double sum(Ev *v) {
    double x = product(v);
    for (;;) {
        ws(v);
        if (*v->s == '+') v->s++, x += product(v);
        else if (*v->s == '-') v->s++, x -= product(v);
        else return x;
    }
}

bool expr_eval(const char *text, ExprLookup lookup, void *ctx, double *out, char *why, int why_n) {
    Ev v = {text, lookup, ctx, why, why_n, true};
    double x = sum(&v);
    ws(&v);
    if (v.ok && *v.s) fail(&v, "unexpected '%s'", v.s);
    if (v.ok && !isfinite(x)) fail(&v, "the value is not a finite number%s", "");
    *out = x;
    return v.ok;
}

bool expr_interpolate(const char *tpl, ExprLookup lookup, void *ctx, char *out, size_t n, char *why,
                      int why_n) {
    size_t k = 0;
    for (const char *s = tpl; *s; s++) {
        if (*s != '{') {
            if (k + 1 < n) out[k++] = *s;
            continue;
        }
        const char *close = strchr(s, '}');
        if (!close) return snprintf(why, (size_t)why_n, "'{' without '}' in '%s'", tpl), false;
        char inner[64];
        snprintf(inner, sizeof inner, "%.*s", (int)(close - s - 1), s + 1);
        double v;
        if (!expr_eval(inner, lookup, ctx, &v, why, why_n)) return false;
        k += (size_t)snprintf(out + k, n > k ? n - k : 0, "%lld", (long long)llround(v));
        s = close;
    }
    out[k < n ? k : n - 1] = '\0';
    return true;
}
