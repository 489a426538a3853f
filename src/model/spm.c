// spm.c: a SentencePiece model file read and run (spm.h).
//
// The file is a protobuf ModelProto. The fields read (sentencepiece_model.proto):
//   ModelProto      1 pieces (repeated SentencePiece), 2 trainer_spec, 3 normalizer_spec
//   SentencePiece   1 piece (string), 2 score (float), 3 type (1 NORMAL, 2 UNKNOWN, 3 CONTROL,
//                   4 USER_DEFINED, 5 UNUSED, 6 BYTE)
//   TrainerSpec     3 model_type (1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR), 24 treat_whitespace_as_suffix,
//                   35 byte_fallback
//   NormalizerSpec  2 precompiled_charsmap, 3 add_dummy_prefix, 4 remove_extra_whitespaces,
//                   5 escape_whitespaces (the three default to true)
// Every other field is skipped by its wire type.
#include "spm.h"

#include <ctype.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "bpe.h"
#include "utf8.h"

enum { PIECE_NORMAL = 1, PIECE_UNKNOWN, PIECE_CONTROL, PIECE_USER, PIECE_UNUSED, PIECE_BYTE };
enum { MODEL_UNIGRAM = 1, MODEL_BPE, MODEL_WORD, MODEL_CHAR };
#define SPACE "\xE2\x96\x81"  // "▁", what a space becomes
#define UNK_PENALTY 10.0f      // an unknown character scores this much below the least piece

struct Spm {
    char what[4200];
    char **piece;         // [n] the piece of each index (the file's order: the model's ids)
    float *score;         // [n]
    unsigned char *type;  // [n] PIECE_*
    int n, cap;
    StrMap ids;           // NORMAL, USER_DEFINED and UNUSED pieces -> index
    int unk;              // the UNKNOWN piece's index
    int model;            // MODEL_*
    bool byte_fallback, suffix;
    bool dummy_prefix, extra_spaces, escape_spaces;  // NormalizerSpec's three switches
    unsigned char *map;   // the precompiled character map, or NULL
    size_t map_n;
    float min_score, max_score;  // over the NORMAL pieces, as the library starts them
    int longest;          // the longest piece, in bytes
    int bytes[256];       // the BYTE piece <0xXX> of each byte, or -1
};

// ---- protobuf ----

typedef struct {
    const unsigned char *p, *end;
} Pb;

static bool varint(Pb *b, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (b->p == b->end) return false;
        const unsigned char c = *b->p++;
        *v |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) return true;
    }
    return false;
}

// The next field: its number and wire type; a varint's value in *v, a length-delimited one's
// bytes in *sub, a fixed32's bits in *v. false at a malformed field.
static bool field(Pb *b, int *num, int *wire, uint64_t *v, Pb *sub) {
    uint64_t key;
    if (!varint(b, &key) || key >> 3 == 0 || key >> 3 > (1u << 29)) return false;
    *num = (int)(key >> 3), *wire = (int)(key & 7);
    switch (*wire) {
    case 0: return varint(b, v);
    case 1:
        if (b->end - b->p < 8) return false;
        b->p += 8;
        return true;
    case 2:
        if (!varint(b, v) || *v > (uint64_t)(b->end - b->p)) return false;
        *sub = (Pb){b->p, b->p + *v}, b->p += *v;
        return true;
    case 5:
        if (b->end - b->p < 4) return false;
        *v = (uint64_t)b->p[0] | (uint64_t)b->p[1] << 8 | (uint64_t)b->p[2] << 16 | (uint64_t)b->p[3] << 24;
        b->p += 4;
        return true;
    default: return false;
    }
}

static bool bad(const Spm *s, Err *e, const char *what) {
    return err_set(e, "%s: not a SentencePiece model (%s)", s->what, what);
}

static bool read_piece(Spm *s, Pb b, Err *e) {
    if (s->n == s->cap) {
        const int cap = s->cap ? s->cap * 2 : 1024;
        char **p = realloc(s->piece, sizeof *p * (size_t)cap);
        if (p) s->piece = p;
        float *sc = realloc(s->score, sizeof *sc * (size_t)cap);
        if (sc) s->score = sc;
        unsigned char *t = realloc(s->type, (size_t)cap);
        if (t) s->type = t;
        if (!p || !sc || !t) return err_code(e, ERR_MEMORY, "out of memory");
        s->cap = cap;
    }
    const int i = s->n;
    s->piece[i] = NULL, s->score[i] = 0, s->type[i] = PIECE_NORMAL;
    s->n++;
    int num, wire;
    uint64_t v;
    Pb sub;
    while (b.p < b.end) {
        if (!field(&b, &num, &wire, &v, &sub)) return bad(s, e, "a piece's fields are malformed");
        if (num == 1 && wire == 2) {
            if (memchr(sub.p, 0, v)) return bad(s, e, "a piece holds a NUL byte");
            free(s->piece[i]);
            if (!(s->piece[i] = malloc(v + 1))) return err_code(e, ERR_MEMORY, "out of memory");
            memcpy(s->piece[i], sub.p, v), s->piece[i][v] = '\0';
        } else if (num == 2 && wire == 5) {
            const uint32_t bits = (uint32_t)v;
            memcpy(&s->score[i], &bits, sizeof bits);
        } else if (num == 3 && wire == 0) {
            if (v < PIECE_NORMAL || v > PIECE_BYTE) return err_set(e, "%s: piece %d has type %llu, which SentencePiece does not define", s->what, i, (unsigned long long)v);
            s->type[i] = (unsigned char)v;
        }
    }
    if (!s->piece[i] || !s->piece[i][0])
        return err_set(e, "%s: piece %d is empty", s->what, i);
    return true;
}

static bool read_trainer(Spm *s, Pb b, Err *e) {
    int num, wire;
    uint64_t v;
    Pb sub;
    while (b.p < b.end) {
        if (!field(&b, &num, &wire, &v, &sub)) return bad(s, e, "trainer_spec is malformed");
        if (wire != 0) continue;
        if (num == 3) s->model = (int)(v > 9 ? 9 : v);
        if (num == 24) s->suffix = v != 0;
        if (num == 35) s->byte_fallback = v != 0;
    }
    return true;
}

static bool read_normalizer(Spm *s, Pb b, Err *e) {
    int num, wire;
    uint64_t v;
    Pb sub;
    while (b.p < b.end) {
        if (!field(&b, &num, &wire, &v, &sub)) return bad(s, e, "normalizer_spec is malformed");
        if (num == 2 && wire == 2 && v) {
            free(s->map);
            if (!(s->map = malloc(v))) return err_code(e, ERR_MEMORY, "out of memory");
            memcpy(s->map, sub.p, v), s->map_n = v;
        }
        if (wire == 0 && num == 3) s->dummy_prefix = v != 0;
        if (wire == 0 && num == 4) s->extra_spaces = v != 0;
        if (wire == 0 && num == 5) s->escape_spaces = v != 0;
    }
    return true;
}

// The index of each piece, and the scores and bytes the encoders need; false with a message.
static bool index_pieces(Spm *s, Err *e) {
    static const char *const model_names[] = {"", "Unigram", "BPE", "WORD", "CHAR"};
    if (s->model != MODEL_UNIGRAM && s->model != MODEL_BPE)
        return err_set(e, "%s: a SentencePiece %s model: stepformer reads Unigram and BPE models", s->what,
                       s->model >= MODEL_WORD && s->model <= MODEL_CHAR ? model_names[s->model] : "unknown");
    if (s->suffix) return err_set(e, "%s: treat_whitespace_as_suffix is set: stepformer reads models with the space first", s->what);
    if (s->map_n && !spm_charsmap_check(s->map, s->map_n)) return bad(s, e, "its precompiled_charsmap is malformed");
    s->unk = -1, s->min_score = FLT_MAX, s->max_score = FLT_MIN;  // FLT_MIN as the library starts it
    for (int b = 0; b < 256; b++) s->bytes[b] = -1;
    for (int i = 0; i < s->n; i++) {
        const int t = s->type[i];
        const size_t len = strlen(s->piece[i]);
        if (t == PIECE_UNKNOWN && s->unk >= 0) return err_set(e, "%s: two unknown pieces (%d and %d)", s->what, s->unk, i);
        if (t == PIECE_UNKNOWN) s->unk = i;
        if (t == PIECE_NORMAL) {
            if (s->score[i] < s->min_score) s->min_score = s->score[i];
            if (s->score[i] > s->max_score) s->max_score = s->score[i];
        }
        unsigned byte;
        char close;
        const char *b = s->piece[i];  // "<0xAB>": two hex digits, nothing else (sscanf alone would take "<0x-1>")
        if (t == PIECE_BYTE && len == 6 && isxdigit((unsigned char)b[3]) && isxdigit((unsigned char)b[4]) &&
            sscanf(b, "<0x%2X%c", &byte, &close) == 2 && close == '>' && byte < 256)
            s->bytes[byte] = i;
        if (t != PIECE_NORMAL && t != PIECE_USER && t != PIECE_UNUSED) continue;
        if (strmap_get(&s->ids, s->piece[i], len) >= 0) return err_set(e, "%s: piece %d ('%s') is defined twice", s->what, i, s->piece[i]);
        if (!strmap_put(&s->ids, s->piece[i], len, i)) return err_code(e, ERR_MEMORY, "out of memory");
        if ((int)len > s->longest) s->longest = (int)len;
    }
    if (s->unk < 0) return err_set(e, "%s: no unknown piece (type UNKNOWN): SentencePiece requires one", s->what);
    return true;
}

Spm *spm_parse(const unsigned char *data, size_t n, const char *what, Err *e) {
    Spm *s = calloc(1, sizeof *s);
    if (!s) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    snprintf(s->what, sizeof s->what, "%s", what);
    s->model = MODEL_UNIGRAM, s->dummy_prefix = s->extra_spaces = s->escape_spaces = true;
    Pb b = {data, data + n};
    int num, wire;
    uint64_t v;
    Pb sub;
    bool ok = n > 0 || bad(s, e, "the file is empty");
    while (ok && b.p < b.end) {
        if (!field(&b, &num, &wire, &v, &sub)) ok = bad(s, e, "its fields are malformed");
        else if (num == 1 && wire == 2) ok = read_piece(s, sub, e);
        else if (num == 2 && wire == 2) ok = read_trainer(s, sub, e);
        else if (num == 3 && wire == 2) ok = read_normalizer(s, sub, e);
    }
    if (ok && s->n == 0) ok = bad(s, e, "it has no pieces");
    if (ok) ok = index_pieces(s, e);
    if (!ok) spm_free(s), s = NULL;
    return s;
}

Spm *spm_load(const char *path, Err *e) {
    char *text;
    size_t n;
    if (!file_read_all(path, "the SentencePiece model", &text, &n, e)) return NULL;
    Spm *s = spm_parse((const unsigned char *)text, n, path, e);
    free(text);
    return s;
}

void spm_free(Spm *s) {
    if (!s) return;
    for (int i = 0; i < s->n; i++) free(s->piece[i]);
    free(s->piece), free(s->score), free(s->type), free(s->map);
    strmap_free(&s->ids);
    free(s);
}

int spm_size(const Spm *s) { return s->n; }

const char *spm_piece(const Spm *s, int id, bool *normal) {
    *normal = id >= 0 && id < s->n && s->type[id] == PIECE_NORMAL;
    return id >= 0 && id < s->n ? s->piece[id] : NULL;
}

void spm_pieces_free(char **pieces, int n) {
    for (int i = 0; i < n; i++) free(pieces[i]);
    free(pieces);
}

// ---- the normalizer ----

typedef struct {
    char *s;
    size_t n, cap;
    bool failed;
} Out;

static void out_add(Out *o, const char *s, size_t n) {
    if (o->failed) return;
    if (o->n + n + 1 > o->cap) {
        const size_t cap = (o->n + n + 1) * 2;
        char *g = realloc(o->s, cap);
        if (!g) {
            o->failed = true;
            return;
        }
        o->s = g, o->cap = cap;
    }
    memcpy(o->s + o->n, s, n);
    o->n += n;
    o->s[o->n] = '\0';
}

static uint32_t le32(const unsigned char *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

bool spm_charsmap_check(const unsigned char *map, size_t n) {
    if (!map || !n) return true;
    if (n < 8) return false;
    const uint32_t trie = le32(map);
    return trie >= 4 && trie % 4 == 0 && trie <= n - 4;
}

// The longest rule of the map that starts text (len bytes): its length, and its replacement in
// *out (NUL-terminated, inside the map). 0 when none. The library takes the longest of the first
// 32 rules that match (darts-clone's commonPrefixSearch into 32 results).
static size_t map_rule(const unsigned char *map, size_t n, const char *text, size_t len, const char **out) {
    if (!map || !n) return 0;
    const size_t units = le32(map) / 4;
    const unsigned char *u = map + 4, *norm = map + 4 + units * 4;
    const size_t norm_n = n - 4 - units * 4;
#define UNIT(i) le32(u + 4 * (i))
    size_t pos = 0, best = 0, found = 0;
    uint32_t unit = UNIT(0);
    pos ^= (unit >> 10) << ((unit & (1u << 9)) >> 6);
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)text[i];
        pos ^= c;
        if (pos >= units) break;
        unit = UNIT(pos);
        if ((unit & ((1u << 31) | 0xFF)) != c) break;
        pos ^= (unit >> 10) << ((unit & (1u << 9)) >> 6);
        if (pos >= units) break;
        if (!((unit >> 8) & 1)) continue;
        const uint32_t value = UNIT(pos) & 0x7FFFFFFFu;
        if (found++ < 32 && value < norm_n && memchr(norm + value, 0, norm_n - value))
            best = i + 1, *out = (const char *)norm + value;
    }
#undef UNIT
    return best;
}

// What the start of text (len > 0 bytes) becomes: a user-defined piece as it is, else the
// longest rule's replacement, else one UTF-8 character (an invalid byte becomes U+FFFD).
static size_t prefix(const Spm *s, const unsigned char *map, size_t map_n, const char *text, size_t len, const char **out, size_t *out_n) {
    for (size_t l = s && (size_t)s->longest < len ? (size_t)s->longest : s ? len : 0; l > 0; l--) {
        const int i = strmap_get(&s->ids, text, l);
        if (i >= 0 && s->type[i] == PIECE_USER) return *out = text, *out_n = l, l;
    }
    const size_t rule = map_rule(map, map_n, text, len, out);
    if (rule) return *out_n = strlen(*out), rule;
    uint32_t cp;
    const int n = utf8_decode((const unsigned char *)text, len, &cp);
    if (n == 0) return *out = "\xEF\xBF\xBD", *out_n = 3, 1;
    return *out = text, *out_n = (size_t)n, (size_t)n;
}

char *spm_charsmap_apply(const unsigned char *map, size_t n, const char *text) {
    Out o = {0};
    out_add(&o, "", 0);
    for (size_t len = strlen(text); len > 0 && !o.failed;) {
        const char *rep;
        size_t rep_n;
        const size_t used = prefix(NULL, map, n, text, len, &rep, &rep_n);
        out_add(&o, rep, rep_n);
        text += used, len -= used;
    }
    if (o.failed) free(o.s), o.s = NULL;
    return o.s;
}

char *spm_normalize(const Spm *s, const char *text) {
    Out o = {0};
    out_add(&o, "", 0);
    size_t len = strlen(text);
    const char *rep;
    size_t rep_n;
    while (s->extra_spaces && len) {  // leading spaces go
        const size_t used = prefix(s, s->map, s->map_n, text, len, &rep, &rep_n);
        if (rep_n != 1 || *rep != ' ') break;
        text += used, len -= used;
    }
    if (!len) return o.s;
    const char *space = s->escape_spaces ? SPACE : " ";
    if (s->dummy_prefix) out_add(&o, space, strlen(space));
    bool prev_space = s->extra_spaces;
    while (len) {
        const size_t used = prefix(s, s->map, s->map_n, text, len, &rep, &rep_n);
        while (prev_space && rep_n && *rep == ' ') rep++, rep_n--;  // one space where there were several
        for (size_t i = 0; i < rep_n; i++) {
            if (rep[i] == ' ') out_add(&o, space, strlen(space));
            else out_add(&o, rep + i, 1);
        }
        if (rep_n) prev_space = rep[rep_n - 1] == ' ';
        if (!s->extra_spaces) prev_space = false;
        text += used, len -= used;
    }
    const size_t sn = strlen(space);
    while (s->extra_spaces && !o.failed && o.n >= sn && !memcmp(o.s + o.n - sn, space, sn)) o.n -= sn, o.s[o.n] = '\0';
    if (o.failed) free(o.s), o.s = NULL;
    return o.s;
}

// ---- the encoders ----

typedef struct {
    char **s;
    int n, cap;
    bool failed, last_unknown;  // last_unknown: the last piece pushed is unknown
} Pieces;

static void push(Pieces *p, const char *s, size_t n) {
    if (p->failed) return;
    if (p->n == p->cap) {
        const int cap = p->cap ? p->cap * 2 : 32;
        char **g = realloc(p->s, sizeof *g * (size_t)cap);
        if (!g) {
            p->failed = true;
            return;
        }
        p->s = g, p->cap = cap;
    }
    char *c = malloc(n + 1);
    if (!c) {
        p->failed = true;
        return;
    }
    memcpy(c, s, n), c[n] = '\0';
    p->s[p->n++] = c;
}

// A piece of the text (its id in the model is `unknown` or not). The library writes a run of
// unknown pieces as one, or, when the model falls back to bytes, each as the pieces of its bytes.
static void emit(const Spm *s, Pieces *p, const char *text, size_t n, bool unknown) {
    if (unknown && s->byte_fallback) {
        for (size_t i = 0; i < n; i++) {
            const int b = s->bytes[(unsigned char)text[i]];
            if (b >= 0) push(p, s->piece[b], strlen(s->piece[b]));
            else push(p, text + i, 1);
        }
    } else if (unknown && p->last_unknown && p->n > 0) {
        char *prev = p->s[p->n - 1];
        const size_t m = strlen(prev);
        char *g = realloc(prev, m + n + 1);
        if (!g) p->failed = true;
        else memcpy(g + m, text, n), g[m + n] = '\0', p->s[p->n - 1] = g;
    } else push(p, text, n);
    p->last_unknown = unknown && !s->byte_fallback;
}

static int char_len(unsigned char c) { return "\1\1\1\1\1\1\1\1\1\1\1\1\2\2\3\4"[c >> 4]; }

typedef struct {
    int id, start;  // the piece that ends here on the best path and where it starts; start -1: none yet
    float score;
} Best;

// Unigram: the best path through the pieces over text (n bytes), by its summed scores.
static void unigram(const Spm *s, const char *text, size_t n, Pieces *p) {
    Best *best = malloc(sizeof *best * (n + 1));
    if (!best) {
        p->failed = true;
        return;
    }
    for (size_t i = 0; i <= n; i++) best[i] = (Best){-1, -1, 0};
    const float unk_score = s->min_score - UNK_PENALTY;
    for (size_t start = 0; start < n;) {
        const float here = best[start].score;
        const size_t one = (size_t)char_len((unsigned char)text[start]) < n - start ? (size_t)char_len((unsigned char)text[start]) : n - start;
        bool single = false;
        for (size_t l = 1; l <= n - start && l <= (size_t)s->longest; l++) {
            const int id = strmap_get(&s->ids, text + start, l);
            if (id < 0 || s->type[id] == PIECE_UNUSED) continue;
            const float score = s->type[id] == PIECE_USER ? (float)((double)l * s->max_score - 0.1 + here) : s->score[id] + here;
            Best *b = &best[start + l];
            if (b->start == -1 || score > b->score) *b = (Best){id, (int)start, score};
            single = single || l == one;
        }
        Best *b = &best[start + one];
        if (!single && (b->start == -1 || unk_score + here > b->score)) *b = (Best){s->unk, (int)start, unk_score + here};
        start += one;
    }
    int count = 0;
    for (size_t end = n; end > 0; end = (size_t)best[end].start) count++;
    size_t *ends = malloc(sizeof *ends * (size_t)(count ? count : 1));
    if (!ends) p->failed = true;
    int k = count;
    for (size_t end = n; ends && end > 0; end = (size_t)best[end].start) ends[--k] = end;
    for (int i = 0; ends && i < count; i++) {
        const size_t from = (size_t)best[ends[i]].start;
        emit(s, p, text + from, ends[i] - from, best[ends[i]].id == s->unk);
    }
    free(ends), free(best);
}

typedef struct {
    size_t at, len;
    int prev, next;
    int a, b;      // the two symbols merged into this one (for an unused piece), or -1
    bool frozen;   // a user-defined piece: never merged
} Sym;

// A merged symbol whose piece is UNUSED is written as the two it was made of, and so on down.
static void resegment(const Spm *s, const Sym *sym, int i, const char *text, Pieces *p) {
    const int id = strmap_get(&s->ids, text + sym[i].at, sym[i].len);
    if (id >= 0 && s->type[id] == PIECE_UNUSED && sym[i].a >= 0) {
        resegment(s, sym, sym[i].a, text, p);
        resegment(s, sym, sym[i].b, text, p);
    } else emit(s, p, text + sym[i].at, sym[i].len, id < 0);
}

// The score of merging symbol i with the next, or -FLT_MAX when that is no piece.
static float pair_score(const Spm *s, const Sym *sym, int i, const char *text) {
    const int j = sym[i].next;
    if (j < 0 || sym[i].frozen || sym[j].frozen) return -FLT_MAX;
    const int id = strmap_get(&s->ids, text + sym[i].at, sym[i].len + sym[j].len);
    return id < 0 ? -FLT_MAX : s->score[id];
}

// BPE: characters (and user-defined pieces) merged, the best-scoring pair first.
static void bpe(const Spm *s, const char *text, size_t n, Pieces *p) {
    Sym *sym = malloc(sizeof *sym * (3 * n + 1));  // the symbols, then two halves for each merge
    float *score = malloc(sizeof *score * (n + 1));
    int m = 0;
    for (size_t at = 0; sym && score && at < n; m++) {
        const char *rep;
        size_t rep_n;
        const size_t l = prefix(s, NULL, 0, text + at, n - at, &rep, &rep_n);
        const int id = strmap_get(&s->ids, rep, l);
        const bool user = rep == text + at && id >= 0 && s->type[id] == PIECE_USER;
        sym[m] = (Sym){at, l, m - 1, -1, -1, -1, user};
        if (m > 0) sym[m - 1].next = m;
        at += l;
    }
    for (int i = 0; sym && score && i < m; i++) score[i] = pair_score(s, sym, i, text);
    for (int parts = m; sym && score;) {
        int top = -1;
        for (int i = 0; i >= 0 && i < m; i = sym[i].next)
            if (score[i] > -FLT_MAX && (top < 0 || score[i] > score[top])) top = i;
        if (top < 0) break;
        const int right = sym[top].next;
        sym[parts] = sym[top], sym[parts + 1] = sym[right];  // the halves, kept for resegmenting
        sym[top].a = parts, sym[top].b = parts + 1, parts += 2;
        sym[top].len += sym[right].len, sym[top].next = sym[right].next;
        if (sym[right].next >= 0) sym[sym[right].next].prev = top;
        score[top] = pair_score(s, sym, top, text);
        if (sym[top].prev >= 0) score[sym[top].prev] = pair_score(s, sym, sym[top].prev, text);
    }
    if (!sym || !score) p->failed = true;
    for (int i = 0; sym && score && m > 0 && i >= 0; i = sym[i].next) resegment(s, sym, i, text, p);
    free(sym), free(score);
}

bool spm_encode(const Spm *s, const char *text, char ***pieces, int *n, Err *e) {
    *pieces = NULL, *n = 0;
    char *norm = spm_normalize(s, text);
    Pieces p = {0};
    if (norm && s->model == MODEL_UNIGRAM) unigram(s, norm, strlen(norm), &p);
    else if (norm) bpe(s, norm, strlen(norm), &p);
    const bool ok = norm && !p.failed;
    free(norm);
    if (!ok) return spm_pieces_free(p.s, p.n), err_code(e, ERR_MEMORY, "out of memory");
    *pieces = p.s, *n = p.n;
    return true;
}
