// files.h: reading a whole file, for the tests that compare what a program wrote.
#ifndef STEPFORMER_TEST_FILES_H
#define STEPFORMER_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>

// The file's bytes with a '\0' after them (malloc'd; the caller frees), or NULL.
static inline char *file_read(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

#endif
