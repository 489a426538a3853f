#include "safetensors.h"
#include "bounds.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One tensor's header entry while it is being checked.
typedef enum { DT_F32, DT_F16, DT_BF16 } Dtype;
static const char *const dtype_names[] = {"F32", "F16", "BF16"};
static const int dtype_bytes[] = {4, 2, 2};

typedef struct {
    const char *name;
    Shape shape;
    uint64_t begin, end;
    Dtype dtype;
} Pending;

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}


// An exact non-negative integer below 2^53 from a JSON number.
static bool json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return false;
    double d = j->valuedouble;
    if (!(d >= 0 && d < 9007199254740992.0) || floor(d) != d) return false;
    *out = (uint64_t)d;
    return true;
}

static bool parse_entry(Pending *p, const cJSON *item, const char *what, Err *e) {
    p->name = item->string;
    if (!cJSON_IsObject(item))
        return err_set(e, "%s: tensor '%s': header entry is not a JSON object", what, p->name);
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dtype))
        return err_set(e, "%s: tensor '%s': missing \"dtype\"", what, p->name);
    int dt = 0;
    while (dt < 3 && strcmp(dtype->valuestring, dtype_names[dt]) != 0) dt++;
    if (dt == 3)
        return err_set(e, "%s: tensor '%s' has dtype %s; stepformer reads F32, F16 and BF16 tensors", what,
                       p->name, dtype->valuestring);
    p->dtype = (Dtype)dt;
    if (!cJSON_IsArray(shape))
        return err_set(e, "%s: tensor '%s': \"shape\" is not an array", what, p->name);
    int nd = cJSON_GetArraySize(shape);
    if (nd > SHAPE_MAX_DIMS)
        return err_set(e, "%s: tensor '%s' has %d dimensions; at most %d are supported", what,
                       p->name, nd, SHAPE_MAX_DIMS);
    p->shape.ndim = nd;
    uint64_t numel = 1;
    for (int i = 0; i < nd; i++) {
        uint64_t d;
        if (!json_uint(cJSON_GetArrayItem(shape, i), &d) || d > (1u << 30))
            return err_set(e, "%s: tensor '%s': shape entry %d is not a valid size", what,
                           p->name, i);
        p->shape.dim[i] = (int)d;
        numel *= d;
        if (numel > ((uint64_t)1 << 40))
            return err_set(e, "%s: tensor '%s': shape is too large", what, p->name);
    }
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        !json_uint(cJSON_GetArrayItem(offs, 0), &p->begin) ||
        !json_uint(cJSON_GetArrayItem(offs, 1), &p->end))
        return err_set(e, "%s: tensor '%s': \"data_offsets\" must be two non-negative integers",
                       what, p->name);
    if (p->end < p->begin)
        return err_set(e, "%s: tensor '%s': data_offsets [%llu, %llu] end before they begin",
                       what, p->name, (unsigned long long)p->begin, (unsigned long long)p->end);
    const int size = dtype_bytes[p->dtype];
    if (p->end - p->begin != numel * (uint64_t)size)
        return err_set(e,
                       "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes but shape "
                       "needs %llu (%d bytes per %s)",
                       what, p->name, (unsigned long long)p->begin, (unsigned long long)p->end,
                       (unsigned long long)(p->end - p->begin), (unsigned long long)(numel * (uint64_t)size), size,
                       dtype_names[p->dtype]);
    return true;
}

static bool parse_meta(StFile *f, const cJSON *meta, const char *what, Err *e) {
    if (!cJSON_IsObject(meta)) return err_set(e, "%s: \"__metadata__\" is not an object", what);
    int n = cJSON_GetArraySize(meta);
    f->meta = calloc((size_t)n + 1, sizeof *f->meta);
    if (!f->meta) return err_set(e, "%s: out of memory", what);
    for (const cJSON *m = meta->child; m; m = m->next) {
        if (!cJSON_IsString(m))
            return err_set(e, "%s: metadata '%s' is not a string (safetensors metadata values are "
                           "strings)", what, m->string);
        f->meta[f->n_meta].name = dup_str(m->string);
        f->meta[f->n_meta].value = dup_str(m->valuestring);
        f->n_meta++;
    }
    return true;
}

static int cmp_name(const void *a, const void *b) {
    return strcmp(((const Pending *)a)->name, ((const Pending *)b)->name);
}

// No tensor name twice (cJSON keeps both): sorted by name, twins are neighbours.
static bool check_names(Pending *p, int n, const char *what, Err *e) {
    qsort(p, (size_t)n, sizeof *p, cmp_name);
    for (int i = 1; i < n; i++)
        if (!strcmp(p[i - 1].name, p[i].name)) return err_set(e, "%s: the header names '%s' twice", what, p[i].name);
    return true;
}

static int cmp_begin(const void *a, const void *b) {
    const Pending *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

// Checks the sorted entries against the data section and each other.
static bool check_layout(Pending *p, int n, uint64_t data_len, const char *what, Err *e) {
    qsort(p, (size_t)n, sizeof *p, cmp_begin);
    int reach = -1;  // the entry with the furthest end so far (an empty one overlaps nothing)
    for (int i = 0; i < n; i++) {
        if (p[i].end > data_len)
            return err_set(e,
                           "%s: tensor '%s': data_offsets [%llu, %llu] run past the end of the "
                           "data section (%llu bytes)",
                           what, p[i].name, (unsigned long long)p[i].begin,
                           (unsigned long long)p[i].end, (unsigned long long)data_len);
        if (p[i].end == p[i].begin) continue;
        if (reach >= 0 && p[i].begin < p[reach].end)
            return err_set(e, "%s: tensors '%s' [%llu, %llu] and '%s' [%llu, %llu] overlap", what,
                           p[reach].name, (unsigned long long)p[reach].begin,
                           (unsigned long long)p[reach].end, p[i].name,
                           (unsigned long long)p[i].begin, (unsigned long long)p[i].end);
        if (reach < 0 || p[i].end > p[reach].end) reach = i;
    }
    return true;
}

// Where the tensors' bytes come from: the whole file in memory (st_parse), or the open file,
// each tensor read straight into its place (st_load: no copy of the whole file first).
typedef struct {
    const unsigned char *mem;  // the data section, or NULL
    FILE *fp;                  // else the file, whose data section starts `base` bytes in
    uint64_t base;
    bool deferred;             // st_open: nothing read, each entry says where its bytes are
    uint64_t file_bytes;       // the file's size then
} Source;

// Bytes [begin, end) of the file (from its start) into `to`, widened to floats.
static bool read_range(float *to, FILE *fp, uint64_t begin, uint64_t end, Dtype dt, const char *what, const char *name,
                       Err *e) {
    const size_t bytes = (size_t)(end - begin), n = bytes / (size_t)dtype_bytes[dt];
    unsigned char *at = (unsigned char *)to + (dt == DT_F32 ? 0 : 2 * n);
    if (fseeko(fp, (off_t)begin, SEEK_SET) != 0 || fread(at, 1, bytes, fp) != bytes)
        return err_code(e, ERR_IO, "%s: tensor '%s' could not be read (the file changed while it was read?)", what, name);
    if (dt != DT_F32) st_widen_in_place(to, n, dt);
    return true;
}

static bool read_tensor(float *to, const Source *src, const Pending *p, const char *what, Err *e) {
    if (src->fp) return read_range(to, src->fp, src->base + p->begin, src->base + p->end, p->dtype, what, p->name, e);
    const size_t bytes = (size_t)(p->end - p->begin), n = bytes / (size_t)dtype_bytes[p->dtype];
    unsigned char *at = (unsigned char *)to + (p->dtype == DT_F32 ? 0 : 2 * n);
    memcpy(at, src->mem + p->begin, bytes);  // little-endian host assumed (x86, arm)
    if (p->dtype != DT_F32) st_widen_in_place(to, n, p->dtype);
    return true;
}

// The file of deferred entry en, opened and checked to be as st_open found it, or NULL (e set).
static FILE *open_source(const StFile *f, const StEntry *en, const char **path_out, Err *e) {
    const char *path = en->source >= 0 && en->source < f->n_sources ? f->sources[en->source] : NULL;
    if (!path) return err_code(e, ERR_IO, "tensor '%s': no file to read it from", en->name), NULL;
    size_t bytes;
    FILE *fp = file_open_within(path, "the weights file", LIMIT_FILE_MB, &bytes, e);  // a regular file still
    if (!fp) return err_prefix(e, "tensor '%s'", en->name), NULL;
    if (bytes != en->file_bytes) {
        fclose(fp);
        return err_code(e, ERR_IO, "%s: the file changed while it was read (%llu bytes, then %zu): tensor '%s' not read", path,
                        (unsigned long long)en->file_bytes, bytes, en->name), NULL;
    }
    *path_out = path;
    return fp;
}

bool st_read_entry(const StFile *f, const StEntry *en, float *to, Err *e) {
    const size_t n = (size_t)shape_numel(&en->shape);
    if (en->data) return memcpy(to, en->data, sizeof(float) * n), true;
    if (f->later) {  // read later, into the upper half of `to` when it widens
        const bool wide = en->dtype != ST_F32;
        return st_reads_add(f->later, f, en, (unsigned char *)to + (wide ? 2 * n : 0), wide ? to : NULL, e);
    }
    const char *path;
    FILE *fp = open_source(f, en, &path, e);
    if (!fp) return false;
    const bool ok = read_range(to, fp, en->begin, en->end, (Dtype)en->dtype, path, en->name, e);
    fclose(fp);
    return ok;
}

bool st_read_entry_half(const StFile *f, const StEntry *en, uint16_t *to, Err *e) {
    if (en->data || en->dtype == ST_F32) return err_set(e, "tensor '%s' is not held as 2-byte numbers", en->name);
    if (f->later) return st_reads_add(f->later, f, en, (unsigned char *)to, NULL, e);
    const char *path;
    FILE *fp = open_source(f, en, &path, e);
    if (!fp) return false;
    const size_t bytes = (size_t)(en->end - en->begin);
    const bool ok = fseeko(fp, (off_t)en->begin, SEEK_SET) == 0 && fread(to, 1, bytes, fp) == bytes;
    fclose(fp);
    return ok || err_code(e, ERR_IO, "%s: tensor '%s' could not be read (the file changed while it was read?)", path, en->name);
}

static bool fill_entries(StFile *f, const Pending *p, int n, const Source *src, const char *what, Err *e) {
    size_t total = 0;
    for (int i = 0; i < n && !src->deferred; i++) total += ((p[i].end - p[i].begin) / (uint64_t)dtype_bytes[p[i].dtype] + 15) / 16 * 16;
    f->arena = calloc(total ? total : 1, sizeof(float));  // the gaps too: they are read whole
    f->entries = calloc((size_t)n + 1, sizeof *f->entries);
    if (!f->arena || !f->entries) return err_set(e, "%s: out of memory for tensors", what);
    size_t at = 0;
    for (int i = 0; i < n; i++) {  // in the file's order (check_layout sorted them)
        size_t nf = (p[i].end - p[i].begin) / (size_t)dtype_bytes[p[i].dtype];
        StEntry *en = &f->entries[i];
        en->name = dup_str(p[i].name);
        en->shape = p[i].shape;
        f->n_entries++;
        if (!en->name) return err_code(e, ERR_MEMORY, "%s: out of memory", what);
        if (src->deferred) {
            *en = (StEntry){.name = en->name, .shape = en->shape, .source = 0, .begin = src->base + p[i].begin,
                            .end = src->base + p[i].end, .dtype = (int)p[i].dtype, .file_bytes = src->file_bytes};
            continue;
        }
        en->data = f->arena + at;
        if (!read_tensor(en->data, src, &p[i], what, e)) return false;
        at += (nf + 15) / 16 * 16;
    }
    return true;
}

static bool parse_header(StFile *f, const cJSON *root, const Source *src, uint64_t data_len, const char *what,
                         Err *e) {
    if (!cJSON_IsObject(root)) return err_set(e, "%s: header is not a JSON object", what);
    int n = 0;
    for (const cJSON *it = root->child; it; it = it->next)
        if (strcmp(it->string, "__metadata__") != 0) n++;
    Pending *p = calloc((size_t)n + 1, sizeof *p);
    if (!p) return err_set(e, "%s: out of memory", what);
    bool ok = true;
    int k = 0, n_meta = 0;
    for (const cJSON *it = root->child; it && ok; it = it->next) {
        if (strcmp(it->string, "__metadata__") == 0 && n_meta++)
            ok = err_set(e, "%s: the header names '__metadata__' twice", what);
        else if (strcmp(it->string, "__metadata__") == 0)
            ok = parse_meta(f, it, what, e);
        else
            ok = parse_entry(&p[k++], it, what, e);
    }
    ok = ok && check_names(p, n, what, e) && check_layout(p, n, data_len, what, e) &&
         fill_entries(f, p, n, src, what, e) && (st_index(f) || err_set(e, "%s: out of memory", what));
    free(p);
    return ok;
}

// The header's length from the file's first 8 bytes (n: the file's size).
static bool header_length(const unsigned char *first, size_t n, uint64_t *hlen, const char *what, Err *e) {
    if (n < 8)
        return err_set(e, "%s: truncated: %zu bytes, but a safetensors file starts with an 8-byte "
                       "header length", what, n);
    *hlen = 0;
    for (int i = 7; i >= 0; i--) *hlen = (*hlen << 8) | first[i];
    if (*hlen > n - 8)
        return err_set(e, "%s: header length %llu runs past the end of the file (%zu bytes)", what,
                       (unsigned long long)*hlen, n);
    return true;
}

// The header (hlen bytes of JSON), then the tensors from src (a data section of data_len bytes).
static bool parse_json(StFile *f, const char *header, uint64_t hlen, const Source *src, uint64_t data_len,
                       const char *what, Err *e) {
    cJSON *root = cJSON_ParseWithLength(header, (size_t)hlen);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        long off = at ? (long)(at - header) : -1;
        return err_set(e, "%s: header is not valid JSON (error near byte %ld of the header)", what, off);
    }
    bool ok = parse_header(f, root, src, data_len, what, e);
    cJSON_Delete(root);
    if (!ok) st_free(f);
    return ok;
}

bool st_parse(StFile *f, const unsigned char *bytes, size_t n, const char *what, Err *e) {
    memset(f, 0, sizeof *f);
    uint64_t hlen = 0;
    if (!header_length(bytes, n, &hlen, what, e)) return false;
    const Source src = {.mem = bytes + 8 + hlen};
    return parse_json(f, (const char *)bytes + 8, hlen, &src, n - 8 - hlen, what, e);
}

// The header of `path`, and with `deferred` nothing more (st_open), else every tensor (st_load).
static bool load_file(StFile *f, const char *path, bool deferred, Err *e) {
    memset(f, 0, sizeof *f);
    size_t n;
    FILE *fp = file_open_within(path, "the weights file", LIMIT_FILE_MB, &n, e);
    if (!fp) return false;
    unsigned char first[8];
    uint64_t hlen = 0;
    const size_t got = fread(first, 1, sizeof first, fp);  // (fewer than 8: a file that shrank)
    bool ok = header_length(first, got < sizeof first ? got : n, &hlen, path, e);
    char *header = ok ? malloc((size_t)hlen + 1) : NULL;
    if (ok && !header) ok = err_code(e, ERR_MEMORY, "%s: out of memory for the header (%llu bytes)", path,
                                     (unsigned long long)hlen);
    if (ok && fread(header, 1, (size_t)hlen, fp) != hlen)
        ok = err_code(e, ERR_IO, "%s: the header could not be read (the file changed while it was read?)", path);
    if (ok) {
        const Source src = {.fp = fp, .base = 8 + hlen, .deferred = deferred, .file_bytes = n};
        f->sources = deferred ? malloc(sizeof *f->sources) : NULL;
        if (f->sources && (f->sources[0] = dup_str(path))) f->n_sources = 1;
        if (deferred && f->n_sources != 1) ok = err_code(e, ERR_MEMORY, "%s: out of memory", path);
        ok = ok && parse_json(f, header, hlen, &src, n - 8 - hlen, path, e);
    }
    free(header);
    fclose(fp);
    if (!ok) st_free(f);  // (parse_json frees what it made; the sources are ours)
    return ok;
}

bool st_load(StFile *f, const char *path, Err *e) { return load_file(f, path, false, e); }
bool st_open(StFile *f, const char *path, Err *e) { return load_file(f, path, true, e); }

void st_free(StFile *f) {
    for (int i = 0; i < f->n_sources; i++) free(f->sources[i]);
    free(f->sources);
    for (int i = 0; i < f->n_entries; i++) free(f->entries[i].name);
    for (int i = 0; i < f->n_meta; i++) {
        free(f->meta[i].name);
        free(f->meta[i].value);
    }
    free(f->entries);
    free(f->meta);
    free(f->arena);
    free(f->by_name);
    memset(f, 0, sizeof *f);
}

typedef struct {
    const char *name;
    int index;
} Named;

static int cmp_named(const void *a, const void *b) { return strcmp(((const Named *)a)->name, ((const Named *)b)->name); }

bool st_index(StFile *f) {
    Named *named = malloc(sizeof *named * ((size_t)f->n_entries + 1));
    int *by_name = malloc(sizeof *by_name * ((size_t)f->n_entries + 1));
    if (!named || !by_name) return free(named), free(by_name), false;
    for (int i = 0; i < f->n_entries; i++) named[i] = (Named){f->entries[i].name, i};
    qsort(named, (size_t)f->n_entries, sizeof *named, cmp_named);
    for (int i = 0; i < f->n_entries; i++) by_name[i] = named[i].index;
    free(named);
    free(f->by_name);
    f->by_name = by_name;
    return true;
}

// (A file's loader looks up each tensor a program declares, and counts layers by looking
// names up: in order, that took time in the product of the two.)
const StEntry *st_find(const StFile *f, const char *name) {
    for (int lo = 0, hi = f->by_name ? f->n_entries : 0; lo < hi;) {
        const int mid = lo + (hi - lo) / 2, c = strcmp(f->entries[f->by_name[mid]].name, name);
        if (!c) return &f->entries[f->by_name[mid]];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    if (f->by_name) return NULL;
    for (int i = 0; i < f->n_entries; i++)
        if (strcmp(f->entries[i].name, name) == 0) return &f->entries[i];
    return NULL;
}

const char *st_meta(const StFile *f, const char *key) {
    for (int i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[i].name, key) == 0) return f->meta[i].value;
    return NULL;
}

const char *const st_dtype_names[3] = {[ST_F32] = "F32", [ST_F16] = "F16", [ST_BF16] = "BF16"};

uint16_t st_f32_to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)(bits >> 16 | 0x40u);  // NaN stays quiet NaN
    bits += 0x7FFFu + (bits >> 16 & 1u);  // to nearest, ties to even
    return (uint16_t)(bits >> 16);
}

uint16_t st_f32_to_f16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    const uint16_t sign = (uint16_t)(bits >> 16 & 0x8000u);
    const uint32_t a = bits & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | 0x7E00u;               // NaN
    if (a >= 0x477FF000u) return sign | 0x7C00u;              // rounds past 65504: infinity
    if (a < 0x38800000u) {                                    // below 2^-14: a subnormal half (or 0)
        if (a < 0x33000000u) return sign;                     // below half the smallest: zero
        const uint32_t man = (a & 0x7FFFFFu) | 0x800000u;     // the value is man * 2^(e - 150)
        const int shift = 126 - (int)(a >> 23);               // so man >> (shift - 1 + ...) in 2^-24 units
        const uint32_t q = man >> (shift), rest = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        return sign | (uint16_t)(q + (rest > half || (rest == half && (q & 1u))));
    }
    const uint32_t r = a + 0xFFFu + (a >> 13 & 1u) - 0x38000000u;  // rebias 127 -> 15, to nearest even
    return sign | (uint16_t)(r >> 13);
}

static char *build_header(const StTensor *ts, int n, const StMeta *meta, int n_meta, StDtype dtype) {
    cJSON *root = cJSON_CreateObject();
    if (n_meta > 0) {
        cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
        for (int i = 0; i < n_meta; i++) cJSON_AddStringToObject(m, meta[i].name, meta[i].value);
    }
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        cJSON *t = cJSON_AddObjectToObject(root, ts[i].name);
        cJSON_AddStringToObject(t, "dtype", st_dtype_names[dtype]);
        cJSON *shape = cJSON_AddArrayToObject(t, "shape");
        for (int d = 0; d < ts[i].shape.ndim; d++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber(ts[i].shape.dim[d]));
        uint64_t bytes = (uint64_t)shape_numel(&ts[i].shape) * (dtype == ST_F32 ? 4 : 2);
        cJSON *offs = cJSON_AddArrayToObject(t, "data_offsets");
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)at));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(at + bytes)));
        at += bytes;
    }
    char *s = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return s;
}

// One tensor's numbers as `dtype`, little-endian, in blocks.
static bool write_values(FILE *fp, const float *x, size_t cnt, StDtype dtype) {
    if (dtype == ST_F32) return fwrite(x, sizeof(float), cnt, fp) == cnt;
    unsigned char buf[8192];
    for (size_t at = 0; at < cnt;) {
        const size_t k = cnt - at < sizeof buf / 2 ? cnt - at : sizeof buf / 2;
        for (size_t i = 0; i < k; i++) {
            const uint16_t h = dtype == ST_F16 ? st_f32_to_f16(x[at + i]) : st_f32_to_bf16(x[at + i]);
            buf[2 * i] = (unsigned char)(h & 0xFF), buf[2 * i + 1] = (unsigned char)(h >> 8);
        }
        if (fwrite(buf, 2, k, fp) != k) return false;
        at += k;
    }
    return true;
}

bool st_save(const char *path, const StTensor *ts, int n, const StMeta *meta, int n_meta, Err *e) {
    return st_save_as(path, ts, n, meta, n_meta, ST_F32, e);
}

bool st_save_as(const char *path, const StTensor *ts, int n, const StMeta *meta, int n_meta, StDtype dtype,
                Err *e) {
    return st_save_stream(path, ts, n, meta, n_meta, dtype, NULL, NULL, e);
}

bool st_save_stream(const char *path, const StTensor *ts, int n, const StMeta *meta, int n_meta, StDtype dtype,
                    StGet get, void *ctx, Err *e) {
    char *header = build_header(ts, n, meta, n_meta, dtype);
    if (!header) return err_set(e, "%s: out of memory building the header", path);
    size_t hlen = strlen(header);
    size_t padded = (hlen + 8 + 7) / 8 * 8 - 8;  // data section starts 8-byte aligned
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        free(header);
        return err_set(e, "%s: cannot write: %s", path, strerror(errno));
    }
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    bool ok = fwrite(len8, 1, 8, fp) == 8 && fwrite(header, 1, hlen, fp) == hlen;
    for (size_t i = hlen; ok && i < padded; i++) ok = fputc(' ', fp) != EOF;
    int missing = -1;  // a tensor `get` could not give
    for (int i = 0; ok && i < n; i++) {
        const float *x = ts[i].data ? ts[i].data : get ? get(ctx, i) : NULL;
        if (!x) missing = i, ok = false;
        else ok = write_values(fp, x, (size_t)shape_numel(&ts[i].shape), dtype);
    }
    free(header);
    if (fclose(fp) != 0) ok = false;
    if (missing >= 0) return err_code(e, ERR_MEMORY, "%s: %s could not be had (out of memory recomputing it)", path,
                                      ts[missing].name);
    if (!ok) return err_set(e, "%s: write failed: %s", path, strerror(errno));
    return true;
}
