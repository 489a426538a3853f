// flow.c: the span-aware line layout of the lesson panel (see flow.h).
#include "flow.h"

#include <string.h>

static FontFace face_of(const Flow *f, unsigned style) {
    if (style & STYLE_CODE) return FONT_MONO;
    if ((style & STYLE_STRONG) || f->face == FONT_BOLD) return FONT_BOLD;
    if (style & STYLE_EM) return FONT_ITALIC;
    return f->face;
}

// Inline code is a size smaller than the prose around it, but never under the smallest text.
static int px_of(const Flow *f, unsigned style) {
    if (!(style & STYLE_CODE) || f->face == FONT_MONO) return f->px;
    const int px = f->px * 9 / 10;
    return px < f->ui->min_px && f->px >= f->ui->min_px ? f->ui->min_px : px;
}

// The padding either side of inline code, whose background must not touch its neighbours.
static int code_pad(const Flow *f) { return f->px / 6 > 1 ? f->px / 6 : 1; }

// The gap an item of `style` needs after one of `prev` (-1: it starts the line).
static int edge_gap(const Flow *f, int prev, unsigned style) {
    int g = 0;
    if (prev >= 0 && (prev & STYLE_CODE) && (unsigned)prev != style) g += code_pad(f);
    if ((style & STYLE_CODE) && (prev < 0 || (unsigned)prev != style)) g += code_pad(f);
    return g;
}

static int measure(const Flow *f, const char *s, int n, unsigned style) {
    char tmp[512];
    if (n > (int)sizeof tmp - 1) n = (int)sizeof tmp - 1;
    memcpy(tmp, s, (size_t)n);
    tmp[n] = '\0';
    return gfx_text_width(f->ui->g, face_of(f, style), px_of(f, style), tmp);
}

// The space before an item of `style` after one of `prev`: drawn merged into one string with
// its neighbour of the same style (inside a code span: a monospace space), so measured so.
static int space_before(const Flow *f, int prev, unsigned style) {
    return prev >= 0 && (unsigned)prev == style && style != 0 ? measure(f, " ", 1, style) : f->space_w;
}

void flow_setup(Flow *f, FontFace face, int px, Rgba c, int x, int w) {
    f->face = face, f->px = px, f->color = c, f->x = x, f->w = w;
    f->lh = gfx_line_height(f->ui->g, face, px) + (face == FONT_MONO ? 0 : px / 8);
    f->space_w = gfx_text_width(f->ui->g, face, px, " ");
    f->n_items = f->line_w = f->buf_n = f->n_word = 0;
    f->space = false;
}

static void draw_items(Flow *f) {
    Gfx *g = f->ui->g;
    char run[FLOW_BUF + FLOW_ITEMS];
    for (int i = 0; i < f->n_items;) {
        const Item *a = &f->items[i];
        int j = i, n = 0;
        for (; j < f->n_items && f->items[j].style == a->style; j++) {
            if (j > i && f->items[j].space) run[n++] = ' ';
            memcpy(run + n, f->buf + f->items[j].off, (size_t)f->items[j].len);
            n += f->items[j].len;
        }
        run[n] = '\0';
        const Item *z = &f->items[j - 1];
        const FontFace face = face_of(f, a->style);
        const int px = px_of(f, a->style), x = f->x + a->x;
        const int dy = (f->lh - gfx_line_height(g, face, px)) / 2;
        if (a->style & STYLE_CODE) {
            const int cp = code_pad(f);
            gfx_rect(g, (Rect){x - cp, f->y + 1, z->x + z->w - a->x + 2 * cp, f->lh - 2}, f->ui->th->panel_alt);
        }
        gfx_text(g, face, px, (a->style & STYLE_LINK) ? f->ui->th->accent : f->color, x, f->y + dy, run);
        i = j;
    }
}

static void flow_newline(Flow *f) {
    if (!f->full && f->y + f->lh > f->bottom) f->full = true;
    if (!f->full) {
        if (f->draw) draw_items(f);
        f->end_y = f->y += f->lh;
    }
    f->n_items = f->line_w = f->buf_n = 0;
}

// Puts text on the current line (the caller has made sure it fits); nothing once the panel is full.
static void flow_put(Flow *f, const char *s, int n, unsigned style, int w, bool space) {
    if (f->n_items == FLOW_ITEMS || f->buf_n + n >= FLOW_BUF) flow_newline(f);
    if (f->full) return;
    if (n >= FLOW_BUF) n = FLOW_BUF - 1;
    const int prev = f->n_items ? (int)f->items[f->n_items - 1].style : -1;
    space = space && f->n_items > 0;
    const int x = f->line_w + (space ? space_before(f, prev, style) : 0) + edge_gap(f, prev, style);
    memcpy(f->buf + f->buf_n, s, (size_t)n);
    f->items[f->n_items++] = (Item){style, f->buf_n, n, x, w, space};
    f->buf_n += n;
    f->line_w = x + w;
}

// A word wider than the column: cut it, after a '.' or '_' where one is near the cut.
static void flow_long_piece(Flow *f, const Piece *p, bool space) {
    const char *s = p->s;
    int left = p->n;
    char tmp[512];
    while (left > 0 && !f->full) {
        const int room = f->w - f->line_w - (space && f->n_items ? f->space_w : 0) - 2 * code_pad(f);
        int k = left < (int)sizeof tmp - 1 ? left : (int)sizeof tmp - 1;
        memcpy(tmp, s, (size_t)k);
        tmp[k] = '\0';
        int n = room > 0 ? gfx_fit(f->ui->g, face_of(f, p->style), px_of(f, p->style), tmp, room) : 0;
        if (n < left) {
            int c = n;
            while (c > n / 2 && tmp[c - 1] != '.' && tmp[c - 1] != '_') c--;
            if (c > n / 2) n = c;
        }
        if (n == 0 && f->n_items) {
            flow_newline(f);
            continue;
        }
        if (n == 0) do n++; while (n < left && (s[n] & 0xC0) == 0x80);
        flow_put(f, s, n, p->style, measure(f, s, n, p->style), space);
        s += n, left -= n, space = false;
        if (left > 0) flow_newline(f);
    }
}

// Places the gathered word: on this line if it fits, else on the next.
static void flow_word(Flow *f) {
    if (f->n_word == 0 || f->full) {
        f->n_word = 0;
        return;
    }
    // need: its width after what the line holds; alone: its width at the start of a line.
    int w[WORD_PIECES], need = 0, alone = 0;
    int prev = f->n_items ? (int)f->items[f->n_items - 1].style : -1, prev_alone = -1;
    for (int i = 0; i < f->n_word; i++) {
        const unsigned st = f->word[i].style;
        w[i] = measure(f, f->word[i].s, f->word[i].n, st);
        need += edge_gap(f, prev, st) + w[i];
        alone += edge_gap(f, prev_alone, st) + w[i];
        prev = prev_alone = (int)st;
    }
    if (prev & STYLE_CODE) need += code_pad(f), alone += code_pad(f);
    if (f->n_items && f->space)
        need += space_before(f, (int)f->items[f->n_items - 1].style, f->n_word ? f->word[0].style : 0);
    if (f->n_items && f->line_w + need > f->w) flow_newline(f);
    for (int i = 0; i < f->n_word; i++) {
        const Piece *p = &f->word[i];
        bool sp = i == 0 && f->space;
        if (alone > f->w) flow_long_piece(f, p, sp);
        else flow_put(f, p->s, p->n, p->style, w[i], sp);
    }
    f->n_word = 0;
    f->space = false;
}

void flow_text(Flow *f, const char *s, unsigned style) {
    while (*s && !f->full) {
        if (*s == ' ' || *s == '\n' || *s == '\t') {
            flow_word(f);
            f->space = true;
            if (*s == '\n') flow_newline(f), f->space = false;
            s++;
            continue;
        }
        const int n = (int)strcspn(s, " \n\t");
        if (f->n_word == WORD_PIECES) flow_word(f);
        f->word[f->n_word++] = (Piece){s, n, style};
        s += n;
    }
}

void flow_end(Flow *f) {
    flow_word(f);
    if (f->n_items) flow_newline(f);
}

