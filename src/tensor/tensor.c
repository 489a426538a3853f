#include "tensor.h"

#include <stdio.h>

Shape shape1(int a) { return (Shape){1, {a, 0, 0, 0}}; }
Shape shape2(int a, int b) { return (Shape){2, {a, b, 0, 0}}; }
Shape shape3(int a, int b, int c) { return (Shape){3, {a, b, c, 0}}; }

int64_t shape_numel(const Shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->dim[i];
    return n;
}

int shape_last(const Shape *s) { return s->dim[s->ndim - 1]; }
int shape_rows(const Shape *s) { return (int)(shape_numel(s) / shape_last(s)); }

bool shape_eq(const Shape *a, const Shape *b) {
    if (a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i]) return false;
    return true;
}

char *shape_str(const Shape *s, char *buf, size_t n) {
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < s->ndim && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? " x %d" : "%d", s->dim[i]);
    if (used < n) snprintf(buf + used, n - used, "]");
    return buf;
}
