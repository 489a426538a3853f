// test_quiz_ui.c: a lesson's questions in the window, driven by the events a class would make
// (input_handle, as the window's loop calls it) and drawn off screen: a question with `tries: 2`
// takes a second answer after a wrong one, and shows the answer after the second; the band says
// "Correct" and "Not quite" (never "Right", the arrow key named in the same line); A asks a
// question again. The answer is the trace's own number (the self-attention lesson's first
// question: row 3's weight on itself), read here from the stage's output. On another input than
// the lesson's, the question is not asked (its words quote the lesson's input): a notice says so.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "input.h"
#include "scene.h"

static void send_text(Scene *s, const char *text) {
    Event ev = {.kind = EV_TEXT};
    snprintf(ev.text, sizeof ev.text, "%s", text);
    input_handle(&s->a, &s->ui, &ev);
}

static void send_key(Scene *s, Key k) {
    Event ev = {.kind = EV_KEY, .key = k};
    input_handle(&s->a, &s->ui, &ev);
}

// Whether the frame, drawn now, holds a text that contains `what`.
static bool drew(Scene *s, const char *what) {
    app_draw(&s->ui, &s->a);
    return scene_drew(s, what);
}

// The self-attention lesson with `tries: 2` added to its first question, in a scratch folder.
static bool two_tries(char *path, size_t n) {
    char *text = file_read(LESSONS "/self-attention.md");
    if (!text) return false;
    const char *at = strstr(text, "decimals: 2\n```");
    snprintf(path, n, "/tmp/stepformer-quiz-%d.md", (int)getpid());
    FILE *f = at ? fopen(path, "w") : NULL;
    if (f) fprintf(f, "%.*sdecimals: 2\ntries: 2\n%s", (int)(at - text), text, at + strlen("decimals: 2\n"));
    const bool ok = f && fclose(f) == 0;
    free(text);
    return ok;
}

// The lesson opened on `input`: its question, whose words may quote its own input, is asked
// only on that input; on another, stepping onto its stage says why it is not.
static void other_input(const char *path, const char *input, bool own) {
    Scene s;
    const SessionSpec spec = {.lesson_path = path, .model_path = LESSONS "/../assets/models/dates.safetensors", .input = input};
    if (!scene_open(&s, 1280, 720, &spec)) return;
    Err e = {{0}};
    CHECK(interp_run(s.a.session.it, &e), "%s", e.msg);
    const int w = interp_find(s.a.session.it, "encoder.bare.weights");
    for (int k = 0; k < w; k++) send_key(&s, KEY_RIGHT);
    if (own) CHECK(s.a.cursor == w && s.a.quiz.phase == QUIZ_WAITING, "input '%s', the lesson's own: the question is asked", input);
    else
        CHECK(s.a.cursor == w && s.a.quiz.phase == QUIZ_NONE && strstr(s.a.notice, "on its own input ('22/11/2026')"),
              "input '%s': the question is not asked, and the notice says why (%s)", input, s.a.notice);
    scene_close(&s);
}

int main(void) {
    char path[256];
    CHECK(two_tries(path, sizeof path), "the lesson with two tries is written");
    Scene s;
    const SessionSpec spec = {.lesson_path = path, .model_path = LESSONS "/../assets/models/dates.safetensors"};
    if (!scene_open(&s, 1280, 720, &spec)) return check_finish("test_quiz_ui");
    gfx_note_texts(s.g, true);
    App *a = &s.a;
    Err e = {{0}};
    CHECK(interp_run(a->session.it, &e), "%s", e.msg);
    const int w = interp_find(a->session.it, "encoder.bare.weights");
    const Stage *st = interp_stage(a->session.it, w);
    const float truth = interp_output(a->session.it, w)[3 * st->shape.dim[1] + 3];  // row 3, column 3
    char right[16], wrong[16];
    snprintf(right, sizeof right, "%.2f", (double)truth);
    snprintf(wrong, sizeof wrong, "%.2f", (double)truth + 0.3);
    for (int k = 0; k < w; k++) send_key(&s, KEY_RIGHT);  // stepping onto the question's stage asks it
    CHECK(a->cursor == w && a->quiz.phase == QUIZ_WAITING, "the question waits on %s (cursor %d)", st->id, a->cursor);
    send_text(&s, wrong);
    send_key(&s, KEY_RETURN);
    CHECK(a->quiz.phase == QUIZ_WAITING && !a->quiz.told && strstr(a->quiz.message, "Not quite") &&
              strstr(a->quiz.message, "1 try left"),
          "a wrong first answer: another try (%s)", a->quiz.message);
    CHECK(drew(&s, "Not quite: ") && !drew(&s, "The answer"), "the band says so, and keeps the answer hidden");
    send_text(&s, wrong);
    send_key(&s, KEY_RETURN);
    CHECK(a->quiz.phase == QUIZ_TOLD && a->quiz.last == GRADE_WRONG, "the second wrong answer: the answer is shown");
    char told[64];
    snprintf(told, sizeof told, "The answer is %s", right);
    CHECK(drew(&s, "Not quite: ") && drew(&s, told) && !drew(&s, "Wrong"), "'Not quite', with the answer %s", right);
    send_key(&s, KEY_RIGHT);  // Right goes on, leaving the question
    CHECK(a->quiz.phase == QUIZ_NONE && a->cursor == w + 1, "Right leaves it and goes on");
    send_key(&s, KEY_LEFT);
    CHECK(a->quiz.phase == QUIZ_NONE && a->cursor == w, "an answered question is not asked again by stepping back");
    send_text(&s, "a");
    CHECK(a->quiz.phase == QUIZ_WAITING && a->cursor == w, "A asks it again");
    send_text(&s, right);
    send_key(&s, KEY_RETURN);
    CHECK(a->quiz.phase == QUIZ_TOLD && a->quiz.last == GRADE_RIGHT && drew(&s, "Correct: ") && !drew(&s, "Right: "),
          "the right answer: 'Correct'");
    send_key(&s, KEY_RIGHT);
    send_key(&s, KEY_RIGHT);
    send_text(&s, "a");
    CHECK(a->quiz.phase == QUIZ_NONE && strstr(a->notice, "this stage has none"), "A where there is no question says so");
    scene_close(&s);
    other_input(path, "01/02/2003", false);
    other_input(path, "22/11/2026", true);  // the lesson's own, given again
    unlink(path);
    return check_finish("test_quiz_ui");
}
