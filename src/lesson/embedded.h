// embedded.h: text files built into the program (scripts/embed.cmake writes the data).
#ifndef STEPFORMER_EMBEDDED_H
#define STEPFORMER_EMBEDDED_H

typedef struct {
    const char *name;  // file name, e.g. "forward-pass.md"
    const char *path;  // where it was in the source tree when built
    const char *text;  // its contents, NUL-terminated
} EmbeddedFile;

extern const EmbeddedFile embedded_files[];
extern const int embedded_file_count;

#endif
