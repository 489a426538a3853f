// st_reads.c: reads of safetensors entries left for later (safetensors.h: StReads): listed
// while a model is placed, done where the bytes are, then widened.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "bounds.h"
#include "safetensors.h"

static int path_index(StReads *r, const char *path) {
    for (int i = 0; i < r->n_paths; i++)
        if (!strcmp(r->paths[i], path)) return i;
    char **paths = realloc(r->paths, sizeof *paths * (size_t)(r->n_paths + 1));
    if (!paths) return -1;
    r->paths = paths;
    const size_t n = strlen(path) + 1;
    if (!(r->paths[r->n_paths] = malloc(n))) return -1;
    memcpy(r->paths[r->n_paths], path, n);
    return r->n_paths++;
}

bool st_reads_add(StReads *r, const StFile *f, const StEntry *en, unsigned char *to, float *widen, Err *e) {
    const char *path = en->source >= 0 && en->source < f->n_sources ? f->sources[en->source] : NULL;
    if (!path) return err_code(e, ERR_IO, "tensor '%s': no file to read it from", en->name);
    if (r->n == r->cap) {
        const int cap = r->cap ? 2 * r->cap : 64;
        StRead *reads = realloc(r->reads, sizeof *reads * (size_t)cap);
        if (!reads) return err_code(e, ERR_MEMORY, "out of memory");
        r->reads = reads, r->cap = cap;
    }
    const int source = path_index(r, path);
    if (source < 0) return err_code(e, ERR_MEMORY, "out of memory");
    r->reads[r->n++] = (StRead){.source = source, .begin = en->begin, .end = en->end, .file_bytes = en->file_bytes,
                                .to = to, .widen = widen, .dtype = en->dtype};
    return true;
}

void st_widen_in_place(float *to, size_t n, int dt) {
    const unsigned char *raw = (const unsigned char *)to + 2 * n;
    for (size_t i = 0; i < n; i++) {
        const uint16_t h = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
        to[i] = dt == ST_F16 ? f16_to_f32(h) : bf16_to_f32(h);
    }
}

uint64_t st_reads_bytes(const StReads *r) {
    uint64_t n = 0;
    for (int i = 0; i < r->n; i++) n += r->reads[i].end - r->reads[i].begin;
    return n;
}

bool st_reads_local(const StReads *r, Err *e) {
    for (int p = 0; p < r->n_paths; p++) {
        size_t bytes;
        FILE *fp = file_open_within(r->paths[p], "the weights file", LIMIT_FILE_MB, &bytes, e);
        if (!fp) return false;
        for (int i = 0; i < r->n; i++) {
            const StRead *d = &r->reads[i];
            if (d->source != p) continue;
            const size_t n = (size_t)(d->end - d->begin);
            if (bytes != d->file_bytes) {
                fclose(fp);
                return err_code(e, ERR_IO, "%s: the file changed while it was read (%llu bytes when its header was read, "
                                "%zu now)", r->paths[p], (unsigned long long)d->file_bytes, bytes);
            }
            if (fseeko(fp, (off_t)d->begin, SEEK_SET) != 0 || fread(d->to, 1, n, fp) != n)
                return fclose(fp), err_code(e, ERR_IO, "%s: bytes %llu to %llu could not be read", r->paths[p],
                                            (unsigned long long)d->begin, (unsigned long long)d->end);
        }
        fclose(fp);
    }
    return true;
}

void st_reads_finish(const StReads *r) {
    for (int i = 0; i < r->n; i++) {
        const StRead *d = &r->reads[i];
        if (!d->widen) continue;
        st_widen_in_place(d->widen, (size_t)(d->end - d->begin) / 2, d->dtype);
    }
}

void st_reads_free(StReads *r) {
    for (int i = 0; i < r->n_paths; i++) free(r->paths[i]);
    free(r->paths), free(r->reads);
    memset(r, 0, sizeof *r);
}
