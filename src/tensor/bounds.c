// bounds.c: the ceilings of bounds.h, and reading a file within them.
#include "bounds.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/heap.h>
#endif

static const struct {
    const char *env;
    long long fallback;
    const char *bounded;  // for the _MB limits on files: what they bound, in messages
} limits[LIMIT_COUNT] = {
    [LIMIT_FILE_MB] = {"STEPFORMER_MAX_FILE_MB", 4096, "a file"},     [LIMIT_TENSOR_MB] = {"STEPFORMER_MAX_TENSOR_MB", 2048},
    [LIMIT_MODEL_MB] = {"STEPFORMER_MAX_MODEL_MB", 4096},   [LIMIT_TRACE_MB] = {"STEPFORMER_MAX_TRACE_MB", 8192},
    [LIMIT_STAGES] = {"STEPFORMER_MAX_STAGES", 500000},     [LIMIT_ITERATIONS] = {"STEPFORMER_MAX_ITERATIONS", 1000000},
    [LIMIT_TEXT_MB] = {"STEPFORMER_MAX_TEXT_MB", 64, "a text to train on"},
};

long long limit_value(LimitId id) {
    const char *s = getenv(limits[id].env);
    char *end;
    const long long v = s ? strtoll(s, &end, 10) : 0;
    return s && *s && !*end && v > 0 && v < (1LL << 40) ? v : limits[id].fallback;
}

size_t limit_bytes(LimitId id) {  // at most SIZE_MAX: a 32-bit size_t (WebAssembly) holds under 4096 MB
    const unsigned long long b = (unsigned long long)limit_value(id) << 20;
    return b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

const char *limit_env(LimitId id) { return limits[id].env; }

long long trace_budget_default_mb(void) {
#ifdef __EMSCRIPTEN__
    return 1024;  // half the 2 GB the page may grow to (emscripten's maximum): a model beside it
#else
    enum { LEAST_MB = 256 };  // when the machine's memory cannot be read, or is tiny
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    const long long mb = pages > 0 && size > 0 ? (long long)pages / 4 * size >> 20 : 0;
    return mb >= LEAST_MB ? mb : LEAST_MB;  // a quarter of the machine's memory
#endif
}

double memory_free_bytes(void) {
#ifdef __EMSCRIPTEN__
    // The memory's growth left (what it holds already may be in use, so this is the least room)
    const size_t size = emscripten_get_heap_size(), most = emscripten_get_heap_max();
    return most > size ? (double)(most - size) : 1.0;  // (0 would read as "cannot tell")
#else
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024.0;
#endif
}

const char *memory_free_place(void) {
#ifdef __EMSCRIPTEN__
    return "in this page";
#else
    return "on this machine";
#endif
}

bool file_read_all(const char *path, const char *what, char **out, size_t *n, Err *e) {
    return file_read_within(path, what, LIMIT_FILE_MB, out, n, e);
}

FILE *file_open_within(const char *path, const char *what, LimitId limit, size_t *n, Err *e) {
    struct stat sb;
    *n = 0;
    if (stat(path, &sb) != 0) return err_code(e, ERR_IO, "%s: cannot open %s: %s", path, what, strerror(errno)), NULL;
    if (!S_ISREG(sb.st_mode)) return err_set(e, "%s: not a regular file (%s must be one)", path, what), NULL;
    if ((size_t)sb.st_size > limit_bytes(limit))
        return err_code(e, ERR_LIMIT, "%s: %.1f MB, more than the %lld MB %s may have (set %s to raise it)", path,
                        (double)sb.st_size / (1 << 20), limit_value(limit), limits[limit].bounded, limit_env(limit)),
               NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return err_code(e, ERR_IO, "%s: cannot open %s: %s", path, what, strerror(errno)), NULL;
    *n = (size_t)sb.st_size;
    return fp;
}

bool file_read_within(const char *path, const char *what, LimitId limit, char **out, size_t *n, Err *e) {
    size_t size;
    *out = NULL, *n = 0;
    FILE *fp = file_open_within(path, what, limit, &size, e);
    if (!fp) return false;
    char *buf = malloc(size + 2);
    if (!buf) return fclose(fp), err_set(e, "%s: out of memory for %s (%zu bytes)", path, what, size);
    const size_t got = fread(buf, 1, size + 1, fp);  // one more: a file that grew while read
    const bool failed = ferror(fp);
    fclose(fp);
    if (failed || got != size) {
        free(buf);
        return err_code(e, ERR_IO, "%s: %s %s", path, what, failed ? "could not be read" : "changed while it was read");
    }
    buf[size] = '\0';
    *out = buf, *n = size;
    return true;
}
