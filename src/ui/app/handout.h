// handout.h: a lesson as one self-contained page to print or hand out: dir/index.html with the
// title, the whole narration in order (tables as tables), each program cell as code, and after
// each cell that makes stages the picture of its first stage, drawn as the window draws it
// (PNG data URIs, CSS inline with print rules, no scripts).
#ifndef STEPFORMER_HANDOUT_H
#define STEPFORMER_HANDOUT_H

#include "app.h"

// Writes dir/index.html for the open lesson (a whole pass is run), its pictures drawn on ui's
// canvas at its size; written under a temporary name and renamed, so never half written. The
// cursor and view are put back as they were.
// Its pictures are the centre's view (whole_window: the whole window), so that its text prints at
// 8 pt or more on A4 (the centre's 14 px at 1280x720 spans at most 17 cm in about 700 px).
bool handout_write(App *a, Ui *ui, const char *dir, bool whole_window, Err *e);
// Shift+S in the window: the handout of the open lesson in stepformer-handout-NAME/ (pictures
// 1280x720), delivered as the PNGs of S are (platform.h); a notice or an error says so.
void app_handout(App *a);

#endif
