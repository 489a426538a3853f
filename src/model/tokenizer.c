// tokenizer.c: reading a tokenizer.json (tokenizer.h); encoding is tokenizer_run.c's.
#include "tokenizer_impl.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"

char *tok_dup(const char *s) {
    char *d = malloc(strlen(s) + 1);
    return d ? strcpy(d, s) : NULL;
}

static const char *type_of(const cJSON *j) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

static const char *str_of(const cJSON *j, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool flag_of(const cJSON *j, const char *key, bool otherwise) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : otherwise;
}

// A refusal naming the file, the part and what in it is not implemented.
static bool unsupported(const Tokenizer *t, const char *part, const char *what, Err *e) {
    return err_set(e, "%s: %s %s is not implemented by stepformer's tokenizer", t->path, part, what);
}

// A Split's or Replace's pattern: {"String": s} or {"Regex": r}; *regex says which.
static const char *pattern_of(const cJSON *j, bool *regex) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "pattern");
    const char *s = str_of(p, "String");
    *regex = s == NULL;
    return s ? s : str_of(p, "Regex");
}

// ---- the BPE model ----

bool tok_read_vocab(Tokenizer *t, const cJSON *vocab, Err *e) {
    int top = -1;
    for (const cJSON *v = vocab->child; v; v = v->next) {
        if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= TOKENIZER_MAX_IDS || v->valuedouble != (int)v->valuedouble)
            return err_set(e, "%s: the vocabulary's '%s' has no valid id", t->path, v->string);
        top = v->valueint > top ? v->valueint : top;
    }
    t->bpe.n_pieces = top + 1;
    t->bpe.pieces = calloc((size_t)top + 2, sizeof(char *));
    if (!t->bpe.pieces) return err_code(e, ERR_MEMORY, "out of memory");
    for (const cJSON *v = vocab->child; v; v = v->next) {
        if (!strmap_put(&t->bpe.vocab, v->string, strlen(v->string), v->valueint)) return err_code(e, ERR_MEMORY, "out of memory");
        free(t->bpe.pieces[v->valueint]);
        t->bpe.pieces[v->valueint] = tok_dup(v->string);
    }
    return true;
}

// Merges written "a b" (tokenizers before 0.20) or ["a", "b"] (0.20 on): both read the same.
static bool read_merges(Tokenizer *t, const cJSON *merges, Err *e) {
    int rank = 0;
    for (const cJSON *m = merges->child; m; m = m->next, rank++) {
        char buf[1024];
        if (cJSON_IsString(m)) snprintf(buf, sizeof buf, "%s", m->valuestring);
        else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 && cJSON_IsString(m->child) && cJSON_IsString(m->child->next))
            snprintf(buf, sizeof buf, "%s %s", m->child->valuestring, m->child->next->valuestring);
        else return err_set(e, "%s: merge %d is neither \"a b\" nor [\"a\", \"b\"]", t->path, rank);
        if (strmap_get(&t->bpe.merges, buf, strlen(buf)) >= 0) continue;  // the first rank counts
        if (!strmap_put(&t->bpe.merges, buf, strlen(buf), rank)) return err_code(e, ERR_MEMORY, "out of memory");
    }
    return true;
}

// Unigram: vocab is a list of [piece, score], an id each in order.
static bool read_unigram(Tokenizer *t, const cJSON *m, Err *e) {
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(m, "vocab"), *unk = cJSON_GetObjectItemCaseSensitive(m, "unk_id");
    const int n = cJSON_GetArraySize(vocab);
    if (!cJSON_IsArray(vocab) || n < 1 || n >= TOKENIZER_MAX_IDS) return err_set(e, "%s: the Unigram model has no vocab", t->path);
    Unigram *u = &t->uni;
    u->score = malloc(sizeof *u->score * (size_t)n);
    t->bpe.pieces = calloc((size_t)n + 1, sizeof(char *));
    if (!u->score || !t->bpe.pieces) return err_code(e, ERR_MEMORY, "out of memory");
    u->n = t->bpe.n_pieces = n;
    double least = 0;
    int id = 0;
    for (const cJSON *v = vocab->child; v; v = v->next, id++) {
        const cJSON *piece = cJSON_GetArrayItem(v, 0), *score = cJSON_GetArrayItem(v, 1);
        if (!cJSON_IsArray(v) || !cJSON_IsString(piece) || !*piece->valuestring || !cJSON_IsNumber(score))
            return err_set(e, "%s: Unigram piece %d is not [\"piece\", score]", t->path, id);
        const size_t len = strlen(piece->valuestring);
        if (strmap_get(&t->bpe.vocab, piece->valuestring, len) < 0 && !strmap_put(&t->bpe.vocab, piece->valuestring, len, id))
            return err_code(e, ERR_MEMORY, "out of memory");
        if (!(t->bpe.pieces[id] = tok_dup(piece->valuestring))) return err_code(e, ERR_MEMORY, "out of memory");
        u->score[id] = score->valuedouble;
        least = id == 0 || score->valuedouble < least ? score->valuedouble : least;
        u->longest = (int)len > u->longest ? (int)len : u->longest;
    }
    u->unk_score = least - 10.0;
    t->bpe.unk = cJSON_IsNumber(unk) && unk->valueint >= 0 && unk->valueint < n ? unk->valueint : -1;
    t->bpe.byte_fallback = flag_of(m, "byte_fallback", false);
    return true;
}

static bool read_model(Tokenizer *t, const cJSON *m, Err *e) {
    if (!strcmp(type_of(m), "Unigram")) return read_unigram(t, m, e);
    if (strcmp(type_of(m), "BPE")) return unsupported(t, "the model type", *type_of(m) ? type_of(m) : "(none)", e);
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(m, "vocab"), *merges = cJSON_GetObjectItemCaseSensitive(m, "merges");
    if (!cJSON_IsObject(vocab) || !cJSON_IsArray(merges)) return err_set(e, "%s: the BPE model has no vocab or merges", t->path);
    const char *pre = str_of(m, "continuing_subword_prefix"), *suf = str_of(m, "end_of_word_suffix");
    if ((pre && *pre) || (suf && *suf)) return unsupported(t, "the BPE option", "continuing_subword_prefix/end_of_word_suffix", e);
    const cJSON *drop = cJSON_GetObjectItemCaseSensitive(m, "dropout");
    if (cJSON_IsNumber(drop) && drop->valuedouble > 0) return unsupported(t, "the BPE option", "dropout", e);
    t->bpe.byte_fallback = flag_of(m, "byte_fallback", false);
    t->bpe.ignore_merges = flag_of(m, "ignore_merges", false);
    if (!tok_read_vocab(t, vocab, e) || !read_merges(t, merges, e)) return false;
    const char *unk = str_of(m, "unk_token");
    t->bpe.unk = unk ? strmap_get(&t->bpe.vocab, unk, strlen(unk)) : -1;
    return true;
}

// ---- added tokens ----

static bool read_added(Tokenizer *t, const cJSON *list, Err *e) {
    const int n = cJSON_GetArraySize(list);
    t->added = calloc((size_t)n + 1, sizeof *t->added);
    if (!t->added) return err_code(e, ERR_MEMORY, "out of memory");
    for (const cJSON *a = list->child; a; a = a->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        const char *content = str_of(a, "content");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= TOKENIZER_MAX_IDS ||
            id->valuedouble != (int)id->valuedouble || !content || !*content)
            return err_set(e, "%s: an added token has no id or content", t->path);
        if (flag_of(a, "single_word", false)) return unsupported(t, "the added token option", "single_word", e);
        t->added[t->n_added++] = (Added){tok_dup(content), id->valueint, flag_of(a, "lstrip", false), flag_of(a, "rstrip", false),
                                         flag_of(a, "special", false)};
        if (!t->added[t->n_added - 1].content) return err_code(e, ERR_MEMORY, "out of memory");
    }
    return true;
}

// ---- normalizers, pre-tokenizers, decoders, post-processors: each a list of steps ----

// A Sequence: each entry of its list `key`, read by the reader of that part.
static bool read_each(Tokenizer *t, const cJSON *j, const char *key, bool (*read)(Tokenizer *, const cJSON *, Err *),
                      Err *e) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, key);
    for (const cJSON *n = cJSON_IsArray(list) ? list->child : NULL; n; n = n->next)
        if (!read(t, n, e)) return false;
    return true;
}

// Standard base64 (with = padding) into a malloc'd buffer; false when it is not.
static bool base64(const char *s, unsigned char **out, size_t *n) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const size_t len = strlen(s);
    *out = malloc(len / 4 * 3 + 3), *n = 0;
    if (!*out || len % 4) return false;
    unsigned bits = 0;
    int have = 0;
    for (size_t i = 0; i < len && s[i] != '='; i++) {
        const char *d = strchr(digits, s[i]);
        if (!d || !s[i]) return false;
        bits = (bits << 6) | (unsigned)(d - digits), have += 6;
        if (have >= 8) have -= 8, (*out)[(*n)++] = (unsigned char)(bits >> have), bits &= (1u << have) - 1;
    }
    return true;
}

// A regular expression (PCRE2, UTF and Unicode properties) into *re; on the page, nothing.
static bool compile_pattern(Tokenizer *t, const char *pattern, const char *what, struct pcre2_real_code_8 **re, Err *e) {
#if STEPFORMER_TOKENIZER_ENCODES
    int code;
    PCRE2_SIZE at;
    *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code, &at, NULL);
    if (*re) return true;
    PCRE2_UCHAR msg[200];
    pcre2_get_error_message(code, msg, sizeof msg);
    return err_set(e, "%s: %s '%s' does not compile at %zu: %s", t->path, what, pattern, (size_t)at, (char *)msg);
#else
    (void)t, (void)pattern, (void)what, (void)e;  // the page cuts no text (tokenizer_run.c)
    *re = NULL;
    return true;
#endif
}

static bool read_normalizer(Tokenizer *t, const cJSON *j, Err *e) {
    if (!j || cJSON_IsNull(j)) return true;
    const char *type = type_of(j);
    if (!strcmp(type, "Sequence")) return read_each(t, j, "normalizers", read_normalizer, e);
    if (t->n_norm == TOK_MAX_STEPS) return unsupported(t, "a normalizer with", "more than 8 steps", e);
    Norm *n = &t->norm[t->n_norm];
    bool regex = false;
    if (!strcmp(type, "NFC")) n->kind = NORM_NFC;
    else if (!strcmp(type, "Prepend") && str_of(j, "prepend")) n->kind = NORM_PREPEND, n->a = tok_dup(str_of(j, "prepend"));
    else if (!strcmp(type, "Replace") && pattern_of(j, &regex) && !regex && str_of(j, "content"))
        n->kind = NORM_REPLACE, n->a = tok_dup(pattern_of(j, &regex)), n->b = tok_dup(str_of(j, "content"));
    else if (!strcmp(type, "Replace") && pattern_of(j, &regex) && regex && str_of(j, "content")) {
        n->kind = NORM_REGEX, n->b = tok_dup(str_of(j, "content"));
        if (!compile_pattern(t, pattern_of(j, &regex), "the Replace pattern", &n->re, e)) return false;
    } else if (!strcmp(type, "Strip"))
        n->kind = NORM_STRIP, n->left = flag_of(j, "strip_left", flag_of(j, "left", true)), n->right = flag_of(j, "strip_right", flag_of(j, "right", true));
    else if (!strcmp(type, "Precompiled") && str_of(j, "precompiled_charsmap")) {
        n->kind = NORM_PRECOMPILED;
        if (!base64(str_of(j, "precompiled_charsmap"), &n->map, &n->map_n) || !spm_charsmap_check(n->map, n->map_n))
            return err_set(e, "%s: the Precompiled normalizer's precompiled_charsmap is not a SentencePiece character map", t->path);
    } else return unsupported(t, "the normalizer", *type ? type : "(no type)", e);
    t->n_norm++;
    return true;
}

static bool compile(Tokenizer *t, Pre *p, const char *pattern, Err *e) {
    return compile_pattern(t, pattern, "the split pattern", &p->re, e);
}

// GPT-2's pattern: contractions, letters, numbers, other symbols (each with one leading
// space), and runs of white space (leaving the last space to the word after it).
static const char *const gpt2_pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

static bool read_pre(Tokenizer *t, const cJSON *j, Err *e) {
    if (!j || cJSON_IsNull(j)) return true;
    const char *type = type_of(j);
    if (!strcmp(type, "Sequence")) return read_each(t, j, "pretokenizers", read_pre, e);
    if (t->n_pre == TOK_MAX_STEPS) return unsupported(t, "a pre_tokenizer with", "more than 8 steps", e);
    Pre *p = &t->pre[t->n_pre];
    if (!strcmp(type, "ByteLevel")) {
        p->kind = PRE_BYTELEVEL, p->prefix_space = flag_of(j, "add_prefix_space", false);
        if (flag_of(j, "use_regex", true) && !compile(t, p, gpt2_pattern, e)) return false;
    } else if (!strcmp(type, "Split")) {
        bool regex;
        const char *pat = pattern_of(j, &regex), *behavior = str_of(j, "behavior");
        if (!pat || !behavior) return err_set(e, "%s: a Split pre_tokenizer has no pattern or behavior", t->path);
        if (flag_of(j, "invert", false)) return unsupported(t, "the Split option", "invert", e);
        if (strcmp(behavior, "Isolated") && strcmp(behavior, "Removed")) return unsupported(t, "the Split behavior", behavior, e);
        p->kind = PRE_SPLIT, p->keep = !strcmp(behavior, "Removed") ? KEEP_GAPS : KEEP_BOTH;
        char quoted[1024];
        if (!regex) {  // a literal string: \Q...\E
            if (strstr(pat, "\\E")) return unsupported(t, "a Split string containing", "\\E", e);
            snprintf(quoted, sizeof quoted, "\\Q%s\\E", pat);
            pat = quoted;
        }
        if (!compile(t, p, pat, e)) return false;
    } else if (!strcmp(type, "Whitespace") || !strcmp(type, "WhitespaceSplit")) {  // words and symbols; or runs of non-space
        p->kind = PRE_SPLIT, p->keep = KEEP_MATCHES;
        if (!compile(t, p, !strcmp(type, "Whitespace") ? "\\w+|[^\\w\\s]+" : "\\S+", e)) return false;
    } else if (!strcmp(type, "Digits")) {
        p->kind = PRE_SPLIT;
        if (!compile(t, p, flag_of(j, "individual_digits", false) ? "\\p{N}" : "\\p{N}+", e)) return false;
    } else if (!strcmp(type, "Metaspace")) {
        const char *rep = str_of(j, "replacement"), *scheme = str_of(j, "prepend_scheme");
        p->kind = PRE_METASPACE, p->replacement = tok_dup(rep ? rep : "\xE2\x96\x81");
        p->prepend = scheme ? (!strcmp(scheme, "always") ? 2 : !strcmp(scheme, "first") ? 1 : 0)
                            : flag_of(j, "add_prefix_space", true) ? 2 : 0;
        p->split = flag_of(j, "split", true);
    } else return unsupported(t, "the pre_tokenizer", *type ? type : "(no type)", e);
    t->n_pre++;
    return true;
}

static bool read_decoder(Tokenizer *t, const cJSON *j, Err *e) {
    if (!j || cJSON_IsNull(j)) return true;
    const char *type = type_of(j);
    if (!strcmp(type, "Sequence")) return read_each(t, j, "decoders", read_decoder, e);
    if (t->n_dec == TOK_MAX_STEPS) return unsupported(t, "a decoder with", "more than 8 steps", e);
    Dec *d = &t->dec[t->n_dec];
    bool regex = false;
    if (!strcmp(type, "ByteLevel")) d->kind = DEC_BYTELEVEL;
    else if (!strcmp(type, "ByteFallback")) d->kind = DEC_BYTEFALLBACK;
    else if (!strcmp(type, "Fuse")) d->kind = DEC_FUSE;
    else if (!strcmp(type, "Replace") && pattern_of(j, &regex) && !regex && str_of(j, "content"))
        d->kind = DEC_REPLACE, d->a = tok_dup(pattern_of(j, &regex)), d->b = tok_dup(str_of(j, "content"));
    else if (!strcmp(type, "Strip") && str_of(j, "content")) {
        const cJSON *start = cJSON_GetObjectItemCaseSensitive(j, "start"), *stop = cJSON_GetObjectItemCaseSensitive(j, "stop");
        d->kind = DEC_STRIP, d->a = tok_dup(str_of(j, "content"));
        d->start = cJSON_IsNumber(start) ? start->valueint : 0, d->stop = cJSON_IsNumber(stop) ? stop->valueint : 0;
    } else if (!strcmp(type, "Metaspace")) {
        const char *rep = str_of(j, "replacement"), *scheme = str_of(j, "prepend_scheme");
        d->kind = DEC_METASPACE, d->a = tok_dup(rep ? rep : "\xE2\x96\x81");
        d->start = scheme ? strcmp(scheme, "never") != 0 : flag_of(j, "add_prefix_space", true);
    } else return unsupported(t, "the decoder", *type ? type : "(no type)", e);
    t->n_dec++;
    return true;
}

// TemplateProcessing's "single": the special tokens' ids before and after the text.
static bool read_post(Tokenizer *t, const cJSON *j, Err *e) {
    if (!j || cJSON_IsNull(j)) return true;
    const char *type = type_of(j);
    if (!strcmp(type, "ByteLevel")) return true;  // offsets only
    if (!strcmp(type, "Sequence")) return read_each(t, j, "processors", read_post, e);
    if (strcmp(type, "TemplateProcessing")) return unsupported(t, "the post_processor", *type ? type : "(no type)", e);
    const cJSON *single = cJSON_GetObjectItemCaseSensitive(j, "single"), *special = cJSON_GetObjectItemCaseSensitive(j, "special_tokens");
    bool after = false;
    for (const cJSON *it = cJSON_IsArray(single) ? single->child : NULL; it; it = it->next) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(it, "SpecialToken");
        if (!sp) {
            after = true;  // the Sequence: the text itself
            continue;
        }
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(special, str_of(sp, "id") ? str_of(sp, "id") : "");
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(def, "ids");
        for (const cJSON *id = cJSON_IsArray(ids) ? ids->child : NULL; id; id = id->next) {
            int *n = after ? &t->n_post_after : &t->n_post_before;
            if (*n == TOK_MAX_STEPS || !cJSON_IsNumber(id)) return unsupported(t, "the post_processor's", "template", e);
            (after ? t->post_after : t->post_before)[(*n)++] = id->valueint;
        }
    }
    return true;
}

static bool read_all(Tokenizer *t, const cJSON *root, Err *e) {
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    if (!read_model(t, cJSON_GetObjectItemCaseSensitive(root, "model"), e)) return false;
    if (cJSON_IsArray(added) && !read_added(t, added, e)) return false;
    if (!read_normalizer(t, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), e) ||
        !read_pre(t, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), e) ||
        !read_decoder(t, cJSON_GetObjectItemCaseSensitive(root, "decoder"), e) ||
        !read_post(t, cJSON_GetObjectItemCaseSensitive(root, "post_processor"), e))
        return false;
    t->size = t->bpe.n_pieces;
    for (int i = 0; i < t->n_added; i++) t->size = t->added[i].id >= t->size ? t->added[i].id + 1 : t->size;
    for (int i = 0; i < TOK_MAX_STEPS; i++) t->byte_level = t->byte_level || (i < t->n_dec && t->dec[i].kind == DEC_BYTELEVEL);
    return true;
}

Tokenizer *tokenizer_parse(const char *json, size_t n, const char *what, Err *e) {
    cJSON *root = cJSON_ParseWithLength(json, n);
    Tokenizer *t = calloc(1, sizeof *t);
    bool ok = t != NULL || err_code(e, ERR_MEMORY, "out of memory");
    if (ok) snprintf(t->path, sizeof t->path, "%s", what);
    if (ok && !cJSON_IsObject(root)) ok = err_set(e, "%s: not a JSON object", what);
    ok = ok && read_all(t, root, e);
    cJSON_Delete(root);
    if (!ok) tokenizer_free(t), t = NULL;
    return t;
}

Tokenizer *tokenizer_load(const char *path, Err *e) {
    char *text;
    size_t n;
    if (!file_read_all(path, "the tokenizer", &text, &n, e)) return NULL;
    Tokenizer *t = tokenizer_parse(text, n, path, e);
    free(text);
    return t;
}

void tokenizer_free(Tokenizer *t) {
    if (!t) return;
    spm_free(t->spm);
    bpe_free(&t->bpe);
    for (int i = 0; i < t->n_added; i++) free(t->added[i].content);
    free(t->added);
    unigram_free(&t->uni);
    for (int i = 0; i < TOK_MAX_STEPS; i++) {  // (a step that failed half-read holds memory too)
#if STEPFORMER_TOKENIZER_ENCODES
        pcre2_code_free(t->norm[i].re);
#endif
        free(t->norm[i].a), free(t->norm[i].b), free(t->norm[i].map);
    }
    for (int i = 0; i < t->n_pre; i++) {
#if STEPFORMER_TOKENIZER_ENCODES
        pcre2_code_free(t->pre[i].re);
#endif
        free(t->pre[i].replacement);
    }
    for (int i = 0; i < t->n_dec; i++) free(t->dec[i].a), free(t->dec[i].b);
    free(t);
}

int tokenizer_size(const Tokenizer *t) { return t->size; }

int tokenizer_id(const Tokenizer *t, const char *piece) {
    for (int i = 0; i < t->n_added; i++)
        if (!strcmp(t->added[i].content, piece)) return t->added[i].id;
    return strmap_get(&t->bpe.vocab, piece, strlen(piece));
}

const char *tokenizer_piece(const Tokenizer *t, int id) {
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].id == id) return t->added[i].content;
    return id >= 0 && id < t->bpe.n_pieces ? t->bpe.pieces[id] : NULL;
}
