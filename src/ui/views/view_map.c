// view_map.c: the architecture figure, drawn from the pass being run: the encoder, the decoder
// (the round on screen, in greedy decoding) and the generator, one row per block, layers
// folded except the one being executed. The executing block is lit; every row is clickable.
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "views.h"

enum { MAX_ROWS = 512 };

typedef enum { ITEM_HEADER, ITEM_ROW, ITEM_LAYER } ItemKind;

typedef struct {
    ItemKind kind;
    int row;        // ITEM_ROW: index into rows; ITEM_LAYER: its first row
    int last_row;   // ITEM_LAYER: its last row
    bool in_layer;  // ITEM_ROW drawn inside an unfolded layer box
    Part part;
} Item;

static Rgba part_colour(const Theme *t, Part p) {
    return p == PART_ENCODER ? t->encoder : p == PART_DECODER ? t->decoder : p == PART_GENERATOR ? t->generator : t->panel_alt;
}

// Turns the block rows into what is drawn: section headers, folded layers, unfolded rows.
static int build_items(const BlockRow *rows, int n, const BlockRow *cur, Item *items, int max) {
    int k = 0;
    Part part = PART_COUNT;
    for (int i = 0; i < n && k < max - 2;) {
        if (rows[i].part != part || (part == PART_OTHER && strcmp(rows[i].section, rows[i - 1].section)))
            items[k++] = (Item){ITEM_HEADER, i, i, false, part = rows[i].part};
        if (!rows[i].has_layer) {
            items[k++] = (Item){ITEM_ROW, i, i, false, part};
            i++;
            continue;
        }
        int j = i;
        while (j + 1 < n && block_same_layer(&rows[j + 1], &rows[i])) j++;
        const bool open = block_same_layer(cur, &rows[i]);
        items[k++] = (Item){ITEM_LAYER, i, j, false, part};
        for (int r = i; open && r <= j && k < max; r++) items[k++] = (Item){ITEM_ROW, r, r, true, part};
        i = j + 1;
    }
    return k;
}

// A section's title: the recipe's parts by name, any other block of the program by its own.
static void header(Ui *ui, const App *a, Rect r, const BlockRow *b, int layers, int round, bool greedy, int px) {
    static const char *const names[PART_COUNT] = {"ENCODER", "DECODER", "GENERATOR", "OTHER"};
    const Part p = b->part;
    const ModelConfig *c = &a->session.model.cfg;
    char s[96];
    (void)c;  // the layers the pass has, not the configuration's count (a lesson may run fewer)
    if (p == PART_ENCODER && layers) snprintf(s, sizeof s, "%s  x%d", names[p], layers);
    else if (p == PART_DECODER && greedy && round >= 0) snprintf(s, sizeof s, "%s  x%d  round %d", names[p], layers, round + 1);
    else if (p == PART_DECODER && layers) snprintf(s, sizeof s, "%s  x%d", names[p], layers);
    else if (p == PART_ENCODER || p == PART_DECODER) snprintf(s, sizeof s, "%s", names[p]);
    else if (p == PART_OTHER && b->section[0]) {
        size_t k = 0;
        for (; b->section[k] && k + 1 < sizeof s; k++) s[k] = (char)toupper((unsigned char)b->section[k]);
        s[k] = '\0';
    } else snprintf(s, sizeof s, "%s", names[p]);
    ui_text_fit(ui, FONT_BOLD, px, ui->th->muted, r.x, r.y + (r.h - gfx_line_height(ui->g, FONT_BOLD, px)) / 2, s, r.w);
}

// Rows that do not fit scroll: the block on screen stays in the middle of the panel.
static int map_offset(const Item *items, int k, const BlockRow *rows, int cursor, int rh, int h) {
    if (k * rh <= h) return 0;
    int at = 0;
    for (int i = 0; i < k; i++)
        if (items[i].kind == ITEM_ROW && rows[items[i].row].first <= cursor && cursor <= rows[items[i].row].last) at = i;
    const int off = at * rh - h / 2;
    return off < 0 ? 0 : off > k * rh - h ? k * rh - h : off;
}

static void row(Ui *ui, Rect r, const char *label, bool lit, Rgba fill, int px, int first) {
    const Theme *t = ui->th;
    gfx_rect(ui->g, r, lit ? t->lit : fill);
    if (lit) gfx_frame(ui->g, r, t->line * 2, t->text);
    const int lh = gfx_line_height(ui->g, lit ? FONT_BOLD : FONT_SANS, px);
    ui_text_fit(ui, lit ? FONT_BOLD : FONT_SANS, px, lit ? t->lit_text : t->text, r.x + ui->pad / 2,
                r.y + (r.h - lh) / 2, label, r.w - ui->pad);
    ui_hot(ui, r, CMD_GOTO_BLOCK, first);
}

static bool is_greedy(const App *a) {
    const Interp *it = a->session.it;
    for (int i = 0; i < interp_n_stages(it); i++)
        if (interp_stage(it, i)->in_decode) return !strncmp(interp_stage(it, i)->id, "step.", 5);
    return false;
}

void view_map(Ui *ui, const App *a, Rect r) {
    Rect in = ui_panel(ui, r, "Architecture");
    const Interp *it = a->session.it;
    if (interp_n_done(it) == 0) return;
    BlockRow rows[MAX_ROWS];
    Item items[MAX_ROWS];
    const BlockRow cur = block_of(a, a->cursor);
    const int n = block_rows(a, cur.round, rows, MAX_ROWS);
    const int k = build_items(rows, n, &cur, items, MAX_ROWS);
    const int px = ui->small, lh = gfx_line_height(ui->g, FONT_SANS, px);
    int rh = lh * 3 / 2;
    if (k * rh > in.h) rh = in.h / (k ? k : 1) > lh + 2 ? in.h / (k ? k : 1) : lh + 2;  // squeeze rows, never the text
    const bool greedy = is_greedy(a);
    gfx_clip(ui->g, in);
    int y = in.y - map_offset(items, k, rows, a->cursor, rh, in.h);
    for (int i = 0; i < k; i++, y += rh) {
        const Item *m = &items[i];
        const BlockRow *b = &rows[m->row];
        Rect rr = {in.x + (m->in_layer ? ui->pad : 0), y + 1, in.w - (m->in_layer ? 2 * ui->pad : 0), rh - 2};
        if (m->kind == ITEM_HEADER) {
            int layers = 0;  // the distinct layers of this part among the rows
            for (int q = 0; q < n; q++)
                if (rows[q].part == b->part && rows[q].has_layer && rows[q].layer + 1 > layers) layers = rows[q].layer + 1;
            header(ui, a, (Rect){in.x, y, in.w, rh}, b, layers, interp_stage(it, a->cursor)->in_decode ? cur.round : -1,
                   greedy, px);
        } else if (m->kind == ITEM_LAYER) {
            char s[48];
            snprintf(s, sizeof s, "Layer %d", b->layer);
            bool here = block_same_layer(&cur, b);
            int depth = here ? m->last_row - m->row + 1 : 0;
            if (here) gfx_frame(ui->g, (Rect){in.x, y + 1, in.w, rh * (depth + 1) - 2}, ui->th->line, ui->th->text);
            row(ui, rr, s, false, part_colour(ui->th, b->part), px, b->first);
        } else {
            row(ui, rr, b->label, b->first <= a->cursor && a->cursor <= b->last, part_colour(ui->th, b->part), px,
                b->first);
        }
    }
    gfx_unclip(ui->g);
}
