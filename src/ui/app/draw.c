// draw.c: the window's layout, the top bar, the key list and the message banners.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "decoding.h"

static void metrics(const App *a, float scale, Ui *ui, int w, int h) {
    // Text follows the window: 16 px up to 1280x800, larger on a 4K projector; never under 14
    // px at the default scale (+ and - scale that floor too), whatever the window's size.
    float base = fminf(h / 50.0f, w / 80.0f);
    base = fmaxf(16.0f, fminf(base, 44.0f)) * scale;
    ui->th = a->contrast ? &theme_contrast : &theme_light;
    ui->px = (int)lroundf(base * (a->contrast ? 1.1f : 1.0f));
    ui->min_px = (int)lroundf(14.0f * scale);
    ui->small = (int)lroundf(ui->px * 0.82f);
    if (ui->small < ui->min_px) ui->small = ui->min_px;
    ui->pad = ui->px / 2 > 4 ? ui->px / 2 : 4;
}

void app_metrics(const App *a, Ui *ui, int w, int h) { metrics(a, a->scale, ui, w, h); }

// How tall banner() draws msg across width w: at most three lines (measured off screen).
static int banner_height(Ui *ui, int w, const char *msg) {
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    return ui_text_wrap(ui, FONT_BOLD, ui->px, ui->th->text, (Rect){-10000, 0, w - 2 * ui->pad, 3 * lh}, msg) + ui->pad;
}

static void banner(Ui *ui, Rect r, const char *msg, Rgba bg, Rgba fg) {
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    Rect inner = {r.x + ui->pad, r.y + ui->pad / 2, r.w - 2 * ui->pad, 3 * lh};
    gfx_rect(ui->g, (Rect){r.x, r.y, r.w, banner_height(ui, r.w, msg)}, bg);
    ui_text_wrap(ui, FONT_BOLD, ui->px, fg, inner, msg);
}

// The side columns: the map and the lesson take shares of the width with minimums, but the
// centre (the tensors) keeps at least half of it: a narrow window drops the lesson, then the map.
static void columns(int w, int *map_w, int *lesson_w) {
    *map_w = (int)fmaxf(w * 0.19f, 140.0f), *lesson_w = (int)fmaxf(w * 0.27f, 200.0f);
    if (w - *map_w - *lesson_w < w / 2) *lesson_w = 0;
    if (w - *map_w - *lesson_w < w / 2) *map_w = 0;
}

// A lesson whose files are on their way (the browser fetches a lesson's model when it opens),
// or whose model's weights are being read into place: what it is, and a bar of how far.
static void loading_state(Ui *ui, const App *a, Rect r) {
    const bool reading = a->reading.on;
    const SessionSpec *spec = reading ? &a->reading.spec : &a->waiting.spec;
    const double progress = reading ? a->reading.progress : a->waiting.progress;
    const char *path = spec->model_path ? spec->model_path : spec->lesson_path;
    const char *name = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path ? path : "";
    char msg[300];
    snprintf(msg, sizeof msg, "%s %s: %.0f%%", reading ? "Reading the weights of" : "Loading", name, 100.0 * progress);
    r = rect_inset(r, ui->pad * 2);
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->px);
    ui_text_fit(ui, FONT_SANS, ui->px, ui->th->text, r.x, r.y, msg, r.w);
    const Rect bar = {r.x, r.y + lh + ui->pad, r.w, ui->pad * 2};
    gfx_frame(ui->g, bar, 1, ui->th->border);
    gfx_rect(ui->g, (Rect){bar.x, bar.y, (int)(bar.w * progress), bar.h}, ui->th->accent);
}

static void empty_state(Ui *ui, Rect r) {
    ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, rect_inset(r, ui->pad * 2),
                 "Nothing is loaded. Press L for the lesson list, N / P for the next or previous lesson, "
                 "or start stepformer with a lesson (stepformer lesson FILE) or a model (stepformer "
                 "--model FILE --input TEXT). Press Q to quit.");
}

static void draw_frame(Ui *ui, const App *a, float scale);

// A passing message: a small toast at the foot of the centre, on as many lines as it needs (a
// step number in it is never cut off).
static void toast(Ui *ui, Rect center, const char *msg) {
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->small);
    int tw = gfx_text_width(ui->g, FONT_BOLD, ui->small, msg) + 2 * ui->pad;
    if (tw > center.w) tw = center.w;
    const int th = tw < center.w ? lh  // one line, or as many as wrapping takes (measured off screen)
                 : ui_text_wrap(ui, FONT_BOLD, ui->small, ui->th->on_accent, (Rect){-100000, 0, tw - 2 * ui->pad, center.h}, msg);
    Rect t = {center.x + center.w - tw, center.y + center.h - th - ui->pad, tw, th + ui->pad};
    gfx_rect(ui->g, t, ui->th->accent);
    ui_text_wrap(ui, FONT_BOLD, ui->small, ui->th->on_accent, (Rect){t.x + ui->pad, t.y + ui->pad / 2, tw - 2 * ui->pad, th}, msg);
}

// Scaled up (+), the frame is first laid out dry at the default scale: each zoomable heatmap's
// cells there are the least it is then drawn with (fewer rows and columns shown, panned by a
// drag, when the larger text leaves less room). + never shrinks a heatmap.
void app_draw(Ui *ui, const App *a) {
    ui->n_floor = 0;
    // The last frame's reads are done with: under a trace budget what it showed may go again
    // (this frame reads what it shows anew, the same numbers).
    if (a->loaded && a->session.it) interp_release_reads(a->session.it);
    if (a->scale > 1.0f) {
        gfx_set_dry(ui->g, true), ui->measuring = true;
        draw_frame(ui, a, 1.0f);
        gfx_set_dry(ui->g, false), ui->measuring = false;
    }
    draw_frame(ui, a, a->scale);
}

static void draw_frame(Ui *ui, const App *a, float scale) {
    int w, h;
    gfx_size(ui->g, &w, &h);
    metrics(a, scale, ui, w, h);
    ui->n_hot = 0, ui->n_elided = 0;
    ui->zoom_view.cells = (Rect){0, 0, 0, 0};
    memset(ui->scroll, 0, sizeof ui->scroll);
    gfx_begin(ui->g, ui->th->bg);
    const int top = gfx_line_height(ui->g, FONT_BOLD, ui->px) + ui->pad * 2;
    const int bottom = gfx_line_height(ui->g, FONT_SANS, ui->small) * 3 + ui->pad;
    int map_w, lesson_w;
    columns(w, &map_w, &lesson_w);
    const Rect bar = {0, 0, w, top}, map = {0, top, map_w, h - top - bottom},
               center = {map_w, top, w - map_w - lesson_w, h - top - bottom},
               lesson = {w - lesson_w, top, lesson_w, h - top - bottom}, timeline = {0, h - bottom, w, bottom};
    ui->center = center;
    view_top_bar(ui, a, bar);
    if (a->loaded) {
        if (map_w > 0) view_map(ui, a, map);
        if (a->card != CARD_NONE) view_card(ui, a, center);
        else app_views[a->view](ui, a, center);
        view_gradcheck(ui, a, center);
        view_quiz(ui, a, center);
        if (lesson_w > 0) view_lesson(ui, a, lesson);
        view_timeline(ui, a, timeline);
    } else {  // nothing shown: what is said goes below an error's banner, not under it
        const int below = a->error[0] ? banner_height(ui, center.w, a->error) : 0;
        const Rect rest = {center.x, center.y + below, center.w, center.h - below};
        if (a->waiting.on || a->reading.on) loading_state(ui, a, rest);
        else empty_state(ui, rest);
    }
    if (a->error[0]) banner(ui, (Rect){center.x, center.y, center.w, 0}, a->error, ui->th->error_bg, ui->th->error_text);
    if (a->notice[0]) toast(ui, center, a->notice);
    if (a->lesson_list) view_lessons(ui, a, (Rect){0, 0, w, h});
    if (a->help) view_help(ui, a, (Rect){0, 0, w, h});
}
