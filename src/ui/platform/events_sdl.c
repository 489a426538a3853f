// events_sdl.c: SDL's events as the window's (events.h), on the desktop and in the browser
// alike; recording them, and replaying a recording into SDL's queue.
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

static SDL_Event last;  // the event events_poll returned last: what recorder_log writes

static const struct {
    SDL_Keycode sdl;
    Key key;
} keys[] = {
    {SDLK_RIGHT, KEY_RIGHT},       {SDLK_LEFT, KEY_LEFT},       {SDLK_UP, KEY_UP},         {SDLK_DOWN, KEY_DOWN},
    {SDLK_PAGEDOWN, KEY_PAGEDOWN}, {SDLK_PAGEUP, KEY_PAGEUP},   {SDLK_HOME, KEY_HOME},     {SDLK_END, KEY_END},
    {SDLK_TAB, KEY_TAB},           {SDLK_SPACE, KEY_SPACE},     {SDLK_ESCAPE, KEY_ESCAPE}, {SDLK_RETURN, KEY_RETURN},
    {SDLK_KP_ENTER, KEY_RETURN},   {SDLK_BACKSPACE, KEY_BACKSPACE}, {SDLK_F1, KEY_F1},     {SDLK_F11, KEY_F11},
};

static Key key_of(SDL_Keycode sym) {
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].sdl == sym) return keys[i].key;
    return KEY_OTHER;
}

bool events_poll(Event *ev) {
    if (last.type == SDL_DROPFILE) SDL_free(last.drop.file), last.drop.file = NULL;  // logged, if at all, by now
    if (!SDL_PollEvent(&last)) return false;
    const SDL_Event *s = &last;
    *ev = (Event){.kind = EV_OTHER};
    switch (s->type) {
    case SDL_QUIT: ev->kind = EV_QUIT; break;
    case SDL_DROPFILE: ev->kind = EV_DROP, snprintf(ev->path, sizeof ev->path, "%s", s->drop.file ? s->drop.file : ""); break;
    case SDL_KEYDOWN:
        ev->kind = EV_KEY, ev->key = key_of(s->key.keysym.sym), ev->shift = (s->key.keysym.mod & KMOD_SHIFT) != 0;
        break;
    case SDL_TEXTINPUT: ev->kind = EV_TEXT, snprintf(ev->text, sizeof ev->text, "%s", s->text.text); break;
    case SDL_MOUSEBUTTONDOWN:
        if (s->button.button == SDL_BUTTON_LEFT) ev->kind = EV_PRESS, ev->x = s->button.x, ev->y = s->button.y;
        break;
    case SDL_MOUSEBUTTONUP: ev->kind = EV_RELEASE, ev->x = s->button.x, ev->y = s->button.y; break;
    case SDL_MOUSEMOTION:
        ev->kind = EV_MOTION, ev->x = s->motion.x, ev->y = s->motion.y, ev->held = (s->motion.state & SDL_BUTTON_LMASK) != 0;
        break;
    case SDL_MOUSEWHEEL:  // where the pointer was when the wheel turned (SDL 2.26's mouseX/Y)
        if (s->wheel.which != SDL_TOUCH_MOUSEID)
            ev->kind = EV_WHEEL, ev->x = s->wheel.mouseX, ev->y = s->wheel.mouseY, ev->steps = s->wheel.y;
        break;
    default: break;
    }
    return true;
}

double events_ms(void) { return (double)SDL_GetTicks64(); }

bool events_pointer(int *x, int *y) {
    if (!SDL_GetMouseFocus()) return false;
    SDL_GetMouseState(x, y);
    return true;
}

void events_text_input(void) { SDL_StartTextInput(); }

// ---- recording ----

struct Recorder {
    FILE *f;
    long last_move;  // pointer moves are written at most every 40 ms
};

Recorder *recorder_open(const char *path, Err *e) {
    Recorder *r = calloc(1, sizeof *r);
    if (!r || !(r->f = fopen(path, "w"))) {
        free(r);
        return err_set(e, "%s: cannot write the recording", path), NULL;
    }
    fprintf(r->f, "# stepformer recording: time (ms) event ...\n");
    return r;
}

void recorder_log(Recorder *r, double ms) {
    const SDL_Event *ev = &last;
    if (!r) return;
    long t = (long)ms;
    switch (ev->type) {
    case SDL_KEYDOWN:
        fprintf(r->f, "%ld key %s%s\n", t, (ev->key.keysym.mod & KMOD_SHIFT) ? "Shift+" : "",
                SDL_GetKeyName(ev->key.keysym.sym));
        break;
    case SDL_TEXTINPUT: fprintf(r->f, "%ld text %s\n", t, ev->text.text); break;
    case SDL_DROPFILE: fprintf(r->f, "%ld drop %s\n", t, ev->drop.file ? ev->drop.file : ""); break;
    case SDL_MOUSEBUTTONDOWN:
        if (ev->button.button == SDL_BUTTON_LEFT) fprintf(r->f, "%ld click %d %d\n", t, ev->button.x, ev->button.y);
        break;
    case SDL_MOUSEBUTTONUP: fprintf(r->f, "%ld release %d %d\n", t, ev->button.x, ev->button.y); break;
    case SDL_MOUSEMOTION:
        if (ev->motion.state & SDL_BUTTON_LMASK) fprintf(r->f, "%ld drag %d %d\n", t, ev->motion.x, ev->motion.y);
        else if (t - r->last_move >= 40) fprintf(r->f, "%ld move %d %d\n", t, ev->motion.x, ev->motion.y), r->last_move = t;
        else return;
        break;
    case SDL_MOUSEWHEEL: fprintf(r->f, "%ld wheel %d %d %d\n", t, ev->wheel.mouseX, ev->wheel.mouseY, ev->wheel.y); break;
    case SDL_WINDOWEVENT:
        if (ev->window.event == SDL_WINDOWEVENT_SIZE_CHANGED)
            fprintf(r->f, "%ld resize %d %d\n", t, ev->window.data1, ev->window.data2);
        break;
    default: return;
    }
    fflush(r->f);
}

void recorder_close(Recorder *r) {
    if (!r) return;
    fclose(r->f);
    free(r);
}

// ---- replaying ----

typedef struct {
    long ms;
    char verb[16];
    char arg[480];
} ReplayLine;

// Lines one file may hold (an hour's recording is about 100000): each takes 504 bytes.
enum { REPLAY_MAX_LINES = 200000 };

struct Replayer {
    ReplayLine *lines;
    int n, cap, next;
    int failures;  // events SDL would not take
};

// What each verb takes after it.
typedef enum { ARGS_NONE, ARGS_XY, ARGS_XY_STEPS, ARGS_KEY, ARGS_TEXT, ARGS_WORD, ARGS_PATH, ARGS_EXPECT } ArgForm;
static const struct {
    const char *verb;
    ArgForm form;
    const char *usage;
} verbs[] = {
    {"key", ARGS_KEY, "key NAME"},         {"text", ARGS_TEXT, "text CHARACTERS"},
    {"click", ARGS_XY, "click X Y"},       {"release", ARGS_XY, "release X Y"},
    {"drag", ARGS_XY, "drag X Y"},         {"move", ARGS_XY, "move X Y"},
    {"wheel", ARGS_XY_STEPS, "wheel X Y STEPS"}, {"resize", ARGS_XY, "resize WIDTH HEIGHT"},
    {"drop", ARGS_PATH, "drop PATH"},
    {"shot", ARGS_WORD, "shot FILE.png"},  {"expect", ARGS_EXPECT, "expect STAGE_ID, expect view VIEW, expect answer right|wrong|shown, "
                                                    "expect decoding greedy|sampling|beam, expect output IDS, expect back "
                                                    "loss|backward|adam|loss after|none, expect mistake NAME|none, expect "
                                                    "check agree|disagree|none or expect showing gradients|values"},
    {"quit", ARGS_NONE, "quit"},
};

// Whether arg is exactly `count` integers.
static bool ints_only(const char *arg, int count) {
    int v[3], used = 0;
    const int got = count == 2 ? sscanf(arg, "%d %d %n", &v[0], &v[1], &used)
                               : sscanf(arg, "%d %d %d %n", &v[0], &v[1], &v[2], &used);
    return got == count && arg[used] == '\0';
}

static bool args_fit(ArgForm form, const char *arg) {
    const char *key = !strncmp(arg, "Shift+", 6) ? arg + 6 : arg;
    switch (form) {
    case ARGS_NONE: return !arg[0];
    case ARGS_XY: return ints_only(arg, 2);
    case ARGS_XY_STEPS: return ints_only(arg, 3);
    case ARGS_KEY: return SDL_GetKeyFromName(key) != SDLK_UNKNOWN;
    case ARGS_TEXT: return arg[0] && strlen(arg) < sizeof(((SDL_TextInputEvent *)0)->text);
    case ARGS_WORD: return arg[0] && !strchr(arg, ' ');
    case ARGS_PATH: return arg[0] != '\0';
    case ARGS_EXPECT:  // a stage id, the view on screen, or how the last question was answered
        if (!strncmp(arg, "answer ", 7)) return !strcmp(arg + 7, "right") || !strcmp(arg + 7, "wrong") || !strcmp(arg + 7, "shown");
        if (!strncmp(arg, "decoding ", 9))
            return !strcmp(arg + 9, "greedy") || !strcmp(arg + 9, "sampling") || !strcmp(arg + 9, "beam");
        if (!strncmp(arg, "output ", 7)) return arg[7] && !strchr(arg + 7, ' ');
        if (!strncmp(arg, "back ", 5))
            return !strcmp(arg + 5, "loss") || !strcmp(arg + 5, "backward") || !strcmp(arg + 5, "adam") ||
                   !strcmp(arg + 5, "loss after") || !strcmp(arg + 5, "none");
        if (!strncmp(arg, "mistake ", 8)) return arg[8] && !strchr(arg + 8, ' ');
        if (!strncmp(arg, "check ", 6)) return !strcmp(arg + 6, "agree") || !strcmp(arg + 6, "disagree") || !strcmp(arg + 6, "none");
        if (!strncmp(arg, "showing ", 8)) return !strcmp(arg + 8, "gradients") || !strcmp(arg + 8, "values");
        return arg[0] && (!strchr(arg, ' ') || (!strncmp(arg, "view ", 5) && arg[5] && !strchr(arg + 5, ' ')));
    }
    return false;
}

// One line: TIME VERB ARGS, with exactly one space after the verb (a typed space is text).
static bool parse_line(const char *buf, const char *path, int ln, ReplayLine *l, Err *e) {
    int used = 0;
    if (sscanf(buf, "%ld %15s%n", &l->ms, l->verb, &used) < 2 || l->ms < 0)
        return err_set(e, "%s:%d: expected 'TIME EVENT ...', got '%s'", path, ln, buf);
    if (buf[used] == ' ') used++;
    snprintf(l->arg, sizeof l->arg, "%s", buf + used);
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        if (strcmp(verbs[i].verb, l->verb) != 0) continue;
        if (args_fit(verbs[i].form, l->arg)) return true;
        if (verbs[i].form == ARGS_KEY)
            return err_set(e, "%s:%d: unknown key name '%s' (SDL's names: Right, Left, PageDown, PageUp, "
                           "Home, End, Tab, Space, Escape, Return, F11, ...)", path, ln, l->arg);
        return err_set(e, "%s:%d: '%s %s' should be: TIME %s", path, ln, l->verb, l->arg, verbs[i].usage);
    }
    return err_set(e, "%s:%d: unknown event '%s' (known: key text click release drag move wheel resize "
                   "drop shot expect quit)", path, ln, l->verb);
}

Replayer *replayer_open(const char *path, Err *e) {
    FILE *f = fopen(path, "r");
    if (!f) return err_set(e, "%s: cannot open the replay file", path), NULL;
    Replayer *r = calloc(1, sizeof *r);
    char buf[600];
    int ln = 0;
    bool ok = r != NULL || err_code(e, ERR_MEMORY, "out of memory");
    while (ok && fgets(buf, sizeof buf, f)) {
        ln++;
        buf[strcspn(buf, "\r\n")] = '\0';
        if (!buf[0] || buf[0] == '#') continue;
        ReplayLine l = {0};
        ok = parse_line(buf, path, ln, &l, e);
        if (ok && r->n == REPLAY_MAX_LINES)
            ok = err_set(e, "%s:%d: more than %d events; a replay file holds at most that many", path, ln, REPLAY_MAX_LINES);
        ReplayLine *nl = ok && r->n == r->cap ? realloc(r->lines, sizeof *nl * (size_t)(r->cap ? 2 * r->cap : 64)) : NULL;
        if (ok && r->n == r->cap && !nl) ok = err_code(e, ERR_MEMORY, "out of memory");
        else if (nl) r->lines = nl, r->cap = r->cap ? 2 * r->cap : 64;
        if (ok) r->lines[r->n++] = l;
    }
    fclose(f);
    if (!ok) return replayer_close(r), NULL;
    return r;
}

// Moves the real pointer, so what depends on hovering (value readouts) replays too.
static void warp(int x, int y) {
    SDL_Window *w = SDL_GetMouseFocus();
    if (!w) w = SDL_GetKeyboardFocus();
    if (w) SDL_WarpMouseInWindow(w, x, y);
}

static bool push_event(const ReplayLine *l) {
    SDL_Event ev;
    memset(&ev, 0, sizeof ev);
    int x = 0, y = 0, d = 0;
    if (!strcmp(l->verb, "move")) {
        if (sscanf(l->arg, "%d %d", &x, &y) != 2) return false;
        warp(x, y);
        return true;
    }
    if (!strcmp(l->verb, "key")) {
        const char *name = l->arg;
        bool shift = !strncmp(name, "Shift+", 6);
        ev.type = SDL_KEYDOWN;
        ev.key.state = SDL_PRESSED;
        ev.key.keysym.sym = SDL_GetKeyFromName(shift ? name + 6 : name);
        ev.key.keysym.mod = shift ? KMOD_LSHIFT : KMOD_NONE;
        if (ev.key.keysym.sym == SDLK_UNKNOWN) return false;
    } else if (!strcmp(l->verb, "text")) {
        ev.type = SDL_TEXTINPUT;
        snprintf(ev.text.text, sizeof ev.text.text, "%s", l->arg);
    } else if (!strcmp(l->verb, "click") || !strcmp(l->verb, "release")) {
        if (sscanf(l->arg, "%d %d", &x, &y) != 2) return false;
        ev.type = l->verb[0] == 'c' ? SDL_MOUSEBUTTONDOWN : SDL_MOUSEBUTTONUP;
        warp(x, y);
        ev.button = (SDL_MouseButtonEvent){.type = ev.type, .button = SDL_BUTTON_LEFT, .clicks = 1, .x = x, .y = y};
    } else if (!strcmp(l->verb, "drag")) {
        if (sscanf(l->arg, "%d %d", &x, &y) != 2) return false;
        ev.type = SDL_MOUSEMOTION;
        ev.motion = (SDL_MouseMotionEvent){.type = SDL_MOUSEMOTION, .state = SDL_BUTTON_LMASK, .x = x, .y = y};
        warp(x, y);
    } else if (!strcmp(l->verb, "wheel")) {
        if (sscanf(l->arg, "%d %d %d", &x, &y, &d) != 3) return false;
        ev.type = SDL_MOUSEWHEEL;
        warp(x, y);
        ev.wheel = (SDL_MouseWheelEvent){.type = SDL_MOUSEWHEEL, .y = d, .preciseY = (float)d, .mouseX = x, .mouseY = y};
    } else if (!strcmp(l->verb, "drop")) {
        SDL_Window *w = SDL_GetKeyboardFocus();
        ev.type = SDL_DROPFILE;
        ev.drop = (SDL_DropEvent){.type = SDL_DROPFILE, .file = SDL_strdup(l->arg), .windowID = w ? SDL_GetWindowID(w) : 1};
        if (!ev.drop.file) return false;
    } else if (!strcmp(l->verb, "resize")) {
        if (sscanf(l->arg, "%d %d", &x, &y) != 2) return false;
        SDL_Window *w = SDL_GetKeyboardFocus();
        if (!w) w = SDL_GetWindowFromID(1);
        if (w) SDL_SetWindowSize(w, x, y);
        return true;
    } else {
        return false;
    }
    const int pushed = SDL_PushEvent(&ev);
    if (pushed <= 0 && ev.type == SDL_DROPFILE) SDL_free(ev.drop.file);  // (taken, SDL's to free)
    return pushed >= 0;
}

ReplayStep replayer_poll(Replayer *r, double ms, char *arg, size_t n) {
    bool pushed = false;  // events pushed by this call, which this frame has yet to handle
    while (r->next < r->n && r->lines[r->next].ms <= ms) {
        const ReplayLine *l = &r->lines[r->next];
        ReplayStep step = !strcmp(l->verb, "shot") ? REPLAY_SHOT : !strcmp(l->verb, "expect") ? REPLAY_EXPECT
                        : !strcmp(l->verb, "quit") ? REPLAY_QUIT : REPLAY_IDLE;
        if (step != REPLAY_IDLE) {
            if (pushed) return REPLAY_IDLE;  // the events before it take effect in a drawn frame first
            r->next++;
            snprintf(arg, n, "%s", l->arg);
            return step;
        }
        if (!push_event(l)) {
            fprintf(stderr, "stepformer: replay: SDL would not take '%s %s': %s\n", l->verb, l->arg, SDL_GetError());
            r->failures++;
        }
        pushed = true;
        r->next++;
    }
    return r->next >= r->n ? REPLAY_DONE : REPLAY_IDLE;
}

int replayer_failures(const Replayer *r) { return r ? r->failures : 0; }

void replayer_close(Replayer *r) {
    if (!r) return;
    free(r->lines);
    free(r);
}
