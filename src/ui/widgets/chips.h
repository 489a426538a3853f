// chips.h: small drawing pieces the Decoding and Compare views share: a token as a chip coloured
// by its kind, a short note in a tinted box, and the full width of a bar chart.
#ifndef STEPFORMER_CHIPS_H
#define STEPFORMER_CHIPS_H

#include "ui.h"

// ---- token chips ----
typedef enum { CHIP_GIVEN, CHIP_PROMPT, CHIP_NEW, CHIP_UNKNOWN, CHIP_LATER, CHIP_MATCH, CHIP_MISS } ChipKind;
int chip_h(Ui *ui, int px);
int chip_w(Ui *ui, int px, const char *s, int max_w);
void chip_draw(Ui *ui, int px, Rect r, const char *s, ChipKind k);
// A short message in a tinted box as tall as it needs (at most r.h); returns its height.
int note_box(Ui *ui, Rect r, const char *msg);
// The smallest of 0.01, 0.02, 0.05, 0.1, ... 1 that is at least p: a bar's full width.
float bar_scale(float p);

#endif
