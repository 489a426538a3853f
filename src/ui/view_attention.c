// view_attention.c: every head of one attention block as a grid of heatmaps (queries as rows,
// keys as columns, both labelled with their tokens), or one head large with the others as
// thumbnails. Tabs step through the block's scores, scaled scores, mask and softmax, each
// shown as it is.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "heat.h"

enum { MAX_LABELS = 512 };

static const char *const phases[] = {"scores", "scaled", "masked", "weights"};
static const char *const phase_titles[] = {"q k^T", "/ sqrt(d_k)", "mask", "softmax"};

// "Decoder layer 1: cross-attention (target queries, source keys)".
static void describe(const App *a, const Stage *st, char *s, size_t n) {
    StageWhere w = stage_where(st);
    const char *part = w.part == PART_ENCODER ? "Encoder" : w.part == PART_DECODER ? "Decoder" : "";
    const bool cross = !strcmp(w.sublayer, "cross_attn");
    char id[STAGE_ID_MAX + 8];
    snprintf(id, sizeof id, "%.*s.masked", (int)(strrchr(st->id, '.') - st->id), st->id);
    int k = interp_find(a->session.it, id);
    const bool causal = k >= 0 && interp_stage(a->session.it, k)->attr.causal;
    snprintf(s, n, "%s layer %d: %s", part, w.has_layer ? w.layer : 0,
             cross ? "cross-attention (target queries, source keys)"
             : causal ? "masked self-attention (no query sees a later key)"
                      : "self-attention (every token sees every token)");
}

// Tabs for the block's four steps; a click goes to that stage.
static int phase_tabs(Ui *ui, const App *a, const Stage *st, Rect r) {
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->small) + ui->pad / 2;
    const int prefix = (int)(strrchr(st->id, '.') - st->id);
    int x = r.x;
    for (int p = 0; p < 4; p++) {
        char id[STAGE_ID_MAX + 8], label[64];
        snprintf(id, sizeof id, "%.*s.%s", prefix, st->id, phases[p]);
        int k = interp_find(a->session.it, id);
        if (k < 0) continue;
        snprintf(label, sizeof label, "%s  %s", phases[p], phase_titles[p]);
        int w = gfx_text_width(ui->g, FONT_BOLD, ui->small, label) + ui->pad * 2;
        if (x + w > r.x + r.w) break;
        const bool on = !strcmp(stage_where(st).name, phases[p]);
        Rect tab = {x, r.y, w, lh};
        gfx_rect(ui->g, tab, on ? ui->th->accent : ui->th->panel_alt);
        gfx_text(ui->g, FONT_BOLD, ui->small, on ? ui->th->on_accent : ui->th->text, x + ui->pad, r.y + ui->pad / 4, label);
        ui_hot(ui, tab, CMD_GOTO_STAGE, k);
        x += w + 4;
    }
    return lh + ui->pad / 2;
}

typedef struct {
    const char *rows[MAX_LABELS], *cols[MAX_LABELS];
    int nr, nc;
} Labels;

// The spec of head h of attention stage k; its title is the stage's short name (a string
// inside the stage, so it outlives the spec).
static HeatSpec head_spec(const App *a, int k, int h, const Labels *L, char *sub, size_t n) {
    const Stage *st = interp_stage(a->session.it, k);
    const char *dot = strrchr(st->id, '.');
    const float *x = interp_output(a->session.it, k);
    const int H = st->shape.dim[0], T = st->shape.dim[1], S = st->shape.dim[2];
    snprintf(sub, n, "head %d of %d", h + 1, H);
    const float *mask = attention_mask_for(a, k, h);  // masked keys shown masked, not as tiny weights
    return (HeatSpec){.title = dot ? dot + 1 : st->id, .subtitle = sub, .mask = mask, .shape = st->shape, .kind = st->kind,
                      .data = x + (size_t)h * T * S, .rows = T, .cols = S, .range = x,
                      .range_n = (size_t)shape_numel(&st->shape), .row_labels = L->rows,
                      .n_row_labels = L->nr, .col_labels = L->cols, .n_col_labels = L->nc,
                      .row_name = "query", .col_name = "key",
                      .key = {a->generation, (unsigned)k, 7, (unsigned)h}};
}

static void grid(Ui *ui, const App *a, int k, const Labels *L, Rect r) {
    const int H = interp_stage(a->session.it, k)->shape.dim[0];
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
        char sub[32];
        HeatSpec s = head_spec(a, k, h, L, sub, sizeof sub);
        s.compact = cell.w < 12 * ui->px;  // small maps: cells only; the large view has the labels
        Rect drawn = heat_draw(ui, &s, cell);
        ui_hot(ui, drawn.w ? drawn : cell, CMD_SELECT_HEAD, h);
    }
}

static void one_head(Ui *ui, const App *a, int k, const Labels *L, Rect r) {
    const int H = interp_stage(a->session.it, k)->shape.dim[0], h = a->head < H ? a->head : 0;
    const int strip = H > 1 ? r.h / 6 : 0;
    char sub[64];
    HeatSpec s = head_spec(a, k, h, L, sub, sizeof sub);
    snprintf(sub, sizeof sub, "head %d of %d   (0: all heads)", h + 1, H);
    s.zoomable = true, s.zoom = a->zoom;
    heat_draw(ui, &s, (Rect){r.x, r.y, r.w, r.h - strip});
    for (int j = 0; j < H && strip > 0; j++) {  // thumbnails of every head, to switch
        Rect cell = {r.x + j * (r.w / H), r.y + r.h - strip, r.w / H - ui->pad / 2, strip};
        char t[32];
        HeatSpec m = head_spec(a, k, j, L, t, sizeof t);
        m.compact = true, m.highlight = j == h;
        snprintf(t, sizeof t, "%d", j + 1);
        m.title = t, m.subtitle = NULL;
        Rect drawn = heat_draw(ui, &m, cell);
        ui_hot(ui, drawn.w ? drawn : cell, CMD_SELECT_HEAD, j);
    }
}

void view_attention(Ui *ui, const App *a, Rect r) {
    Rect in = ui_panel(ui, r, "Attention: every head");
    const int k = attention_stage_for(a, a->cursor);
    if (k < 0) {
        ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, in,
                     "No attention has run yet. Step forward (Right, or PgDn) into the first encoder layer.");
        return;
    }
    const Stage *st = interp_stage(a->session.it, k);
    char s[200];
    describe(a, st, s, sizeof s);
    const int lh = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    ui_text_fit(ui, FONT_BOLD, ui->px, ui->th->text, in.x, in.y, s, in.w);
    in.y += lh + ui->pad / 2, in.h -= lh + ui->pad / 2;
    const int t = phase_tabs(ui, a, st, in);
    in.y += t, in.h -= t;
    Labels L;
    L.nr = stage_axis_labels(a, k, 1, L.rows, MAX_LABELS);
    L.nc = stage_axis_labels(a, k, 2, L.cols, MAX_LABELS);
    if (a->all_heads) grid(ui, a, k, &L, in);
    else one_head(ui, a, k, &L, in);
}
