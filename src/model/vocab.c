#include "vocab.h"
#include "tokenizer.h"

#include <cjson/cJSON.h>
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_special(const char *t) {
    size_t n = strlen(t);
    return n > 2 && t[0] == '<' && t[n - 1] == '>';
}

// Bytes in the UTF-8 sequence that starts with byte c (1 for anything malformed).
static int utf8_len(unsigned char c) {
    if (c >= 0xF0 && c < 0xF8) return 4;
    if (c >= 0xE0) return c < 0xF0 ? 3 : 1;
    if (c >= 0xC0) return 2;
    return 1;
}

static bool single_char(const char *t) {
    size_t n = strlen(t);
    return n > 0 && (size_t)utf8_len((unsigned char)t[0]) == n;
}

static void decide_mode(Vocab *v) {
    bool any = false, all_chars = true;
    for (int i = 0; i < v->n; i++) {
        if (is_special(v->tokens[i])) continue;
        any = true;
        if (!single_char(v->tokens[i])) all_chars = false;
    }
    v->by_char = any && all_chars;
}

bool vocab_from_json(Vocab *v, const char *json, const char *what, Err *e) {
    memset(v, 0, sizeof *v);
    cJSON *arr = cJSON_Parse(json);
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(arr);
        return err_set(e, "%s: not a JSON array of token strings", what);
    }
    int n = cJSON_GetArraySize(arr);
    v->tokens = calloc((size_t)n + 1, sizeof *v->tokens);
    bool ok = v->tokens || err_code(e, ERR_MEMORY, "%s: out of memory for %d tokens", what, n);
    for (const cJSON *it = ok ? arr->child : NULL; ok && it; it = it->next) {
        if (!cJSON_IsString(it)) {
            ok = err_set(e, "%s: token %d is not a string", what, v->n);
            break;
        }
        size_t len = strlen(it->valuestring) + 1;
        v->tokens[v->n] = malloc(len);
        if (!v->tokens[v->n]) {  // all or nothing: never a vocabulary cut short
            ok = err_code(e, ERR_MEMORY, "%s: out of memory at token %d", what, v->n);
            break;
        }
        memcpy(v->tokens[v->n++], it->valuestring, len);
    }
    cJSON_Delete(arr);
    if (!ok) {
        vocab_free(v);
        return false;
    }
    decide_mode(v);
    return true;
}

const char *const vocab_special_names[VOCAB_SPECIALS] = {
    [VOCAB_UNK] = "<unk>", [VOCAB_PAD] = "<pad>", [VOCAB_BOS] = "<bos>", [VOCAB_EOS] = "<eos>"};

void vocab_special_ids(char *buf, size_t n) {
    snprintf(buf, n, "unk_id=%d pad_id=%d bos_id=%d eos_id=%d", VOCAB_UNK, VOCAB_PAD, VOCAB_BOS, VOCAB_EOS);
}

bool vocab_from_strings(Vocab *v, const char *const *strings, int n, Err *e) {
    memset(v, 0, sizeof *v);
    const int total = VOCAB_SPECIALS + n;
    v->tokens = calloc((size_t)total, sizeof *v->tokens);
    if (!v->tokens) return err_code(e, ERR_MEMORY, "out of memory for a vocabulary of %d tokens", total);
    for (v->n = 0; v->n < total; v->n++) {
        const char *t = v->n < VOCAB_SPECIALS ? vocab_special_names[v->n] : strings[v->n - VOCAB_SPECIALS];
        v->tokens[v->n] = malloc(strlen(t) + 1);
        if (!v->tokens[v->n]) return vocab_free(v), err_code(e, ERR_MEMORY, "out of memory");
        strcpy(v->tokens[v->n], t);
    }
    decide_mode(v);
    return true;
}

bool vocab_from_chars(Vocab *v, const char *chars, Err *e) {
    const int n = (int)strlen(chars);
    char(*one)[2] = malloc(sizeof *one * (size_t)(n + 1));
    const char **strings = malloc(sizeof *strings * (size_t)(n + 1));
    bool ok = (one && strings) || err_code(e, ERR_MEMORY, "out of memory for a vocabulary of %d tokens", n);
    for (int i = 0; ok && i < n; i++) one[i][0] = chars[i], one[i][1] = '\0', strings[i] = one[i];
    ok = ok && vocab_from_strings(v, strings, n, e);
    free(one), free(strings);
    return ok;
}

static_assert(VOCAB_CHARS_SIZE == VOCAB_SPECIALS + ('~' - ' ' + 1), "the specials and printable ASCII");

bool vocab_chars(Vocab *v, Err *e) {
    char printable['~' - ' ' + 2];
    for (int c = ' '; c <= '~'; c++) printable[c - ' '] = (char)c;
    printable['~' - ' ' + 1] = '\0';
    return vocab_from_chars(v, printable, e);
}

bool vocab_numbered(Vocab *v, int n, Err *e) {
    memset(v, 0, sizeof *v);
    v->tokens = calloc((size_t)n + 1, sizeof *v->tokens);
    if (!v->tokens) return err_code(e, ERR_MEMORY, "out of memory for a vocabulary of %d tokens", n);
    for (v->n = 0; v->n < n; v->n++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%d", v->n);
        v->tokens[v->n] = malloc(strlen(buf) + 1);
        if (!v->tokens[v->n]) return vocab_free(v), err_code(e, ERR_MEMORY, "out of memory");
        strcpy(v->tokens[v->n], buf);
    }
    v->by_char = false;
    return true;
}

void vocab_free(Vocab *v) {
    for (int i = 0; i < v->n; i++) free(v->tokens[i]);
    free(v->tokens);
    memset(v, 0, sizeof *v);
}

char *vocab_to_json(const Vocab *v) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < v->n; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(v->tokens[i]));
    char *s = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    return s;
}

int vocab_find(const Vocab *v, const char *s, size_t len) {
    for (int i = 0; i < v->n; i++)
        if (strlen(v->tokens[i]) == len && memcmp(v->tokens[i], s, len) == 0) return i;
    return -1;
}

const char *vocab_token(const Vocab *v, int id) {
    return id >= 0 && id < v->n ? v->tokens[id] : "?";
}

static bool encode_tokenized(const Vocab *v, const char *text, const char *side, float *ids, int max, int *n, Err *e) {
    int *got, count;
    if (!*text) return err_set(e, "the %s text is empty: give at least one character", side);
    if (!tokenizer_encode(v->tok, text, true, &got, &count, e)) return false;
    bool ok = true;
    if (count > max)
        ok = err_set(e, "the %s text is %d tokens, more than the %d positions this model has", side, count, max);
    for (int i = 0; ok && i < count; i++)
        if (got[i] >= v->n) ok = err_set(e, "the tokenizer gives id %d, but the model has ids 0..%d", got[i], v->n - 1);
    for (int i = 0; ok && i < count; i++) ids[i] = (float)got[i];
    *n = ok ? count : 0;
    free(got);
    return ok;
}

bool vocab_encode(const Vocab *v, const char *text, const char *side, float *ids, int max,
                  int *n, Err *e) {
    *n = 0;
    if (v->tok) return encode_tokenized(v, text, side, ids, max, n, e);
    if (v->no_text) return err_set(e, "%s", v->no_text);
    const char *p = text;
    int pos = 0;
    while (*p) {
        size_t len;
        if (v->by_char) {
            len = (size_t)utf8_len((unsigned char)*p);
            if (strnlen(p, len) < len) len = strnlen(p, len);
        } else {
            while (isspace((unsigned char)*p)) p++;
            if (!*p) break;
            len = 0;
            while (p[len] && !isspace((unsigned char)p[len])) len++;
        }
        pos++;
        int id = vocab_find(v, p, len);
        if (id < 0)
            return err_set(e, "unknown %s token '%.*s' (%s %d of the input); the %s vocabulary "
                           "has %d tokens", side, (int)len, p, v->by_char ? "character" : "word",
                           pos, side, v->n);
        if (*n == max)
            return err_set(e, "the %s input has more than %d tokens, the most this model's "
                           "positional table allows", side, max);
        ids[(*n)++] = (float)id;
        p += len;
    }
    if (*n == 0) return err_set(e, "the %s input is empty: give at least one token", side);
    return true;
}

bool vocab_parse_ids(const Vocab *v, const char *list, const char *side, float *ids, int max,
                     int *n, Err *e) {
    *n = 0;
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p || (*end && *end != ',' && *end != ' '))
            return err_set(e, "%s ids '%s': '%.*s' is not a whole number", side, list,
                           (int)strcspn(p, ", "), p);
        if (id < 0 || id >= v->n)
            return err_set(e, "%s id %ld is out of range: the %s vocabulary has ids 0..%d", side,
                           id, side, v->n - 1);
        if (*n == max)
            return err_set(e, "the %s input has more than %d tokens, the most this model's "
                           "positional table allows", side, max);
        ids[(*n)++] = (float)id;
        p = end;
    }
    if (*n == 0) return err_set(e, "the %s ids are empty: give at least one id", side);
    return true;
}

void vocab_decode(const Vocab *v, const float *ids, int n, char *buf, size_t cap) {
    size_t used = 0;
    if (cap) buf[0] = '\0';
    int *as_int = v->tok ? malloc(sizeof(int) * (size_t)(n > 0 ? n : 1)) : NULL;
    if (as_int) {
        for (int i = 0; i < n; i++) as_int[i] = (int)ids[i];
        char *text = tokenizer_decode(v->tok, as_int, n);
        if (text && cap) snprintf(buf, cap, "%s", text);
        free(text), free(as_int);
        return;
    }
    for (int i = 0; i < n && used + 1 < cap; i++) {
        const char *sep = (!v->by_char && i > 0) ? " " : "";
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", sep, vocab_token(v, (int)ids[i]));
    }
}
