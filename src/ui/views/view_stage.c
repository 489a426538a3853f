// view_stage.c: the kernel that just ran: its program line, its output large, and its inputs
// (earlier outputs, weights, token ids) below, each as a labelled heatmap.
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "heat.h"
#include "rows.h"

// One tensor of the stage: its output (slot -1) or input `slot`.
typedef struct {
    const float *data;
    Shape shape;
    TensorKind kind;
    const char *name;
    int label_stage;  // stage whose token axes label this tensor, or -1
    bool is_weight, is_ids;
    unsigned key[4];  // image cache identity: stage or weight, view, slice, model (weights)
} Operand;

static Operand operand(const App *a, int i, int slot) {
    const Interp *it = a->session.it;
    const Stage *st = interp_stage(it, i);
    Operand o = {.label_stage = -1};
    if (slot < 0) {
        o = (Operand){interp_output(it, i), st->shape, st->kind, st->id, i, false, st->kind == TK_IDS,
                      {a->generation, (unsigned)i, 0, 0}};
        return o;
    }
    const Ref *ref = &st->in[slot];
    o.data = interp_input(it, i, slot);
    o.shape = st->in_shape[slot];
    o.name = stage_short_name(st->in_name[slot], st->id, ref->kind == REF_WEIGHT);
    o.kind = TK_VALUES;
    if (ref->kind == REF_STAGE) {
        o.kind = interp_stage(it, ref->index)->kind, o.label_stage = ref->index;
        o.is_ids = o.kind == TK_IDS;
        o.key[0] = a->generation, o.key[1] = (unsigned)ref->index;
    } else if (ref->kind == REF_WEIGHT) {  // a model's weights never change: keyed by model, tensor, view
        o.is_weight = true;
        o.key[0] = 0x80000000u | (unsigned)ref->index, o.key[1] = (unsigned)ref->offset;
        o.key[3] = a->model_serial;
        size_t col;
        if (stage_input_strided(st, slot, &o.shape, &col)) o.data -= col;  // a chunk of [in, out]: the whole weight
        if (st->op == OP_ADD_POSITIONS) {  // only the table's first T rows are added: show those
            o.shape = shape2(st->shape.dim[0], st->shape.dim[1]);
            o.key[2] = (unsigned)st->shape.dim[0] << 8;
        }
    } else {
        o.kind = TK_IDS, o.is_ids = true;
    }
    return o;
}

static void token_chips(Ui *ui, const App *a, const Operand *o, int i, int slot, Rect r) {
    const Theme *t = ui->th;
    char head[160], sh[48];
    snprintf(head, sizeof head, "%s  %s  token ids", o->name, shape_str(&o->shape, sh, sizeof sh));
    ui_text_fit(ui, FONT_BOLD, ui->small, t->text, r.x, r.y, head, r.w);
    const int lh = gfx_line_height(ui->g, FONT_MONO, ui->small);
    int x = r.x, y = r.y + lh + ui->pad / 2;
    const Model *m = &a->session.model;
    const bool src = slot >= 0 && interp_stage(a->session.it, i)->in[slot].kind == REF_INPUT &&
                     !strcmp(a->session.lesson.program.inputs[interp_stage(a->session.it, i)->in[slot].index], "src");
    const Vocab *v = src ? &m->src_vocab : &m->tgt_vocab;
    for (int k = 0; k < o->shape.dim[0]; k++) {
        char s[80];
        int id = (int)o->data[k];
        snprintf(s, sizeof s, "%s", vocab_token(v, id));
        if (!strcmp(s, " ")) snprintf(s, sizeof s, "\xe2\x90\xa3");  // show a space as ␣
        char num[16];
        snprintf(num, sizeof num, "%d", id);
        int w = gfx_text_width(ui->g, FONT_MONO, ui->small, s), wn = gfx_text_width(ui->g, FONT_SANS, ui->min_px, num);
        int cw = (w > wn ? w : wn) + ui->pad;
        if (x + cw > r.x + r.w) x = r.x, y += lh * 2 + ui->pad;
        if (y + lh * 2 > r.y + r.h) break;
        gfx_rect(ui->g, (Rect){x, y, cw, lh * 2}, t->panel_alt);
        gfx_frame(ui->g, (Rect){x, y, cw, lh * 2}, 1, t->border);
        gfx_text(ui->g, FONT_MONO, ui->small, t->text, x + (cw - w) / 2, y, s);
        gfx_text(ui->g, FONT_SANS, ui->min_px, t->muted, x + (cw - wn) / 2, y + lh, num);
        x += cw + 3;
    }
}

// The cached decoder's stage (not run whole): a caption saying which rows it computed this round
// and which it copied, before `sub`. False for any other stage.
static bool cached_caption(const Stage *st, RowsKind kind, const char *sub, char *out, size_t n) {
    if (kind == ROWS_WHOLE || rows_ran_whole(st, kind)) return false;
    snprintf(out, n, "%s%s%s",
             kind == ROWS_SAME    ? "cached: all copied from the round before"
             : kind == ROWS_GROWN ? "cached: outlined row computed"
             : rows_is_new(kind)  ? "cached: only the outlined row computed and kept"
                                  : "cached: outlined row, column computed",
             sub[0] ? "   " : "", sub);
    return true;
}

// Outlines, on the output heatmap just drawn, the row the cached decoder computed this round
// (the last) and, for a square map, its new column too.
static void mark_computed(Ui *ui, int row, int col, bool with_column) {
    const ZoomView *z = &ui->zoom_view;
    if (z->cells.w <= 0 || z->r1 <= z->r0 || z->c1 <= z->c0) return;
    const float ch = (float)z->cells.h / (z->r1 - z->r0), cw = (float)z->cells.w / (z->c1 - z->c0);
    const int t = ch >= 6 ? 2 : 1;
    if (row >= z->r0 && row < z->r1)
        gfx_frame(ui->g, (Rect){z->cells.x - t, z->cells.y + (int)((row - z->r0) * ch) - t, z->cells.w + 2 * t, (int)ch + 2 * t},
                  t, ui->th->accent);
    if (with_column && col >= z->c0 && col < z->c1)
        gfx_frame(ui->g, (Rect){z->cells.x + (int)((col - z->c0) * cw) - t, z->cells.y - t, (int)cw + 2 * t, z->cells.h + 2 * t},
                  t, ui->th->accent);
}

// Draws one operand as a heatmap (3-D: the chosen head's slice).
static void operand_view(Ui *ui, const App *a, int i, int slot, Rect r) {
    Operand o = operand(a, i, slot);
    if (!o.data) {
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, r.x, r.y, "(not computed yet)", r.w);
        return;
    }
    if (o.is_ids) return token_chips(ui, a, &o, i, slot, r);
    const Interp *it = a->session.it;
    const int nd = o.shape.ndim;
    const char *rows_l[HEAT_MAX_LABELS], *cols_l[HEAT_MAX_LABELS];
    int nr = 0, nc = 0, head = 0;
    char sub[96] = "";
    if (o.label_stage >= 0 && nd >= 2) {
        nr = stage_axis_labels(a, o.label_stage, nd - 2, rows_l, HEAT_MAX_LABELS);
        nc = stage_axis_labels(a, o.label_stage, nd - 1, cols_l, HEAT_MAX_LABELS);
    }
    const bool heads = nd == 3 && o.label_stage >= 0 && interp_stage(it, o.label_stage)->axes.slot[0] == AXIS_HEADS;
    if (nd == 3) {
        head = a->head < o.shape.dim[0] ? a->head : 0;
        snprintf(sub, sizeof sub, heads ? "head %d of %d%s" : "slice %d of %d", head + 1, o.shape.dim[0],
                 heads && a->all_heads ? "  (1-9 picks a head)" : "");
    } else if (o.is_weight) {
        const Stage *st = interp_stage(it, i);
        const Ref *ref = &st->in[slot];
        if (st->op == OP_ADD_POSITIONS)
            snprintf(sub, sizeof sub, "rows 0-%d of the %d-row table", st->shape.dim[0] - 1, st->in_shape[slot].dim[0]);
        else if (st->op == OP_LINEAR && st->attr.w_in_out && st->attr.chunks > 1)
            snprintf(sub, sizeof sub, "stored [in, out]; columns %d-%d are this part", (int)ref->offset,
                     (int)ref->offset + shape_last(&st->shape) - 1);
        else if (st->op == OP_LINEAR && st->attr.w_in_out) snprintf(sub, sizeof sub, "weights, stored [in, out]");
        else if (ref->offset || (st->op == OP_LINEAR && st->attr.chunks > 1))
            snprintf(sub, sizeof sub, "weights, part %d of %d", st->attr.chunk + 1, st->attr.chunks);
        else snprintf(sub, sizeof sub, "weights");
        const StEntry *en = &interp_model(it)->weights.entries[ref->index];
        const size_t k = strlen(sub);
        if (en->half) snprintf(sub + k, sizeof sub - k, " (%s in memory, shown widened)", st_dtype_names[en->dtype]);
    }
    const int rows = nd >= 2 ? o.shape.dim[nd - 2] : 1, cols = o.shape.dim[nd - 1];
    // Tables indexed by token (the embeddings, the generator's weights) get their tokens as row labels.
    if (nr == 0 && o.is_weight && nd == 2) nr = weight_row_labels(a, interp_stage(it, i)->in_name[slot], rows, rows_l, HEAT_MAX_LABELS);
    // The generator's columns are the target vocabulary: label them with its tokens.
    if (nc == 0 && o.label_stage >= 0 && interp_stage(it, o.label_stage)->where.part == PART_GENERATOR)
        nc = vocab_column_labels(a, cols, cols_l, HEAT_MAX_LABELS);
    const bool att = heads && nc > 0 && nr > 0;
    HeatSpec h = {.title = o.name, .subtitle = sub[0] ? sub : NULL, .shape = o.shape, .kind = o.kind,
                  .data = o.data + (size_t)head * rows * cols, .rows = rows, .cols = cols,
                  .range = o.data, .range_n = (size_t)shape_numel(&o.shape),
                  .row_labels = nr ? rows_l : NULL, .n_row_labels = nr, .col_labels = nc ? cols_l : NULL,
                  .n_col_labels = nc, .row_name = att ? "query" : nr ? "token" : "row",
                  .col_name = att ? "key" : nc ? "token" : "dim",
                  .key = {o.key[0], o.key[1], o.key[2] + (unsigned)(slot + 1), (unsigned)head, o.key[3]}};
    if (o.label_stage < 0 && nd >= 2) h.row_name = o.is_weight ? "row" : "position";
    h.zoomable = slot < 0, h.zoom = a->zoom;
    const RowsKind kind = slot < 0 ? interp_stage_rows(it, i) : ROWS_WHOLE;
    char marked[200];
    const bool cached = cached_caption(interp_stage(it, i), kind, sub, marked, sizeof marked);
    if (cached) h.subtitle = marked;
    heat_draw(ui, &h, r);
    if (cached && kind != ROWS_SAME) mark_computed(ui, rows - 1, cols - 1, kind == ROWS_SQUARE || kind == ROWS_SQUARE0);
}

// The program line that made the stage, without its comment, as a heading.
static int program_line(Ui *ui, const App *a, const Stage *st, Rect r) {
    const Lesson *l = &a->session.lesson;
    char line[512] = "";
    if (st->line >= 1 && st->line <= l->n_lines) {
        const char *s = l->lines[st->line - 1];
        while (*s == ' ') s++;
        snprintf(line, sizeof line, "%.*s", (int)strcspn(s, "#"), s);
        for (size_t n = strlen(line); n && line[n - 1] == ' ';) line[--n] = '\0';
    }
    const int lh = gfx_line_height(ui->g, FONT_MONO, ui->px);
    ui_text_fit(ui, FONT_MONO, ui->px, ui->th->accent, r.x, r.y, line, r.w);
    char chose[400];
    const char *formula;
    if (!app_choice_note(a, a->cursor, chose, sizeof chose, &formula)) {
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, r.x, r.y + lh, op_info[st->op].summary, r.w);
        return lh + gfx_line_height(ui->g, FONT_SANS, ui->small) + ui->pad / 2;
    }
    // Sampling or a beam chose the token: said in full, never cut short.
    return lh + ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->text, (Rect){r.x, r.y + lh, r.w, r.h / 3}, chose) + ui->pad / 2;
}

void view_stage(Ui *ui, const App *a, Rect r) {
    if (app_back_step(a)) return view_backward(ui, a, r);
    char title[160];
    batch_title(a, "Stage", "the kernel that just ran", title, sizeof title);
    Rect in = ui_panel(ui, r, title);
    const Stage *st = interp_stage(a->session.it, a->cursor);
    const int head_h = program_line(ui, a, st, in);
    in.y += head_h, in.h -= head_h;
    if (st->n_in == 0) {
        operand_view(ui, a, a->cursor, -1, in);
        return;
    }
    const int out_h = in.h * 3 / 5, gap = ui->pad;
    operand_view(ui, a, a->cursor, -1, (Rect){in.x, in.y, in.w, out_h - gap});
    gfx_rect(ui->g, (Rect){in.x, in.y + out_h - gap / 2, in.w, ui->th->line}, ui->th->grid);
    const int each = (in.w - gap * (st->n_in - 1)) / st->n_in;
    for (int j = 0; j < st->n_in; j++)
        operand_view(ui, a, a->cursor, j, (Rect){in.x + j * (each + gap), in.y + out_h + gap / 2, each, in.h - out_h - gap / 2});
}
