// view_compare.c: the Compare view. In a mistake lesson that names its correct program
// (`correct:`), the stage on screen beside the correct program's stage of the same id, run on the
// same model and input, their difference, and the first stage of the pass where they part (J goes
// there). Elsewhere, the stage pinned with C (from this lesson or another one), the stage on
// screen now, and their difference. The two share one colour scale, so equal colours are equal
// numbers; the difference has its own, centred on 0.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"
#include "heat.h"
#include "view_decode.h"

// A [rows, cols] slice of a tensor: head h of a 3-D one, the whole of a 1-D or 2-D one.
static void slice_of(const Shape *s, int h, int *rows, int *cols, size_t *off) {
    const int n = s->ndim;
    *cols = s->dim[n - 1], *rows = n >= 2 ? s->dim[n - 2] : 1;
    const int heads = n == 3 ? s->dim[0] : 1;
    *off = (size_t)(h < heads ? h : 0) * (size_t)(*rows) * (size_t)(*cols);
}

static void explain(Ui *ui, Rect r, const char *msg) { ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, r, msg); }

// The least and largest finite value of both, as a two-number range for the shared scale (the
// colour bar then shows the half of the signed map they use); -1 to 1 when none is finite.
static void shared_range(const float *a, const float *b, size_t n, float out[2]) {
    float mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(a[i])) mn = fminf(mn, a[i]), mx = fmaxf(mx, a[i]);
        if (isfinite(b[i])) mn = fminf(mn, b[i]), mx = fmaxf(mx, b[i]);
    }
    out[0] = mn <= mx ? mn : -1.0f, out[1] = mn <= mx ? mx : 1.0f;
}

// Two tensors of one shape and their difference (now - ref), drawn one above the other on one
// colour scale.
typedef struct {
    const float *ref, *now;
    Shape shape;
    TensorKind kind;
    const char *ref_title, *ref_sub, *now_title, *now_sub, *diff_title;
    unsigned serial, key;  // the heat cache's
    // ref's own words, when it is a pin (Pin.labels): ref_rows labels of its rows, then ref_cols
    // of its columns, then (token ids) one token an id. NULL: the stage on screen labels both.
    const char *const *ref_labels;
    int ref_rows, ref_cols;
} Tensors3;

// Whether two lists of labels are the same words in the same order.
static bool same_labels(const char *const *x, int nx, const char *const *y, int ny) {
    if (nx != ny) return false;
    for (int i = 0; i < nx; i++)
        if (strcmp(x[i], y[i])) return false;
    return true;
}

// Token ids (argmax's next tokens) are not numbers to subtract: each of the two as a row of
// tokens, the mistake's tokens that differ from the correct ones marked, and how many differ.
static void draw_ids(Ui *ui, const App *a, const Tensors3 *t, Rect in) {
    const int n = (int)shape_numel(&t->shape), h = chip_h(ui, ui->px), gap = ui->pad / 2;
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->small);
    int differ = 0;
    for (int i = 0; i < n; i++) differ += t->now[i] != t->ref[i];
    int y = in.y;
    const char *const *own = t->ref_labels ? t->ref_labels + t->ref_rows + t->ref_cols : NULL;  // a pin's tokens
    for (int k = 0; k < 2; k++) {
        const float *ids = k ? t->now : t->ref;
        char head[600];
        snprintf(head, sizeof head, "%s   %s", k ? t->now_title : t->ref_title, k ? t->now_sub : t->ref_sub);
        ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->text, in.x, y, head, in.w);
        y += lh + gap;
        int x = in.x;
        for (int i = 0; i < n && y + h <= in.y + in.h; i++) {
            const char *txt = !k && own ? own[i] : decode_shown(a, (int)ids[i]);  // a pin's, as it read then
            const int w = chip_w(ui, ui->px, txt, in.w / 2);
            if (x > in.x && x + w > in.x + in.w) x = in.x, y += h + gap;
            chip_draw(ui, ui->px, (Rect){x, y, w, h}, txt, k && ids[i] != t->ref[i] ? CHIP_NEW : CHIP_GIVEN);
            x += w + gap;
        }
        y += h + ui->pad;
    }
    char sum[120];
    if (differ) snprintf(sum, sizeof sum, "%d of %d tokens differ (highlighted in the mistake's row)", differ, n);
    else snprintf(sum, sizeof sum, "the same %d tokens", n);
    ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, in.x, y, sum, in.w);
}

// now - ref into d->data [n], and its figures: fig[0] the largest |difference| of cells finite in
// both, fig[1] how many cells are masked (-inf) in one of the two only (infinitely apart, drawn
// grey), fig[2..3] the range both share.
static void difference(const float *now, const float *ref, size_t n, HeatDerived *d) {
    float maxd = 0;
    size_t one_masked = 0;
    for (size_t i = 0; i < n; i++) {
        const float x = now[i], y = ref[i];
        if (x == y) d->data[i] = 0.0f;  // masked in both: no difference
        else if (isfinite(x) && isfinite(y)) d->data[i] = x - y, maxd = fmaxf(maxd, fabsf(d->data[i]));
        else d->data[i] = -INFINITY, one_masked++;
    }
    float both[2];
    shared_range(now, ref, n, both);
    d->fig[0] = maxd, d->fig[1] = (double)one_masked, d->fig[2] = both[0], d->fig[3] = both[1];
}

static void draw_three(Ui *ui, const App *a, const Stage *st, const Tensors3 *t, Rect in) {
    if (t->kind == TK_IDS) return draw_ids(ui, a, t, in);
    int rows, cols;
    size_t off;
    slice_of(&t->shape, a->head, &rows, &cols, &off);
    const size_t n = (size_t)rows * cols;
    // Derived once for the difference map's key (its image's): a frame that redraws it derives nothing.
    const unsigned key[5] = {a->generation, (unsigned)a->cursor, t->key + 2u, (unsigned)a->head, t->serial};
    bool fresh;
    HeatDerived *d = ui->heat ? heat_cache_derived(ui->heat, key, n, &fresh) : NULL;
    if (!d) return;
    if (fresh) difference(t->now + off, t->ref + off, n, d);
    const float *diff = d->data, maxd = (float)d->fig[0], both[2] = {(float)d->fig[2], (float)d->fig[3]};
    const size_t one_masked = (size_t)d->fig[1];
    const float dr[2] = {-fmaxf(maxd, 1e-12f), fmaxf(maxd, 1e-12f)};
    const char *rl[HEAT_MAX_LABELS], *cl[HEAT_MAX_LABELS];
    const int nr = stage_axis_labels(a, a->cursor, t->shape.ndim - 2 >= 0 ? t->shape.ndim - 2 : 0, rl, HEAT_MAX_LABELS);
    const int nc = stage_axis_labels(a, a->cursor, t->shape.ndim - 1, cl, HEAT_MAX_LABELS);
    // A pin labels its own map with the tokens it was pinned with; where those are not the
    // tokens on screen now, the difference is labelled by position (0, 1, ...), as it is taken.
    const char *const *pr = t->ref_labels ? t->ref_labels : rl, *const *pc = t->ref_labels ? t->ref_labels + t->ref_rows : cl;
    const int npr = t->ref_labels ? t->ref_rows : nr, npc = t->ref_labels ? t->ref_cols : nc;
    const bool same = same_labels(pr, npr, rl, nr) && same_labels(pc, npc, cl, nc);
    char sub[3][400];
    snprintf(sub[0], sizeof sub[0], "%s", t->ref_sub);
    snprintf(sub[1], sizeof sub[1], "%s", t->now_sub);
    const char *slice = t->shape.ndim == 3 ? " (this slice)" : "", *by = same ? "" : "; other tokens: by position";
    if (one_masked)
        snprintf(sub[2], sizeof sub[2], "%zu masked in one only (grey); largest other |difference| %.4g%s%s", one_masked,
                 (double)maxd, slice, by);
    else snprintf(sub[2], sizeof sub[2], "largest |difference| %.4g%s%s", (double)maxd, slice, by);
    const char *const *row_labels[3] = {pr, rl, same ? rl : NULL}, *const *col_labels[3] = {pc, cl, same ? cl : NULL};
    const int n_rows[3] = {npr, nr, same ? nr : 0}, n_cols[3] = {npc, nc, same ? nc : 0};
    const char *titles[3] = {t->ref_title, t->now_title, t->diff_title};
    const float *data[3] = {t->ref + off, t->now + off, diff};
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    const int each = (in.h - lh) / 3;
    for (int k = 0; k < 3; k++) {
        HeatSpec h = {.title = titles[k], .subtitle = sub[k], .shape = t->shape, .kind = k == 2 ? TK_VALUES : t->kind,
                      .data = data[k], .rows = rows, .cols = cols, .range = k == 2 ? dr : both, .range_n = 2,
                      .row_labels = row_labels[k], .n_row_labels = n_rows[k], .col_labels = col_labels[k],
                      .n_col_labels = n_cols[k],
                      .key = {a->generation, (unsigned)a->cursor, t->key + (unsigned)k, (unsigned)a->head, t->serial}};
        heat_draw(ui, &h, (Rect){in.x, in.y + k * each, in.w, each - ui->pad / 2});
    }
    if (t->shape.ndim == 3) {
        char which[160];
        snprintf(which, sizeof which, "%s %d of %d shown in both (1-9 picks another)",
                 st->axes.slot[0] == AXIS_HEADS ? "head" : "slice", (a->head < t->shape.dim[0] ? a->head : 0) + 1,
                 t->shape.dim[0]);
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, in.x, in.y + in.h - lh, which, in.w);
    }
}

// A mistake beside its correct program: the first difference named on top, then the stage on
// screen and the correct program's stage of the same id.
static void view_against(Ui *ui, const App *a, Rect r) {
    const char *cm = a->session.lesson.setup.correct_model, *cm_slash = strrchr(cm, '/');
    char title[600];
    if (cm[0]) snprintf(title, sizeof title, "Compare: this mistake beside its correct program (on %s, same input)",
                        cm_slash ? cm_slash + 1 : cm);
    else snprintf(title, sizeof title, "Compare: this mistake beside its correct program (same model, same input)");
    Rect in = ui_panel(ui, r, title);
    const Against *m = &a->against.match;
    const Interp *it = a->session.it, *cit = a->against.run.it;
    const StageMatch *sm = app_against_at(a, a->cursor);
    const Stage *st = interp_stage(it, a->cursor);
    char head[400], rest[200], msg[700], sh1[64], sh2[64];
    rest[0] = '\0';
    if (m->first < 0) {
        snprintf(head, sizeof head, "No stage differs from the correct program's by more than %g.", (double)AGAINST_TOLERANCE);
    } else {
        const StageMatch *f = &m->stage[m->first];
        snprintf(head, sizeof head, "First difference: %s", interp_stage(it, m->first)->id);
        if (f->kind == MATCH_SHAPE) snprintf(rest, sizeof rest, "another shape;");
        else if (isinf(f->max_diff)) snprintf(rest, sizeof rest, "masked in one only;");
        else snprintf(rest, sizeof rest, "largest |difference| %.4g;", (double)f->max_diff);
        snprintf(rest + strlen(rest), sizeof rest - strlen(rest), " J goes there (red on the timeline)");
    }
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    const int w = ui_text_fit(ui, FONT_BOLD, ui->px, m->first == a->cursor ? ui->th->error_bg : ui->th->text, in.x, in.y,
                              head, in.w);
    if (rest[0] && w + ui->pad + gfx_text_width(ui->g, FONT_SANS, ui->small, rest) <= in.w)
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, in.x + w + ui->pad, in.y + (lh - ui->small) / 2, rest,
                    in.w - w - ui->pad);
    else if (rest[0]) {  // too long beside the heading: a line of its own, so "J goes there" stays
        const int ls = gfx_line_height(ui->g, FONT_SANS, ui->small);
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, in.x, in.y + lh, rest, in.w);
        in.y += ls, in.h -= ls;
    }
    in.y += lh + ui->pad / 2, in.h -= lh + ui->pad / 2;
    if (sm->kind == MATCH_MISSING) {
        snprintf(msg, sizeof msg, "%s is this program's own: the correct program (%s) has no stage of that id, so "
                 "there is nothing to set beside it. Step on to a stage both have.", st->id, a->against.run.lesson.path);
        return explain(ui, in, msg);
    }
    const Stage *ot = interp_stage(cit, sm->other);
    if (sm->kind == MATCH_SHAPE) {
        snprintf(msg, sizeof msg, "%s is %s here and %s in the correct program (%s): another shape, so there is "
                 "nothing to subtract.", st->id, shape_str(&st->shape, sh1, sizeof sh1),
                 shape_str(&ot->shape, sh2, sizeof sh2), a->against.run.lesson.path);
        return explain(ui, in, msg);
    }
    char ref_sub[200], now_sub[200];
    const char *cpath = a->against.run.lesson.path, *slash = strrchr(cpath, '/');
    snprintf(ref_sub, sizeof ref_sub, "the correct program (%s)", slash ? slash + 1 : cpath);
    snprintf(now_sub, sizeof now_sub, "this mistake%s", sm->kind == MATCH_SAME ? ": the same numbers" : "");
    const Tensors3 t3 = {.ref = interp_output(cit, sm->other), .now = interp_output(it, a->cursor), .shape = st->shape,
                         .kind = st->kind, .ref_title = ot->id, .ref_sub = ref_sub, .now_title = st->id,
                         .now_sub = now_sub, .diff_title = "this - correct", .serial = a->against.generation,
                         .key = 50u};
    draw_three(ui, a, st, &t3, in);
}

void view_compare(Ui *ui, const App *a, Rect r) {
    if (a->loaded && app_against_at(a, a->cursor)) return view_against(ui, a, r);
    if (a->loaded && a->session.lesson.setup.correct[0] && a->against.why[0]) {
        Rect in = ui_panel(ui, r, "Compare: this mistake beside its correct program");
        char msg[600];
        snprintf(msg, sizeof msg, "The correct program could not run: %s", a->against.why);
        return explain(ui, in, msg);
    }
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
    char now_sub[400];  // which input each map ran on: after an edit, the words tell them apart
    app_pin_input(a, "now", now_sub, sizeof now_sub);
    const Tensors3 t3 = {.ref = p->data, .now = now, .shape = p->shape, .kind = p->kind, .ref_title = p->stage_id,
                         .ref_sub = p->sub, .now_title = st->id, .now_sub = now_sub, .diff_title = "now - pinned",
                         .serial = p->serial, .key = 40u, .ref_labels = p->labels, .ref_rows = p->n_row_labels,
                         .ref_cols = p->n_col_labels};
    draw_three(ui, a, st, &t3, in);
}
