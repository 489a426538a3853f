// cli_run.h: running the stepformer program as a user runs it, for the tests of its commands
// (STEPFORMER_BIN names the binary). The test makes `dir` with mkdtemp and removes it; each
// run() leaves the program's stdout in `out` and its stderr in `err`.
#ifndef STEPFORMER_TEST_CLI_RUN_H
#define STEPFORMER_TEST_CLI_RUN_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "safetensors.h"

static char dir[] = "/tmp/stepformer-cli-XXXXXX";
static char out[1 << 20], err[1 << 14];
static char extra_env[400];  // NAME=VALUE pairs for the next run, if any

static void slurp(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "rb");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = '\0';
    if (f) fclose(f);
}

// Runs `stepformer ARGS` (args already shell-quoted) and returns its exit code.
static int run(const char *fmt, ...) {
    char args[4096], cmd[5000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    // No display, whatever the machine running the tests has: the window must say so.
    snprintf(cmd, sizeof cmd, "env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER %s '%s' %s >'%s/out' 2>'%s/err'",
             extra_env, STEPFORMER_BIN, args, dir, dir);
    int status = system(cmd);
    char p[300];
    snprintf(p, sizeof p, "%s/out", dir), slurp(p, out, sizeof out);
    snprintf(p, sizeof p, "%s/err", dir), slurp(p, err, sizeof err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The ids of a [n] tensor as a command line takes them: "5,6,7".
static inline void ids_csv(const StEntry *en, char *buf, size_t n) {
    size_t k = 0;
    for (int i = 0; i < en->shape.dim[0]; i++) k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "", (int)en->data[i]);
}

// The largest difference between a dump's logits and a case's, over the largest |logit| (or 1
// when that is smaller): what the hub contract bounds by 1e-4. -1 when the dump is unreadable or
// its logits are shaped otherwise.
static inline double dump_logits_error(const char *dump, const StFile *c) {
    StFile d;
    Err e = {{0}};
    if (!st_load(&d, dump, &e)) return -1;
    const StEntry *got = st_find(&d, "logits"), *want = st_find(c, "logits");
    double err_max = -1;
    if (got && want && shape_eq(&got->shape, &want->shape)) {
        double big = 1.0, diff = 0.0;
        for (long i = 0; i < shape_numel(&want->shape); i++) {
            big = fmax(big, fabs(want->data[i]));
            diff = fmax(diff, fabs((double)got->data[i] - want->data[i]));
        }
        err_max = diff / big;
    }
    st_free(&d);
    return err_max;
}

#define EXPECT(code, want_code, stream, text)                                                 \
    CHECK((code) == (want_code) && strstr((stream), (text)), "exit %d (want %d), expected '%s' in: %s", \
          (code), (want_code), (text), (stream))

// A copy of `lesson` (in dir, as variant.md) with every line that starts with `start` (after
// its spaces) replaced by `line`, indented as it was: a program with one line changed.
static inline const char *lesson_variant(const char *lesson, const char *start, const char *line) {
    static char path[400];
    char buf[4096];
    snprintf(path, sizeof path, "%s/variant.md", dir);
    FILE *f = fopen(lesson, "rb"), *o = fopen(path, "wb");
    int replaced = 0;
    while (f && o && fgets(buf, sizeof buf, f)) {
        const char *s = buf + strspn(buf, " ");
        if (!strncmp(s, start, strlen(start))) fprintf(o, "%.*s%s\n", (int)(s - buf), buf, line), replaced++;
        else fputs(buf, o);
    }
    if (f) fclose(f);
    if (o) fclose(o);
    CHECK(replaced >= 1, "%s has a line starting '%s'", lesson, start);
    return path;
}

#endif
