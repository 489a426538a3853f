// declare.h: the tensors a program declares (its `param` and `buffer` lines), and the
// configuration that their shapes, the file and the program's defaults settle.
#ifndef STEPFORMER_DECLARE_H
#define STEPFORMER_DECLARE_H

#include "program.h"

// Completes `conf` (sizes from the shapes in `file` when given, layer counts from the layers
// the file holds, then `default` lines) and lists every declared tensor in program order:
// out[0..n), then the n_absent names whose `if` is 0 (out[n..n + n_absent), no tensor).
// A name still unset where a declaration needs it is an error naming it and the line.
bool program_declare(const Program *p, Conf *conf, const StFile *file, const char *path, ParamDecl **out,
                     int *n, int *n_absent, Err *e);
void param_decls_free(ParamDecl *d, int n);
// Whether a `tie` statement holds for this configuration: it has no `if`, or its EXPR is not 0
// (`tie @wte @lm_head if tie_word_embeddings`). A condition that names an unknown is false.
bool program_tie_on(const Stmt *s, const Conf *conf);
// Whether the program's text uses `name` as a configuration name anywhere.
bool program_mentions(const Program *p, const char *name);

#endif
