// text.h: the text task's data: a UTF-8 text file read as characters, split into a training
// part and a held-out part, cut into windows, and a bigram baseline to beat.
//
// The file is read whole and checked: it must exist, hold at least one byte, be no larger than
// STEPFORMER_MAX_TEXT_MB (64 MB by default, bounds.h), contain no NUL byte and be valid UTF-8
// (no overlong forms, surrogates or code points past U+10FFFF), and use at most
// TEXT_MAX_CHARS distinct characters. Each failure is one message naming the file, and the
// byte offset for a bad byte.
//
// Its characters are code points. The symbols of the text are its distinct characters in
// ascending order; a line break ("\n") is one of them, and a model reads it as the <eos> token
// (text_token_ids), so generating stops at the end of a line. Lines are what ends in "\n", and
// a last piece with no "\n" after it.
//
// The split is by lines and deterministic: every tenth line (the 10th, 20th, 30th, ...) is held
// out, so a text needs at least 10 lines. The lines may first be shuffled, for a list whose
// order means nothing (a sorted word list, where the word before would tell the model most of
// the next). The shuffle is Fisher-Yates over the n lines (n - 1 when the last has no line break
// after it: that one stays last, not glued to another): for p = n, n - 1, ..., 2, line p - 1
// (from 0) swaps places with line j = u mod p, u the next number of splitmix64 (rng.h) started
// at seed * 0x9E3779B97F4A7C15 + 0x5EED. The training part is the other lines, one after the
// other; the held-out part is the held-out lines, one after the other. (Not the last tenth of
// the file: a sorted word list would then hold out only words from 's' on, whose first letters
// training never saw begin a line.) Each part must hold at least two characters, so that it has
// a character to predict from the one before it.
#ifndef STEPFORMER_TEXT_H
#define STEPFORMER_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rng.h"
#include "tokenizer.h"
#include "vocab.h"

enum { TEXT_MAX_CHARS = 1000 };  // the most distinct characters a text may use
enum { TEXT_MAX_BLOCK = 1024 };  // the longest window (--block) the text task takes
enum { TEXT_HOLD_EVERY = 10 };   // every 10th line is held out

typedef struct {
    uint32_t *chars;  // [n_chars] the distinct code points, ascending
    int n_chars;      // (tokens: the tokenizer's ids, 0 to n_chars - 1; chars is NULL)
    bool tokens;      // read by text_load_tokens
    uint32_t *ids;    // [n] the training part, then the held-out part: each character as its index into chars
                      // (tokens: each token's id)
    size_t n;         // characters in the text (tokens: its tokens)
    size_t n_train;   // ids[0, n_train) are the training part, ids[n_train, n) the held-out part
    size_t lines, held_lines;  // lines in the text, and in the held-out part
} TextData;

// Reads and checks `path` (messages name it), shuffles its lines if asked (from `seed`), then
// splits it. On failure nothing is kept.
bool text_load(TextData *t, const char *path, bool shuffle, uint64_t seed, Err *e);
// The same split, the text read as tokens: each line (its line break taken off) as tk(line)
// gives its ids (the post-processor's BOS included, as Hugging Face's tokenizer(line) gives
// them), then `eos`; an empty line gives nothing. The symbols are then the tokenizer's ids.
bool text_load_tokens(TextData *t, const char *path, bool shuffle, uint64_t seed, const Tokenizer *tk, int eos,
                      Err *e);
void text_free(TextData *t);

// The vocabulary of a model for this text: the special tokens (vocab.h), then every character
// but the line break, one token each, in the order of t->chars.
bool text_vocab(const TextData *t, Vocab *v, Err *e);
// The token id of every symbol in v ([n_chars]): the line break is `eos`, each other character
// its token in v (tokens: each id itself). False, naming the first character v lacks, when v is
// another model's.
bool text_token_ids(const TextData *t, const Vocab *v, int eos, float *tok, Err *e);

// One window, as a row of teacher forcing: inputs ids[start, start + block) and labels ids[start
// + 1, start + block + 1), both cut at `end` and padded with `pad` after it. `tok` turns symbols
// into token ids. Returns the labels that are not padding.
int text_window(const TextData *t, size_t start, size_t end, int block, const float *tok, float pad,
                float *in,    // [block]
                float *label  // [block]
);
// Where a training window starts: uniform over the starts whose window fits in the training
// part (0 when the part is shorter than a window).
size_t text_draw_start(const TextData *t, Rng *rng, int block);
// The held-out part in windows: window k starts at n_train + k * block, so every held-out
// character but the first is a label exactly once, predicted from the characters before it in
// its window (up to `block` of them).
size_t text_held_windows(const TextData *t, int block);

// The bigram baseline: P(b | a) = (count(a b) + 1) / (count(a) + n_chars), from the pairs of
// neighbouring characters (tokens) in the training part (count(a): the pairs that start with a).
// Returns its mean cross-entropy, in nats, over the same labels as the held-out windows: each
// held-out character but the first, given the one before it. False only when memory runs out.
bool text_bigram_loss(const TextData *t, double *nats, Err *e);

#endif
