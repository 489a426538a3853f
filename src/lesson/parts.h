// parts.h: which blocks of a lesson's narration each place in the window shows, so that every
// block is shown once, in order: the opening card (before the first stage), the narration of
// each cell that makes stages, and the closing card (after the last stage).
//
// The rule: the narration of the first cell with stages is the prose just before it (since the
// cell before it; when no cell stands before it, from its section's heading on); the narration
// of each later cell with stages runs from the end of the previous cell with stages, taking the
// prose of the cells between that make no stages; the opening card holds what comes before the
// first one's narration, the closing card what comes after the last cell with stages.
//
// A section attached to steps by a `steps` block (attach.h) is left out of all of these: it is
// shown on the steps it names (lesson_narration_of).
#ifndef STEPFORMER_PARTS_H
#define STEPFORMER_PARTS_H

#include "interp.h"
#include "lesson.h"

typedef struct {
    int begin, end;  // blocks [begin, end)
    int of;          // whose blocks of the range are shown: NOT_ATTACHED (a cell's narration or a
                     // card: attached sections are skipped), or the index of an Attachment
} BlockRange;

typedef struct {
    BlockRange opening, closing;
    BlockRange *cells;  // [n_cells]: the narration shown with the stages of each cell (empty: none)
    int n_cells;
} LessonParts;

// Splits the narration; has_stages[c] says whether cell c makes at least one stage.
bool lesson_parts(LessonParts *p, const Lesson *l, const bool *has_stages, Err *e);
// The same, for the cells that the stages expanded so far come from (as the window has them).
bool lesson_parts_of_run(LessonParts *p, const Lesson *l, const Interp *it, Err *e);
void lesson_parts_free(LessonParts *p);
// Whether a block is shown as narration (program and lesson code blocks are not).
bool lesson_block_shown(const RichBlock *b);
// Whether block i is shown in range r: shown as narration, and r's (attached or not).
bool lesson_range_shows(const Lesson *l, BlockRange r, int i);

// The narration shown with a step: the first section attached to it; else, for a stage's step
// (forward or backward, st its stage), the narration of its cell; else none (an empty range).
BlockRange lesson_narration_of(const LessonParts *p, const Lesson *l, StepKind kind, const Stage *st);

#endif
