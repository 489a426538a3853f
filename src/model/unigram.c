// unigram.c: the Unigram model of a tokenizer.json (unigram.h).
#include "unigram.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int id, start;  // the piece ending here on the best path, and where it starts (-1: none yet)
    double score;
} Node;

bool unigram_word(const Unigram *u, const Bpe *b, const char *word, size_t len, int **ids, int *n, int *cap, const char *what,
                  Err *e) {
    Node *best = malloc(sizeof *best * (len + 1));
    if (!best) return err_code(e, ERR_MEMORY, "out of memory");
    for (size_t i = 0; i <= len; i++) best[i] = (Node){-1, -1, 0};
    best[0].start = 0;
    for (size_t start = 0; start < len;) {
        const double here = best[start].score;
        size_t one = (size_t)utf8_len(word + start);
        if (one > len - start) one = len - start;
        bool single = false;
        for (size_t l = 1; l <= len - start && l <= (size_t)u->longest; l++) {
            const int id = strmap_get(&b->vocab, word + start, l);
            if (id < 0 || id >= u->n) continue;
            Node *t = &best[start + l];
            if (t->start < 0 || u->score[id] + here > t->score) *t = (Node){id, (int)start, u->score[id] + here};
            single = single || l == one;
        }
        Node *t = &best[start + one];
        if (!single && (t->start < 0 || u->unk_score + here > t->score)) *t = (Node){-2, (int)start, u->unk_score + here};
        start += one;
    }
    // Back from the end: the pieces in reverse, a run of unknowns fused into one.
    size_t *cut = malloc(sizeof *cut * (len + 1));
    bool *unk = malloc(sizeof *unk * (len + 1));
    int k = 0;
    bool ok = cut && unk;
    for (size_t end = len; ok && end > 0; end = (size_t)best[end].start) {
        const bool u_here = best[end].id == -2;
        if (u_here && k > 0 && unk[k - 1]) cut[k - 1] = (size_t)best[end].start;  // the run grows leftwards
        else cut[k] = (size_t)best[end].start, unk[k] = u_here, k++;
    }
    if (!ok) err_code(e, ERR_MEMORY, "out of memory");
    for (int i = k - 1; ok && i >= 0; i--) {
        const size_t to = i > 0 ? cut[i - 1] : len;
        ok = bpe_emit(b, word + cut[i], (int)(to - cut[i]), !unk[i], ids, n, cap, what, e);
    }
    free(cut), free(unk), free(best);
    return ok;
}

void unigram_free(Unigram *u) {
    free(u->score);
    *u = (Unigram){0};
}
