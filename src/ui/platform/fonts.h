// fonts.h: finding the four faces the interface uses through fontconfig.
#ifndef STEPFORMER_FONTS_H
#define STEPFORMER_FONTS_H

#include "err.h"
#include "gfx.h"

// Fills one font file per FontFace (sans, bold, italic, mono). Fails with a message naming
// the Debian package to install when no usable file is found.
bool fonts_find(char paths[FONT_COUNT][512], Err *e);

#endif
