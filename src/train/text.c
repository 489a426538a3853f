// text.c: the text task's data (text.h): reading and checking a UTF-8 file, its symbols, the
// split by lines, windows, and the bigram baseline.
//
// Reading takes two passes over the bytes. The first checks every character and marks which
// code points occur (a bit each, 0x110000 bits), counting characters and lines. Then the lines
// are put in the order they are split in (the file's, or shuffled), and the second pass writes
// each line's characters as their indices into the sorted symbols (a binary search): a training
// line's at the end of the training part, a held-out line's at the end of the held-out part.
#include "text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "utf8.h"

enum { CODE_POINTS = 0x110000, HOLD_EVERY = TEXT_HOLD_EVERY };

// Whether line `i` (from 0) is held out: the 10th, the 20th, ...
static bool held_line(size_t i) { return i % HOLD_EVERY == HOLD_EVERY - 1; }

typedef struct {
    size_t chars, lines;
    int distinct;
} Census;

// The first pass: every byte checked, the code points that occur marked in seen[].
static bool census(const unsigned char *b, size_t size, const char *path, uint8_t *seen, int max_distinct, Census *c,
                   Err *e) {
    *c = (Census){0};
    for (size_t i = 0; i < size;) {
        uint32_t cp;
        if (b[i] == 0)
            return err_set(e, "%s: a NUL byte at byte offset %zu: this is a binary file, not UTF-8 text", path, i);
        const int len = utf8_decode(b + i, size - i, &cp);
        if (!len)
            return err_set(e, "%s: not UTF-8 text: byte offset %zu (0x%02X) does not begin a valid UTF-8 character",
                           path, i, b[i]);
        if (!(seen[cp >> 3] & (1u << (cp & 7)))) seen[cp >> 3] |= (uint8_t)(1u << (cp & 7)), c->distinct++;
        c->chars++, c->lines += cp == '\n', i += (size_t)len;
    }
    c->lines += b[size - 1] != '\n';  // a last line with no line break after it
    if (c->distinct > max_distinct)
        return err_set(e, "%s: %d distinct characters, more than the %d the text task takes", path, c->distinct,
                       TEXT_MAX_CHARS);
    return true;
}

static int symbol_of(const TextData *t, uint32_t cp) {
    int lo = 0, hi = t->n_chars - 1;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (t->chars[mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// The lines in the order they are split in: line order[p] is the p-th, bytes [at[k], at[k + 1]).
typedef struct {
    size_t *at;     // [lines + 1]
    size_t *order;  // [lines]
} Lines;

static bool find_lines(Lines *l, const unsigned char *b, size_t size, size_t lines, bool shuffle, uint64_t seed) {
    l->at = malloc(sizeof *l->at * (lines + 1));
    l->order = malloc(sizeof *l->order * lines);
    if (!l->at || !l->order) return false;
    size_t k = 0;
    l->at[k++] = 0;
    for (size_t i = 0; i < size; i++)
        if (b[i] == '\n' && k < lines) l->at[k++] = i + 1;
    l->at[lines] = size;
    for (size_t p = 0; p < lines; p++) l->order[p] = p;
    // Fisher-Yates; a last line with no line break after it stays last, not glued to another.
    Rng rng = {seed * 0x9E3779B97F4A7C15ull + 0x5EED};
    const size_t n = b[size - 1] == '\n' ? lines : lines - 1;
    for (size_t p = n; shuffle && p > 1; p--) {
        const size_t j = (size_t)(rng_u64(&rng) % p), x = l->order[p - 1];
        l->order[p - 1] = l->order[j], l->order[j] = x;
    }
    return true;
}

static size_t chars_in(const unsigned char *b, size_t from, size_t to) {  // valid UTF-8: its lead bytes
    size_t n = 0;
    for (size_t i = from; i < to; i++) n += (b[i] & 0xC0) != 0x80;
    return n;
}

// The second pass: the symbols in order, then the text as their indices, training lines first.
static void encode(TextData *t, const unsigned char *b, const Lines *l, const uint8_t *seen) {
    for (uint32_t cp = 0; cp < CODE_POINTS; cp++)
        if (seen[cp >> 3] & (1u << (cp & 7))) t->chars[t->n_chars++] = cp;
    size_t held = 0;
    for (size_t p = HOLD_EVERY - 1; p < t->lines; p += HOLD_EVERY)
        held += chars_in(b, l->at[l->order[p]], l->at[l->order[p] + 1]);
    t->n_train = t->n - held;
    size_t train_at = 0, held_at = t->n_train;
    for (size_t p = 0; p < t->lines; p++) {
        size_t *at = held_line(p) ? &held_at : &train_at;
        for (size_t i = l->at[l->order[p]], end = l->at[l->order[p] + 1]; i < end;) {
            uint32_t cp;
            i += (size_t)utf8_decode(b + i, end - i, &cp);
            t->ids[(*at)++] = (uint32_t)symbol_of(t, cp);
        }
    }
}

// Both parts must hold a character to predict from the one before it.
static bool check_split(const TextData *t, const char *path, Err *e) {
    if (t->lines < HOLD_EVERY)
        return err_set(e, "%s: %zu line%s: the text task holds out every %dth line and trains on the others, so it "
                       "needs at least %d lines", path, t->lines, t->lines == 1 ? "" : "s", HOLD_EVERY, HOLD_EVERY);
    const char *unit = t->tokens ? "token" : "character";
    if (t->n_train < 2)
        return err_set(e, "%s: the training lines hold %zu %s%s; they need at least 2", path, t->n_train, unit,
                       t->n_train == 1 ? "" : "s");
    if (t->n - t->n_train < 2)
        return err_set(e, "%s: the held-out lines (every %dth) hold %zu %s%s; they need at least 2", path,
                       HOLD_EVERY, t->n - t->n_train, unit, t->n - t->n_train == 1 ? "" : "s");
    return true;
}

// A text file read whole and checked (census), with its lines in split order.
typedef struct {
    char *buf;
    size_t size;
    uint8_t *seen;  // [CODE_POINTS / 8] the code points that occur
    Census c;
    Lines l;
} Source;

static bool read_text(Source *x, const char *path, bool shuffle, uint64_t seed, int max_distinct, Err *e) {
    *x = (Source){0};
    if (!file_read_within(path, "the text", LIMIT_TEXT_MB, &x->buf, &x->size, e)) return false;
    if (x->size == 0) return err_set(e, "%s: the file is empty: the text task needs text to learn from", path);
    if (!(x->seen = calloc(CODE_POINTS / 8, 1))) return err_code(e, ERR_MEMORY, "out of memory");
    const unsigned char *b = (const unsigned char *)x->buf;
    if (!census(b, x->size, path, x->seen, max_distinct, &x->c, e)) return false;
    return find_lines(&x->l, b, x->size, x->c.lines, shuffle, seed) ||
           err_code(e, ERR_MEMORY, "%s: out of memory for %zu lines", path, x->c.lines);
}

static void source_free(Source *x) { free(x->seen), free(x->buf), free(x->l.at), free(x->l.order); }

bool text_load(TextData *t, const char *path, bool shuffle, uint64_t seed, Err *e) {
    memset(t, 0, sizeof *t);
    Source x;
    bool ok = read_text(&x, path, shuffle, seed, TEXT_MAX_CHARS, e);
    const Census *c = &x.c;
    if (ok) {
        t->n = c->chars, t->lines = c->lines, t->held_lines = c->lines / HOLD_EVERY;
        t->chars = malloc(sizeof *t->chars * (size_t)c->distinct);
        t->ids = malloc(sizeof *t->ids * c->chars);
        ok = (t->chars && t->ids) ||
             err_code(e, ERR_MEMORY, "%s: out of memory for %zu characters in %zu lines", path, c->chars, c->lines);
    }
    if (ok) encode(t, (const unsigned char *)x.buf, &x.l, x.seen);
    ok = ok && check_split(t, path, e);
    source_free(&x);
    if (!ok) text_free(t);
    return ok;
}

typedef struct {
    uint32_t *ids;
    size_t n, cap;
} IdList;

static bool id_append(IdList *a, const int *ids, int n, int eos) {
    if (a->n + (size_t)n + 1 > a->cap) {
        const size_t cap = (a->n + (size_t)n + 1) * 2;
        uint32_t *p = realloc(a->ids, sizeof *p * cap);
        if (!p) return false;
        a->ids = p, a->cap = cap;
    }
    for (int i = 0; i < n; i++) a->ids[a->n++] = (uint32_t)ids[i];
    a->ids[a->n++] = (uint32_t)eos;
    return true;
}

// One line (its line break and a carriage return before it taken off) as tk(line) gives its
// ids, then eos, appended to a; an empty line adds nothing.
static bool encode_line(const Tokenizer *tk, const char *line, size_t len, int eos, IdList *a, const char *path,
                        size_t lineno, Err *e) {
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    if (!len) return true;
    char *s = malloc(len + 1);
    if (!s) return err_code(e, ERR_MEMORY, "out of memory");
    memcpy(s, line, len), s[len] = '\0';
    int *ids = NULL, n = 0;
    bool ok = tokenizer_encode(tk, s, true, &ids, &n, e) || err_prefix(e, "%s: line %zu", path, lineno);
    ok = ok && (id_append(a, ids, n, eos) || err_code(e, ERR_MEMORY, "out of memory for the tokens of %s", path));
    free(s), free(ids);
    return ok;
}

bool text_load_tokens(TextData *t, const char *path, bool shuffle, uint64_t seed, const Tokenizer *tk, int eos,
                      Err *e) {
    memset(t, 0, sizeof *t);
    Source x;
    IdList part[2] = {{0}};  // the training lines', the held-out lines'
    bool ok = read_text(&x, path, shuffle, seed, CODE_POINTS, e);
    const Lines *l = &x.l;
    t->lines = x.c.lines, t->held_lines = x.c.lines / HOLD_EVERY, t->n_chars = tokenizer_size(tk), t->tokens = true;
    for (size_t p = 0; ok && p < x.c.lines; p++) {
        const size_t k = l->order[p];
        ok = encode_line(tk, x.buf + l->at[k], l->at[k + 1] - l->at[k], eos, &part[held_line(p)], path, k + 1, e);
    }
    if (ok) {
        t->n_train = part[0].n, t->n = part[0].n + part[1].n;
        t->ids = malloc(sizeof *t->ids * (t->n + 1));
        ok = t->ids || err_code(e, ERR_MEMORY, "out of memory for the tokens of %s", path);
    }
    if (ok && part[0].n) memcpy(t->ids, part[0].ids, sizeof *t->ids * part[0].n);
    if (ok && part[1].n) memcpy(t->ids + t->n_train, part[1].ids, sizeof *t->ids * part[1].n);
    ok = ok && check_split(t, path, e);
    source_free(&x), free(part[0].ids), free(part[1].ids);
    if (!ok) text_free(t);
    return ok;
}

void text_free(TextData *t) {
    free(t->chars), free(t->ids);
    memset(t, 0, sizeof *t);
}

bool text_vocab(const TextData *t, Vocab *v, Err *e) {
    char(*utf8)[5] = malloc(sizeof *utf8 * (size_t)t->n_chars);
    const char **strings = malloc(sizeof *strings * (size_t)t->n_chars);
    bool ok = (utf8 && strings) || err_code(e, ERR_MEMORY, "out of memory");
    int n = 0;
    for (int i = 0; ok && i < t->n_chars; i++)
        if (t->chars[i] != '\n') utf8_encode(t->chars[i], utf8[n]), strings[n] = utf8[n], n++;
    ok = ok && vocab_from_strings(v, strings, n, e);
    free(utf8), free(strings);
    return ok;
}

bool text_token_ids(const TextData *t, const Vocab *v, int eos, float *tok, Err *e) {
    if (t->tokens) {  // the symbols are the tokenizer's ids
        if (t->n_chars > v->n)
            return err_set(e, "the model has %d tokens, but the tokenizer's ids run to %d", v->n, t->n_chars - 1);
        for (int i = 0; i < t->n_chars; i++) tok[i] = (float)i;
        return true;
    }
    for (int i = 0; i < t->n_chars; i++) {
        char s[5];
        const int len = utf8_encode(t->chars[i], s);
        const int id = t->chars[i] == '\n' ? eos : vocab_find(v, s, (size_t)len);
        if (id < 0)
            return err_set(e, "the model's vocabulary has no token for '%s' (U+%04X), which the text uses", s,
                           (unsigned)t->chars[i]);
        tok[i] = (float)id;
    }
    return true;
}

int text_window(const TextData *t, size_t start, size_t end, int block, const float *tok, float pad, float *in,
                float *label) {
    const size_t avail = end > start ? end - start : 0;  // characters from start on
    int counted = 0;
    for (int k = 0; k < block; k++) {
        const bool has_label = (size_t)k + 1 < avail;
        in[k] = (size_t)k < avail ? tok[t->ids[start + (size_t)k]] : pad;
        label[k] = has_label ? tok[t->ids[start + (size_t)k + 1]] : pad;
        counted += has_label;
    }
    return counted;
}

size_t text_draw_start(const TextData *t, Rng *rng, int block) {
    const size_t len = (size_t)block + 1 < t->n_train ? (size_t)block + 1 : t->n_train;
    return (size_t)(rng_u64(rng) % (uint64_t)(t->n_train - len + 1));
}

size_t text_held_windows(const TextData *t, int block) {
    const size_t labels = t->n - t->n_train - 1;
    return (labels + (size_t)block - 1) / (size_t)block;
}

static int cmp_u64(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

// How many of the sorted keys equal key.
static size_t count_of(const uint64_t *keys, size_t n, uint64_t key) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    size_t k = lo;
    while (k < n && keys[k] == key) k++;
    return k - lo;
}

// The pairs are counted by sorting them (a dense table of V x V counts would take 20 GB for
// GPT-2's 50,257 tokens).
bool text_bigram_loss(const TextData *t, double *nats, Err *e) {
    const size_t V = (size_t)t->n_chars, pairs = t->n_train - 1;
    uint64_t *key = malloc(sizeof *key * pairs);
    size_t *from = calloc(V, sizeof *from);
    if (!key || !from) return free(key), free(from), err_code(e, ERR_MEMORY, "out of memory for the bigram counts");
    for (size_t i = 0; i < pairs; i++) key[i] = (uint64_t)t->ids[i] * V + t->ids[i + 1], from[t->ids[i]]++;
    qsort(key, pairs, sizeof *key, cmp_u64);
    double sum = 0;
    for (size_t j = t->n_train + 1; j < t->n; j++) {
        const size_t a = t->ids[j - 1], b = t->ids[j];
        sum -= log(((double)count_of(key, pairs, (uint64_t)a * V + b) + 1.0) / ((double)from[a] + (double)V));
    }
    *nats = sum / (double)(t->n - t->n_train - 1);
    free(key), free(from);
    return true;
}
