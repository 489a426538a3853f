// gfx.h: the render vocabulary: rectangles, lines, text and images. SDL stays behind it.
//
// A Gfx draws into a window (SDL_Renderer, accelerated where possible) or off screen into a
// software surface (export, render tests, the benchmark); the views cannot tell which.
// Text is rendered with SDL_ttf from fonts found through fontconfig, and each distinct
// (string, face, size, colour) becomes a texture cached across frames.
#ifndef STEPFORMER_GFX_H
#define STEPFORMER_GFX_H

#include <stdbool.h>

#include <stdint.h>

#include "err.h"

typedef struct {
    uint8_t r, g, b, a;
} Rgba;

typedef struct Gfx Gfx;
typedef struct GfxImage GfxImage;

typedef struct {
    int x, y, w, h;
} Rect;

typedef enum { FONT_SANS, FONT_BOLD, FONT_ITALIC, FONT_MONO, FONT_COUNT } FontFace;

// Opens a resizable window of w x h, or with fit no larger than the screen's usable area (a
// default size on a 1280x720 projector). On failure e says why (no display, no font, ...).
Gfx *gfx_open_window(const char *title, int w, int h, bool fit, Err *e);
// An off-screen canvas of w x h pixels; needs no display.
Gfx *gfx_open_offscreen(int w, int h, Err *e);
void gfx_close(Gfx *g);  // a window's closes SDL too

void gfx_size(const Gfx *g, int *w, int *h);
bool gfx_resize_offscreen(Gfx *g, int w, int h, Err *e);
void gfx_set_fullscreen(Gfx *g, bool on);
// The smallest size the user can drag the window to.
void gfx_set_min_size(Gfx *g, int w, int h);
bool gfx_is_window(const Gfx *g);

void gfx_begin(Gfx *g, Rgba background);
// While dry, drawing calls draw nothing (text still measures): a pass that only lays out.
void gfx_set_dry(Gfx *g, bool dry);
void gfx_present(Gfx *g);

void gfx_rect(Gfx *g, Rect r, Rgba c);
void gfx_frame(Gfx *g, Rect r, int thickness, Rgba c);  // an outline, drawn inside r
void gfx_line(Gfx *g, int x0, int y0, int x1, int y1, Rgba c);
void gfx_clip(Gfx *g, Rect r);
void gfx_unclip(Gfx *g);

// Draws text with its top-left at (x, y); returns its width in pixels.
int gfx_text(Gfx *g, FontFace f, int px, Rgba c, int x, int y, const char *s);
// Text rotated 90 degrees anticlockwise, reading upwards, its bottom-left at (x, y).
int gfx_text_up(Gfx *g, FontFace f, int px, Rgba c, int x, int y, const char *s);
int gfx_text_width(Gfx *g, FontFace f, int px, const char *s);
// The smallest text drawn since gfx_begin (its size and the start of its string); false if none.
bool gfx_smallest_text(const Gfx *g, int *px, const char **text);
// The texts drawn since gfx_begin, the first GFX_NOTES of them: where, how large and what (its
// first 95 bytes), for the tests that read what a frame says; kept only once gfx_note_texts
// turned it on (a window never does).
enum { GFX_NOTES = 512 };
typedef struct {
    int x, y, px;
    char text[96];
} GfxTextNote;
void gfx_note_texts(Gfx *g, bool on);
int gfx_text_notes(const Gfx *g, const GfxTextNote **notes);
int gfx_line_height(Gfx *g, FontFace f, int px);
// How many bytes of s fit in max_w pixels (whole UTF-8 characters).
int gfx_fit(Gfx *g, FontFace f, int px, const char *s, int max_w);

// An image from RGBA pixels [h][w]; drawn scaled with nearest-neighbour sampling so that each
// source pixel stays a crisp cell.
GfxImage *gfx_image(Gfx *g, const Rgba *pixels, int w, int h);
void gfx_image_free(GfxImage *im);
void gfx_draw_image(Gfx *g, GfxImage *im, Rect dst);

// Reads back what has been drawn (call before gfx_present for windows): pixels [h][w].
bool gfx_read(Gfx *g, Rgba *pixels);
bool gfx_save_png(Gfx *g, const char *path, Err *e);
// The part r of the canvas as a PNG (r is clipped to the canvas).
bool gfx_save_png_rect(Gfx *g, Rect r, const char *path, Err *e);

// Called once per frame: drops cached text not used for a while.
void gfx_trim_cache(Gfx *g);

#endif
