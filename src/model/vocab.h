// vocab.h: token strings <-> ids, for the source and the target side of a model.
//
// A vocabulary is a list of token strings, index = id, carried in a weights file's metadata
// (`src_tokens`, `tgt_tokens`: JSON arrays). Special tokens are written in angle brackets
// (`<bos>`). A vocabulary whose other tokens are all single characters is character-level:
// text is split into characters and ids are joined without spaces. Otherwise it is
// word-level: text is split on white space and ids are joined with one space.
#ifndef STEPFORMER_VOCAB_H
#define STEPFORMER_VOCAB_H

#include <stddef.h>

#include "err.h"

struct Tokenizer;

typedef struct {
    char **tokens;  // [n] owned strings
    int n;
    bool by_char;
    const struct Tokenizer *tok;  // a model folder's tokenizer.json (not owned), or NULL: then text
                                  // is encoded and ids decoded by it, and tokens[] are its labels
    const char *no_text;          // why text cannot be split into these tokens (a model folder
                                  // without tokenizer.json), or NULL
} Vocab;

// The special tokens every vocabulary stepformer makes starts with, at these ids.
enum { VOCAB_UNK, VOCAB_PAD, VOCAB_BOS, VOCAB_EOS, VOCAB_SPECIALS };
extern const char *const vocab_special_names[VOCAB_SPECIALS];  // "<unk>", "<pad>", "<bos>", "<eos>"
// The same ids as configuration items ("unk_id=0 pad_id=1 bos_id=2 eos_id=3").
void vocab_special_ids(char *buf, size_t n);

// A character vocabulary: the specials, then one token for each character of `chars`.
bool vocab_from_chars(Vocab *v, const char *chars, Err *e);
// The specials, then one token for each of the n strings (copied).
bool vocab_from_strings(Vocab *v, const char *const *strings, int n, Err *e);
// The character vocabulary of lessons (`vocab: chars`) and `init --vocab chars`: the specials
// and the 95 printable ASCII characters, VOCAB_CHARS_SIZE tokens (vocab.c checks the sum).
bool vocab_chars(Vocab *v, Err *e);
#define VOCAB_CHARS_SIZE 99
#define VOCAB_STR_(x) #x
#define VOCAB_STR(x) VOCAB_STR_(x)
// Its sizes as configuration items.
#define VOCAB_CHARS_CONFIG "src_vocab_size=" VOCAB_STR(VOCAB_CHARS_SIZE) " tgt_vocab_size=" VOCAB_STR(VOCAB_CHARS_SIZE)

// Parses a JSON array of strings. `what` names the source in messages.
bool vocab_from_json(Vocab *v, const char *json, const char *what, Err *e);
// Token strings "0", "1", ... for a model that carries no vocabulary.
bool vocab_numbered(Vocab *v, int n, Err *e);
void vocab_free(Vocab *v);
char *vocab_to_json(const Vocab *v);  // malloc'd JSON array

// The id of a token, or -1 if the vocabulary has none by that name.
int vocab_find(const Vocab *v, const char *s, size_t len);

// Splits `text` into ids. Fails on an unknown token (naming it and its position), on empty
// input and on more than `max` tokens. `side` ("source", "target") is used in messages. With a
// tokenizer, as Hugging Face's tokenizer(text) does (its template's BOS included).
bool vocab_encode(const Vocab *v, const char *text, const char *side, float *ids, int max,
                  int *n, Err *e);

// Parses "3,4,5" into ids, each checked to be in [0, v->n).
bool vocab_parse_ids(const Vocab *v, const char *list, const char *side, float *ids, int max,
                     int *n, Err *e);

// Joins the tokens of ids (as the vocabulary says: characters or words; with a tokenizer, its
// decoded text) into buf.
void vocab_decode(const Vocab *v, const float *ids, int n, char *buf, size_t cap);

// The display string of one id ("?" when out of range).
const char *vocab_token(const Vocab *v, int id);

#endif
