// test_messages.c: the window's messages say what is true for the lesson on screen (issue:
// "Output , was ." on a lesson that generates nothing). Switching a piece off (M) on a greedy
// lesson, a teacher-forced one, a classifier and an encoder names the output each really has.
#include <string.h>

#include "actions.h"
#include "check.h"

static void ablate_words(const char *lesson, const char *want) {
    App a;
    Err e = {{0}};
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, lesson);
    CHECK(app_open(&a, &(SessionSpec){.lesson_path = path}, &e) && interp_run(a.session.it, &e), "%s: %s", lesson, e.msg);
    if (!a.loaded) return;
    app_act(&a, DO_ABLATE_MASK, 0);
    CHECK(strstr(a.notice, want) && !strstr(a.notice, "Output , was ."), "%s, M: '%s' (want '%s')", lesson, a.notice, want);
    app_act(&a, DO_ABLATE_UNDO, 0);
    CHECK(strstr(a.notice, "everything back on"), "%s, U: %s", lesson, a.notice);
    app_free(&a);
}

int main(void) {
    ablate_words("forward-pass.md", "off: no mask. Output '");
    ablate_words("masks.md", "(the likeliest token at each row)");
    ablate_words("transformers-from-scratch.md", "Output class ");
    ablate_words("encoder-from-scratch.md", "publishes no logits to read an output from");
    return check_finish("test_messages");
}
