// view_decode.c: the "Decoding" view: the output sequence as it grows, the generator's softmax
// as a bar chart of the most likely next tokens, and the last decoder layer's attention maps.
//
// Generating runs the decoder once per round (stage ids "step.K."); the view works out the
// round the cursor is in and shows everything from that round's point of view: the tokens
// before it (a decoder-only program's prompt marked as such), the token it produces once its
// argmax has run, and later tokens greyed out. A round that samples shows its distributions and
// its draw (view_sample.c); beam search shows its hypotheses (view_beam.c). Teacher forcing has
// one pass: the target, and under each of its tokens the token the model predicts after it.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heat.h"
#include "view_decode.h"

enum { MAX_TOKENS = 512, TOP_K = 10 };

// The decoder's attention maps of this round, in order: [0, n) of maps[], each a softmax over
// queries and keys (roles.c); cross[k] when its queries and keys come from different inputs.
enum { MAX_MAPS = 64 };
typedef struct {
    int stage[MAX_MAPS];
    bool cross[MAX_MAPS];
    int n;
} RoundMaps;

static RoundMaps round_maps(const Round *R) {
    RoundMaps m = {.n = 0};
    for (int i = 0; i < interp_n_stages(R->it) && m.n < MAX_MAPS; i++) {
        const Stage *st = interp_stage(R->it, i);
        if (!st->in_decode || (R->greedy && st->step != R->round) || st->role != ROLE_WEIGHTS) continue;
        const int nd = st->shape.ndim;
        m.cross[m.n] = st->axes.slot[nd - 2] != st->axes.slot[nd - 1], m.stage[m.n++] = i;
    }
    return m;
}

// ---- token chips ----

// Places boxes first..n-1 of widths w[] in at most `rows` rows of `width` (the first row
// starting at x0); returns how many fit.
static int flow(const int *w, int first, int n, int x0, int width, int gap, int rows, int *xs, int *row) {
    int x = x0, r = 0, k = first;
    bool empty = x0 == 0;
    for (; k < n; k++) {
        if (!empty && x + w[k] > width) {
            if (++r >= rows) break;
            x = 0;
        }
        xs[k] = x, row[k] = r, x += w[k] + gap, empty = false;
    }
    return k - first;
}

// The first box to show so that box `focus` is among those that fit (with "…" before them).
static int flow_start(const int *w, int n, int focus, int lead, int width, int gap, int rows, int *xs, int *row) {
    int first = 0;
    while (first < focus && flow(w, first, n, first ? lead : 0, width, gap, rows, xs, row) <= focus - first)
        first++;
    return first;
}

static const char *stop_text(StopReason why) {
    return why == STOP_EOS ? "<eos>" : why == STOP_MAX_LEN ? "max_len" : why == STOP_POSITIONS ? "the last position" : "";
}

// A token not chosen yet: an ellipsis, which no shipped vocabulary has ("?" was taken for the
// character '?' that an untrained model writes).
#define PENDING "\xe2\x80\xa6"

// Generating: the start (<bos>, or the prompt after its label), the tokens before this round,
// this round's token (or PENDING until it is chosen), later ones grey.
static int greedy_chips(Ui *ui, const App *a, const Round *R, Rect r) {
    enum { N = MAX_TOKENS + 3 };
    int w[N], xs[N], row[N], id_of[N];
    const char *txt[N];
    ChipKind kind[N];
    const int lead = R->prompted, produced = R->start + R->round, tok = decode_produced(R);
    const int arrow = gfx_text_width(ui->g, FONT_BOLD, ui->px, " \xe2\x86\x92 ");
    const int n_known = R->n_ids + (R->why == STOP_EOS);  // start + generated (+ eos)
    int n = n_known > produced + 1 ? n_known : produced + 1;
    n = (n < MAX_TOKENS ? n : MAX_TOKENS) + lead;
    for (int j = 0; j < n; j++) {
        const int i = j - lead;  // the token's place in the target (-1: the prompt's label)
        int id = i >= 0 && i < R->n_ids ? (int)R->ids[i] : a->session.model.cfg.eos_id.id;
        if (i == produced && tok >= 0) id = tok;
        kind[j] = i < R->start ? (R->prompted ? CHIP_PROMPT : CHIP_GIVEN) : i < produced ? CHIP_GIVEN
                : i == produced ? (tok >= 0 ? CHIP_NEW : CHIP_UNKNOWN) : CHIP_LATER;
        txt[j] = i < 0 ? "prompt" : kind[j] == CHIP_UNKNOWN ? PENDING : decode_shown(a, id);
        id_of[j] = i;
        w[j] = i < 0 ? gfx_text_width(ui->g, FONT_BOLD, ui->small, txt[j]) + ui->pad / 2
                     : chip_w(ui, ui->px, txt[j], r.w / 2) + (i == produced ? arrow : 0);
    }
    const int h = chip_h(ui, ui->px), gap = ui->pad / 2, ell = gfx_text_width(ui->g, FONT_SANS, ui->px, "\xe2\x80\xa6") + gap;
    const int rows = r.h / (h + gap) < 1 ? 1 : r.h / (h + gap);
    const int first = flow_start(w, n, produced + lead, ell, r.w, gap, rows, xs, row);
    const int placed = flow(w, first, n, first ? ell : 0, r.w, gap, rows, xs, row);
    if (first) gfx_text(ui->g, FONT_SANS, ui->px, ui->th->muted, r.x, r.y + ui->pad / 4, "\xe2\x80\xa6");
    int used = 0;
    const int lhs = gfx_line_height(ui->g, FONT_BOLD, ui->small);
    for (int j = first; j < first + placed; j++) {
        Rect c = {r.x + xs[j], r.y + row[j] * (h + gap), w[j], h};
        const int i = id_of[j];
        used = c.y + h - r.y;
        if (i < 0) {  // the label in front of a decoder-only program's prompt
            gfx_text(ui->g, FONT_BOLD, ui->small, ui->th->muted, c.x, c.y + (h - lhs) / 2, txt[j]);
            continue;
        }
        if (i == produced) {
            gfx_text(ui->g, FONT_BOLD, ui->px, ui->th->muted, c.x, c.y + ui->pad / 4, " \xe2\x86\x92 ");
            c.x += arrow, c.w -= arrow;
        }
        chip_draw(ui, ui->px, c, txt[j], kind[j]);
        const int k = i >= R->start ? decode_round_argmax(R->it, true, i - R->start) : -1;
        if (k >= 0) ui_hot(ui, c, CMD_GOTO_STAGE, k);
    }
    return used;
}

// Teacher forcing: the target tokens and, under each, the token predicted after it. Sets *sel
// to the column under the mouse (else the last).
static int forced_chips(Ui *ui, const App *a, const Round *R, Rect r, int *sel) {
    int w[MAX_TOKENS], xs[MAX_TOKENS], row[MAX_TOKENS], pid[MAX_TOKENS];
    const int T = R->n_ids < MAX_TOKENS ? R->n_ids : MAX_TOKENS;
    const float *pred = R->next_run ? interp_output(R->it, R->next) : NULL;
    const Theme *t = ui->th;
    const int lab = (int)fmaxf(gfx_text_width(ui->g, FONT_BOLD, ui->small, "target"),
                               gfx_text_width(ui->g, FONT_BOLD, ui->small, "predicts")) + ui->pad;
    char ptxt[MAX_TOKENS][64];
    int matches = 0;
    for (int i = 0; i < T; i++) {
        pid[i] = pred ? (int)pred[i] : -1;
        bool match = pred && i + 1 < T && pid[i] == (int)R->ids[i + 1];
        matches += match;
        snprintf(ptxt[i], sizeof ptxt[i], "%s%s", pred ? decode_shown(a, pid[i]) : PENDING, match ? " \xe2\x9c\x93" : "");
        int a1 = chip_w(ui, ui->px, decode_shown(a, (int)R->ids[i]), r.w / 2), a2 = chip_w(ui, ui->px, ptxt[i], r.w / 2);
        w[i] = a1 > a2 ? a1 : a2;
    }
    const int h = chip_h(ui, ui->px), gap = ui->pad / 2, pair = 2 * h + gap, lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    const int ell = gfx_text_width(ui->g, FONT_SANS, ui->px, "\xe2\x80\xa6") + gap, rows_fit = (r.h - lh) / (pair + 2 * gap);
    const int rows = rows_fit < 1 ? 1 : rows_fit, width = r.w - lab;
    const int first = flow_start(w, T, T - 1, ell, width, gap, rows, xs, row);
    const int placed = flow(w, first, T, first ? ell : 0, width, gap, rows, xs, row);
    *sel = T - 1;
    int used = 0;
    Rect cols[MAX_TOKENS];
    for (int i = first; i < first + placed; i++) {
        cols[i] = (Rect){r.x + lab + xs[i], r.y + row[i] * (pair + 2 * gap), w[i], pair};
        if (rect_has(cols[i], ui->mx, ui->my)) *sel = i;
    }
    for (int i = first; i < first + placed; i++) {
        Rect c = cols[i];
        if (i == first || row[i] != row[i - 1]) {
            gfx_text(ui->g, FONT_BOLD, ui->small, t->muted, r.x, c.y + (h - lh) / 2, "target");
            gfx_text(ui->g, FONT_BOLD, ui->small, t->muted, r.x, c.y + h + gap + (h - lh) / 2, "predicts");
            if (i == first && first)
                gfx_text(ui->g, FONT_SANS, ui->px, t->muted, r.x + lab, c.y + ui->pad / 4, "\xe2\x80\xa6");
        }
        bool match = pred && i + 1 < T && pid[i] == (int)R->ids[i + 1];
        chip_draw(ui, ui->px, (Rect){c.x, c.y, c.w, h}, decode_shown(a, (int)R->ids[i]), CHIP_GIVEN);
        chip_draw(ui, ui->px, (Rect){c.x, c.y + h + gap, c.w, h}, ptxt[i],
             !pred ? CHIP_LATER : match ? CHIP_MATCH : CHIP_MISS);
        if (i == *sel) gfx_frame(ui->g, rect_inset(c, -gap / 2 - 1), 2 * t->line, t->lit);
        used = c.y + pair - r.y;
    }
    char legend[160];
    if (pred) snprintf(legend, sizeof legend, "\xe2\x9c\x93 = the prediction is the next target token (%d of %d)."
                       " Point at a column to see its probabilities.", matches, T - 1);
    else snprintf(legend, sizeof legend, "The predictions appear once generator.next has run.");
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x, r.y + used + gap + 2, legend, r.w);
    return used + gap + 2 + lh;
}

// ---- the generator's softmax as a bar chart ----

// The ids of the k largest values of p[V], largest first (ties: the lower id, as argmax).
static int top_k(const float *p, int V, int *top, int k) {
    int n = 0;
    for (int v = 0; v < V; v++) {
        if (n == k && !(p[v] > p[top[n - 1]])) continue;
        int j = n < k ? n++ : k - 1;
        while (j > 0 && p[v] > p[top[j - 1]]) top[j] = top[j - 1], j--;
        top[j] = v;
    }
    return n;
}

static void bar_row(Ui *ui, Rect r, const char *tok, float p, float full, int lw, int bw, bool best) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), ty = r.y + (r.h - lh) / 2;
    const FontFace f = best ? FONT_BOLD : FONT_SANS;
    const int tw = gfx_text_width(ui->g, f, ui->small, tok);
    ui_text_fit(ui, f, ui->small, t->text, r.x + lw - (tw < lw ? tw : lw), ty, tok, lw);
    Rect track = {r.x + lw + ui->pad / 2, r.y + 1, bw, r.h - 2};
    gfx_rect(ui->g, track, t->panel_alt);
    int len = (int)lroundf(bw * fminf(p / full, 1.0f));
    if (len > 0) gfx_rect(ui->g, (Rect){track.x, track.y, len, track.h}, best ? t->lit : t->accent);
    if (best) gfx_frame(ui->g, (Rect){track.x, track.y, len > 2 ? len : 2, track.h}, t->line, t->text);
    char s[64];
    snprintf(s, sizeof s, "%.4f%s", (double)p, best ? "  \xe2\x86\x90 argmax" : "");
    ui_text_fit(ui, f, ui->small, best ? t->text : t->muted, track.x + bw + ui->pad / 2, ty, s,
                r.x + r.w - track.x - bw - ui->pad / 2);
}

// Row x[V] as probabilities: a softmax's as they are, a log_softmax's exponentiated, anything
// else (logits) through a softmax. Returns how they were made, for the caption.
static const char *as_probs(const Stage *st, const float *x, int V, float *p) {
    if (st->op == OP_SOFTMAX) {
        memcpy(p, x, sizeof(float) * (size_t)V);
        return "";
    }
    if (st->op != OP_LOG_SOFTMAX) {
        softmax_forward(p, x, 1, V);  // the kernel the programs run
        return ", through a softmax";
    }
    for (int v = 0; v < V; v++) p[v] = expf(x[v]);
    return ", exponentiated";
}

// The top-k bars of probabilities p[V] under a title; label(k) names entry k.
static void bars(Ui *ui, const App *a, Rect r, const float *p, int V, const char *title, const char *sub_text,
                 bool classes);

static void draw_bars(Ui *ui, const App *a, const Round *R, Rect r, int row) {
    const Stage *st = interp_stage(R->it, R->probs);
    const int V = st->shape.dim[st->shape.ndim - 1], T = st->shape.ndim > 1 ? st->shape.dim[0] : 1;
    row = row < 0 ? 0 : row >= T ? T - 1 : row;
    float *p = malloc(sizeof(float) * (size_t)V);
    // The row alone: when the budget let the output head go, its row is recomputed, not all of
    // it, once for the frames that show it (kept with the view's images, under their generation)
    const unsigned key[5] = {a->generation, (unsigned)R->probs, 0xDEC1, (unsigned)row, a->model_serial};
    bool fresh;
    HeatDerived *d = p && ui->heat ? heat_cache_derived(ui->heat, key, (size_t)V, &fresh) : NULL;
    const float *line = d && fresh ? interp_read_row(R->it, R->probs, 0, (size_t)row, d->data) : d ? d->data : NULL;
    if (line && line != d->data) memcpy(d->data, line, sizeof(float) * (size_t)V);  // read in place: the trace's
    if (!line) {  // out of memory
        if (d) heat_derived_drop(d);
        free(p);
        return;
    }
    const char *how = as_probs(st, line, V, p);
    char title[160], sub[STAGE_ID_MAX + 64];
    snprintf(title, sizeof title, "Next token after '%s'", row < R->n_ids ? decode_shown(a, (int)R->ids[row]) : "?");
    snprintf(sub, sizeof sub, "%s, row %d%s", st->id, row, how);
    bars(ui, a, r, p, V, title, sub, false);
    free(p);
}

// A class's name: the model's target vocabulary when it names exactly the classes, else k.
static const char *class_name(const App *a, int k, int V, char *buf, size_t n) {
    const Model *m = &a->session.model;
    if (m->has_vocab && m->tgt_vocab.n == V) return vocab_token(&m->tgt_vocab, k);
    snprintf(buf, n, "class %d", k);
    return buf;
}

static void bars(Ui *ui, const App *a, Rect r, const float *p, int V, const char *title, const char *sub_text,
                 bool classes) {
    int top[TOP_K] = {0};
    const int k = top_k(p, V, top, TOP_K);
    const Theme *t = ui->th;
    const int lhb = gfx_line_height(ui->g, FONT_BOLD, ui->px), lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    char sub[STAGE_ID_MAX + 160], names[TOP_K][32];
    const float full = bar_scale(p[top[0]]);
    snprintf(sub, sizeof sub, "   %s: top %d of %d   (full bar = %g)", sub_text, k, V, (double)full);
    const char *label[TOP_K];
    for (int i = 0; i < k; i++) label[i] = classes ? class_name(a, top[i], V, names[i], sizeof names[i]) : decode_shown(a, top[i]);
    int w = ui_text_fit(ui, FONT_BOLD, ui->px, t->text, r.x, r.y, title, r.w * 2 / 3);
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x + w, r.y + (lhb - lh) / 2, sub, r.w - w);
    const int avail = r.h - lhb - ui->pad / 2;
    int rh = avail / (k > 0 ? k : 1), n = k;
    if (rh > lh * 4 / 3) rh = lh * 4 / 3;
    if (rh < lh) rh = lh, n = avail / lh;
    int lw = 0;
    for (int i = 0; i < n; i++) {
        int tw = gfx_text_width(ui->g, FONT_BOLD, ui->small, label[i]);
        lw = tw > lw ? tw : lw;
    }
    lw = lw > r.w / 4 ? r.w / 4 : lw;
    const int pw = gfx_text_width(ui->g, FONT_BOLD, ui->small, "0.0000  \xe2\x86\x90 argmax") + ui->pad;
    int bw = r.w - lw - pw - ui->pad;
    bw = bw > ui->px * 40 ? ui->px * 40 : bw;
    for (int i = 0; i < n && bw > 8; i++)
        bar_row(ui, (Rect){r.x, r.y + lhb + ui->pad / 2 + i * rh, r.w, rh - 2}, label[i], p[top[i]], full, lw, bw, i == 0);
}

// ---- the last decoder layer's attention for this round ----

static int labels(const App *a, int stage, int axis, const char **out) {
    int n = stage_axis_labels(a, stage, axis, out, HEAT_MAX_LABELS);
    for (int i = 0; i < n; i++)
        if (!strcmp(out[i], " ")) out[i] = "\xe2\x90\xa3";
    return n;
}

static void attn_map(Ui *ui, const App *a, Rect r, int stage, const char *title, bool main_map) {
    const Interp *it = a->session.it;
    const Stage *st = interp_stage(it, stage);
    if (st->shape.ndim != 3) return;
    const int H = st->shape.dim[0], T = st->shape.dim[1], S = st->shape.dim[2];
    const int h = a->all_heads ? 0 : a->head < H ? a->head : H - 1;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    char cap[STAGE_ID_MAX + 64], sub[48];
    snprintf(cap, sizeof cap, "%s%s", main_map && a->all_heads ? "Press 1-9 to pick a head.   " : "", st->id);
    if (gfx_text_width(ui->g, FONT_SANS, ui->small, cap) > r.w) snprintf(cap, sizeof cap, "%s", st->id);
    ui_text_fit_tail(ui, FONT_SANS, ui->small, ui->th->muted, r.x, r.y, cap, r.w);  // the id's end names the map
    snprintf(sub, sizeof sub, "head %d of %d", h + 1, H);
    const char *rl[HEAT_MAX_LABELS], *cl[HEAT_MAX_LABELS];
    const float *out = interp_output(it, stage);
    HeatSpec hs = {.title = title, .subtitle = sub, .shape = st->shape, .kind = st->kind,
                   .data = out + (size_t)h * T * S, .rows = T, .cols = S, .range = out,
                   .mask = attention_mask_for(a, stage, h),
                   .range_n = (size_t)H * T * S, .row_labels = rl, .n_row_labels = labels(a, stage, 1, rl),
                   .col_labels = cl, .n_col_labels = labels(a, stage, 2, cl), .row_name = "query",
                   .col_name = "key", .key = {a->generation, (unsigned)stage, 0xDEC0, (unsigned)h},
                   .zoomable = main_map, .zoom = a->zoom};
    heat_draw(ui, &hs, (Rect){r.x, r.y + lh + 2, r.w, r.h - lh - 2});
}

// The last cross- and self-attention the decoder has run in this round (the last layer's, once
// the round is through), found by what they are, whatever the program calls them.
static void draw_maps(Ui *ui, const App *a, const Round *R, Rect r) {
    const RoundMaps m = round_maps(R);
    int cross = -1, self = -1, last_cross = -1, layers = 0, ran = 0;
    for (int k = 0; k < m.n; k++) {
        layers += m.cross[k], last_cross = m.cross[k] ? m.stage[k] : last_cross;
        if (!decode_seen(a, m.stage[k])) continue;
        ran += m.cross[k];
        if (m.cross[k]) cross = m.stage[k];
        else self = m.stage[k], cross = -1;  // a self-attention starts a layer: its cross comes after
    }
    if (cross < 0 && self < 0)
        for (int k = m.n - 1; k >= 0 && cross < 0; k--) cross = decode_seen(a, m.stage[k]) && m.cross[k] ? m.stage[k] : -1;
    const bool has_cross = cross >= 0, has_self = self >= 0;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    char msg[300];
    if (!has_self) {
        snprintf(msg, sizeof msg, R->before ? "The decoder's attention maps appear when it reaches them."
                                            : "The decoder has not reached its first attention yet: step forward.");
        note_box(ui, r, msg);
        return;
    }
    const char *self_title = attention_kind_names[has_self ? attention_kind(a, self) : ATT_SELF];
    if (layers == 0) {  // a decoder with no cross-attention: it never reads the encoder, or has none
        const char *why = program_decoder_only(&a->session.lesson.program)
                              ? "A decoder-only model: it has no encoder, so no cross-attention."
                              : "This decoder has no cross-attention: no map reads the encoder's memory.";
        const int h = note_box(ui, r, why) + ui->pad / 2;
        attn_map(ui, a, (Rect){r.x, r.y + h, r.w, r.h - h}, self, self_title, true);
        return;
    }
    if (cross != last_cross || !has_cross) {
        if (has_cross) snprintf(msg, sizeof msg, "Layer %d of %d so far: the last layer has not run yet in this pass.",
                                ran, layers);
        else snprintf(msg, sizeof msg, "Layer %d of %d so far: its cross-attention has not run yet.", ran + 1, layers);
        int h = note_box(ui, r, msg) + ui->pad / 2;
        r.y += h, r.h -= h;
    }
    if (!has_cross) {
        attn_map(ui, a, r, self, self_title, true);
        return;
    }
    const bool both = r.w >= ui->small * 52 && r.h > 8 * lh;
    int cw = r.w;
    if (both) {  // share the width as the columns do (source vs target), within limits
        const Shape *c = &interp_stage(R->it, cross)->shape;
        float f = (float)c->dim[2] / (c->dim[2] + c->dim[1]);
        cw = (int)(r.w * fminf(fmaxf(f, 0.55f), 0.7f));
    }
    attn_map(ui, a, (Rect){r.x, r.y, cw - (both ? ui->pad : 0), r.h}, cross, "Cross-attention", true);
    if (both) attn_map(ui, a, (Rect){r.x + cw + ui->pad, r.y, r.w - cw - ui->pad, r.h}, self, self_title, false);
}

// The alignment strip of a generating round: the last cross-attention of the round that has run.
static int align_strip(Ui *ui, const App *a, const Round *R, Rect r) {
    const RoundMaps m = round_maps(R);
    int stage = -1, layer = 0, layers = 0;
    for (int k = 0; k < m.n; k++) {
        if (!m.cross[k]) continue;
        layers++;
        if (decode_seen(a, m.stage[k])) stage = m.stage[k], layer = layers;
    }
    return stage < 0 ? 0 : view_align(ui, a, R, r, stage, layer, layers);
}

// ---- the whole view ----

static int header(Ui *ui, const App *a, const Round *R, Rect r) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), lhb = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    char in[600], head[96], rest[160];
    if (R->prompted) snprintf(in, sizeof in, "prompt: %s   (%d tokens, continued one token per round)", a->session.input_text, R->start);
    else snprintf(in, sizeof in, "input: %s", a->session.input_text);
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x, r.y, in, r.w);
    if (!R->greedy) {
        snprintf(head, sizeof head, "Teacher forcing: one pass over %d target tokens", R->n_ids);
        snprintf(rest, sizeof rest, "   each row predicts the next token");
    } else {
        const int N = decode_rounds_run(R->it), most = a->session.run.max_new;
        if (R->why != STOP_NONE) snprintf(head, sizeof head, "Round %d of %d (step.%d)", R->round + 1, N, R->round);
        else snprintf(head, sizeof head, "Round %d (step.%d)", R->round + 1, R->round);
        if (R->before) snprintf(rest, sizeof rest, "   the encoder runs first; then the decoder adds one token per round");
        else if (R->mode == DECODING_BEAM && R->why != STOP_NONE) snprintf(rest, sizeof rest, "   the search ends after %d rounds", N);
        else if (R->why == STOP_EOS) snprintf(rest, sizeof rest, "   stops when it produces %s", stop_text(R->why));
        else if (R->why == STOP_MAX_LEN || R->why == STOP_POSITIONS) snprintf(rest, sizeof rest, "   stops at %s (%d tokens)", stop_text(R->why), N);
        else snprintf(rest, sizeof rest, "   still decoding (at most %d tokens)", most);
    }
    int w = ui_text_fit(ui, FONT_BOLD, ui->px, t->text, r.x, r.y + lh + 2, head, r.w);
    w += ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x + w, r.y + lh + 2 + (lhb - lh) / 2, rest, r.w - w);
    static const char *const hint[DECODING_COUNT] = {"Z: sampling next", "Z: beam search next", "Z: greedy next"};
    const int hw = gfx_text_width(ui->g, FONT_BOLD, ui->small, hint[R->mode]);
    if (R->greedy && w + hw + ui->pad <= r.w)
        gfx_text(ui->g, FONT_BOLD, ui->small, t->accent, r.x + r.w - hw, r.y + lh + 2 + (lhb - lh) / 2, hint[R->mode]);
    const char *asks = a->session.model.generation;
    if (!*asks || !R->greedy) return lh + 2 + lhb + ui->pad / 2;
    char line[300];  // the folder's own decoding, which this pass follows only when asked (Z, --beam)
    snprintf(line, sizeof line, "The folder asks for %s. %s", asks,
             R->mode == DECODING_BEAM ? "This pass uses the beam chosen here." : "Z switches to beam search (run --beam K).");
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x, r.y + lh + 2 + lhb, line, r.w);
    return 2 * lh + 2 + lhb + ui->pad / 2;
}

// A program without a decoder generates nothing: its result is a published row of scores (a
// classifier's logits), shown as the classes' probabilities once it has run.
static void no_decoder(Ui *ui, const App *a, Rect r) {
    Rect body = ui_panel(ui, r, "Decoding: this program has no decoder");
    int n, k = -1;
    const ProgramOutput *o = interp_outputs(a->session.it, &n);
    for (int i = 0; i < n; i++)
        if (interp_stage(a->session.it, o[i].stage)->shape.ndim == 1 && (k < 0 || !strcmp(o[i].name, "logits")))
            k = o[i].stage;
    if (k < 0 || !decode_seen(a, k)) {
        note_box(ui, body, k < 0 ? "It writes no sequence and publishes no row of scores: see its outputs in the Stage view."
                             : "It writes no sequence: it scores classes. The scores appear here once they have run.");
        return;
    }
    const Stage *st = interp_stage(a->session.it, k);
    const int V = st->shape.dim[0];
    float *p = malloc(sizeof(float) * (size_t)V);
    if (!p) return;
    const char *how = as_probs(st, interp_output(a->session.it, k), V, p);
    char sub[STAGE_ID_MAX + 64];
    snprintf(sub, sizeof sub, "%s%s", st->id, how);
    bars(ui, a, (Rect){body.x, body.y, body.w, body.h / 2}, p, V, "The classes", sub, true);
    free(p);
}

// The next token's probabilities under greedy decoding and teacher forcing (row `row` of the
// stage the argmax reads), or a note until they have run.
static int greedy_bars(Ui *ui, const App *a, const Round *R, Rect r, int row) {
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), lhb = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    const int heat_min = 11 * lh;
    int bars_h = lhb + ui->pad / 2 + TOP_K * (lh * 4 / 3);
    if (bars_h > r.h - heat_min) bars_h = r.h - heat_min;
    if (bars_h < lhb + 4 * lh) bars_h = r.h / 2;
    Rect bars = {r.x, r.y, r.w, bars_h};
    if (R->probs_run) {
        draw_bars(ui, a, R, bars, row);
        return bars.h;
    }
    char msg[200];
    if (R->before) snprintf(msg, sizeof msg, "The encoder is still running. The decoder%s starts after it.",
                            R->greedy ? "'s first round (step.0)" : "");
    else if (!R->greedy) snprintf(msg, sizeof msg, "The decoder is still running. Step forward to reach the generator.");
    else snprintf(msg, sizeof msg, "Round %d: the decoder is still running. Step forward to reach the generator.", R->round + 1);
    return note_box(ui, bars, msg);
}

void view_decode(Ui *ui, const App *a, Rect r) {
    const bool greedy = a->session.run.tgt == NULL;
    if (!program_has_decoder(&a->session.lesson.program) && interp_n_done(a->session.it) > 0) {
        no_decoder(ui, a, r);
        return;
    }
    char title[200], mode[160];
    decoding_text(&a->session.run.choice, mode, sizeof mode);
    if (!greedy) snprintf(title, sizeof title, "Decoding: teacher forcing, one decoder pass over the given target");
    else if (a->session.run.choice.beam >= 2) snprintf(title, sizeof title, "Decoding: %s, a row of the batch per hypothesis", mode);
    else if (a->session.run.choice.temperature > 0) snprintf(title, sizeof title, "Decoding: %s", mode);
    else snprintf(title, sizeof title, "Decoding: %s, one decoder pass per new token", mode);
    Rect body = ui_panel(ui, r, title);
    if (interp_n_stages(a->session.it) == 0 || interp_n_done(a->session.it) == 0) return;
    const Round R = decode_round_at(a);
    gfx_clip(ui->g, body);
    int y = body.y + header(ui, a, &R, body);
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), heat_min = 11 * lh;
    const int h = chip_h(ui, ui->px), rows = body.h > 40 * lh ? 3 : 2;
    int sel = decode_last_row(&R);
    if (!greedy) y += forced_chips(ui, a, &R, (Rect){body.x, y, body.w, (rows - 1) * (2 * h + ui->pad * 2) + lh + ui->pad}, &sel) + ui->pad;
    else if (R.mode != DECODING_BEAM) y += greedy_chips(ui, a, &R, (Rect){body.x, y, body.w, rows * (h + ui->pad / 2)}) + ui->pad;
    if (greedy && R.mode != DECODING_BEAM && !R.before && body.y + body.h - y > 2 * heat_min) {
        const int used = align_strip(ui, a, &R, (Rect){body.x, y, body.w, body.y + body.h - y});
        y += used ? used + ui->pad : 0;
    }
    Rect rest = {body.x, y, body.w, body.y + body.h - y};
    if (rest.h < 2 * lh) {
        gfx_unclip(ui->g);
        return;
    }
    const bool chooser = !R.before && R.mode != DECODING_GREEDY;
    const int used = !chooser ? greedy_bars(ui, a, &R, rest, sel)
                   : R.mode == DECODING_SAMPLING ? view_sample(ui, a, &R, rest) : view_beam(ui, a, &R, rest);
    y += used + ui->pad;
    // Beam search's rows change places from round to round: its maps are the Attention view's.
    if (!chooser || (R.mode == DECODING_SAMPLING && body.y + body.h - y >= heat_min)) draw_maps(ui, a, &R, (Rect){body.x, y, body.w, body.y + body.h - y});
    gfx_unclip(ui->g);
}
