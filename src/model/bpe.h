// bpe.h: the BPE model of a tokenizer.json: the vocabulary (piece -> id), the merges (a pair of
// pieces -> its rank), and the byte-level alphabet GPT-2 writes bytes in. Used by tokenizer.c.
//
// A word (one pre-token) starts as its symbols: its UTF-8 characters. The adjacent pair with the
// lowest merge rank is merged, the leftmost first among equals, until no pair has a rank, as
// Hugging Face's tokenizers merges. Each symbol is then looked up; one not in the vocabulary is
// written as its bytes `<0xXX>` with byte_fallback, else as the unknown token.
#ifndef STEPFORMER_BPE_H
#define STEPFORMER_BPE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

// An open-addressing map from strings (owned) to ints.
typedef struct {
    char **keys;  // [cap], NULL where empty
    int *vals;    // [cap]
    size_t cap, n;
} StrMap;

bool strmap_put(StrMap *m, const char *key, size_t len, int val);  // false when out of memory
int strmap_get(const StrMap *m, const char *key, size_t len);      // -1 when absent
void strmap_free(StrMap *m);

typedef struct {
    StrMap vocab;    // piece -> id
    StrMap merges;   // "left right" (one space between) -> rank
    char **pieces;   // [n_pieces] id -> piece (NULL where no piece has that id)
    int n_pieces;
    int unk;         // the unknown token's id, or -1
    bool byte_fallback;
    bool ignore_merges;  // a whole word in the vocabulary is taken as it is (Llama 3)
    char *continuing_prefix, *end_suffix;  // "" when none
} Bpe;

// Appends the ids of one word (len bytes) to ids[*n] (grown with realloc). `what` names the
// file in messages (a symbol neither in the vocabulary nor coverable by bytes or unk).
bool bpe_word(const Bpe *b, const char *word, size_t len, int **ids, int *n, int *cap, const char *what, Err *e);
void bpe_free(Bpe *b);
// Appends the ids of one piece (len bytes): its id (looked up when look_up), else its bytes
// <0xXX> with byte_fallback, else the unknown id, one for a run of unknowns (fuse_unk).
bool bpe_emit(const Bpe *b, const char *s, int len, bool look_up, int **ids, int *n, int *cap, const char *what, Err *e);
// Appends id to ids[*n], growing the array (*cap) by realloc; false when out of memory.
bool ids_push(int **ids, int *n, int *cap, int id);

// GPT-2's byte-level alphabet: each byte as a printable character (UTF-8, at most 2 bytes).
// bytes_to_unicode: 33-126, 161-172 and 174-255 are themselves; the others, in order, 256 + k.
int byte_level_char(unsigned char byte, char out[3]);
// The byte a byte-level character stands for, or -1; *used: the character's length in bytes.
int byte_level_byte(const char *s, int *used);

// The length of the UTF-8 character at s (1 for a stray byte).
int utf8_len(const char *s);

#endif
