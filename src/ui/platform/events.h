// events.h: input as the window's code sees it, whichever platform delivers it: keys as named
// here (not the platform's codes), typed text, the pointer and the wheel; and recording and
// replaying a session of them.
//
// A recording is text, one event a line, with its time in milliseconds since the start:
//   120 key Right          a key press (SDL's key names; "Shift+Tab" with a modifier)
//   300 text e             typed text (everything after the one space that follows "text")
//   400 click 300 200      a left click at (300, 200)
//   450 drag 320 210       the mouse moved with the button held
//   460 release 320 210
//   470 move 400 300       the pointer moved (written at most every 40 ms; replays hover)
//   500 wheel 300 200 -1   the wheel turned at (300, 200)
//   600 resize 1024 768
//   650 drop /home/t/gpt2  a file or folder dropped on the window (the rest of the line is its path)
// A replay file may also hold directives the test and the classroom demo use:
//   700 shot out/step3.png     save the window as a PNG
//   800 expect encoder.embed   fail (exit 1) unless the stage on screen has this id
//   850 expect view compare    ... unless this view is on screen (a tab's name, any case)
//   850 expect answer right    fail unless the last question's answer was graded right on
//                              screen (`wrong`: graded wrong; `shown`: revealed with no answer)
//   860 expect decoding beam   ... unless the pass chooses its tokens so (greedy, sampling, beam)
//   870 expect output 6,6,2    ... unless the pass, run to its end, generates these ids (as `run`
//                              prints them, without the prompt; `none`: no tokens)
//   900 quit
#ifndef STEPFORMER_EVENTS_H
#define STEPFORMER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

// The keys the window acts on that type no character (typed keys arrive as EV_TEXT).
typedef enum {
    KEY_OTHER, KEY_RIGHT, KEY_LEFT, KEY_UP, KEY_DOWN, KEY_PAGEDOWN, KEY_PAGEUP, KEY_HOME, KEY_END,
    KEY_TAB, KEY_SPACE, KEY_ESCAPE, KEY_RETURN, KEY_BACKSPACE, KEY_F1, KEY_F11, KEY_COUNT
} Key;

typedef enum { EV_QUIT, EV_KEY, EV_TEXT, EV_PRESS, EV_RELEASE, EV_MOTION, EV_WHEEL, EV_DROP, EV_OTHER } EventKind;

typedef struct {
    EventKind kind;
    Key key;          // EV_KEY
    bool shift;       // EV_KEY: with Shift held
    char text[32];    // EV_TEXT: UTF-8
    int x, y;         // EV_PRESS, EV_RELEASE, EV_MOTION, EV_WHEEL: the pointer, in window pixels
    bool held;        // EV_MOTION: the left button is down (a drag)
    int steps;        // EV_WHEEL: notches, > 0 away from the user
    char path[1024];  // EV_DROP: the file or folder dropped on the window
} Event;

// ---- the live side (events_sdl.c) ----
// The next pending event (false when none); the ones the window has no use for come as EV_OTHER.
bool events_poll(Event *ev);
double events_ms(void);                 // milliseconds since the program started
bool events_pointer(int *x, int *y);    // where the pointer is, if it is over the window
void events_text_input(void);           // typed text arrives as EV_TEXT from now on

// ---- recording and replaying (events_sdl.c) ----
typedef struct Recorder Recorder;
Recorder *recorder_open(const char *path, Err *e);
// Logs the event just polled, at `ms` from the start (the platform's own record of it, so a
// replay gives back what the platform gave).
void recorder_log(Recorder *r, double ms);
void recorder_close(Recorder *r);

typedef enum { REPLAY_IDLE, REPLAY_SHOT, REPLAY_EXPECT, REPLAY_QUIT, REPLAY_DONE } ReplayStep;
typedef struct Replayer Replayer;
Replayer *replayer_open(const char *path, Err *e);
// Queues the input events due by `ms`, to be polled like live ones. Returns the next due
// directive (with its argument in arg), REPLAY_IDLE if none is due yet, REPLAY_DONE at the end
// of the file. A directive is returned only after every event before it was queued and drawn:
// one that follows events due in the same call waits a frame; one with none before it comes at once.
ReplayStep replayer_poll(Replayer *r, double ms, char *arg, size_t n);
// Events the replay could not deliver (each also reported on stderr); the window exits 1.
int replayer_failures(const Replayer *r);
void replayer_close(Replayer *r);

#endif
