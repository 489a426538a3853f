// input.c: the key tables, mouse handling, and recording / replaying sessions (see input.h).
#include "input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Keys that do not type a character.
static const struct {
    SDL_Keycode key;
    Action act;
} key_table[] = {
    {SDLK_RIGHT, DO_NEXT},          {SDLK_LEFT, DO_PREV},          {SDLK_SPACE, DO_PLAY},
    {SDLK_PAGEDOWN, DO_NEXT_BLOCK}, {SDLK_PAGEUP, DO_PREV_BLOCK},  {SDLK_HOME, DO_FIRST},
    {SDLK_END, DO_LAST},            {SDLK_TAB, DO_NEXT_VIEW},      {SDLK_F11, DO_FULLSCREEN},
    {SDLK_ESCAPE, DO_QUIT},         {SDLK_UP, DO_PARAM_UP},        {SDLK_DOWN, DO_PARAM_DOWN},
    {SDLK_F1, DO_HELP},             {SDLK_RETURN, DO_OPEN},        {SDLK_KP_ENTER, DO_OPEN},
};  // the keypad's + and - arrive as text too (one press, one step), so they are not here

// Keys that type a character arrive as text, whatever the keyboard layout.
static const struct {
    char text;
    Action act;
    int param;
} text_table[] = {
    {'1', DO_HEAD, 0}, {'2', DO_HEAD, 1}, {'3', DO_HEAD, 2}, {'4', DO_HEAD, 3},
    {'5', DO_HEAD, 4}, {'6', DO_HEAD, 5}, {'7', DO_HEAD, 6}, {'8', DO_HEAD, 7},
    {'9', DO_HEAD, 8}, {'0', DO_ALL_HEADS, 0}, {'e', DO_EDIT, 0}, {'E', DO_EDIT, 0},
    {'f', DO_FULLSCREEN, 0}, {'F', DO_FULLSCREEN, 0}, {'+', DO_BIGGER, 0}, {'=', DO_BIGGER, 0},
    {'-', DO_SMALLER, 0}, {'_', DO_SMALLER, 0}, {'h', DO_THEME, 0}, {'H', DO_THEME, 0},
    {'s', DO_SCREENSHOT, 0}, {'S', DO_SCREENSHOT, 0}, {'?', DO_HELP, 0}, {'q', DO_QUIT, 0},
    {'Q', DO_QUIT, 0}, {'<', DO_SLOWER, 0}, {'>', DO_FASTER, 0}, {'[', DO_PARAM_DEC, 0},
    {']', DO_PARAM_INC, 0}, {'n', DO_NEXT_LESSON, 0}, {'N', DO_NEXT_LESSON, 0}, {'p', DO_PREV_LESSON, 0},
    {'P', DO_PREV_LESSON, 0}, {'l', DO_LESSONS, 0}, {'L', DO_LESSONS, 0},
    {'c', DO_PIN, 0}, {'C', DO_PIN, 0}, {'x', DO_ABLATE_HEAD, 0}, {'X', DO_ABLATE_HEAD, 0},
    {'m', DO_ABLATE_MASK, 0}, {'M', DO_ABLATE_MASK, 0}, {'o', DO_ABLATE_POSITIONS, 0}, {'O', DO_ABLATE_POSITIONS, 0},
    {'u', DO_ABLATE_UNDO, 0}, {'U', DO_ABLATE_UNDO, 0}, {'k', DO_LINK, 0}, {'K', DO_LINK, 0},
};

// While the input line is being edited.
static const struct {
    SDL_Keycode key;
    Action act;
} edit_table[] = {
    {SDLK_RETURN, DO_EDIT_ACCEPT}, {SDLK_KP_ENTER, DO_EDIT_ACCEPT},
    {SDLK_ESCAPE, DO_EDIT_CANCEL}, {SDLK_BACKSPACE, DO_EDIT_BACKSPACE},
};

const KeyHelp key_help[] = {
    {"Right / Left", "next / previous stage"},
    {"PgDn / PgUp", "next / previous block (a clicker's buttons)"},
    {"Home / End", "first / last stage"},
    {"Space", "play / pause;  < >  slower / faster"},
    {"Tab / Shift+Tab", "next / previous view: stage, attention, decoding, positions, training"},
    {"1 - 9, 0", "show one head large;  0: all heads (and reset zoom)"},
    {"E", "edit the input sentence (Enter runs it, Esc cancels)"},
    {"wheel, drag", "zoom and pan the large heatmap"},
    {"wheel over the lesson", "scroll its text or its kernel;  Shift+PgDn / PgUp: the text by a page"},
    {"click", "a block on the map, a stage on the timeline, a head"},
    {"Up / Down, [ ]", "positions view: pick a setting, change it"},
    {"Space, Up / Down", "training view: start / stop training, choose the task"},
    {"N / P", "next / previous lesson of the course"},
    {"L", "the lesson list (Up / Down, Enter opens, Esc closes)"},
    {"C", "pin this stage; the Compare view sets it beside any other (C again: unpin)"},
    {"X, M, O;  U", "switch off the head on screen, every mask, the positional encoding;  U: all back on"},
    {"+ / -", "bigger / smaller (for a projector)"},
    {"H", "high-contrast presenter theme"},
    {"F or F11", "fullscreen"},
    {"S", "save a PNG of the window (in the browser: a download)"},
    {"K", "copy the link of this place, for the browser page"},
    {"page links", "index.html?lesson=&stage=&view=&size=WxH&replay= (README)"},
    {"?", "this list"},
    {"Q or Esc", "quit (Esc first closes this list or the editor; in a browser, close the tab)"},
};
const int key_help_count = sizeof key_help / sizeof key_help[0];

static bool key_event(App *a, const Ui *ui, const SDL_KeyboardEvent *k) {
    const SDL_Keycode sym = k->keysym.sym;
    if (a->editing) {
        for (size_t i = 0; i < sizeof edit_table / sizeof edit_table[0]; i++)
            if (edit_table[i].key == sym) return app_act(a, edit_table[i].act, 0);
        return false;
    }
    if (sym == SDLK_TAB && (k->keysym.mod & KMOD_SHIFT)) return app_act(a, DO_PREV_VIEW, 0);
    if ((sym == SDLK_PAGEDOWN || sym == SDLK_PAGEUP) && (k->keysym.mod & KMOD_SHIFT)) {  // the lesson's text
        app_scroll(a, ui, SCROLL_NARRATION, sym == SDLK_PAGEDOWN ? 1 : -1);
        return false;
    }
    for (size_t i = 0; i < sizeof key_table / sizeof key_table[0]; i++)
        if (key_table[i].key == sym) return app_act(a, key_table[i].act, 0);
    return false;
}

static bool text_event(App *a, const char *text) {
    if (a->editing) {
        app_type(a, text);
        return false;
    }
    if (text[0] && !text[1])
        for (size_t i = 0; i < sizeof text_table / sizeof text_table[0]; i++)
            if (text_table[i].text == text[0]) return app_act(a, text_table[i].act, text_table[i].param);
    return false;
}

bool input_handle(App *a, const Ui *ui, const SDL_Event *ev) {
    switch (ev->type) {
    case SDL_QUIT: a->quit = true; return false;
    case SDL_KEYDOWN: return key_event(a, ui, &ev->key);
    case SDL_TEXTINPUT: return text_event(a, ev->text.text);
    case SDL_MOUSEBUTTONDOWN:
        if (ev->button.button == SDL_BUTTON_LEFT) app_click(a, ui, ev->button.x, ev->button.y);
        return false;
    case SDL_MOUSEBUTTONUP: a->dragging = false; return false;
    case SDL_MOUSEMOTION: app_drag(a, ui, ev->motion.x, ev->motion.y); return false;
    case SDL_MOUSEWHEEL:  // where the pointer was when the wheel turned (SDL 2.26's mouseX/Y)
        if (ev->wheel.which != SDL_TOUCH_MOUSEID) app_wheel(a, ui, ev->wheel.mouseX, ev->wheel.mouseY, ev->wheel.y);
        return false;
    default: return false;
    }
}

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

void recorder_log(Recorder *r, const SDL_Event *ev, double ms) {
    if (!r) return;
    long t = (long)ms;
    switch (ev->type) {
    case SDL_KEYDOWN:
        fprintf(r->f, "%ld key %s%s\n", t, (ev->key.keysym.mod & KMOD_SHIFT) ? "Shift+" : "",
                SDL_GetKeyName(ev->key.keysym.sym));
        break;
    case SDL_TEXTINPUT: fprintf(r->f, "%ld text %s\n", t, ev->text.text); break;
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
typedef enum { ARGS_NONE, ARGS_XY, ARGS_XY_STEPS, ARGS_KEY, ARGS_TEXT, ARGS_WORD } ArgForm;
static const struct {
    const char *verb;
    ArgForm form;
    const char *usage;
} verbs[] = {
    {"key", ARGS_KEY, "key NAME"},         {"text", ARGS_TEXT, "text CHARACTERS"},
    {"click", ARGS_XY, "click X Y"},       {"release", ARGS_XY, "release X Y"},
    {"drag", ARGS_XY, "drag X Y"},         {"move", ARGS_XY, "move X Y"},
    {"wheel", ARGS_XY_STEPS, "wheel X Y STEPS"}, {"resize", ARGS_XY, "resize WIDTH HEIGHT"},
    {"shot", ARGS_WORD, "shot FILE.png"},  {"expect", ARGS_WORD, "expect STAGE_ID"},
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
                   "shot expect quit)", path, ln, l->verb);
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
    } else if (!strcmp(l->verb, "resize")) {
        if (sscanf(l->arg, "%d %d", &x, &y) != 2) return false;
        SDL_Window *w = SDL_GetKeyboardFocus();
        if (!w) w = SDL_GetWindowFromID(1);
        if (w) SDL_SetWindowSize(w, x, y);
        return true;
    } else {
        return false;
    }
    return SDL_PushEvent(&ev) >= 0;
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
