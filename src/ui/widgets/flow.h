// flow.h: a span-aware line layout for the lesson panel. Text arrives in pieces of one style;
// a word may cross pieces ("`q`'s"), so a word is gathered whole, measured piece by piece in
// each piece's face, and wrapped at the column width. A finished line is drawn with
// neighbouring items of one style merged into one string. With draw false it only measures.
#ifndef STEPFORMER_FLOW_H
#define STEPFORMER_FLOW_H

#include "lesson.h"  // the STYLE_* bits of a span
#include "parts.h"
#include "ui.h"

enum { FLOW_ITEMS = 128, FLOW_BUF = 2048, WORD_PIECES = 8 };

typedef struct {
    unsigned style;
    int off, len;  // the text, in Flow.buf
    int x, w;      // from the column's left edge
    bool space;    // a space before it
} Item;

typedef struct {
    const char *s;
    int n;
    unsigned style;
} Piece;

typedef struct {
    Ui *ui;
    bool draw;      // false: only measure
    FontFace face;  // the block's face (STYLE_* bits change it per piece)
    int px, lh, space_w;
    Rgba color;
    int x, w;       // the column
    int y, bottom;  // the next line's top; every line must end by bottom
    int end_y;      // the bottom of the last line laid out
    bool full;      // a line did not fit: everything after it is dropped
    Item items[FLOW_ITEMS];
    int n_items, line_w, buf_n;
    char buf[FLOW_BUF];
    Piece word[WORD_PIECES];  // the word being gathered
    int n_word;
    bool space;  // whitespace came before that word
} Flow;

// Starts a block of text in `face` at px, colour c, in the column [x, x + w) (f->y is kept).
void flow_setup(Flow *f, FontFace face, int px, Rgba c, int x, int w);
// Adds text of a style (STYLE_* bits); a newline in it ends a line.
void flow_text(Flow *f, const char *s, unsigned style);
// Ends the block: its last word and line are placed.
void flow_end(Flow *f);

// narration.c: the blocks of r (those shown) laid out from y in the column [x, x + w), drawn if
// draw, tables as tables; returns the height. A line that would end below `bottom` is not
// drawn, nor anything after it, so a scrolled box never shows half a line at its foot (INT_MAX
// / 2: no limit). Lines above the box's top rely on the caller's clip.
int narration_flow(Ui *ui, const Lesson *l, BlockRange r, int x, int y, int w, int bottom, bool draw);

#endif
