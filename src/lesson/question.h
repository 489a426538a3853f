// question.h: a question a lesson asks the class at a stage, answered from the trace.
//
// A fenced block tagged `question` in a lesson's narration, one `key: value` a line:
//
//   at: encoder.layers.0.self_attn.weights   the stage (default: the first stage of the cell
//                                            whose narration holds the block)
//   ask: Which key gets the most weight from the query at position 2?
//   kind: argmax | value | token
//   head: 2        1-based, for a [heads, rows, columns] tensor (default 1)
//   row: 2         0-based row (a query position); token: default the last row
//   column: 3      value: 0-based column
//   decimals: 2    value: how many decimals the answer is given to (default 2)
//
// The answer is never written in the lesson: quiz.h computes it from the trace when the lesson
// runs. argmax: the column with the largest value in a row; value: one element; token: the
// argmax of a row of the generator's probabilities (or logits), as a target token.
#ifndef STEPFORMER_QUESTION_H
#define STEPFORMER_QUESTION_H

#include <stdbool.h>

#include "err.h"

typedef enum { QUESTION_ARGMAX, QUESTION_VALUE, QUESTION_TOKEN, QUESTION_KIND_COUNT } QuestionKind;
extern const char *const question_kind_names[QUESTION_KIND_COUNT];

enum { QUESTION_ID_MAX = 112, QUESTION_ASK_MAX = 256, QUESTION_MAX_DECIMALS = 6, QUESTION_MAX_TRIES = 9 };

typedef struct {
    int line;                    // the block's first line (its fence)
    int block;                   // its rich block (the window draws the question instead)
    int cell;                    // the program cell whose narration holds it, or -1 (none after it)
    char at[QUESTION_ID_MAX];    // the stage id; "" for the first stage of `cell`
    int at_line;                 // the line of `at:` (messages about the stage point there)
    char ask[QUESTION_ASK_MAX];  // what the window shows
    QuestionKind kind;
    int head;      // 1-based
    int row;       // 0-based; -1: not given
    int column;    // 0-based; -1: not given
    int decimals;  // value
    int tries;     // answers the class may give before the answer is shown (1 to QUESTION_MAX_TRIES)
} Question;

// Parses the `question` block of source lines [first, last] (the fences excluded) of `path`.
bool question_parse(Question *q, const char *path, char *const *lines, int first, int last, Err *e);

#endif
