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

// The clean run's tokens of one side (the source, or the target a decoder reads), shown as the
// window shows tokens; returns how many.
static int side_tokens(const App *a, bool src, const char **out, int max) {
    const Session *s = &a->probe.run[0];
    const int slot = program_input(&s->lesson.program, src ? "src" : "tgt");
    int len = 0;
    const float *ids = slot >= 0 ? interp_input_ids(s->it, slot, &len) : NULL;
    const Vocab *v = src ? &s->model.src_vocab : &s->model.tgt_vocab;
    for (int c = 0; ids && c < len && c < max; c++) {
        out[c] = vocab_token(v, (int)ids[c]);
        if (!strcmp(out[c], " ")) out[c] = "\xe2\x90\xa3";  // a space, seen
    }
    return ids ? (len < max ? len : max) : 0;
}

// Rows [k0, k1) of one sweep (its effects or its attribution) as a heatmap; cells past a shorter
// row's end are grey, "absent". The layers' maps are the encoder's rows or the decoder's, each
// with its own tokens over its columns; the heads' map has a few wide columns, numbered from 1,
// so its labels ("dec 1 cross") may take a third of its width.
static void sweep_map(Ui *ui, const App *a, const PatchSweep *p, bool attribution, int k0, int k1, const char *title,
                      unsigned slot, Rect r) {
    static float cells[MAX_CELLS];
    static char labels[PROBE_MAX_ROWS][32];
    static const char *rl[PROBE_MAX_ROWS], *tokens[PROBE_MAX_COLS];
    static const char *const head_names[] = {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"};
    int cols = 0;
    const int n = k1 - k0;
    for (int k = k0; k < k1; k++) cols = p->rows[k].n > cols ? p->rows[k].n : cols;
    if (n <= 0 || cols <= 0 || n * cols > MAX_CELLS) return;
    for (int k = k0; k < k1; k++) {
        for (int c = 0; c < cols; c++)
            cells[(k - k0) * cols + c] =
                c < p->rows[k].n ? (float)(attribution ? p->rows[k].attribution[c] : p->rows[k].effect[c]) : -INFINITY;
        short_label(p->rows[k].label, labels[k - k0], sizeof labels[k - k0]);
        rl[k - k0] = labels[k - k0];
    }
    const bool heads = p->sweep == SWEEP_HEADS;
    const int nt = heads ? 0 : side_tokens(a, !strncmp(p->rows[k0].label, "encoder", 7), tokens, PROBE_MAX_COLS);
    HeatSpec h = {.title = title, .subtitle = NULL,
                  .shape = shape2(n, cols), .kind = TK_VALUES, .data = cells, .rows = n, .cols = cols,
                  .row_labels = rl, .n_row_labels = n,
                  .col_labels = heads ? (cols <= 16 ? head_names : NULL) : nt >= cols ? tokens : NULL,
                  .n_col_labels = heads ? (cols <= 16 ? cols : 0) : nt >= cols ? cols : 0,
                  .absent = "absent", .col_labels_count = p->sweep == SWEEP_HEADS, .label_part = p->sweep == SWEEP_HEADS ? 3 : 4,
                  .row_name = p->sweep == SWEEP_HEADS ? "attention" : "layer",
                  .col_name = p->sweep == SWEEP_HEADS ? "head" : "position",
                  .key = {a->model_serial, 0x10000000u | slot, (unsigned)n, (unsigned)cols, (unsigned)strlen(a->probe.lesson)}};
    const Rect g = heat_draw(ui, &h, r);
    for (int k = k0; g.w > 0 && k < k1; k++)  // each cell: patch that piece alone
        for (int c = 0; c < p->rows[k].n; c++)
            ui_hot(ui, (Rect){g.x + c * g.w / cols, g.y + (k - k0) * g.h / n, g.w / cols + 1, g.h / n + 1}, CMD_PATCH_CELL,
                   (heads << 20) | (k << 10) | c);
}

// The layers' sweep in r: the encoder's rows over the source's tokens beside the decoder's rows
// over the target's, each as wide as its positions (one map when the model has one side).
static void layer_maps(Ui *ui, const App *a, const PatchSweep *p, bool attribution, const char *title, unsigned slot,
                       Rect r) {
    int split = 0, enc_cols = 0, dec_cols = 0;
    while (split < p->n_rows && !strncmp(p->rows[split].label, "encoder", 7)) split++;
    for (int k = 0; k < p->n_rows; k++) {
        int *cols = k < split ? &enc_cols : &dec_cols;
        *cols = p->rows[k].n > *cols ? p->rows[k].n : *cols;
    }
    char t[96];
    if (split == 0 || split == p->n_rows) {
        snprintf(t, sizeof t, "%s%s", title, split ? ": encoder" : ": decoder");
        return sweep_map(ui, a, p, attribution, 0, p->n_rows, t, slot, r);
    }
    // Each as wide as its positions, but the decoder's (often the fewer) keeps two fifths: its
    // tokens stay readable across, not turned on end.
    const int gap = ui->pad, prop = (int)((long)(r.w - gap) * enc_cols / (enc_cols + dec_cols));
    const int w_enc = prop < (r.w - gap) * 3 / 5 ? prop : (r.w - gap) * 3 / 5;
    snprintf(t, sizeof t, "%s: encoder", title);
    sweep_map(ui, a, p, attribution, 0, split, t, slot, (Rect){r.x, r.y, w_enc, r.h});
    sweep_map(ui, a, p, attribution, split, p->n_rows, "decoder", slot | 0x100u, (Rect){r.x + w_enc + gap, r.y, r.w - w_enc - gap, r.h});
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
    // Its columns: the positions the decoder reads, headed by their tokens.
    const char *tokens[PROBE_MAX_COLS];
    const int nt = side_tokens(a, false, tokens, PROBE_MAX_COLS);
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x, r.y, "position:", label_w);
    for (int c = 0; c < cols; c++) {
        char s[64];
        snprintf(s, sizeof s, c < nt ? "%d %s" : "%d", c, c < nt ? tokens[c] : "");
        ui_text_fit(ui, FONT_MONO, ui->small, t->muted, r.x + label_w + c * cw + 2, r.y, s, cw - 4);
    }
    r.y += lh, r.h -= lh;
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
    // Three rows of maps: the layers patched, their attribution (each the encoder's over the
    // source beside the decoder's over the target), then the heads patched beside their attribution.
    const int lens_h = in.h / 4, pick_h = gfx_line_height(ui->g, FONT_BOLD, ui->small) + ui->pad / 2;
    const int maps_h = in.h - lens_h - pick_h - ui->pad, third = (maps_h - 2 * ui->pad) / 3, half_w = (in.w - ui->pad) / 2;
    layer_maps(ui, a, rs, false, "Layers patched", 1, (Rect){in.x, in.y, in.w, third});
    layer_maps(ui, a, rs, true, "Layers' attribution", 2, (Rect){in.x, in.y + third + ui->pad, in.w, third});
    const int heads_y = in.y + 2 * (third + ui->pad), heads_h = maps_h - 2 * (third + ui->pad);
    sweep_map(ui, a, hs, false, 0, hs->n_rows, "Heads patched", 3, (Rect){in.x, heads_y, half_w, heads_h});
    sweep_map(ui, a, hs, true, 0, hs->n_rows, "Heads: attribution", 4, (Rect){in.x + half_w + ui->pad, heads_y, half_w, heads_h});
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
