// window.h: running stepformer in a window, and the headless modes that draw the same views.
#ifndef STEPFORMER_WINDOW_H
#define STEPFORMER_WINDOW_H

#include "session.h"

enum { WINDOW_MIN_W = 320, WINDOW_MIN_H = 240 };  // the smallest window (and export) size

typedef struct {
    SessionSpec spec;
    const char *record, *replay;  // files, or NULL
    int w, h;                     // initial window size
    const char *course_dir;       // the folder whose lessons N / P and L switch between (or NULL)
} WindowOptions;

// Opens the window and runs until the user quits. Returns the exit status (1 when the window
// cannot open, or a replayed expectation failed).
int window_run(const WindowOptions *o);

typedef struct {
    SessionSpec spec;
    const char *out_dir;
    int w, h;
    int view;  // a ViewKind, or -1: the view that suits each stage
} ExportOptions;

// Writes one PNG per stage into out_dir, with no display. Returns the exit status.
int export_run(const ExportOptions *o);

// Times the busiest views of the base configuration off screen; prints the figures.
int ui_bench_run(int frames);

#endif
