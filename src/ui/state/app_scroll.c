// app_scroll.c: the wheel, Shift+PgDn / PgUp and a drag: the lesson panel's and the cards' text
// scrolls, a heatmap zooms and pans (heat.h).
#include "app.h"
#include "heat.h"

static void scroll_by(App *a, const Ui *ui, ScrollId id, int delta) {
    const ScrollView *v = &ui->scroll[id];
    int s = a->scroll[id] + delta;
    a->scroll[id] = s > v->max ? v->max : s < 0 ? 0 : s;
}

void app_scroll(App *a, const Ui *ui, ScrollId id, int pages) {
    if (!a->help && ui->scroll[id].r.w > 0) scroll_by(a, ui, id, pages * ui->scroll[id].page);
}

// The wheel scrolls the lesson panel's part under the pointer, else zooms the heatmap there.
void app_wheel(App *a, const Ui *ui, int x, int y, int dy) {
    if (a->help) return;
    for (int k = 0; k < SCROLL_COUNT; k++) {
        const ScrollView *v = &ui->scroll[k];
        if (v->r.w > 0 && rect_has(v->r, x, y)) {
            scroll_by(a, ui, (ScrollId)k, -dy * 3 * (k == SCROLL_KERNEL ? 1 : v->unit));
            return;
        }
    }
    a->zoom = heat_zoom_about(ui, a->zoom, x, y, dy);
}

void app_drag(App *a, const Ui *ui, int x, int y) {
    if (!a->dragging || a->help) return;
    a->zoom = heat_pan(ui, a->zoom, x - a->drag_x, y - a->drag_y);
    a->drag_x = x, a->drag_y = y;
}
