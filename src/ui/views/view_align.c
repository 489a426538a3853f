// view_align.c: the alignment strip of the Decoding view: which source tokens the new token
// reads. A translation model's cross-attention is where it looks in the source for the word it
// writes; the strip shows that row of the round's last cross-attention map that has run (the
// query at the last position, which writes this round's token), one cell per source token: its
// weight as a number and a shade (0 dark, 1 light), the largest framed. The heads' mean, or the
// head picked with 1-9. A click on the strip goes to the map itself.
#include <stdio.h>
#include <string.h>

#include "colormap.h"
#include "view_decode.h"

enum { MAX_SOURCE = 512 };

// The weights of row `row` of a map [H, T, keys] over its first n keys: the heads' mean, or head h's.
static void strip_weights(const float *x, int H, int T, int keys, int n, int row, int h, float *w) {
    for (int s = 0; s < n; s++) w[s] = 0;
    const int from = h < 0 ? 0 : h, to = h < 0 ? H : h + 1;
    for (int k = from; k < to; k++)
        for (int s = 0; s < n; s++) w[s] += x[((size_t)k * T + row) * keys + s] / (float)(to - from);
}

static void caption(Ui *ui, const App *a, const Round *R, Rect r, const Stage *st, int h, int layer, int layers) {
    const int tok = decode_produced(R);
    char who[160], line[400], heads[48];
    if (tok >= 0) snprintf(who, sizeof who, "\xe2\x80\x9c%s\xe2\x80\x9d", decode_shown(a, tok));
    else snprintf(who, sizeof who, "The next token");
    if (h < 0) snprintf(heads, sizeof heads, "the mean of its %d heads", st->shape.dim[0]);
    else snprintf(heads, sizeof heads, "head %d of %d", h + 1, st->shape.dim[0]);
    snprintf(line, sizeof line, "%s reads the source here: cross-attention, layer %d of %d, %s", who, layer, layers, heads);
    ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, r.x, r.y, line, r.w);
}

int view_align(Ui *ui, const App *a, const Round *R, Rect r, int stage, int layer, int layers) {
    const Stage *st = interp_stage(R->it, stage);
    if (st->shape.ndim != 3 || r.h <= 0) return 0;
    const int H = st->shape.dim[0], T = st->shape.dim[1], S = st->shape.dim[2] < MAX_SOURCE ? st->shape.dim[2] : MAX_SOURCE;
    const int h = a->all_heads ? -1 : a->head < H ? a->head : H - 1;
    float w[MAX_SOURCE];
    strip_weights(interp_output(R->it, stage), H, T, st->shape.dim[2], S, T - 1, h, w);
    const char *label[MAX_SOURCE];
    const int n_labels = stage_axis_labels(a, stage, 2, label, MAX_SOURCE);
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), ch = chip_h(ui, ui->small), gap = ui->pad / 4;
    if (r.h < lh + 2 * ch) return 0;
    caption(ui, a, R, r, st, h, layer, layers);
    int best = 0, x = r.x, y = r.y + lh + 2;
    for (int s = 1; s < S; s++) best = w[s] > w[best] ? s : best;
    const int num_w = gfx_text_width(ui->g, FONT_BOLD, ui->small, "0.00") + ui->pad / 2;
    int shown = 0;
    for (; shown < S; shown++) {
        char tok[64];
        snprintf(tok, sizeof tok, "%s", shown < n_labels ? label[shown] : "?");
        if (!strcmp(tok, " ")) snprintf(tok, sizeof tok, "\xe2\x90\xa3");
        int cw = chip_w(ui, ui->small, tok, r.w / 3);
        cw = cw > num_w ? cw : num_w;
        if (x + cw > r.x + r.w) break;
        chip_draw(ui, ui->small, (Rect){x, y, cw, ch}, tok, CHIP_GIVEN);
        const Rect cell = {x, y + ch + 1, cw, ch};
        const Rgba c = cmap_value(CMAP_SEQUENTIAL, w[shown], 0, 1);
        gfx_rect(ui->g, cell, c);
        if (shown == best) gfx_frame(ui->g, cell, 2, ui->th->accent);
        char num[16];
        snprintf(num, sizeof num, "%.2f", w[shown]);
        const int tw = gfx_text_width(ui->g, FONT_BOLD, ui->small, num);
        const Rgba ink = w[shown] > 0.55f ? (Rgba){0, 0, 0, 255} : (Rgba){255, 255, 255, 255};  // the map lightens as it rises
        gfx_text(ui->g, FONT_BOLD, ui->small, ink, cell.x + (cw - tw) / 2, cell.y + (ch - lh) / 2, num);
        x += cw + gap;
    }
    if (shown < S) {
        char more[48];
        snprintf(more, sizeof more, "\xe2\x80\xa6 %d more", S - shown);
        gfx_text(ui->g, FONT_SANS, ui->small, ui->th->muted, x, y + ch + 1, more);
    }
    ui_hot(ui, (Rect){r.x, r.y, r.w, lh + 2 + 2 * ch + 1}, CMD_GOTO_STAGE, stage);
    return lh + 2 + 2 * ch + 1;
}
