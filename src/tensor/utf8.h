// utf8.h: one UTF-8 character read strictly, or written: the one home of the project's UTF-8
// checking (the text task's files, the tokenizers' decoded bytes).
#ifndef STEPFORMER_UTF8_H
#define STEPFORMER_UTF8_H

#include <stddef.h>
#include <stdint.h>

// The code point at p, with `avail` (at least 1) bytes left: its length in bytes, or 0 when the
// bytes there are not one UTF-8 character (a stray continuation byte, a sequence cut short, an
// overlong form, a surrogate, or a code point past U+10FFFF).
int utf8_decode(const unsigned char *p, size_t avail, uint32_t *cp);
// Writes code point cp as UTF-8 into s[5], NUL-terminated; returns its length.
int utf8_encode(uint32_t cp, char *s);

#endif
