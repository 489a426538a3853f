// cmd_questions.c: `lesson FILE --questions`, the lesson's questions with the trace's answers.
#include <stdlib.h>

#include "cli.h"
#include "quiz.h"

int cli_print_questions(const CliOptions *o) {
    if (o->to || o->print || o->json || o->record || o->replay || o->width || o->presenter)
        return cli_usage_error("lesson", "--questions prints the questions alone; leave out the other options of "
                                         "the terminal and the window");
    Session s;
    Err e = {{0}};
    if (!cli_open_session(&s, &o->spec, &e)) return cli_fail(&e);
    bool ok = interp_run(s.it, &e);
    if (ok) printf("%s: %d question%s\n", s.lesson.path, s.lesson.n_questions, s.lesson.n_questions == 1 ? "" : "s");
    for (int k = 0; ok && k < s.lesson.n_questions; k++) {
        const Question *q = &s.lesson.questions[k];
        Answer a;
        ok = quiz_answer(&a, &s.lesson, q, s.it, &e);
        if (!ok) break;
        printf("\nline %d, at %s (%s)\n  %s\n", q->line, interp_stage(s.it, a.stage)->id, question_kind_names[q->kind],
               q->ask);
        if (a.head) printf("  head %d, ", a.head);
        else printf("  ");
        printf("row %d: answer %s", a.row, a.text);
        if (q->kind == QUESTION_VALUE) printf("  (%s)\n", a.precise);
        else printf("  (value %s)\n", a.precise);
    }
    session_close(&s);
    return ok ? EXIT_OK : cli_fail(&e);
}
