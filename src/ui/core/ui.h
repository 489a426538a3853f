// ui.h: what every view draws with: the theme, sizes that follow the window and the +/-
// scale, clickable zones, and the cache of heatmap images.
//
// Views are immediate-mode: each frame they draw from the (const) app state and register the
// rectangles that respond to clicks ("hot zones"). The app acts on a click by looking up the
// zone under the mouse from the frame just drawn. Views never change model state.
#ifndef STEPFORMER_UI_H
#define STEPFORMER_UI_H

#include "command.h"
#include "gfx.h"
#include "tensor.h"

typedef struct {
    Rgba bg, panel, panel_alt, text, muted, accent, on_accent, lit, lit_text, border, error_bg,
        error_text, grid, encoder, decoder, generator,
        backward;  // the backward pass's steps on the timeline
    int line;  // line thickness in pixels before scaling (1, or 2 for the presenter theme)
} Theme;

extern const Theme theme_light, theme_contrast;

typedef struct {
    Rect r;
    Cmd cmd;
    int param;
} HotZone;

typedef struct HeatCache HeatCache;

typedef struct {
    float x0, y0, x1, y1;  // the visible part of a heatmap, as fractions of its columns / rows
} ZoomBox;

// The zoomable heatmap as last drawn: what the wheel and a drag act on.
typedef struct {
    Rect cells;          // where its cells were drawn (w = 0: none this frame)
    Rect room;           // the space they could fill: the wheel works anywhere in it
    int rows, cols;      // of the slice
    int r0, r1, c0, c1;  // the whole rows and columns shown
    bool compact;        // drawn as a thumbnail
} ZoomView;

// The parts of the lesson panel that scroll when their text does not fit.
typedef enum { SCROLL_NARRATION, SCROLL_KERNEL, SCROLL_CARD, SCROLL_COUNT } ScrollId;

// A scrolling area as last drawn: where it is and how far it can scroll.
typedef struct {
    Rect r;    // w = 0: not drawn this frame
    int max;   // the largest offset (content height - visible height), in its unit
    int page;  // one page, in its unit
    int unit;  // pixels a wheel notch moves (the offset's unit: pixels or lines)
} ScrollView;

enum { UI_MAX_HOT = 1024, UI_MAX_FLOORS = 32, UI_MAX_ELIDED = 48, UI_ELIDED_TEXT = 240 };

// A heatmap's cell size at the default scale (+ never draws it smaller).
typedef struct {
    unsigned key[5];  // the heatmap's (HeatSpec.key)
    float cw, ch;
} HeatFloor;

typedef struct {
    Gfx *g;
    const Theme *th;
    int px;       // body text size in pixels
    int small;    // small text (labels)
    int min_px;   // the smallest text any view draws: 14 px at the default scale (labels that
                  // would need less are thinned out instead, so a projector's back row reads all)
    int pad;      // standard gap
    int mx, my;   // the mouse
    HotZone hot[UI_MAX_HOT];
    int n_hot;
    HeatCache *heat;
    ZoomView zoom_view;  // the zoomable heatmap as drawn this frame
    Rect center;         // where the view in the centre was drawn this frame
    ScrollView scroll[SCROLL_COUNT];  // the lesson panel's scrolling parts this frame
    bool measuring;      // the frame is a dry pass at the default scale, recording floors:
    HeatFloor floor[UI_MAX_FLOORS];  // what each zoomable heatmap's cells were in it
    int n_floor;
    bool note_elided;    // record each text cut with "…" this frame (the tests read them):
    char elided[UI_MAX_ELIDED][UI_ELIDED_TEXT];  // the whole text before the cut (the first ones)
    int n_elided;        // how many were cut (may exceed UI_MAX_ELIDED)
} Ui;

// Adds a clickable zone for this frame.
void ui_hot(Ui *ui, Rect r, Cmd cmd, int param);
// The zone under (x, y) from the last frame drawn (the topmost), or NULL.
const HotZone *ui_hot_at(const Ui *ui, int x, int y);
bool rect_has(Rect r, int x, int y);
Rect rect_inset(Rect r, int d);

// Text that is cut with "…" to fit max_w; returns the width drawn.
int ui_text_fit(Ui *ui, FontFace f, int px, Rgba c, int x, int y, const char *s, int max_w);
// The same, cut at the front: "…layers.1.cross_attn.weights", for a stage id whose end says
// the most.
int ui_text_fit_tail(Ui *ui, FontFace f, int px, Rgba c, int x, int y, const char *s, int max_w);
// Word-wrapped text in r.w, starting at r.y; returns the height used. Draws nothing past r.h.
int ui_text_wrap(Ui *ui, FontFace f, int px, Rgba c, Rect r, const char *s);
// A thin scroll bar at the right edge of r (ui_bar_w wide): the visible part `shown` of `total`,
// from `at`.
void ui_scroll_bar(Ui *ui, Rect r, int at, int shown, int total);
int ui_bar_w(const Ui *ui);
// A filled panel with a title bar; returns the area under the title.
Rect ui_panel(Ui *ui, Rect r, const char *title);

#endif
