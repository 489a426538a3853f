// app_against.c: a mistake lesson beside its correct program in the window. The lesson's
// `correct:` program runs on the same model and input (against.h) when the Compare view opens
// or J is pressed, once per pass; the Compare view draws the two matched stages and the timeline
// marks the first that differs. No pin is needed.
#include <stdio.h>
#include <string.h>

#include "feature.h"

static void against_drop(App *a) {
    if (a->against.open) against_free(&a->against.match), session_close(&a->against.run);
    a->against.open = false;
    a->against.lesson[0] = '\0';
}

static bool prepare(App *a) {
    if (!a->loaded) return false;
    const char *path = a->session.lesson.path;
    if (a->against.generation == a->generation && !strcmp(a->against.lesson, path)) return a->against.open;
    against_drop(a);
    a->against.generation = a->generation, a->against.why[0] = '\0';
    snprintf(a->against.lesson, sizeof a->against.lesson, "%s", path);
    if (!a->session.lesson.setup.correct[0]) {
        snprintf(a->against.why, sizeof a->against.why, "this lesson names no correct program");
        return false;
    }
    Err e = {{0}};
    if (!against_open(&a->against.run, &a->session, &a->opened.spec, &e)) {
        snprintf(a->against.why, sizeof a->against.why, "%s", e.msg);
        return false;
    }
    if (!against_match(&a->against.match, a->session.it, a->against.run.it, &e)) {
        session_close(&a->against.run);
        snprintf(a->against.why, sizeof a->against.why, "%s", e.msg);
        return false;
    }
    return a->against.open = true;
}

static void jump(App *a) {
    if (!a->loaded) return app_set_error(a, "no lesson is open");
    if (!prepare(a)) {
        char msg[sizeof a->error];
        snprintf(msg, sizeof msg, "J: %s (a mistake lesson names its correct program with `correct: LESSON.md` in "
                 "its lesson block)", a->against.why);
        return app_set_error(a, msg);
    }
    const int k = a->against.match.first;
    a->view = VIEW_COMPARE;
    if (k < 0) return app_notify(a, "no stage differs from the correct program's");
    cmd_push(&a->queue, (Command){CMD_GOTO_STAGE, k, true});  // the app moves there next
    char msg[300];
    snprintf(msg, sizeof msg, "the first stage that differs from the correct program: %s", interp_stage(a->session.it, k)->id);
    app_notify(a, msg);
}

static Follow on_command(App *a, const Command *c) {
    if (c->kind != CMD_FIRST_DIFF) return FOLLOW_NOTHING;
    jump(a);
    return FOLLOW_TAKEN;
}

static void on_tick(App *a) {
    if (a->loaded && a->view == VIEW_COMPARE) prepare(a);
}

const Feature feature_against = {.name = "against", .on_command = on_command, .on_tick = on_tick, .on_free = against_drop};
