// draw.c: the window's layout, the top bar, the key list and the message banners.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "actions.h"
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

static void banner(Ui *ui, Rect r, const char *msg, Rgba bg, Rgba fg) {
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    Rect inner = {r.x + ui->pad, r.y + ui->pad / 2, r.w - 2 * ui->pad, 3 * lh};
    Rect box = {r.x, r.y, r.w, 0};
    box.h = ui_text_wrap(ui, FONT_BOLD, ui->px, fg, (Rect){-10000, 0, inner.w, inner.h}, msg) + ui->pad;
    gfx_rect(ui->g, box, bg);
    ui_text_wrap(ui, FONT_BOLD, ui->px, fg, inner, msg);
}

// A label on a coloured box in the top bar at x, leaving at least `keep` of room to the input
// field (and taking at most half of room when it cannot); returns the x after it.
static int badge(Ui *ui, Rect bar, int x, int room, int keep, const char *text, Rgba bg, Rgba fg) {
    const int w = gfx_text_width(ui->g, FONT_BOLD, ui->small, text) + ui->pad;
    const int most = room - keep > room / 2 ? room - keep : room / 2, bw = w < most ? w : most;
    gfx_rect(ui->g, (Rect){x - ui->pad / 2, bar.y + ui->pad / 2, bw, bar.h - ui->pad}, bg);
    ui_text_fit(ui, FONT_BOLD, ui->small, fg, x, bar.y + (bar.h - gfx_line_height(ui->g, FONT_BOLD, ui->small)) / 2, text,
                bw - ui->pad);
    return x + bw + ui->pad;
}

// The title's first clause: up to its first "? " (kept) or ": " (left out), when that clause
// is a headline of its own ("Which head reads the month?", "How it learns"), not a label such
// as "Mistake" or "Ablation" (under 12 bytes); else 0.
static size_t first_clause(const char *title) {
    const char *q = strstr(title, "? "), *c = strstr(title, ": ");
    const size_t n = q && (!c || q < c) ? (size_t)(q - title) + 1 : c ? (size_t)(c - title) : 0;
    return n >= 12 ? n : 0;
}

// The title in the top bar, in `room` px from x, the first of these that fits: whole at the
// text size, whole at the small size, its first clause at the text size, then at the small
// size; else cut short at the small size. A projector shows a headline whole ("Which head
// reads the month?") rather than one cut mid-word. Returns the width drawn.
static int bar_title(Ui *ui, Rect bar, int x, const char *title, int room) {
    char clause[256] = "";
    const size_t n = first_clause(title);
    if (n > 0 && n < sizeof clause) memcpy(clause, title, n), clause[n] = '\0';
    const struct {
        const char *text;
        int px;
    } tries[4] = {{title, ui->px}, {title, ui->small}, {clause, ui->px}, {clause, ui->small}};
    for (int k = 0; k < 4; k++)
        if (tries[k].text[0] && gfx_text_width(ui->g, FONT_BOLD, tries[k].px, tries[k].text) <= room)
            return gfx_text(ui->g, FONT_BOLD, tries[k].px, ui->th->text, x,
                            bar.y + (bar.h - gfx_line_height(ui->g, FONT_BOLD, tries[k].px)) / 2, tries[k].text);
    return ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->text, x,
                       bar.y + (bar.h - gfx_line_height(ui->g, FONT_BOLD, ui->small)) / 2, title, room);
}

void view_top_bar(Ui *ui, const App *a, Rect r) {
    const Theme *t = ui->th;
    gfx_rect(ui->g, r, t->panel_alt);
    gfx_rect(ui->g, (Rect){r.x, r.y + r.h - t->line, r.w, t->line}, t->border);
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->px), y = r.y + (r.h - lh) / 2;
    int x = r.x + ui->pad;
    // View tabs on the right.
    int tabs_w = 0;
    for (int v = 0; v < VIEW_COUNT; v++) tabs_w += gfx_text_width(ui->g, FONT_BOLD, ui->small, view_names[v]) + ui->pad * 2;
    int tx = r.x + r.w - tabs_w - ui->pad;
    for (int v = 0; v < VIEW_COUNT; v++) {
        int w = gfx_text_width(ui->g, FONT_BOLD, ui->small, view_names[v]) + ui->pad * 2;
        Rect tab = {tx, r.y + ui->pad / 2, w - 2, r.h - ui->pad};
        bool on = a->view == (ViewKind)v;
        gfx_rect(ui->g, tab, on ? t->accent : t->panel);
        gfx_text(ui->g, FONT_BOLD, ui->small, on ? t->on_accent : t->text, tab.x + ui->pad,
                 tab.y + (tab.h - gfx_line_height(ui->g, FONT_BOLD, ui->small)) / 2, view_names[v]);
        ui_hot(ui, tab, CMD_VIEW, v);
        tx += w;
    }
    char at[48];
    if (a->lesson_at >= 0 && course_place(&a->course, a->lesson_at, at, sizeof at)[0]) {  // its place: "3/12"
        gfx_text(ui->g, FONT_BOLD, ui->small, t->muted, x, r.y + (r.h - gfx_line_height(ui->g, FONT_BOLD, ui->small)) / 2, at);
        x += gfx_text_width(ui->g, FONT_BOLD, ui->small, at) + ui->pad;
    }
    const int room = r.x + r.w - tabs_w - 2 * ui->pad - x;
    // The input sentence: click or E to edit. The title comes first (bar_title), leaving the input at least a third.
    char in[600];  // a decoder-only program's input is the prompt it continues
    const char *label = a->loaded && program_decoder_only(&a->session.lesson.program) ? "prompt: " : "input: ";
    if (a->editing) snprintf(in, sizeof in, "%s%s_", label, a->edit);
    else snprintf(in, sizeof in, "%s%s", label, a->loaded ? a->session.input_text : "");
    const int in_w = gfx_text_width(ui->g, a->editing ? FONT_MONO : FONT_SANS, ui->px, in) + ui->pad * 4;
    const int title_room = room - (in_w < room / 3 ? in_w : room / 3);  // the field takes what the title leaves
    x += bar_title(ui, r, x, a->loaded && a->source[0] ? a->source : "stepformer", title_room);
    x += ui->pad * 2;
    if (a->loaded && ablation_any(interp_ablation(a->session.it))) {  // pieces switched off: never unnoticed
        char off[320], what[300];
        ablation_text(interp_ablation(a->session.it), what, sizeof what);
        snprintf(off, sizeof off, "OFF: %s (U)", what);
        const int room_left = r.x + r.w - tabs_w - 2 * ui->pad - x;
        x = badge(ui, r, x, room_left, room_left / 2, off, t->error_bg, t->error_text);
    }
    const DecodeChoice *c = a->loaded ? &a->session.run.choice : NULL;
    if (c && !decode_is_greedy(c) && !a->session.run.tgt && program_has_decoder(&a->session.lesson.program)) {
        char text[64];  // sampling or beam search: named wherever the window is (in full in Decoding)
        if (c->beam >= 2) snprintf(text, sizeof text, "beam %d (Z)", c->beam);
        else snprintf(text, sizeof text, "sampling (Z)");
        x = badge(ui, r, x, r.x + r.w - tabs_w - 2 * ui->pad - x, 4 * ui->px, text, t->accent, t->on_accent);
    }
    Rect field = {x - ui->pad / 2, r.y + ui->pad / 2, r.x + r.w - tabs_w - 2 * ui->pad - x, r.h - ui->pad};
    if (field.w > 20) {
        gfx_rect(ui->g, field, a->editing ? t->panel : t->panel_alt);
        if (a->editing) gfx_frame(ui->g, field, 2, t->accent);
        if (a->editing && a->edit_fresh) {  // the old sentence is selected: typing replaces it
            int pw = gfx_text_width(ui->g, FONT_MONO, ui->px, label);
            int sw = gfx_text_width(ui->g, FONT_MONO, ui->px, a->edit);
            if (pw + sw > field.w - ui->pad) sw = field.w - ui->pad - pw;
            gfx_rect(ui->g, (Rect){x + pw, y, sw, lh}, t->lit);
        }
        ui_text_fit(ui, a->editing ? FONT_MONO : FONT_SANS, ui->px, t->text, x, y, in, field.w - ui->pad);
        ui_hot(ui, field, CMD_EDIT_INPUT, 0);
    }
}

void view_help(Ui *ui, const App *a, Rect r) {
    (void)a;
    const Theme *t = ui->th;
    // The body size if every row fits, else the label size (a small window still lists them all).
    int px = ui->px, lh = gfx_line_height(ui->g, FONT_SANS, px);
    if ((key_help_count + 3) * lh > r.h - 2 * ui->pad) px = ui->small, lh = gfx_line_height(ui->g, FONT_SANS, px);
    int w = 0;
    for (int i = 0; i < key_help_count; i++) {
        int k = gfx_text_width(ui->g, FONT_BOLD, px, key_help[i].keys);
        w = k > w ? k : w;
    }
    Rect box = {r.x + r.w / 8, r.y + r.h / 10, r.w * 3 / 4, (key_help_count + 3) * lh};
    if (r.w < 900) box.x = r.x + ui->pad, box.w = r.w - 2 * ui->pad;
    if (box.y + box.h > r.y + r.h - ui->pad) box.y = r.y + ui->pad;
    if (box.h > r.h - 2 * ui->pad) box.h = r.h - 2 * ui->pad;
    gfx_rect(ui->g, rect_inset(box, -4), t->text);
    gfx_rect(ui->g, box, t->panel);
    int y = box.y + ui->pad;
    gfx_text(ui->g, FONT_BOLD, px, t->text, box.x + ui->pad, y, "Keys");
    y += lh * 3 / 2;
    for (int i = 0; i < key_help_count && y + lh <= box.y + box.h; i++, y += lh) {
        gfx_text(ui->g, FONT_BOLD, px, t->accent, box.x + ui->pad, y, key_help[i].keys);
        ui_text_fit(ui, FONT_SANS, px, t->text, box.x + 2 * ui->pad + w, y, key_help[i].what, box.w - 3 * ui->pad - w);
    }
}

// The side columns: the map and the lesson take shares of the width with minimums, but the
// centre (the tensors) keeps at least half of it: a narrow window drops the lesson, then the map.
static void columns(int w, int *map_w, int *lesson_w) {
    *map_w = (int)fmaxf(w * 0.19f, 140.0f), *lesson_w = (int)fmaxf(w * 0.27f, 200.0f);
    if (w - *map_w - *lesson_w < w / 2) *lesson_w = 0;
    if (w - *map_w - *lesson_w < w / 2) *map_w = 0;
}

// A lesson whose files are on their way (the browser fetches a lesson's model when it opens):
// what it is, and a bar of how much has arrived.
static void loading_state(Ui *ui, const App *a, Rect r) {
    const char *path = a->waiting.spec.lesson_path ? a->waiting.spec.lesson_path : a->waiting.spec.model_path;
    const char *name = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path ? path : "";
    char msg[300];
    snprintf(msg, sizeof msg, "Loading %s: %.0f%%", name, 100.0 * a->waiting.progress);
    r = rect_inset(r, ui->pad * 2);
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->px);
    ui_text_fit(ui, FONT_SANS, ui->px, ui->th->text, r.x, r.y, msg, r.w);
    const Rect bar = {r.x, r.y + lh + ui->pad, r.w, ui->pad * 2};
    gfx_frame(ui->g, bar, 1, ui->th->border);
    gfx_rect(ui->g, (Rect){bar.x, bar.y, (int)(bar.w * a->waiting.progress), bar.h}, ui->th->accent);
}

static void empty_state(Ui *ui, Rect r) {
    ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, rect_inset(r, ui->pad * 2),
                 "Nothing is loaded. Press L for the lesson list, N / P for the next or previous lesson, "
                 "or start stepformer with a lesson (stepformer lesson FILE) or a model (stepformer "
                 "--model FILE --input TEXT). Press Q to quit.");
}

static void draw_frame(Ui *ui, const App *a, float scale);

// Scaled up (+), the frame is first laid out dry at the default scale: each zoomable heatmap's
// cells there are the least it is then drawn with (fewer rows and columns shown, panned by a
// drag, when the larger text leaves less room). + never shrinks a heatmap.
void app_draw(Ui *ui, const App *a) {
    ui->n_floor = 0;
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
    ui->n_hot = 0;
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
    view_top_bar(ui, a, bar);
    if (a->loaded) {
        if (map_w > 0) view_map(ui, a, map);
        if (a->card != CARD_NONE) view_card(ui, a, center);
        else switch (a->view) {
        case VIEW_STAGE: view_stage(ui, a, center); break;
        case VIEW_ATTENTION: view_attention(ui, a, center); break;
        case VIEW_DECODE: view_decode(ui, a, center); break;
        case VIEW_PE: view_pe(ui, a, center); break;
        case VIEW_TRAIN: view_train(ui, a, center); break;
        case VIEW_COMPARE: view_compare(ui, a, center); break;
        case VIEW_PATCH: view_patch(ui, a, center); break;
        case VIEW_COUNT: break;
        }
        view_gradcheck(ui, a, center);
        view_quiz(ui, a, center);
        if (lesson_w > 0) view_lesson(ui, a, lesson);
        view_timeline(ui, a, timeline);
    } else if (a->waiting.on) {
        loading_state(ui, a, center);
    } else {
        empty_state(ui, center);
    }
    if (a->error[0]) banner(ui, (Rect){center.x, center.y, center.w, 0}, a->error, ui->th->error_bg, ui->th->error_text);
    if (a->notice[0]) {  // a passing message: a small toast at the foot of the centre
        const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->small);
        int tw = gfx_text_width(ui->g, FONT_BOLD, ui->small, a->notice) + 2 * ui->pad;
        if (tw > center.w) tw = center.w;
        Rect t = {center.x + center.w - tw, center.y + center.h - lh - ui->pad, tw, lh + ui->pad};
        gfx_rect(ui->g, t, ui->th->accent);
        ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->on_accent, t.x + ui->pad, t.y + ui->pad / 2, a->notice, tw - 2 * ui->pad);
    }
    if (a->lesson_list) view_lessons(ui, a, (Rect){0, 0, w, h});
    if (a->help) view_help(ui, a, (Rect){0, 0, w, h});
}
