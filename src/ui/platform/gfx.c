// gfx.c: the render vocabulary on SDL2 + SDL2_ttf + SDL2_image (see gfx.h).
#include "gfx.h"

#include <SDL.h>
#include <SDL_image.h>
#include <SDL_ttf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fonts.h"
#include "platform.h"

enum { N_BUCKETS = 1024, MAX_FONTS = 64, TEXT_KEEP_FRAMES = 90 };
enum { FRAME_MS = 16 };  // frames of the software renderer are held this far apart, as vsync would

typedef struct TextEntry {
    struct TextEntry *next;
    char *key;
    SDL_Texture *tex;
    int w, h;
    unsigned used;  // frame it was last drawn
} TextEntry;

typedef struct {
    FontFace face;
    int px;
    TTF_Font *font;
} OpenFont;

struct Gfx {
    SDL_Window *win;        // NULL off screen
    SDL_Surface *surface;   // off screen target
    SDL_Renderer *r;
    char font_path[FONT_COUNT][512];
    OpenFont fonts[MAX_FONTS];
    int n_fonts;
    TextEntry *text[N_BUCKETS];
    unsigned frame;
    bool reported;         // an SDL drawing error has been reported once
    bool paced;            // SDL's software renderer: it never waits for the display, so we do
    Uint64 last_present;   // SDL_GetTicks64 at the last present, to pace frames without vsync
    bool dry;              // a pass that lays out and draws nothing (gfx_set_dry)
    bool any_text;         // this frame drew text; the smallest, and what it said:
    int smallest_px;
    char smallest_text[48];
    GfxTextNote *notes;  // [GFX_NOTES] this frame's texts (gfx_text_notes), when noted; else NULL
    int n_notes;
};

struct GfxImage {
    SDL_Texture *tex;
};

// Drawing calls rarely fail; the first failure is reported with SDL's reason.
static void check(Gfx *g, int rc, const char *what) {
    if (rc == 0 || g->reported) return;
    g->reported = true;
    fprintf(stderr, "stepformer: SDL %s failed: %s\n", what, SDL_GetError());
}

static bool start_libraries(Gfx *g, Err *e) {
    if (!TTF_WasInit() && TTF_Init() != 0) return err_set(e, "SDL_ttf could not start: %s", TTF_GetError());
    if (!fonts_find(g->font_path, e)) return false;
    TTF_Font *probe = TTF_OpenFont(g->font_path[FONT_SANS], 12);
    if (!probe)
        return err_set(e, "the font %s could not be opened (%s); install fonts-dejavu-core "
                       "(apt-get install fonts-dejavu-core)", g->font_path[FONT_SANS], TTF_GetError());
    TTF_CloseFont(probe);
    return true;
}

static Gfx *finish_open(Gfx *g, Err *e) {
    if (!g->r) {
        err_set(e, "SDL could not create a renderer: %s", SDL_GetError());
        gfx_close(g);
        return NULL;
    }
    check(g, SDL_SetRenderDrawBlendMode(g->r, SDL_BLENDMODE_BLEND), "SetRenderDrawBlendMode");
    return g;
}

// Shrinks *w x *h to the first display's usable area (without the desktop's panels), when SDL
// knows it: a window taller than the screen loses its top rows, where the header is.
static void fit_to_screen(int *w, int *h) {
    SDL_Rect b;
    if (SDL_GetDisplayUsableBounds(0, &b) != 0) return;  // unknown: the size stays
    if (b.w > 0 && *w > b.w) *w = b.w;
    if (b.h > 0 && *h > b.h) *h = b.h;
}

Gfx *gfx_open_window(const char *title, int w, int h, bool fit, Err *e) {
    const bool software = platform_prefers_software();
    bool may_pace = false, high_dpi = false;
    if (!platform_video_prepare(software, &may_pace, &high_dpi, e)) return NULL;
    Gfx *g = calloc(1, sizeof *g);
    if (!g) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    if (!start_libraries(g, e)) return gfx_close(g), NULL;
    if (fit) fit_to_screen(&w, &h);
    g->win = SDL_CreateWindow(title, SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h,
                              SDL_WINDOW_RESIZABLE | (high_dpi ? SDL_WINDOW_ALLOW_HIGHDPI : 0));
    if (!g->win) {
        err_set(e, "no display: SDL could not open a window (%s). Without a window, `stepformer "
                "export LESSON --out DIR` writes every stage as a PNG", SDL_GetError());
        gfx_close(g);
        return NULL;
    }
    g->r = SDL_CreateRenderer(g->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!g->r) g->r = SDL_CreateRenderer(g->win, -1, SDL_RENDERER_SOFTWARE);
    SDL_RendererInfo info;
    g->paced = may_pace && g->r && SDL_GetRendererInfo(g->r, &info) == 0 && !strcmp(info.name, "software");
    return finish_open(g, e);
}

Gfx *gfx_open_offscreen(int w, int h, Err *e) {
    Gfx *g = calloc(1, sizeof *g);
    if (!g) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    if (!start_libraries(g, e)) return gfx_close(g), NULL;
    g->surface = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ABGR8888);
    if (!g->surface) {
        err_set(e, "SDL could not create a %dx%d surface: %s", w, h, SDL_GetError());
        gfx_close(g);
        return NULL;
    }
    g->r = SDL_CreateSoftwareRenderer(g->surface);
    return finish_open(g, e);
}

static void drop_text(Gfx *g, bool all) {
    for (int b = 0; b < N_BUCKETS; b++) {
        TextEntry **pp = &g->text[b];
        while (*pp) {
            TextEntry *t = *pp;
            if (all || g->frame - t->used > TEXT_KEEP_FRAMES) {
                *pp = t->next;
                SDL_DestroyTexture(t->tex);
                free(t->key);
                free(t);
            } else {
                pp = &t->next;
            }
        }
    }
}

void gfx_close(Gfx *g) {
    if (!g) return;
    drop_text(g, true);
    for (int i = 0; i < g->n_fonts; i++) TTF_CloseFont(g->fonts[i].font);
    if (g->r) SDL_DestroyRenderer(g->r);
    if (g->surface) SDL_FreeSurface(g->surface);
    if (g->win) SDL_DestroyWindow(g->win), SDL_Quit();  // the one window: SDL goes with it
    free(g->notes);
    free(g);
}

void gfx_size(const Gfx *g, int *w, int *h) {
    if (SDL_GetRendererOutputSize(g->r, w, h) != 0) *w = *h = 0;
}

bool gfx_resize_offscreen(Gfx *g, int w, int h, Err *e) {
    if (g->win) return true;
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ABGR8888);
    SDL_Renderer *r = s ? SDL_CreateSoftwareRenderer(s) : NULL;
    if (!r) {
        if (s) SDL_FreeSurface(s);
        return err_set(e, "SDL could not create a %dx%d surface: %s", w, h, SDL_GetError());
    }
    drop_text(g, true);  // textures belong to the old renderer
    SDL_DestroyRenderer(g->r);
    SDL_FreeSurface(g->surface);
    g->surface = s, g->r = r;
    check(g, SDL_SetRenderDrawBlendMode(g->r, SDL_BLENDMODE_BLEND), "SetRenderDrawBlendMode");
    return true;
}

void gfx_set_fullscreen(Gfx *g, bool on) {
    if (g->win) check(g, SDL_SetWindowFullscreen(g->win, on ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0), "SetWindowFullscreen");
}

void gfx_set_min_size(Gfx *g, int w, int h) {
    if (g->win) SDL_SetWindowMinimumSize(g->win, w, h);  // returns nothing to check
}

bool gfx_is_window(const Gfx *g) { return g->win != NULL; }

// Opaque colours are drawn without blending: the software renderer fills those far faster.
static void set_color(Gfx *g, Rgba c) {
    check(g, SDL_SetRenderDrawBlendMode(g->r, c.a == 255 ? SDL_BLENDMODE_NONE : SDL_BLENDMODE_BLEND),
          "SetRenderDrawBlendMode");
    check(g, SDL_SetRenderDrawColor(g->r, c.r, c.g, c.b, c.a), "SetRenderDrawColor");
}

void gfx_set_dry(Gfx *g, bool dry) { g->dry = dry; }

void gfx_begin(Gfx *g, Rgba bg) {
    if (g->dry) return;
    g->frame++;
    g->any_text = false, g->n_notes = 0;
    gfx_unclip(g);
    set_color(g, bg);
    check(g, SDL_RenderClear(g->r), "RenderClear");
}

void gfx_present(Gfx *g) {
    if (!g->win) {
        check(g, SDL_RenderFlush(g->r), "RenderFlush");  // off screen: finish the drawing
        return;
    }
    SDL_RenderPresent(g->r);
    const Uint64 now = SDL_GetTicks64();  // no more frames than the display shows
    if (g->paced && g->last_present && now - g->last_present < FRAME_MS)
        SDL_Delay((Uint32)(FRAME_MS - (now - g->last_present)));
    g->last_present = SDL_GetTicks64();
}

void gfx_rect(Gfx *g, Rect r, Rgba c) {
    if (r.w <= 0 || r.h <= 0 || g->dry) return;
    set_color(g, c);
    check(g, SDL_RenderFillRect(g->r, &(SDL_Rect){r.x, r.y, r.w, r.h}), "RenderFillRect");
}

void gfx_frame(Gfx *g, Rect r, int t, Rgba c) {
    gfx_rect(g, (Rect){r.x, r.y, r.w, t}, c);
    gfx_rect(g, (Rect){r.x, r.y + r.h - t, r.w, t}, c);
    gfx_rect(g, (Rect){r.x, r.y + t, t, r.h - 2 * t}, c);
    gfx_rect(g, (Rect){r.x + r.w - t, r.y + t, t, r.h - 2 * t}, c);
}

void gfx_line(Gfx *g, int x0, int y0, int x1, int y1, Rgba c) {
    if (g->dry) return;
    set_color(g, c);
    check(g, SDL_RenderDrawLine(g->r, x0, y0, x1, y1), "RenderDrawLine");
}

void gfx_clip(Gfx *g, Rect r) {
    if (g->dry) return;
    check(g, SDL_RenderSetClipRect(g->r, &(SDL_Rect){r.x, r.y, r.w > 0 ? r.w : 0, r.h > 0 ? r.h : 0}),
          "RenderSetClipRect");
}

void gfx_unclip(Gfx *g) {
    if (!g->dry) check(g, SDL_RenderSetClipRect(g->r, NULL), "RenderSetClipRect");
}

static TTF_Font *font(Gfx *g, FontFace f, int px) {
    if (px < 4) px = 4;
    for (int i = 0; i < g->n_fonts; i++)
        if (g->fonts[i].face == f && g->fonts[i].px == px) return g->fonts[i].font;
    if (g->n_fonts == MAX_FONTS) {  // forget the oldest size
        TTF_CloseFont(g->fonts[0].font);
        memmove(g->fonts, g->fonts + 1, sizeof g->fonts[0] * (MAX_FONTS - 1));
        g->n_fonts--;
        drop_text(g, true);
    }
    TTF_Font *t = TTF_OpenFont(g->font_path[f], px);
    if (!t) t = TTF_OpenFont(g->font_path[FONT_SANS], px);
    if (!t) return NULL;
    if (f == FONT_ITALIC && strstr(g->font_path[f], "Oblique") == NULL && strstr(g->font_path[f], "Italic") == NULL)
        TTF_SetFontStyle(t, TTF_STYLE_ITALIC);
    g->fonts[g->n_fonts++] = (OpenFont){f, px, t};
    return t;
}

static unsigned hash(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

// The cached texture of a string, made on first use.
static TextEntry *text_entry(Gfx *g, FontFace f, int px, Rgba c, const char *s) {
    char key[1200];
    snprintf(key, sizeof key, "%d|%d|%02x%02x%02x%02x|%s", f, px, c.r, c.g, c.b, c.a, s);
    unsigned b = hash(key) % N_BUCKETS;
    for (TextEntry *t = g->text[b]; t; t = t->next)
        if (!strcmp(t->key, key)) return t->used = g->frame, t;
    TTF_Font *ft = font(g, f, px);
    if (!ft) return NULL;
    SDL_Surface *surf = TTF_RenderUTF8_Blended(ft, s, (SDL_Color){c.r, c.g, c.b, c.a});
    if (!surf) return NULL;
    SDL_Texture *tex = SDL_CreateTextureFromSurface(g->r, surf);
    TextEntry *t = calloc(1, sizeof *t);
    char *k = malloc(strlen(key) + 1);
    if (!tex || !t || !k) {
        SDL_FreeSurface(surf);
        if (tex) SDL_DestroyTexture(tex);
        free(t), free(k);
        return NULL;
    }
    strcpy(k, key);
    *t = (TextEntry){g->text[b], k, tex, surf->w, surf->h, g->frame};
    SDL_FreeSurface(surf);
    g->text[b] = t;
    return t;
}

// Keeps the smallest text of the frame, for the readability rule's test, and the frame's texts.
static void note_text(Gfx *g, int x, int y, int px, const char *s) {
    if (g->notes && g->n_notes < GFX_NOTES) {
        GfxTextNote *n = &g->notes[g->n_notes++];
        n->x = x, n->y = y, n->px = px;
        snprintf(n->text, sizeof n->text, "%s", s);
    }
    if (g->any_text && px >= g->smallest_px) return;
    g->any_text = true, g->smallest_px = px;
    snprintf(g->smallest_text, sizeof g->smallest_text, "%s", s);
}

void gfx_note_texts(Gfx *g, bool on) {
    if (on && !g->notes) g->notes = calloc(GFX_NOTES, sizeof *g->notes);  // NULL: nothing noted
    if (!on) free(g->notes), g->notes = NULL;
    g->n_notes = 0;
}

int gfx_text_notes(const Gfx *g, const GfxTextNote **notes) {
    *notes = g->notes;
    return g->n_notes;
}

bool gfx_smallest_text(const Gfx *g, int *px, const char **text) {
    if (!g->any_text) return false;
    *px = g->smallest_px, *text = g->smallest_text;
    return true;
}

int gfx_text(Gfx *g, FontFace f, int px, Rgba c, int x, int y, const char *s) {
    if (!s || !*s) return 0;
    if (g->dry) return gfx_text_width(g, f, px, s);
    note_text(g, x, y, px, s);
    TextEntry *t = text_entry(g, f, px, c, s);
    if (!t) return 0;
    check(g, SDL_RenderCopy(g->r, t->tex, NULL, &(SDL_Rect){x, y, t->w, t->h}), "RenderCopy");
    return t->w;
}

int gfx_text_up(Gfx *g, FontFace f, int px, Rgba c, int x, int y, const char *s) {
    if (!s || !*s) return 0;
    if (g->dry) return gfx_text_width(g, f, px, s);
    note_text(g, x, y, px, s);
    TextEntry *t = text_entry(g, f, px, c, s);
    if (!t) return 0;
    // Rotating about the centre: the unrotated box shares its centre with the rotated one.
    int cx = x + t->h / 2, cy = y - t->w / 2;
    SDL_Rect dst = {cx - t->w / 2, cy - t->h / 2, t->w, t->h};
    check(g, SDL_RenderCopyEx(g->r, t->tex, NULL, &dst, -90.0, NULL, SDL_FLIP_NONE), "RenderCopyEx");
    return t->w;
}

int gfx_text_width(Gfx *g, FontFace f, int px, const char *s) {
    int w = 0;
    TTF_Font *ft = font(g, f, px);
    if (ft && s && *s && TTF_SizeUTF8(ft, s, &w, NULL) != 0) w = 0;
    return w;
}

int gfx_line_height(Gfx *g, FontFace f, int px) {
    TTF_Font *ft = font(g, f, px);
    return ft ? TTF_FontLineSkip(ft) : px;
}

int gfx_fit(Gfx *g, FontFace f, int px, const char *s, int max_w) {
    TTF_Font *ft = font(g, f, px);
    int extent = 0, count = 0;
    if (!ft || max_w <= 0 || TTF_MeasureUTF8(ft, s, max_w, &extent, &count) != 0) return 0;
    int bytes = 0;  // count is in characters
    for (int k = 0; k < count && s[bytes]; k++) {
        bytes++;
        while ((s[bytes] & 0xC0) == 0x80) bytes++;
    }
    return bytes;
}

GfxImage *gfx_image(Gfx *g, const Rgba *px, int w, int h) {
    SDL_Texture *tex = SDL_CreateTexture(g->r, SDL_PIXELFORMAT_ABGR8888, SDL_TEXTUREACCESS_STATIC, w, h);
    if (!tex) {
        check(g, -1, "CreateTexture");
        return NULL;
    }
    check(g, SDL_UpdateTexture(tex, NULL, px, w * 4), "UpdateTexture");
    check(g, SDL_SetTextureScaleMode(tex, SDL_ScaleModeNearest), "SetTextureScaleMode");
    check(g, SDL_SetTextureBlendMode(tex, SDL_BLENDMODE_NONE), "SetTextureBlendMode");  // heatmaps are opaque
    GfxImage *im = malloc(sizeof *im);
    if (!im) {
        SDL_DestroyTexture(tex);
        return NULL;
    }
    im->tex = tex;
    return im;
}

void gfx_image_free(GfxImage *im) {
    if (!im) return;
    SDL_DestroyTexture(im->tex);
    free(im);
}

void gfx_draw_image(Gfx *g, GfxImage *im, Rect d) {
    if (im && !g->dry) check(g, SDL_RenderCopy(g->r, im->tex, NULL, &(SDL_Rect){d.x, d.y, d.w, d.h}), "RenderCopy");
}

bool gfx_read(Gfx *g, Rgba *px) {
    int w, h;
    gfx_size(g, &w, &h);
    return SDL_RenderReadPixels(g->r, NULL, SDL_PIXELFORMAT_ABGR8888, px, w * 4) == 0;
}

bool gfx_save_png(Gfx *g, const char *path, Err *e) {
    int w, h;
    gfx_size(g, &w, &h);
    return gfx_save_png_rect(g, (Rect){0, 0, w, h}, path, e);
}

bool gfx_save_png_rect(Gfx *g, Rect r, const char *path, Err *e) {
    int w, h;
    gfx_size(g, &w, &h);
    if (r.x < 0) r.w += r.x, r.x = 0;
    if (r.y < 0) r.h += r.y, r.y = 0;
    if (r.x + r.w > w) r.w = w - r.x;
    if (r.y + r.h > h) r.h = h - r.y;
    if (r.w <= 0 || r.h <= 0) return err_set(e, "%s: nothing of the canvas to save", path);
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, r.w, r.h, 32, SDL_PIXELFORMAT_ABGR8888);
    if (!s) return err_set(e, "%s: SDL could not make a surface: %s", path, SDL_GetError());
    const SDL_Rect area = {r.x, r.y, r.w, r.h};
    bool ok = SDL_RenderReadPixels(g->r, &area, SDL_PIXELFORMAT_ABGR8888, s->pixels, s->pitch) == 0;
    if (!ok) err_set(e, "%s: SDL could not read the pixels: %s", path, SDL_GetError());
    if (ok && IMG_SavePNG(s, path) != 0) ok = err_set(e, "%s: could not save the PNG: %s", path, IMG_GetError());
    SDL_FreeSurface(s);
    return ok;
}

void gfx_trim_cache(Gfx *g) {
    if (g->frame % 30 == 0) drop_text(g, false);
}
