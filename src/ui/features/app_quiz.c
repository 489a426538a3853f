// app_quiz.c: the window stops at a lesson's question, takes an answer and grades it (quiz_state.h).
#include <stdio.h>
#include <string.h>

#include "feature.h"

static bool asked(const Quiz *z, int k) { return k < 64 && (z->done >> k & 1u); }

// Leaves the question on screen: it is done (not asked again) when its answer was shown.
static void leave(Quiz *z) {
    if (z->phase == QUIZ_TOLD && z->q >= 0 && z->q < 64) z->done |= 1ull << z->q;
    z->phase = QUIZ_NONE, z->q = -1;
}

void app_quiz_arrive(App *a) {
    Quiz *z = &a->quiz;
    if (!a->loaded) return;
    // Another lesson, or another trace, makes every question new again. (The pass's generation,
    // not its address: a lesson opened after another may get the same memory for its trace.)
    // A question is asked when the class steps onto its stage, not where a lesson, a link or
    // --to opens the window (nor where an edited input re-runs it): there it is reached by
    // stepping off and back (Left to the opening card, then Right, on a first stage).
    const bool card = a->card != CARD_NONE;
    if (!z->started || z->generation != a->generation) {
        const bool presenter = z->presenter;
        *z = (Quiz){.started = true, .generation = a->generation, .q = -1, .last = GRADE_COUNT, .presenter = presenter,
                    .place = a->cursor, .on_card = card};
    }
    if (a->cursor != z->place || card != z->on_card) z->place = a->cursor, z->on_card = card, z->arrived = !card;
    if (z->phase != QUIZ_NONE && z->answer.stage != a->cursor) leave(z);
    if (z->phase != QUIZ_NONE || a->back.step >= 0 || !z->arrived) return;
    const Lesson *l = &a->session.lesson;
    const Interp *it = a->session.it;
    for (int k = 0; k < l->n_questions && k < 64; k++) {
        if (asked(z, k)) continue;
        Err e = {{0}};
        const int st = quiz_stage(l, &l->questions[k], it, &e);
        if (st != a->cursor) continue;
        if (st >= interp_n_done(it)) return;  // not run yet: asked on a later tick
        if (!a->session.own_input) {  // its words may quote the lesson's input, which is not this one
            char msg[700];
            snprintf(msg, sizeof msg, "The lesson asks a question here on its own input ('%s'), not on another",
                     l->setup.input[0] ? l->setup.input : l->setup.src_ids);
            app_notify(a, msg);
            break;
        }
        if (!quiz_answer(&z->answer, l, &l->questions[k], it, &e)) {  // a bad question: said once, then passed
            z->done |= 1ull << k;
            app_set_error(a, e.msg);
            continue;
        }
        z->q = k, z->phase = QUIZ_WAITING, z->typed[0] = z->given[0] = z->message[0] = '\0', z->tries = 0;
        a->playing = false;  // playing stops at a question
        if (z->answer.head > 0) a->head = z->answer.head - 1, a->all_heads = false;
        z->arrived = false;
        return;
    }
    z->arrived = false;  // no question here
}

void app_quiz_placed(App *a) {
    Quiz *z = &a->quiz;
    z->place = a->cursor, z->on_card = a->card != CARD_NONE, z->arrived = false;
}

// An answer taken: graded on screen at once, or kept hidden in presenter mode until Right.
// An answer taken: graded on screen (a wrong one while tries are left asks for another), or, in
// presenter mode, kept until Right reveals it.
static void take(Quiz *z, const Question *q, Grade g, const char *given) {
    snprintf(z->given, sizeof z->given, "%s", given);
    z->grade = g, z->message[0] = '\0';
    if (z->presenter) return;
    if (g == GRADE_WRONG && ++z->tries < q->tries) {
        const int left = q->tries - z->tries;
        snprintf(z->message, sizeof z->message, "Not quite: %s. Try again (%d %s left; Right shows the answer).", given,
                 left, left == 1 ? "try" : "tries");
        z->given[0] = '\0';
        return;
    }
    z->phase = QUIZ_TOLD, z->last = g, z->told = true;
}

// A: the question of the stage on screen asked again (it was answered, revealed or skipped).
static bool ask_again(App *a) {
    Quiz *z = &a->quiz;
    const Lesson *l = &a->session.lesson;
    bool any = false;
    for (int k = 0; k < l->n_questions && k < 64; k++) {
        Err e = {{0}};
        if (quiz_stage(l, &l->questions[k], a->session.it, &e) == a->cursor) z->done &= ~(1ull << k), any = true;
    }
    if (!any) app_notify(a, "A asks the question of a stage again: this stage has none");
    z->arrived = any;
    return true;
}

static void enter(App *a) {
    Quiz *z = &a->quiz;
    Err e = {{0}};
    const Question *q = &a->session.lesson.questions[z->q];
    const Grade g = quiz_grade(&z->answer, q, a->session.it, z->typed, &e);
    if (g == GRADE_MALFORMED) {
        snprintf(z->message, sizeof z->message, "%s", e.msg);
        return;
    }
    take(z, q, g, z->typed);
    z->typed[0] = '\0';
}

// A click on the heatmap on screen: the column under it, for an argmax question on that stage.
static bool click(App *a, const Ui *ui, int x, int y) {
    Quiz *z = &a->quiz;
    const ZoomView *v = &ui->zoom_view;
    if (a->session.lesson.questions[z->q].kind != QUESTION_ARGMAX || v->cells.w <= 0 || !rect_has(v->cells, x, y))
        return false;
    const int col = v->c0 + (int)((long)(x - v->cells.x) * (v->c1 - v->c0) / v->cells.w);
    const int row = v->r0 + (int)((long)(y - v->cells.y) * (v->r1 - v->r0) / (v->cells.h > 0 ? v->cells.h : 1));
    if (row != z->answer.row) {
        snprintf(z->message, sizeof z->message, "that cell is in row %d: the question is about row %d", row,
                 z->answer.row);
        return true;
    }
    char given[32];
    snprintf(given, sizeof given, "%d", col);
    take(z, &a->session.lesson.questions[z->q], quiz_grade_column(&z->answer, col), given);
    return true;
}

static bool quiz_event(App *a, const Ui *ui, int kind, int key, const char *text, int x, int y) {
    Quiz *z = &a->quiz;
    if (!a->loaded || z->phase == QUIZ_NONE || a->help || a->lesson_list || a->editing) {
        if (kind == EV_TEXT && (text[0] == 't' || text[0] == 'T') && !text[1] && !a->editing && !a->lesson_list) {
            z->presenter = !z->presenter;
            app_notify(a, z->presenter ? "presenter mode: answers are graded when Right reveals them"
                                       : "presenter mode off: answers are graded at once");
            return true;
        }
        if (kind == EV_TEXT && (text[0] == 'a' || text[0] == 'A') && !text[1] && a->loaded && z->phase == QUIZ_NONE &&
            !a->editing && !a->lesson_list && !a->help && a->card == CARD_NONE && a->back.step < 0)
            return ask_again(a);
        return false;
    }
    if (z->phase == QUIZ_TOLD) {
        if (kind == EV_KEY && key == KEY_RIGHT) leave(z);  // and Right goes on
        return false;
    }
    const size_t n = strlen(z->typed);
    switch (kind) {
    case EV_TEXT:
        if (n + strlen(text) < sizeof z->typed) strcat(z->typed, text);
        return true;
    case EV_PRESS: return click(a, ui, x, y);
    case EV_KEY: break;
    default: return false;
    }
    switch (key) {
    case KEY_BACKSPACE: {  // one character: its UTF-8 continuation bytes, then its first byte
        size_t k = n;
        while (k > 0 && (z->typed[k - 1] & 0xC0) == 0x80) k--;
        z->typed[k > 0 ? k - 1 : 0] = '\0';
        return true;
    }
    case KEY_RETURN:
        if (n) enter(a);
        return true;
    case KEY_RIGHT:  // reveal: the answer taken graded, or the true one shown
        z->phase = QUIZ_TOLD, z->last = z->given[0] ? z->grade : GRADE_COUNT, z->told = true;
        return true;
    case KEY_ESCAPE:
        z->done |= z->q < 64 ? 1ull << z->q : 0, z->phase = QUIZ_NONE, z->q = -1;
        return true;
    default: return false;
    }
}

// ---- drawing ----

static Follow on_event(App *a, const Ui *ui, const Event *ev) {
    return quiz_event(a, ui, (int)ev->kind, (int)ev->key, ev->text, ev->x, ev->y) ? FOLLOW_TAKEN : FOLLOW_NOTHING;
}

const Feature feature_quiz = {.name = "quiz", .on_event = on_event, .on_settle = app_quiz_arrive};
