// spm.h: a SentencePiece model file (`source.spm`, `tokenizer.model`: the protobuf ModelProto)
// read and run in C, as the sentencepiece library (0.1.x) encodes: Marian's tokenizers.
//
// What it implements (anything else in a file is refused with one line naming it):
//   pieces       NORMAL, UNKNOWN (exactly one), CONTROL, USER_DEFINED, UNUSED, BYTE
//   model        Unigram: the most probable segmentation (Viterbi over the pieces' scores; a
//                character no piece covers is the unknown piece, scored min - 10); BPE: the
//                adjacent pair whose merge is a piece with the highest score merged first,
//                leftmost among equals. byte_fallback: an unknown piece becomes its bytes <0xXX>.
//   normalizer   the precompiled character map the file carries (a double-array trie of rules,
//                longest first), remove_extra_whitespaces, add_dummy_prefix, escape_whitespaces
//                (a space becomes "▁"); user-defined pieces are matched before the rules.
// Not implemented (refused): WORD and CHAR models, treat_whitespace_as_suffix.
#ifndef STEPFORMER_SPM_H
#define STEPFORMER_SPM_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

typedef struct Spm Spm;

// Reads and checks a model file; NULL with one line in e naming what is wrong.
Spm *spm_load(const char *path, Err *e);
// The same from the file's bytes; `what` names it in messages.
Spm *spm_parse(const unsigned char *data, size_t n, const char *what, Err *e);
void spm_free(Spm *s);

// The pieces of text, as SentencePieceProcessor.encode(text, out_type=str) gives them: an
// unknown piece is the text it covers (no id of its own). *pieces is malloc'd, each piece too.
bool spm_encode(const Spm *s, const char *text, char ***pieces, int *n, Err *e);
void spm_pieces_free(char **pieces, int n);

// The file's pieces, by id; *normal: the piece is a NORMAL one (text the model writes).
int spm_size(const Spm *s);
const char *spm_piece(const Spm *s, int id, bool *normal);

// The file's normalizer on text (remove_extra_whitespaces, the rules, "▁" for spaces); malloc'd.
char *spm_normalize(const Spm *s, const char *text);

// The character map a file carries, run on its own (tokenizer.json's "Precompiled" normalizer
// holds the same bytes): text with each longest rule applied and invalid UTF-8 bytes replaced by
// U+FFFD. `map` is NULL (n 0) for none. false when the map is malformed.
bool spm_charsmap_check(const unsigned char *map, size_t n);
char *spm_charsmap_apply(const unsigned char *map, size_t n, const char *text);

#endif
