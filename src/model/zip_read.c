// zip_read.c: a zip archive's stored entries (zip_read.h).
#include "zip_read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ZIP_MAX_ENTRIES = 1 << 20 };

static uint64_t le(const unsigned char *p, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

// The end-of-central-directory record: the last signature within the final 64 KB + 22 bytes.
static bool find_end(const unsigned char *b, size_t n, size_t *at) {
    if (n < 22) return false;
    const size_t lowest = n > 22 + 65535 ? n - 22 - 65535 : 0;
    for (size_t i = n - 22;; i--) {
        if (le(b + i, 4) == 0x06054b50u) return *at = i, true;
        if (i == lowest) return false;
    }
}

// ZIP64's extra field (id 1): the sizes and offset the 32-bit fields left at 0xFFFFFFFF, in order.
static bool zip64_extra(const unsigned char *x, size_t len, uint64_t *usize, uint64_t *csize, uint64_t *offset) {
    for (size_t i = 0; i + 4 <= len;) {
        const size_t id = (size_t)le(x + i, 2), sz = (size_t)le(x + i + 2, 2);
        if (i + 4 + sz > len) return false;
        if (id == 1) {
            size_t k = i + 4;
            uint64_t *want[3] = {usize, csize, offset};
            for (int w = 0; w < 3; w++)
                if (*want[w] == 0xFFFFFFFFu) {
                    if (k + 8 > i + 4 + sz) return false;
                    *want[w] = le(x + k, 8), k += 8;
                }
            return true;
        }
        i += 4 + sz;
    }
    return *usize != 0xFFFFFFFFu && *csize != 0xFFFFFFFFu && *offset != 0xFFFFFFFFu;
}

// Where the central directory starts and how many entries it has (ZIP64 where the record says so).
static bool directory(const unsigned char *b, size_t n, size_t end, uint64_t *count, uint64_t *start) {
    *count = le(b + end + 10, 2), *start = le(b + end + 16, 4);
    if (*count != 0xFFFF && *start != 0xFFFFFFFFu) return true;
    if (end < 20 || le(b + end - 20, 4) != 0x07064b50u) return false;  // the ZIP64 locator
    const uint64_t rec = le(b + end - 20 + 8, 8);
    if (rec > n || n - rec < 56 || le(b + rec, 4) != 0x06064b50u) return false;
    *count = le(b + rec + 32, 8), *start = le(b + rec + 48, 8);
    return true;
}

static bool one_entry(Zip *z, const unsigned char *b, size_t n, size_t *at, const char *what, Err *e) {
    const size_t p = *at;
    if (p > n || n - p < 46 || le(b + p, 4) != 0x02014b50u)
        return err_set(e, "%s: the zip's central directory is cut short or broken at byte %zu", what, p);
    const unsigned method = (unsigned)le(b + p + 10, 2);
    uint64_t csize = le(b + p + 20, 4), usize = le(b + p + 24, 4), local = le(b + p + 42, 4);
    const size_t name_len = (size_t)le(b + p + 28, 2), extra_len = (size_t)le(b + p + 30, 2),
                 comment_len = (size_t)le(b + p + 32, 2);
    if (n - p - 46 < name_len + extra_len + comment_len)
        return err_set(e, "%s: the zip's central directory is cut short at byte %zu", what, p);
    if (!zip64_extra(b + p + 46 + name_len, extra_len, &usize, &csize, &local))
        return err_set(e, "%s: a zip entry's ZIP64 sizes are missing or cut short", what);
    char *name = malloc(name_len + 1);
    if (!name) return err_code(e, ERR_MEMORY, "out of memory");
    memcpy(name, b + p + 46, name_len), name[name_len] = '\0';
    *at = p + 46 + name_len + extra_len + comment_len;
    if (method != 0 || csize != usize) {
        err_set(e, "%s: the zip entry '%s' is compressed (method %u): torch.save stores its entries, so this file "
                "was written some other way", what, name, method);
        return free(name), false;
    }
    if (local > n || n - local < 30 || le(b + local, 4) != 0x04034b50u) {
        err_set(e, "%s: the zip entry '%s' points to no local header", what, name);
        return free(name), false;
    }
    const uint64_t data = local + 30 + le(b + local + 26, 2) + le(b + local + 28, 2);
    if (data > n || n - data < usize) {
        err_set(e, "%s: the zip entry '%s' runs past the end of the file (%llu bytes at %llu; the file has %zu)", what,
                name, (unsigned long long)usize, (unsigned long long)data, n);
        return free(name), false;
    }
    z->entries[z->n++] = (ZipEntry){name, b + data, (size_t)usize};
    return true;
}

bool zip_read(Zip *z, const unsigned char *b, size_t n, const char *what, Err *e) {
    *z = (Zip){0};
    size_t end;
    uint64_t count, start;
    if (!find_end(b, n, &end) || !directory(b, n, end, &count, &start))
        return err_set(e, "%s: not a zip archive (no end-of-directory record): PyTorch's .bin, .pt and .pth files are zip "
                       "archives since PyTorch 1.6", what);
    if (count > ZIP_MAX_ENTRIES || start > n)
        return err_set(e, "%s: the zip's directory claims %llu entries at byte %llu of %zu", what,
                       (unsigned long long)count, (unsigned long long)start, n);
    z->entries = calloc((size_t)count + 1, sizeof *z->entries);
    if (!z->entries) return err_code(e, ERR_MEMORY, "out of memory");
    size_t at = (size_t)start;
    for (uint64_t i = 0; i < count; i++)
        if (!one_entry(z, b, n, &at, what, e)) return zip_free(z), false;
    return true;
}

const ZipEntry *zip_find_suffix(const Zip *z, const char *suffix) {
    const size_t k = strlen(suffix);
    for (int i = 0; i < z->n; i++) {
        const size_t len = strlen(z->entries[i].name);
        if (len > k && z->entries[i].name[len - k - 1] == '/' && !strcmp(z->entries[i].name + len - k, suffix))
            return &z->entries[i];
    }
    return NULL;
}

void zip_free(Zip *z) {
    for (int i = 0; i < z->n; i++) free(z->entries[i].name);
    free(z->entries);
    *z = (Zip){0};
}
