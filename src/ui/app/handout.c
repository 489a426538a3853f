// handout.c: the lesson as one page (handout.h): narration, program cells and pictures.
#include "handout.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dispatch.h"
#include "heat.h"
#include "parts.h"
#include "platform.h"
#include "quiz.h"
#include "window.h"

static const char page_css[] =
    "body{font:17px/1.5 'DejaVu Sans',sans-serif;max-width:52em;margin:2em auto;padding:0 1em;color:#1d2430}"
    "h1{font-size:1.8em}h2{font-size:1.35em;margin-top:1.6em}code,pre{font-family:'DejaVu Sans Mono',monospace}"
    "code{background:#eef1f5;padding:0 .2em}pre{background:#eef1f5;padding:.6em;overflow-x:auto;font-size:.85em}"
    "pre.program{border-left:4px solid #4a78b8}blockquote{border-left:4px solid #c8ced8;margin-left:0;"
    "padding-left:1em;color:#4d5766}table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #b8c0cc;padding:.25em .6em}th{background:#eef1f5}"
    "figure{margin:1em 0}figure img{width:100%;height:auto;border:1px solid #b8c0cc}"
    "figcaption{color:#4d5766;font-size:.9em}"
    "p.question{border:2px solid #4a78b8;border-radius:4px;padding:.5em .8em;background:#f4f7fc}"
    "section.answers{break-before:page}span.at{color:#4d5766;font-size:.85em}"
    "@media print{body{max-width:none;margin:0;font-size:11pt}figure,pre,table,blockquote{break-inside:avoid}"
    "h1,h2,h3{break-after:avoid}figure img{max-height:16cm;width:auto;max-width:100%}}";

static void escape(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\n': fputs("<br>", f); break;
        default: fputc(*s, f); break;
        }
    }
}

static void spans(FILE *f, const RichBlock *b) {
    for (int k = 0; k < b->n_spans; k++) {
        const unsigned st = b->spans[k].style;
        if (st & STYLE_STRONG) fputs("<strong>", f);
        if (st & STYLE_EM) fputs("<em>", f);
        if (st & STYLE_CODE) fputs("<code>", f);
        escape(f, b->spans[k].text);
        if (st & STYLE_CODE) fputs("</code>", f);
        if (st & STYLE_EM) fputs("</em>", f);
        if (st & STYLE_STRONG) fputs("</strong>", f);
    }
}

// Code as it stands (newlines kept), escaped.
static void code_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

// The file at path as base64.
static bool base64_file(FILE *out, const char *path, Err *e) {
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    FILE *in = fopen(path, "rb");
    if (!in) return err_set(e, "%s: cannot read the picture back: %s", path, strerror(errno));
    unsigned char b[3];
    size_t n;
    while ((n = fread(b, 1, 3, in)) > 0) {
        const unsigned v = (unsigned)b[0] << 16 | (n > 1 ? (unsigned)b[1] << 8 : 0) | (n > 2 ? b[2] : 0);
        const char q[4] = {digits[v >> 18 & 63], digits[v >> 12 & 63], n > 1 ? digits[v >> 6 & 63] : '=', n > 2 ? digits[v & 63] : '='};
        fwrite(q, 1, 4, out);
    }
    fclose(in);
    return true;
}

// The first stage (in pass order) of each cell, -1 for a cell that makes none.
static void first_stages(const App *a, int *first) {
    const Lesson *l = &a->session.lesson;
    for (int c = 0; c < l->n_cells; c++) first[c] = -1;
    for (int i = 0, n = interp_n_done(a->session.it); i < n; i++) {
        const int c = lesson_cell_of_line(l, interp_stage(a->session.it, i)->line);
        if (c >= 0 && first[c] < 0) first[c] = i;
    }
}

// Stage i drawn as the window draws it, as a figure: its centre view (or the whole window).
static bool figure(FILE *f, App *a, Ui *ui, int i, bool whole, const char *png, Err *e) {
    app_goto(a, i);
    a->view = app_view_for(a, i);
    app_draw(ui, a);
    gfx_present(ui->g);
    int w, h;
    gfx_size(ui->g, &w, &h);
    const Rect part = whole ? (Rect){0, 0, w, h} : ui->center;
    if (!gfx_save_png_rect(ui->g, part, png, e)) return false;
    const Stage *st = interp_stage(a->session.it, i);
    w = part.w, h = part.h;
    fprintf(f, "<figure><img width=\"%d\" height=\"%d\" alt=\"stage ", w, h);
    escape(f, st->id);
    fputs("\" src=\"data:image/png;base64,", f);
    const bool ok = base64_file(f, png, e);
    remove(png);
    fprintf(f, "\"><figcaption>Stage %d of %d, line %d: <code>", i + 1, interp_n_stages(a->session.it), st->line);
    escape(f, st->id);
    fputs("</code></figcaption></figure>\n", f);
    return ok;
}

// A table: the cells [b, b + n), row by row.
static void table(FILE *f, const RichBlock *b, int n) {
    fputs("<table>\n", f);
    for (int k = 0; k < n; k++) {
        if (k == 0 || b[k].row != b[k - 1].row) fputs(k ? "</tr>\n<tr>" : "<tr>", f);
        fputs(b[k].row == 0 ? "<th>" : "<td>", f);
        spans(f, &b[k]);
        fputs(b[k].row == 0 ? "</th>" : "</td>", f);
    }
    fputs("</tr>\n</table>\n", f);
}

// One shown block; a list item opens or closes its list as its neighbours ask.
static void block(FILE *f, const RichBlock *b, const RichBlock *prev, const RichBlock *next) {
    const bool item = b->kind == RB_LIST_ITEM;
    switch (b->kind) {
    case RB_HEADING: {
        const int h = b->level >= 1 && b->level <= 6 ? b->level : 2;
        fprintf(f, "<h%d>", h);
        spans(f, b);
        fprintf(f, "</h%d>\n", h);
        break;
    }
    case RB_LIST_ITEM:
        if (!prev || prev->kind != RB_LIST_ITEM) fputs(b->number > 0 ? "<ol>\n" : "<ul>\n", f);
        if (b->number > 0) fprintf(f, "<li value=\"%d\"", b->number);
        else fputs("<li", f);
        fprintf(f, " style=\"margin-left:%dem\">", b->level > 1 ? (b->level - 1) * 2 : 0);
        spans(f, b);
        fputs("</li>\n", f);
        break;
    case RB_QUOTE: fputs("<blockquote><p>", f), spans(f, b), fputs("</p></blockquote>\n", f); break;
    case RB_RULE: fputs("<hr>\n", f); break;
    case RB_CODE:
        fputs("<pre>", f);
        for (int k = 0; k < b->n_spans; k++) code_text(f, b->spans[k].text);
        fputs("</pre>\n", f);
        break;
    default: fputs("<p>", f), spans(f, b), fputs("</p>\n", f); break;
    }
    if (item && (!next || next->kind != RB_LIST_ITEM)) fputs(b->number > 0 ? "</ol>\n" : "</ul>\n", f);
}

// The lesson's question standing at block i, or -1.
static int question_at(const Lesson *l, int i) {
    for (int k = 0; k < l->n_questions; k++)
        if (l->questions[k].block == i) return k;
    return -1;
}

// A question as the class reads it on the page; its answer is at the page's end.
static void question_html(FILE *f, const Question *q, int k) {
    fprintf(f, "<p class=\"question\"><strong>Question %d.</strong> ", k + 1);
    escape(f, q->ask);
    fputs("</p>\n", f);
}

// The answers, computed from the trace as the window computes them, at the end of the page.
static bool answers_html(FILE *f, const Lesson *l, const Interp *it, Err *e) {
    if (l->n_questions == 0) return true;
    fputs("<section class=\"answers\">\n<h2>Answers</h2>\n<ol>\n", f);
    for (int k = 0; k < l->n_questions; k++) {
        Answer ans;
        if (!quiz_answer(&ans, l, &l->questions[k], it, e)) return false;
        fprintf(f, "<li value=\"%d\">", k + 1);
        escape(f, ans.text);
        fputs(" <span class=\"at\">(", f);
        escape(f, interp_stage(it, ans.stage)->id);
        fputs(")</span></li>\n", f);
    }
    fputs("</ol>\n</section>\n", f);
    return true;
}

// The page's body: every block in order, program cells as code, each followed by its picture.
static bool page_body(FILE *f, App *a, Ui *ui, const int *first, bool whole, const char *png, Err *e) {
    const Lesson *l = &a->session.lesson;
    const RichBlock *prev = NULL;
    int cell = 0;
    for (int i = 0; i < l->n_blocks; i++) {
        const RichBlock *b = &l->blocks[i];
        if (cell < l->n_cells && l->cells[cell].block == i) {  // a program cell, then its picture
            fputs("<pre class=\"program\">", f);
            for (int k = 0; k < b->n_spans; k++) code_text(f, b->spans[k].text);
            fputs("</pre>\n", f);
            if (first[cell] >= 0 && !figure(f, a, ui, first[cell], whole, png, e)) return false;
            cell++, prev = b;
            continue;
        }
        const int q = question_at(l, i);
        if (q >= 0) {
            question_html(f, &l->questions[q], q);
            prev = b;
            continue;
        }
        if (!lesson_block_shown(b)) continue;
        if (b->kind == RB_TABLE_CELL) {
            int j = i + 1;
            while (j < l->n_blocks && l->blocks[j].kind == RB_TABLE_CELL && (l->blocks[j].row || l->blocks[j].col)) j++;
            table(f, b, j - i);
            prev = &l->blocks[j - 1], i = j - 1;
            continue;
        }
        int n = i + 1;  // the next shown block, for closing a list
        while (n < l->n_blocks && !lesson_block_shown(&l->blocks[n]) && (cell >= l->n_cells || l->cells[cell].block != n)) n++;
        block(f, b, prev, n < l->n_blocks ? &l->blocks[n] : NULL);
        prev = b;
    }
    return true;
}

bool handout_write(App *a, Ui *ui, const char *dir, bool whole_window, Err *e) {
    if (!a->loaded) return err_set(e, "no lesson is open");
    if (!interp_run(a->session.it, e)) return false;
    const Lesson *l = &a->session.lesson;
    char path[1200], tmp[1300], png[1300];
    snprintf(path, sizeof path, "%s/index.html", dir);
    snprintf(tmp, sizeof tmp, "%s/.index.html.part", dir);
    snprintf(png, sizeof png, "%s/.handout-picture.png", dir);
    int *first = malloc(sizeof *first * (size_t)(l->n_cells > 0 ? l->n_cells : 1));
    FILE *f = first ? fopen(tmp, "w") : NULL;
    if (!f) {
        free(first);
        return first ? err_set(e, "%s: cannot write the handout: %s", tmp, strerror(errno)) : err_code(e, ERR_MEMORY, "out of memory");
    }
    first_stages(a, first);
    const int cursor = a->cursor;
    const ViewKind view = a->view;
    const CardKind card = a->card;
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    escape(f, l->title);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", page_css);
    bool ok = page_body(f, a, ui, first, whole_window, png, e) && answers_html(f, l, a->session.it, e);
    fputs("</body>\n</html>\n", f);
    if (ferror(f)) ok = ok && err_set(e, "%s: could not write it all", tmp);
    if (fclose(f) != 0) ok = ok && err_set(e, "%s: could not write it all: %s", tmp, strerror(errno));
    if (ok && rename(tmp, path) != 0) ok = err_set(e, "%s: cannot write the handout: %s", path, strerror(errno));
    if (!ok) remove(tmp);
    free(first);
    app_goto(a, cursor);
    a->view = view, a->card = card;
    return ok;
}

void app_handout(App *a) {
    if (!a->loaded) return app_set_error(a, "nothing is open to write a handout of");
    const char *path = a->session.lesson.path, *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    const size_t len = strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".md") ? strlen(name) - 3 : strlen(name);
    char dir[300], page[400], msg[sizeof a->notice];
    snprintf(dir, sizeof dir, "stepformer-handout-%.*s", (int)(len < 200 ? len : 200), name);
    snprintf(page, sizeof page, "%s/index.html", dir);
    Err e = {{0}};
    struct stat sb;
    if (stat(dir, &sb) != 0 && mkdir(dir, 0777) != 0)
        return (void)err_set(&e, "%s: cannot create the folder: %s", dir, strerror(errno)), app_set_error(a, e.msg);
    Gfx *g = gfx_open_offscreen(1280, 720, &e);
    if (!g) return app_set_error(a, e.msg);
    Ui ui = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    const bool ok = handout_write(a, &ui, dir, false, &e);
    heat_cache_free(ui.heat);
    gfx_close(g);
    if (!ok) return app_set_error(a, e.msg);
    platform_deliver(page, msg, sizeof msg);
    app_notify(a, msg);
}
