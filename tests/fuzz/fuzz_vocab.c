// fuzz_vocab.c: a vocabulary and the text run through it. The input is three parts split on
// NUL bytes: a JSON array of tokens, a text to encode, a list of ids. The ids that come back
// are decoded; the vocabulary written out as JSON must read back the same.
#include <assert.h>

#include "fuzz.h"
#include "vocab.h"

enum { MAX_IDS = 64 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    return 0;
}

static void decode(const Vocab *v, const float *ids, int n) {
    char buf[256];
    for (int i = 0; i < n; i++) assert(ids[i] >= 0 && ids[i] < (float)v->n);
    vocab_decode(v, ids, n, buf, sizeof buf);
    assert(strlen(buf) < sizeof buf);
    vocab_decode(v, ids, n, buf, 1);
    assert(buf[0] == '\0');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    char *s = malloc(n + 3);  // three NULs at the end: every part exists
    if (!s) abort();
    memcpy(s, data, n);
    s[n] = s[n + 1] = s[n + 2] = '\0';
    const char *json = s, *text = json + strlen(json) + 1, *list = text + strlen(text) + 1;
    Vocab v;
    Err e = {{0}};
    if (vocab_from_json(&v, json, "fuzz.json", &e)) {
        float ids[MAX_IDS];
        int k = 0;
        if (vocab_encode(&v, text, "source", ids, MAX_IDS, &k, &e)) decode(&v, ids, k);
        else assert(e.msg[0] && k <= MAX_IDS);
        if (vocab_parse_ids(&v, list, "target", ids, MAX_IDS, &k, &e)) decode(&v, ids, k);
        else assert(e.msg[0] && k <= MAX_IDS);
        char *back = vocab_to_json(&v);
        assert(back);
        Vocab w;
        const bool again = vocab_from_json(&w, back, "fuzz.json again", &e);
        assert(again && w.n == v.n && w.by_char == v.by_char);
        for (int i = 0; i < v.n; i++) assert(!strcmp(w.tokens[i], v.tokens[i]));
        vocab_free(&w);
        free(back);
        vocab_free(&v);
    }
    free(s);
    return 0;
}
