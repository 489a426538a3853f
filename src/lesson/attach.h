// attach.h: narration a lesson attaches to stages by name, so that the backward pass's steps and
// Adam's have prose of their own, and a section about one kind of stage is shown on those stages
// and nowhere else.
//
// A fenced block tagged `steps` under a section's heading attaches that section (from its heading
// to the next heading or program cell) to the stages it names, one `key: value` a line:
//
//   forward: layer_norm  encoder.layers.*.self_attn.*   stages of the forward pass
//   backward: loss  layer_norm  *.ff.*  adam  after      steps of the backward pass
//
// Each word is an op's name (`layer_norm`: every stage of that op), or a pattern over stage ids
// (with a dot or a `*`, matched as fnmatch(3) does against the id without its `step.N.` prefix),
// or, under `backward:` only, one of the steps that are not a stage's kernel: `loss` (the loss's
// own step), `adam` (Adam's step for every weight) and `after` (the loss after Adam's step).
//
// The window shows each stage the first section that names it. A stage that no section names
// shows the prose of its own cell (parts.h); the loss's, Adam's and the last step then show none.
// An attached section is shown only on the stages it names, never in a cell's narration or on a
// card.
#ifndef STEPFORMER_ATTACH_H
#define STEPFORMER_ATTACH_H

#include <stdbool.h>

#include "err.h"
#include "ops.h"

// A step the window can show: a forward stage, or one of the backward pass's steps.
typedef enum { STEP_FORWARD, STEP_BACKWARD, STEP_LOSS, STEP_ADAM, STEP_AFTER, STEP_KIND_COUNT } StepKind;
extern const char *const step_kind_names[STEP_KIND_COUNT];  // "forward", "backward", "loss", ...

enum { ATTACH_MAX_WORDS = 24, ATTACH_WORD_MAX = 80 };

typedef enum { MATCH_OP, MATCH_ID, MATCH_KIND } MatchBy;

typedef struct {
    StepKind kind;   // STEP_FORWARD or STEP_BACKWARD for MATCH_OP and MATCH_ID
    MatchBy by;
    Op op;                        // MATCH_OP
    char pattern[ATTACH_WORD_MAX];  // MATCH_ID: a pattern over stage ids; the word as written
    int line;                     // where the word stands (messages point there)
} StepWord;

typedef struct {
    int line;         // the `steps` block's fence
    int block;        // its rich block
    int begin, end;   // the section's blocks [begin, end): its heading to the next heading or cell
    StepWord words[ATTACH_MAX_WORDS];
    int n_words;
} Attachment;

// Parses the `steps` block of source lines [first, last] (the fences excluded) of `path`.
bool attach_parse(Attachment *a, const char *path, char *const *lines, int first, int last, Err *e);

// Whether a word names this step: kind, and for a stage's step (forward or backward) its op and id.
bool attach_word_matches(const StepWord *w, StepKind kind, Op op, const char *id);

#endif
