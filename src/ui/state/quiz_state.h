// quiz_state.h: the window's side of a lesson's questions (quiz.h), as the App holds it. The
// window (features/app_quiz.c) stops at a question's stage, takes an answer (typed text + Enter, or a click on a cell for an argmax question),
// says right or wrong with the true value, and goes on.
//
// Keys while a question waits: typed text goes to the answer (digits do not pick heads);
// Enter grades it (a question with `tries: N` takes N answers before it shows the answer);
// Backspace; Right reveals the answer (a teacher is never stuck), and Right again goes on; Esc
// leaves the question unanswered. With no question waiting, T switches presenter mode (answers
// are taken but not graded on screen until Right reveals them), and A asks the stage's question
// again.
#ifndef STEPFORMER_QUIZ_STATE_H
#define STEPFORMER_QUIZ_STATE_H

#include "quiz.h"

typedef enum { QUIZ_NONE, QUIZ_WAITING, QUIZ_TOLD, QUIZ_PHASE_COUNT } QuizPhase;
extern const char *const quiz_phase_names[QUIZ_PHASE_COUNT];

typedef struct {
    bool started;             // set up for the pass of App.generation `generation`
    unsigned generation;      // (another pass starts over)
    int place;                // the stage on screen at the last look, and whether a card was:
    bool on_card;             // a change of place is an arrival,
    bool arrived;             // which asks the stage's question (if it has one not yet told)
    unsigned long long done;  // bit k: question k was asked and left (the first 64)
    int q;                    // the question on screen, or -1
    QuizPhase phase;
    Answer answer;            // its true answer
    char typed[64];           // what is being typed
    char given[64];           // the answer taken ("" none): typed, or the clicked column
    Grade grade;              // of `given`
    Grade last;               // the last grade shown (GRADE_COUNT: revealed without one)
    bool told;                // some answer has been shown (what `expect answer` reads)
    char message[300];        // why the typed text is not an answer, or that a try was not quite right
    int tries;                // answers given to the question on screen (it allows its `tries:`)
    bool presenter;
} Quiz;

#endif
