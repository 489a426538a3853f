// view_lesson.c: the lesson panel on the right. For the stage on screen it shows the narration
// before the program cell that holds the stage's line (the lesson's Markdown, laid out by the
// span-aware line breaker of flow.c), the program lines around the stage, the formula of
// its op, and the C kernel that computed it (read from the copy of kernels.c built in).
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "flow.h"

// The narration for the stage (the part of the lesson's narration its cell shows, parts.h),
// laid out from y in a column [x, x + w) (drawn if draw); returns its whole height. Drawing relies on the caller's clip for what falls outside.
static int narration(Ui *ui, const App *a, int x, int y, int w, int bottom, bool draw) {
    return narration_flow(ui, &a->session.lesson, app_narration(a), x, y, w, bottom, draw);
}

// ---- program, formula, kernel ----

static int header_h(Ui *ui) { return gfx_line_height(ui->g, FONT_BOLD, ui->small) + ui->pad / 3; }
static int code_lh(Ui *ui) { return gfx_line_height(ui->g, FONT_MONO, ui->small); }

static void section_header(Ui *ui, Rect r, const char *title) {
    gfx_rect(ui->g, (Rect){r.x, r.y, r.w, ui->th->line}, ui->th->grid);
    ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->muted, r.x, r.y + ui->pad / 4, title, r.w);
}

// How many bytes of monospace text fit in `room` pixels (UTF-8 takes more bytes than it
// shows, so a line with some wraps a little early, never late).
static int mono_fit(Ui *ui, int room) {
    const int cw = gfx_text_width(ui->g, FONT_MONO, ui->small, "M");
    const int n = cw > 0 ? room / cw : 80;
    return n < 8 ? 8 : n;
}

// Where the first piece of s[0, n) ends when at most `fit` bytes fit: after the last space,
// comma or opening bracket in its last two thirds, else after the last dot of a dotted name
// ("@encoder.layers.0." / "norm1.weight", never inside a number such as 0.5), else at `fit`,
// never inside a UTF-8 character.
static int wrap_at(const char *s, int n, int fit) {
    if (n <= fit) return n;
    for (int k = fit; k > fit / 3; k--)
        if (s[k - 1] == ' ' || s[k - 1] == ',' || s[k - 1] == '(' || s[k - 1] == '[') return k;
    for (int k = fit; k > fit / 3; k--)
        if (s[k - 1] == '.' && (isalpha((unsigned char)s[k]) || s[k] == '_' || s[k] == '{')) return k;
    int k = fit;
    while (k > 1 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    return k;
}

// One line of the program: its number in a gutter, the code, the comment in muted grey,
// wrapped at the panel's edge (continuations indented under the code). Returns the rows it
// takes; draws them from row.y (row.h: one row) if draw.
static int program_row(Ui *ui, Rect row, int gutter, int num, const char *text, bool lit, bool draw) {
    const Theme *t = ui->th;
    const int px = ui->small;
    char buf[600];
    snprintf(buf, sizeof buf, "%s", text ? text : "");
    buf[strcspn(buf, "\r\n")] = '\0';
    for (int n = (int)strlen(buf); n > 0 && buf[n - 1] == ' '; n--) buf[n - 1] = '\0';
    const int n = (int)strlen(buf), hash = (int)strcspn(buf, "#"), fit = mono_fit(ui, row.w - gutter);
    const int lead = (int)strspn(buf, " "), indent = lead + 4 < fit / 2 ? lead + 4 : fit / 2;
    int rows = 0, at = 0;
    do {
        const int room = rows ? fit - indent : fit, len = wrap_at(buf + at, n - at, room);
        if (draw) {
            const int y = row.y + rows * row.h, x0 = row.x + gutter + (rows ? indent * gfx_text_width(ui->g, FONT_MONO, px, " ") : 0);
            if (lit) gfx_rect(ui->g, (Rect){row.x, y, row.w, row.h}, t->lit);
            if (rows == 0) {
                char no[16];
                snprintf(no, sizeof no, "%d", num);
                const int nw = gfx_text_width(ui->g, FONT_MONO, px, no);
                gfx_text(ui->g, FONT_MONO, px, lit ? t->lit_text : t->muted, row.x + gutter - nw - px / 2, y, no);
            }
            char piece[600];
            const int code = at < hash ? (hash < at + len ? hash - at : len) : 0;  // bytes before the comment
            snprintf(piece, sizeof piece, "%.*s", code, buf + at);
            const int w = gfx_text(ui->g, FONT_MONO, px, lit ? t->lit_text : t->text, x0, y, piece);
            snprintf(piece, sizeof piece, "%.*s", len - code, buf + at + code);
            gfx_text(ui->g, FONT_MONO, px, lit ? t->lit_text : t->muted, x0 + w, y, piece);
        }
        at += len > 0 ? len : n - at;  // (len is 0 only on an empty line)
        while (at < n && buf[at] == ' ') at++;  // a break's spaces start no row
        rows++;
    } while (at < n);
    return rows;
}

static const char *source_line(const Lesson *l, int line) {
    return line >= 1 && line <= l->n_lines ? l->lines[line - 1] : "";
}

// The width of the line numbers' gutter: room for the largest number the section shows.
static int program_gutter(Ui *ui, const Lesson *l, const Stage *st) {
    const int cell = lesson_cell_of_line(l, st->line), last = cell >= 0 ? l->cells[cell].last_line : st->line;
    char num[16];
    snprintf(num, sizeof num, "%d", last > st->call_line ? last : st->call_line);
    return gfx_text_width(ui->g, FONT_MONO, ui->small, num) + ui->small;
}

// The rows line `line` of the lesson takes once wrapped in stage st's program section, `w` wide.
static int line_rows(Ui *ui, const App *a, const Stage *st, int line, int w) {
    const Lesson *l = &a->session.lesson;
    return program_row(ui, (Rect){0, 0, w, code_lh(ui)}, program_gutter(ui, l, st), line, source_line(l, line), false,
                       false);
}

// The program around the stage's line: as many whole lines of its cell as `rows` rows hold
// once wrapped, the stage's line among them; then the line that called it, if any.
static void program_section(Ui *ui, const App *a, const Stage *st, Rect r, int rows) {
    const Lesson *l = &a->session.lesson;
    const int lh = code_lh(ui), cell = lesson_cell_of_line(l, st->line);
    char title[96], chose[8];
    const char *formula;
    const bool chosen = app_choice_note(a, a->cursor, chose, sizeof chose, &formula);  // the line did not choose
    snprintf(title, sizeof title, "Program, line %d%s", st->line,
             !chosen ? "" : a->session.run.choice.beam >= 2 ? " (beam, Z)" : " (sampled, Z)");
    section_header(ui, r, title);
    int first = st->line, last = st->line;
    if (cell >= 0) first = l->cells[cell].first_line, last = l->cells[cell].last_line;
    const int gutter = program_gutter(ui, l, st);
    const Rect one = {r.x, 0, r.w, lh};
#define ROWS_OF(k) program_row(ui, one, gutter, (k), source_line(l, (k)), false, false)
    int top = st->line, bottom = st->line, used = ROWS_OF(st->line);
    for (bool grew = true; grew;) {  // one line below, then one above, while they fit
        grew = false;
        if (bottom < last && used + ROWS_OF(bottom + 1) <= rows) bottom++, used += ROWS_OF(bottom), grew = true;
        if (top > first && used + ROWS_OF(top - 1) <= rows) top--, used += ROWS_OF(top), grew = true;
    }
    int y = r.y + header_h(ui);
    for (int k = top; k <= bottom; k++)
        y += lh * program_row(ui, (Rect){r.x, y, r.w, lh}, gutter, k, source_line(l, k), k == st->line, true);
    if (st->call_line) {
        snprintf(title, sizeof title, "called from line %d", st->call_line);
        ui_text_fit(ui, FONT_ITALIC, ui->small, ui->th->muted, r.x, y, title, r.w);
        program_row(ui, (Rect){r.x, y + lh, r.w, lh}, gutter, st->call_line, source_line(l, st->call_line), false, true);
    }
#undef ROWS_OF
}

// The shape as "[4 x 25 x 25]" with no-break spaces, so that it never wraps inside.
static const char *shape_unbroken(const Shape *sh, char *buf, size_t n) {
    char tmp[64];
    shape_str(sh, tmp, sizeof tmp);
    size_t k = 0;
    for (const char *c = tmp; *c && k + 3 < n; c++) {
        if (*c == ' ') buf[k++] = '\xc2', buf[k++] = '\xa0';
        else buf[k++] = *c;
    }
    buf[k] = '\0';
    return buf;
}

// The formula section in the backward pass: what the step computes; returns its height.
static int back_formula_flow(Ui *ui, const App *a, const BackStep *b, const Stage *st, Rect r, bool draw) {
    Flow f = {.ui = ui, .draw = draw, .y = r.y, .bottom = r.y + r.h};
    static const char *const what[BACK_KIND_COUNT] = {
        [BACK_LOSS] = "the loss: cross-entropy of each row of logits against its label, averaged",
        [BACK_STAGE] = "backward: the gradient of the loss, sent from the stage's output to its inputs",
        [BACK_ADAM] = "Adam's update of one weight, from its gradient",
        [BACK_AFTER] = "the same pass again, with the weights after the step"};
    static const char *const maths[BACK_KIND_COUNT] = {
        [BACK_LOSS] = "L = mean_t -log softmax(logits_t)[label_t];  dL/dlogits_t = (p_t - onehot(label_t)) / N",
        [BACK_ADAM] = "m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  w -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)",
        [BACK_AFTER] = "L(w - update) < L(w) for a small enough step against the gradient"};
    flow_setup(&f, FONT_SANS, ui->px, ui->th->text, r.x, r.w);
    flow_text(&f, b->kind == BACK_STAGE ? op_info[st->op].name : back_kind_names[b->kind], STYLE_STRONG);
    flow_text(&f, ": ", 0);
    flow_text(&f, what[b->kind], 0);
    flow_end(&f);
    f.y += ui->pad / 3;
    flow_setup(&f, FONT_MONO, ui->px * 9 / 10, ui->th->text, r.x, r.w);
    flow_text(&f, b->kind == BACK_STAGE ? back_info_for(st, a->session.model.cfg.activation)->formula : maths[b->kind], 0);
    flow_end(&f);
    return f.y - r.y;
}

// What the formula section says; returns its height (drawn if draw).
static int formula_flow(Ui *ui, const App *a, const Stage *st, Rect r, bool draw) {
    if (app_back_step(a)) return back_formula_flow(ui, a, app_back_step(a), st, r, draw);
    const Theme *t = ui->th;
    const OpInfo *op = &op_info[st->op];
    const Activation act = a->session.model.cfg.activation;
    const char *formula = op->formula;
    char detail[160] = "", shape[128];
    if (st->op == OP_ACTIVATION) {
        formula = op_info[act == ACT_GELU ? OP_GELU : OP_RELU].formula;
        snprintf(detail, sizeof detail, "This model uses %s (activation in its config).",
                 act < ACT_COUNT ? activation_names[act] : "?");
    } else if (st->op == OP_EMBEDDING) {  // the program's own scale, which need not be the default
        const double d = a->session.model.cfg.d_model, sc = st->attr.scale;
        snprintf(detail, sizeof detail, "Here scale = %.6g%s.", sc,
                 d > 0 && fabs(sc - sqrt(d)) < 1e-5 * sqrt(d) ? ", sqrt(d_model)" : sc == 1 ? ": not scaled" : "");
    } else if (st->op == OP_LAYER_NORM) {
        const bool torch = st->attr.ln == LN_TORCH, bias = st->n_in == 3;
        if (!torch) formula = bias ? "y = g (x - mean) / (std + eps) + b" : "y = g (x - mean) / (std + eps)";
        else if (!bias) formula = "y = g (x - mean) / sqrt(var + eps)";
        snprintf(detail, sizeof detail, "Form: %s, %s, eps = %g.",
                 st->attr.ln < LN_COUNT ? layer_norm_names[st->attr.ln] : "?",
                 torch ? "var divides by C (biased)" : "std divides by C - 1, eps added to std",
                 (double)st->attr.eps);
    }
    char chose[400];  // sampling or a beam chose the token, not this argmax: said, never "the most likely"
    const char *summary = op->summary;
    if (app_choice_note(a, a->cursor, chose, sizeof chose, &formula)) summary = chose;
    Flow f = {.ui = ui, .draw = draw, .y = r.y, .bottom = r.y + r.h};
    flow_setup(&f, FONT_SANS, ui->px, t->text, r.x, r.w);
    flow_text(&f, op->name, STYLE_STRONG);
    flow_text(&f, ": ", 0);
    flow_text(&f, summary, 0);
    flow_end(&f);
    f.y += ui->pad / 3;
    flow_setup(&f, FONT_MONO, ui->px * 9 / 10, t->text, r.x, r.w);
    flow_text(&f, formula, 0);
    flow_end(&f);
    if (detail[0]) {
        flow_setup(&f, FONT_SANS, ui->small, t->text, r.x, r.w);
        flow_text(&f, detail, 0);
        flow_end(&f);
    }
    f.y += ui->pad / 3;
    flow_setup(&f, FONT_SANS, ui->small, t->muted, r.x, r.w);
    flow_text(&f, "output ", 0);
    flow_text(&f, shape_unbroken(&st->shape, shape, sizeof shape), 0);
    flow_text(&f, " ", 0);
    flow_text(&f, st->id, STYLE_CODE);
    flow_end(&f);
    return f.y - r.y;
}

// The C source of function `name` in the built-in copy of `file`: from its first line (a return
// type at column 0, then the name) to the `}` at column 0.
static const char *function_source(const char *file, const char *name, int *len) {
    const char *src = session_builtin_lesson(file, NULL);
    if (!src || !name) return NULL;
    const size_t n = strlen(name);
    for (const char *p = src; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *sp = strchr(p, ' '), *nl = strchr(p, '\n');
        if (!sp || (nl && sp > nl) || *p == ' ' || *p == '/' || *p == '#') continue;
        const char *at = sp + 1 + (sp[1] == '*');
        if (strncmp(at, name, n) != 0 || at[n] != '(') continue;
        const char *e = strstr(p, "\n}");
        *len = e ? (int)(e - p) + 2 : (int)strlen(p);
        return p;
    }
    return NULL;
}

// The first of the kernel files (built in, under src/tensor/) that defines `name`.
static const char *kernel_in(const char *const files[], int n, const char *name, int *len, const char **file) {
    static const char *const paths[] = {"src/tensor/kernels.c", "src/tensor/kernels_backward.c",
                                        "src/tensor/kernels_llm.c", "src/tensor/kernels_shape.c"};
    for (int k = 0; k < n; k++) {
        const char *src = function_source(files[k], name, len);
        for (int q = 0; src && q < 4; q++)
            if (strstr(paths[q], files[k])) *file = paths[q];
        if (src) return src;
    }
    return NULL;
}

// The kernel that computed what is on screen: the stage's forward kernel (kernels.c), or in the
// backward pass the backward kernel of its op, the loss, or Adam's update. *file names its file.
static const char *kernel_source(const App *a, const Stage *st, int *len, const char **file) {
    const Activation act = a->session.model.cfg.activation;
    const BackStep *b = app_back_step(a);
    static const char *const forward[] = {"kernels.c", "kernels_llm.c", "kernels_shape.c"};
    static const char *const backward[] = {"kernels_backward.c", "kernels_llm.c", "kernels_shape.c"};
    if (!b) {
        const char *name = op_info[st->op == OP_ACTIVATION ? (act == ACT_GELU ? OP_GELU : OP_RELU) : st->op].kernel;
        if (st->op == OP_LINEAR && st->attr.w_in_out) name = "linear_in_out_forward";
        return kernel_in(forward, 3, name, len, file);
    }
    if (b->kind == BACK_LOSS) return *file = "src/train/grad_pass.c", function_source("grad_pass.c", "loss_value", len);
    if (b->kind != BACK_STAGE) return *file = "src/train/optim.c", function_source("optim.c", "adam_update", len);
    const char *name = st->op == OP_LINEAR && st->attr.w_in_out ? "linear_in_out_backward" : back_info_for(st, act)->kernel;
    return kernel_in(backward, 3, name, len, file);
}

static int count_lines(const char *s, int len) {
    int n = 1;
    for (int i = 0; i < len; i++) n += s[i] == '\n';
    return n;
}

// The kernel's lines from line `first` (clamped); when they do not all fit, the area scrolls
// (registered in ui->scroll) and the last row says how many lines are below.
// The kernel's source as rows of the panel: each line, wrapped as program lines are (wrap_at)
// with its continuations indented, so no line of it is cut. Fills rows [cap] (start, length,
// whether a continuation); returns how many.
typedef struct {
    const char *p;
    int n;
    bool cont;
} CodeRow;
enum { KERNEL_ROWS_MAX = 1024 };

static int code_rows(Ui *ui, const char *src, int len, int w, CodeRow *rows, int cap) {
    const int fit = mono_fit(ui, w), indent = 4;
    int n = 0;
    for (const char *p = src; p < src + len && n < cap;) {
        const char *e = memchr(p, '\n', (size_t)(src + len - p));
        const int ln = e ? (int)(e - p) : (int)(src + len - p);
        int at = 0;
        do {
            const int room = at ? fit - indent : fit, k = wrap_at(p + at, ln - at, room);
            rows[n++] = (CodeRow){p + at, k, at > 0};
            at += k;
            while (at < ln && p[at] == ' ') at++;
        } while (at < ln && n < cap);
        p = e ? e + 1 : src + len;
    }
    return n;
}

static void kernel_section(Ui *ui, Rect r, const char *src, int len, const char *file, int first,
                           const char *const notes[2]) {
    char head[160];
    snprintf(head, sizeof head, "Kernel (C), %s%s", notes[0] ? "the loop it computes, " : "", file);
    section_header(ui, r, head);
    for (int k = 0; k < 2; k++)  // what ran instead (a faster kernel, the cached decoder), above the loop
        if (notes[k]) {
            const int skip = ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->muted,
                                          (Rect){r.x, r.y + header_h(ui), r.w, r.h - header_h(ui)}, notes[k]);
            r.y += skip, r.h -= skip;
        }
    CodeRow rows[KERNEL_ROWS_MAX];  // 24 kB: the source of one kernel, a few dozen lines
    const int lh = code_lh(ui), top = r.y + header_h(ui), fit = (r.y + r.h - top) / lh;
    int total = code_rows(ui, src, len, r.w, rows, KERNEL_ROWS_MAX);
    if (total > fit) total = code_rows(ui, src, len, r.w - ui_bar_w(ui) - ui->pad / 4, rows, KERNEL_ROWS_MAX);
    const int max = total > fit ? total - fit : 0;
    if (first > max) first = max;
    if (max > 0) {
        const Rect area = {r.x, top, r.w, fit * lh};
        ui->scroll[SCROLL_KERNEL] = (ScrollView){area, max, fit > 2 ? fit - 1 : 1, lh};
        ui_scroll_bar(ui, area, first, fit, total);
        r.w -= ui_bar_w(ui) + ui->pad / 4;
    }
    const int shown = first + fit >= total ? total - first : fit - 1;  // the last row says "…" when cut
    const int cw = gfx_text_width(ui->g, FONT_MONO, ui->small, " ");
    char line[512];
    for (int k = 0; k < shown; k++) {
        const CodeRow *c = &rows[first + k];
        snprintf(line, sizeof line, "%.*s", c->n, c->p);
        ui_text_fit(ui, FONT_MONO, ui->small, ui->th->text, r.x + (c->cont ? 4 * cw : 0), top + k * lh, line,
                    r.w - (c->cont ? 4 * cw : 0));
    }
    if (first + shown < total && shown >= 0) {
        const int more = total - first - shown;
        snprintf(line, sizeof line, "\xe2\x80\xa6 %d more row%s (wheel)", more, more > 1 ? "s" : "");
        ui_text_fit(ui, FONT_ITALIC, ui->small, ui->th->muted, r.x, top + shown * lh, line, r.w);
    }
}

// ---- layout ----

typedef struct {
    Rect narr, prog, form, kern;
    int rows;       // program rows
    int narr_full;  // the narration's whole height: more than narr.h when it scrolls
} Plan;

static int mini(int a, int b) { return a < b ? a : b; }
static int maxi(int a, int b) { return a > b ? a : b; }

static Plan plan_layout(Ui *ui, const App *a, const Stage *st, Rect in, int kern_lines) {
    const Lesson *l = &a->session.lesson;
    const int gap = ui->pad, hh = header_h(ui), lh = code_lh(ui), bottom = in.y + in.h;
    const int cell = lesson_cell_of_line(l, st->line);
    const int cell_rows = cell >= 0 ? l->cells[cell].last_line - l->cells[cell].first_line + 1 : 1;
    // The line that called the stage's function, under its own heading: every row it wraps to.
    const int call_rows = st->call_line ? 1 + line_rows(ui, a, st, st->call_line, in.w) : 0;
    const int form_h = formula_flow(ui, a, st, (Rect){in.x, 0, in.w, INT_MAX / 2}, false) + hh;
    const int kern_h = kern_lines ? hh + kern_lines * lh : 0;
    const int kern_min = kern_lines ? hh + mini(kern_lines, 4) * lh + gap : 0;
    // The stage's own line whole, however many rows it wraps to (a long one at the end of a
    // cell had lost its last row under the formula); then as many of its cell's as fit.
    const int own = line_rows(ui, a, st, st->line, in.w);
    Plan p = {.rows = maxi(mini(cell_rows, 7), own)};
    int prog_h = hh + (p.rows + call_rows) * lh;
    // The narration: about half the height, more when the rest needs less; beyond, it scrolls
    // (laid out narrower, beside its scroll bar).
    const int cap = maxi(in.h / 2, in.h - (prog_h + form_h + kern_h + 3 * gap));
    p.narr_full = narration(ui, a, in.x, in.y, in.w, INT_MAX / 2, false);
    if (p.narr_full > cap)
        p.narr_full = narration(ui, a, in.x, in.y, in.w - ui_bar_w(ui) - ui->pad / 2, INT_MAX / 2, false);
    const int narr_h = mini(p.narr_full, cap);
    int y = in.y;
    p.narr = (Rect){in.x, y, in.w, narr_h};
    if (narr_h > 0) y += narr_h + gap;
    // Program rows: as many as leave room for the formula and the start of the kernel.
    while (p.rows > maxi(mini(cell_rows, 3), own) && y + hh + (p.rows + call_rows) * lh + gap + form_h + kern_min > bottom)
        p.rows--;
    while (p.rows > own && y + hh + (p.rows + call_rows) * lh + gap + form_h > bottom) p.rows--;
    prog_h = hh + (p.rows + call_rows) * lh;
    p.prog = (Rect){in.x, y, in.w, mini(prog_h, bottom - y)};
    y += prog_h + gap;
    p.form = (Rect){in.x, y, in.w, mini(form_h, bottom - y)};
    y += form_h + gap;
    if (kern_lines && bottom - y >= hh + 3 * lh) p.kern = (Rect){in.x, y, in.w, bottom - y};
    return p;
}

// The narration in box, scrolled by the app's offset when it is taller than the box, with a
// scroll bar and, while more is below, a "more" mark in the bottom corner, under the last
// whole line that fits above it (never over half a line).
static void draw_narration(Ui *ui, const App *a, Rect box, int full) {
    if (box.h <= 0) return;
    const int max = full > box.h ? full - box.h : 0, at = mini(a->scroll[SCROLL_NARRATION], max);
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->px), h = gfx_line_height(ui->g, FONT_BOLD, ui->small);
    const int bottom = !max ? INT_MAX / 2 : at < max ? box.y + box.h - h : box.y + box.h;
    gfx_clip(ui->g, box);
    narration(ui, a, box.x, box.y - at, max ? box.w - ui_bar_w(ui) - ui->pad / 2 : box.w, bottom, true);
    if (max) {
        ui->scroll[SCROLL_NARRATION] = (ScrollView){box, max, box.h > 2 * lh ? box.h - lh : lh, lh};
        ui_scroll_bar(ui, box, at, box.h, full);
        if (at < max) {
            const char *more = "more \xe2\x96\xbe";  // ▾
            const int w = gfx_text_width(ui->g, FONT_BOLD, ui->small, more) + ui->pad / 2;
            const Rect tag = {box.x + box.w - ui_bar_w(ui) - w - ui->pad / 4, box.y + box.h - h, w, h};
            gfx_rect(ui->g, tag, ui->th->panel_alt);
            gfx_text(ui->g, FONT_BOLD, ui->small, ui->th->muted, tag.x + ui->pad / 4, tag.y, more);
        }
    }
    gfx_unclip(ui->g);
}

void view_lesson(Ui *ui, const App *a, Rect r) {
    const Rect in = ui_panel(ui, r, "Lesson");
    const Interp *it = a->session.it;
    if (!a->loaded || !it || a->cursor < 0 || a->cursor >= interp_n_stages(it)) return;
    if (in.w < 40 || in.h < 40) return;
    const Stage *st = interp_stage(it, a->cursor);
    int kern_len = 0;
    const char *kern_file = NULL, *kern = kernel_source(a, st, &kern_len, &kern_file);
    const Plan p = plan_layout(ui, a, st, in, kern ? count_lines(kern, kern_len) : 0);
    draw_narration(ui, a, p.narr, p.narr_full);
    if (p.prog.h > 0) {
        gfx_clip(ui->g, p.prog);
        program_section(ui, a, st, p.prog, p.rows);
        gfx_unclip(ui->g);
    }
    if (p.form.h > 0) {
        gfx_clip(ui->g, p.form);
        section_header(ui, p.form, "Formula");
        formula_flow(ui, a, st, (Rect){p.form.x, p.form.y + header_h(ui), p.form.w, p.form.h - header_h(ui)}, true);
        gfx_unclip(ui->g);
    }
    if (p.kern.h > 0) {
        gfx_clip(ui->g, p.kern);
        const bool back = app_back_step(a) != NULL;
        const char *const notes[2] = {back ? NULL : op_info[st->op].ran,
                                      back ? NULL : rows_note(st, interp_stage_rows(a->session.it, a->cursor))};
        kernel_section(ui, p.kern, kern, kern_len, kern_file, a->scroll[SCROLL_KERNEL], notes);
        gfx_unclip(ui->g);
    }
}
