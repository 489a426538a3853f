// view_backward.c: the Stage view in the backward pass. A backward kernel's step shows the
// gradient that reached the stage (g, on a signed scale) large, and below it what the kernel
// sent to each input (dX, dW); D shows the forward tensors instead. The loss's step shows
// dL/dlogits; Adam's steps show a weight before and after, and its g, m, v and update; the last
// step the loss before and after the update.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "back_mistakes.h"
#include "heat.h"

typedef struct {
    const char *title, *subtitle;
    const float *data;  // NULL: nothing to draw
    Shape shape;
    TensorKind kind;
    int label_stage;    // the stage whose token axes label it, or -1
    unsigned slot;      // its place on screen (the image cache key)
    const char *weight; // a weight's full name: its rows labelled by token where they are indexed so
} Panel;

// The map's [rows, cols] as heat_draw shows it (a 3-D tensor: one slice).
static void panel_dims(const Panel *p, int *rows, int *cols) {
    const int nd = p->shape.ndim;
    *rows = nd >= 2 ? p->shape.dim[nd - 2] : 1, *cols = nd >= 1 ? p->shape.dim[nd - 1] : 1;
}

static void panel(Ui *ui, const App *a, const Panel *p, Rect r) {
    if (!p->data) {
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, r.x, r.y, "(no gradient reaches it)", r.w);
        return;
    }
    const int nd = p->shape.ndim;
    int rows, cols;
    panel_dims(p, &rows, &cols);
    const int head = nd == 3 ? (a->head < p->shape.dim[0] ? a->head : 0) : 0;
    const char *rl[HEAT_MAX_LABELS], *cl[HEAT_MAX_LABELS];
    int nr = 0, nc = 0;
    if (p->label_stage >= 0 && nd >= 2) {
        nr = stage_axis_labels(a, p->label_stage, nd - 2, rl, HEAT_MAX_LABELS);
        nc = stage_axis_labels(a, p->label_stage, nd - 1, cl, HEAT_MAX_LABELS);
    }
    if (nc == 0 && p->label_stage >= 0 && interp_stage(a->session.it, p->label_stage)->where.part == PART_GENERATOR)
        nc = vocab_column_labels(a, cols, cl, HEAT_MAX_LABELS);
    if (nr == 0 && nd == 2) nr = weight_row_labels(a, p->weight, rows, rl, HEAT_MAX_LABELS);  // as the forward map does
    char sub[160];
    snprintf(sub, sizeof sub, "%s%s%s", p->subtitle ? p->subtitle : "", p->subtitle && nd == 3 ? ";  " : "",
             nd == 3 ? "slice shown: 1-9 picks" : "");
    HeatSpec h = {.title = p->title, .subtitle = sub[0] ? sub : NULL, .shape = p->shape, .kind = p->kind,
                  .data = p->data + (size_t)head * rows * cols, .rows = rows, .cols = cols, .range = p->data,
                  .range_n = (size_t)shape_numel(&p->shape), .row_labels = nr ? rl : NULL, .n_row_labels = nr,
                  .col_labels = nc ? cl : NULL, .n_col_labels = nc, .row_name = nr ? "token" : "row",
                  .col_name = nc ? "token" : "column",
                  .key = {a->generation, 0x40000000u | (unsigned)a->back.step, p->slot | (a->back.values ? 0x100u : 0),
                          (unsigned)head, a->model_serial}};
    heat_draw(ui, &h, r);
}

// A header: what the step computes, then a line about it, both wrapped; returns its height.
static int header(Ui *ui, const char *line1, const char *line2, Rect r) {
    const int h1 = ui_text_wrap(ui, FONT_MONO, ui->px, ui->th->accent, (Rect){r.x, r.y, r.w, r.h / 4}, line1);
    const int h2 = ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->muted, (Rect){r.x, r.y + h1, r.w, r.h / 6}, line2);
    return h1 + h2 + ui->pad / 2;
}

// One large panel on top, n smaller ones below: in one row under a top 3/5 of the height, or two
// to a row under a top 2/5, whichever gives the smallest map the bigger cells (the top map of most
// stages is limited by its width, so a shorter top costs it little).
static void layout(Ui *ui, const App *a, const Panel *top, const Panel *below, int n, Rect in) {
    const int gap = ui->pad;
    int per_row = n, top_h = n ? in.h * 3 / 5 : in.h;
    if (n > 1) {
        float best = -1.0f;
        for (int k = n; k >= 1; k = k > 2 ? 2 : k - 1)
            for (int f = 3; f >= 2; f--) {
                const int th = in.h * f / 5, nrow = (n + k - 1) / k;
                const int each_w = (in.w - gap * (k - 1)) / k, each_h = (in.h - th - gap * nrow) / nrow;
                int r, c;
                panel_dims(top, &r, &c);
                float worst = heat_cell_guess(ui, r, c, (Rect){0, 0, in.w, th - gap});
                for (int j = 0; j < n; j++) {
                    panel_dims(&below[j], &r, &c);
                    const float cell = heat_cell_guess(ui, r, c, (Rect){0, 0, each_w, each_h});
                    worst = cell < worst ? cell : worst;
                }
                if (worst > best * 1.1f) best = worst, per_row = k, top_h = th;  // a clear gain, or keep the usual
            }
    }
    panel(ui, a, top, (Rect){in.x, in.y, in.w, top_h - gap});
    if (!n) return;
    gfx_rect(ui->g, (Rect){in.x, in.y + top_h - gap / 2, in.w, ui->th->line}, ui->th->grid);
    const int nrow = (n + per_row - 1) / per_row;
    const int each_h = (in.h - top_h - gap * nrow) / nrow;
    for (int j = 0; j < n; j++) {  // a last row with fewer maps spreads them over the width
        const int in_row = j / per_row == nrow - 1 ? n - (nrow - 1) * per_row : per_row;
        const int w = (in.w - gap * (in_row - 1)) / in_row;
        panel(ui, a, &below[j], (Rect){in.x + j % per_row * (w + gap), in.y + top_h + gap / 2 + j / per_row * (each_h + gap), w, each_h});
    }
}

static void kernel_step(Ui *ui, const App *a, const BackStep *s, Rect in) {
    const Interp *it = a->session.it;
    const Stage *st = interp_stage(it, s->stage);
    const bool values = a->back.values;
    char title[STAGE_ID_MAX + 16], line2[240], names[STAGE_MAX_IN][STAGE_ID_MAX + 16];
    snprintf(title, sizeof title, values ? "%s" : "dL/d %s", st->id);
    snprintf(line2, sizeof line2, "the backward of %s (line %d), last to first; %s", op_info[st->op].name, st->line,
             values ? "D: the gradients again" : "g: the gradient that reached its output;  D: the tensors");
    const int hh = header(ui, back_info_for(st, a->session.model.cfg.activation)->formula, line2, in);
    in.y += hh, in.h -= hh;
    Panel top = {title, values ? NULL : "signed: blue < 0 < red", values ? interp_output(it, s->stage) : grads_stage(a->back.pass.g, s->stage),
                 st->shape, values ? st->kind : TK_VALUES, s->stage, 0};
    Panel below[STAGE_MAX_IN];
    int n = 0;
    for (int j = 0; j < st->n_in; j++) {
        const Ref *r = &st->in[j];
        if (r->kind == REF_INPUT || (!values && !s->share[j])) continue;
        const char *name = stage_short_name(st->in_name[j], st->id, r->kind == REF_WEIGHT);
        snprintf(names[n], sizeof names[n], values ? "%s" : "d%s", name);
        Shape shape = st->in_shape[j];
        size_t col = 0;
        const bool whole = stage_input_strided(st, j, &shape, &col);  // a chunk of [in, out]: the whole weight
        below[n] = (Panel){names[n], values ? NULL : r->kind == REF_WEIGHT ? "dW: this kernel's part" : "dX: sent by this kernel",
                           values ? interp_input(it, s->stage, j) - (whole ? col : 0) : s->share[j], shape,
                           values && r->kind == REF_STAGE ? interp_stage(it, r->index)->kind : TK_VALUES,
                           r->kind == REF_STAGE ? r->index : -1, (unsigned)j + 1,
                           r->kind == REF_WEIGHT ? st->in_name[j] : NULL};
        n++;
    }
    layout(ui, a, &top, below, n, in);
}

static void loss_step(Ui *ui, const App *a, const BackStep *s, Rect in) {
    const BackPass *bp = &a->back.pass;
    const Stage *st = interp_stage(a->session.it, s->stage);
    char l1[200], l2[200];
    snprintf(l1, sizeof l1, "loss = %.6f: the mean over %d label%s of -log p(label)", bp->li.loss, bp->li.counted,
             bp->li.counted == 1 ? "" : "s");
    snprintf(l2, sizeof l2, "%s: dL/dlogits = (softmax(logits) - onehot(label)) / %d; each row sums to 0",
             bp->li.log_probs ? "log_probs: dL/dlog_probs = -1/N at each label" : "cross-entropy", bp->li.counted);
    const int hh = header(ui, l1, l2, in);
    in.y += hh, in.h -= hh;
    Panel top = {"dL/d logits", "signed: the label's cell is negative, the rest positive", bp->dscored, st->shape, TK_VALUES,
                 s->stage, 0};
    Panel below = {st->id, "the scores the loss reads", interp_output(a->session.it, s->stage), st->shape, st->kind, s->stage, 1};
    layout(ui, a, &top, &below, 1, in);
}

static void adam_step(Ui *ui, const App *a, const BackStep *s, Rect in) {
    const BackPass *bp = &a->back.pass;
    const Model *m = &a->session.model;
    const StEntry *w = &m->weights.entries[s->weight];
    const size_t at = m->wide_at[s->weight];
    char l1[200];
    snprintf(l1, sizeof l1, "Adam, step 1: m = (1-b1) g,  v = (1-b2) g^2,  w -= lr m^ / (sqrt(v^) + eps)  (lr %g, b %g %g)",
             (double)BACK_LR, (double)BACK_BETA1, (double)BACK_BETA2);
    char l2[400];
    snprintf(l2, sizeof l2, "%s: at the first step m^ = g and v^ = g^2, so every weight moves by about lr, against its gradient",
             w->name);
    const int hh = header(ui, l1, l2, in);
    in.y += hh, in.h -= hh;
    const int gap = ui->pad, top_h = in.h / 2;
    const Panel six[6] = {{"before the step", NULL, w->data, w->shape, TK_VALUES, -1, 0, w->name},
                          {"after the step", NULL, bp->after + at, w->shape, TK_VALUES, -1, 1, w->name},
                          {"g: dL/dW", NULL, grads_weights(bp->g) + at, w->shape, TK_VALUES, -1, 2, w->name},
                          {"m: first moment", NULL, bp->m + at, w->shape, TK_VALUES, -1, 3, w->name},
                          {"v: second moment", NULL, bp->v + at, w->shape, TK_VALUES, -1, 4, w->name},
                          {"the update", "before - after", bp->update + at, w->shape, TK_VALUES, -1, 5, w->name}};
    if (w->shape.ndim == 1) {  // a vector: three rows of two, each half the view wide, not thumbnails
        const int cw = (in.w - gap) / 2, ch = (in.h - 2 * gap) / 3;
        for (int k = 0; k < 6; k++) panel(ui, a, &six[k], (Rect){in.x + (k % 2) * (cw + gap), in.y + (k / 2) * (ch + gap), cw, ch});
        return;
    }
    panel(ui, a, &six[0], (Rect){in.x, in.y, (in.w - gap) / 2, top_h - gap});
    panel(ui, a, &six[1], (Rect){in.x + (in.w + gap) / 2, in.y, (in.w - gap) / 2, top_h - gap});
    const int each = (in.w - 3 * gap) / 4;
    for (int k = 0; k < 4; k++) panel(ui, a, &six[2 + k], (Rect){in.x + k * (each + gap), in.y + top_h, each, in.h - top_h});
}

static void after_step(Ui *ui, const App *a, Rect in) {
    const BackPass *bp = &a->back.pass;
    char s[240];
    const int big = ui->px * 2, lh = gfx_line_height(ui->g, FONT_BOLD, big);
    snprintf(s, sizeof s, "loss before the step  %.6f", bp->li.loss);
    ui_text_fit(ui, FONT_BOLD, big, ui->th->text, in.x, in.y + lh, s, in.w);
    snprintf(s, sizeof s, "loss after the step    %.6f", bp->loss_after);
    ui_text_fit(ui, FONT_BOLD, big, ui->th->accent, in.x, in.y + 2 * lh + ui->pad, s, in.w);
    snprintf(s, sizeof s, "%s by %.6f: the same input, the same labels, the weights after one step of Adam (lr %g).",
             bp->loss_after < bp->li.loss ? "Lower" : "Not lower", fabs(bp->li.loss - bp->loss_after), (double)BACK_LR);
    ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->text, (Rect){in.x, in.y + 3 * lh + 3 * ui->pad, in.w, in.h / 3}, s);
}

void view_backward(Ui *ui, const App *a, Rect r) {
    const BackStep *s = app_back_step(a);
    char title[160];
    snprintf(title, sizeof title, "Backward pass%s%s: step %d of %d (%s)", a->back.pass.mistake ? " WITH A MISTAKE, " : "",
             a->back.pass.mistake ? backward_mistake_names[a->back.pass.mistake] : "", a->back.step + 1, a->back.pass.n_steps,
             back_kind_names[s->kind]);
    Rect in = ui_panel(ui, r, title);
    switch (s->kind) {
    case BACK_LOSS: loss_step(ui, a, s, in); return;
    case BACK_STAGE: kernel_step(ui, a, s, in); return;
    case BACK_ADAM: adam_step(ui, a, s, in); return;
    case BACK_AFTER: after_step(ui, a, in); return;
    case BACK_KIND_COUNT: return;
    }
}

// Where element `index` of the checked tensor is: its head, row and column, the row's token
// where its rows are tokens ("row 3 'N', column 12"), never a flat index alone.
static void element_name(const App *a, const GradCheck *c, size_t index, char *s, size_t n) {
    const Interp *it = a->session.it;
    const Model *m = &a->session.model;
    Shape sh = {0};
    int stage = -1;
    for (int k = 0; c->weight && k < m->weights.n_entries; k++)
        if (!strcmp(m->weights.entries[k].name, c->what)) sh = m->weights.entries[k].shape;
    if (!c->weight && (stage = interp_find(it, c->what)) >= 0) sh = interp_stage(it, stage)->shape;
    const int nd = sh.ndim, cols = nd >= 1 ? sh.dim[nd - 1] : 1, rows = nd >= 2 ? sh.dim[nd - 2] : 1;
    if (nd < 1 || cols <= 0 || rows <= 0) return (void)snprintf(s, n, "element %zu", index);
    const size_t col = index % (size_t)cols, row = index / (size_t)cols % (size_t)rows, lead = index / ((size_t)cols * rows);
    const char *labels[HEAT_MAX_LABELS];
    const int nl = c->weight ? weight_row_labels(a, c->what, rows, labels, HEAT_MAX_LABELS)
                             : nd >= 2 ? stage_axis_labels(a, stage, nd - 2, labels, HEAT_MAX_LABELS) : 0;
    char tok[80] = "", head[32] = "";
    if ((int)row < nl) snprintf(tok, sizeof tok, " '%s'", labels[row]);
    if (nd >= 3) snprintf(head, sizeof head, "%s %zu, ", stage >= 0 && interp_stage(it, stage)->axes.slot[0] == AXIS_HEADS
                                                          ? "head" : "slice", lead + 1);
    if (nd == 1) snprintf(s, n, "element %zu: column %zu", index, col);
    else snprintf(s, n, "element %zu: %srow %zu%s, column %zu", index, head, row, tok, col);
}

// G's result over the centre's lower part: each checked element's analytic and numeric gradient
// and their relative error, and whether the check passed. Shown while the cursor stays.
void view_gradcheck(Ui *ui, const App *a, Rect r) {
    const GradCheck *c = &a->back.check;
    if (a->back.check_stage != a->cursor || a->back.check_back != (app_back_step(a) != NULL) || !a->loaded) return;
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_MONO, ui->small), rows = 2 * c->n + 3 + (c->kinked > 0);
    char s[300];
    snprintf(s, sizeof s, "Gradient check of %s %s: central differences (Ridders), the pass in float32", c->weight ? "weight" : "stage",
             c->what);
    const int inner = r.w - 4 * ui->pad;  // the title wraps rather than lose the stage's name (measured off screen)
    const int title_h = ui_text_wrap(ui, FONT_BOLD, ui->small, t->text, (Rect){-100000, 0, inner, r.h}, s);
    Rect box = {r.x + ui->pad, r.y + r.h - rows * lh - title_h - 3 * ui->pad, r.w - 2 * ui->pad, rows * lh + title_h + 2 * ui->pad};
    gfx_rect(ui->g, box, t->panel);
    gfx_frame(ui->g, box, t->line * 2, c->passed ? t->accent : t->error_bg);
    int x = box.x + ui->pad, y = box.y + ui->pad;
    y += ui_text_wrap(ui, FONT_BOLD, ui->small, t->text, (Rect){x, y, inner, title_h}, s);
    snprintf(s, sizeof s, "%9s %12s %9s %13s %13s %9s %10s", "element", "value", "h", "analytic", "numeric", "+-", "rel. error");
    ui_text_fit(ui, FONT_MONO, ui->small, t->muted, x, y, s, box.w - 2 * ui->pad);
    for (int q = 0; q < c->n; q++) {
        const GradPoint *p = &c->pt[q];
        y += lh;
        element_name(a, c, p->index, s, sizeof s);
        ui_text_fit(ui, FONT_SANS, ui->small, t->muted, x, y, s, box.w - 2 * ui->pad);
        y += lh;
        snprintf(s, sizeof s, "%9zu %12.5g %9.2g %13.6g %13.6g %9.1e %10.1e", p->index, p->value, p->h, p->analytic, p->numeric,
                 p->error, p->rel_error);
        ui_text_fit(ui, FONT_MONO, ui->small, p->agrees ? t->text : t->error_bg, x, y, s, box.w - 2 * ui->pad);
    }
    if (c->kinked) {
        y += lh;
        snprintf(s, sizeof s, "%d element%s with larger gradients passed over: a ReLU turns over within +-h there", c->kinked,
                 c->kinked == 1 ? "" : "s");
        ui_text_fit(ui, FONT_SANS, ui->small, t->muted, x, y, s, box.w - 2 * ui->pad);
    }
    y += lh * 3 / 2;
    if (c->passed) snprintf(s, sizeof s, "Numeric and analytic agree at all %d: the largest relative error is %.1e", c->n, c->worst);
    else snprintf(s, sizeof s, "They DISAGREE at %d of %d (more than %.0f%% apart, beyond the difference's own +-)", c->disagree,
                  c->n, 100 * GRADCHECK_TOLERANCE);
    ui_text_fit(ui, FONT_BOLD, ui->small, c->passed ? t->accent : t->error_bg, x, y, s, box.w - 2 * ui->pad);
}
