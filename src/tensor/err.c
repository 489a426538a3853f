#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool fill(Err *e, ErrCode code, const char *fmt, va_list ap) {
    if (!e) return false;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    e->code = code;
    return false;
}

bool err_set(Err *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fill(e, ERR_FAILED, fmt, ap);
    va_end(ap);
    return false;
}

bool err_code(Err *e, ErrCode code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fill(e, code, fmt, ap);
    va_end(ap);
    return false;
}

bool err_prefix(Err *e, const char *fmt, ...) {
    if (!e) return false;
    char head[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    char old[sizeof e->msg];
    memcpy(old, e->msg, sizeof old);
    snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
    return false;
}

// Damerau-Levenshtein (optimal string alignment) distance, for names up to 63 characters.
static int distance(const char *a, const char *b) {
    enum { MAX = 64 };
    const int n = (int)strlen(a), m = (int)strlen(b);
    if (n >= MAX || m >= MAX) return MAX;
    int d[MAX][MAX];
    for (int i = 0; i <= n; i++) d[i][0] = i;
    for (int j = 0; j <= m; j++) d[0][j] = j;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            const int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *err_closest(const char *name, const char *const *candidates, int n) {
    const int len = (int)strlen(name), allowed = len / 3 > 1 ? len / 3 : 1;
    const char *best = NULL;
    int best_d = allowed + 1;
    for (int i = 0; i < n; i++) {
        if (!candidates[i] || !strcmp(candidates[i], name)) continue;
        const int d = distance(name, candidates[i]);
        if (d < best_d) best_d = d, best = candidates[i];
    }
    return best;
}
