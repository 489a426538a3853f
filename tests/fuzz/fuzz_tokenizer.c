// fuzz_tokenizer.c: a tokenizer.json and a text run through it. The input is two parts split on a
// NUL byte: the file's text, then a text to encode. Every id that comes back is in range, and
// decoding and labelling them stay within their buffers.
#include <assert.h>

#include "fuzz.h"
#include "tokenizer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    char *s = malloc(n + 2);  // two NULs at the end: both parts exist
    if (!s) abort();
    memcpy(s, data, n);
    s[n] = s[n + 1] = '\0';
    const char *json = s, *text = json + strlen(json) + 1;
    Err e = {{0}};
    Tokenizer *t = tokenizer_parse(json, strlen(json), "fuzz.json", &e);
    if (!t) assert(e.msg[0]);
    for (int special = 0; t && special < 2; special++) {
        int *ids, k;
        if (!tokenizer_encode(t, text, special, &ids, &k, &e)) {
            assert(e.msg[0]);
            continue;
        }
        for (int i = 0; i < k; i++) {
            assert(ids[i] >= 0 && ids[i] < tokenizer_size(t));
            char label[64];
            tokenizer_label(t, ids[i], label, sizeof label);
            assert(strlen(label) < sizeof label);
        }
        free(tokenizer_decode(t, ids, k));
        free(ids);
    }
    tokenizer_free(t);
    free(s);
    return 0;
}
