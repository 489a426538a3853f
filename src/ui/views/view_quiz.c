// view_quiz.c: the question band over the foot of the centre, while a question waits or is told.
#include <stdio.h>

#include "views.h"

void view_quiz(Ui *ui, const App *a, Rect center) {
    const Quiz *z = &a->quiz;
    if (!a->loaded || z->phase == QUIZ_NONE || z->q < 0) return;
    const Question *q = &a->session.lesson.questions[z->q];
    const int big = ui->px * 5 / 4, lh = gfx_line_height(ui->g, FONT_BOLD, big);
    const int h = lh * 6 + ui->pad * 3;
    Rect r = {center.x + ui->pad, center.y + center.h - h - ui->pad, center.w - 2 * ui->pad, h};
    const bool told = z->phase == QUIZ_TOLD;
    const bool right = told && z->last == GRADE_RIGHT, wrong = told && z->last == GRADE_WRONG;
    const Rgba green = {20, 140, 60, 255};  // right; wrong is the theme's error red
    gfx_rect(ui->g, r, ui->th->panel);
    gfx_frame(ui->g, r, 4, right ? green : wrong ? ui->th->error_bg : ui->th->accent);
    Rect in = rect_inset(r, ui->pad);
    char head[QUESTION_ASK_MAX + 40];
    int m = snprintf(head, sizeof head, "Question: ");
    for (const char *c = q->ask; *c && m + 1 < (int)sizeof head; c++)  // Markdown's code marks shown as quotes
        head[m++] = *c == '`' ? '\'' : *c;
    head[m] = '\0';
    in.y += ui_text_wrap(ui, FONT_BOLD, big, ui->th->text, (Rect){in.x, in.y, in.w, lh * 3}, head);
    char line[400];
    if (!told && z->given[0])  // presenter mode: taken, not yet graded
        snprintf(line, sizeof line, "Answer taken: %s.   Right reveals whether it is right.", z->given);
    else if (!told)
        snprintf(line, sizeof line, "Your answer: %s_   (Enter: check%s;  Right: reveal;  Esc: skip)", z->typed,
                 q->kind == QUESTION_ARGMAX ? ";  or click the cell" : "");
    else if (z->last == GRADE_COUNT)
        snprintf(line, sizeof line, "The answer: %s  (%s).   Right goes on.", z->answer.text, z->answer.precise);
    else
        snprintf(line, sizeof line, "%s: %s.  The answer is %s  (%s).   Right goes on.",
                 z->last == GRADE_RIGHT ? "Correct" : "Not quite", z->given, z->answer.text, z->answer.precise);
    Rgba c = right ? green : wrong ? ui->th->error_bg : ui->th->text;
    in.y += ui_text_wrap(ui, FONT_BOLD, big, c, (Rect){in.x, in.y, in.w, lh * 2}, line);
    if (z->message[0]) ui_text_fit(ui, FONT_SANS, ui->px, ui->th->error_bg, in.x, in.y, z->message, in.w);
    else if (z->presenter) ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, in.x, in.y, "presenter mode (T)", in.w);
}
