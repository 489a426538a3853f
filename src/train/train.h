// train.h: training a model in C, in two layers.
//
// TrainState: one optimisation step on a given batch: the interpreter runs the program with
// teacher forcing over B padded examples, the loss is cross-entropy (with label smoothing) of
// the generator's logits against the next tokens (a classifier's: of its one row of class
// scores against each example's class), the backward pass walks the same stages, and Adam
// updates the weights in place.
//
// Trainer: a task (tasks.h) drives it: batches drawn from a seed (skipping the held-out set),
// the learning-rate schedule, held-out exact-match accuracy by greedy decoding, and saving the
// model with its vocabulary. Or the text task (text.h): a decoder-only program learns a text
// file's characters from windows drawn from its training lines, and is scored by its
// cross-entropy on the held-out lines.
#ifndef STEPFORMER_TRAIN_H
#define STEPFORMER_TRAIN_H

#include "backward.h"
#include "optim.h"
#include "pairs.h"
#include "tasks.h"
#include "text.h"

typedef struct {
    int batch, src_len, tgt_len;  // B, S, T: every batch is padded to these; T = 0: a classifier
                                  // (no target input; one class label per example)
    float label_smoothing;
    float beta1, beta2, eps;      // Adam
    int pass_examples;            // examples each pass of a half takes (train_step.c); 0: as many as
                                  // keep its trace within PASS_TRACE_BYTES. Never changes a bit.
    int hold_second;              // tests: 1 holds the second thread back until the first has
                                  // started a pass of the second half (its own half done), 2 until
                                  // every pass is done (the first runs them all). 0 in use; never
                                  // changes a bit.
} StepConfig;

typedef struct {
    float loss;       // mean over the target tokens that count
    float token_acc;  // how many of them the argmax got right
    int tokens;
} StepStats;

typedef struct TrainState TrainState;

// Training machinery for m (whose weights are updated in place) running `program`.
TrainState *train_state_new(Model *m, const Program *program, const StepConfig *c, Err *e);
void train_state_free(TrainState *ts);
// Forward, loss and backward on src [B, S], tgt_in [B, T] (bos first) and tgt_out [B, T] (the
// next tokens; pad where nothing is to be predicted). A classifier (T = 0) takes no tgt_in and
// tgt_out [B]: each example's class. The gradients are then in the Grads.
bool train_state_step(TrainState *ts, const float *src, const float *tgt_in, const float *tgt_out,
                      StepStats *stats, Err *e);
// Builds the passes for batches shaped like these (any ids) and checks, before any step, that
// the program publishes logits shaped for the labels and that the loss reaches the weights.
bool train_state_prepare(TrainState *ts, const float *src, const float *tgt_in, Err *e);
// One Adam update of the weights from the last step's gradients.
void train_state_update(TrainState *ts, float lr);
Grads *train_state_grads(TrainState *ts);
// How many of the last step's forward and backward passes a thread other than their half's
// own ran (train_step.c: the halves share their work).
int train_state_helped(const TrainState *ts);

typedef enum {
    SCHED_PEAK,      // linear warm-up to lr, then lr * sqrt(warmup / step)
    SCHED_PAPER,     // lr * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5): the paper's (lr = factor)
    SCHED_CONSTANT,  // lr throughout
    SCHED_COUNT
} Schedule;
extern const char *const schedule_names[SCHED_COUNT];

typedef struct {
    Task task;             // the generated task trained, unless `data` is set
    const char *data;      // the text task: the UTF-8 file it models (then `task` is not read); else NULL
    bool pairs;            // the translation task: `data` holds SOURCE<TAB>TARGET lines, read by the Marian
                           // folder `tokenizer`'s two tokenizers, each side at most `block` tokens
    int block;             // the text task: characters a window feeds the model (its positions)
    bool shuffle;          // the text task: shuffle the lines (from `seed`) before the split
    const char *tokenizer; // the text task: a tokenizer.json whose tokens the text is read as
                           // (NULL: characters); the model is then saved as a hub folder
    StDtype dtype;         // how that folder's model.safetensors stores the weights
    Schedule schedule;
    ModelConfig model;     // sizes; vocabulary sizes and special ids are set from the task
    const char *init;      // start from this model file instead of random weights (or NULL)
    const char *program;   // the lesson whose program is trained (NULL: the standard one)
    const char *config;    // configuration items over `model` ("k=v ..."; NULL for none)
    int steps, batch;
    unsigned long long seed;
    float lr;              // the peak (SCHED_PEAK), the factor (SCHED_PAPER) or the rate (CONSTANT)
    int warmup;            // steps of warm-up
    float label_smoothing;
    int held_out;          // examples kept out of training for the accuracy check (generated tasks)
} TrainConfig;

// Defaults: a small model that learns every task: d_model 48, 4 heads, 2+2 layers, d_ff 128.
TrainConfig train_defaults(Task task);
// The text task's defaults on the file `data`: block 32, batch 32, lr 0.003; d_model 64, 4 heads,
// 2 decoder layers, d_ff 256; no label smoothing; the program lessons/text-model.md.
TrainConfig train_text_defaults(const char *data);

typedef struct Trainer Trainer;

Trainer *trainer_new(const TrainConfig *c, Err *e);
void trainer_free(Trainer *t);
// One step on a fresh batch. A loss that is not finite stops with an error and puts back the
// weights as they were before the step that broke them.
bool trainer_step(Trainer *t, StepStats *stats, Err *e);
int trainer_steps_done(const Trainer *t);
float trainer_lr(const Trainer *t);
// Exact-match accuracy of greedy decoding on the first n held-out examples (all if n <= 0).
// Not for the text task (an error).
bool trainer_eval(Trainer *t, int n, double *exact, Err *e);
// The text task: the model's mean cross-entropy, in nats a character, over every label of the
// held-out windows (text.h: each held-out character but the first); *labels gets their count.
bool trainer_text_loss(Trainer *t, double *nats, size_t *labels, Err *e);
const TextData *trainer_text(const Trainer *t);  // the text task's data; NULL for a generated task
const PairData *trainer_pairs(const Trainer *t);  // the translation task's pairs, or NULL
// The translation task's check, on any pairs: how many of pairs [from, from + n) of d greedy
// decoding by m (running p, sources padded to S, at most T - 1 tokens written) translates
// exactly, its target without `</s>`; added to *right.
bool pairs_exact(const PairData *d, const Program *p, Model *m, int S, int T, int from, int n, int *right, Err *e);
// Saves the model: a .safetensors file with its configuration and vocabulary, or, when the text
// was read as a tokenizer's tokens, a folder as the hub lays one out (hub_save).
bool trainer_save(const Trainer *t, const char *path, Err *e);
const Model *trainer_model(const Trainer *t);
const TrainConfig *trainer_config(const Trainer *t);
const Program *trainer_program(const Trainer *t);  // the program being trained
Model *trainer_model_mut(Trainer *t);

// The vocabulary of a task: <unk> <pad> <bos> <eos> then its alphabet, one character a token.
bool task_vocab(Task task, Vocab *v, Err *e);

#endif
