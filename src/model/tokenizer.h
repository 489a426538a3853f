// tokenizer.h: a Hugging Face tokenizer.json read and run in C, for the models users bring.
//
// What it implements (anything else in a file is refused with one line naming it, never
// skipped):
//   model          BPE: merges written "a b" or ["a", "b"], byte_fallback, unk_token, ignore_merges;
//                  Unigram ([piece, score] pairs, unk_id, byte_fallback; unigram.h)
//   added tokens   split off first, longest first (special tokens inside a text: <|endoftext|>)
//   normalizer     NFC (utf8proc), Prepend, Replace (a string, or a regex), Strip, Precompiled
//                  (SentencePiece's character map, spm.h), Sequence, or none
//   pre_tokenizer  ByteLevel (GPT-2's split pattern), Split (a regex, PCRE2 with Unicode
//                  properties; Isolated or Removed), Whitespace, WhitespaceSplit, Digits,
//                  Metaspace, Sequence, or none
//   decoder        ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, Sequence
//   post_processor TemplateProcessing (a BOS before the text), ByteLevel, Sequence, or none
// Unicode categories and the split patterns are PCRE2's; NFC is utf8proc's.
#ifndef STEPFORMER_TOKENIZER_H
#define STEPFORMER_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

typedef struct Tokenizer Tokenizer;

// Reads and checks path (a tokenizer.json). NULL with one line in e on failure.
Tokenizer *tokenizer_load(const char *path, Err *e);
// The same from the file's text (n bytes); `what` names it in messages.
Tokenizer *tokenizer_parse(const char *json, size_t n, const char *what, Err *e);
// One side of a Marian folder, as transformers' MarianTokenizer reads it: the SentencePiece
// model `spm` (source.spm, target.spm) cuts the text into pieces, and `vocab` (vocab.json,
// target_vocab.json) gives each piece its id, the unknown id for a piece it lacks. `</s>`,
// `<unk>` and `<pad>` are special tokens, and so is a multilingual model's language code
// (`>>fra<<`); tokenizer_encode with `special` appends `</s>`.
Tokenizer *tokenizer_sentencepiece(const char *spm, const char *vocab, Err *e);
// Whether t is such a side (made by tokenizer_sentencepiece).
bool tokenizer_is_marian(const Tokenizer *t);
// Ids run from 0 to below this (a file with a larger id is refused).
#define TOKENIZER_MAX_IDS (1 << 22)
void tokenizer_free(Tokenizer *t);

// One more than the largest id (the vocabulary's and the added tokens').
int tokenizer_size(const Tokenizer *t);
// The id of a piece as the file writes it ("</s>", "<pad>"), or -1.
int tokenizer_id(const Tokenizer *t, const char *piece);
// The piece of an id as the file writes it ("Ġthe", "▁the", "<0x0A>"), or NULL.
const char *tokenizer_piece(const Tokenizer *t, int id);

// The ids of text: with `special`, as tokenizer(text) gives them (the post-processor's BOS);
// without, as tokenizer.encode(text, add_special_tokens=False). *ids is malloc'd.
bool tokenizer_encode(const Tokenizer *t, const char *text, bool special, int **ids, int *n, Err *e);
// The text of ids, as tokenizer.decode(ids) gives it (special tokens kept). malloc'd, or NULL.
char *tokenizer_decode(const Tokenizer *t, const int *ids, int n);
// An id as a label a person can read: its decoded text with a space shown as '␣', a newline as
// '↵' and a tab as '⇥' (so "Ġthe" and "▁the" read "␣the", and "<0x0A>" reads "↵").
void tokenizer_label(const Tokenizer *t, int id, char *buf, size_t n);

#endif
