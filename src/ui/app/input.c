// input.c: the key tables and the pointer: the platform's events (events.h) -> app actions.
#include "input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Keys that do not type a character.
static const struct {
    Key key;
    Action act;
} key_table[] = {
    {KEY_RIGHT, DO_NEXT},          {KEY_LEFT, DO_PREV},          {KEY_SPACE, DO_PLAY},
    {KEY_PAGEDOWN, DO_NEXT_BLOCK}, {KEY_PAGEUP, DO_PREV_BLOCK},  {KEY_HOME, DO_FIRST},
    {KEY_END, DO_LAST},            {KEY_TAB, DO_NEXT_VIEW},      {KEY_F11, DO_FULLSCREEN},
    {KEY_ESCAPE, DO_QUIT},         {KEY_UP, DO_PARAM_UP},        {KEY_DOWN, DO_PARAM_DOWN},
    {KEY_F1, DO_HELP},             {KEY_RETURN, DO_OPEN},
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
    {'s', DO_SCREENSHOT, 0}, {'S', DO_HANDOUT, 0}, {'?', DO_HELP, 0}, {'q', DO_QUIT, 0},
    {'Q', DO_QUIT, 0}, {'<', DO_SLOWER, 0}, {'>', DO_FASTER, 0}, {'[', DO_PARAM_DEC, 0},
    {']', DO_PARAM_INC, 0}, {'n', DO_NEXT_LESSON, 0}, {'N', DO_NEXT_LESSON, 0}, {'p', DO_PREV_LESSON, 0},
    {'P', DO_PREV_LESSON, 0}, {'l', DO_LESSONS, 0}, {'L', DO_LESSONS, 0},
    {'c', DO_PIN, 0}, {'C', DO_PIN, 0}, {'x', DO_ABLATE_HEAD, 0}, {'X', DO_ABLATE_HEAD, 0},
    {'m', DO_ABLATE_MASK, 0}, {'M', DO_ABLATE_MASK, 0}, {'o', DO_ABLATE_POSITIONS, 0}, {'O', DO_ABLATE_POSITIONS, 0},
    {'u', DO_ABLATE_UNDO, 0}, {'U', DO_ABLATE_UNDO, 0}, {'k', DO_LINK, 0}, {'K', DO_LINK, 0},
    {'b', DO_BACKWARD, 0}, {'B', DO_BACKWARD, 0}, {'d', DO_GRADIENT, 0}, {'D', DO_GRADIENT, 0},
    {'g', DO_GRADCHECK, 0}, {'G', DO_GRADCHECK, 0}, {'w', DO_MISTAKE, 0}, {'W', DO_MISTAKE, 0},
    {'j', DO_FIRST_DIFF, 0}, {'J', DO_FIRST_DIFF, 0}, {'z', DO_DECODING, 0}, {'Z', DO_DECODING, 0},
};

// While the input line is being edited.
static const struct {
    Key key;
    Action act;
} edit_table[] = {
    {KEY_RETURN, DO_EDIT_ACCEPT}, {KEY_ESCAPE, DO_EDIT_CANCEL}, {KEY_BACKSPACE, DO_EDIT_BACKSPACE},
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
    {"J", "a mistake lesson: its first stage that differs from the correct program, in Compare"},
    {"X, M, O;  U", "switch off the head on screen, every mask, the positional encoding;  U: all back on"},
    {"B", "the backward pass: from the loss back to the embeddings, then Adam's step (B again: forward)"},
    {"D;  G", "a gradient or its tensor;  G: check this stage's gradient against finite differences"},
    {"W", "the backward pass with a learner's wrong formula (softmax, LayerNorm, dW), then the right one again"},
    {"Z", "generating: greedy, then sampling, then beam search, then greedy again (the pass re-runs)"},
    {"+ / -", "bigger / smaller (for a projector)"},
    {"H", "high-contrast presenter theme"},
    {"F or F11", "fullscreen"},
    {"S", "save a PNG of the window (in the browser: a download)"},
    {"Shift+S", "write the lesson's handout page: narration, code, pictures (in the browser: a download)"},
    {"K", "copy the link of this place, for the browser page"},
    {"a question;  T", "type + Enter or click its cell;  Right reveals, Right goes on;  T: presenter mode"},
    {"page links", "index.html?lesson=&stage=&view=&size=WxH&replay= (README)"},
    {"?", "this list"},
    {"Q or Esc", "quit (Esc first closes this list or the editor; in a browser, close the tab)"},
};
const int key_help_count = sizeof key_help / sizeof key_help[0];

static bool key_event(App *a, const Ui *ui, Key sym, bool shift) {
    if (a->editing) {
        for (size_t i = 0; i < sizeof edit_table / sizeof edit_table[0]; i++)
            if (edit_table[i].key == sym) return app_act(a, edit_table[i].act, 0);
        return false;
    }
    if (sym == KEY_OTHER) return false;
    if (sym == KEY_TAB && shift) return app_act(a, DO_PREV_VIEW, 0);
    if ((sym == KEY_PAGEDOWN || sym == KEY_PAGEUP) && shift) {  // the lesson's text
        app_scroll(a, ui, a->card != CARD_NONE ? SCROLL_CARD : SCROLL_NARRATION, sym == KEY_PAGEDOWN ? 1 : -1);
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

static bool dispatch(App *a, const Ui *ui, const Event *ev) {
    switch (ev->kind) {
    case EV_QUIT: a->quit = true; return false;
    case EV_KEY: return key_event(a, ui, ev->key, ev->shift);
    case EV_TEXT: return text_event(a, ev->text);
    case EV_PRESS: app_click(a, ui, ev->x, ev->y); return false;
    case EV_RELEASE: a->dragging = false; return false;
    case EV_MOTION: app_drag(a, ui, ev->x, ev->y); return false;
    case EV_WHEEL: app_wheel(a, ui, ev->x, ev->y, ev->steps); return false;
    case EV_OTHER: return false;
    }
    return false;
}

bool input_handle(App *a, const Ui *ui, const Event *ev) {
    bool shot = false;
    if (!app_quiz_event(a, ui, (int)ev->kind, (int)ev->key, ev->text, ev->x, ev->y)) shot = dispatch(a, ui, ev);
    app_quiz_arrive(a);
    return shot;
}
