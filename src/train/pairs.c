// pairs.c: the translation task's data (pairs.h).
#include "pairs.h"

#include <stdlib.h>
#include <string.h>

#include "bounds.h"

typedef struct {
    int *ids;
    size_t n, cap;
} Ids;

static bool ids_add(Ids *v, const int *x, int n) {
    if (v->n + (size_t)n > v->cap) {
        const size_t cap = (v->n + (size_t)n) * 2;
        int *g = realloc(v->ids, sizeof *g * cap);
        if (!g) return false;
        v->ids = g, v->cap = cap;
    }
    memcpy(v->ids + v->n, x, sizeof *x * (size_t)n);
    v->n += (size_t)n;
    return true;
}

// One pair appended to the list (or counted as too long). false with a message.
static bool add_pair(PairData *d, Ids *all, size_t *cap, const char *line, const Tokenizer *src, const Tokenizer *tgt,
                     int S, int T, Err *e) {
    const bool held = ++d->read % PAIRS_HOLD_EVERY == 0;  // the 10th, 20th, ... pair of the file
    const char *tab = strchr(line, '\t');
    if (!tab || tab == line || !tab[1]) return err_set(e, "not SOURCE<TAB>TARGET");
    char *left = malloc((size_t)(tab - line) + 1);
    if (!left) return err_code(e, ERR_MEMORY, "out of memory");
    memcpy(left, line, (size_t)(tab - line)), left[tab - line] = '\0';
    int *a = NULL, *b = NULL, na = 0, nb = 0;
    bool ok = tokenizer_encode(src, left, true, &a, &na, e) && tokenizer_encode(tgt, tab + 1, true, &b, &nb, e);
    free(left);
    if (ok && (na > S || nb > T - 1)) d->skipped++;
    else if (ok) {
        if (d->n == (int)*cap) {
            *cap = *cap ? *cap * 2 : 1024;
            size_t *at = realloc(d->at, sizeof *at * *cap);
            if (at) d->at = at;
            int *sn = realloc(d->src_n, sizeof *sn * *cap);
            if (sn) d->src_n = sn;
            int *tn = realloc(d->tgt_n, sizeof *tn * *cap);
            if (tn) d->tgt_n = tn;
            bool *h = realloc(d->held, sizeof *h * *cap);
            if (h) d->held = h;
            if (!at || !sn || !tn || !h) ok = err_code(e, ERR_MEMORY, "out of memory");
        }
        if (ok) d->at[d->n] = all->n, d->src_n[d->n] = na, d->tgt_n[d->n] = nb, d->held[d->n] = held, d->n++;
        ok = ok && ((ids_add(all, a, na) && ids_add(all, b, nb)) || err_code(e, ERR_MEMORY, "out of memory"));
    }
    free(a), free(b);
    return ok;
}

// The held-out pairs moved after the others, keeping each part's order.
static bool split(PairData *d, Err *e) {
    size_t *at = malloc(sizeof *at * (size_t)d->n);
    int *sn = malloc(sizeof *sn * (size_t)d->n), *tn = malloc(sizeof *tn * (size_t)d->n);
    if (!at || !sn || !tn) return free(at), free(sn), free(tn), err_code(e, ERR_MEMORY, "out of memory");
    int k = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) d->n_train = k;
        for (int i = 0; i < d->n; i++)
            if (d->held[i] == (pass == 1)) at[k] = d->at[i], sn[k] = d->src_n[i], tn[k] = d->tgt_n[i], k++;
    }
    free(d->at), free(d->src_n), free(d->tgt_n);
    d->at = at, d->src_n = sn, d->tgt_n = tn;
    return true;
}

bool pairs_load(PairData *d, const char *path, const Tokenizer *src, const Tokenizer *tgt, int S, int T, Err *e) {
    memset(d, 0, sizeof *d);
    char *text;
    size_t n;
    if (!file_read_all(path, "the sentence pairs", &text, &n, e)) return false;
    if (memchr(text, 0, n)) return free(text), err_set(e, "%s: holds a NUL byte: not a text of sentence pairs", path);
    Ids all = {0};
    size_t cap = 0, lineno = 0;
    bool ok = true;
    for (char *line = text, *next; ok && line < text + n; line = next) {
        char *end = memchr(line, '\n', (size_t)(text + n - line));
        next = end ? end + 1 : text + n;
        if (end) *end = '\0';
        lineno++;
        if (end && end > line && end[-1] == '\r') end[-1] = '\0';
        if (*line) ok = add_pair(d, &all, &cap, line, src, tgt, S, T, e) || err_prefix(e, "%s: line %zu", path, lineno);
    }
    free(text);
    d->ids = all.ids;
    if (ok && d->read < PAIRS_HOLD_EVERY)
        ok = err_set(e, "%s: %d pairs: at least %d are needed, one in %d held out", path, d->read, PAIRS_HOLD_EVERY,
                     PAIRS_HOLD_EVERY);
    ok = ok && split(d, e);
    if (ok && (d->n_train == 0 || d->n_train == d->n))
        ok = err_set(e, "%s: %d pairs fit %d source and %d target tokens (%d were longer), %d of them held out: both parts "
                     "need one", path, d->n, S, T - 1, d->skipped, d->n - d->n_train);
    if (!ok) pairs_free(d);
    return ok;
}

void pairs_free(PairData *d) {
    free(d->ids), free(d->at), free(d->src_n), free(d->tgt_n), free(d->held);
    memset(d, 0, sizeof *d);
}
