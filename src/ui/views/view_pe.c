// view_pe.c: the Positions view: the sinusoidal positional-encoding explorer.
//
// It reads the explorer's own small trace (pe.c): stage "pe", the table [positions x d_model],
// and stage "similarity", PE PE^T [positions x positions]. On screen: the settings with [-] [+]
// buttons, the table as a heatmap with the chosen position and dimension marked, the curves of
// one sin/cos pair (and a slow dimension) over the positions, the similarity heatmap whose
// bands along the diagonal show that it depends on the distance between positions, and the
// numbers of the chosen position with the check that its squared length is d/2.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "heat.h"
#include "kernels_llm.h"

#define TWO_PI 6.283185307179586

// The model's own learned table is on screen (GPT-2's wpe), not the formula's.
static bool learned(const App *a) { return a->pe.source == PE_SOURCE_LEARNED && a->pe.learned[0]; }
// Marian's stored table is on screen beside the formula's.
static bool halves(const App *a) { return a->pe.source == PE_SOURCE_HALVES && a->pe.learned[0]; }

typedef struct {
    const float *pe, *sim;  // [P, D] and [P, P]
    const float *stored;    // [P, D] Marian's table as the model stores it, or NULL
    int P, D;
    const Stage *pe_stage, *sim_stage, *stored_stage;
} PeTrace;

static bool pe_trace(const App *a, PeTrace *t) {
    const Interp *it = a->pe.it;
    if (!it) return false;
    int i = interp_find(it, "pe"), j = interp_find(it, "similarity");
    if (i < 0 || j < 0 || i >= interp_n_done(it) || j >= interp_n_done(it)) return false;
    t->pe_stage = interp_stage(it, i), t->sim_stage = interp_stage(it, j);
    t->pe = interp_output(it, i), t->sim = interp_output(it, j);
    t->P = t->pe_stage->shape.dim[0], t->D = t->pe_stage->shape.dim[1];
    const int k = interp_find(it, "stored");
    t->stored_stage = k >= 0 && k < interp_n_done(it) ? interp_stage(it, k) : NULL;
    t->stored = t->stored_stage ? interp_output(it, k) : NULL;
    return t->pe && t->sim && t->P > 0 && t->D > 0;
}

static int lh_of(Ui *ui, FontFace f, int px) { return gfx_line_height(ui->g, f, px); }

// ---- settings ----

static void param_value(const PeExplorer *pe, int p, char *buf, size_t n) {
    const int v[PE_PARAM_COUNT] = {pe->d_model, pe->positions, pe->base, pe->dim, pe->position};
    snprintf(buf, n, "%d", v[p]);
}

// The width the settings column wants: name, value, two buttons.
static int settings_width(Ui *ui) {
    int name = 0;
    for (int p = 0; p < PE_PARAM_COUNT; p++) {
        int w = gfx_text_width(ui->g, FONT_SANS, ui->px, pe_param_names[p]);
        name = w > name ? w : name;
    }
    const int lh = lh_of(ui, FONT_SANS, ui->px);
    return name + gfx_text_width(ui->g, FONT_BOLD, ui->px, "100000") + 2 * lh + 4 * ui->pad;
}

static void button(Ui *ui, Rect b, const char *label, int param) {
    const Theme *t = ui->th;
    gfx_rect(ui->g, b, t->panel_alt);
    gfx_frame(ui->g, b, t->line, t->border);
    int w = gfx_text_width(ui->g, FONT_BOLD, ui->px, label);
    gfx_text(ui->g, FONT_BOLD, ui->px, t->text, b.x + (b.w - w) / 2,
             b.y + (b.h - lh_of(ui, FONT_BOLD, ui->px)) / 2, label);
    ui_hot(ui, b, CMD_PE_PARAM, param);
}

static void settings(Ui *ui, const App *a, Rect r) {
    const Theme *t = ui->th;
    const int lh = lh_of(ui, FONT_SANS, ui->px), slh = lh_of(ui, FONT_SANS, ui->small);
    const int row_h = lh + ui->pad / 2;
    int y = r.y;
    ui_text_fit(ui, FONT_BOLD, ui->px, t->text, r.x, y, "Settings", r.w);
    y += lh + ui->pad / 2;
    const int bx = r.x + r.w - 2 * lh - ui->pad / 2;  // the [-] button; [+] follows
    const int vx = bx - ui->pad - gfx_text_width(ui->g, FONT_BOLD, ui->px, "100000");
    for (int p = 0; p < PE_PARAM_COUNT && y + row_h <= r.y + r.h; p++, y += row_h) {
        if ((learned(a) || halves(a)) && p != PE_DIM && p != PE_POSITION) {  // the table's own size: shown, not set
            char v[64];
            snprintf(v, sizeof v, "%s %d", p == PE_D_MODEL ? "width" : p == PE_POSITIONS ? "positions" : "", p == PE_D_MODEL
                     ? a->pe.d_model : a->pe.positions);
            if (p != PE_BASE) ui_text_fit(ui, FONT_SANS, ui->px, t->muted, r.x + ui->pad / 2, y + 1, v, r.w);
            if (p == PE_BASE) y -= row_h;
            continue;
        }
        const bool on = a->pe.selected == (PeParam)p;
        Rect row = {r.x, y, r.w, row_h - 2};
        if (on) gfx_rect(ui->g, row, t->lit);
        const Rgba fg = on ? t->lit_text : t->text;
        ui_text_fit(ui, on ? FONT_BOLD : FONT_SANS, ui->px, fg, r.x + ui->pad / 2, y + 1, pe_param_names[p],
                    vx - r.x - ui->pad);
        char v[24];
        param_value(&a->pe, p, v, sizeof v);
        ui_text_fit(ui, FONT_BOLD, ui->px, fg, vx, y + 1, v, bx - vx - ui->pad / 2);
        button(ui, (Rect){bx, y + 1, lh - 2, lh - 2}, "\xe2\x88\x92", p * 2);  // −
        button(ui, (Rect){bx + lh, y + 1, lh - 2, lh - 2}, "+", p * 2 + 1);
    }
    y += ui->pad / 2;
    if (y + slh <= r.y + r.h)
        ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x, y,
                    "Up/Down pick \xc2\xb7 [ ] change", r.w);
    y += slh + ui->pad;
    static const char *const formula[] = {"PE[p, 2i] = sin(p \xc2\xb7 \xcf\x89\xe1\xb5\xa2)",
                                          "PE[p, 2i+1] = cos(p \xc2\xb7 \xcf\x89\xe1\xb5\xa2)",
                                          "\xcf\x89\xe1\xb5\xa2 = 1 / base^(2i/d)"};
    if (learned(a)) {
        ui_text_wrap(ui, FONT_SANS, ui->small, t->muted, (Rect){r.x, y, r.w, r.y + r.h - y},
                     "No formula: each row was learned in training.");
        return;
    }
    for (int k = 0; k < 3 && y + slh <= r.y + r.h; k++, y += slh)
        ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x, y, formula[k], r.w);
}

// ---- heatmaps ----

// Rows and columns heat_draw shows for a zoom box (the same rule as heat.c).
static void visible_range(ZoomBox z, int n, bool cols, int *lo, int *hi) {
    float a0 = cols ? z.x0 : z.y0, a1 = cols ? z.x1 : z.y1;
    *lo = (int)floorf(a0 * n), *hi = (int)ceilf(a1 * n);
    if (*hi <= *lo) *hi = *lo + 1;
    if (*hi > n) *hi = n, *lo = *lo < n - 1 ? *lo : n - 1;
}

// A frame just outside the marked cells, so that they stay visible; thinner for tiny cells.
static void mark(Ui *ui, Rect m, Rect clip, int cell) {
    const int t = cell >= 4 ? 2 : 1;
    gfx_clip(ui->g, clip);
    if (cell >= 8) gfx_frame(ui->g, rect_inset(m, -t - 1), 1, ui->th->text);
    gfx_frame(ui->g, rect_inset(m, -t), t, ui->th->lit);
    gfx_unclip(ui->g);
}

// Frames row `row` (and column `col` if >= 0) of a heatmap drawn into `cells`.
static void mark_cells(Ui *ui, Rect cells, ZoomBox z, int rows, int cols, int row, int col) {
    if (cells.w <= 0 || cells.h <= 0) return;
    int r0, r1, c0, c1;
    visible_range(z, rows, false, &r0, &r1);
    visible_range(z, cols, true, &c0, &c1);
    const Rect clip = rect_inset(cells, -4);
    if (row >= r0 && row < r1) {
        int y0 = cells.y + (int)((long)(row - r0) * cells.h / (r1 - r0));
        int y1 = cells.y + (int)((long)(row - r0 + 1) * cells.h / (r1 - r0));
        mark(ui, (Rect){cells.x, y0, cells.w, y1 - y0 > 1 ? y1 - y0 : 1}, clip, y1 - y0);
    }
    if (col >= c0 && col < c1) {
        int x0 = cells.x + (int)((long)(col - c0) * cells.w / (c1 - c0));
        int x1 = cells.x + (int)((long)(col - c0 + 1) * cells.w / (c1 - c0));
        mark(ui, (Rect){x0, cells.y, x1 - x0 > 1 ? x1 - x0 : 1, cells.h}, clip, x1 - x0);
    }
}

// The images are keyed by the model opened and the settings as well as the explorer's own count
// of rebuilds, which starts again with every lesson: a lesson's first picture is never the last
// lesson's, cached under the same count.
static void table_heat(Ui *ui, const App *a, const PeTrace *t, Rect r) {
    HeatSpec h = {.title = learned(a) ? a->pe.learned : "pe", .subtitle = learned(a) ? "learned, one row a position" : "positional_table",
                  .shape = t->pe_stage->shape,
                  .kind = t->pe_stage->kind, .data = t->pe, .rows = t->P, .cols = t->D,
                  .row_name = "position", .col_name = "dimension",
                  .key = {0x50450001u, a->model_serial, (unsigned)(t->P << 16 | t->D), a->pe.generation, (unsigned)a->pe.base},
                  .zoomable = true, .zoom = a->zoom};
    Rect cells = heat_draw(ui, &h, r);
    mark_cells(ui, cells, a->zoom, t->P, t->D, a->pe.position, a->pe.dim);
}

// Marian's table as stored, and the check that it is the paper's with its columns reordered:
// column j < d/2 is the paper's 2j (sin), column d/2 + j the paper's 2j + 1 (cos).
static void stored_heat(Ui *ui, const App *a, const PeTrace *t, Rect r) {
    const int H = t->D / 2;
    double worst = 0;
    for (int p = 0; p < t->P; p++)
        for (int j = 0; j < t->D; j++) {
            const int paper = j < H ? 2 * j : 2 * (j - H) + 1;
            const double d = fabs((double)t->stored[(size_t)p * t->D + j] - t->pe[(size_t)p * t->D + paper]);
            worst = d > worst ? d : worst;
        }
    char sub[160];
    snprintf(sub, sizeof sub, "PE's columns reordered, max diff %.1e", worst);
    HeatSpec h = {.title = a->pe.learned, .subtitle = sub, .shape = t->stored_stage->shape, .kind = t->stored_stage->kind,
                  .data = t->stored, .rows = t->P, .cols = t->D, .row_name = "position", .col_name = "dimension",
                  .key = {0x50450003u, a->model_serial, (unsigned)(t->P << 16 | t->D), a->pe.generation, (unsigned)a->pe.base}};
    Rect cells = heat_draw(ui, &h, r);
    const int col = a->pe.dim % 2 == 0 ? a->pe.dim / 2 : H + a->pe.dim / 2;  // where the dimension on the left went
    mark_cells(ui, cells, (ZoomBox){0, 0, 1, 1}, t->P, t->D, a->pe.position, col);
}

static void similarity_heat(Ui *ui, const App *a, const PeTrace *t, Rect r) {
    HeatSpec h = {.title = "similarity", .subtitle = learned(a) ? "row \xc2\xb7 row\xe1\xb5\x80" : "PE \xc2\xb7 PE\xe1\xb5\x80",
                  .shape = t->sim_stage->shape, .kind = t->sim_stage->kind, .data = t->sim,
                  .rows = t->P, .cols = t->P, .row_name = "position", .col_name = "position",
                  .key = {0x50450002u, a->model_serial, (unsigned)(t->P << 16 | t->D), a->pe.generation, (unsigned)a->pe.base}};
    Rect cells = heat_draw(ui, &h, r);
    mark_cells(ui, cells, (ZoomBox){0, 0, 1, 1}, t->P, t->P, a->pe.position, -1);
}

// ---- RoPE: a turned q . k depends only on how far apart the two positions are ----

enum { ROPE_MAX_P = 48 };

// The first two rope stages (q's, then k's) of the layer on screen, or of the first layer.
static bool rope_pair_stages(const App *a, int *q, int *k) {
    const Interp *it = a->session.it;
    const int cursor = a->cursor < interp_n_done(it) ? a->cursor : interp_n_done(it) - 1;
    const int layer = cursor >= 0 && interp_stage(it, cursor)->where.has_layer ? interp_stage(it, cursor)->where.layer : 0;
    *q = *k = -1;
    for (int pass = 0; pass < 2 && *k < 0; pass++)  // the layer on screen, else any layer
        for (int i = 0; i < interp_n_done(it) && *k < 0; i++) {
            const Stage *st = interp_stage(it, i);
            if (st->op != OP_ROPE || st->in[0].kind != REF_STAGE || (pass == 0 && st->where.layer != layer)) continue;
            if (*q < 0) *q = i;
            else *k = i;
        }
    return *k >= 0;
}

// M[p][p'] = R(p) q . R(p') k for the model's own q (last position) and k (first position) of
// head h before they were turned, with one pairing or the other.
static void rope_dots(float *m, int P, const float *q, const float *k, int D, float theta, bool adjacent) {
    static float rq[ROPE_MAX_P][512], rk[ROPE_MAX_P][512];  // scratch for one draw (192 KB: not on the stack)
    for (int p = 0; p < P; p++) rope_forward(rq[p], q, 1, 1, D, p, theta, adjacent), rope_forward(rk[p], k, 1, 1, D, p, theta, adjacent);
    for (int p = 0; p < P; p++)
        for (int r = 0; r < P; r++) {
            double s = 0;
            for (int c = 0; c < D; c++) s += (double)rq[p][c] * rk[r][c];
            m[p * P + r] = (float)s;
        }
}

static void rope_panel(Ui *ui, const App *a, Rect r) {
    int qs, ks;
    if (!rope_pair_stages(a, &qs, &ks)) {
        ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->muted, r, "Step to the first attention: its q and k are turned there.");
        return;
    }
    const Interp *it = a->session.it;
    const Stage *qst = interp_stage(it, qs), *kst = interp_stage(it, ks);
    const Shape *qs_shape = &qst->in_shape[0], *ks_shape = &kst->in_shape[0];  // [H, T, D] before the turn
    const int H = qs_shape->dim[0], T = qs_shape->dim[1], D = qs_shape->dim[2];
    const int h = a->head < H ? a->head : 0, kh = h * ks_shape->dim[0] / H;  // the key head it reads (groups)
    if (D > 512) return;
    const float *q = interp_input(it, qs, 0) + ((size_t)h * T + (T - 1)) * D;
    const float *k = interp_input(it, ks, 0) + ((size_t)kh * ks_shape->dim[1]) * D;
    const int P = a->pe.positions < ROPE_MAX_P ? a->pe.positions : ROPE_MAX_P;
    static float m[2][ROPE_MAX_P * ROPE_MAX_P];  // drawn at once; only the frame's own numbers
    char head[200];
    snprintf(head, sizeof head, "R(p) q \xc2\xb7 R(p') k: this model's q and k (head %d, layer %d), the same along each "
             "diagonal: only p - p' counts", h + 1, qst->where.layer);
    const int hh = ui_text_wrap(ui, FONT_BOLD, ui->small, ui->th->text, (Rect){r.x, r.y, r.w, r.h / 3}, head);
    r.y += hh + 2, r.h -= hh + 2;
    const int gap = ui->pad, w = (r.w - gap) / 2;
    for (int adj = 0; adj < 2; adj++) {
        rope_dots(m[adj], P, q, k, D, qst->attr.theta, adj == 1);
        char title[64];
        snprintf(title, sizeof title, "%s%s", adj ? "pairs 2i, 2i+1" : "pairs i, i+d/2",
                 (adj == 1) == qst->attr.adjacent ? " (its own)" : "");
        const char *subtitle = NULL;
        HeatSpec hs = {.title = title, .subtitle = subtitle, .shape = shape2(P, P), .kind = TK_VALUES, .data = m[adj],
                       .rows = P, .cols = P, .row_name = "q position", .col_name = "k position",
                       .key = {0x50450003u + (unsigned)adj, a->model_serial, (unsigned)(qs << 8 | h), a->generation,
                               (unsigned)P}};
        heat_draw(ui, &hs, (Rect){r.x + adj * (w + gap), r.y, w, r.h});
    }
}

// ---- curves ----

typedef struct {
    int dim;
    Rgba colour;
} Curve;

static double wavelength(const App *a, int D, int dim) {
    return TWO_PI * pow((double)a->pe.base, (double)(dim & ~1) / D);
}

static void legend_text(const App *a, int D, int dim, char *buf, size_t n) {
    if (learned(a)) {
        snprintf(buf, n, "dim %d", dim);
        return;
    }
    double w = wavelength(a, D, dim);
    char ws[32];
    if (w < 100) snprintf(ws, sizeof ws, "%.2f", w);
    else if (w < 1e6) snprintf(ws, sizeof ws, "%.0f", w);
    else snprintf(ws, sizeof ws, "%.3g", w);
    snprintf(buf, n, "dim %d %s  \xce\xbb = %s", dim, dim % 2 ? "cos" : "sin", ws);
}

// The legend: one row if it fits, else a line per curve. Returns the height used.
static int legend(Ui *ui, const App *a, int D, const Curve *c, int n, Rect r) {
    const int slh = lh_of(ui, FONT_SANS, ui->small), sw = ui->small;
    char s[3][64];
    int total = 0;
    for (int i = 0; i < n; i++) {
        legend_text(a, D, c[i].dim, s[i], sizeof s[i]);
        total += sw + 4 + gfx_text_width(ui->g, FONT_BOLD, ui->small, s[i]) + ui->pad * 2;
    }
    const bool one_row = total <= r.w;
    int x = r.x, y = r.y;
    for (int i = 0; i < n; i++) {
        gfx_rect(ui->g, (Rect){x, y + slh / 2 - 2, sw, 4}, c[i].colour);
        const FontFace f = c[i].dim == a->pe.dim ? FONT_BOLD : FONT_SANS;
        int w = ui_text_fit(ui, f, ui->small, ui->th->text, x + sw + 4, y, s[i], r.x + r.w - x - sw - 4);
        if (one_row) x += sw + 4 + w + ui->pad * 2;
        else y += slh;
    }
    return one_row ? slh : n * slh;
}

static int plot_y(Rect p, float v) { return p.y + (int)lroundf((1.15f - v) / 2.3f * (float)(p.h - 1)); }
static int plot_x(Rect p, int i, int P) { return p.x + (int)((long)i * (p.w - 1) / (P > 1 ? P - 1 : 1)); }

static void x_ticks(Ui *ui, Rect p, int P, int y) {
    static const int steps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500};
    char s[16];
    snprintf(s, sizeof s, "%d", P - 1);
    const int lw = gfx_text_width(ui->g, FONT_SANS, ui->small, s) + ui->pad * 2;
    int step = 500;
    for (int k = 0; k < 9; k++)
        if ((long)(P - 1) * lw / steps[k] <= p.w) {
            step = steps[k];
            break;
        }
    for (int i = 0; i < P; i += step) {
        snprintf(s, sizeof s, "%d", i);
        int x = plot_x(p, i, P), w = gfx_text_width(ui->g, FONT_SANS, ui->small, s);
        gfx_rect(ui->g, (Rect){x, p.y + p.h, 1, 4}, ui->th->border);
        if (x - w / 2 >= p.x - w && x + w / 2 <= p.x + p.w + w / 2)
            gfx_text(ui->g, FONT_SANS, ui->small, ui->th->muted, x - w / 2, y, s);
    }
}

// The labels of the plot's lines at +1, 0 and -1, which stand for +top, 0 and -top: "+1" and
// "\u22121" (U+2212, the minus sign) for the sinusoids' own scale.
static void line_names(float top, char names[3][24]) {
    snprintf(names[0], 24, "+%.3g", (double)top);
    snprintf(names[1], 24, "0");
    snprintf(names[2], 24, "\u2212%.3g", (double)top);
}

// The plot's frame, its lines at +1, 0 and -1 labelled `names` (line_names), and its ticks.
static void axes(Ui *ui, Rect p, int P, int label_w, char names[3][24]) {
    const Theme *t = ui->th;
    const int slh = lh_of(ui, FONT_SANS, ui->small);
    static const float lines[] = {1.0f, 0.0f, -1.0f};
    for (int k = 0; k < 3; k++) {
        int y = plot_y(p, lines[k]);
        gfx_rect(ui->g, (Rect){p.x, y, p.w, 1}, k == 1 ? t->border : t->grid);
        int w = gfx_text_width(ui->g, FONT_SANS, ui->small, names[k]);
        gfx_text(ui->g, FONT_SANS, ui->small, t->muted, p.x - 6 - (w < label_w ? w : label_w), y - slh / 2, names[k]);
    }
    gfx_rect(ui->g, (Rect){p.x, p.y, 1, p.h}, t->border);
    gfx_rect(ui->g, (Rect){p.x, p.y + p.h - 1, p.w, 1}, t->border);
    x_ticks(ui, p, P, p.y + p.h + 4);
}

// Column dim over the positions, each value times `scale` (the plot's range is -1 to 1).
static void polyline(Ui *ui, Rect p, const PeTrace *t, int dim, float scale, Rgba c, int thick) {
    int px = plot_x(p, 0, t->P), py = plot_y(p, scale * t->pe[dim]);
    for (int i = 1; i < t->P; i++) {
        int x = plot_x(p, i, t->P), y = plot_y(p, scale * t->pe[(size_t)i * t->D + dim]);
        for (int k = -thick / 2; k < thick - thick / 2; k++) {  // widened both ways
            gfx_line(ui->g, px, py + k, x, y + k, c);
            gfx_line(ui->g, px + k, py, x + k, y, c);
        }
        px = x, py = y;
    }
}

static void curves(Ui *ui, const App *a, const PeTrace *t, Rect r) {
    const Theme *th = ui->th;
    const int lh = lh_of(ui, FONT_BOLD, ui->px), slh = lh_of(ui, FONT_SANS, ui->small);
    // A learned table's columns, scaled so the largest |value| of the three reaches the +-1 lines.
    char title[STAGE_ID_MAX + 48];
    snprintf(title, sizeof title, "%s[:, dim] over the positions", learned(a) ? a->pe.learned : "PE");
    ui_text_fit(ui, FONT_BOLD, ui->px, th->text, r.x, r.y, title, r.w);
    const int pair = a->pe.dim & ~1;
    Curve c[3] = {{pair, cmap_at(CMAP_DIVERGING, 0.04f)}, {pair + 1, cmap_at(CMAP_DIVERGING, 0.96f)},
                  {t->D - 2 != pair ? t->D - 2 : 0, cmap_at(CMAP_SEQUENTIAL, 0.55f)}};
    const int n = t->D > 2 ? 3 : 2;
    float big = 0.0f;
    for (int i = 0; learned(a) && i < n; i++)
        for (int q = 0; q < t->P; q++) big = fmaxf(big, fabsf(t->pe[(size_t)q * t->D + c[i].dim]));
    const float scale = learned(a) && big > 0.0f ? 1.0f / big : 1.0f;
    const int leg = legend(ui, a, t->D, c, n, (Rect){r.x, r.y + lh + 2, r.w, 3 * slh});
    char names[3][24];  // the lines stand for +-1 / scale: the largest |value| of a learned table's three
    line_names(1.0f / scale, names);
    const int w_top = gfx_text_width(ui->g, FONT_SANS, ui->small, names[0]);
    const int w_bottom = gfx_text_width(ui->g, FONT_SANS, ui->small, names[2]);
    const int label_w = w_top > w_bottom ? w_top : w_bottom;
    Rect p = {r.x + label_w + 8, r.y + lh + 2 + leg + slh / 2, 0, 0};
    p.w = r.x + r.w - p.x - ui->pad;
    p.h = r.y + r.h - p.y - slh - 6;
    if (p.w < 20 || p.h < 20) return;
    axes(ui, p, t->P, label_w, names);
    const int thick = ui->px / 7 < 1 ? 1 : ui->px / 7 > 7 ? 7 : ui->px / 7;
    gfx_clip(ui->g, rect_inset(p, -2));
    if (a->pe.position < t->P) {
        int x = plot_x(p, a->pe.position, t->P);
        gfx_rect(ui->g, (Rect){x - thick, p.y, 2 * thick + 1, p.h}, th->lit);
    }
    for (int i = n - 1; i >= 0; i--) polyline(ui, p, t, c[i].dim, scale, c[i].colour, thick);
    gfx_unclip(ui->g);
}

// ---- the numbers of the chosen position ----

// Draws "j value" chips in lines from (x, r.y) to the right edge, and "… +N" for the rest.
static void chips(Ui *ui, const PeTrace *t, int pos, Rect r, int x, int n_lines) {
    const Theme *th = ui->th;
    const int lh = lh_of(ui, FONT_MONO, ui->px), slh = lh_of(ui, FONT_SANS, ui->small);
    const int reserve = gfx_text_width(ui->g, FONT_SANS, ui->small, "\xe2\x80\xa6 +0000") + ui->pad;
    const float *row = t->pe + (size_t)pos * t->D;
    int y = r.y, line = 0, j = 0;
    char idx[16], val[24];
    for (; j < t->D; j++) {
        snprintf(idx, sizeof idx, "%d", j);
        snprintf(val, sizeof val, "%.4f", (double)row[j]);
        const int iw = gfx_text_width(ui->g, FONT_SANS, ui->small, idx);
        const int w = iw + 3 + gfx_text_width(ui->g, FONT_MONO, ui->px, val);
        int need = w + (line == n_lines - 1 && j + 1 < t->D ? reserve : 0);
        if (x + need > r.x + r.w) {
            if (++line >= n_lines) break;
            x = r.x, y += lh;
            need = w + (line == n_lines - 1 && j + 1 < t->D ? reserve : 0);
            if (x + need > r.x + r.w) break;
        }
        gfx_text(ui->g, FONT_SANS, ui->small, th->muted, x, y + (lh - slh), idx);
        gfx_text(ui->g, FONT_MONO, ui->px, th->text, x + iw + 3, y, val);
        x += w + ui->pad * 2;
    }
    if (j < t->D) {
        char more[32];
        snprintf(more, sizeof more, "\xe2\x80\xa6 +%d", t->D - j);
        ui_text_fit(ui, FONT_SANS, ui->small, th->muted, x, y + (lh - slh), more, r.x + r.w - x);
    }
}

static void numbers(Ui *ui, const App *a, const PeTrace *t, Rect r, int n_lines) {
    const Theme *th = ui->th;
    const int lh = lh_of(ui, FONT_MONO, ui->px);
    const int pos = a->pe.position < t->P ? a->pe.position : t->P - 1;
    char head[32];
    snprintf(head, sizeof head, "position %d:", pos);
    int hw = gfx_text(ui->g, FONT_BOLD, ui->px, th->text, r.x, r.y, head);
    chips(ui, t, pos, (Rect){r.x, r.y, r.w, n_lines * lh}, r.x + hw + ui->pad * 2, n_lines);
    double sum = 0;
    for (int j = 0; j < t->D; j++) sum += (double)t->pe[(size_t)pos * t->D + j] * t->pe[(size_t)pos * t->D + j];
    const bool ok = fabs(sum - t->D / 2.0) < 1e-3 * t->D;
    char check[200];
    if (learned(a))
        snprintf(check, sizeof check, "\xe2\x80\x96row %d\xe2\x80\x96\xc2\xb2 = %.4f  (learned: no length is fixed)", pos, sum);
    else snprintf(check, sizeof check,
             "\xe2\x80\x96PE[%d]\xe2\x80\x96\xc2\xb2 = d/2 = %d:  \xce\xa3 PE[%d, j]\xc2\xb2 = %.4f %s  "
             "(every sin\xc2\xb2 + cos\xc2\xb2 pair adds 1)",
             pos, t->D / 2, pos, sum, ok ? "\xe2\x9c\x93" : "\xe2\x9c\x97");
    ui_text_fit(ui, FONT_SANS, ui->small, th->muted, r.x, r.y + n_lines * lh + 2, check, r.w);
}

// ---- layout ----

// The height heat_draw needs for a [rows x cols] map (no column tokens) drawn w pixels wide.
static int heat_height(Ui *ui, int rows, int cols, int w) {
    const int slh = lh_of(ui, FONT_SANS, ui->small);
    const int chrome = lh_of(ui, FONT_BOLD, ui->px) + 2 * (slh + 4);
    const int area_w = w - gfx_text_width(ui->g, FONT_SANS, ui->small, "0000") - 6 - ui->small * 5;
    float cell = fminf((float)area_w / cols, ui->px * 3.0f);
    if (cell >= 2.0f) cell = floorf(cell);
    return chrome + (cell < 1.0f ? rows : (int)(cell * rows)) + 4;
}

void view_pe(Ui *ui, const App *a, Rect r) {
    Rect in = ui_panel(ui, r, learned(a) ? "Positions: the model's learned positions"
                              : halves(a) ? "Positions: the paper's table (left) and Marian's (right), the same numbers"
                              : a->pe.source == PE_SOURCE_ROPE ? "Positions: the angles RoPE turns each pair by"
                                                                : "Positions: the sinusoidal positional encoding");
    PeTrace t;
    if (!pe_trace(a, &t)) {
        ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->muted, in, "The positional-encoding table has not been built.");
        return;
    }
    const int lh = lh_of(ui, FONT_SANS, ui->px), slh = lh_of(ui, FONT_SANS, ui->small), gap = ui->pad;
    // First, what the lesson's own model does (up to two lines): bold where it is not this table.
    const bool other = a->pe.source != PE_SOURCE_STORED && a->pe.source != PE_SOURCE_COMPUTED && !learned(a) &&
                       a->pe.source != PE_SOURCE_ROPE && !halves(a);
    const int about_h = ui_text_wrap(ui, other ? FONT_BOLD : FONT_SANS, ui->px, other ? ui->th->text : ui->th->muted,
                                     (Rect){in.x, in.y, in.w, 2 * lh}, a->pe.about);
    in.y += about_h + gap / 2, in.h -= about_h + gap / 2;
    // The numbers at the bottom: up to two lines of values and the check line.
    const int n_lines = in.h > 24 * lh ? 2 : 1;
    const int num_h = n_lines * lh + slh + 2;
    Rect num = {in.x, in.y + in.h - num_h, in.w, num_h};
    gfx_rect(ui->g, (Rect){in.x, num.y - gap / 2 - 1, in.w, 1}, ui->th->border);
    const int body_h = num.y - gap - in.y;
    // Top row: settings | table, as high as either needs (2/5 to 1/2 of the body).
    // Bottom row: curves | similarity.
    const int set_w = settings_width(ui) < in.w / 2 ? settings_width(ui) : in.w / 2;
    const int set_h = lh * 2 + 5 * (lh + ui->pad / 2) + slh * 4 + ui->pad * 3;
    const int table_w = in.w - set_w - gap * 2;
    int top_h = heat_height(ui, t.P, t.D, table_w);
    top_h = top_h > set_h ? top_h : set_h;
    top_h = top_h < body_h * 2 / 5 ? body_h * 2 / 5 : top_h > body_h / 2 ? body_h / 2 : top_h;
    const int bot_h = body_h - top_h - gap;
    Rect set = {in.x, in.y, set_w, top_h};
    Rect table = {in.x + set_w + gap * 2, in.y, table_w, top_h};
    // The similarity map is square: as wide as its cells are high, plus labels and colour bar.
    const int side = bot_h - lh * 2 - slh * 2 - 8;
    int sim_w = side + gfx_text_width(ui->g, FONT_SANS, ui->small, "0000") + 6 + ui->small * 5;
    const bool wide = a->pe.source == PE_SOURCE_ROPE || halves(a);  // two maps (RoPE's pairings), or a [P, D] table
    if (wide) sim_w *= 2;
    if (sim_w > in.w * (wide ? 13 : 11) / 20) sim_w = in.w * (wide ? 13 : 11) / 20;
    Rect sim = {in.x + in.w - sim_w, in.y + top_h + gap, sim_w, bot_h};
    Rect curve = {in.x, sim.y, in.w - sim_w - gap * 2, bot_h};
    gfx_clip(ui->g, set);
    settings(ui, a, set);
    gfx_unclip(ui->g);
    table_heat(ui, a, &t, table);
    curves(ui, a, &t, curve);
    if (a->pe.source == PE_SOURCE_ROPE) rope_panel(ui, a, sim);  // the live proof, in the model's own q and k
    else if (halves(a) && t.stored) stored_heat(ui, a, &t, sim);  // Marian's layout beside the paper's
    else similarity_heat(ui, a, &t, sim);
    numbers(ui, a, &t, num, n_lines);
}
