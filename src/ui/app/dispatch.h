// dispatch.h: the app's own entry points: opening and freeing the App, applying a command (a
// key's, or a click's on a zone the last frame recorded), the frame's tick, and drawing the
// whole window. Everything above the App (the window's loop, export, the handout) calls these.
#ifndef STEPFORMER_DISPATCH_H
#define STEPFORMER_DISPATCH_H

#include "app.h"
#include "command.h"
#include "feature.h"
#include "views.h"

// Opens what the spec names; on failure the window stays empty with the error (and the list, L).
void app_init(App *a, const SessionSpec *spec);
void app_free(App *a);
// Applies a key's command with its parameter (a head for CMD_HEAD) at once, and what it asks to
// follow; the features are offered it in the table's order. Returns true if a screenshot was
// asked for.
bool app_act(App *a, Cmd cmd, int param);
// Applies one command (a key's path) with the frame last drawn (what Shift+PgDn scrolls).
bool app_command(App *a, const Ui *ui, Command c);
// Applies every command waiting in a->queue, in order: the input's and what features asked to
// follow. Returns true if a screenshot was asked for.
bool app_drain(App *a, const Ui *ui);
// Offers an input event to the features before it becomes a command (a question's answer).
Follow app_event(App *a, const Ui *ui, const Event *ev);
// After every event and every frame's tick: the features settle (a question due here is asked).
void app_settle(App *a);
// A press at (x, y): the command of the zone under it in the frame last drawn, applied.
void app_click(App *a, const Ui *ui, int x, int y);
void app_type(App *a, const char *utf8);
// Advances playback, the features' ticks, and runs a little of the pass ahead of the cursor
// (within ~budget_ms).
void app_tick(App *a, double now_ms, double budget_ms);
// Opens a place as a link names it: runs the whole pass, moves to the stage `id` (as --to takes
// it; NULL: stay at the first) and shows `view` (a ViewKind, or -1: the one that suits the stage).
bool app_place(App *a, const char *id, int view, Err *e);

// The centre's views, by kind: the one table that names them (app.c).
typedef void (*ViewDraw)(Ui *ui, const App *a, Rect r);
extern const ViewDraw app_views[VIEW_COUNT];
bool app_views_complete(void);  // whether every ViewKind has its view and its name (tested)

// ---- draw.c ----
// Draws the whole window: top bar, map, the current view, lesson panel, timeline, overlays.
void app_draw(Ui *ui, const App *a);
// Sizes for a window of w x h at the app's scale.
void app_metrics(const App *a, Ui *ui, int w, int h);

#endif
