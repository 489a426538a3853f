// input.c: the platform's events (events.h) -> commands. A key or a typed character becomes a
// command through keys.h's tables; a press, the command of the zone under it; the features see
// each event first (a question takes its typed answer), and settle after it.
#include "input.h"

static bool apply(App *a, const Ui *ui, const Event *ev) {
    Command c;
    switch (ev->kind) {
    case EV_QUIT: a->quit = true; return false;
    case EV_KEY: return keys_command(ev, a->editing, &c) && app_command(a, ui, c);
    case EV_TEXT:
        if (a->editing) return app_type(a, ev->text), false;
        return keys_command(ev, false, &c) && app_command(a, ui, c);
    case EV_PRESS: app_click(a, ui, ev->x, ev->y); return false;
    case EV_RELEASE: a->dragging = false; return false;
    case EV_MOTION: app_drag(a, ui, ev->x, ev->y); return false;
    case EV_WHEEL: app_wheel(a, ui, ev->x, ev->y, ev->steps); return false;
    case EV_OTHER: return false;
    }
    return false;
}

bool input_handle(App *a, const Ui *ui, const Event *ev) {
    const bool shot = !(app_event(a, ui, ev) & FOLLOW_TAKEN) && apply(a, ui, ev);
    app_drain(a, ui);
    app_settle(a);
    return shot;
}
