// scene.h: an app drawn off screen, for the tests that drive the window's code without a
// window: a canvas, the app and the UI state the window would keep.
#ifndef STEPFORMER_TEST_SCENE_H
#define STEPFORMER_TEST_SCENE_H

#include <string.h>

#include "dispatch.h"
#include "check.h"
#include "heat.h"

typedef struct {
    Gfx *g;
    App a;
    Ui ui;
} Scene;

// Opens the scene in place (an App cannot move once open). False, with a failed check, if not.
static inline bool scene_open(Scene *s, int w, int h, const SessionSpec *spec) {
    Err e = {{0}};
    memset(s, 0, sizeof *s);
    s->g = gfx_open_offscreen(w, h, &e);
    const bool ok = s->g && app_open(&s->a, spec, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return gfx_close(s->g), false;
    s->ui = (Ui){.g = s->g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    return true;
}

// Whether a text drawn in the frame last drawn contains `what` (gfx_note_texts must be on).
static inline bool scene_drew(const Scene *s, const char *what) {
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s->g, &notes);
    for (int i = 0; i < n; i++)
        if (strstr(notes[i].text, what)) return true;
    return false;
}

// The first text of the frame last drawn that contains `part`, or "" (gfx_note_texts must be on).
static inline const char *scene_text_containing(const Scene *s, const char *part) {
    const GfxTextNote *notes;
    const int n = gfx_text_notes(s->g, &notes);
    for (int i = 0; i < n; i++)
        if (strstr(notes[i].text, part)) return notes[i].text;
    return "";
}

static inline void scene_close(Scene *s) {
    heat_cache_free(s->ui.heat);
    app_free(&s->a);
    gfx_close(s->g);
}

#endif
