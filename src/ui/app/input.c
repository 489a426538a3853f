// input.c: the platform's events (events.h) -> commands. A key or a typed character becomes a
// command through keys.h's tables; a press, the command of the zone under it; the features see
// each event first (a question takes its typed answer), and settle after it.
#include "input.h"

// Queues the event's command, or acts on the pointer at once (a wheel, a drag, the input line).
static void take(App *a, const Ui *ui, const Event *ev) {
    Command c;
    switch (ev->kind) {
    case EV_QUIT: a->quit = true; break;
    case EV_KEY:
    case EV_TEXT:
        if (ev->kind == EV_TEXT && a->editing) app_type(a, ev->text);
        else if (keys_command(ev, a->editing, &c)) cmd_push(&a->queue, c);
        break;
    case EV_PRESS: app_click(a, ui, ev->x, ev->y); break;
    case EV_RELEASE: a->dragging = false; break;
    case EV_MOTION: app_drag(a, ui, ev->x, ev->y); break;
    case EV_WHEEL: app_wheel(a, ui, ev->x, ev->y, ev->steps); break;
    case EV_DROP:  // a model dropped on the window: the window opens it (window.c)
    case EV_OTHER: break;
    }
}

bool input_handle(App *a, const Ui *ui, const Event *ev) {
    if (!(app_event(a, ui, ev) & FOLLOW_TAKEN)) take(a, ui, ev);
    const bool shot = app_drain(a, ui);
    app_settle(a);
    return shot;
}
