// actions.h: what a key press means to the app (input.c's tables map the platform's keys onto it).
#ifndef STEPFORMER_ACTIONS_H
#define STEPFORMER_ACTIONS_H

#include "app.h"

typedef enum {
    DO_NONE,
    DO_NEXT, DO_PREV, DO_PLAY, DO_NEXT_BLOCK, DO_PREV_BLOCK, DO_FIRST, DO_LAST,
    DO_HEAD,  // with a head number
    DO_ALL_HEADS, DO_NEXT_VIEW, DO_PREV_VIEW, DO_EDIT, DO_FULLSCREEN, DO_BIGGER,
    DO_SMALLER, DO_THEME, DO_SCREENSHOT, DO_HELP, DO_QUIT, DO_SLOWER, DO_FASTER,
    DO_PARAM_UP, DO_PARAM_DOWN, DO_PARAM_DEC, DO_PARAM_INC,
    DO_EDIT_ACCEPT, DO_EDIT_CANCEL, DO_EDIT_BACKSPACE,
    DO_NEXT_LESSON, DO_PREV_LESSON, DO_LESSONS, DO_OPEN, DO_PIN,
    DO_ABLATE_HEAD, DO_ABLATE_MASK, DO_ABLATE_POSITIONS, DO_ABLATE_UNDO, DO_LINK,
    DO_BACKWARD, DO_GRADIENT, DO_GRADCHECK,  // B: into / out of the backward pass; D: tensor or gradient; G: check
    DO_MISTAKE,  // W: the backward pass with a learner's wrong formula (cycles; back to the right one)
    DO_FIRST_DIFF,  // J: a mistake lesson's first stage that differs from its correct program, in Compare
    DO_HANDOUT,  // Shift+S: the open lesson's handout page (handout.h)
    DO_DECODING,  // Z: greedy -> sampling -> beam search -> greedy (app_decode.c)
    DO_COUNT
} Action;

extern const char *const action_names[DO_COUNT];
bool action_names_complete(void);  // whether every Action has its name (tested)

// One entry of the key list that `?` shows.
typedef struct {
    const char *keys;
    const char *what;
} KeyHelp;
extern const KeyHelp key_help[];
extern const int key_help_count;

// ---- app.c: state changes ----
// Opens what the spec names; on failure opens the built-in lesson and keeps the error on screen.
void app_init(App *a, const SessionSpec *spec);
// Opens what the spec names, or fails with e (export: no fallback).
bool app_open(App *a, const SessionSpec *spec, Err *e);
void app_free(App *a);
// Replaces the session with what the spec names, reading it once; if that cannot open, the
// window is left empty (the caller shows the error), never on the old model.
bool app_reopen(App *a, const SessionSpec *spec, Err *e);
// Applies an action (param: the head for DO_HEAD). Returns true if a screenshot was asked for.
bool app_act(App *a, Action act, int param);
void app_click(App *a, const Ui *ui, int x, int y);
void app_wheel(App *a, const Ui *ui, int x, int y, int dy);
// Scrolls a part of the lesson panel by `pages` pages (as last drawn).
void app_scroll(App *a, const Ui *ui, ScrollId id, int pages);
void app_drag(App *a, const Ui *ui, int x, int y);
void app_type(App *a, const char *utf8);
// Advances playback and runs a little of the pass ahead of the cursor (within ~budget_ms).
void app_tick(App *a, double now_ms, double budget_ms);
void app_set_error(App *a, const char *msg);
// A passing message at the foot of the window.
void app_notify(App *a, const char *msg);
// The training view's commands (start/stop, task, save, use).
void app_train(App *a, UiCommand cmd, int param);
// Moves the cursor to stage i, running the pass up to it if needed.
void app_goto(App *a, int i);
// After the pass changed: to the stage called `id` if the new pass has it (running it that far),
// else to stage `fallback` (or the last there is).
void app_goto_id(App *a, const char *id, int fallback);
// The view that suits stage i: attention maps the attention view, the generator the decoding
// view, the rest the stage view.
ViewKind app_view_for(const App *a, int i);
// Opens a place as a link names it: runs the whole pass, moves to the stage `id` (as --to takes
// it; NULL: stay at the first) and shows `view` (a ViewKind, or -1: the one that suits the stage).
bool app_place(App *a, const char *id, int view, Err *e);
// After a session opened: the title, the positions explorer on its model (app.c).
void app_loaded(App *a, const SessionSpec *spec);

// ---- app_ablate.c: pieces switched off (a DO_ABLATE_* action), the pass re-run ----
void app_ablate(App *a, Action act);

// ---- app_against.c: J, a mistake lesson's first difference from its correct program ----
// Goes to the first stage where the mistake differs from its correct program, in Compare.
void app_against_jump(App *a);

// ---- app_decode.c: Z, another way to choose each generated token ----
// Switches greedy -> sampling -> beam search -> greedy (decoding.h: the lesson's own settings,
// else temperature 1 and width 3), re-runs the pass and stays on the stage on screen where the
// new pass has it; a notice names the choice and what it wrote.
void app_switch_decoding(App *a);

// ---- app_lessons.c: the lessons of a folder, opened and switched ----
// Reads the lessons of `dir` (NULL: none) and finds the one open (open_path) among them.
void app_set_course(App *a, const char *dir, const char *open_path);
// Opens lesson k of the course in place of the session; on failure the window stays empty
// with the error, and the lesson is marked in the list. A lesson whose files are still being
// fetched waits (a->waiting) and opens from app_tick when they are here.
void app_open_lesson(App *a, int k);
// Opens what spec names in place of the session, as app_open_lesson does (k: its place in the
// course, or -1). Returns false when it failed or waits for its files.
bool app_open_spec(App *a, const SessionSpec *spec, int k);
// The next (+1) or previous (-1) lesson of the course.
void app_step_lesson(App *a, int dir);
// The list's keys while it is open; false for keys it does not take.
bool app_lesson_list_act(App *a, Action act);
// The desktop window's title: the lesson's place and section in the course, and what is open
// ("stepformer - 8/33 The whole model: The Transformer, one kernel at a time").
void app_title(const App *a, char *out, size_t n);

#endif
