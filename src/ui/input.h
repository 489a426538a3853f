// input.h: SDL events -> app actions (through tables), and recording / replaying a session.
//
// A recording is text, one event a line, with its time in milliseconds since the start:
//   120 key Right          a key press (SDL key name; "Shift+Tab" with a modifier)
//   300 text e             typed text (everything after the one space that follows "text")
//   400 click 300 200      a left click at (300, 200)
//   450 drag 320 210       the mouse moved with the button held
//   460 release 320 210
//   470 move 400 300       the pointer moved (written at most every 40 ms; replays hover)
//   500 wheel 300 200 -1   the wheel turned at (300, 200)
//   600 resize 1024 768
// A replay file may also hold directives the test and the classroom demo use:
//   700 shot out/step3.png     save the window as a PNG
//   800 expect encoder.embed   fail (exit 1) unless the stage on screen has this id
//   900 quit
#ifndef STEPFORMER_INPUT_H
#define STEPFORMER_INPUT_H

#include <SDL.h>

#include "actions.h"

// Applies one SDL event to the app. Returns true when the user asked for a screenshot.
bool input_handle(App *a, const Ui *ui, const SDL_Event *ev);

typedef struct Recorder Recorder;
Recorder *recorder_open(const char *path, Err *e);
void recorder_log(Recorder *r, const SDL_Event *ev, double ms);
void recorder_close(Recorder *r);

typedef enum { REPLAY_IDLE, REPLAY_SHOT, REPLAY_EXPECT, REPLAY_QUIT, REPLAY_DONE } ReplayStep;
typedef struct Replayer Replayer;
Replayer *replayer_open(const char *path, Err *e);
// Pushes the input events due by `ms` into SDL's queue. Returns the next due directive (with
// its argument in arg), REPLAY_IDLE if none is due yet, REPLAY_DONE at the end of the file.
// A directive is returned only after every event before it was pushed and drawn: one that
// follows events due in the same call waits a frame; one with none before it comes at once.
ReplayStep replayer_poll(Replayer *r, double ms, char *arg, size_t n);
// Events the replay could not deliver (each also reported on stderr); the window exits 1.
int replayer_failures(const Replayer *r);
void replayer_close(Replayer *r);

#endif
