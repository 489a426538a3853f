// window.h: running stepformer in a window, and the headless modes that draw the same views.
#ifndef STEPFORMER_WINDOW_H
#define STEPFORMER_WINDOW_H

#include "session.h"

enum { WINDOW_MIN_W = 320, WINDOW_MIN_H = 240 };  // the smallest window (and export) size

typedef struct {
    SessionSpec spec;
    const char *record, *replay;  // files, or NULL
    int w, h;                     // initial window size
    bool fit;                     // w x h is a default, not asked for: shrunk to fit the screen
    const char *course_dir;       // the folder whose lessons N / P and L switch between (or NULL)
    // A place to open at (a link in the browser): the stage (an id as --to takes it) and the
    // view (a ViewKind, or -1 for the one the stage suits), or NULL and -1.
    const char *stage;
    int view;
    const char *error;  // a message to show from the first frame (a bad link), or NULL
    // Whether the title announces the window's state, as tests of the page read it:
    // "stepformer: ready STAGE" once the first frame of the place asked for is drawn (STAGE as
    // it was asked for: an id without its "step.K." names the last round's stage),
    // "stepformer: error MESSAGE" when it cannot be, and after a replay "stepformer: replay
    // passed" or "stepformer: error replay: ..." .
    bool announce;
    bool opening_card;  // start on the lesson's opening card (the command line), not its first stage
    bool presenter;  // a lesson's questions: answers graded on screen only when revealed (quiz_state.h)
} WindowOptions;

// Opens the window and runs it until the user quits, then calls done(status, ctx) (may be
// NULL) with the exit status (1 when the window cannot open, or a replayed expectation failed).
// On the desktop this returns after done; in the browser it returns as soon as the loop runs.
void window_run(const WindowOptions *o, void (*done)(int status, void *ctx), void *ctx);

typedef struct {
    SessionSpec spec;
    const char *out_dir;
    int w, h;
    int view;  // a ViewKind, or -1: the view that suits each stage
    const char *course_dir;  // the lesson's course, for its place in the top bar ("2/24"), or NULL
    const char *stages;      // the stages to write, comma-separated ids as --to takes them; NULL: all
    bool backward;           // then every step of the backward pass (back_pass.h): b0001-....png
    const char *html_dir;    // --html: the handout, one page DIR/index.html (handout.c), instead of PNGs
    bool scratch_page;       // html_dir is --pdf's scratch folder: the page is not reported
    bool whole_window;       // --whole-window: the handout's pictures are the whole window, not its centre
} ExportOptions;

// Writes one PNG per stage into out_dir, with no display. Returns the exit status.
int export_run(const ExportOptions *o);

// handout.c: `export --html`, the lesson as one page (handout.h). Returns the exit status.
int handout_run(const ExportOptions *o);

// Times the busiest views of the base configuration off screen; prints the figures.
int ui_bench_run(int frames);

// The window on a long pass (`bench --scale`): the base configuration at `len` tokens (random
// weights) traced, then every stage stepped to in the view the window picks for it, each step's
// frame drawn off screen at 1920x1080. Times in ms; false with e set if it could not run.
// ui_bench_open also redraws each of these views after the steps, the pointer moving over it:
enum { UI_BENCH_VIEWS = 5 };
extern const char *const ui_bench_view_names[UI_BENCH_VIEWS];
typedef struct {
    double trace_ms;                        // the whole pass
    double first_ms;                        // the first frame, on the first stage (the opening's, not a step)
    double step_median, step_p99, step_max;  // a step key to its frame, over every stage after the first
    int steps;
    double open_ms;      // ui_bench_open: the model and its tokenizer read, the session opened
    size_t trace_bytes;  // what the trace held at the end (interp_trace_bytes)
    int readied;         // with a pause: the steps whose stage the pause recomputed (app_warm_next)
    double view_median[UI_BENCH_VIEWS], view_p99[UI_BENCH_VIEWS];  // ui_bench_open: a frame of each
                                                                   // view redrawn (0: not drawn)
    double click_median, click_max;  // ui_bench_open: a click on a block of the map to its frame,
    int clicks;                      // once on each block, after the steps (0 clicks: none)
} LongPassFigures;
bool ui_bench_long(int len, LongPassFigures *out, Err *e);
// The same on the window's session for `spec` (a model folder, its ids, a --trace-mb budget):
// opened as the window opens it, traced, every stage stepped to. With `pause`, each step comes
// after a pause on the stage before, as a reader's: the window, idle, readies the next stage
// (app_warm_next), untimed. Then a click on each block of the map, and each view redrawn.
bool ui_bench_open(const SessionSpec *spec, bool pause, LongPassFigures *out, Err *e);

#endif
