// load.h: a model for a program. The program's `param` and `buffer` lines say which tensors
// exist and their shapes; the configuration comes from the sources in cs (conf.h), then the
// file's metadata and shapes, then the program's defaults (declare.h).
#ifndef STEPFORMER_LOAD_H
#define STEPFORMER_LOAD_H

#include "program.h"

// Resolves the configuration of `p`, then checks and copies every declared tensor out of the
// file at `path`.
bool model_load(Model *m, const char *path, const Program *p, const ConfSpec *cs, Err *e);
// The same for a file already read (f is taken over, and left empty).
bool model_from_file(Model *m, StFile *f, const char *path, const Program *p, const ConfSpec *cs, Err *e);
// Fresh weights from a seed, each as its declaration says.
bool model_init_random(Model *m, const Program *p, const ConfSpec *cs, uint64_t seed, Err *e);
// The same with every name of a typed configuration (what tests and benchmarks start from).
bool model_init_config(Model *m, const Program *p, const ModelConfig *c, uint64_t seed, Err *e);

#endif
