// soak.c: the window's code under a long stream of random input, off screen. Each event is a
// platform event (events.h) fed through the same handler the window uses (keys, typed text, clicks, drags, the
// wheel), plus window resizes and lesson switches; every few events a frame is drawn. The run
// must end without a crash or leak (run it under ASan) and with resident memory flat: the last
// quarter of the run may not reach much above the peak of the three before it.
//
//   soak [EVENTS] [SEED]     (defaults 3000 and 1; the CI runs the short default)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
#include "check.h"
#include "heat.h"
#include "input.h"
#include "rng.h"

static long rss_kb(void) {
    long pages = 0, rss = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    if (f) fclose(f);
    return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static const Key keys[] = {KEY_RIGHT, KEY_LEFT, KEY_PAGEDOWN, KEY_PAGEUP, KEY_HOME, KEY_END, KEY_TAB,
                           KEY_UP, KEY_DOWN, KEY_RETURN, KEY_ESCAPE, KEY_BACKSPACE, KEY_F1, KEY_OTHER};
static const char texts[] = "0123456789cmoxunplLCeE+-[]<>h? ab/zZ";

// One random event; what could leave the run (quit, fullscreen, screenshots, training) is not sent.
static Event random_event(Rng *r, int w, int h) {
    Event ev = {0};
    const int kind = rng_below(r, 10);
    if (kind < 3) {
        ev.kind = EV_KEY, ev.key = keys[rng_below(r, (int)(sizeof keys / sizeof keys[0]))];
        ev.shift = rng_below(r, 4) == 0;
    } else if (kind < 6) {
        ev.kind = EV_TEXT;
        ev.text[0] = texts[rng_below(r, (int)sizeof texts - 1)];
    } else if (kind < 8) {
        ev.kind = rng_below(r, 2) ? EV_PRESS : EV_RELEASE;
        ev.x = rng_below(r, w), ev.y = rng_below(r, h);
    } else if (kind < 9) {
        ev.kind = EV_WHEEL, ev.steps = rng_below(r, 2) ? 1 : -1;
        ev.x = rng_below(r, w), ev.y = rng_below(r, h);
    } else {
        ev.kind = EV_MOTION, ev.x = rng_below(r, w), ev.y = rng_below(r, h);
    }
    return ev;
}

// Events that would leave the soak or start long work are not delivered.
static bool allowed(const App *a, const Ui *ui, const Event *ev) {
    if (ev->kind == EV_TEXT && strchr("qQfFsS", ev->text[0]) && !a->editing) return false;
    if (ev->kind == EV_KEY && ev->key == KEY_ESCAPE && !a->help && !a->editing && !a->lesson_list)
        return false;
    if (ev->kind == EV_TEXT && ev->text[0] == ' ' && a->view == VIEW_TRAIN) return false;
    if (ev->kind == EV_PRESS) {
        const HotZone *z = ui_hot_at(ui, ev->x, ev->y);
        if (z && z->cmd >= CMD_TRAIN_TOGGLE && z->cmd <= CMD_TRAIN_USE) return false;
    }
    return true;
}

int main(int argc, char **argv) {
    const long n = argc > 1 ? atol(argv[1]) : 3000;
    Rng r = {argc > 2 ? strtoull(argv[2], NULL, 10) : 1};
    static const int sizes[][2] = {{800, 600}, {1280, 800}, {640, 480}, {1920, 1080}};
    int w = 800, h = 600;
    Err e = {{0}};
    Gfx *g = gfx_open_offscreen(w, h, &e);
    App a;
    char first[600];
    snprintf(first, sizeof first, "%s/forward-pass.md", LESSONS);
    const SessionSpec spec = {.lesson_path = first};
    if (!g || !app_open(&a, &spec, &e)) return fprintf(stderr, "soak: %s\n", e.msg), 1;
    app_set_course(&a, LESSONS, first);
    Ui ui = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    long warm = 0, peak = 0, frames = 0;
    const long report = n >= 20000 ? n / 20 : 0;
    for (long i = 0; i < n; i++) {
        if (i % 997 == 996) {  // a resize: a new canvas, as the window gets a new size
            heat_cache_free(ui.heat), gfx_close(g);
            const int k = rng_below(&r, 4);
            w = sizes[k][0], h = sizes[k][1];
            if (!(g = gfx_open_offscreen(w, h, &e))) return fprintf(stderr, "soak: %s\n", e.msg), 1;
            ui = (Ui){.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
        }
        if (i % 1499 == 1498) app_act(&a, rng_below(&r, 2) ? CMD_NEXT_LESSON : CMD_PREV_LESSON, 0);
        Event ev = random_event(&r, w, h);
        if (allowed(&a, &ui, &ev)) input_handle(&a, &ui, &ev);
        a.quit = false, a.fullscreen = false;
        app_tick(&a, (double)i * 16, 4);
        if (i % 5 == 0) app_draw(&ui, &a), frames++;
        if (i == 3 * n / 4) warm = peak;  // what the lessons, views and caches have needed so far
        if (rss_kb() > peak) peak = rss_kb();
        if (report && i % report == 0) printf("  %ld events: %ld kB\n", i, rss_kb());
    }
    const long end = rss_kb();
    printf("soak: %ld events, %ld frames; resident memory: peak over the first three quarters %ld kB, peak overall "
           "%ld kB, at the end %ld kB\n", n, frames, warm, peak, end);
    if (n >= 20000)  // a short run is all warm-up: there it checks crashes and (under ASan) leaks only
        CHECK(peak - warm < 64 * 1024, "resident memory flat: the last quarter's peak is %ld kB above the rest's",
              peak - warm);
    heat_cache_free(ui.heat);
    app_free(&a);
    gfx_close(g);
    return check_finish("soak");
}
