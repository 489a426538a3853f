// tokenizer_impl.h: the parts of a Tokenizer, shared by tokenizer.c (reading the file) and
// tokenizer_run.c (encoding and decoding). Not for other files: they use tokenizer.h.
#ifndef STEPFORMER_TOKENIZER_IMPL_H
#define STEPFORMER_TOKENIZER_IMPL_H

// The desktop program encodes text (PCRE2 cuts it, utf8proc composes it); the page only reads
// the pieces and decodes them (tokenizer_run.c).
#if STEPFORMER_TOKENIZER_ENCODES
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

#include "bpe.h"
#include "spm.h"
#include "unigram.h"
#include "tokenizer.h"

enum { TOK_MAX_STEPS = 8 };

typedef enum { NORM_NFC, NORM_PREPEND, NORM_REPLACE, NORM_REGEX, NORM_STRIP, NORM_PRECOMPILED } NormKind;
typedef struct {
    NormKind kind;
    char *a, *b;             // prepend: a; replace: a with b; regex: matches of `re` with b
    struct pcre2_real_code_8 *re;  // regex: the pattern (NULL on the page)
    bool left, right;        // strip: white space off the left, the right
    unsigned char *map;      // precompiled: SentencePiece's character map (spm.h), map_n bytes
    size_t map_n;
} Norm;

typedef enum { PRE_BYTELEVEL, PRE_SPLIT, PRE_METASPACE } PreKind;
// What a split keeps: the matches and the text between them (Split's Isolated), only the text
// between (Removed), or only the matches (Whitespace: words and punctuation, spaces dropped).
typedef enum { KEEP_BOTH, KEEP_GAPS, KEEP_MATCHES } SplitKeep;
typedef struct {
    PreKind kind;
    struct pcre2_real_code_8 *re;  // ByteLevel (use_regex) and Split: the pattern pieces are cut by
                                   // (PCRE2's pcre2_code), or NULL; NULL on the page
    int keep;           // Split: what becomes pieces (SplitKeep)
    bool prefix_space;  // ByteLevel: add_prefix_space
    char *replacement;  // Metaspace: the character a space becomes ("▁")
    int prepend;        // Metaspace: 0 never, 1 the first piece of the text, 2 always
    bool split;         // Metaspace: pieces cut before each replacement
} Pre;

typedef enum { DEC_BYTELEVEL, DEC_BYTEFALLBACK, DEC_FUSE, DEC_REPLACE, DEC_STRIP, DEC_METASPACE } DecKind;
typedef struct {
    DecKind kind;
    char *a, *b;      // replace: a with b; strip: the character a; metaspace: the replacement a
    int start, stop;  // strip: how many leading and trailing a; metaspace: start 1 = strip the first space
} Dec;

typedef struct {
    char *content;
    int id;
    bool lstrip, rstrip, special;
} Added;

struct Tokenizer {
    char path[4200];
    Bpe bpe;   // tokenizer.json's BPE model; for a SentencePiece side only its vocab, pieces and unk
    Unigram uni;  // tokenizer.json's Unigram model (uni.score set), its pieces bpe's vocab
    Spm *spm;  // a SentencePiece side (tokenizer_sentencepiece): what cuts the text, or NULL
    Added *added;
    int n_added;
    Norm norm[TOK_MAX_STEPS];
    int n_norm;
    Pre pre[TOK_MAX_STEPS];
    int n_pre;
    Dec dec[TOK_MAX_STEPS];
    int n_dec;
    int post_before[TOK_MAX_STEPS], n_post_before;  // TemplateProcessing's ids around the text
    int post_after[TOK_MAX_STEPS], n_post_after;
    int size;
    bool byte_level;  // its decoder is ByteLevel: pieces are written in GPT-2's byte alphabet
};

char *tok_dup(const char *s);
struct cJSON;
// A vocabulary object (piece -> id) into t->bpe's vocab and pieces.
bool tok_read_vocab(Tokenizer *t, const struct cJSON *vocab, Err *e);

#endif
