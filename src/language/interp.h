// interp.h: the interpreter. It runs a program's stages one kernel at a time and keeps every
// stage's output in a trace, which the command line, the window and the trainer read.
//
// Two ways to run the decoder:
//   teacher forcing: the target ids are given; the decode loop runs once over all of them.
//   greedy:          the target starts as [bos]; each round appends the argmax of the last
//                    row, until eos or max_new tokens, so the trace holds one decoder pass per
//                    generated token and the attention maps grow a row at a time. Older
//                    rounds are recomputed when read (interp_held_bytes).
#ifndef STEPFORMER_INTERP_H
#define STEPFORMER_INTERP_H

#include "ablate.h"
#include "choose.h"
#include "model.h"
#include "packs.h"
#include "program.h"
#include "rows.h"

// STOP_POSITIONS: the rounds asked for did not fit the model's positions; it stopped at the last.
typedef enum { STOP_NONE, STOP_EOS, STOP_MAX_LEN, STOP_POSITIONS, STOP_COUNT } StopReason;
extern const char *const stop_names[STOP_COUNT];

typedef struct {
    const float *src;  // [B, S] source ids (padded with pad_id to one length); for a decoder-only
                       // program (program_decoder_only) the prompt greedy decoding continues
    int S;
    const float *tgt;  // [B, T] target ids (teacher forcing), or NULL for greedy decoding
    int T;
    int max_new;  // greedy: the most tokens to generate (beyond bos)
    int batch;    // B, examples run together (0 means 1); every output holds B examples
    bool pack_weights;  // the model's weights stay as they are while the Interp lives, so each
                        // linear weight is packed for the GEMM once (training leaves it false)
    bool cached;        // greedy: the cached decoder (also a program's `decode ... cached`): each
                        // round computes the new position's rows and copies the rest (rows.h)
    DecodeChoice choice;  // without a target: greedy (all zero), sampling or beam search (sample.h,
                          // choose.h); beam search runs its k hypotheses as the batch's rows
    size_t trace_budget;  // bytes the trace's outputs may hold (0: no budget). Past it, outputs
                          // read only inside their block (a layer, say) are dropped and
                          // recomputed when read, the same bits; what blocks pass on is kept
    bool trace_budget_given;  // the user chose it: interp_new refuses a pass it cannot hold. A
                              // default budget is raised to the least the pass needs instead
    Packs *packs;  // with pack_weights: packs kept by the caller for every pass on this model (a
                   // session's: a new pass packs nothing again), or NULL: the Interp's own
} RunSpec;

typedef struct Interp Interp;

// Checks the program against the model and the inputs, and expands what it can.
Interp *interp_new(const Program *p, const Model *m, const RunSpec *spec, Err *e);
void interp_free(Interp *it);

// Runs the next stage: STEP_RAN, STEP_DONE when the pass was already complete (nothing ran), or
// STEP_FAILED with e set.
typedef enum { STEP_FAILED, STEP_RAN, STEP_DONE } StepStatus;
StepStatus interp_step(Interp *it, Err *e);
// Runs to the end. Greedy rounds run on the thread count par_tune.h picks from the rounds
// before them (fewer threads when a core is busy with other work); the bits are the same.
bool interp_run(Interp *it, Err *e);
// The greedy rounds interp_run has timed, and how many of them ran on fewer threads than the
// process has (a probe, or a busy core).
void interp_threads_used(const Interp *it, int *rounds, int *rounds_fewer);
// Runs until stage `id` has run (false with a message if the pass has no such stage).
bool interp_run_to(Interp *it, const char *id, Err *e);
// Stage i's output is read only by later stages of the pass (transient[i], for every stage):
// once the last of them has run, its buffer is reused by a later transient stage (the one
// released last, still in the cache) and interp_output gives NULL for it. For a teacher-forced
// pass run from its start each time, where nothing else reads those outputs: training, whose
// backward pass says which outputs it reads (backward_transient). False (e set) for a greedy
// pass, or out of memory; then every output is kept as before.
bool interp_set_transient(Interp *it, const bool *transient, Err *e);
// Forgets the outputs from stage `index` on, so stepping resumes there.
void interp_rewind(Interp *it, int index);
bool interp_done(const Interp *it);
// Writes n values into stage i's output from element `first` (of its [B, shape]) and forgets
// every later stage, so the pass re-runs from there on the changed numbers: what activation
// patching and the gradient checks do. Stage i must have run, in a teacher-forced pass (a
// greedy pass recomputes old rounds and would lose the change).
bool interp_set_values(Interp *it, int i, size_t first, const float *v, size_t n, Err *e);

// New inputs: everything that depends on them is forgotten and the stage list rebuilt;
// stages that do not depend on them keep their outputs. Returns the first stage to re-run.
bool interp_set_inputs(Interp *it, const RunSpec *spec, int *first_affected, Err *e);

// Switches pieces off (or back on: an empty Ablation) and re-runs the pass from its start on
// the inputs of spec (which must be the current ones: what the run was opened with).
bool interp_set_ablation(Interp *it, const Ablation *ab, const RunSpec *spec, Err *e);
const Ablation *interp_ablation(const Interp *it);

// ---- reading the trace ----
int interp_n_stages(const Interp *it);  // expanded so far
int interp_n_done(const Interp *it);    // stages run (their outputs are in the trace)
const Stage *interp_stage(const Interp *it, int i);
// NULL if stage i has not run (or recomputing it ran out of memory). Under a trace budget the
// pointer stays valid until interp_release_reads, the next step, a rewind or new inputs: read
// what you need, use it, then release, so the budget can let it go again.
const float *interp_output(const Interp *it, int i);
// Row t of stage i's output (its first axis; batch 1) into out [the row's floats]: copied when
// held, else computed from its inputs' rows on the kernels the pass ran (the same bits as the
// pass's row) without recomputing the whole stage. False when that cannot be done (an op that
// is not row-wise, an ablation, a batch, or out of memory): then read interp_output whole.
bool interp_output_row(const Interp *it, int i, int t, float *out);
// Row t of stage i's output seen as rows of its last axis, of example b: in buf [that axis] when
// a matrix's row can be read alone (interp_output_row; buf may be NULL), else a pointer into the
// whole output (interp_output); NULL when it cannot be read.
const float *interp_read_row(const Interp *it, int i, int b, size_t t, float *buf);
// Readers are done with every pointer interp_output and interp_input gave them (the window
// calls it once a frame, the backward pass once a stage, a dump once a tensor).
void interp_release_reads(const Interp *it);
// The budget the pass keeps to, in bytes (RunSpec.trace_budget, raised to the least when it was
// not given); 0: none.
size_t interp_trace_budget(const Interp *it);
int interp_find(const Interp *it, const char *id);    // stage index, or -1
// A stage as a user names it (--to, a link's stage=): its exact id, or else an id without a
// greedy round's "step.K." prefix, which names the latest round's stage of that name
// (*by_round set). Otherwise -1 with an error naming `what` and up to four ids that end in it.
int interp_find_stage(const Interp *it, const char *id, const char *what, bool *by_round, Err *e);
// Stage k's output as JSON, {"id": ..., "shape": [...], "values": [...]}, each float exact (a
// masked -inf is null); malloc'd, NULL when out of memory. What `lesson --print ID --json`
// prints, and what the browser page reports of a stage for its tests.
char *interp_stage_json(const Interp *it, int k);
// The data behind input j of stage i (weights, inputs or earlier outputs).
const float *interp_input(const Interp *it, int i, int j);
const ProgramOutput *interp_outputs(const Interp *it, int *n);
// The ids of an input slot as they stand now ([B, len]; row 0 is the first example).
const float *interp_input_ids(const Interp *it, int slot, int *len);
// Generating: the generated ids (without bos or the prompt, and without the final eos) and why it
// stopped. Beam search: the best finished hypothesis.
const float *interp_generated(const Interp *it, int *n, StopReason *why);
// The same for example b of a batch (ids of row b of the target; *n tokens before its eos).
const float *interp_generated_row(const Interp *it, int b, int *n);
int interp_batch(const Interp *it);
// Sampling or beam search: what each round chose (choose.h); NULL for greedy decoding.
const Chooser *interp_chooser(const Interp *it);
// The scores sampling and beam search choose from in the round whose argmax is stage `argmax`:
// the stage the argmax reads, or that stage's input when it is a softmax (the logits). -1: none.
int interp_scores_of(const Interp *it, int argmax);
// Greedy decoding: the ids the target started with, before the first generated one (1: [bos];
// a decoder-only program's prompt: its length); 0 in a teacher-forced pass.
int interp_start_len(const Interp *it);
// The least trace budget this pass runs in: every output read across blocks (the residual
// stream, the masks) and the largest block (of the prelude and the last greedy round: earlier
// rounds are let go whole). interp_new refuses a budget below it.
size_t interp_min_trace_bytes(const Interp *it);
// Bytes the outputs hold now: what a trace budget bounds (interp_held_bytes adds the packed weights).
size_t interp_trace_bytes(const Interp *it);
// Bytes the trace's output buffers hold now. Greedy decoding keeps whole only the round being
// run and the one read last; reading a stage of another round recomputes that round, the same
// bits, so the memory grows with the rounds, not with their square.
size_t interp_held_bytes(const Interp *it);
// How stage i was computed by the cached decoder (rows.h): ROWS_WHOLE (whole, or not cached),
// ROWS_SAME (copied from the round before), ROWS_GROWN (one new row computed), ROWS_SQUARE /
// ROWS_SQUARE0 (a new row and column of a square), ROWS_NEW and the square's ROWS_NEW_SQUARE,
// ROWS_NEW_HIDDEN, ROWS_NEW0 (heads' new row alone computed and kept; read whole, recomputed).
RowsKind interp_stage_rows(const Interp *it, int i);
const Program *interp_program(const Interp *it);
const Model *interp_model(const Interp *it);

#endif
