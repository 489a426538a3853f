// trainer_impl.h: the Trainer's parts (train.h), shared by trainer.c (the generated and text
// tasks) and trainer_pairs.c (the translation task). Not for other files: they use train.h.
#ifndef STEPFORMER_TRAINER_IMPL_H
#define STEPFORMER_TRAINER_IMPL_H

#include "pairs.h"
#include "session.h"
#include "train.h"

struct Trainer {
    TrainConfig c;
    Model m;
    Lesson program;       // the standard lesson whose program is trained
    TrainState *ts;
    TaskHeldOut *held;    // a generated task's held-out examples
    TextData text;        // the text task's characters (c.data set), or tokens (c.tokenizer set)
    PairData pairs;       // the translation task's sentence pairs (c.pairs set)
    Tokenizer *tk;        // c.tokenizer read, until the model takes it over (pairs: the source side's)
    Tokenizer *tk_tgt;    // the translation task: the target side's, until the model takes it over
    float *tok;           // [text.n_chars] the text task: each symbol's token id in the model
    Rng rng;
    int step;
    int classes;          // a classification task's class count; 0 for sequence to sequence
    int S, T;             // padded source and target lengths (T = 1 for a classifier: its label;
                          // the text task: S = 0, no source, and T = block)
    float *src, *tgt_in, *tgt_out;  // [B, S], [B, T], [B, T] (a classifier: tgt_out [B] classes)
    float *backup;        // the last weights that gave a finite loss
    size_t n_weights;
};


// The translation task (trainer_pairs.c): its tokenizers and pairs, its model, a batch of
// training pairs, and exact match on the held-out ones.
bool pairs_setup(Trainer *t, Err *e);
bool pairs_make_model(Trainer *t, Err *e);
void pairs_batch(Trainer *t);  // (pairs_exact, train.h, is the held-out check's core)
bool pairs_eval(Trainer *t, int n, double *exact, Err *e);

#endif
