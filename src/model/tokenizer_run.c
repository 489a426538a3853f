// tokenizer_run.c: encoding and decoding with a tokenizer.json (tokenizer.h): added tokens split
// off first, then each stretch of text normalised, cut into pieces and run through BPE.
#include "tokenizer_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if STEPFORMER_TOKENIZER_ENCODES
#include <utf8proc.h>
#endif

#include "utf8.h"

// ---- a growable string, and a list of them ----

typedef struct {
    char *s;
    size_t n, cap;
} Buf;

static bool buf_add(Buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        const size_t cap = (b->n + n + 1) * 2;
        char *g = realloc(b->s, cap);
        if (!g) return false;
        b->s = g, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
    return true;
}

typedef struct {
    char **s;
    int n, cap;
} List;

static bool list_add(List *l, const char *s, size_t n) {
    if (!n) return true;  // no empty pieces
    if (l->n == l->cap) {
        const int cap = l->cap ? l->cap * 2 : 16;
        char **g = realloc(l->s, sizeof *g * (size_t)cap);
        if (!g) return false;
        l->s = g, l->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c) return false;
    memcpy(c, s, n), c[n] = '\0';
    l->s[l->n++] = c;
    return true;
}

static void list_free(List *l) {
    for (int i = 0; i < l->n; i++) free(l->s[i]);
    free(l->s);
    *l = (List){0};
}

// s with every `from` replaced by `to` (malloc'd).
static char *replace_all(const char *s, const char *from, const char *to) {
    Buf b = {0};
    const size_t nf = strlen(from);
    bool ok = buf_add(&b, "", 0);
    for (const char *p = s; ok && *p;) {
        if (nf && !strncmp(p, from, nf)) ok = buf_add(&b, to, strlen(to)), p += nf;
        else ok = buf_add(&b, p, 1), p++;
    }
    if (!ok) free(b.s), b.s = NULL;
    return b.s;
}

#if STEPFORMER_TOKENIZER_ENCODES
// ---- normalizers ----

// s with every match of re replaced by `to` (malloc'd).
static char *replace_regex(const pcre2_code *re, const char *s, const char *to) {
    PCRE2_SIZE n = strlen(s) * 2 + strlen(to) * 8 + 64;
    for (int tries = 0; tries < 8; tries++, n *= 4) {
        char *out = malloc(n);
        if (!out) return NULL;
        PCRE2_SIZE got = n;
        const int rc = pcre2_substitute(re, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, PCRE2_SUBSTITUTE_GLOBAL |
                                        PCRE2_SUBSTITUTE_LITERAL, NULL, NULL, (PCRE2_SPTR)to, PCRE2_ZERO_TERMINATED,
                                        (PCRE2_UCHAR *)out, &got);
        if (rc >= 0) return out;
        free(out);
        if (rc != PCRE2_ERROR_NOMEMORY) return NULL;
    }
    return NULL;
}

// Whether s starts with white space (Unicode's: Zs, Zl, Zp, and the controls \t to \r and U+0085);
// *len: that character's length (1 for a byte that is no character).
static bool white_at(const char *s, size_t *len) {
    utf8proc_int32_t cp;
    const utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s, -1, &cp);
    *len = 1;
    if (n <= 0) return false;
    *len = (size_t)n;
    return (cp >= 9 && cp <= 13) || cp == 0x85 || utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS ||
           utf8proc_category(cp) == UTF8PROC_CATEGORY_ZL || utf8proc_category(cp) == UTF8PROC_CATEGORY_ZP;
}

// s without the white space at its left or right end (malloc'd).
static char *strip(const char *s, bool left, bool right) {
    size_t from = 0, to = strlen(s), len;
    while (left && from < to && white_at(s + from, &len)) from += len;
    if (right) {  // the last character that is not white space ends the text
        size_t end = from;
        for (size_t i = from; i < to; i += len) {
            if (!white_at(s + i, &len)) end = i + len;
        }
        to = end;
    }
    char *out = malloc(to - from + 1);
    if (out) memcpy(out, s + from, to - from), out[to - from] = '\0';
    return out;
}

static char *normalize(const Tokenizer *t, const char *s, size_t n) {
    char *cur = malloc(n + 1);
    if (!cur) return NULL;
    memcpy(cur, s, n), cur[n] = '\0';
    for (int i = 0; i < t->n_norm && cur; i++) {
        const Norm *nm = &t->norm[i];
        char *next = NULL;
        if (nm->kind == NORM_NFC) next = (char *)utf8proc_NFC((const utf8proc_uint8_t *)cur);
        else if (nm->kind == NORM_REPLACE) next = replace_all(cur, nm->a, nm->b);
        else if (nm->kind == NORM_REGEX) next = replace_regex(nm->re, cur, nm->b);
        else if (nm->kind == NORM_PRECOMPILED) next = spm_charsmap_apply(nm->map, nm->map_n, cur);
        else if (nm->kind == NORM_STRIP) next = strip(cur, nm->left, nm->right);
        else if ((next = malloc(strlen(nm->a) + strlen(cur) + 1)) != NULL) strcat(strcpy(next, nm->a), cur);
        free(cur);
        cur = next;
    }
    return cur;
}

// ---- pre-tokenizers: each turns the list of pieces into a new one ----

// Cuts s at the pattern's matches: matches kept as pieces of their own, or dropped.
static bool split(const pcre2_code *re, SplitKeep keep, const char *s, List *out) {
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) return false;
    const size_t n = strlen(s);
    size_t at = 0, gap = 0;
    bool ok = true;
    while (ok && at <= n) {
        const int rc = pcre2_match(re, (PCRE2_SPTR)s, n, at, 0, md, NULL);
        if (rc < 0) break;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0]) {  // an empty match: step over one character
            at = ov[0] + (ov[0] < n ? (size_t)utf8_len(s + ov[0]) : 1);
            continue;
        }
        ok = (keep == KEEP_MATCHES || list_add(out, s + gap, ov[0] - gap)) &&
             (keep == KEEP_GAPS || list_add(out, s + ov[0], ov[1] - ov[0]));
        gap = at = ov[1];
    }
    pcre2_match_data_free(md);
    return ok && (keep == KEEP_MATCHES || list_add(out, s + gap, n - gap));
}

// Each byte as a character of GPT-2's alphabet.
static bool byte_map(const char *s, List *out) {
    Buf b = {0};
    bool ok = buf_add(&b, "", 0);
    for (const char *p = s; ok && *p; p++) {
        char c[3];
        ok = buf_add(&b, c, (size_t)byte_level_char((unsigned char)*p, c));
    }
    ok = ok && list_add(out, b.s, b.n);
    free(b.s);
    return ok;
}

static bool metaspace(const Pre *p, const char *s, bool first, List *out) {
    char *r = replace_all(s, " ", p->replacement);
    if (!r) return false;
    const size_t nr = strlen(p->replacement);
    Buf b = {0};
    bool ok = buf_add(&b, "", 0);
    if (ok && (p->prepend == 2 || (p->prepend == 1 && first)) && strncmp(r, p->replacement, nr)) ok = buf_add(&b, p->replacement, nr);
    ok = ok && buf_add(&b, r, strlen(r));
    free(r);
    if (!ok) return free(b.s), false;
    if (!p->split) ok = list_add(out, b.s, b.n);
    else  // MergedWithNext: each piece starts at a replacement
        for (size_t start = 0, i = 0; ok && i <= b.n; i++)
            if (i == b.n || (i > start && !strncmp(b.s + i, p->replacement, nr))) ok = list_add(out, b.s + start, i - start), start = i;
    free(b.s);
    return ok;
}

static bool pre_tokenize(const Tokenizer *t, const char *s, bool first, List *pieces) {
    if (!list_add(pieces, s, strlen(s))) return false;
    for (int k = 0; k < t->n_pre; k++) {
        const Pre *p = &t->pre[k];
        List next = {0};
        bool ok = true;
        for (int i = 0; i < pieces->n && ok; i++) {
            const char *piece = pieces->s[i];
            char *spaced = NULL;
            // add_prefix_space: every piece the byte level receives, as Hugging Face's does
            if (p->kind == PRE_BYTELEVEL && p->prefix_space && piece[0] != ' ' && (spaced = malloc(strlen(piece) + 2)))
                piece = strcat(strcpy(spaced, " "), piece);
            if (p->kind == PRE_METASPACE) ok = metaspace(p, piece, first && i == 0, &next);
            else if (p->kind == PRE_SPLIT) ok = split(p->re, (SplitKeep)p->keep, piece, &next);
            else if (!p->re) ok = byte_map(piece, &next);
            else {
                List cut = {0};
                ok = split(p->re, KEEP_BOTH, piece, &cut);
                for (int c = 0; c < cut.n && ok; c++) ok = byte_map(cut.s[c], &next);
                list_free(&cut);
            }
            free(spaced);
        }
        list_free(pieces);
        *pieces = next;
        if (!ok) return false;
    }
    return true;
}

// ---- encoding ----

// The added token that starts earliest at or after `from` (the longest where two start
// together); its index, or -1. *at: where it starts.
static int next_added(const Tokenizer *t, const char *text, size_t from, size_t *at) {
    int best = -1;
    for (int i = 0; i < t->n_added; i++) {
        const char *p = strstr(text + from, t->added[i].content);
        if (!p) continue;
        const size_t pos = (size_t)(p - text);
        if (best < 0 || pos < *at || (pos == *at && strlen(t->added[i].content) > strlen(t->added[best].content)))
            best = i, *at = pos;
    }
    return best;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// A SentencePiece side: the model's pieces, each numbered by vocab.json (or unknown).
static bool encode_pieces(const Tokenizer *t, const char *s, size_t n, int **ids, int *count, int *cap, Err *e) {
    char *text = malloc(n + 1);
    char **pieces = NULL;
    int np = 0;
    bool ok = text != NULL;
    if (ok) memcpy(text, s, n), text[n] = '\0';
    ok = ok && spm_encode(t->spm, text, &pieces, &np, e);
    for (int i = 0; ok && i < np; i++) {
        const int id = strmap_get(&t->bpe.vocab, pieces[i], strlen(pieces[i]));
        ok = ids_push(ids, count, cap, id >= 0 ? id : t->bpe.unk);
    }
    if (!ok && text) err_code(e, ERR_MEMORY, "out of memory");
    spm_pieces_free(pieces, np);
    free(text);
    return ok;
}

static bool encode_text(const Tokenizer *t, const char *s, size_t n, bool first, int **ids, int *count, int *cap, Err *e) {
    if (!n) return true;
    if (t->spm) return encode_pieces(t, s, n, ids, count, cap, e);
    char *norm = normalize(t, s, n);
    List pieces = {0};
    bool ok = norm && pre_tokenize(t, norm, first, &pieces);
    if (!ok) err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0; i < pieces.n && ok; i++)
        ok = t->uni.score ? unigram_word(&t->uni, &t->bpe, pieces.s[i], strlen(pieces.s[i]), ids, count, cap, t->path, e)
                          : bpe_word(&t->bpe, pieces.s[i], strlen(pieces.s[i]), ids, count, cap, t->path, e);
    list_free(&pieces);
    free(norm);
    return ok;
}

bool tokenizer_encode(const Tokenizer *t, const char *text, bool special, int **ids, int *n, Err *e) {
    *ids = NULL, *n = 0;
    int cap = 0;
    bool ok = true;
    for (int i = 0; special && ok && i < t->n_post_before; i++) ok = ids_push(ids, n, &cap, t->post_before[i]);
    const size_t len = strlen(text);
    size_t from = 0;
    bool strip_next = false;
    while (ok && from <= len) {
        size_t at = len;
        const int a = next_added(t, text, from, &at);
        size_t end = at;
        if (strip_next)
            while (from < end && is_space(text[from])) from++;
        if (a >= 0 && t->added[a].lstrip)
            while (end > from && is_space(text[end - 1])) end--;
        ok = encode_text(t, text + from, end - from, from == 0, ids, n, &cap, e);
        if (a < 0 || !ok) break;
        ok = ids_push(ids, n, &cap, t->added[a].id) || err_code(e, ERR_MEMORY, "out of memory");
        strip_next = t->added[a].rstrip;
        from = at + strlen(t->added[a].content);
    }
    for (int i = 0; special && ok && i < t->n_post_after; i++) ok = ids_push(ids, n, &cap, t->post_after[i]);
    if (!ok) free(*ids), *ids = NULL, *n = 0;
    return ok;
}

#else
// The page reads tokenizer.json for its pieces and decodes them, but cuts no text into tokens:
// PCRE2's and utf8proc's tables would take its first load past 4 MB.
bool tokenizer_encode(const Tokenizer *t, const char *text, bool special, int **ids, int *n, Err *e) {
    (void)text, (void)special, *ids = NULL, *n = 0;
    return err_set(e, "%s: the page shows this tokenizer's pieces but does not tokenize text: give the ids "
                   "(src_ids), or run the desktop program", t->path);
}
#endif

// ---- decoding ----

static int hex_byte(const char *s) {  // "<0xAB>" -> 0xAB, else -1
    unsigned v;
    char close;
    return strlen(s) == 6 && sscanf(s, "<0x%2X%c", &v, &close) == 2 && close == '>' ? (int)v : -1;
}

static bool valid_utf8(const unsigned char *s, size_t n) {
    uint32_t cp;
    for (size_t i = 0, len; i < n; i += len)
        if (!(len = (size_t)utf8_decode(s + i, n - i, &cp))) return false;
    return true;
}

// One decoder step over the tokens.
static bool decode_step(const Dec *d, List *tok) {
    List out = {0};
    bool ok = true;
    if (d->kind == DEC_BYTELEVEL || d->kind == DEC_FUSE || d->kind == DEC_BYTEFALLBACK) {
        Buf b = {0};
        ok = buf_add(&b, "", 0);
        for (int i = 0; i < tok->n && ok; i++) {
            if (d->kind == DEC_FUSE) {
                ok = buf_add(&b, tok->s[i], strlen(tok->s[i]));
                continue;
            }
            if (d->kind == DEC_BYTEFALLBACK) {  // a run of <0xXX> becomes its bytes (or U+FFFD each)
                if (hex_byte(tok->s[i]) < 0) {
                    ok = list_add(&out, tok->s[i], strlen(tok->s[i]));
                    continue;
                }
                Buf bytes = {0};
                for (; i < tok->n && hex_byte(tok->s[i]) >= 0 && ok; i++) {
                    const char c = (char)hex_byte(tok->s[i]);
                    ok = buf_add(&bytes, &c, 1);
                }
                i--;
                if (ok && valid_utf8((const unsigned char *)bytes.s, bytes.n)) ok = list_add(&out, bytes.s, bytes.n);
                else
                    for (size_t k = 0; ok && k < bytes.n; k++) ok = list_add(&out, "\xEF\xBF\xBD", 3);
                free(bytes.s);
                continue;
            }
            for (const char *p = tok->s[i]; *p && ok;) {  // byte-level characters back to bytes
                int used;
                const int byte = byte_level_byte(p, &used);
                const char c = (char)byte;
                ok = byte >= 0 ? buf_add(&b, &c, 1) : buf_add(&b, p, (size_t)used);
                p += used;
            }
        }
        if (d->kind != DEC_BYTEFALLBACK) ok = ok && list_add(&out, b.s, b.n);
        free(b.s);
    } else {
        for (int i = 0; i < tok->n && ok; i++) {
            char *s = d->kind == DEC_STRIP ? tok_dup(tok->s[i]) : replace_all(tok->s[i], d->a, d->kind == DEC_REPLACE ? d->b : " ");
            ok = s != NULL;
            if (!ok) break;
            char *from = s;
            if (d->kind == DEC_METASPACE && d->start && i == 0 && *from == ' ') from++;
            const size_t na = d->a ? strlen(d->a) : 0;
            for (int k = 0; d->kind == DEC_STRIP && k < d->start && na && !strncmp(from, d->a, na); k++) from += na;
            size_t len = strlen(from);
            for (int k = 0; d->kind == DEC_STRIP && k < d->stop && na && len >= na && !strncmp(from + len - na, d->a, na); k++) len -= na;
            ok = list_add(&out, from, len);
            free(s);
        }
    }
    list_free(tok);
    *tok = out;
    return ok;
}

char *tokenizer_decode(const Tokenizer *t, const int *ids, int n) {
    List tok = {0};
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        const char *p = tokenizer_piece(t, ids[i]);
        ok = list_add(&tok, p ? p : "", p ? strlen(p) : 0);
    }
    for (int k = 0; k < t->n_dec && ok; k++) ok = decode_step(&t->dec[k], &tok);
    Buf b = {0};
    ok = ok && buf_add(&b, "", 0);
    for (int i = 0; i < tok.n && ok; i++) ok = buf_add(&b, tok.s[i], strlen(tok.s[i]));
    list_free(&tok);
    if (!ok) free(b.s), b.s = NULL;
    return b.s;
}

// The bytes a piece stands for: GPT-2's alphabet read back, or "▁" as a space and <0xXX> as
// its byte.
static void piece_bytes(const Tokenizer *t, const char *p, Buf *b) {
    const int hb = hex_byte(p);
    if (hb >= 0) {
        const char c = (char)hb;
        buf_add(b, &c, 1);
        return;
    }
    while (*p) {
        int used = utf8_len(p);
        const int byte = t->byte_level ? byte_level_byte(p, &used) : -1;
        const char c = (char)byte;
        if (byte >= 0) buf_add(b, &c, 1);
        else if (!strncmp(p, "\xE2\x96\x81", 3)) buf_add(b, " ", 1);
        else buf_add(b, p, (size_t)used);
        p += used;
    }
}

void tokenizer_label(const Tokenizer *t, int id, char *buf, size_t n) {
    const char *p = tokenizer_piece(t, id);
    if (!p) {
        snprintf(buf, n, "%d", id);
        return;
    }
    bool added = false;
    for (int i = 0; i < t->n_added; i++) added = added || t->added[i].id == id;
    Buf b = {0};
    if (added) buf_add(&b, p, strlen(p));
    else piece_bytes(t, p, &b);
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; b.s && i < b.n && k + 8 < n;) {
        const unsigned char c = (unsigned char)b.s[i];
        const int len = utf8_len(b.s + i);
        const char *shown = c == ' ' ? "\xE2\x90\xA3" : c == '\n' ? "\xE2\x86\xB5" : c == '\t' ? "\xE2\x87\xA5" : NULL;
        if (shown) k += (size_t)snprintf(buf + k, n - k, "%s", shown), i++;
        else if (c < 0x20 || (c >= 0x80 && (len == 1 || !valid_utf8((const unsigned char *)b.s + i, (size_t)len))))
            k += (size_t)snprintf(buf + k, n - k, "<0x%02X>", c), i++;  // a control byte, or part of a character
        else memcpy(buf + k, b.s + i, (size_t)len), k += (size_t)len, buf[k] = '\0', i += (size_t)len;
    }
    free(b.s);
}
