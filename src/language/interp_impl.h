// interp_impl.h: the interpreter's state, shared by its own files only (interp.c runs stages
// and rounds; interp_inputs.c checks and stores a run's inputs; interp_evict.c decides what the
// trace lets go and plans its recomputing). Nothing else includes it
// (interp_transient.c neither: it knows only what interp_transient.h gives it).
#ifndef STEPFORMER_INTERP_IMPL_H
#define STEPFORMER_INTERP_IMPL_H

#include "choose.h"
#include "interp.h"
#include "interp_transient.h"
#include "packs.h"
#include "par_tune.h"

typedef enum { PH_ROUND, PH_FINISHED } Phase;

enum { INTERP_KEEP_FLOATS = 256 };  // outputs this small (1 KB) are never dropped: cheap to hold

// The floats a new buffer for an output of `need` floats takes: in greedy decoding a little more,
// for the same stage of later rounds, a row longer (a quarter more for small outputs; for large
// ones, whose rows are many, a sixty-fourth).
static inline size_t interp_want_floats(bool greedy, size_t need) {
    enum { SMALL = 1 << 20 };
    return greedy ? need + (need < SMALL ? need / 4 : need / 64) : need;
}

struct Interp {
    const Program *p;
    const Model *m;
    Expander *x;
    int B;                           // examples in the batch (beam search: its hypotheses)
    int rows_in;                     // rows the RunSpec's ids hold: B, or 1 for beam search
    float *ids[PROGRAM_MAX_INPUTS];  // [B, len[s]] each; greedy target: one such block per round
    size_t ids_cap[PROGRAM_MAX_INPUTS];  // floats each ids buffer holds
    int len[PROGRAM_MAX_INPUTS];
    size_t tgt_off;  // floats into ids[tgt] where the current round's [B, len] block starts
    int src, tgt;  // input slots, -1 when the program lacks one
    bool greedy;
    bool prompted;  // decoder-only: greedy decoding continues the prompt (the source ids), not [bos]
    int start_len;  // greedy: the ids the target starts with (1 for [bos], else the prompt's length)
    int max_new;
    bool max_new_cut;  // fewer rounds than asked: the positions ran out (STOP_POSITIONS)
    float **out;       // [stages] output buffers, kept across rewinds for reuse
    size_t *out_size;  // [stages] floats each buffer holds
    int out_cap;
    int n_done;        // stages run: out[0 .. n_done) hold their results
    Phase phase;
    int round;       // greedy: the decode round expanded last
    int next_stage;  // greedy: the ids stage of that round
    int *gen_len;    // [B] tokens generated for each example before its eos
    bool *finished;  // [B] example b has produced eos
    StopReason stop;
    Ablation ablation;  // pieces switched off (none by default)
    size_t trace_floats;  // held by the output buffers and the spare ones (bounded: bounds.h)
    // Greedy decoding keeps whole only the round being run and one round looked at: the
    // outputs of other rounds are evicted (their buffers go to `spare` for later rounds) and
    // recomputed on demand, bit-identical, from the ids and the prelude, which are kept.
    int *round_start;   // [max_new + 1] first stage of each greedy round; round_start[n_rounds]: its end
    int n_rounds;       // rounds expanded
    bool *evicted;      // [out_cap] stage ran, but its output was dropped to save memory
    int viewed_round;   // the round recomputed last for a reader (-1: none)
    float **spare;      // [n_spare] buffers of evicted outputs, for reuse
    size_t *spare_size; // [n_spare] floats each holds
    int n_spare, spare_cap;
    bool pack;    // RunSpec.pack_weights
    // A pass that keeps only what a later reader needs (interp_set_transient): a transient
    // output's buffer goes, once the last stage reading it has run, to a pool (interp_transient.h;
    // its buffers are counted in trace_floats).
    Transient transient;
    Packs own_packs;  // linear weights packed once, when pack and the RunSpec shares none
    Packs *packs;     // the RunSpec's (RunSpec.packs), else &own_packs
    bool cached;      // greedy rounds after the first computed from the round before (rows.h)
    RowsKind *kind;   // [out_cap] what each output is, next to last round's (rows.h)
    // A square of the cached decoder computed as its new rows alone (a ROWS_NEW kind) holds them
    // here, [H, T], for its readers in the round; its output counts as evicted (recomputed whole
    // for a reader). The same stage of the next round takes the buffer over.
    float **newrow;         // [out_cap] NULL for other stages
    size_t *newrow_size;    // [out_cap] floats each holds (counted in trace_floats)
    bool *new_ok;           // [out_cap] interp_new_rows_candidate, set as the stages are indexed
    DecodeChoice choice;  // sampling or beam search instead of greedy's argmax (sample.h)
    Chooser *ch;          // what each round chose, when not greedy
    int *tokens, *parents;  // [B] a round's choice: the token each row appends, the row it extends
    const float **rows;     // [B] scratch: each row's last scores
    float *gen;             // [B, max_new] scratch: the tokens generated so far
    ThreadTune tune;        // interp_run's thread count for each greedy round (par_tune.h)
    // A trace budget (interp_evict.c): outputs read only within their block are dropped, oldest
    // first, while the trace holds more than budget_floats, and recomputed when read.
    size_t budget_floats;   // 0: no budget
    bool budget_given;      // RunSpec.trace_budget_given: refuse a pass it cannot hold (else raise it)
    size_t min_floats;      // the least budget this pass runs in (interp_min_trace_bytes)
    int *seg;               // [out_cap] each stage's block: a run of stages of one round, part and layer
    bool *keep;             // [out_cap] read by a stage of another block: never dropped for the budget
    bool *pinned;           // [out_cap] changed by interp_set_values: it cannot be recomputed
    bool *mark;             // [out_cap] scratch for recomputing (all false between calls)
    int n_indexed;          // stages whose seg and keep are set
    int evict_from;         // no stage before it holds an output the budget may drop
    // A reader's pointer stays valid until interp_release_reads (or a step, a rewind, new inputs):
    // what a reader read in the current epoch is never dropped.
    unsigned read_epoch;    // counts releases
    unsigned *seg_read;     // [out_cap] the epoch in which each block was last read (0: never)
    unsigned *stage_read;   // [out_cap] the same for each stage: those of this epoch are held
    // Weights the model holds as half, widened for a reader (interp_wide.c).
    float **wide;           // [n_params] a widened copy of weight w, or NULL
    unsigned *wide_read;    // [n_params] the epoch it was last asked for in
    size_t wide_floats;     // the copies' floats
};

// Stage i of the expanded program (interp_stage without its bounds check, for the files that
// interp.c calls: no file of the floor calls round in a circle).
static inline const Stage *interp_stage_at(const Interp *it, int i) {
    int n;
    return &expander_stages(it->x, &n)[i];
}

// ---- interp_wide.c ----
// Weight w as float32: the model's own, or a widened copy of a weight held as half, valid as a
// read stage's output is (until a release, step, rewind or new inputs); NULL when out of memory.
const float *interp_weight(Interp *it, int w);
// Whether input j of st is a weight held as half that its kernel reads so: then *w says where.
bool interp_weight_half(const Interp *it, const Stage *st, int j, OpWeight *w);
void interp_wide_free(Interp *it);

// ---- interp_evict.c ----
// Greedy round of stage i, or -1 outside the rounds.
int interp_round_of(const Interp *it, int i);
// Moves stage i's buffer to the spares, for a later stage to take; false when the list of
// spares cannot grow (nothing changes then).
bool interp_to_spares(Interp *it, int i);
// Drops round k's outputs (but the small ones), their buffers kept as spares.
void interp_evict_round(Interp *it, int k);
// Sets seg, keep and new_ok for the stages expanded since the last call (n_indexed on).
void interp_index_stages(Interp *it);
// With a budget, drops spares and then outputs until `need` more floats fit, sparing the block
// being run, the block `protect` (-1: none), what was read since the last release when
// `reading`, and, while it can, the block last run and the blocks read in the epoch before.
// `reuse`: the floats of the one buffer `need` is for (0: several, or none), so that an output
// of that size it drops becomes the spare the buffer takes: no fresh pages to fault and zero.
void interp_make_room(Interp *it, size_t need, size_t reuse, int protect, bool reading);
// The floats of stage i's buffer when recomputing it recomputes it alone (its inputs held); else 0.
size_t interp_one_buffer(Interp *it, int i);
// Sets min_floats for the stages expanded so far; a budget below it is refused (e set) when
// `refuse` and the user gave it, else raised to it.
bool interp_budget_check(Interp *it, bool refuse, Err *e);
// Whether stage i's weight is packed once and kept (packs.h): see interp_evict.c.
bool interp_pays_to_pack(const Interp *it, int i, const Stage *st);
// Marks (it->mark) stage i and the dropped stages it needs recomputed, and returns the first:
// the caller runs the marked stages in order, clearing the marks.
int interp_plan_recompute(Interp *it, int i);
// The floats recomputing stage i would allocate (the plan made and cleared again).
size_t interp_recompute_floats(Interp *it, int i);
// A reader read stage i: its block counts as read last (spared while the budget allows).
void interp_note_read(Interp *it, int i);

// Whether stage i of a cached round may be held as its new rows alone (rows.h's ROWS_NEW):
// heads of an op that computes them so, every reader in the round taking them so
// (rows_new_reader; one that takes them only when it holds its own so, in turn).
bool interp_new_rows_candidate(const Interp *it, int i);
// Floats of heads' new rows: [H, X] of [H, T, X].
static inline size_t interp_new_rows_floats(const Stage *st) {
    return (size_t)shape_numel(&st->shape) / (size_t)st->shape.dim[st->shape.ndim - 2];
}

// ---- interp_cached.c ----
// The same stage as i in the round before, when i can be computed from it (rows.h); -1 when it
// cannot (the first round, a batch, an ablation, rounds that differ): then i runs whole.
int interp_cached_from(const Interp *it, int i);
// Hands stage j's buffer (the same stage, last round) to stage i, to grow in place; false, handing
// nothing, when it must stay (a round a reader looks at, a small output, an evicted or pinned one).
bool interp_take_output(Interp *it, int i, int j);
// What stage i's inputs are next to last round's (kin; stage `from` its twin there); returns the
// ROWS_NEW kind when stage i keeps its new rows alone, else ROWS_WHOLE.
RowsKind interp_cached_kinds(const Interp *it, int i, int from, RowsKind kin[STAGE_MAX_IN]);
// The floats interp_new_rows adds to the trace for stage i.
size_t interp_new_rows_growth(const Interp *it, int i, int from);
// Runs stage i as its new rows alone (kind) into newrow[i]; its output counts as evicted.
bool interp_new_rows(Interp *it, int i, int from, const float *const in[STAGE_MAX_IN],
                     const RowsKind kin[STAGE_MAX_IN], RowsKind kind, Err *e);

// Checks the spec's inputs against the program and the model, changing nothing.
bool interp_check_inputs(const Interp *it, const RunSpec *s, Err *e);
// Copies checked inputs in (a greedy target gets room for every round) and starts the chooser.
bool interp_store_inputs(Interp *it, const RunSpec *s, Err *e);

#endif
