// view_lessons.c: the lesson list (L): the course in order under the README's section headings,
// each lesson with the README's number, the open lesson and the chosen row marked, lessons that
// could not open marked as such. A click on a row opens it.
#include <stdio.h>
#include <string.h>

#include "views.h"

enum { MAX_LINES = 2 * COURSE_MAX };

// The list's lines: a section heading (-1 - its first lesson) before the first lesson of each
// section, else a lesson's index. Returns how many.
static int list_lines(const Course *c, int *line) {
    int n = 0;
    for (int k = 0; k < c->n; k++) {
        const char *sec = c->items[k].section;
        if (sec[0] && (k == 0 || strcmp(sec, c->items[k - 1].section))) line[n++] = -1 - k;
        line[n++] = k;
    }
    return n;
}

static void lesson_row(Ui *ui, const App *a, int k, Rect row, int num_w) {
    const Theme *t = ui->th;
    const CourseEntry *c = &a->course.items[k];
    const bool pick = k == a->lesson_pick, open = k == a->lesson_at && a->loaded;
    if (pick) gfx_rect(ui->g, row, t->lit);
    char num[16] = "";
    if (c->number > 0) snprintf(num, sizeof num, "%d", c->number);
    else if (!c->listed) snprintf(num, sizeof num, "+");  // in the folder, not in the README
    const Rgba fg = pick ? t->lit_text : t->text;
    gfx_text(ui->g, FONT_BOLD, ui->px, c->listed ? t->accent : t->muted, row.x + ui->pad / 2, row.y, num);
    const char *mark = a->lesson_failed[k] ? "  (could not open)" : open ? "  (open)" : "";
    char text[COURSE_TITLE_MAX + 32];
    snprintf(text, sizeof text, "%s%s", c->title, mark);
    ui_text_fit(ui, open ? FONT_BOLD : FONT_SANS, ui->px, a->lesson_failed[k] ? t->error_text : fg,
                row.x + num_w, row.y, text, row.w - num_w - ui->pad);
    ui_hot(ui, row, CMD_OPEN_LESSON, k);
}

void view_lessons(Ui *ui, const App *a, Rect r) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->px) + ui->pad / 3;
    int line[MAX_LINES];
    const int n = list_lines(&a->course, line);
    const int fit = (r.h - r.h / 24 - 4 * ui->pad) / lh - 2, rows = n < fit ? n : fit > 1 ? fit : 1;
    Rect box = {r.x + r.w / 6, r.y + r.h / 24, r.w * 2 / 3, (rows + 2) * lh + 2 * ui->pad};
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
    int at = 0;  // the chosen lesson's line, kept in view
    while (at < n && line[at] != a->lesson_pick) at++;
    int first = at - rows + 1 > 0 ? at - rows + 1 : 0;
    const int num_w = gfx_text_width(ui->g, FONT_BOLD, ui->px, "000") + ui->pad;
    for (int i = first; i < n && i < first + rows; i++, y += lh) {
        if (line[i] >= 0) {
            lesson_row(ui, a, line[i], (Rect){box.x + ui->pad / 2, y, box.w - ui->pad, lh}, num_w);
            continue;
        }
        ui_text_fit(ui, FONT_BOLD, ui->px, t->muted, box.x + ui->pad, y, a->course.items[-1 - line[i]].section,
                    box.w - 2 * ui->pad);
    }
}
