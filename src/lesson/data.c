// data.c: finding stepformer's own files (see data.h).
#define _XOPEN_SOURCE 700  // readlink
#include "data.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef STEPFORMER_SOURCE_DIR
#define STEPFORMER_SOURCE_DIR ""
#endif

static bool has_lessons(const char *dir) {
    char p[4096];
    struct stat sb;
    snprintf(p, sizeof p, "%s/lessons", dir);
    return dir[0] && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

bool data_self_path(char *buf, unsigned long n) {
    const ssize_t k = n > 1 ? readlink("/proc/self/exe", buf, n - 1) : -1;
    if (k <= 0) return false;
    buf[k] = '\0';
    return true;
}

// PREFIX/share/stepformer for the binary at PREFIX/bin/stepformer.
static bool beside_binary(char *out, size_t n) {
    char exe[4096];
    if (!data_self_path(exe, sizeof exe)) return false;
    for (int up = 0; up < 2; up++) {  // the binary's folder, then the one above it
        char *slash = strrchr(exe, '/');
        if (!slash) return false;
        *slash = '\0';
    }
    snprintf(out, n, "%s/share/stepformer", exe);
    return has_lessons(out);
}

const char *data_dir(void) {
    static char dir[4096];  // found once; the answer cannot change while the program runs
    static bool found;
    if (found) return dir;
    const char *env = getenv("STEPFORMER_DATA");
    if (env && has_lessons(env)) snprintf(dir, sizeof dir, "%s", env);
    else if (!beside_binary(dir, sizeof dir))
        snprintf(dir, sizeof dir, "%s", has_lessons(STEPFORMER_SOURCE_DIR) ? STEPFORMER_SOURCE_DIR : "");
    found = true;
    return dir;
}

const char *data_path(const char *rel, char *buf, unsigned long n) {
    snprintf(buf, n, "%s/%s", data_dir(), rel);
    return buf;
}
