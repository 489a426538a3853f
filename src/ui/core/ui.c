// ui.c: themes, hot zones and the text helpers views share.
#include "ui.h"

#include <stdio.h>
#include <string.h>

const Theme theme_light = {
    .bg = {246, 246, 243, 255},        .panel = {255, 255, 255, 255},
    .panel_alt = {236, 238, 242, 255}, .text = {28, 30, 36, 255},
    .muted = {105, 110, 120, 255},     .accent = {38, 92, 170, 255},
    .on_accent = {255, 255, 255, 255}, .lit = {255, 196, 61, 255},
    .lit_text = {20, 20, 20, 255},     .border = {200, 203, 210, 255},
    .error_bg = {176, 32, 40, 255},    .error_text = {255, 255, 255, 255},
    .grid = {225, 227, 232, 255},      .encoder = {220, 233, 248, 255},
    .decoder = {250, 229, 214, 255},   .generator = {226, 242, 222, 255},
    .backward = {226, 214, 244, 255},
    .line = 1,
};

// The presenter theme: black on white at full contrast, heavier lines, strong block colours.
const Theme theme_contrast = {
    .bg = {255, 255, 255, 255},        .panel = {255, 255, 255, 255},
    .panel_alt = {255, 255, 255, 255}, .text = {0, 0, 0, 255},
    .muted = {0, 0, 0, 255},           .accent = {0, 0, 0, 255},
    .on_accent = {255, 255, 255, 255}, .lit = {255, 214, 0, 255},
    .lit_text = {0, 0, 0, 255},        .border = {0, 0, 0, 255},
    .error_bg = {160, 0, 0, 255},      .error_text = {255, 255, 255, 255},
    .grid = {120, 120, 120, 255},      .encoder = {190, 215, 255, 255},
    .decoder = {255, 205, 170, 255},   .generator = {190, 240, 180, 255},
    .backward = {205, 175, 255, 255},
    .line = 2,
};

void ui_hot(Ui *ui, Rect r, Cmd cmd, int param) {
    if (ui->n_hot < UI_MAX_HOT) ui->hot[ui->n_hot++] = (HotZone){r, cmd, param};
}

bool rect_has(Rect r, int x, int y) { return x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h; }

Rect rect_inset(Rect r, int d) { return (Rect){r.x + d, r.y + d, r.w - 2 * d, r.h - 2 * d}; }

const HotZone *ui_hot_at(const Ui *ui, int x, int y) {
    for (int i = ui->n_hot - 1; i >= 0; i--)  // the last drawn is on top
        if (rect_has(ui->hot[i].r, x, y)) return &ui->hot[i];
    return NULL;
}

// A text cut to fit: noted for the tests when asked (Ui.note_elided).
static void elided(Ui *ui, const char *s) {
    if (!ui->note_elided) return;
    if (ui->n_elided < UI_MAX_ELIDED) snprintf(ui->elided[ui->n_elided], UI_ELIDED_TEXT, "%s", s);
    ui->n_elided++;
}

int ui_text_fit(Ui *ui, FontFace f, int px, Rgba c, int x, int y, const char *s, int max_w) {
    if (max_w <= 0 || !s) return 0;
    int w = gfx_text_width(ui->g, f, px, s);
    if (w <= max_w) return gfx_text(ui->g, f, px, c, x, y, s);
    elided(ui, s);
    static const char ell[] = "\xe2\x80\xa6";  // …
    int n = gfx_fit(ui->g, f, px, s, max_w - gfx_text_width(ui->g, f, px, ell));
    char buf[1024];
    if (n > (int)sizeof buf - 4) n = (int)sizeof buf - 4;
    memcpy(buf, s, (size_t)n);
    memcpy(buf + n, ell, sizeof ell);
    return n > 0 ? gfx_text(ui->g, f, px, c, x, y, buf) : 0;
}

int ui_text_fit_tail(Ui *ui, FontFace f, int px, Rgba c, int x, int y, const char *s, int max_w) {
    if (max_w <= 0 || !s) return 0;
    if (gfx_text_width(ui->g, f, px, s) <= max_w) return gfx_text(ui->g, f, px, c, x, y, s);
    elided(ui, s);
    static const char ell[] = "\xe2\x80\xa6";  // …
    char buf[1024];
    const size_t n = strlen(s) < sizeof buf - sizeof ell ? strlen(s) : sizeof buf - sizeof ell;
    for (size_t k = 1; k < n; k++) {  // the shortest cut that fits, never inside a character
        if (((unsigned char)s[k] & 0xC0) == 0x80) continue;
        memcpy(buf, ell, sizeof ell - 1);
        memcpy(buf + sizeof ell - 1, s + k, n - k);
        buf[sizeof ell - 1 + n - k] = '\0';
        if (gfx_text_width(ui->g, f, px, buf) <= max_w) return gfx_text(ui->g, f, px, c, x, y, buf);
    }
    return 0;
}

int ui_text_wrap(Ui *ui, FontFace f, int px, Rgba c, Rect r, const char *s) {
    const int lh = gfx_line_height(ui->g, f, px);
    int y = r.y;
    char line[1024];
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        int n = gfx_fit(ui->g, f, px, s, r.w);
        int nl = (int)strcspn(s, "\n");
        if (nl < n) n = nl;
        else if (s[n] && s[n] != ' ' && s[n] != '\n') {  // break at the last space that fits
            int k = n;
            while (k > 0 && s[k] != ' ') k--;
            if (k > 0) n = k;
        }
        if (n == 0) n = nl > 0 ? 1 : 0;  // a word wider than the panel: cut it
        if (y + lh > r.y + r.h) break;
        if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
        memcpy(line, s, (size_t)n);
        line[n] = '\0';
        gfx_text(ui->g, f, px, c, r.x, y, line);
        y += lh;
        s += n;
        if (*s == '\n') s++;
    }
    return y - r.y;
}

Rect ui_panel(Ui *ui, Rect r, const char *title) {
    const Theme *t = ui->th;
    gfx_rect(ui->g, r, t->panel);
    gfx_frame(ui->g, r, t->line, t->border);
    int th = title ? gfx_line_height(ui->g, FONT_BOLD, ui->small) + ui->pad / 2 : 0;
    if (title) {
        gfx_rect(ui->g, (Rect){r.x, r.y, r.w, th}, t->panel_alt);
        ui_text_fit(ui, FONT_BOLD, ui->small, t->muted, r.x + ui->pad / 2, r.y + ui->pad / 4, title,
                    r.w - ui->pad);
    }
    return (Rect){r.x + ui->pad / 2, r.y + th + ui->pad / 2, r.w - ui->pad, r.h - th - ui->pad};
}

int ui_bar_w(const Ui *ui) { return ui->px / 4 > 3 ? ui->px / 4 : 3; }

void ui_scroll_bar(Ui *ui, Rect r, int at, int shown, int total) {
    if (total <= shown || r.h <= 0) return;
    const int w = ui_bar_w(ui), thumb = r.h * shown / total > w * 2 ? r.h * shown / total : w * 2;
    const int y = r.y + (int)((long)(r.h - thumb) * at / (total - shown));
    gfx_rect(ui->g, (Rect){r.x + r.w - w, r.y, w, r.h}, ui->th->panel_alt);
    gfx_rect(ui->g, (Rect){r.x + r.w - w, y, w, thumb}, ui->th->muted);
}
