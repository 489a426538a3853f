// view_attention_back.c: the Attention view in the backward pass. For the head on screen: the
// weights p, the gradient g that reached them, and the gradient of the scores the softmax read,
// dL/dscores = p * (g - sum_k p_k g_k): the softmax's Jacobian applied to g. Below, one query
// row worked through with its numbers, so the formula can be checked by hand.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "heat.h"

enum { ROW_KEYS = 6 };

static void map(Ui *ui, const App *a, int stage, const float *data, TensorKind kind, const char *title, const char *sub,
                int slot, Rect r) {
    const Stage *st = interp_stage(a->session.it, stage);
    const int nd = st->shape.ndim, H = nd == 3 ? st->shape.dim[0] : 1;
    const int T = st->shape.dim[nd - 2], S = st->shape.dim[nd - 1], h = a->head < H ? a->head : 0;
    const char *rl[HEAT_MAX_LABELS], *cl[HEAT_MAX_LABELS];
    const int nr = stage_axis_labels(a, stage, nd - 2, rl, HEAT_MAX_LABELS), nc = stage_axis_labels(a, stage, nd - 1, cl, HEAT_MAX_LABELS);
    HeatSpec spec = {.title = title, .subtitle = sub, .shape = st->shape, .kind = kind, .data = data + (size_t)h * T * S,
                     .rows = T, .cols = S, .range = data, .range_n = (size_t)H * T * S, .row_labels = nr ? rl : NULL,
                     .n_row_labels = nr, .col_labels = nc ? cl : NULL, .n_col_labels = nc, .row_name = "query",
                     .col_name = "key", .key = {a->generation, 0x20000000u | (unsigned)stage, (unsigned)slot, (unsigned)h,
                                                a->model_serial}};
    heat_draw(ui, &spec, r);
}

// The query row of head h whose score gradient is largest, worked through key by key.
static void worked_row(Ui *ui, const App *a, int w, int s, Rect r) {
    const Stage *st = interp_stage(a->session.it, w);
    const int nd = st->shape.ndim, H = nd == 3 ? st->shape.dim[0] : 1;
    const int T = st->shape.dim[nd - 2], S = st->shape.dim[nd - 1], h = a->head < H ? a->head : 0;
    const float *p = interp_output(a->session.it, w) + (size_t)h * T * S;
    const float *g = grads_stage(a->back.pass.g, w) + (size_t)h * T * S, *ds = grads_stage(a->back.pass.g, s) + (size_t)h * T * S;
    int row = 0;
    for (int i = 0; i < T * S; i++)
        if (fabsf(ds[i]) > fabsf(ds[row * S])) row = i / S;
    double dot = 0;  // sum_k p_k g_k for the row
    for (int k = 0; k < S; k++) dot += (double)p[row * S + k] * g[row * S + k];
    const char *ql[HEAT_MAX_LABELS], *kl[HEAT_MAX_LABELS];
    const int nq = stage_axis_labels(a, w, nd - 2, ql, HEAT_MAX_LABELS), nk = stage_axis_labels(a, w, nd - 1, kl, HEAT_MAX_LABELS);
    const int lh = gfx_line_height(ui->g, FONT_MONO, ui->small);
    char line[300];
    snprintf(line, sizeof line, "Query %d ('%s'), head %d: sum_k p_k g_k = %.6g. Its keys with the largest p:", row,
             row < nq ? ql[row] : "?", h + 1, dot);
    ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->text, r.x, r.y, line, r.w);
    // Every column, the kernel's own number last (where a learner's mistake shows), as wide as the
    // header: 76 characters, whole at 1280x720.
    snprintf(line, sizeof line, "%-6s %11s %12s %12s %15s %15s", "key", "p_j", "g_j", "g_j - sum", "p_j (g_j - sum)",
             "the kernel");
    ui_text_fit(ui, FONT_MONO, ui->small, ui->th->muted, r.x, r.y + lh, line, r.w);
    int chosen[ROW_KEYS];  // the keys listed so far, largest p first (any of the row's S)
    for (int q = 0; q < ROW_KEYS && q < S && r.y + (q + 3) * lh <= r.y + r.h; q++) {
        int best = -1;
        for (int k = 0; k < S; k++) {
            bool listed = false;
            for (int j = 0; j < q; j++) listed = listed || chosen[j] == k;
            if (!listed && (best < 0 || p[row * S + k] > p[row * S + best])) best = k;
        }
        chosen[q] = best;
        const double pj = p[row * S + best], gj = g[row * S + best];
        snprintf(line, sizeof line, "%-6.6s %11.5g %12.5g %12.5g %15.5g %15.5g", best < nk ? kl[best] : "?", pj, gj, gj - dot,
                 pj * (gj - dot), (double)ds[row * S + best]);
        ui_text_fit(ui, FONT_MONO, ui->small, ui->th->text, r.x, r.y + (q + 2) * lh, line, r.w);
    }
}

void view_attention_back(Ui *ui, const App *a, int k, Rect in) {
    const int w = interp_stage(a->session.it, k)->role != ROLE_NONE ? interp_stage(a->session.it, k)->att_weights : k;
    const Stage *st = interp_stage(a->session.it, w);  // the softmax: its weights p
    const int s = st->in[0].kind == REF_STAGE ? st->in[0].index : -1;
    const float *g = grads_stage(a->back.pass.g, w), *ds = s >= 0 ? grads_stage(a->back.pass.g, s) : NULL;
    if (!g || !ds) {
        ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, in, "No gradient reaches this attention: the loss does not depend on it.");
        return;
    }
    const int lh = gfx_line_height(ui->g, FONT_MONO, ui->small);
    const int hh = ui_text_wrap(ui, FONT_MONO, ui->px, ui->th->accent, (Rect){in.x, in.y, in.w, in.h / 5},
                                "dL/dscores_j = p_j (g_j - sum_k p_k g_k): each row's gradient, minus what the row gives on average");
    in.y += hh + ui->pad / 2, in.h -= hh + ui->pad / 2;
    const int rows_h = (ROW_KEYS + 3) * lh, maps_h = in.h - rows_h - ui->pad;
    // The three maps in a row, or two over one where that gives bigger cells (a narrow centre).
    const int T = st->shape.dim[st->shape.ndim - 2], S = st->shape.dim[st->shape.ndim - 1];
    const int third = (in.w - 2 * ui->pad) / 3, half = (in.w - ui->pad) / 2;
    const float cell3 = heat_cell_guess(ui, T, S, (Rect){0, 0, third, maps_h});
    const float cell2 = heat_cell_guess(ui, T, S, (Rect){0, 0, half, (maps_h - ui->pad) / 2});
    Rect at[3];
    if (cell3 >= cell2)
        for (int j = 0; j < 3; j++) at[j] = (Rect){in.x + j * (third + ui->pad), in.y, third, maps_h};
    else {
        const int hh2 = (maps_h - ui->pad) / 2;
        at[0] = (Rect){in.x, in.y, half, hh2}, at[1] = (Rect){in.x + half + ui->pad, in.y, half, hh2};
        at[2] = (Rect){in.x, in.y + hh2 + ui->pad, half, hh2};
    }
    map(ui, a, w, interp_output(a->session.it, w), TK_PROBS, "p: the weights", "1-9 picks the head", 0, at[0]);
    map(ui, a, w, g, TK_VALUES, "g = dL/dp", "signed", 1, at[1]);
    char title[STAGE_ID_MAX + 8];
    snprintf(title, sizeof title, "dL/d %s", stage_short_name(interp_stage(a->session.it, s)->id, st->id, false));
    map(ui, a, w, ds, TK_VALUES, title, "the scores the softmax read", 2, at[2]);
    worked_row(ui, a, w, s, (Rect){in.x, in.y + maps_h + ui->pad, in.w, rows_h});
}
