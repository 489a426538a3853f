// against.h: a mistake lesson beside its correct program. A lesson's `correct:` setup key names
// the lesson whose program is right; against_open runs that program on the mistake's model (or
// its `correct_model:`) and on exactly the mistake's input and target, and against_match lines up
// the two traces stage by stage (by stage id) and finds the first stage, in the mistake's pass
// order, where they part: the window's Compare view and `stepformer lesson FILE --against-correct`
// both read it.
//
// Greedy decoding: each program decodes on its own, round K matched with round K (step.K.ID).
// When one writes fewer tokens, the other's later rounds have no counterpart. The first
// difference always comes at or before the first round whose tokens differ.
#ifndef STEPFORMER_AGAINST_H
#define STEPFORMER_AGAINST_H

#include "session.h"

// Two values are the same when they are equal (both -inf where masked) or differ by at most this.
#define AGAINST_TOLERANCE 1e-5f

typedef enum {
    MATCH_SAME,     // the correct program has the stage, of the same shape and values
    MATCH_VALUES,   // same shape, some value further apart than the tolerance
    MATCH_SHAPE,    // another shape
    MATCH_MISSING,  // the correct program has no stage of this id
    MATCH_COUNT
} MatchKind;
extern const char *const match_kind_names[MATCH_COUNT];

typedef struct {
    int other;        // the correct program's stage of the same id, or -1
    MatchKind kind;
    float max_diff;   // the largest |mistake - correct| (MATCH_SAME / MATCH_VALUES; +inf where one is masked)
} StageMatch;

typedef struct {
    StageMatch *stage;  // [n]: one per stage of the mistake's pass
    int n;
    int first;          // the first stage of the mistake that differs (VALUES or SHAPE), or -1
    int n_missing;      // the mistake's stages without a counterpart
    int n_unmatched;    // the correct program's stages without one in the mistake
} Against;

// Opens the correct program of the mistake session `m` (opened from `spec`) in `c`, and runs
// both passes to their ends. An error when m's lesson names no correct program.
bool against_open(Session *c, Session *m, const SessionSpec *spec, Err *e);
// Matches two finished passes. against_free releases it.
bool against_match(Against *a, const Interp *mistake, const Interp *correct, Err *e);
void against_free(Against *a);
// The largest |a - b| over n values: 0 where both are equal (masked in both), +inf where only one
// is finite.
float against_max_diff(const float *a, const float *b, size_t n);

#endif
