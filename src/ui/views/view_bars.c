// view_bars.c: the top bar (what is open, what is switched off, the views' tabs) and the key list (?).
#include <stdio.h>
#include <string.h>

#include "back_mistakes.h"
#include "keys.h"
#include "views.h"

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

// The top bar's badges, each shown while it holds: pieces switched off (X, M, O), a learner's
// wrong formula in the backward pass (W), a decoding other than greedy (Z).
enum { BADGE_OFF, BADGE_MISTAKE, BADGE_DECODING, BADGE_COUNT };

// Each badge's text ("" when it does not hold); returns the room they take.
static int badge_texts(Ui *ui, const App *a, char text[BADGE_COUNT][320]) {
    for (int k = 0; k < BADGE_COUNT; k++) text[k][0] = '\0';
    if (!a->loaded) return 0;
    if (ablation_any(interp_ablation(a->session.it))) {
        char what[300];
        ablation_text(interp_ablation(a->session.it), what, sizeof what);
        snprintf(text[BADGE_OFF], sizeof text[BADGE_OFF], "OFF: %s (U)", what);
    }
    if (a->back.mistake) snprintf(text[BADGE_MISTAKE], sizeof text[BADGE_MISTAKE], "W: %s", backward_mistake_names[a->back.mistake]);
    const DecodeChoice *c = &a->session.run.choice;
    if (!decode_is_greedy(c) && !a->session.run.tgt && program_has_decoder(&a->session.lesson.program)) {
        if (c->beam >= 2) snprintf(text[BADGE_DECODING], sizeof text[BADGE_DECODING], "beam %d (Z)", c->beam);
        else snprintf(text[BADGE_DECODING], sizeof text[BADGE_DECODING], "sampling (Z)");
    }
    int w = 0;
    for (int k = 0; k < BADGE_COUNT; k++)
        if (text[k][0] && k != BADGE_OFF)  // (what is off may be long: it takes at most half)
            w += gfx_text_width(ui->g, FONT_BOLD, ui->small, text[k]) + 2 * ui->pad;
    return w;
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
    // The input sentence: click or E to edit. The title comes first (bar_title), leaving the
    // badges their room and the input at least a third of what is left.
    char in[600];  // a decoder-only program's input is the prompt it continues
    const char *label = a->loaded && program_decoder_only(&a->session.lesson.program) ? "prompt: " : "input: ";
    if (a->editing) snprintf(in, sizeof in, "%s%s_", label, a->edit);
    else snprintf(in, sizeof in, "%s%s", label, a->loaded ? a->session.input_text : "");
    char badges[BADGE_COUNT][320];
    const int badges_w = badge_texts(ui, a, badges);
    const int in_w = gfx_text_width(ui->g, a->editing ? FONT_MONO : FONT_SANS, ui->px, in) + ui->pad * 4;
    const int rest = room - badges_w;
    // the field takes what the title leaves, past the gap after the title and the field's inset
    const int title_room = rest - (in_w < rest / 3 ? in_w : rest / 3) - ui->pad * 3;
    x += bar_title(ui, r, x, a->loaded && a->source[0] ? a->source : "stepformer", title_room);
    x += ui->pad * 2;
    for (int k = 0; k < BADGE_COUNT; k++) {
        if (!badges[k][0]) continue;
        const int room_left = r.x + r.w - tabs_w - 2 * ui->pad - x;
        const bool off = k == BADGE_OFF || k == BADGE_MISTAKE;  // never unnoticed: the theme's error colours
        x = badge(ui, r, x, room_left, k == BADGE_OFF ? room_left / 2 : 4 * ui->px, badges[k], off ? t->error_bg : t->accent,
                  off ? t->error_text : t->on_accent);
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
        ui_hot(ui, field, CMD_EDIT, 0);
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
