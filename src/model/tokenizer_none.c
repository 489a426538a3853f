// tokenizer_none.c: the browser page's build has no tokenizer.json reader: the page opens no
// model folder (a folder read from the user's disk into the page is the issue on full size),
// and PCRE2's and utf8proc's tables would take the first load past its 4 MB. Every entry point
// says so; none is reached by the page's own lessons, whose vocabularies are their files'.
#include "tokenizer.h"

#include <stdio.h>

Tokenizer *tokenizer_load(const char *path, Err *e) {
    err_set(e, "%s: the browser page reads no tokenizer.json yet; open the folder with the desktop program", path);
    return NULL;
}

Tokenizer *tokenizer_parse(const char *json, size_t n, const char *what, Err *e) {
    (void)json, (void)n;
    return tokenizer_load(what, e);
}

void tokenizer_free(Tokenizer *t) { (void)t; }
int tokenizer_size(const Tokenizer *t) { return (void)t, 0; }
const char *tokenizer_piece(const Tokenizer *t, int id) { return (void)t, (void)id, NULL; }

bool tokenizer_encode(const Tokenizer *t, const char *text, bool special, int **ids, int *n, Err *e) {
    (void)t, (void)text, (void)special, *ids = NULL, *n = 0;
    return err_set(e, "the browser page has no tokenizer");
}

char *tokenizer_decode(const Tokenizer *t, const int *ids, int n) { return (void)t, (void)ids, (void)n, NULL; }
void tokenizer_label(const Tokenizer *t, int id, char *buf, size_t n) {
    (void)t;
    if (n) snprintf(buf, n, "%d", id);
}
