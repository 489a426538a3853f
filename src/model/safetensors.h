// safetensors.h: reading and writing .safetensors files (tensors + string metadata). F32, F16 and
// BF16 tensors are read, each widened to float32 (4 bytes a number in memory, whatever the file
// holds); files are written as F32, or as F16 or BF16 (rounded to nearest, ties to even).
//
// Layout: 8-byte little-endian header length N, N bytes of JSON, then the data section.
// The JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} with
// offsets into the data section, and "__metadata__" to an object of strings.
// Every offset, size, shape and dtype is checked before anything is used; tensors are then
// copied into one aligned allocation.
#ifndef STEPFORMER_SAFETENSORS_H
#define STEPFORMER_SAFETENSORS_H

#include "err.h"
#include "half.h"
#include "tensor.h"

typedef struct {
    char *name;
    Shape shape;
    float *data;  // [shape], inside StFile.arena; NULL when the entry is only where its bytes
                  // are (st_open): st_read_entry reads it; NULL too when it is held as `half`
    uint16_t *half;  // [shape] a model's matrix held as the file stores it (dtype F16 or BF16),
                     // or NULL (model.h: model_place)
    // Where a deferred entry's bytes are: StFile.sources[source], bytes [begin, end) of it,
    // stored as `dtype` (a StDtype); the file had file_bytes bytes when it was opened.
    int source;
    uint64_t begin, end;
    int dtype;
    uint64_t file_bytes;
} StEntry;

typedef struct {
    char *name;
    char *value;
} StMeta;

struct StReads;

typedef struct {
    StEntry *entries;  // in data-section order
    int n_entries;
    StMeta *meta;  // "__metadata__", in file order
    int n_meta;
    float *arena;  // every tensor's data, one allocation
    int *by_name;  // [n_entries] the entries' indices in name order (st_index), or NULL
    char **sources;  // [n_sources] the files deferred entries are read from (st_open)
    int n_sources;
    struct StReads *later;  // NULL, or where st_read_entry and st_read_entry_half list a deferred
                            // entry instead of reading it (see StReads below); not owned
} StFile;

// Reads and validates `path`. On failure fills e with one line that names the file and,
// where there is one, the tensor; the StFile is then left empty.
bool st_load(StFile *f, const char *path, Err *e);
// The same, reading only the header: every entry's name, shape and place, its data NULL. The
// numbers are read by st_read_entry, each straight where the caller wants it: a model's weights
// are held once, and a tensor the program does not declare (GPT-2's attn.bias) is never read.
bool st_open(StFile *f, const char *path, Err *e);
// Entry en's numbers into `to` [shape], widened to float32: copied when in memory, else read
// from its file (which must still be as st_open found it).
bool st_read_entry(const StFile *f, const StEntry *en, float *to, Err *e);
// Entry en's numbers as the file stores them, 2 bytes each, into `to` [shape]: for an entry not
// read (st_open) whose dtype is F16 or BF16.
bool st_read_entry_half(const StFile *f, const StEntry *en, uint16_t *to, Err *e);
// The same, from bytes in memory (`what` names the source in messages).
bool st_parse(StFile *f, const unsigned char *bytes, size_t n, const char *what, Err *e);
void st_free(StFile *f);

// NULL when absent. A binary search once st_index has sorted the names (st_parse does), else
// a search in order.
const StEntry *st_find(const StFile *f, const char *name);
// Sorts the entries' names (they must differ) for st_find; false when memory runs out.
bool st_index(StFile *f);
const char *st_meta(const StFile *f, const char *key);

// Float32 to the nearest half precision or bfloat16 value, ties to even (as PyTorch's .half() and
// .bfloat16() round); past the largest finite half, infinity; NaN stays NaN.
uint16_t st_f32_to_f16(float f);
uint16_t st_f32_to_bf16(float f);

typedef enum { ST_F32, ST_F16, ST_BF16 } StDtype;
extern const char *const st_dtype_names[3];  // "F32", "F16", "BF16": the files' own words
// The 2-byte kind of an F16 or BF16 entry (half.h).
static inline HalfKind st_half_kind(int dtype) { return dtype == ST_F16 ? HALF_F16 : HALF_BF16; }

// ---- reads left for later ----
// Where a file's bytes are not at hand when a model is placed (the page: a file of the user's
// disk stays in the browser, a site's is fetched by range), the deferred entries are not read:
// each is listed with the place it goes (StFile.later), and whoever holds the bytes puts them
// there (the page: platform.h, platform_read_queue; st_reads_local from the disk), then st_reads_finish
// widens what is held wider than stored. Nothing of the file is held whole on the way.
typedef struct {
    int source;           // StReads.paths[source]
    uint64_t begin, end;  // bytes [begin, end) of the file
    uint64_t file_bytes;  // the file's size when its header was read
    unsigned char *to;    // where they go, as the file stores them: [end - begin] bytes
    float *widen;         // NULL, or the floats they become (an F16 or BF16 entry held as float32:
                          // `to` is then the upper half of these)
    int dtype;            // StDtype
} StRead;

typedef struct StReads {
    StRead *reads;  // [n], in the order they were asked
    int n, cap;
    char **paths;   // [n_paths] the files, each once
    int n_paths;
} StReads;

// n F16 or BF16 values (dtype, a StDtype) stored in the upper half of `to` [n] widened in place,
// first to last: value i is written over bytes [4i, 4i + 4), which hold only values widened already.
void st_widen_in_place(float *to, size_t n, int dtype);
// Lists deferred entry en of f (st_open) to go to `to` (and be widened into `widen`, or not).
bool st_reads_add(StReads *r, const StFile *f, const StEntry *en, unsigned char *to, float *widen, Err *e);
// The bytes all the reads take.
uint64_t st_reads_bytes(const StReads *r);
// Every read done from the files on disk, each checked to be the size its header said.
bool st_reads_local(const StReads *r, Err *e);
// Once every read is done: the entries held as float32 widened in place.
void st_reads_finish(const StReads *r);
void st_reads_free(StReads *r);

typedef struct {
    const char *name;
    Shape shape;
    const float *data;  // [shape]
} StTensor;

// Writes tensors (in the given order) and metadata pairs to `path`, as F32.
bool st_save(const char *path, const StTensor *tensors, int n, const StMeta *meta, int n_meta,
             Err *e);
// The same with every tensor stored as `dtype`.
bool st_save_as(const char *path, const StTensor *tensors, int n, const StMeta *meta, int n_meta,
                StDtype dtype, Err *e);
// The same for numbers had one tensor at a time: a tensor whose data is NULL is asked of
// get(ctx, i) just before it is written (so a trace under a budget recomputes one at a time and
// lets each go after); NULL from get fails the write, naming the tensor.
typedef const float *(*StGet)(void *ctx, int i);
bool st_save_stream(const char *path, const StTensor *tensors, int n, const StMeta *meta, int n_meta,
                    StDtype dtype, StGet get, void *ctx, Err *e);

#endif
