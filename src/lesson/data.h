// data.h: where stepformer's own files are (the lessons, the bundled models, the PyTorch peer
// script), so that a built binary works wherever it is copied or installed:
//   1. $STEPFORMER_DATA, when set;
//   2. PREFIX/share/stepformer, where PREFIX is the folder above the binary's (an install);
//   3. the source tree the binary was built from (a build that has not been installed).
#ifndef STEPFORMER_DATA_H
#define STEPFORMER_DATA_H

#include <stdbool.h>

// The folder holding lessons/ and assets/, or "" when none of the three has one.
const char *data_dir(void);
// data_dir() + "/" + rel into buf; returns buf.
const char *data_path(const char *rel, char *buf, unsigned long n);
// The running binary's own path into buf; false if it cannot be read.
bool data_self_path(char *buf, unsigned long n);

#endif
