// chips.c: token chips, a tinted note and a bar chart's scale (chips.h).
#include "chips.h"

int chip_h(Ui *ui, int px) { return gfx_line_height(ui->g, FONT_SANS, px) + ui->pad / 2; }

int chip_w(Ui *ui, int px, const char *s, int max_w) {
    int w = gfx_text_width(ui->g, FONT_BOLD, px, s) + ui->pad;  // fits either face
    w = w < chip_h(ui, px) ? chip_h(ui, px) : w;
    return w < max_w ? w : max_w;
}

void chip_draw(Ui *ui, int px, Rect r, const char *s, ChipKind k) {
    const Theme *t = ui->th;
    Rgba fill = k == CHIP_NEW ? t->lit : k == CHIP_MATCH ? t->generator : k == CHIP_GIVEN ? t->panel_alt
              : k == CHIP_PROMPT ? t->encoder : t->panel;
    Rgba ink = k == CHIP_NEW ? t->lit_text : k == CHIP_LATER || k == CHIP_UNKNOWN ? t->muted : t->text;
    gfx_rect(ui->g, r, fill);
    gfx_frame(ui->g, r, k == CHIP_UNKNOWN ? 2 * t->line : t->line, k == CHIP_UNKNOWN ? t->lit : k == CHIP_LATER ? t->grid : t->border);
    const int tw = gfx_text_width(ui->g, FONT_SANS, px, s), inner = r.w - ui->pad / 2;
    const int x = tw < inner ? r.x + (r.w - tw) / 2 : r.x + ui->pad / 4;
    ui_text_fit(ui, k == CHIP_NEW ? FONT_BOLD : FONT_SANS, px, ink, x,
                r.y + (r.h - gfx_line_height(ui->g, FONT_SANS, px)) / 2, s, inner);
}

// The smallest of 0.01, 0.02, 0.05, 0.1, ... 1 that is at least p: the bars' full width.
float bar_scale(float p) {
    static const float steps[] = {0.01f, 0.02f, 0.05f, 0.1f, 0.2f, 0.5f, 1.0f};
    for (int i = 0; i < 7; i++)
        if (p <= steps[i]) return steps[i];
    return 1.0f;
}

// A short message in a tinted box as tall as it needs (at most r.h); returns its height.
int note_box(Ui *ui, Rect r, const char *msg) {
    Rect in = rect_inset(r, ui->pad / 2);
    int h = ui_text_wrap(ui, FONT_ITALIC, ui->small, ui->th->muted, (Rect){-100000, 0, in.w, in.h}, msg) + ui->pad;
    h = h < r.h ? h : r.h;
    gfx_rect(ui->g, (Rect){r.x, r.y, r.w, h}, ui->th->panel_alt);
    ui_text_wrap(ui, FONT_ITALIC, ui->small, ui->th->muted, in, msg);
    return h;
}
