// tokenizer_spm.c: one side of a Marian folder as a Tokenizer (tokenizer.h): a SentencePiece
// model (spm.h) cuts the text into pieces, and vocab.json gives each piece its id.
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "tokenizer_impl.h"

// The id of a special token vocab.json must hold, or -1 with a message.
static int special_id(Tokenizer *t, const char *piece, const char *why, Err *e) {
    const int id = strmap_get(&t->bpe.vocab, piece, strlen(piece));
    if (id < 0) err_set(e, "%s has no '%s': %s", t->path, piece, why);
    return id;
}

// vocab.json must number the pieces of the SentencePiece model it goes with: one that holds
// fewer than half of them belongs to another tokenizer.
static bool covers(const Tokenizer *t, const char *spm_path, Err *e) {
    int normal = 0, found = 0;
    for (int i = 0; i < spm_size(t->spm); i++) {
        bool counts;
        const char *p = spm_piece(t->spm, i, &counts);
        normal += counts;
        found += counts && strmap_get(&t->bpe.vocab, p, strlen(p)) >= 0;
    }
    if (2 * found >= normal) return true;
    return err_set(e, "%s numbers only %d of the %d pieces of %s: it is another tokenizer's vocabulary", t->path, found,
                   normal, spm_path);
}

static bool read_vocab_file(Tokenizer *t, const char *path, Err *e) {
    char *text;
    size_t n;
    if (!file_read_all(path, "the vocabulary", &text, &n, e)) return false;
    cJSON *root = cJSON_ParseWithLength(text, n);
    free(text);
    bool ok = cJSON_IsObject(root) || err_set(e, "%s: not a JSON object of pieces and their ids", path);
    ok = ok && tok_read_vocab(t, root, e);
    cJSON_Delete(root);
    return ok;
}

// One more token split off before the text is cut (tokenizer_run.c): a special one.
static bool add_special(Tokenizer *t, const char *piece, int id, Err *e) {
    Added *g = realloc(t->added, sizeof *g * (size_t)(t->n_added + 1));
    if (!g) return err_code(e, ERR_MEMORY, "out of memory");
    t->added = g;
    t->added[t->n_added] = (Added){tok_dup(piece), id, false, false, true};
    return t->added[t->n_added++].content || err_code(e, ERR_MEMORY, "out of memory");
}

// A multilingual model's target-language codes (`>>fra<<`), which MarianTokenizer reads as one
// token each, never cut into pieces.
static bool is_language_code(const char *piece) {
    const size_t n = strlen(piece);
    return n > 4 && !strncmp(piece, ">>", 2) && !strcmp(piece + n - 2, "<<");
}

Tokenizer *tokenizer_sentencepiece(const char *spm, const char *vocab, Err *e) {
    Tokenizer *t = calloc(1, sizeof *t);
    if (!t) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    snprintf(t->path, sizeof t->path, "%s", vocab);
    bool ok = (t->spm = spm_load(spm, e)) && read_vocab_file(t, vocab, e) && covers(t, spm, e);
    const int eos = ok ? special_id(t, "</s>", "Marian's tokenizer ends every text with it", e) : -1;
    const int unk = eos >= 0 ? special_id(t, "<unk>", "Marian's tokenizer gives it to every piece the file lacks", e) : -1;
    ok = unk >= 0;
    const int pad = ok ? strmap_get(&t->bpe.vocab, "<pad>", 5) : -1;
    ok = ok && add_special(t, "</s>", eos, e) && add_special(t, "<unk>", unk, e) && (pad < 0 || add_special(t, "<pad>", pad, e));
    for (int id = 0; ok && id < t->bpe.n_pieces; id++)
        if (t->bpe.pieces[id] && is_language_code(t->bpe.pieces[id])) ok = add_special(t, t->bpe.pieces[id], id, e);
    if (ok) {
        t->bpe.unk = unk;
        t->post_after[t->n_post_after++] = eos;
        t->dec[t->n_dec++] = (Dec){DEC_METASPACE, tok_dup("\xE2\x96\x81"), NULL, 1, 0};
        t->size = t->bpe.n_pieces;
        ok = t->dec[0].a || err_code(e, ERR_MEMORY, "out of memory");
    }
    if (!ok) tokenizer_free(t), t = NULL;
    return t;
}

bool tokenizer_is_marian(const Tokenizer *t) { return t->spm != NULL; }
