// colormap.h: values -> colours for heatmaps. Both maps are colour-blind safe:
//   diverging:  blue (negative) - white (0) - red (positive), for signed activations;
//               symmetric around 0, so white always means exactly zero.
//   sequential: dark purple - teal - yellow (viridis-like), for probabilities; its lightness
//               rises monotonically, so it also reads in greyscale.
// Masked entries (-inf, a hidden key) get their own neutral grey.
#ifndef STEPFORMER_COLORMAP_H
#define STEPFORMER_COLORMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "gfx.h"  // Rgba

typedef enum { CMAP_DIVERGING, CMAP_SEQUENTIAL, CMAP_COUNT } Colormap;

extern const Rgba cmap_masked;  // the colour of -inf (masked) cells

// t in [0, 1] along the map (clamped).
Rgba cmap_at(Colormap m, float t);

// The colour of value v: diverging maps [-hi, hi] (lo ignored), sequential maps [lo, hi].
Rgba cmap_value(Colormap m, float v, float lo, float hi);
// cmap_value of v[0..n) into out, the same colours, eight at a time where the CPU has AVX2.
void cmap_values(Rgba *out, const float *v, int n, Colormap m, float lo, float hi);

// A range for a tensor: for diverging, hi = max |x| over finite x; for sequential, [min, max].
// Non-finite values are skipped. An all-masked or empty tensor gives [0, 1].
// [*bar_lo, *bar_hi] is the part of the range the values use, for the colour bar: on the
// diverging map, only its half when every value has one sign ([-a, 0] for log-probabilities,
// [0, a] for a ReLU's output), so the bar never names a value of the other sign that no cell
// holds; else the whole range. The cells' colours are the same either way.
void cmap_range(Colormap m, const float *x, size_t n, float *lo, float *hi, float *bar_lo, float *bar_hi);
// The same, and in *neg_inf whether any value is -inf (a masked cell), from the same pass over x.
void cmap_range_scan(Colormap m, const float *x, size_t n, float *lo, float *hi, float *bar_lo, float *bar_hi,
                     bool *neg_inf);

// Whether any of x[0..n) is -inf (a masked cell), x NULL none: cmap_range_scan's pass, in vectors
// over the cores, as a map of GPT-2's feed-forward (3 million values) is scanned before its first
// frame.
bool cmap_any_neg_inf(const float *x, size_t n);

#endif
