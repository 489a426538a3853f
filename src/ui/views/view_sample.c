// view_sample.c: a round that sampled its token, in the Decoding view (decoding.h works out the
// numbers). For the likeliest tokens: the model's softmax, the distribution after the temperature
// and after the top-k and top-p cut-offs (a cut token greyed, and the cut named), then the draw:
// the kept tokens laid end to end in id order on a line from 0 to 1, each as long as its
// probability, with u marked on it; the token whose stretch u falls in is the one appended.
#include <stdio.h>
#include <string.h>

#include "view_decode.h"

enum { SHOW_MAX = 10, COLS = 3 };

// The rows to show: the likeliest tokens, likeliest first; when the drawn token is further down,
// it takes the last row (*gap). Returns how many.
static int rows_shown(const SampleRound *s, int fit, int drawn, int *rows, bool *gap) {
    int n = fit < s->V ? fit : s->V;
    n = n < SHOW_MAX ? n : SHOW_MAX;
    *gap = false;
    for (int i = 0; i < n; i++) rows[i] = s->order[i];
    int rank = 0;
    while (drawn >= 0 && rank < s->V && s->order[rank] != drawn) rank++;
    if (drawn >= 0 && rank >= n && n >= 2) rows[n - 1] = drawn, *gap = true;
    return n;
}

// What the cut-offs did, in a sentence.
static void cut_text(const SampleRound *s, const DecodeChoice *c, char *buf, size_t n) {
    char t[96], k[64] = "", p[64] = "";
    snprintf(t, sizeof t, "Temperature %g: the scores are divided by %g before the softmax%s", c->temperature,
             c->temperature, c->temperature > 1 ? " (flatter)" : c->temperature < 1 ? " (sharper)" : " (no change)");
    if (s->after_top_k < s->V) snprintf(k, sizeof k, "top-k %d keeps %d", c->top_k, s->after_top_k);
    if (c->top_p > 0 && c->top_p < 1) snprintf(p, sizeof p, "top-p %g keeps %d", c->top_p, s->n_kept);
    if (!k[0] && !p[0]) snprintf(buf, n, "%s. No top-k or top-p: all %d tokens are kept.", t, s->V);
    else snprintf(buf, n, "%s. Of %d tokens, %s%s%s.", t, s->V, k, k[0] && p[0] ? ", then " : "", p);
}

// One bar with its value after it, in a column `w` wide.
static void cell(Ui *ui, Rect c, double p, float full, int nw, bool strong) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), bw = c.w - nw - ui->pad / 2;
    Rect track = {c.x, c.y + 2, bw, c.h - 4};
    gfx_rect(ui->g, track, t->panel_alt);
    const int len = (int)(bw * (p / full < 1 ? p / full : 1) + 0.5);
    if (len > 0) gfx_rect(ui->g, (Rect){track.x, track.y, len, track.h}, strong ? t->lit : t->accent);
    char v[32];
    snprintf(v, sizeof v, "%.4f", p);
    gfx_text(ui->g, FONT_SANS, ui->small, t->text, c.x + bw + ui->pad / 2, c.y + (c.h - lh) / 2, v);
}

typedef struct {
    int lw, cw, nw, sw;  // widths: the token column, each bar column, a value, the status column
    int rh;              // a row
} Grid;

static void table_row(Ui *ui, const App *a, const SampleRound *s, const Grid *g, Rect row, int v, bool drawn, float full) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), ty = row.y + (row.h - lh) / 2;
    int rank = 0;
    while (rank < s->V && s->order[rank] != v) rank++;
    const bool cut = s->kept[v] <= 0, best = v == s->argmax;
    if (drawn) gfx_rect(ui->g, (Rect){row.x, row.y, g->lw - ui->pad / 2, row.h}, t->lit);
    ui_text_fit(ui, best || drawn ? FONT_BOLD : FONT_SANS, ui->small, drawn ? t->lit_text : cut ? t->muted : t->text,
                row.x + ui->pad / 4, ty, decode_shown(a, v), g->lw - ui->pad);
    const double p[COLS] = {s->model[v], s->tempered[v], s->kept[v]};
    for (int c = 0; c < COLS; c++) {
        Rect cr = {row.x + g->lw + c * g->cw, row.y, g->cw - ui->pad, row.h};
        if (c == COLS - 1 && cut) {  // cut: a grey track and the cut's name
            gfx_rect(ui->g, (Rect){cr.x, cr.y + 2, cr.w - g->nw - ui->pad / 2, cr.h - 4}, t->grid);
            gfx_text(ui->g, FONT_ITALIC, ui->small, t->muted, cr.x + ui->pad / 2, ty,
                     rank >= s->after_top_k ? "cut by top-k" : "cut by top-p");
            continue;
        }
        cell(ui, cr, p[c], full, g->nw, drawn && c == COLS - 1);
    }
    const char *status = drawn && best ? "\xe2\x97\x80 drawn = argmax" : drawn ? "\xe2\x97\x80 drawn" : best ? "argmax" : "";
    ui_text_fit(ui, FONT_BOLD, ui->small, drawn ? t->text : t->muted, row.x + g->lw + COLS * g->cw, ty, status, g->sw);
    if (drawn) gfx_frame(ui->g, row, 2 * t->line, t->lit);
}

// The table of the shown rows; returns its height.
static int table(Ui *ui, const App *a, const SampleRound *s, Rect r, int fit, int drawn) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    int rows[SHOW_MAX];
    bool gap;
    const int n = rows_shown(s, fit, drawn, rows, &gap);
    Grid g = {.rh = lh * 4 / 3, .nw = gfx_text_width(ui->g, FONT_SANS, ui->small, "0.0000") + ui->pad / 2};
    g.lw = gfx_text_width(ui->g, FONT_BOLD, ui->small, "token") + ui->pad;
    for (int i = 0; i < n; i++) {
        const int w = gfx_text_width(ui->g, FONT_BOLD, ui->small, decode_shown(a, rows[i])) + ui->pad;
        g.lw = w > g.lw ? w : g.lw;
    }
    g.lw = g.lw < r.w / 6 ? g.lw : r.w / 6;
    g.sw = gfx_text_width(ui->g, FONT_BOLD, ui->small, "\xe2\x97\x80 drawn = argmax");
    g.sw = g.sw < r.w / 4 ? g.sw : r.w / 4;
    g.cw = (r.w - g.lw - g.sw) / COLS;
    char head[COLS][64];
    snprintf(head[0], sizeof head[0], "model's softmax");
    snprintf(head[1], sizeof head[1], "at temperature %g", chooser_choice(interp_chooser(a->session.it))->temperature);
    snprintf(head[2], sizeof head[2], "kept, sums to 1");
    gfx_text(ui->g, FONT_BOLD, ui->small, t->muted, r.x + ui->pad / 4, r.y, "token");
    for (int c = 0; c < COLS; c++)
        ui_text_fit(ui, FONT_BOLD, ui->small, t->muted, r.x + g.lw + c * g.cw, r.y, head[c], g.cw - ui->pad);
    float full = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < COLS; c++) {
            const double p = c == 0 ? s->model[rows[i]] : c == 1 ? s->tempered[rows[i]] : s->kept[rows[i]];
            full = (float)p > full ? (float)p : full;
        }
    full = bar_scale(full);
    int y = r.y + lh + ui->pad / 4;
    for (int i = 0; i < n; i++, y += g.rh)
        table_row(ui, a, s, &g, (Rect){r.x, y, r.w, g.rh - 2}, rows[i], rows[i] == drawn, full);
    char more[160] = "";
    if (n < s->V)
        snprintf(more, sizeof more, "the likeliest %d%s of %d tokens; %d not shown (full bar = %g)", gap ? n - 1 : n,
                 gap ? " and the one drawn" : "", s->V, s->V - n, (double)full);
    else snprintf(more, sizeof more, "every token shown (full bar = %g)", (double)full);
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x, y, more, r.w);
    return y + lh - r.y;
}

// The draw: the kept tokens end to end in id order on [0, 1], u marked, the drawn one lit.
static int draw_line(Ui *ui, const App *a, const SampleRound *s, Rect r) {
    const Theme *t = ui->th;
    const SamplePick *pk = s->pick;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), lhb = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    char head[160], rest[200];
    snprintf(head, sizeof head, "Drawn: %s", decode_shown(a, pk->token));
    if (pk->token == pk->argmax) snprintf(rest, sizeof rest, "   u = %.6f; greedy decoding would append it too", pk->u);
    else snprintf(rest, sizeof rest, "   u = %.6f; greedy decoding would append %s, the argmax", pk->u, decode_shown(a, pk->argmax));
    const int w = ui_text_fit(ui, FONT_BOLD, ui->px, t->text, r.x, r.y, head, r.w);
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x + w, r.y + (lhb - lh) / 2, rest, r.w - w);
    const int ch = chip_h(ui, ui->small), y = r.y + lhb + ui->pad / 2;
    const Rect line = {r.x, y, r.w, ch};
    double sum = 0, lo = 0, hi = 0;
    for (int v = 0, k = 0; v < s->V; v++) {
        if (s->kept[v] <= 0) continue;
        const int x0 = line.x + (int)(sum * line.w + 0.5), x1 = line.x + (int)((sum + s->kept[v]) * line.w + 0.5);
        if (v == pk->token) lo = sum, hi = sum + s->kept[v];
        sum += s->kept[v];
        const Rect seg = {x0, y, x1 - x0, ch};
        gfx_rect(ui->g, seg, v == pk->token ? t->lit : k++ % 2 ? t->panel_alt : t->encoder);
        gfx_frame(ui->g, seg, t->line, t->border);
        const char *name = decode_shown(a, v);
        const int tw = gfx_text_width(ui->g, FONT_SANS, ui->small, name);
        if (tw + ui->pad / 2 <= seg.w) gfx_text(ui->g, FONT_SANS, ui->small, t->text, seg.x + (seg.w - tw) / 2, y + (ch - lh) / 2, name);
    }
    const int ux = line.x + (int)(pk->u * line.w + 0.5);
    gfx_rect(ui->g, (Rect){ux - t->line, y - ui->pad / 2, 2 * t->line + 1, ch + ui->pad}, t->text);
    char ul[48];
    snprintf(ul, sizeof ul, "u = %.4f", pk->u);
    const int uw = gfx_text_width(ui->g, FONT_BOLD, ui->small, ul), yl = y + ch + ui->pad / 2;
    int lx = ux - uw / 2;
    lx = lx < r.x ? r.x : lx + uw > r.x + r.w ? r.x + r.w - uw : lx;
    gfx_text(ui->g, FONT_BOLD, ui->small, t->text, lx, yl, ul);
    if (lx > r.x + gfx_text_width(ui->g, FONT_SANS, ui->small, "0") + ui->pad) gfx_text(ui->g, FONT_SANS, ui->small, t->muted, r.x, yl, "0");
    if (lx + uw + ui->pad < r.x + r.w - gfx_text_width(ui->g, FONT_SANS, ui->small, "1"))
        gfx_text(ui->g, FONT_SANS, ui->small, t->muted, r.x + r.w - gfx_text_width(ui->g, FONT_SANS, ui->small, "1"), yl, "1");
    char cap[300];
    snprintf(cap, sizeof cap, "The kept tokens end to end in id order, each as long as its probability: u falls in %s's "
             "stretch, from %.4f to %.4f.", decode_shown(a, pk->token), lo, hi);
    const int hc = ui_text_wrap(ui, FONT_SANS, ui->small, t->muted, (Rect){r.x, yl + lh + ui->pad / 4, r.w, 2 * lh}, cap);
    return yl + lh + ui->pad / 4 + hc - r.y;
}

int view_sample(Ui *ui, const App *a, const Round *R, Rect r) {
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), lhb = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    SampleRound s;
    char msg[300];
    const bool open = sample_round_open(&s, R->it, R->next, R->round, 0);
    if (!open || !decode_seen(a, s.scores)) {
        snprintf(msg, sizeof msg, "Round %d: the decoder is still running. Step forward to reach %s, the scores this "
                 "round draws its token from.", R->round + 1, open ? interp_stage(R->it, s.scores)->id : "the logits");
        if (open) sample_round_close(&s);
        return note_box(ui, r, msg);
    }
    const bool drawn = R->next_run && s.pick;
    const Theme *t = ui->th;
    char title[96], sub[STAGE_ID_MAX + 32];
    snprintf(title, sizeof title, "How round %d draws its token", R->round + 1);
    snprintf(sub, sizeof sub, "   from %s, row %d", interp_stage(R->it, s.scores)->id, s.row);
    const int w = ui_text_fit(ui, FONT_BOLD, ui->px, t->text, r.x, r.y, title, r.w);
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x + w, r.y + (lhb - lh) / 2, sub, r.w - w);
    cut_text(&s, chooser_choice(interp_chooser(R->it)), msg, sizeof msg);
    int y = r.y + lhb + ui->pad / 4;
    y += ui_text_wrap(ui, FONT_SANS, ui->small, t->text, (Rect){r.x, y, r.w, 2 * lh}, msg) + ui->pad / 2;
    const int draw_h = lhb + chip_h(ui, ui->small) + 3 * lh + 2 * ui->pad;
    const int fit = (r.y + r.h - y - 2 * lh - draw_h) / (lh * 4 / 3);
    y += table(ui, a, &s, (Rect){r.x, y, r.w, r.y + r.h - y}, fit < 3 ? 3 : fit, drawn ? s.pick->token : -1) + ui->pad;
    if (drawn) y += draw_line(ui, a, &s, (Rect){r.x, y, r.w, r.y + r.h - y});
    else {
        snprintf(msg, sizeof msg, "The draw comes at the end of the round: step on to %s.", interp_stage(R->it, R->next)->id);
        y += note_box(ui, (Rect){r.x, y, r.w, r.y + r.h - y}, msg);
    }
    sample_round_close(&s);
    return y - r.y;
}
