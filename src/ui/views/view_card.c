// view_card.c: the opening card (the lesson's title and introduction, before the first stage)
// and the closing card ("What to look at" and all after the last stage), drawn large in the
// centre for a projector; and the keys that step onto and off them.
#include <limits.h>
#include <stdio.h>

#include "views.h"
#include "flow.h"

// The card's blocks laid out at text size px from in.y; returns their height.
static int card_flow(Ui *ui, const Lesson *l, BlockRange r, int px, Rect in, bool draw) {
    const int px0 = ui->px, small0 = ui->small;
    ui->px = px, ui->small = px * 4 / 5 > ui->min_px ? px * 4 / 5 : ui->min_px;
    const int h = narration_flow(ui, l, r, in.x, in.y, in.w, INT_MAX / 2, draw);
    ui->px = px0, ui->small = small0;
    return h;
}

void view_card(Ui *ui, const App *a, Rect r) {
    const Lesson *l = &a->session.lesson;
    LessonParts parts;
    Err e = {{0}};
    if (!lesson_parts_of_run(&parts, l, a->session.it, &e)) return;
    const BlockRange range = a->card == CARD_OPENING ? parts.opening : parts.closing;
    lesson_parts_free(&parts);
    const Theme *t = ui->th;
    gfx_rect(ui->g, rect_inset(r, ui->pad / 2), t->panel);
    const int hint_px = ui->small, hint_h = gfx_line_height(ui->g, FONT_SANS, hint_px) + ui->pad;
    Rect in = rect_inset(r, ui->pad * 2);
    in.h -= hint_h;
    if (in.w > ui->px * 40) in.x += (in.w - ui->px * 40) / 2, in.w = ui->px * 40;  // lines a reader can follow
    // As large as fits: from one and a half times the body size down to four fifths of it (never
    // under the smallest text); what still does not fit scrolls (the wheel, Shift+PgDn / PgUp).
    const int least = ui->px * 4 / 5 > ui->min_px ? ui->px * 4 / 5 : ui->min_px;
    int px = ui->px * 3 / 2, full = card_flow(ui, l, range, px, in, false);
    while (px > least && full > in.h) {
        px = px * 9 / 10 > least ? px * 9 / 10 : least;
        full = card_flow(ui, l, range, px, in, false);
    }
    const int max = full > in.h ? full - in.h : 0, at = a->scroll[SCROLL_CARD] < max ? a->scroll[SCROLL_CARD] : max;
    Rect text = in;
    if (max) {
        text.w -= ui_bar_w(ui) + ui->pad / 2;
        full = card_flow(ui, l, range, px, text, false);
        const int lh = gfx_line_height(ui->g, FONT_SANS, px);
        ui->scroll[SCROLL_CARD] = (ScrollView){in, full - in.h, in.h > 2 * lh ? in.h - lh : lh, lh};
        ui_scroll_bar(ui, in, at, in.h, full);
    }
    gfx_clip(ui->g, in);
    card_flow(ui, l, range, px, (Rect){text.x, text.y - at, text.w, text.h}, true);
    gfx_unclip(ui->g);
    if (range.end <= range.begin) ui_text_fit(ui, FONT_ITALIC, ui->px, t->muted, in.x, in.y, "(the lesson says nothing more here)", in.w);
    const char *hint = a->card == CARD_OPENING ? "The lesson's opening.  Right: the first stage."
                     : "The lesson's close.  Left: the last stage.";
    ui_text_fit(ui, FONT_SANS, hint_px, t->muted, in.x, r.y + r.h - ui->pad * 2 - hint_h + ui->pad, hint, in.w);
}
