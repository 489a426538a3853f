// unigram.h: the Unigram model of a tokenizer.json (what converted copies of Marian's and T5's
// SentencePiece models ship), run as Hugging Face's tokenizers runs it: each word (one
// pre-token) cut by the most probable segmentation into the vocabulary's pieces, scores summed
// in double precision; a character no piece covers is the unknown piece, scored the least
// score minus 10, and a run of unknowns is one unknown token (fuse_unk); with byte_fallback an
// unknown token is written as its bytes <0xXX> instead. The pieces are the Bpe's vocabulary
// (bpe.h), which tokenizer.c fills from the [piece, score] list.
#ifndef STEPFORMER_UNIGRAM_H
#define STEPFORMER_UNIGRAM_H

#include "bpe.h"

typedef struct {
    double *score;     // [n] each id's score, or NULL: the tokenizer's model is BPE
    int n;
    double unk_score;  // the least score, minus 10
    int longest;       // the longest piece, in bytes
} Unigram;

// Appends the ids of one word (len bytes) to ids[*n] (grown with realloc); false when out of
// memory or when a character is neither a piece nor coverable (no unknown id), with a message.
bool unigram_word(const Unigram *u, const Bpe *b, const char *word, size_t len, int **ids, int *n, int *cap, const char *what,
                  Err *e);
void unigram_free(Unigram *u);

#endif
