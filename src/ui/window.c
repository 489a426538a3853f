// window.c: the window's main loop: events (live or replayed), playback, drawing.
#include "window.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "heat.h"
#include "input.h"

typedef struct {
    App *a;
    Gfx *g;
    Ui ui;
    double t0;  // when the loop started: recordings and replays count from here
    Recorder *rec;
    Replayer *rep;
    int failures;  // replay expectations that did not hold
    int shots;
} Loop;

static void notice(App *a, const char *msg) {
    snprintf(a->notice, sizeof a->notice, "%s", msg);
    a->notice_until = (double)SDL_GetTicks64() + 3000.0;
}

static void screenshot(Loop *L, const char *path) {
    char auto_path[64];
    const bool quiet = path != NULL;  // replayed shots leave no message in later pictures
    if (!path) {
        time_t t = time(NULL);
        strftime(auto_path, sizeof auto_path, "stepformer-%Y%m%d-%H%M%S", localtime(&t));
        snprintf(auto_path + strlen(auto_path), sizeof auto_path - strlen(auto_path), "-%d.png", ++L->shots);
        path = auto_path;
    }
    Err e = {{0}};
    char msg[600];
    if (!gfx_save_png(L->g, path, &e)) app_set_error(L->a, e.msg);
    else if (!quiet) snprintf(msg, sizeof msg, "saved %s", path), notice(L->a, msg);
}

static void expect_stage(Loop *L, const char *id) {
    const App *a = L->a;
    const char *at = a->loaded ? interp_stage(a->session.it, a->cursor)->id : "(nothing loaded)";
    if (strcmp(at, id) != 0) {
        fprintf(stderr, "stepformer: replay: expected stage %s on screen, found %s\n", id, at);
        L->failures++;
    }
}

static void handle_events(Loop *L, bool *shot) {
    SDL_Event ev;
    while (SDL_PollEvent(&ev)) {
        recorder_log(L->rec, &ev, (double)SDL_GetTicks64() - L->t0);
        if (input_handle(L->a, &L->ui, &ev)) *shot = true;
    }
}

// One frame: input, playback, drawing, and replay directives that act on the drawn frame.
static void frame(Loop *L) {
    App *a = L->a;
    const double now = (double)SDL_GetTicks64();
    char arg[480] = "";
    ReplayStep step = L->rep ? replayer_poll(L->rep, now - L->t0, arg, sizeof arg) : REPLAY_IDLE;
    if (step == REPLAY_QUIT) a->quit = true;
    if (step == REPLAY_EXPECT) expect_stage(L, arg);
    bool shot = false;
    const bool was_full = a->fullscreen;
    handle_events(L, &shot);
    if (a->fullscreen != was_full) gfx_set_fullscreen(L->g, a->fullscreen);
    if (a->editing) SDL_StartTextInput();
    app_tick(a, now, 8.0);
    if (a->train) train_job_snapshot(a->train, &a->train_snap);
    if (a->notice[0] && a->notice_until == 0) a->notice_until = now + 3000.0;
    if (a->notice[0] && now > a->notice_until) a->notice[0] = '\0';
    SDL_GetMouseState(&L->ui.mx, &L->ui.my);
    app_draw(&L->ui, a);
    if (shot) screenshot(L, NULL);
    if (step == REPLAY_SHOT) screenshot(L, arg);
    gfx_present(L->g);
    gfx_trim_cache(L->g);
}

int window_run(const WindowOptions *o) {
    App a;
    Err e = {{0}};
    Gfx *g = gfx_open_window("stepformer", o->w, o->h, &e);
    if (!g) {
        fprintf(stderr, "stepformer: %s\n", e.msg);
        return 1;
    }
    gfx_set_min_size(g, WINDOW_MIN_W, WINDOW_MIN_H);
    app_init(&a, &o->spec);
    app_set_course(&a, o->course_dir, o->spec.lesson_path ? o->spec.lesson_path : a.loaded ? a.session.lesson.path : NULL);
    Loop L = {.a = &a, .g = g, .ui = {.g = g, .heat = heat_cache_new()}};
    if (o->record && !(L.rec = recorder_open(o->record, &e))) app_set_error(&a, e.msg);
    if (o->replay && !(L.rep = replayer_open(o->replay, &e))) {
        fprintf(stderr, "stepformer: %s\n", e.msg);
        L.failures++;
        a.quit = true;
    }
    SDL_StartTextInput();
    L.t0 = (double)SDL_GetTicks64();
    while (!a.quit) {
        frame(&L);
        if (!a.playing && !L.rep) SDL_WaitEventTimeout(NULL, a.train_snap.running ? 100 : 50);  // idle
    }
    recorder_close(L.rec);
    L.failures += replayer_failures(L.rep);
    replayer_close(L.rep);
    heat_cache_free(L.ui.heat);
    app_free(&a);
    gfx_close(g);
    SDL_Quit();
    return L.failures ? 1 : 0;
}
