// rows.h: the cached decoder's step. In a greedy round, a decoder stage's output is last
// round's output with one more position; for most stages the earlier positions' rows are
// exactly last round's (the causal mask keeps a position from seeing later ones), so only the
// new row is computed and the rest copied: the keys and values of earlier positions are kept,
// not recomputed. The copied rows and the new row are the same bits the full computation gives
// (sgemm adds the same terms in the same order alone or among other rows), so the cached
// decoder's trace equals the plain one's, and a stage this cannot prove so is computed whole.
#ifndef STEPFORMER_ROWS_H
#define STEPFORMER_ROWS_H

#include "program.h"

typedef enum {
    ROWS_WHOLE,   // computed whole: nothing is known about its rows
    ROWS_SAME,    // exactly last round's output (it reads nothing that changed)
    ROWS_GROWN,   // last round's rows, then the new position's row: [.., T, X] with T one more
    ROWS_SQUARE,  // [H, T, T]: last round's [H, T-1, T-1] in the corner, a new row and column
    ROWS_SQUARE0, // ROWS_SQUARE whose new column is 0 above the new row (after a causal softmax)
    // Heads [H, T, X] of which only each head's new row was computed and is held ([H, X]:
    // rows_exec_new): no later stage of the round reads the rows above (a query's row serves that
    // query alone), and a reader who wants them has them recomputed. The rows above are last
    // round's (ROWS_NEW); or, in a square of attention [H, T, T], they gained a new column.
    ROWS_NEW,
    ROWS_NEW_SQUARE,  // a square: the rows above' new column is not known
    ROWS_NEW_HIDDEN,  // a square after a causal mask: the rows above hide the new key (-inf)
    ROWS_NEW0,        // the softmax of ROWS_NEW_HIDDEN: the rows above are 0 on the new key
    ROWS_KIND_COUNT
} RowsKind;

static inline bool rows_is_new(RowsKind k) {
    return k == ROWS_NEW || k == ROWS_NEW_SQUARE || k == ROWS_NEW_HIDDEN || k == ROWS_NEW0;
}

// How a reader takes an input held as new rows alone (rows_new_reader).
typedef enum {
    ROWS_READS_WHOLE,       // it must have the whole: the input cannot be held as new rows
    ROWS_READS_NEW_IF_NEW,  // as new rows when it holds its own output as new rows alone too
    ROWS_READS_NEW,         // as new rows, whichever way it computes its own
} RowsReader;

// Stage st of round r, given last round's output of the same stage (prev, of prev_shape) and
// what its inputs are (kin). Fills out whole, computing what it must; returns what out is.
// out may be prev itself (last round's buffer, grown in place): then nothing is copied but
// the rows that move.
RowsKind rows_exec(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN],
                   const OpWeight *w, const float *prev, const Shape *prev_shape, float *out);

// What stage st computes as its new rows alone (rows_exec_new), from what its inputs are (kin)
// and its shape last round (prev_shape): the new rows of heads split from a grown input, turned
// by RoPE, multiplied (queries against keys, weights times values), scaled, masked or
// softmaxed; ROWS_WHOLE when it cannot.
RowsKind rows_new_kind(const Stage *st, const RowsKind kin[STAGE_MAX_IN], const Shape *prev_shape);
// Computes into out ([H, X]: each head's new row) what rows_new_kind said; an input of a
// ROWS_NEW kind is given as its new rows.
void rows_exec_new(const Stage *st, const float *const in[STAGE_MAX_IN], const RowsKind kin[STAGE_MAX_IN], float *out);
// Whether rows_exec takes st's inputs of a ROWS_NEW kind as their new rows (a product's weights
// or queries, merge_heads, RoPE: their output grows by the new row); else they are given whole.
bool rows_reads_new(const Stage *st, const RowsKind kin[STAGE_MAX_IN], const Shape *prev_shape);
// How stage st takes its input q held as new rows alone. The interpreter holds a stage's new
// rows alone only when every reader in its round takes them so.
RowsReader rows_new_reader(const Stage *st, int q);

// Whether stage st's output row t is computed from its inputs' rows t alone (and whole weights):
// the ops the cached decoder runs on the new row only.
bool rows_row_wise(const Stage *st);

// Multiply-adds of stage st's products (linear, matmul) as computed: all of them whole, none
// when copied, one row's (and a square's new column) when cached; 0 for other ops.
double rows_multiply_adds(const Stage *st, RowsKind kind);
// Whether the cached decoder ran stage st whole (kind ROWS_WHOLE, or a cheap op on heads kept
// whole: scale, mask, softmax, repeat, concat, which run whole and only keep track of their
// rows).
bool rows_ran_whole(const Stage *st, RowsKind kind);
// One line for the lesson panel on how the cached decoder computed a stage; NULL for ROWS_WHOLE.
const char *rows_note(const Stage *st, RowsKind kind);

#endif
