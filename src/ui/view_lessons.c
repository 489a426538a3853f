// view_lessons.c: the lesson list (L): the course in order, the open lesson and the chosen row
// marked, lessons that could not open marked as such. A click on a row opens it.
#include <stdio.h>

#include "app.h"

static int lines_for(const Ui *ui, const App *a, int lh, Rect r) {
    const int fit = (r.h - 4 * ui->pad) / lh - 3;
    return a->course.n < fit ? a->course.n : fit > 1 ? fit : 1;
}

static void lesson_row(Ui *ui, const App *a, int k, Rect row, int num_w) {
    const Theme *t = ui->th;
    const bool pick = k == a->lesson_pick, open = k == a->lesson_at && a->loaded;
    if (pick) gfx_rect(ui->g, row, t->lit);
    char num[16];
    snprintf(num, sizeof num, "%d", k + 1);
    const Rgba fg = pick ? t->lit_text : t->text;
    gfx_text(ui->g, FONT_BOLD, ui->px, a->course.items[k].listed ? t->accent : t->muted, row.x + ui->pad / 2, row.y, num);
    const char *mark = a->lesson_failed[k] ? "  (could not open)" : open ? "  (open)" : "";
    char text[COURSE_TITLE_MAX + 32];
    snprintf(text, sizeof text, "%s%s", a->course.items[k].title, mark);
    ui_text_fit(ui, open ? FONT_BOLD : FONT_SANS, ui->px, a->lesson_failed[k] ? t->error_text : fg,
                row.x + num_w, row.y, text, row.w - num_w - ui->pad);
    ui_hot(ui, row, CMD_OPEN_LESSON, k);
}

void view_lessons(Ui *ui, const App *a, Rect r) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->px) + ui->pad / 3;
    const int rows = lines_for(ui, a, lh, r);
    Rect box = {r.x + r.w / 6, r.y + r.h / 12, r.w * 2 / 3, (rows + 3) * lh + 2 * ui->pad};
    if (r.w < 900) box.x = r.x + ui->pad, box.w = r.w - 2 * ui->pad;
    gfx_rect(ui->g, rect_inset(box, -4), t->text);
    gfx_rect(ui->g, box, t->panel);
    ui_hot(ui, box, CMD_NONE, 0);  // a click inside the box but on no row does nothing
    int y = box.y + ui->pad;
    gfx_text(ui->g, FONT_BOLD, ui->px, t->text, box.x + ui->pad, y, "Lessons");
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, box.x + ui->pad + gfx_text_width(ui->g, FONT_BOLD, ui->px, "Lessons ") +
                ui->pad, y + (lh - ui->small) / 3, "Up / Down, Enter or a click opens; N / P: next / previous; Esc closes",
                box.w - 10 * ui->pad);
    y += lh * 3 / 2;
    if (a->course.n == 0) {
        ui_text_wrap(ui, FONT_SANS, ui->px, t->muted, (Rect){box.x + ui->pad, y, box.w - 2 * ui->pad, lh * 3},
                     "No folder of lessons: start the window on a lesson file (stepformer lesson lessons/FILE.md).");
        return;
    }
    const int first = a->lesson_pick - rows + 1 > 0 ? a->lesson_pick - rows + 1 : 0;  // the chosen row in view
    const int num_w = gfx_text_width(ui->g, FONT_BOLD, ui->px, "000") + ui->pad;
    for (int k = first; k < a->course.n && k < first + rows; k++, y += lh)
        lesson_row(ui, a, k, (Rect){box.x + ui->pad / 2, y, box.w - ui->pad, lh}, num_w);
}
