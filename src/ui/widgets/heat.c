// heat.c: the heatmap widget (see heat.h) and its image cache.
#include "heat.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { CACHE_SIZE = 128 };
// The images the cache may hold in all, in pixels (4 bytes each): 128 full-window images of a long
// pass would be a gigabyte; this is 64 MB, a few dozen stages' pictures.
enum { CACHE_PIXELS = 16 << 20 };

typedef struct {
    unsigned key[5];
    int r0, r1, c0, c1, w, h;
    GfxImage *im;
    Colormap map;
    float lo, hi;          // the colour range, computed once with the image
    float bar_lo, bar_hi;  // the part of it the colour bar shows
    unsigned used;
} HeatEntry;

// A colour range, scanned once: shared by a tensor's slices (HeatSpec.range: every head of an
// attention map on one scale), not once a head (12 heads of 1024 x 1024 are 12 million values
// each scan); or a slice's own.
enum { RANGES = 8 };
typedef struct {
    const float *range;  // the values scanned: the shared range, or the slice's own data
    size_t n;
    unsigned key[5];  // the spec's key; key[3], the slice (a head), 0 for a shared range
    Colormap map;
    float lo, hi, bar_lo, bar_hi;
} RangeEntry;

// Whether a slice has a masked cell (the colour bar then shows the masked grey), scanned once:
// scanning a [1023, 3072] map every frame took 4 ms.
enum { MASKED = 16 };

// Derived values kept (HeatDerived), and the most floats they hold together (128 MB; the least
// recently used go first to make room, and one larger than that is kept alone).
enum { DERIVED = 4, DERIVED_FLOATS = 1 << 25 };
typedef struct {
    const float *data, *mask;
    size_t n;
    unsigned key[5];
    bool any;
} MaskedEntry;

struct HeatCache {
    HeatEntry e[CACHE_SIZE];
    unsigned clock;
    size_t pixels;  // held by the images of e
    RangeEntry r[RANGES];
    int next_range;  // the slot the next new range takes
    MaskedEntry m[MASKED];
    int next_masked;  // the slot the next new one takes
    HeatDerived derived[DERIVED];  // data NULL: none yet
};

HeatCache *heat_cache_new(void) { return calloc(1, sizeof(HeatCache)); }

void heat_cache_free(HeatCache *c) {
    if (!c) return;
    for (int i = 0; i < CACHE_SIZE; i++) gfx_image_free(c->e[i].im);
    for (int i = 0; i < DERIVED; i++) free(c->derived[i].data);
    free(c);
}

void heat_derived_drop(HeatDerived *d) {
    free(d->data);
    d->data = NULL;
}

HeatDerived *heat_cache_derived(HeatCache *c, const unsigned key[5], size_t n, bool *fresh) {
    c->clock++;
    HeatDerived *d = &c->derived[0];
    for (int i = 0; i < DERIVED; i++) {
        HeatDerived *e = &c->derived[i];
        if (e->data && e->n == n && !memcmp(e->key, key, sizeof e->key)) {
            *fresh = false, e->used = c->clock;
            return e;
        }
        if (d->data && (!e->data || e->used < d->used)) d = e;  // an empty slot, else the least recently used
    }
    *fresh = true;
    free(d->data);
    *d = (HeatDerived){.n = n, .used = c->clock};
    for (;;) {  // room for n within DERIVED_FLOATS, the least recently used freed first
        size_t held = 0;
        HeatDerived *old = NULL;
        for (int i = 0; i < DERIVED; i++)
            if (c->derived[i].data) {
                held += c->derived[i].n;
                if (!old || c->derived[i].used < old->used) old = &c->derived[i];
            }
        if (!old || held + n <= DERIVED_FLOATS) break;
        free(old->data), old->data = NULL;
    }
    d->data = malloc(sizeof(float) * (n ? n : 1));
    memcpy(d->key, key, sizeof d->key);
    return d->data ? d : NULL;
}

// The colour range heat_draw uses for a spec, and the part of it its colour bar shows
// (cmap_range); in *neg_inf whether what the range is read from holds -inf.
static void heat_range(const HeatSpec *h, Colormap *map, float *lo, float *hi, float *bar_lo, float *bar_hi,
                       bool *neg_inf) {
    *map = h->kind == TK_PROBS ? CMAP_SEQUENTIAL : CMAP_DIVERGING;
    const float *d = h->range ? h->range : h->data;
    size_t n = h->range ? h->range_n : (size_t)h->rows * h->cols;
    cmap_range_scan(*map, d, n, lo, hi, bar_lo, bar_hi, neg_inf);
    if (*map == CMAP_SEQUENTIAL)  // probabilities: 0 to 1 on every map, so any two compare
        *lo = *bar_lo = 0.0f, *hi = *bar_hi = 1.0f;
}

// Remembers whether spec h's cells hold -inf (any_masked's answer), found by whichever pass read them.
static void remember_masked(HeatCache *c, const HeatSpec *h, bool any) {
    MaskedEntry *m = &c->m[c->next_masked];
    *m = (MaskedEntry){h->data, h->mask, (size_t)h->rows * (size_t)h->cols, {0}, any};
    memcpy(m->key, h->key, sizeof m->key);
    c->next_masked = (c->next_masked + 1) % MASKED;
}

// heat_range, each range computed once (RangeEntry): a shared one for all the slices that
// share it, a slice's own for that slice (the colour bar's room and the image both ask).
static void cached_range(HeatCache *c, const HeatSpec *h, Colormap *map, float *lo, float *hi, float *bar_lo,
                         float *bar_hi) {
    const float *src = h->range ? h->range : h->data;
    const size_t n = h->range ? h->range_n : (size_t)h->rows * (size_t)h->cols;
    const unsigned slice = h->range ? 0 : h->key[3];  // a shared range serves every slice
    for (int i = 0; i < RANGES; i++) {
        const RangeEntry *r = &c->r[i];
        if (r->range == src && r->n == n && r->key[0] == h->key[0] && r->key[1] == h->key[1] &&
            r->key[2] == h->key[2] && r->key[3] == slice && r->key[4] == h->key[4]) {
            *map = r->map, *lo = r->lo, *hi = r->hi, *bar_lo = r->bar_lo, *bar_hi = r->bar_hi;
            return;
        }
    }
    bool neg_inf;
    heat_range(h, map, lo, hi, bar_lo, bar_hi, &neg_inf);
    if (src == h->data && n == (size_t)h->rows * (size_t)h->cols && !h->mask)
        remember_masked(c, h, neg_inf);  // the pass read what any_masked asks of
    c->r[c->next_range] = (RangeEntry){src, n, {h->key[0], h->key[1], h->key[2], slice, h->key[4]}, *map, *lo, *hi,
                                       *bar_lo, *bar_hi};
    c->next_range = (c->next_range + 1) % RANGES;
}

static const HeatEntry *cached_image(Ui *ui, const HeatSpec *h, int r0, int r1, int c0, int c1, int w,
                                     int ht) {
    HeatCache *c = ui->heat;
    c->clock++;
    HeatEntry *slot = &c->e[0];
    for (int i = 0; i < CACHE_SIZE; i++) {
        HeatEntry *e = &c->e[i];
        if (e->im && !memcmp(e->key, h->key, sizeof e->key) && e->r0 == r0 && e->r1 == r1 &&
            e->c0 == c0 && e->c1 == c1 && e->w == w && e->h == ht) {
            e->used = c->clock;
            return e;
        }
        if (!e->im || e->used < slot->used) slot = e;  // the least recently used
    }
    Rgba *px = malloc(sizeof *px * (size_t)w * ht);
    if (!px) return NULL;
    Colormap map;
    float lo, hi, bar_lo, bar_hi;
    cached_range(c, h, &map, &lo, &hi, &bar_lo, &bar_hi);
    heat_pixels(px, w, ht, h->data, h->mask, h->cols, r0, r1, c0, c1, map, lo, hi);
    if (slot->im) c->pixels -= (size_t)slot->w * (size_t)slot->h;
    gfx_image_free(slot->im);
    slot->im = NULL;
    while (c->pixels + (size_t)w * ht > CACHE_PIXELS) {  // the least recently used go first
        HeatEntry *old = NULL;
        for (int i = 0; i < CACHE_SIZE; i++)
            if (c->e[i].im && (!old || c->e[i].used < old->used)) old = &c->e[i];
        if (!old) break;
        c->pixels -= (size_t)old->w * (size_t)old->h;
        gfx_image_free(old->im);
        old->im = NULL;
    }
    GfxImage *im = gfx_image(ui->g, px, w, ht);
    if (im) c->pixels += (size_t)w * ht;
    *slot = (HeatEntry){{h->key[0], h->key[1], h->key[2], h->key[3], h->key[4]}, r0, r1, c0, c1, w, ht,
                        im, map, lo, hi, bar_lo, bar_hi, c->clock};
    free(px);
    return slot;
}

// Four significant decimals for small values, fewer for large ones, exponents at the ends.
static void fmt_value(char *buf, size_t n, float v) {
    const float a = fabsf(v);
    if (v == -INFINITY) snprintf(buf, n, "-inf (masked)");
    else if (v != 0 && (a < 1e-3f || a >= 1e5f)) {  // 4 digits, the exponent without its padding: -4.290e-4
        char e[32];
        snprintf(e, sizeof e, "%.3e", (double)v);
        char *x = strchr(e, 'e'), *d = x ? x + 1 + (x[1] == '-' || x[1] == '+') : NULL;
        if (d && x[1] == '+') memmove(x + 1, x + 2, strlen(x + 2) + 1), d--;
        while (d && d[0] == '0' && d[1]) memmove(d, d + 1, strlen(d));
        snprintf(buf, n, "%s", e);
    }
    else snprintf(buf, n, a >= 1000 ? "%.0f" : a >= 100 ? "%.1f" : a >= 10 ? "%.2f" : "%.4f", (double)v);
}

// The room the colour bar takes beside the cells: the gap, the bar and its widest value, as
// this map's range gives them (read from the cached image when there is one, for speed).
static int bar_room(Ui *ui, const HeatSpec *h) {
    float lo = 0, hi = 0;
    bool found = false;
    for (int i = 0; i < CACHE_SIZE && !found; i++) {
        const HeatEntry *e = &ui->heat->e[i];
        if (e->im && !memcmp(e->key, h->key, sizeof e->key)) lo = e->bar_lo, hi = e->bar_hi, found = true;
    }
    if (!found) {
        Colormap map;
        float l, u;
        cached_range(ui->heat, h, &map, &l, &u, &lo, &hi);
    }
    char a[32], b[32];
    fmt_value(a, sizeof a, lo), fmt_value(b, sizeof b, hi);
    int w = gfx_text_width(ui->g, FONT_SANS, ui->small, "0.0000");
    const int wa = gfx_text_width(ui->g, FONT_SANS, ui->small, a), wb = gfx_text_width(ui->g, FONT_SANS, ui->small, b);
    w = wa > w ? wa : w, w = wb > w ? wb : w;
    return ui->small + (ui->small / 2 + 4) + 4 + w + ui->small / 2;
}

// The colour bar: the colours from bar_lo (bottom) to bar_hi (top), as the cells have them,
// with those values.
static void colour_bar(Ui *ui, const HeatEntry *en, Rect r, bool masked, const char *absent) {
    const Colormap map = en->map;
    const float lo = en->bar_lo, hi = en->bar_hi;
    const int bw = ui->small / 2 + 4, lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    Rect bar = {r.x, r.y + lh / 2, bw, r.h - lh - (masked ? lh + 4 : 0)};
    if (bar.h < 8) return;
    for (int y = 0; y < bar.h; y++)
        gfx_rect(ui->g, (Rect){bar.x, bar.y + y, bar.w, 1},
                 cmap_value(map, hi - (hi - lo) * (float)y / (float)(bar.h - 1), en->lo, en->hi));
    gfx_frame(ui->g, bar, 1, ui->th->border);
    char s[32];
    const int tx = bar.x + bar.w + 4, tw = r.w - bar.w - 4;
    if (bar.h < lh + 2) {  // too short for a value at each end without one over the other: both, stacked beside it
        fmt_value(s, sizeof s, hi), ui_text_fit(ui, FONT_SANS, ui->small, ui->th->text, tx, bar.y - lh / 2, s, tw);
        fmt_value(s, sizeof s, lo), ui_text_fit(ui, FONT_SANS, ui->small, ui->th->text, tx, bar.y - lh / 2 + lh, s, tw);
        return;
    }
    fmt_value(s, sizeof s, hi), ui_text_fit(ui, FONT_SANS, ui->small, ui->th->text, tx, bar.y - lh / 2, s, tw);
    fmt_value(s, sizeof s, lo), ui_text_fit(ui, FONT_SANS, ui->small, ui->th->text, tx, bar.y + bar.h - lh / 2, s, tw);
    if (lo == 0.0f && hi == 0.0f)  // nothing to colour: say so rather than show a blank
        ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->text, tx, bar.y + bar.h / 2 - lh / 2, "all 0", tw);
    if (map == CMAP_DIVERGING && lo < 0.0f && hi > 0.0f && bar.h > 4 * lh)
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, tx, bar.y + bar.h / 2 - lh / 2, "0", tw);
    if (masked) {
        Rect sw = {bar.x, bar.y + bar.h + 4, bw, lh - 2};
        gfx_rect(ui->g, sw, cmap_masked);
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->text, tx, sw.y, absent ? absent : "masked", tw);
    }
}

static const char *label_of(const char *const *labels, int n, int i, char *buf, size_t cap) {
    if (labels && i < n) return labels[i];
    snprintf(buf, cap, "%d", i);
    return buf;
}

// Row labels: every k-th one, so that none overlap.
static void row_labels(Ui *ui, const HeatSpec *h, Rect cells, int r0, int r1, int lw, int px) {
    const int n = r1 - r0, lh = gfx_line_height(ui->g, FONT_SANS, px);
    const float ch = (float)cells.h / n;
    const int k = ch >= lh * 0.9f ? 1 : (int)ceilf(lh / ch);
    for (int r = r0; r < r1; r += k) {
        char idx[16];
        const char *s = label_of(h->row_labels, h->n_row_labels, r, idx, sizeof idx);
        int y = cells.y + (int)((r - r0 + 0.5f) * ch) - lh / 2;
        int w = gfx_text_width(ui->g, FONT_SANS, px, s);
        ui_text_fit(ui, FONT_SANS, px, ui->th->text, cells.x - 4 - (w < lw ? w : lw), y, s, lw);
    }
}

static void col_labels(Ui *ui, const HeatSpec *h, Rect cells, int c0, int c1, int top_h, int px) {
    const int lh = gfx_line_height(ui->g, FONT_SANS, px);
    const float cw = (float)cells.w / (c1 - c0);
    int widest = 0;
    char idx[16];
    for (int c = h->col_labels ? c0 : c1 - 1; c < c1; c++) {  // indices: the last is the widest
        int w = gfx_text_width(ui->g, FONT_SANS, px, label_of(h->col_labels, h->n_col_labels, c, idx, sizeof idx));
        widest = w > widest ? w : widest;
    }
    // Tokens that do not fit across a cell stand upright (single characters shrink instead);
    // indices are thinned out.
    bool single = h->col_labels != NULL;
    for (int c = c0; c < c1 && single; c++)
        if (c < h->n_col_labels) {
            const char *t = h->col_labels[c];
            single = t[0] && (!t[1] || ((unsigned char)t[0] >= 0xC0 && strlen(t) <= 4));
        }
    if (single && widest > cw - 1 && (int)(cw * 0.95f) >= ui->min_px) {  // smaller: thinned out below
        px = (int)(cw * 0.95f);
        widest = gfx_text_width(ui->g, FONT_SANS, px, "m");
    }
    const bool rotate = h->col_labels && widest > cw - 1 && !single;
    const int step = rotate ? (cw >= lh ? 1 : (int)ceilf(lh / cw))
                            : (widest + 6 <= cw ? 1 : (int)ceilf((widest + 6) / cw));
    for (int c = c0; c < c1; c += step) {
        const char *s = label_of(h->col_labels, h->n_col_labels, c, idx, sizeof idx);
        int x = cells.x + (int)((c - c0 + 0.5f) * cw);
        if (rotate) {
            char cut[128];
            snprintf(cut, sizeof cut, "%.*s", gfx_fit(ui->g, FONT_SANS, px, s, top_h - 6), s);
            gfx_text_up(ui->g, FONT_SANS, px, ui->th->text, x - lh / 2, cells.y - 4, cut);
        } else {
            gfx_text(ui->g, FONT_SANS, px, ui->th->text,
                     x - gfx_text_width(ui->g, FONT_SANS, px, s) / 2, cells.y - lh - 2, s);
        }
    }
}

static void readout(Ui *ui, const HeatSpec *h, Rect cells, Rect line, int r0, int r1, int c0, int c1,
                    bool down) {
    char msg[400] = "";
    if (rect_has(cells, ui->mx, ui->my)) {
        int r = r0 + (int)((long)(ui->my - cells.y) * (r1 - r0) / cells.h);
        int c = c0 + (int)((long)(ui->mx - cells.x) * (c1 - c0) / cells.w);
        char v[48], rl[80] = "", cl[80] = "";
        fmt_value(v, sizeof v, h->data[(size_t)r * h->cols + c]);
        if (h->absent && h->data[(size_t)r * h->cols + c] == -INFINITY) snprintf(v, sizeof v, "%s", h->absent);
        if (h->mask && h->mask[(size_t)r * h->cols + c] == -INFINITY) snprintf(v, sizeof v, "0 (masked key)");
        if (h->row_labels && r < h->n_row_labels) snprintf(rl, sizeof rl, " '%s'", h->row_labels[r]);
        if (h->col_labels && c < h->n_col_labels) snprintf(cl, sizeof cl, " '%s'", h->col_labels[c]);
        char col[100];
        if (h->col_labels_count && h->col_labels && c < h->n_col_labels) snprintf(col, sizeof col, "%s", h->col_labels[c]);
        else snprintf(col, sizeof col, "%d%s", c, cl);
        snprintf(msg, sizeof msg, "%s %d%s, %s %s:  %s%s", h->row_name ? h->row_name : "row", r, rl,
                 h->col_name ? h->col_name : "col", col, v, down ? "  (pixel = mean of cells)" : "");
        if (!down) {
            float cw = (float)cells.w / (c1 - c0), ch = (float)cells.h / (r1 - r0);
            if (cw >= 4 && ch >= 4)
                gfx_frame(ui->g, (Rect){cells.x + (int)((c - c0) * cw), cells.y + (int)((r - r0) * ch),
                                        (int)ceilf(cw), (int)ceilf(ch)}, 2, ui->th->lit);
        }
    } else if (down) {  // said briefly where a narrow map leaves no room for the sentence
        const int per_r = (r1 - r0 + cells.h - 1) / cells.h, per_c = (c1 - c0 + cells.w - 1) / cells.w;
        snprintf(msg, sizeof msg, "downsampled to fit: each pixel is the mean of about %d x %d cells", per_r, per_c);
        if (gfx_text_width(ui->g, FONT_SANS, ui->small, msg) > line.w)
            snprintf(msg, sizeof msg, "downsampled: %d x %d cells a pixel", per_r, per_c);
        if (gfx_text_width(ui->g, FONT_SANS, ui->small, msg) > line.w) snprintf(msg, sizeof msg, "pixel: %dx%d cells", per_r, per_c);
    } else if (r1 - r0 < h->rows || c1 - c0 < h->cols) {
        snprintf(msg, sizeof msg, "zoomed: rows %d-%d, columns %d-%d (drag to pan, 0 resets)", r0, r1 - 1, c0, c1 - 1);
    }
    ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, line.x, line.y, msg, line.w);
}

static void visible(const HeatSpec *h, int *r0, int *r1, int *c0, int *c1) {
    ZoomBox z = h->zoomable ? h->zoom : (ZoomBox){0, 0, 1, 1};
    const float eps = 1e-3f;  // a box on whole cells (heat_zoom_about's) must not gain a sliver
    *r0 = (int)floorf(z.y0 * h->rows + eps), *r1 = (int)ceilf(z.y1 * h->rows - eps);
    *c0 = (int)floorf(z.x0 * h->cols + eps), *c1 = (int)ceilf(z.x1 * h->cols - eps);
    if (*r1 <= *r0) *r1 = *r0 + 1;
    if (*c1 <= *c0) *c1 = *c0 + 1;
    if (*r1 > h->rows) *r1 = h->rows, *r0 = *r0 < *r1 - 1 ? *r0 : *r1 - 1;
    if (*c1 > h->cols) *c1 = h->cols, *c0 = *c0 < *c1 - 1 ? *c0 : *c1 - 1;
}

static bool single_chars(const HeatSpec *h, int c0, int c1) {
    for (int c = c0; c < c1 && c < h->n_col_labels; c++) {
        const char *t = h->col_labels[c];
        if (!t[0] || (t[1] && ((unsigned char)t[0] < 0xC0 || strlen(t) > 4))) return false;
    }
    return true;
}

static bool any_masked(HeatCache *c, const HeatSpec *h) {
    const size_t n = (size_t)h->rows * (size_t)h->cols;
    for (int i = 0; i < MASKED; i++) {
        const MaskedEntry *m = &c->m[i];
        if (m->data == h->data && m->mask == h->mask && m->n == n && !memcmp(m->key, h->key, sizeof m->key)) return m->any;
    }
    const bool any = cmap_any_neg_inf(h->data, n) || cmap_any_neg_inf(h->mask, n);
    remember_masked(c, h, any);
    return any;
}

// The title in bold, then the shape and the subtitle. Where both do not fit, the subtitle (which
// head, which slice) is kept and the shape left out: a map of one head must say which; where the
// subtitle alone does not fit either, the shape and the subtitle go on lines of their own under
// the title (wrapped, never cut: they carry numbers). Returns the height used.
static int title_line(Ui *ui, const HeatSpec *h, Rect r, int px) {
    char sh[64] = "", head[256];
    if (!h->compact) shape_str(&h->shape, sh, sizeof sh);
    snprintf(head, sizeof head, "  %s%s%s", sh, h->subtitle ? "   " : "", h->subtitle ? h->subtitle : "");
    const int tw = gfx_text_width(ui->g, FONT_BOLD, px, h->title), lh = gfx_line_height(ui->g, FONT_BOLD, px);
    if (tw + gfx_text_width(ui->g, FONT_SANS, px, head) > r.w && !h->compact) {
        if (h->subtitle) snprintf(head, sizeof head, "  %s", h->subtitle);
        if (tw + gfx_text_width(ui->g, FONT_SANS, px, head) > r.w) {  // shape and subtitle on a line of their own
            ui_text_fit(ui, FONT_BOLD, px, ui->th->text, r.x, r.y, h->title, r.w);
            snprintf(head, sizeof head, "%s%s%s", sh, h->subtitle ? "   " : "", h->subtitle ? h->subtitle : "");
            const int sub_h = ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->muted, (Rect){r.x, r.y + lh, r.w, r.h / 4}, head);
            return lh + sub_h;
        }
    }
    int w = ui_text_fit(ui, FONT_BOLD, px, ui->th->text, r.x, r.y, h->title, r.w * 2 / 3);
    ui_text_fit(ui, FONT_SANS, px, ui->th->muted, r.x + w, r.y, head, r.w - w);
    return lh;
}

typedef struct {
    Rect cells;
    float cw, ch;          // cell size in pixels (below 1: downsampled along that axis)
    int row_px, col_px;    // label sizes: shrunk so that every label fits when possible
} Geometry;

// Labels shrink to fit their rows, but not below the smallest text (then rows are skipped).
static int label_size(const Ui *ui, float cell) {
    const int px = (int)(cell * 0.8f);
    return px >= ui->small ? ui->small : px >= ui->min_px ? px : ui->small;
}

// Cell sizes: square for square tensors (attention maps), otherwise stretched to use the space
// (at most 3:1), with one- or two-row tensors kept at least a text line tall.
static Geometry geometry(const Ui *ui, const HeatSpec *h, Rect area, int vr, int vc) {
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    const float max_cell = h->compact ? 1e9f : ui->px * 3.0f;
    float cw = fminf((float)area.w / vc, max_cell), ch = fminf((float)area.h / vr, max_cell);
    if (h->rows == h->cols || h->compact) cw = ch = fminf(cw, ch);
    else if (vr <= 2) ch = fminf((float)area.h / vr, fmaxf(cw * 3.0f, (float)lh));
    else ch = fminf(ch, cw * 3.0f), cw = fminf(cw, ch * 3.0f);
    if (h->compact) cw = (float)area.w / vc, ch = (float)area.h / vr;
    if (cw >= 2.0f && !h->compact) cw = floorf(cw);
    if (ch >= 2.0f && !h->compact) ch = floorf(ch);
    Geometry g = {{area.x, area.y, cw < 1.0f ? area.w : (int)(cw * vc), ch < 1.0f ? area.h : (int)(ch * vr)}, cw, ch,
                  label_size(ui, ch), label_size(ui, cw)};
    return g;
}

float heat_cell_guess(const Ui *ui, int rows, int cols, Rect r) {
    const int lh = gfx_line_height(ui->g, FONT_MONO, ui->small);
    const int chrome_w = 3 * ui->px + 7 * ui->small, chrome_h = 3 * lh + 2 * ui->pad;
    const float cw = (float)(r.w - chrome_w) / (cols > 0 ? cols : 1), ch = (float)(r.h - chrome_h) / (rows > 0 ? rows : 1);
    return fmaxf(0.0f, fminf(cw, ch));
}

static int widest_row_label(Ui *ui, const HeatSpec *h, int r0, int r1) {
    int lw = 0;
    char idx[16];
    if (!h->row_labels) return gfx_text_width(ui->g, FONT_SANS, ui->small, (snprintf(idx, sizeof idx, "%d", r1 - 1), idx));
    for (int i = r0; i < r1 && i < h->n_row_labels; i++) {
        int w = gfx_text_width(ui->g, FONT_SANS, ui->small, h->row_labels[i]);
        lw = w > lw ? w : lw;
    }
    return lw;
}

static void separators(Ui *ui, const Geometry *g, int vr, int vc) {
    if (g->cw < 14 || g->ch < 14) return;  // thin lines between large cells only
    for (int c = 1; c < vc; c++) gfx_rect(ui->g, (Rect){g->cells.x + (int)(c * g->cw), g->cells.y, 1, g->cells.h}, ui->th->bg);
    for (int q = 1; q < vr; q++) gfx_rect(ui->g, (Rect){g->cells.x, g->cells.y + (int)(q * g->ch), g->cells.w, 1}, ui->th->bg);
}

// Room above the cells for tokens standing upright: the longest whole (within 2 to 5 lines).
static int upright_room(Ui *ui, const HeatSpec *h, int c0, int c1, int lh) {
    int widest = 0;
    for (int c = c0; c < c1 && c < h->n_col_labels; c++) {
        const int w = gfx_text_width(ui->g, FONT_SANS, ui->small, h->col_labels[c]);
        widest = w > widest ? w : widest;
    }
    const int want = widest + 10;
    return want < 2 * lh ? 2 * lh : want > 5 * lh ? 5 * lh : want;
}

static const HeatFloor *floor_of(const Ui *ui, const HeatSpec *h) {
    for (int i = 0; i < ui->n_floor; i++)
        if (!memcmp(ui->floor[i].key, h->key, sizeof h->key))
            return ui->floor[i].cw >= 1.0f && ui->floor[i].ch >= 1.0f ? &ui->floor[i] : NULL;  // not downsampled
    return NULL;
}

// Scaled up: cells that would come out smaller than at the default scale (floor f) keep that
// size: fewer rows or columns are shown (from the zoom's first) where the room is short, and
// cells a shape rule held back grow where the room allows.
static Geometry at_least_floor(const Ui *ui, const HeatSpec *h, const HeatFloor *f, Rect area, Geometry g, int *r0,
                               int *r1, int *c0, int *c1) {
    if (g.cw >= f->cw && g.ch >= f->ch) return g;
    const int fit_r = (int)(area.h / f->ch), fit_c = (int)(area.w / f->cw);
    if (fit_r >= 1 && fit_r < *r1 - *r0) *r1 = *r0 + fit_r;
    if (fit_c >= 1 && fit_c < *c1 - *c0) *c1 = *c0 + fit_c;
    const int vr = *r1 - *r0, vc = *c1 - *c0;
    g = geometry(ui, h, area, vr, vc);
    if (g.cw < f->cw && f->cw * vc <= area.w) g.cw = f->cw;
    if (g.ch < f->ch && f->ch * vr <= area.h) g.ch = f->ch;
    g.cells.w = (int)(g.cw * vc), g.cells.h = (int)(g.ch * vr);
    return g;
}

Rect heat_draw(Ui *ui, const HeatSpec *spec, Rect r) {
    HeatSpec whole = *spec;  // labels that stop short of an axis's end: the axis is numbered instead
    if (whole.n_row_labels < whole.rows) whole.row_labels = NULL, whole.n_row_labels = 0;
    if (whole.n_col_labels < whole.cols) whole.col_labels = NULL, whole.n_col_labels = 0;
    const HeatSpec *h = &whole;
    if (h->rows <= 0 || h->cols <= 0 || r.w < 8 || r.h < 8) return (Rect){r.x, r.y, 0, 0};
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    const int th = title_line(ui, h, r, h->compact ? ui->small : ui->px);
    int r0, r1, c0, c1;
    visible(h, &r0, &r1, &c0, &c1);
    int vr = r1 - r0, vc = c1 - c0;
    int lw = 0, top = 2, bar = 0, bottom = 0;
    if (!h->compact) {
        lw = widest_row_label(ui, h, r0, r1);
        const int most = r.w / (h->label_part > 0 ? h->label_part : 4);
        lw = lw > most ? most : lw;
        top = h->col_labels && !single_chars(h, c0, c1) ? upright_room(ui, h, c0, c1, lh) : lh + 4;
        bar = bar_room(ui, h);
        bottom = lh + 4;
    }
    Rect area = {r.x + lw + 6, r.y + th + top, r.w - lw - 6 - bar, r.h - th - top - bottom};
    if (h->compact) area = (Rect){r.x, r.y + th, r.w, r.h - th};
    if (area.w < 4 || area.h < 4) return (Rect){r.x, r.y, 0, 0};
    Geometry g = geometry(ui, h, area, vr, vc);
    if (h->zoomable && ui->measuring) {  // the dry pass at the default scale: keep the cells' size
        if (ui->n_floor < UI_MAX_FLOORS)
            ui->floor[ui->n_floor++] = (HeatFloor){{h->key[0], h->key[1], h->key[2], h->key[3], h->key[4]}, g.cw, g.ch};
        return g.cells;
    }
    const HeatFloor *f = h->zoomable ? floor_of(ui, h) : NULL;
    if (f) g = at_least_floor(ui, h, f, area, g, &r0, &r1, &c0, &c1), vr = r1 - r0, vc = c1 - c0;
    const bool down = g.cw < 1.0f || g.ch < 1.0f;
    const HeatEntry *en = cached_image(ui, h, r0, r1, c0, c1, g.cw < 1.0f ? g.cells.w : vc,
                                       g.ch < 1.0f ? g.cells.h : vr);
    if (!en) return (Rect){r.x, r.y, 0, 0};
    gfx_draw_image(ui->g, en->im, g.cells);
    if (!h->compact) separators(ui, &g, vr, vc);
    if (h->highlight) gfx_frame(ui->g, rect_inset(g.cells, -3), 3, ui->th->lit);
    if (h->zoomable) {
        ui->zoom_view = (ZoomView){g.cells, area, h->rows, h->cols, r0, r1, c0, c1, h->compact};
        ui_hot(ui, g.cells, CMD_ZOOM_AREA, 0);
    }
    if (h->compact) return g.cells;
    row_labels(ui, h, g.cells, r0, r1, lw, g.row_px);
    col_labels(ui, h, g.cells, c0, c1, top, g.col_px);
    const int room = r.y + r.h - lh - 4 - g.cells.y;
    const int bar_h = g.cells.h > 4 * lh ? g.cells.h : (4 * lh < room ? 4 * lh : room);
    colour_bar(ui, en, (Rect){g.cells.x + g.cells.w + ui->small, g.cells.y, bar - ui->small, bar_h}, any_masked(ui->heat, h), h->absent);
    const int below = g.cells.y + (g.cells.h > bar_h ? g.cells.h : bar_h) + 2;
    readout(ui, h, g.cells, (Rect){r.x, below < r.y + r.h - lh ? below : r.y + r.h - lh, r.w, lh}, r0, r1, c0, c1, down);
    return g.cells;
}

// ---- zooming ----

static float clamp01(float v) { return fminf(fmaxf(v, 0.0f), 1.0f); }

// Cells shown after one wheel step: about 20% fewer (in) or 25% more (out), at least one change.
static int step_count(int shown, int total, int dir) {
    int n = (int)ceilf((float)shown * (dir > 0 ? 0.8f : 1.25f));
    n = dir > 0 ? (n < shown ? n : shown - 1) : (n > shown ? n : shown + 1);
    return n < 1 ? 1 : n > total ? total : n;
}

// The first cell of a run of `count` that puts tensor position f at `offset` pixels into the cells.
static int first_cell(float f, float offset, float cell, int count, int total) {
    const int k = (int)lroundf(f - offset / cell);
    return k < 0 ? 0 : k > total - count ? total - count : k;
}

ZoomBox heat_zoom_about(const Ui *ui, ZoomBox z, int x, int y, int dir) {
    const ZoomView *v = &ui->zoom_view;
    if (dir == 0 || v->cells.w <= 0 || v->cells.h <= 0 || !rect_has(v->room, x, y)) return z;
    // The position in the slice under the pointer (held onto the cells), in cells.
    const float fc = v->c0 + (v->c1 - v->c0) * clamp01((float)(x - v->cells.x) / v->cells.w);
    const float fr = v->r0 + (v->r1 - v->r0) * clamp01((float)(y - v->cells.y) / v->cells.h);
    const int vc = step_count(v->c1 - v->c0, v->cols, dir), vr = step_count(v->r1 - v->r0, v->rows, dir);
    const HeatSpec like = {.rows = v->rows, .cols = v->cols, .compact = v->compact};
    const Geometry g = geometry(ui, &like, v->room, vr, vc);  // the cells as they will be drawn
    const float ox = fminf((float)(x - v->room.x), g.cw * vc), oy = fminf((float)(y - v->room.y), g.ch * vr);
    const int c0 = first_cell(fc, ox, g.cw, vc, v->cols), r0 = first_cell(fr, oy, g.ch, vr, v->rows);
    return (ZoomBox){(float)c0 / v->cols, (float)r0 / v->rows, (float)(c0 + vc) / v->cols, (float)(r0 + vr) / v->rows};
}

ZoomBox heat_pan(const Ui *ui, ZoomBox z, int dx, int dy) {
    const ZoomView *v = &ui->zoom_view;
    if (v->cells.w <= 0 || v->cells.h <= 0) return z;
    // The box, or the part of it drawn when + cut it (heat_draw's at_least_floor): that part pans.
    const float w = fminf(z.x1 - z.x0, (float)(v->c1 - v->c0) / v->cols);
    const float h = fminf(z.y1 - z.y0, (float)(v->r1 - v->r0) / v->rows);
    float x0 = z.x0 - (float)(v->c1 - v->c0) / v->cols * dx / v->cells.w;
    float y0 = z.y0 - (float)(v->r1 - v->r0) / v->rows * dy / v->cells.h;
    x0 = fminf(fmaxf(x0, 0.0f), 1.0f - w), y0 = fminf(fmaxf(y0, 0.0f), 1.0f - h);
    return (ZoomBox){x0, y0, x0 + w, y0 + h};
}
