// zip_read.h: the entries of a zip archive held in memory, as PyTorch's torch.save writes them:
// stored (not compressed), ZIP64 where sizes or offsets need it. Every offset and size is
// checked against the archive before it is used.
#ifndef STEPFORMER_ZIP_READ_H
#define STEPFORMER_ZIP_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

typedef struct {
    char *name;                 // the entry's path in the archive ("archive/data.pkl")
    const unsigned char *data;  // its bytes, inside the archive's memory
    size_t size;
} ZipEntry;

typedef struct {
    ZipEntry *entries;
    int n;
} Zip;

// Reads the central directory of the archive's n bytes. A compressed entry, an entry running
// past the archive, or a directory that does not parse is one message naming `what`.
bool zip_read(Zip *z, const unsigned char *bytes, size_t n, const char *what, Err *e);
// The entry whose name ends in "/" + suffix (torch.save puts every entry in one top folder,
// named after the file), or NULL.
const ZipEntry *zip_find_suffix(const Zip *z, const char *suffix);
void zip_free(Zip *z);

#endif
