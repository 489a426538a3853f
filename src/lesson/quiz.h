// quiz.h: a lesson's questions (question.h) answered from the trace, and a class's answer graded.
//
// The rules:
//   argmax  the answer is the column with the largest value in the row (the first on a tie),
//           0-based; a typed answer is that column's number, or its token when no other column
//           of the row has the same token.
//   value   the element; a typed number is right when it rounds to the same number at the
//           question's decimals as the true value (round half away from zero).
//   token   the argmax of the row (a target token id); a typed answer is the token's text or
//           its id.
#ifndef STEPFORMER_QUIZ_H
#define STEPFORMER_QUIZ_H

#include "interp.h"
#include "lesson.h"

typedef struct {
    int stage;         // the stage asked about
    int index;         // argmax: the column; token: the token id; value: the element's column
    double value;      // the element (argmax, token: the largest value of the row)
    int row, head;     // what was read: the row (0-based) and head (1-based; 0 without heads)
    char text[96];     // the answer as the window says it: "3 (\"a\")", "0.42", "'x' (id 7)"
    char precise[48];  // the value to more digits ("0.421875")
} Answer;

typedef enum { GRADE_RIGHT, GRADE_WRONG, GRADE_MALFORMED, GRADE_COUNT } Grade;
extern const char *const grade_names[GRADE_COUNT];

// The stage question q is asked at: q->at (an exact id, or an id without a greedy round's
// step.K., meaning the last round's) or the first stage of its cell. -1 with an error naming
// the lesson's file:line when the pass has no such stage (it must have been expanded: run it).
int quiz_stage(const Lesson *l, const Question *q, const Interp *it, Err *e);
// Computes the answer from the stage's output (which must have run). False with an error naming
// file:line for a head, row or column out of the tensor's range, or a kind the tensor cannot take.
bool quiz_answer(Answer *a, const Lesson *l, const Question *q, const Interp *it, Err *e);
// Grades a typed answer. GRADE_MALFORMED (with a message in e) for text that is not an answer
// of the question's kind: not a number, a position out of range, a token not in the vocabulary.
Grade quiz_grade(const Answer *a, const Question *q, const Interp *it, const char *typed, Err *e);
// Grades a click on column `column` of the row asked about (argmax questions).
Grade quiz_grade_column(const Answer *a, int column);

#endif
