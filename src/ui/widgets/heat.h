// heat.h: the heatmap widget: a tensor slice as coloured cells, with its name and shape, token
// labels on rows and columns, a colour bar with the range, and the value under the mouse.
//
// Signed values use the diverging map centred on 0; probabilities the sequential map from 0.
// Masked cells (-inf) are grey. A slice with more cells than the widget has pixels is shown
// downsampled (each pixel the mean of the cells it covers) and the widget says so. Images are
// cached by `key`, so a stage's heatmaps are built once, not every frame.
#ifndef STEPFORMER_HEAT_H
#define STEPFORMER_HEAT_H

#include "colormap.h"
#include "ui.h"

typedef struct {
    const char *title;     // "encoder.layers.0.self_attn.q"
    const char *subtitle;  // e.g. "head 2 of 8" (may be NULL)
    Shape shape;           // of the whole tensor, shown after the title
    TensorKind kind;
    const float *data;     // the slice shown, [rows, cols] row-major
    int rows, cols;
    const float *mask;     // optional, [rows, cols]: cells that are -inf here are drawn masked
                           // (the softmax of a masked row is 0 there; this shows why)
    const float *range;    // the values that set the colour range (the whole tensor, so all
    size_t range_n;        // heads share one scale); NULL: the slice itself. Computed once for
                           // the slices whose keys differ only in key[3] (the head)
    const char *const *row_labels;  // tokens per row (NULL: indices); an axis with fewer labels
    int n_row_labels;               // than cells is numbered throughout, never half and half
    const char *const *col_labels;
    int n_col_labels;
    const char *row_name, *col_name;  // what rows and columns are, for the readout ("query")
    const char *absent;    // the word for -inf cells, under the colour bar and in the readout
    bool col_labels_count; // the column labels are how the columns are counted on screen (heads from
                           // 1): the readout names a column by its label alone, one numbering
                           // (NULL: "masked"; the Patch view's cells past a row's end are
                           // positions that row does not have: "absent")
    int label_part;        // row labels may take 1/label_part of the width (0: a quarter)
    unsigned key[5];       // identity for the image cache (stage, slot, slice, generation, model)
    bool zoomable;         // the one heatmap the wheel and drag act on
    ZoomBox zoom;
    bool compact;          // thumbnails: title only, no labels, no colour bar
    bool highlight;        // draw a selection frame
} HeatSpec;

// The most tokens a view labels a map's axis with (stage_axis_labels): a longer axis is numbered by
// position, as the widget numbers any axis its labels do not cover whole.
enum { HEAT_MAX_LABELS = 2048 };

// Draws the widget in r. Returns the rectangle of the cells (for click zones).
Rect heat_draw(Ui *ui, const HeatSpec *h, Rect r);

// One wheel step about (x, y) on the zoomable heatmap drawn last (dir > 0 in): a box of whole
// cells placed so the cell under the pointer stays under it. z unchanged if (x, y) is not over it.
ZoomBox heat_zoom_about(const Ui *ui, ZoomBox z, int x, int y, int dir);
// Pans the box by a pointer move of (dx, dy) pixels over the cells: the map follows the pointer.
ZoomBox heat_pan(const Ui *ui, ZoomBox z, int dx, int dy);

// A layout's guess at the cell size (pixels, the smaller side) a [rows, cols] map gets in r once
// its title, labels, colour bar and readout have their room: for comparing arrangements.
float heat_cell_guess(const Ui *ui, int rows, int cols, Rect r);

HeatCache *heat_cache_new(void);
void heat_cache_free(HeatCache *c);

// What a view derives from the trace to draw (the Compare view's difference, the Decoding view's
// row of the output head), kept with the images under a key of the view's, so a frame that
// draws the same again derives nothing. A few are kept, the least recently used going first.
typedef struct {
    float *data;     // [n] the derived values
    size_t n;
    double fig[4];   // figures the view found with them (its own meaning)
    unsigned key[5];
    unsigned used;   // the cache's clock when last asked for
} HeatDerived;
// The derived values for `key`, n floats. *fresh: none were kept, and the caller must fill data
// and fig. NULL if out of memory.
HeatDerived *heat_cache_derived(HeatCache *c, const unsigned key[5], size_t n, bool *fresh);
// Forgets d: what was to be derived into it could not be (the next ask is fresh again).
void heat_derived_drop(HeatDerived *d);

// Fills px [h][w] with the cells [r0, r1) x [c0, c1) of data [rows, cols]; each pixel is the
// mean of the finite cells it covers (masked if all are -inf, in data or in mask). Pure: no SDL.
void heat_pixels(Rgba *px, int w, int h, const float *data, const float *mask, int cols, int r0,
                 int r1, int c0, int c1, Colormap map, float lo, float hi);

#endif
