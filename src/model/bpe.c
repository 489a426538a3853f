// bpe.c: the BPE model of a tokenizer.json (bpe.h).
#include "bpe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static bool grow(StrMap *m) {
    const size_t cap = m->cap ? m->cap * 2 : 1024;
    StrMap g = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(int)), cap, 0};
    if (!g.keys || !g.vals) return free(g.keys), free(g.vals), false;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t k = hash(m->keys[i], strlen(m->keys[i])) & (cap - 1);
        while (g.keys[k]) k = (k + 1) & (cap - 1);
        g.keys[k] = m->keys[i], g.vals[k] = m->vals[i], g.n++;
    }
    free(m->keys), free(m->vals);
    *m = g;
    return true;
}

bool strmap_put(StrMap *m, const char *key, size_t len, int val) {
    if ((m->n + 1) * 2 > m->cap && !grow(m)) return false;
    size_t k = hash(key, len) & (m->cap - 1);
    for (; m->keys[k]; k = (k + 1) & (m->cap - 1))
        if (strlen(m->keys[k]) == len && !memcmp(m->keys[k], key, len)) {
            m->vals[k] = val;
            return true;
        }
    char *copy = malloc(len + 1);
    if (!copy) return false;
    memcpy(copy, key, len), copy[len] = '\0';
    m->keys[k] = copy, m->vals[k] = val, m->n++;
    return true;
}

int strmap_get(const StrMap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    for (size_t k = hash(key, len) & (m->cap - 1); m->keys[k]; k = (k + 1) & (m->cap - 1))
        if (!strncmp(m->keys[k], key, len) && m->keys[k][len] == '\0') return m->vals[k];
    return -1;
}

void strmap_free(StrMap *m) {
    for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
    free(m->keys), free(m->vals);
    *m = (StrMap){0};
}

int utf8_len(const char *s) {
    const unsigned char c = (unsigned char)*s;
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    for (int i = 1; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) return 1;
    return n;
}

// The code point a byte maps to in GPT-2's alphabet.
static int byte_code(unsigned char b) {
    if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) return b;
    int k = 0;  // the others, in order from 0, become 256, 257, ...
    for (int c = 0; c < b; c++) k += !((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174);
    return 256 + k;
}

int byte_level_char(unsigned char byte, char out[3]) {
    const int cp = byte_code(byte);
    if (cp < 0x80) return out[0] = (char)cp, out[1] = '\0', 1;
    out[0] = (char)(0xC0 | (cp >> 6)), out[1] = (char)(0x80 | (cp & 0x3F)), out[2] = '\0';
    return 2;
}

int byte_level_byte(const char *s, int *used) {
    const unsigned char c = (unsigned char)s[0];
    *used = utf8_len(s);
    int cp = c;
    if (*used == 2) cp = ((c & 0x1F) << 6) | ((unsigned char)s[1] & 0x3F);
    else if (*used != 1) return -1;
    for (int b = 0; b < 256; b++)
        if (byte_code((unsigned char)b) == cp) return b;
    return -1;
}

typedef struct {
    int start, len;  // bytes of the word
} Sym;

static int pair_rank(const Bpe *b, const char *w, const Sym *x, const Sym *y) {
    char buf[512];
    if (x->len + y->len + 1 >= (int)sizeof buf) return -1;
    memcpy(buf, w + x->start, (size_t)x->len);
    buf[x->len] = ' ';
    memcpy(buf + x->len + 1, w + y->start, (size_t)y->len);
    return strmap_get(&b->merges, buf, (size_t)(x->len + y->len + 1));
}

bool ids_push(int **ids, int *n, int *cap, int id) {
    if (*n == *cap) {
        const int c = *cap ? *cap * 2 : 64;
        int *g = realloc(*ids, sizeof(int) * (size_t)c);
        if (!g) return false;
        *ids = g, *cap = c;
    }
    (*ids)[(*n)++] = id;
    return true;
}

bool bpe_emit(const Bpe *b, const char *s, int len, bool look_up, int **ids, int *n, int *cap, const char *what, Err *e) {
    const int id = look_up ? strmap_get(&b->vocab, s, (size_t)len) : -1;
    if (id >= 0) return ids_push(ids, n, cap, id) || err_code(e, ERR_MEMORY, "out of memory");
    if (b->byte_fallback) {
        for (int i = 0; i < len; i++) {
            char hex[8];
            snprintf(hex, sizeof hex, "<0x%02X>", (unsigned char)s[i]);
            const int bid = strmap_get(&b->vocab, hex, strlen(hex));
            if (bid < 0) return err_set(e, "%s: byte_fallback, but the vocabulary has no %s", what, hex);
            if (!ids_push(ids, n, cap, bid)) return err_code(e, ERR_MEMORY, "out of memory");
        }
        return true;
    }
    if (b->unk >= 0) {
        if (*n > 0 && (*ids)[*n - 1] == b->unk) return true;  // fuse_unk: one unknown for a run
        return ids_push(ids, n, cap, b->unk) || err_code(e, ERR_MEMORY, "out of memory");
    }
    return err_set(e, "%s: '%.*s' is not in the vocabulary, and the model has no unk_token or byte_fallback", what, len, s);
}

bool bpe_word(const Bpe *b, const char *w, size_t len, int **ids, int *n, int *cap, const char *what, Err *e) {
    if (b->ignore_merges && strmap_get(&b->vocab, w, len) >= 0) return bpe_emit(b, w, (int)len, true, ids, n, cap, what, e);
    Sym *sy = malloc(sizeof *sy * (len + 1));
    if (!sy) return err_code(e, ERR_MEMORY, "out of memory");
    int ns = 0;
    for (size_t i = 0; i < len;) {
        const int l = utf8_len(w + i);
        sy[ns++] = (Sym){(int)i, l};
        i += (size_t)l;
    }
    for (;;) {  // the lowest-ranked pair, leftmost among equals
        int best = -1, best_rank = -1;
        for (int i = 0; i + 1 < ns; i++) {
            const int r = pair_rank(b, w, &sy[i], &sy[i + 1]);
            if (r >= 0 && (best_rank < 0 || r < best_rank)) best = i, best_rank = r;
        }
        if (best < 0) break;
        sy[best].len += sy[best + 1].len;
        memmove(sy + best + 1, sy + best + 2, sizeof *sy * (size_t)(ns - best - 2));
        ns--;
    }
    bool ok = true;
    for (int i = 0; i < ns && ok; i++) ok = bpe_emit(b, w + sy[i].start, sy[i].len, true, ids, n, cap, what, e);
    free(sy);
    return ok;
}

void bpe_free(Bpe *b) {
    strmap_free(&b->vocab);
    strmap_free(&b->merges);
    for (int i = 0; i < b->n_pieces; i++) free(b->pieces[i]);
    free(b->pieces);
    free(b->continuing_prefix), free(b->end_suffix);
    *b = (Bpe){0};
}
