// window.c: the window's main loop: events (live or replayed), playback, drawing. The loop
// itself is the platform's (platform.h): a blocking loop on the desktop, the page's animation
// frames in the browser; each turn calls frame() below.
#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>  // strcasecmp
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>  // access

#include "back_mistakes.h"
#include "decoding.h"
#include "heat.h"
#include "input.h"
#include "platform.h"

typedef struct {
    App a;
    Gfx *g;
    Ui ui;
    WindowOptions o;
    double t0;  // when the loop started: recordings and replays count from here
    Recorder *rec;
    Replayer *rep;
    int failures;  // replay expectations that did not hold
    char first_failure[300];
    int shots;
    bool placed;   // the place asked for has been reached (or failed)
    bool told;     // the title has announced it
    bool replay_told;  // ... and how the replay ended
    char title[600];   // the desktop title last set (the lesson's place in the course)
    char folder[512];  // a model folder the user gave the page or dropped on the window, and
    char reads[512];   // what it reads (the session's spec points at them while it opens)
    bool dropped;      // `folder` was dropped on the window, to open in this frame
    void (*done)(int status, void *ctx);
    void *done_ctx;
} Loop;

static void notice(App *a, const char *msg) {
    snprintf(a->notice, sizeof a->notice, "%s", msg);
    a->notice_until = events_ms() + 3000.0;
}

static void announce(const Loop *L, const char *what, const char *detail) {
    if (!L->o.announce) return;
    char title[800];
    snprintf(title, sizeof title, "stepformer: %s%s%s", what, detail ? " " : "", detail ? detail : "");
    platform_title(title);
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
    if (!gfx_save_png(L->g, path, &e)) app_set_error(&L->a, e.msg);
    else if (!quiet) platform_deliver(path, msg, sizeof msg), notice(&L->a, msg);
}

// A replay's expectation that did not hold: said on stderr, the first kept for the title.
static void expect_failed(Loop *L, const char *msg) {
    fprintf(stderr, "stepformer: replay: %s\n", msg);
    if (!L->failures) snprintf(L->first_failure, sizeof L->first_failure, "replay: %s", msg);
    L->failures++;
}

// `expect answer right|wrong|shown`: how the last question told on screen was answered.
static void expect_answer(Loop *L, const char *want) {
    const Quiz *z = &L->a.quiz;
    const char *got = !z->told ? "none" : z->last == GRADE_COUNT ? "shown" : grade_names[z->last];
    char msg[160];
    snprintf(msg, sizeof msg, "expected the answer %s, found %s", want, got);
    if (strcmp(got, want) != 0) expect_failed(L, msg);
}

// `expect decoding greedy|sampling|beam`: how the pass on screen chooses its tokens.
static void expect_decoding(Loop *L, const char *want) {
    const char *got = L->a.loaded ? decoding_names[decoding_kind(&L->a.session.run.choice)] : "(nothing loaded)";
    char msg[160];
    snprintf(msg, sizeof msg, "expected decoding %s, found %s", want, got);
    if (strcmp(got, want) != 0) expect_failed(L, msg);
}

// `expect output 1,3,3,0`: the ids the pass generates (run to its end first), as `run` prints
// them (without the prompt or bos; `none` for no tokens).
static void expect_output(Loop *L, const char *want) {
    App *a = &L->a;
    char got[300] = "(nothing loaded)", msg[700];
    Err e = {{0}};
    if (a->loaded && !interp_run(a->session.it, &e)) snprintf(got, sizeof got, "an error: %s", e.msg);
    else if (a->loaded) {
        int n;
        StopReason why;
        const float *ids = interp_generated(a->session.it, &n, &why);
        size_t k = 0;
        got[0] = '\0';
        for (int i = 0; i < n && k + 16 < sizeof got; i++) k += (size_t)snprintf(got + k, sizeof got - k, "%s%d", i ? "," : "", (int)ids[i]);
        if (n == 0) snprintf(got, sizeof got, "none");
    }
    snprintf(msg, sizeof msg, "expected the output %s, found %s", want, got);
    if (strcmp(got, want) != 0) expect_failed(L, msg);
}

// `expect back KIND|none` (the backward step on screen: loss, backward, adam, loss after),
// `expect mistake NAME|none` (W's wrong formula), `expect check agree|disagree|none` (G's
// gradient check of the stage on screen), `expect showing gradients|values` (D).
static void expect_backward(Loop *L, const char *what, const char *want) {
    const App *a = &L->a;
    const BackStep *b = app_back_step(a);
    const bool checked = a->back.check_stage == a->cursor && a->back.check_stage >= 0;
    const char *got = !strcmp(what, "back") ? (b ? back_kind_names[b->kind] : "none")
                    : !strcmp(what, "mistake") ? (a->back.mistake ? backward_mistake_names[a->back.mistake] : "none")
                    : !strcmp(what, "check") ? (!checked ? "none" : a->back.check.passed ? "agree" : "disagree")
                    : (a->back.values ? "values" : "gradients");
    char msg[200];
    snprintf(msg, sizeof msg, "expected %s %s, found %s", what, want, got);
    if (strcmp(got, want) != 0) expect_failed(L, msg);
}

// expect STAGE_ID: the stage on screen; expect view NAME: the view on screen (its tab's name,
// any case); or one of the expectations above.
static void expect_stage(Loop *L, const char *id) {
    const App *a = &L->a;
    static const char *const backward[] = {"back", "mistake", "check", "showing"};
    for (int k = 0; k < 4; k++) {
        const size_t n = strlen(backward[k]);
        if (!strncmp(id, backward[k], n) && id[n] == ' ') return expect_backward(L, backward[k], id + n + 1);
    }
    if (!strncmp(id, "answer ", 7)) return expect_answer(L, id + 7);
    if (!strncmp(id, "decoding ", 9)) return expect_decoding(L, id + 9);
    if (!strncmp(id, "output ", 7)) return expect_output(L, id + 7);
    const bool view = !strncmp(id, "view ", 5);
    const char *at = view ? view_names[a->view] : a->loaded ? interp_stage(a->session.it, a->cursor)->id : "(nothing loaded)";
    char msg[600];
    snprintf(msg, sizeof msg, "expected %s %s on screen, found %s", view ? "view" : "stage", view ? id + 5 : id, at);
    if (view ? strcasecmp(at, id + 5) != 0 : strcmp(at, id) != 0) expect_failed(L, msg);
}

static bool has_file(const char *dir, const char *name) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, R_OK) == 0;
}

// A file or folder dropped on the window: the model folder it is or is in (a .safetensors file
// outside a folder in the hub's layout is itself the model), opened by open_given_folder.
static void dropped(Loop *L, const char *path) {
    struct stat st;
    const size_t n = strlen(path), ext = strlen(".safetensors");
    snprintf(L->folder, sizeof L->folder, "%s", path);
    char *slash = strrchr(L->folder, '/');
    const bool weights = n >= ext && !strcmp(path + n - ext, ".safetensors");
    if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && slash && slash != L->folder) {
        *slash = '\0';  // its folder, unless a lone weights file
        if (weights && !has_file(L->folder, "config.json")) *slash = '/';
    }
    L->dropped = true;
}

static void handle_events(Loop *L, bool *shot) {
    Event ev;
    while (events_poll(&ev)) {
        recorder_log(L->rec, events_ms() - L->t0);
        if (ev.kind == EV_DROP) dropped(L, ev.path);
        else if (input_handle(&L->a, &L->ui, &ev)) *shot = true;
    }
}

// The place asked for, once its lesson is open: before the first frame that shows it.
static void place(Loop *L) {
    App *a = &L->a;
    if (L->placed || a->waiting.on || a->reading.on) return;
    L->placed = true;
    Err e = {{0}};
    if (L->o.error) app_set_error(a, L->o.error);
    else if (a->loaded && (L->o.stage || L->o.view >= 0) && !app_place(a, L->o.stage, L->o.view, &e)) app_set_error(a, e.msg);
    // Opened from the command line on no stage in particular: the lesson's introduction first (a
    // replay starts where its events expect, on the first stage).
    else if (a->loaded && L->o.opening_card && !L->rep && !L->o.stage && L->o.view < 0) a->card = CARD_OPENING;
}

// After a frame is drawn: the title says what it shows (once), and how a replay ended.
static void tell(Loop *L, ReplayStep step) {
    const App *a = &L->a;
    if (L->placed && !L->told) {
        L->told = true;
        if (a->error[0]) announce(L, "error", a->error);
        else if (a->loaded) announce(L, "ready", L->o.stage ? L->o.stage : interp_stage(a->session.it, a->cursor)->id);
        else announce(L, "error", "nothing is loaded");
    }
    if (L->rep && !L->replay_told && (step == REPLAY_DONE || step == REPLAY_QUIT)) {
        L->replay_told = true;
        const int failed = L->failures + replayer_failures(L->rep);
        if (failed && !L->first_failure[0]) snprintf(L->first_failure, sizeof L->first_failure, "replay: an event could not be delivered");
        if (failed) announce(L, "error", L->first_failure);
        else announce(L, "replay passed", NULL);
    }
}

// A model folder the user gave the page (platform_take_folder) or dropped on the window opens as
// `--model DIR` does: on
// the text the window had (a folder with a tokenizer) or on a few ids (one without).
static void open_given_folder(Loop *L) {
    App *a = &L->a;
    if (!L->dropped && !platform_take_folder(L->folder, sizeof L->folder)) return;
    L->dropped = false;
    const bool tokenizer = has_file(L->folder, "tokenizer.json") || has_file(L->folder, "source.spm");
    const char *text = a->loaded && a->session.input_text[0] ? a->session.input_text : "The capital of France is";
    snprintf(L->reads, sizeof L->reads, "%s", tokenizer ? text : "1,2,3,4");
    const SessionSpec spec = {.model_path = L->folder, .input = tokenizer ? L->reads : NULL,
                              .src_ids = tokenizer ? NULL : L->reads};
    app_open_spec(a, &spec, -1);
    L->o.stage = NULL, L->o.view = -1, L->o.error = NULL;  // what the link asked was of the page before
    L->placed = L->told = false;  // the title announces the new model's first frame, or its error
}

// One frame: input, playback, drawing, and replay directives that act on the drawn frame.
// Returns how long the loop may wait for an event, or -1 to end it.
static int frame(void *ctx) {
    Loop *L = ctx;
    App *a = &L->a;
    const double now = events_ms();
    place(L);
    if (!L->placed) L->t0 = now;  // a replay's clock starts at the place asked for
    char arg[480] = "";
    const bool replaying = L->placed && L->rep;  // a replay starts at the place asked for
    ReplayStep step = replaying ? replayer_poll(L->rep, now - L->t0, arg, sizeof arg) : REPLAY_IDLE;
    if (step == REPLAY_QUIT) a->quit = true;
    if (step == REPLAY_EXPECT) expect_stage(L, arg);
    bool shot = false;
    const bool was_full = a->fullscreen;
    handle_events(L, &shot);
    open_given_folder(L);
    if (a->fullscreen != was_full) gfx_set_fullscreen(L->g, a->fullscreen);
    if (a->editing) events_text_input();
    app_tick(a, now, 8.0);
    app_drain(a, &L->ui);
    app_settle(a);
    if (a->train) train_job_pump(a->train, 12.0), train_job_snapshot(a->train, &a->train_snap);
    if (a->notice[0] && a->notice_until == 0) a->notice_until = now + 3000.0 + 40.0 * (double)strlen(a->notice);  // time to read it
    if (a->notice[0] && now > a->notice_until) a->notice[0] = '\0';
    if (!events_pointer(&L->ui.mx, &L->ui.my)) L->ui.mx = L->ui.my = -1;  // the pointer is elsewhere: nothing hovers
    app_draw(&L->ui, a);
    if (shot) screenshot(L, NULL);
    if (step == REPLAY_SHOT) screenshot(L, arg);
    gfx_present(L->g);
    gfx_trim_cache(L->g);
    tell(L, step);
    if (!L->o.announce) {  // the page's title is its ready / error signal; the desktop's says where we are
        char title[sizeof L->title];
        app_title(a, title, sizeof title);
        if (strcmp(title, L->title)) snprintf(L->title, sizeof L->title, "%s", title), platform_title(title);
    }
    if (a->quit) return -1;
    const bool busy = a->playing || L->rep || a->waiting.on || a->reading.on || a->train_snap.running;
    if (!busy) app_warm_next(a);  // the frame is on screen: ready the next stage while the user reads it
    return busy ? (a->train_snap.running && !a->playing && !L->rep ? 100 : 0) : 50;
}

static void finish(void *ctx) {
    Loop *L = ctx;
    recorder_close(L->rec);
    L->failures += replayer_failures(L->rep);
    replayer_close(L->rep);
    heat_cache_free(L->ui.heat);
    app_free(&L->a);
    gfx_close(L->g);  // the last window: the platform closes with it
    const int status = L->failures ? 1 : 0;
    void (*done)(int, void *) = L->done;
    void *done_ctx = L->done_ctx;
    free(L);
    if (done) done(status, done_ctx);
}

void window_run(const WindowOptions *o, void (*done)(int status, void *ctx), void *ctx) {
    Err e = {{0}};
    Loop *L = calloc(1, sizeof *L);  // outlives this call in the browser
    Gfx *g = L ? gfx_open_window("stepformer", o->w, o->h, o->fit, &e) : NULL;
    if (!g) {
        fprintf(stderr, "stepformer: %s\n", L ? e.msg : "out of memory");
        free(L);
        if (done) done(1, ctx);
        return;
    }
    L->g = g, L->o = *o, L->done = done, L->done_ctx = ctx;
    L->ui = (Ui){.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    gfx_set_min_size(g, WINDOW_MIN_W, WINDOW_MIN_H);
    App *a = &L->a;
    app_init(a, &o->spec);
    a->quiz.presenter = o->presenter;
    app_set_course(a, o->course_dir, o->spec.lesson_path ? o->spec.lesson_path : a->loaded ? a->session.lesson.path : NULL);
    if (o->record && !(L->rec = recorder_open(o->record, &e))) app_set_error(a, e.msg);
    if (o->replay && !(L->rep = replayer_open(o->replay, &e))) {
        fprintf(stderr, "stepformer: %s\n", e.msg);
        snprintf(L->first_failure, sizeof L->first_failure, "%s", e.msg);
        announce(L, "error", e.msg);
        L->failures++;
        a->quit = true;
    }
    events_text_input();
    L->t0 = events_ms();
    platform_loop(frame, finish, L);
}
