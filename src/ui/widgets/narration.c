// narration.c: a lesson's narration blocks laid out and drawn (the lesson panel and the opening
// and closing cards): paragraphs, headings, lists, quotes, rules, code and tables.
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "flow.h"

enum { TABLE_MAX_COLS = 16 };

// The text size at which the block's widest line fits in w: the small size, or less down to
// two thirds of it but never under the smallest text (a table of numbers in a text block stays
// whole; beyond, it is cut: a lesson writes a wide table as a Markdown table).
static int code_px(Ui *ui, const RichBlock *b, int w) {
    int widest = 0;
    for (int k = 0; k < b->n_spans; k++)
        for (const char *p = b->spans[k].text; *p;) {
            const int n = (int)strcspn(p, "\n");
            char line[512];
            snprintf(line, sizeof line, "%.*s", n, p);
            const int lw = gfx_text_width(ui->g, FONT_MONO, ui->small, line);
            if (lw > widest) widest = lw;
            p += n + (p[n] == '\n');
        }
    const int room = w - 2 * (ui->small / 3), px = widest > room ? (int)((long)ui->small * room / widest) : ui->small;
    const int least = ui->small * 2 / 3 > ui->min_px ? ui->small * 2 / 3 : ui->min_px;  // never under the smallest text
    return px < least ? least : px;
}

static void code_block(Flow *f, const RichBlock *b, int x, int w) {
    Ui *ui = f->ui;
    const int px = code_px(ui, b, w), lh = gfx_line_height(ui->g, FONT_MONO, px), q = px / 3;
    if (f->draw && f->y + q <= f->bottom) gfx_rect(ui->g, (Rect){x, f->y, w, q}, ui->th->panel_alt);
    f->y += q;
    for (int k = 0; k < b->n_spans && !f->full; k++) {
        for (const char *p = b->spans[k].text; *p && !f->full;) {
            const char *e = strchr(p, '\n');
            const int n = e ? (int)(e - p) : (int)strlen(p);
            if (f->y + lh > f->bottom) {
                f->full = true;
                break;
            }
            if (f->draw) {
                char line[512];
                snprintf(line, sizeof line, "%.*s", n, p);
                gfx_rect(ui->g, (Rect){x, f->y, w, lh}, ui->th->panel_alt);
                gfx_text(ui->g, FONT_MONO, px, ui->th->text, x + q, f->y, line);
            }
            f->end_y = f->y += lh;
            p += n + (e != NULL);
        }
    }
    if (!f->full && f->y + q <= f->bottom) {
        if (f->draw) gfx_rect(ui->g, (Rect){x, f->y, w, q}, ui->th->panel_alt);
        f->end_y = f->y + q;
    }
    f->y += q;
}

static void list_marker(Flow *f, const RichBlock *b, int text_x) {
    char mk[16];
    if (b->number > 0) snprintf(mk, sizeof mk, "%d.", b->number);
    else snprintf(mk, sizeof mk, "%s", b->level > 1 ? "\xe2\x97\xa6" : "\xe2\x80\xa2");  // ◦ •
    const int mw = gfx_text_width(f->ui->g, FONT_SANS, f->px, mk);
    if (f->draw && f->y + f->lh <= f->bottom)
        gfx_text(f->ui->g, FONT_SANS, f->px, f->ui->th->muted, text_x - mw - f->px / 3, f->y, mk);
}

// Lays out (and if f->draw, draws) one block at f->y; prev is the kind of the block before.
static void narration_block(Flow *f, const RichBlock *b, int prev, int x, int w) {
    Ui *ui = f->ui;
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->px);
    if (prev >= 0) f->y += b->kind == RB_HEADING ? lh * 3 / 4
                         : b->kind == RB_LIST_ITEM && prev == RB_LIST_ITEM ? lh / 6 : lh / 2;
    const int unit = ui->px * 5 / 4;
    switch (b->kind) {
    case RB_HEADING: {
        const int px = b->level == 1 ? ui->px * 13 / 10 : b->level == 2 ? ui->px * 23 / 20 : ui->px;
        flow_setup(f, FONT_BOLD, px, t->text, x, w);
        break;
    }
    case RB_LIST_ITEM: {
        const int ind = (b->level > 0 ? b->level : 1) * unit;
        flow_setup(f, FONT_SANS, ui->px, t->text, x + ind, w - ind);
        list_marker(f, b, x + ind);
        break;
    }
    case RB_QUOTE: flow_setup(f, FONT_SANS, ui->px, t->muted, x + unit, w - unit); break;
    case RB_CODE: code_block(f, b, x, w); return;
    case RB_RULE:
        if (f->y + lh > f->bottom) f->full = true;
        else if (f->draw) gfx_rect(ui->g, (Rect){x, f->y + lh / 2, w, t->line}, t->border);
        if (!f->full) f->end_y = f->y + lh;
        f->y += lh;
        return;
    default: flow_setup(f, FONT_SANS, ui->px, t->text, x, w); break;
    }
    const int y0 = f->y;
    for (int k = 0; k < b->n_spans && !f->full; k++) flow_text(f, b->spans[k].text, b->spans[k].style);
    flow_end(f);
    if (b->kind == RB_QUOTE && f->draw && f->y > y0)
        gfx_rect(ui->g, (Rect){x + unit / 4, y0, ui->px / 6 > 2 ? ui->px / 6 : 2, f->y - y0}, t->border);
}


// The width of a cell's text on one line, each span in its own face.
static int cell_width(Ui *ui, const RichBlock *b, FontFace face, int px) {
    int w = 0;
    for (int k = 0; k < b->n_spans; k++) {
        const unsigned st = b->spans[k].style;
        const FontFace f = st & STYLE_CODE ? FONT_MONO : st & STYLE_STRONG ? FONT_BOLD : st & STYLE_EM ? FONT_ITALIC : face;
        w += gfx_text_width(ui->g, f, px, b->spans[k].text);
    }
    return w;
}

// The width of the cell's longest word (a span's text up to a space), each span in its face.
static int word_width(Ui *ui, const RichBlock *b, FontFace face, int px) {
    int best = 0;
    for (int k = 0; k < b->n_spans; k++) {
        const unsigned st = b->spans[k].style;
        const FontFace f = st & STYLE_CODE ? FONT_MONO : st & STYLE_STRONG ? FONT_BOLD : st & STYLE_EM ? FONT_ITALIC : face;
        for (const char *p = b->spans[k].text; *p;) {
            const int n = (int)strcspn(p, " \n");
            char word[256];
            snprintf(word, sizeof word, "%.*s", n < 255 ? n : 255, p);
            const int w = gfx_text_width(ui->g, f, px, word);
            if (w > best) best = w;
            p += n + (p[n] != '\0');
        }
    }
    return best;
}

// Column widths for a table of natural widths nat[] in w: all natural when they fit; else the
// narrow columns keep theirs and the wide ones share what is left, in proportion.
static void column_widths(int *cw, const int *nat, const int *least, int n, int w) {
    int total = 0, room = w, left = n;
    for (int c = 0; c < n; c++) total += nat[c];
    if (total <= w) {
        memcpy(cw, nat, sizeof *cw * (size_t)n);
        return;
    }
    bool fixed[TABLE_MAX_COLS] = {false};
    for (bool changed = true; changed && left > 0;) {  // a column narrower than its fair share keeps its width
        changed = false;
        const int fair = room / left;
        for (int c = 0; c < n; c++)
            if (!fixed[c] && nat[c] <= fair) fixed[c] = true, cw[c] = nat[c], room -= nat[c], left--, changed = true;
    }
    long wide = 0;
    for (int c = 0; c < n; c++) wide += fixed[c] ? 0 : nat[c];
    for (int c = 0; c < n; c++)
        if (!fixed[c]) cw[c] = (int)(room * nat[c] / (wide > 0 ? wide : 1));
    for (int c = 0; c < n; c++)  // no word cut while another column can give room
        for (int give = 0; cw[c] < least[c]; cw[give]--, cw[c]++) {
            for (int d = 0; d < n; d++)
                if (cw[d] - least[d] > cw[give] - least[give]) give = d;
            if (cw[give] <= least[give]) break;
        }
}

// One row of a table at f->y (cells [b, b + n)): measured, then drawn if f->draw.
static void table_row(Flow *f, const RichBlock *b, int n, const int *cx, const int *cw, int cp) {
    Ui *ui = f->ui;
    const int y0 = f->y;
    const bool head = b[0].row == 0, draw = f->draw;
    int h = 0;
    for (int pass = draw ? 0 : 1; pass < 2; pass++) {
        f->draw = pass == 1 && draw;
        if (f->draw && head) gfx_rect(ui->g, (Rect){cx[0], y0, cx[n] - cx[0], h}, ui->th->panel_alt);
        for (int k = 0; k < n; k++) {
            const int c = b[k].col;
            f->y = y0 + cp;
            flow_setup(f, head ? FONT_BOLD : FONT_SANS, ui->px, ui->th->text, cx[c] + cp, cw[c] - 2 * cp);
            for (int s = 0; s < b[k].n_spans; s++) flow_text(f, b[k].spans[s].text, b[k].spans[s].style | (head ? STYLE_STRONG : 0));
            flow_end(f);
            if (f->y + cp - y0 > h) h = f->y + cp - y0;
        }
    }
    f->draw = draw;
    f->y = y0 + h;
}

// A table: the cells [b, b + n) (row by row), in the column [x, x + w) with a grid.
static void table_flow(Flow *f, const RichBlock *b, int n, int x, int w) {
    Ui *ui = f->ui;
    const Theme *t = ui->th;
    const int cp = ui->px / 3 > 2 ? ui->px / 3 : 2;
    int nat[TABLE_MAX_COLS] = {0}, least[TABLE_MAX_COLS] = {0}, cw[TABLE_MAX_COLS], cx[TABLE_MAX_COLS + 1], ncol = 0;
    for (int k = 0; k < n; k++) {
        if (b[k].col >= TABLE_MAX_COLS) continue;
        const int cwk = cell_width(ui, &b[k], b[k].row == 0 ? FONT_BOLD : FONT_SANS, ui->px) + 2 * cp + 1;
        const int wk = word_width(ui, &b[k], b[k].row == 0 ? FONT_BOLD : FONT_SANS, ui->px) + 2 * cp + 1;
        if (cwk > nat[b[k].col]) nat[b[k].col] = cwk;
        if (wk > least[b[k].col]) least[b[k].col] = wk;
        if (b[k].col + 1 > ncol) ncol = b[k].col + 1;
    }
    column_widths(cw, nat, least, ncol, w);
    cx[0] = x;
    for (int c = 0; c < ncol; c++) cx[c + 1] = cx[c] + cw[c];
    const int y0 = f->y;
    int rows_y[256], n_rows = 0;
    for (int k = 0; k < n;) {
        int m = 1;
        while (k + m < n && b[k + m].row == b[k].row) m++;
        int kept = 0;  // the cells of this row within the column table
        RichBlock row[TABLE_MAX_COLS];
        for (int j = 0; j < m; j++)
            if (b[k + j].col < TABLE_MAX_COLS) row[kept++] = b[k + j];
        if (n_rows < 256) rows_y[n_rows++] = f->y;
        if (kept) table_row(f, row, kept, cx, cw, cp);
        k += m;
    }
    if (f->draw) {
        const int lw = t->line;
        for (int r = 1; r < n_rows; r++) gfx_rect(ui->g, (Rect){x, rows_y[r], cx[ncol] - x, lw}, t->border);
        for (int c = 1; c < ncol; c++) gfx_rect(ui->g, (Rect){cx[c], y0, lw, f->y - y0}, t->border);
        gfx_frame(ui->g, (Rect){x, y0, cx[ncol] - x, f->y - y0}, lw, t->border);
    }
    f->end_y = f->y;
}

int narration_flow(Ui *ui, const Lesson *l, BlockRange r, int x, int y, int w, int bottom, bool draw) {
    Flow f = {.ui = ui, .draw = draw, .y = y, .bottom = bottom, .end_y = y};
    int prev = -1;
    for (int i = r.begin; i < r.end && i < l->n_blocks && !f.full; i++) {
        const RichBlock *b = &l->blocks[i];
        if (!lesson_range_shows(l, r, i)) continue;
        if (b->kind == RB_TABLE_CELL) {  // the whole table, its cells up to the next table's
            int j = i + 1;
            while (j < r.end && l->blocks[j].kind == RB_TABLE_CELL && (l->blocks[j].row || l->blocks[j].col)) j++;
            if (prev >= 0) f.y += gfx_line_height(ui->g, FONT_SANS, ui->px) / 2;
            table_flow(&f, b, j - i, x, w);
            prev = RB_TABLE_CELL, i = j - 1;
            continue;
        }
        narration_block(&f, b, prev, x, w);
        prev = (int)b->kind;
    }
    return f.end_y - y;
}
