// view_patch.c: the Patch view. Which piece of the model carries the answer: every layer's
// output patched from the clean run into the corrupted one, one position at a time, and every
// attention head one at a time, as heatmaps of the effect (1: the clean logit restored), each
// beside its attribution (gradient x activation, the first-order estimate); then the logit lens,
// the likeliest token at each layer and position. A click on a cell patches that piece alone.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "heat.h"

enum { MAX_CELLS = PROBE_MAX_ROWS * 64 };

// "decoder.layers.1.cross_attn" -> "dec 1 cross": row labels that fit beside a heatmap.
static void short_label(const char *id, char *out, size_t n) {
    char s[STAGE_ID_MAX];
    snprintf(s, sizeof s, "%s", id);
    const char *from[] = {"encoder.layers.", "decoder.layers.", "_attn", "."}, *to[] = {"enc ", "dec ", "", " "};
    for (int k = 0; k < 4; k++)
        for (char *at; (at = strstr(s, from[k]));) {
            const size_t lf = strlen(from[k]), lt = strlen(to[k]);
            memmove(at + lt, at + lf, strlen(at + lf) + 1);
            memcpy(at, to[k], lt);
        }
    snprintf(out, n, "%s", s);
}

// One sweep (its effects or its attribution) as a heatmap; cells past a shorter row's end (the
// decoder's positions past the target's length) are grey, "absent". The heads' map
// has a few wide columns, so its labels ("dec 1 cross") may take a third of its width.
static void sweep_map(Ui *ui, const App *a, const PatchSweep *p, bool attribution, const char *title, unsigned slot, Rect r) {
    static float cells[MAX_CELLS];
    static char labels[PROBE_MAX_ROWS][32];
    static const char *rl[PROBE_MAX_ROWS];
    static const char *const head_names[] = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"};
    int cols = 0;
    for (int k = 0; k < p->n_rows; k++) cols = p->rows[k].n > cols ? p->rows[k].n : cols;
    if (!p->n_rows || cols <= 0 || p->n_rows * cols > MAX_CELLS) return;
    for (int k = 0; k < p->n_rows; k++) {
        for (int c = 0; c < cols; c++)
            cells[k * cols + c] = c < p->rows[k].n ? (float)(attribution ? p->rows[k].attribution[c] : p->rows[k].effect[c]) : -INFINITY;
        short_label(p->rows[k].label, labels[k], sizeof labels[k]);
        rl[k] = labels[k];
    }
    HeatSpec h = {.title = title, .subtitle = p->sweep == SWEEP_HEADS ? NULL : "columns: positions",  // heads: 1 2 3 4
                  .shape = shape2(p->n_rows, cols), .kind = TK_VALUES, .data = cells, .rows = p->n_rows, .cols = cols,
                  .row_labels = rl, .n_row_labels = p->n_rows,
                  .col_labels = p->sweep == SWEEP_HEADS && cols <= 16 ? head_names : NULL, .n_col_labels = p->sweep == SWEEP_HEADS && cols <= 16 ? cols : 0,
                  .absent = "absent", .col_labels_count = p->sweep == SWEEP_HEADS, .label_part = p->sweep == SWEEP_HEADS ? 3 : 4,
                  .row_name = p->sweep == SWEEP_HEADS ? "attention" : "layer",
                  .col_name = p->sweep == SWEEP_HEADS ? "head" : "position",
                  .key = {a->model_serial, 0x10000000u | slot, (unsigned)p->n_rows, (unsigned)cols, (unsigned)strlen(a->probe.lesson)}};
    const Rect g = heat_draw(ui, &h, r);
    for (int k = 0; g.w > 0 && k < p->n_rows; k++)  // each cell: patch that piece alone
        for (int c = 0; c < p->rows[k].n; c++)
            ui_hot(ui, (Rect){g.x + c * g.w / cols, g.y + k * g.h / p->n_rows, g.w / cols + 1, g.h / p->n_rows + 1},
                   CMD_PATCH_CELL, ((p->sweep == SWEEP_HEADS) << 20) | (k << 10) | c);
}

// The lens: a row per layer, a cell per position with the likeliest token and its probability.
static void lens_grid(Ui *ui, const App *a, Rect r) {
    const Lens *l = a->probe.lens;
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    const int head = ui_text_wrap(ui, FONT_BOLD, ui->small, t->text, (Rect){r.x, r.y, r.w, 2 * lh},
                                  "Logit lens: each decoder layer's output put through the final norm and the generator "
                                  "(likeliest token, its probability)");
    r.y += head + ui->pad / 2, r.h -= head + ui->pad / 2;
    if (!l->n_rows) return;
    const int label_w = r.w / 6, cols = l->rows[0].rows, cw = (r.w - label_w) / (cols > 0 ? cols : 1);
    const int ch = r.h / l->n_rows < 2 * lh ? r.h / l->n_rows : 2 * lh;
    const Vocab *v = &a->probe.run[0].model.tgt_vocab;
    for (int k = 0; k < l->n_rows; k++) {
        char lab[32];
        short_label(l->rows[k].label, lab, sizeof lab);
        ui_text_fit(ui, FONT_SANS, ui->small, t->text, r.x, r.y + k * ch, lab, label_w);
        for (int c = 0; c < cols && c < l->rows[k].rows; c++) {
            const float p = l->rows[k].prob[c][0];
            const Rect cell = {r.x + label_w + c * cw, r.y + k * ch, cw - 2, ch - 2};
            gfx_rect(ui->g, cell, cmap_value(CMAP_SEQUENTIAL, p, 0.0f, 1.0f));
            char s[48];
            snprintf(s, sizeof s, "%s %.2f", vocab_token(v, l->rows[k].top[c][0]), (double)p);
            ui_text_fit(ui, FONT_MONO, ui->small, p > 0.5f ? (Rgba){0, 0, 0, 255} : (Rgba){255, 255, 255, 255},
                        cell.x + 2, cell.y + (cell.h - lh) / 2, s, cell.w - 4);
        }
    }
}

void view_patch(Ui *ui, const App *a, Rect r) {
    Rect in = ui_panel(ui, r, "Patch: which piece carries the answer");
    if (a->probe.why[0] || !a->probe.resid || !a->probe.open) {
        ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, in, a->probe.why[0] ? a->probe.why : "Preparing the two runs...");
        return;
    }
    const PatchSweep *rs = a->probe.resid, *hs = a->probe.heads;
    const Vocab *tv = &a->probe.run[0].model.tgt_vocab;
    char s[600];
    snprintf(s, sizeof s, "'%s' at the last row: logit %.3f for '%s', %.3f for '%s' (corrupted). 1 = a patch restores it all.",
             vocab_token(tv, a->probe.token), rs->target.clean, a->session.lesson.setup.input, rs->target.corrupt,
             a->session.lesson.setup.corrupt);
    const int hh = ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->text, (Rect){in.x, in.y, in.w, in.h / 6}, s);
    in.y += hh + ui->pad / 2, in.h -= hh + ui->pad / 2;
    const int lens_h = in.h / 4, pick_h = gfx_line_height(ui->g, FONT_BOLD, ui->small) + ui->pad / 2;
    const int maps_h = in.h - lens_h - pick_h - ui->pad, left_w = in.w * 3 / 5, half = (maps_h - ui->pad) / 2;
    sweep_map(ui, a, rs, false, "Layer outputs patched", 1, (Rect){in.x, in.y, left_w - ui->pad, half});
    sweep_map(ui, a, rs, true, "Layer outputs: attribution", 2, (Rect){in.x, in.y + half + ui->pad, left_w - ui->pad, half});
    sweep_map(ui, a, hs, false, "Heads patched", 3, (Rect){in.x + left_w, in.y, in.w - left_w, half});
    sweep_map(ui, a, hs, true, "Heads: attribution", 4, (Rect){in.x + left_w, in.y + half + ui->pad, in.w - left_w, half});
    int y = in.y + maps_h + ui->pad / 2;
    if (a->probe.pick_row >= 0) {
        const PatchSweep *p = a->probe.pick_heads ? hs : rs;
        const PatchRow *row = &p->rows[a->probe.pick_row];
        char lab[STAGE_ID_MAX];
        short_label(row->label, lab, sizeof lab);  // so the token it writes, the point, fits
        snprintf(s, sizeof s, "Patched %s %s %d alone, the model writes '%s': logit %.3f (effect %.3f)", lab,
                 a->probe.pick_heads ? "head" : "position", a->probe.pick_col + a->probe.pick_heads,
                 vocab_token(tv, a->probe.picked_top), a->probe.picked_logit,
                 (a->probe.picked_logit - p->target.corrupt) / (p->target.clean - p->target.corrupt));
    } else snprintf(s, sizeof s, "Click a cell to patch that piece alone and see what the model then writes.");
    ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->accent, in.x, y, s, in.w);
    lens_grid(ui, a, (Rect){in.x, y + pick_h, in.w, lens_h});
}
