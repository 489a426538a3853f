// utf8.c: one UTF-8 character read strictly, or written (utf8.h).
#include "utf8.h"

// The code point at p, with `avail` bytes left: its length in bytes, or 0 when the bytes there
// are not one UTF-8 character (a stray continuation byte, a sequence cut short, an overlong
// form, a surrogate, or a code point past U+10FFFF).
int utf8_decode(const unsigned char *p, size_t avail, uint32_t *cp) {
    const unsigned char c = p[0];
    int len;
    uint32_t v, least;
    if (c < 0x80) return *cp = c, 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2, v = c & 0x1Fu, least = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) len = 3, v = c & 0x0Fu, least = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) len = 4, v = c & 0x07u, least = 0x10000;
    else return 0;
    if (avail < (size_t)len) return 0;
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0;
        v = v << 6 | (p[i] & 0x3Fu);
    }
    if (v < least || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

// Writes code point cp as UTF-8 into s[5], NUL-terminated; returns its length.
int utf8_encode(uint32_t cp, char *s) {
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
    for (int i = n - 1; i > 0; i--, cp >>= 6) s[i] = (char)(0x80 | (cp & 0x3F));
    s[0] = (char)(lead[n] | cp);
    s[n] = '\0';
    return n;
}
