// train_job.h: training a task on a worker thread while the window stays responsive.
//
// The worker owns the Trainer. It publishes what the window shows, the loss and accuracy
// curves, held-out checks and the attention of one fixed example, as a snapshot. The window
// copies the snapshot under a lock once a frame. The window never touches the model while the
// worker runs.
#ifndef STEPFORMER_TRAIN_JOB_H
#define STEPFORMER_TRAIN_JOB_H

#include "train.h"

enum { TRAIN_POINTS = 1024, TRAIN_EVALS = 64, TRAIN_ATT = 4 * 32 * 32, TRAIN_TOKENS = 32 };

typedef struct {
    Task task;
    ModelConfig cfg;
    bool running;     // the worker is training
    bool stopping;    // a stop was asked for and the worker has not stopped yet
    int steps;        // done so far
    double seconds;   // of training
    float lr;
    // Curves: point k covers `every` steps (the list thins out as it grows).
    float loss[TRAIN_POINTS], acc[TRAIN_POINTS];
    int n_points, every;
    // Held-out exact match by greedy decoding, every few hundred steps.
    float eval[TRAIN_EVALS];
    int eval_step[TRAIN_EVALS], n_evals;
    // The fixed example, decoded greedily with the current weights.
    char src[64], out[64];
    char src_tok[TRAIN_TOKENS][8], out_tok[TRAIN_TOKENS][8];  // labels; out starts with <bos>
    int heads, T, S;           // cross-attention of the last decoder layer: [heads, T, S]
    float cross[TRAIN_ATT];
    int example_step;          // when it was decoded
    unsigned version;          // changes with every new example snapshot (image cache key)
    char error[300];
} TrainSnapshot;

typedef struct TrainJob TrainJob;

TrainJob *train_job_new(void);
void train_job_free(TrainJob *j);  // stops the worker first
// Starts training `task` from fresh weights (the defaults of train.h). Any earlier job's model
// is dropped.
bool train_job_start(TrainJob *j, Task task, Err *e);
// Runs the worker's steps for about budget_ms where the build has no threads (the browser):
// call it once a frame. A no-op where the worker is a thread.
void train_job_pump(TrainJob *j, double budget_ms);
// Asks the worker to stop after its current step, without waiting: the snapshot shows
// `stopping` until it has, then `running` turns false.
void train_job_ask_stop(TrainJob *j);
// Asks the worker to stop and waits for it.
void train_job_stop(TrainJob *j);
// Whether the worker is still training (true while it is stopping).
bool train_job_running(TrainJob *j);
void train_job_snapshot(TrainJob *j, TrainSnapshot *out);
// Saves the model trained so far (when stopped).
bool train_job_save(TrainJob *j, const char *path, Err *e);

// The example the view follows for each task.
const char *train_example(Task task);

#endif
