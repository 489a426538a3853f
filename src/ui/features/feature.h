// feature.h: what the window does beyond stepping and drawing, one file a feature. Each is a
// Feature: a struct of hooks that get the App as an argument, change it through its own code and
// state's plain mutators (app.h), and return what must follow (Follow) instead of calling up.
// The table in app/app.c names them all, in the order they are offered a command.
#ifndef STEPFORMER_FEATURE_H
#define STEPFORMER_FEATURE_H

#include "app.h"
#include "command.h"
#include "events.h"

// What a hook tells the app to do next.
typedef enum {
    FOLLOW_NOTHING = 0,     // not this feature's: offer it to the next
    FOLLOW_TAKEN = 1u << 0  // done: the command goes no further
} FollowFlag;
typedef unsigned Follow;

typedef struct {
    const char *name;
    // Offered every command before the app's own handling: a feature that holds the keys while it
    // is open (the lesson list, the cards, the backward pass). NULL: none.
    Follow (*on_first)(App *a, const Command *c);
    // Offered the commands the app does not handle itself (a key, or a click on a zone).
    Follow (*on_command)(App *a, const Command *c);
    // Offered each input event before it becomes a command (a question's typed answer).
    Follow (*on_event)(App *a, const Ui *ui, const Event *ev);
    // Once a frame, before playback moves on (files that arrived, what a view needs prepared).
    void (*on_tick)(App *a);
    // After every event and every frame's tick.
    void (*on_settle)(App *a);
    // The App is going: whatever the feature holds is freed.
    void (*on_free)(App *a);
} Feature;

extern const Feature feature_lessons, feature_cards, feature_backward, feature_quiz, feature_pin, feature_against,
    feature_decode, feature_ablate, feature_train, feature_probe;

// ---- what the app calls by name: opening, the title, and places ----
// Reads the lessons of `dir` (NULL: none) and finds the one open (open_path) among them.
void app_set_course(App *a, const char *dir, const char *open_path);
// Opens what spec names in place of the session, as a lesson of the list opens (k: its place in
// the course, on whose opening card it then stands; or -1: on its first stage); on failure the window stays empty with the error, and the lesson is marked
// in the list. A lesson whose files are still being fetched waits (a->waiting) and opens from
// the tick when they are here. Returns false when it failed or waits for its files.
bool app_open_spec(App *a, const SessionSpec *spec, int k);
// The desktop window's title: the lesson's place and section in the course, and what is open
// ("stepformer - 8/33 The whole model: The Transformer, one kernel at a time").
void app_title(const App *a, char *out, size_t n);
// Moves to backward step k (k < 0: back to the forward pass's last stage).
void app_backward_goto(App *a, int k);
// The window was placed on a stage (a link, --to), not stepped there: no question is asked.
void app_quiz_placed(App *a);
// Asks the question of the stage on screen, if one is due there.
void app_quiz_arrive(App *a);
// Opens lesson k of the course (a click in the list, or a test).
void app_open_lesson(App *a, int k);
// A click on cell (row, col) of a Patch view sweep: that one piece patched, its logit and
// prediction kept.
void app_probe_pick(App *a, bool heads, int row, int col);
// Pins the stage on screen, with the words that label it, or unpins (C; X pins what it changes).
void app_pin_toggle(App *a);
// The backward pass's keys (Right, Left, PgDn, ..., B, D, G, W); false for those it leaves to the
// app (the cards go on into it with Right).
bool app_backward_act(App *a, Cmd act);
// The training view's commands (start/stop, task, save, use).
void app_train(App *a, Cmd cmd, int param);

#endif
