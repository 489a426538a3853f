// view_attention.c: every head of one attention block as a grid of heatmaps (queries as rows,
// keys as columns, both labelled with their tokens), or one head large with the others as
// thumbnails. Tabs step through the steps the program took (scores, scaling, mask, softmax:
// whichever it has, labelled by its own ops), each shown as it is. Any softmax over queries
// and keys is an attention map, with or without a head axis (roles.c).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "heat.h"

// The heads, queries and keys of an attention stage: [H, Tq, Tk], or [Tq, Tk] as one head.
static void att_dims(const Stage *st, int *H, int *T, int *S) {
    const int n = st->shape.ndim;
    *H = n == 3 ? st->shape.dim[0] : 1, *T = st->shape.dim[n - 2], *S = st->shape.dim[n - 1];
}

// "Decoder layer 1: cross-attention (target queries, source keys)", from what the program did:
// queries and keys from different inputs are cross-attention; a causal mask hides later keys.
// The block is named as the program names it when it is not the standard recipe's.
static void describe(const App *a, const Stage *st, char *s, size_t n) {
    static const char *const what[ATT_COUNT] = {"self-attention (every token sees every token)",
                                                 "masked self-attention (no query sees a later key)",
                                                 "cross-attention (target queries, source keys)"};
    const StageWhere *w = &st->where;
    char block[STAGE_ID_MAX];
    if (w->part == PART_ENCODER || w->part == PART_DECODER)
        snprintf(block, sizeof block, "%s%s", w->part == PART_ENCODER ? "Encoder" : "Decoder", w->has_layer ? " layer" : "");
    else
        snprintf(block, sizeof block, "%.*s", (int)(strrchr(st->id, '.') ? strrchr(st->id, '.') - st->id : 0), st->id);
    char layer[16] = "";
    if (w->has_layer && (w->part == PART_ENCODER || w->part == PART_DECODER)) snprintf(layer, sizeof layer, " %d", w->layer);
    snprintf(s, n, "%s%s%s%s", block, layer, block[0] ? ": " : "", what[attention_kind(a, st->att_weights)]);
}

// "8 query heads share 2 key/value heads (grouped-query attention): each key/value head serves
// 4 neighbouring query heads", or "" when every query head has its own (multi-head attention).
void attention_sharing(const Stage *st, char *s, size_t n) {
    int H, T, S;
    att_dims(st, &H, &T, &S);
    const int G = st->kv_heads;
    s[0] = '\0';
    if (G < 1 || G >= H) return;
    if (G == 1) {
        snprintf(s, n, "%d query heads share 1 key/value head (multi-query attention)", H);
        return;
    }
    if (st->kv_tiled)
        snprintf(s, n, "%d query heads share %d key/value heads (grouped-query attention): key/value head g serves "
                 "query heads g, g + %d, ...", H, G, G);
    else
        snprintf(s, n, "%d query heads share %d key/value heads (grouped-query attention): each key/value head "
                 "serves %d neighbouring query heads", H, G, H / G);
}

// A step's tab label, from the op the program used: "scores  q k^T", "scaled  / sqrt(d_model)".
static void step_label(const Stage *st, bool mask_off, char *label, size_t n) {
    const char *by = st->attr_text;
    switch (st->role) {
    case ROLE_SCORES: snprintf(label, n, "scores  q k^T"); break;
    case ROLE_SCALED:
        if (!strncmp(by, "1/", 2) || !strncmp(by, "1 /", 3)) snprintf(label, n, "scaled  / %s", strchr(by, '/') + 1);
        else snprintf(label, n, "scaled  x %s", by[0] ? by : "a number");
        break;
    case ROLE_MASKED:
        if (mask_off) snprintf(label, n, "masked  off (M)");
        else snprintf(label, n, "masked  %s", st->attr.has_pad && st->attr.causal ? "padding + causal"  // what it hides
                                              : st->attr.causal ? "causal" : st->attr.has_pad ? "padding" : "nothing");
        break;
    default: snprintf(label, n, "weights  softmax"); break;
    }
}

// Tabs for the steps the attention took; a click goes to that stage.
static int phase_tabs(Ui *ui, const App *a, const Stage *st, Rect r) {
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->small) + ui->pad / 2;
    const int cursor_role = interp_stage(a->session.it, a->cursor)->role;
    int x = r.x;
    for (int p = ROLE_SCORES; p <= ROLE_WEIGHTS; p++) {
        const int k = attention_step(a, st->att_weights, p);
        if (k < 0) continue;
        char label[80];
        step_label(interp_stage(a->session.it, k), interp_ablation(a->session.it)->no_mask, label, sizeof label);
        int w = gfx_text_width(ui->g, FONT_BOLD, ui->small, label) + ui->pad * 2;
        if (x + w > r.x + r.w) break;
        const bool on = cursor_role == p && interp_stage(a->session.it, a->cursor)->att_weights == st->att_weights;
        Rect tab = {x, r.y, w, lh};
        gfx_rect(ui->g, tab, on ? ui->th->accent : ui->th->panel_alt);
        gfx_text(ui->g, FONT_BOLD, ui->small, on ? ui->th->on_accent : ui->th->text, x + ui->pad, r.y + ui->pad / 4, label);
        ui_hot(ui, tab, CMD_GOTO_STAGE, k);
        x += w + 4;
    }
    return lh + ui->pad / 2;
}

typedef struct {
    const char *rows[HEAT_MAX_LABELS], *cols[HEAT_MAX_LABELS];
    int nr, nc;
} Labels;

// The spec of head h of attention stage k; its title is the stage's short name (a string
// inside the stage, so it outlives the spec).
static HeatSpec head_spec(const App *a, int k, int h, const Labels *L, char *sub, size_t n) {
    const Stage *st = interp_stage(a->session.it, k);
    const char *dot = strrchr(st->id, '.');
    const float *x = interp_output(a->session.it, k);
    int H, T, S;
    att_dims(st, &H, &T, &S);
    if (st->kv_heads >= 1 && st->kv_heads < H)
        snprintf(sub, n, "head %d of %d, K/V %d", h + 1, H, stage_kv_head(st, h) + 1);  // K/V head (the line above: of how many)
    else snprintf(sub, n, "head %d of %d", h + 1, H);
    const float *mask = attention_mask_for(a, k, h);  // masked keys shown masked, not as tiny weights
    return (HeatSpec){.title = dot ? dot + 1 : st->id, .subtitle = sub, .mask = mask, .shape = st->shape, .kind = st->kind,
                      .data = x + (size_t)h * T * S, .rows = T, .cols = S, .range = x,
                      .range_n = (size_t)shape_numel(&st->shape), .row_labels = L->rows,
                      .n_row_labels = L->nr, .col_labels = L->cols, .n_col_labels = L->nc,
                      .row_name = "query", .col_name = "key",
                      .key = {a->generation, (unsigned)k, 7, (unsigned)h}};
}

static void grid(Ui *ui, const App *a, int k, const Labels *L, Rect r) {
    int H, T, S;
    att_dims(interp_stage(a->session.it, k), &H, &T, &S);
    // The most columns that keep each map as large as possible.
    int best_cols = 1;
    float best = 0;
    for (int c = 1; c <= H; c++) {
        int rows = (H + c - 1) / c;
        float side = fminf((float)r.w / c, (float)r.h / rows);
        if (side > best) best = side, best_cols = c;
    }
    const int cols = best_cols, rows = (H + cols - 1) / cols;
    const int cw = r.w / cols, ch = r.h / rows;
    for (int h = 0; h < H; h++) {
        Rect cell = {r.x + (h % cols) * cw, r.y + (h / cols) * ch, cw - ui->pad, ch - ui->pad};
        char sub[64], title[24];
        HeatSpec s = head_spec(a, k, h, L, sub, sizeof sub);
        s.compact = cell.w < 12 * ui->px;  // small maps: cells only; the large view has the labels
        if (s.compact) {  // the head's number is what a small map's title must keep (not "weights  h...")
            snprintf(title, sizeof title, "head %d", h + 1);
            s.title = title, s.subtitle = NULL;
        }
        Rect drawn = heat_draw(ui, &s, cell);
        ui_hot(ui, drawn.w ? drawn : cell, CMD_HEAD, h);
    }
}

static void one_head(Ui *ui, const App *a, int k, const Labels *L, Rect r) {
    int H, T, S;
    att_dims(interp_stage(a->session.it, k), &H, &T, &S);
    const int h = a->head < H ? a->head : 0;
    const int strip = H > 1 ? r.h / 6 : 0;
    char sub[96], kv[48] = "";
    HeatSpec s = head_spec(a, k, h, L, sub, sizeof sub);
    const Stage *st = interp_stage(a->session.it, k);
    if (st->kv_heads >= 1 && st->kv_heads < H)
        snprintf(kv, sizeof kv, ", key/value head %d of %d", stage_kv_head(st, h) + 1, st->kv_heads);
    snprintf(sub, sizeof sub, "head %d of %d%s   (0: all heads)", h + 1, H, kv);
    s.zoomable = true, s.zoom = a->zoom;
    heat_draw(ui, &s, (Rect){r.x, r.y, r.w, r.h - strip});
    for (int j = 0; j < H && strip > 0; j++) {  // thumbnails of every head, to switch
        Rect cell = {r.x + j * (r.w / H), r.y + r.h - strip, r.w / H - ui->pad / 2, strip};
        char t[64];
        HeatSpec m = head_spec(a, k, j, L, t, sizeof t);
        m.compact = true, m.highlight = j == h;
        snprintf(t, sizeof t, "%d", j + 1);
        m.title = t, m.subtitle = NULL;
        Rect drawn = heat_draw(ui, &m, cell);
        ui_hot(ui, drawn.w ? drawn : cell, CMD_HEAD, j);
    }
}

// Before any attention map: where the first one is, named as its own view will name it (a
// decoder-only program has no encoder layer to step into), or that the program has none.
static void no_attention_yet(Ui *ui, const App *a, Rect in) {
    const Interp *it = a->session.it;
    char s[320], what[200];
    int first = -1;
    for (int i = a->cursor + 1; it && i < interp_n_stages(it) && first < 0; i++)
        if (interp_stage(it, i)->role == ROLE_SCORES || interp_stage(it, i)->role == ROLE_WEIGHTS) first = i;
    if (!it) snprintf(s, sizeof s, "No attention has run yet.");
    else if (first < 0) snprintf(s, sizeof s, "This pass has no attention map: no step of its program is an attention's.");
    else {
        describe(a, interp_stage(it, first), what, sizeof what);
        snprintf(s, sizeof s, "No attention has run yet. Step forward (Right, or PgDn) to stage %d, where the first "
                 "begins: %s.", first + 1, what);
    }
    ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, in, s);
}

void view_attention(Ui *ui, const App *a, Rect r) {
    char title[160];
    batch_title(a, "Attention", "every head", title, sizeof title);
    Rect in = ui_panel(ui, r, title);
    const int k = attention_stage_for(a, a->cursor);
    if (k < 0) return no_attention_yet(ui, a, in);
    const Stage *st = interp_stage(a->session.it, k);
    char s[200];
    describe(a, st, s, sizeof s);
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    ui_text_fit(ui, FONT_BOLD, ui->px, ui->th->text, in.x, in.y, s, in.w);
    in.y += lh + ui->pad / 2, in.h -= lh + ui->pad / 2;
    attention_sharing(st, s, sizeof s);
    if (s[0]) {  // fewer key/value heads than query heads: which serves which
        const int used = ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->muted, in, s) + ui->pad / 2;
        in.y += used, in.h -= used;
    }
    if (app_back_gradients(a)) return view_attention_back(ui, a, k, in);
    const int t = phase_tabs(ui, a, st, in);
    in.y += t, in.h -= t;
    Labels L;
    L.nr = stage_axis_labels(a, k, st->shape.ndim - 2, L.rows, HEAT_MAX_LABELS);
    L.nc = stage_axis_labels(a, k, st->shape.ndim - 1, L.cols, HEAT_MAX_LABELS);
    if (a->all_heads) grid(ui, a, k, &L, in);
    else one_head(ui, a, k, &L, in);
}
