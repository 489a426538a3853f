// view_compare.c: the Compare view: the stage pinned with C (from this lesson or another one,
// e.g. a lesson and its mistake), the stage on screen now, and their difference. The two share
// one colour scale, so equal colours are equal numbers; the difference has its own, centred on 0.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "heat.h"

enum { MAX_LABELS = 512 };

// A [rows, cols] slice of a tensor: head h of a 3-D one, the whole of a 1-D or 2-D one.
static void slice_of(const Shape *s, int h, int *rows, int *cols, size_t *off) {
    const int n = s->ndim;
    *cols = s->dim[n - 1], *rows = n >= 2 ? s->dim[n - 2] : 1;
    const int heads = n == 3 ? s->dim[0] : 1;
    *off = (size_t)(h < heads ? h : 0) * (size_t)(*rows) * (size_t)(*cols);
}

static void explain(Ui *ui, Rect r, const char *msg) { ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, r, msg); }

// The largest |value| (signed tensors) or value (probabilities) of both, finite ones only.
static float shared_top(const float *a, const float *b, size_t n) {
    float m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(a[i]) && fabsf(a[i]) > m) m = fabsf(a[i]);
        if (isfinite(b[i]) && fabsf(b[i]) > m) m = fabsf(b[i]);
    }
    return m > 0 ? m : 1;
}

void view_compare(Ui *ui, const App *a, Rect r) {
    Rect in = ui_panel(ui, r, "Compare: the pinned stage, this one, and the difference");
    const Pin *p = &a->pin;
    if (!p->data) {
        explain(ui, in, "Nothing is pinned. Go to a stage and press C to pin it; then go to another stage, or open "
                        "another lesson (N, P or L) and go to the same stage, and come back here. Both are drawn on "
                        "one colour scale, with their difference beside them. C again unpins.");
        return;
    }
    const Interp *it = a->session.it;
    const Stage *st = a->loaded ? interp_stage(it, a->cursor) : NULL;
    const float *now = st ? interp_output(it, a->cursor) : NULL;
    char msg[600], sh1[64], sh2[64];
    if (!now || !shape_eq(&st->shape, &p->shape)) {
        snprintf(msg, sizeof msg, "Pinned: %s %s. On screen: %s %s. Their shapes differ, so there is nothing to "
                 "subtract: go to a stage of the same shape.", p->label, shape_str(&p->shape, sh1, sizeof sh1),
                 st ? st->id : "nothing", st ? shape_str(&st->shape, sh2, sizeof sh2) : "");
        explain(ui, in, msg);
        return;
    }
    int rows, cols;
    size_t off;
    slice_of(&p->shape, a->head, &rows, &cols, &off);
    const size_t n = (size_t)rows * cols;
    float *diff = malloc(sizeof(float) * n);
    if (!diff) return;
    float maxd = 0;
    for (size_t i = 0; i < n; i++) {
        const float d = now[off + i] - p->data[off + i];
        diff[i] = isfinite(d) ? d : 0.0f;  // masked in both: no difference
        maxd = fmaxf(maxd, fabsf(diff[i]));
    }
    const float top = shared_top(now + off, p->data + off, n);
    const float both[2] = {p->kind == TK_PROBS ? 0.0f : -top, top}, dr[2] = {-fmaxf(maxd, 1e-12f), fmaxf(maxd, 1e-12f)};
    const char *rl[MAX_LABELS], *cl[MAX_LABELS];
    const int nr = stage_axis_labels(a, a->cursor, p->shape.ndim - 2 >= 0 ? p->shape.ndim - 2 : 0, rl, MAX_LABELS);
    const int nc = stage_axis_labels(a, a->cursor, p->shape.ndim - 1, cl, MAX_LABELS);
    char sub[3][96];
    snprintf(sub[0], sizeof sub[0], "pinned: %s", p->label);
    snprintf(sub[1], sizeof sub[1], "now: %s", a->source);
    snprintf(sub[2], sizeof sub[2], "largest |difference| %.4g", (double)maxd);
    const char *titles[3] = {p->stage_id, st->id, "now - pinned"};
    const float *data[3] = {p->data + off, now + off, diff};
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    const int each = (in.h - lh) / 3;
    for (int k = 0; k < 3; k++) {
        HeatSpec h = {.title = titles[k], .subtitle = sub[k], .shape = p->shape, .kind = k == 2 ? TK_VALUES : p->kind,
                      .data = data[k], .rows = rows, .cols = cols, .range = k == 2 ? dr : both, .range_n = 2,
                      .row_labels = rl, .n_row_labels = nr, .col_labels = cl, .n_col_labels = nc,
                      .key = {a->generation, (unsigned)a->cursor, 40u + (unsigned)k, (unsigned)a->head, p->serial}};
        heat_draw(ui, &h, (Rect){in.x, in.y + k * each, in.w, each - ui->pad / 2});
    }
    if (p->shape.ndim == 3) {
        char which[160];
        snprintf(which, sizeof which, "%s %d of %d shown in both (1-9 picks another)",
                 st->axes.slot[0] == AXIS_HEADS ? "head" : "slice", (a->head < p->shape.dim[0] ? a->head : 0) + 1,
                 p->shape.dim[0]);
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, in.x, in.y + in.h - lh, which, in.w);
    }
    free(diff);
}
