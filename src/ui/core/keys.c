// keys.c: the key tables: which key or typed character asks for which command (keys.h).
#include "keys.h"

#include <stddef.h>

// Keys that do not type a character.
static const struct {
    Key key;
    Cmd act;
} key_table[] = {
    {KEY_RIGHT, CMD_NEXT},          {KEY_LEFT, CMD_PREV},          {KEY_SPACE, CMD_PLAY},
    {KEY_PAGEDOWN, CMD_NEXT_BLOCK}, {KEY_PAGEUP, CMD_PREV_BLOCK},  {KEY_HOME, CMD_FIRST},
    {KEY_END, CMD_LAST},            {KEY_TAB, CMD_NEXT_VIEW},      {KEY_F11, CMD_FULLSCREEN},
    {KEY_ESCAPE, CMD_QUIT},         {KEY_UP, CMD_PARAM_UP},        {KEY_DOWN, CMD_PARAM_DOWN},
    {KEY_F1, CMD_HELP},             {KEY_RETURN, CMD_OPEN},
};  // the keypad's + and - arrive as text too (one press, one step), so they are not here

// Keys that type a character arrive as text, whatever the keyboard layout.
static const struct {
    char text;
    Cmd act;
    int param;
} text_table[] = {
    {'1', CMD_HEAD, 0}, {'2', CMD_HEAD, 1}, {'3', CMD_HEAD, 2}, {'4', CMD_HEAD, 3},
    {'5', CMD_HEAD, 4}, {'6', CMD_HEAD, 5}, {'7', CMD_HEAD, 6}, {'8', CMD_HEAD, 7},
    {'9', CMD_HEAD, 8}, {'0', CMD_ALL_HEADS, 0}, {'e', CMD_EDIT, 0}, {'E', CMD_EDIT, 0},
    {'f', CMD_FULLSCREEN, 0}, {'F', CMD_FULLSCREEN, 0}, {'+', CMD_BIGGER, 0}, {'=', CMD_BIGGER, 0},
    {'-', CMD_SMALLER, 0}, {'_', CMD_SMALLER, 0}, {'h', CMD_THEME, 0}, {'H', CMD_THEME, 0},
    {'s', CMD_SCREENSHOT, 0}, {'S', CMD_HANDOUT, 0}, {'?', CMD_HELP, 0}, {'q', CMD_QUIT, 0},
    {'Q', CMD_QUIT, 0}, {'<', CMD_SLOWER, 0}, {'>', CMD_FASTER, 0}, {'[', CMD_PARAM_DEC, 0},
    {']', CMD_PARAM_INC, 0}, {'n', CMD_NEXT_LESSON, 0}, {'N', CMD_NEXT_LESSON, 0}, {'p', CMD_PREV_LESSON, 0},
    {'P', CMD_PREV_LESSON, 0}, {'l', CMD_LESSONS, 0}, {'L', CMD_LESSONS, 0},
    {'c', CMD_PIN, 0}, {'C', CMD_PIN, 0}, {'x', CMD_ABLATE_HEAD, 0}, {'X', CMD_ABLATE_HEAD, 0},
    {'m', CMD_ABLATE_MASK, 0}, {'M', CMD_ABLATE_MASK, 0}, {'o', CMD_ABLATE_POSITIONS, 0}, {'O', CMD_ABLATE_POSITIONS, 0},
    {'u', CMD_ABLATE_UNDO, 0}, {'U', CMD_ABLATE_UNDO, 0}, {'k', CMD_LINK, 0}, {'K', CMD_LINK, 0},
    {'b', CMD_BACKWARD, 0}, {'B', CMD_BACKWARD, 0}, {'d', CMD_GRADIENT, 0}, {'D', CMD_GRADIENT, 0},
    {'g', CMD_GRADCHECK, 0}, {'G', CMD_GRADCHECK, 0}, {'w', CMD_MISTAKE, 0}, {'W', CMD_MISTAKE, 0},
    {'j', CMD_FIRST_DIFF, 0}, {'J', CMD_FIRST_DIFF, 0}, {'z', CMD_DECODING, 0}, {'Z', CMD_DECODING, 0},
};

// While the input line is being edited.
static const struct {
    Key key;
    Cmd act;
} edit_table[] = {
    {KEY_RETURN, CMD_EDIT_ACCEPT}, {KEY_ESCAPE, CMD_EDIT_CANCEL}, {KEY_BACKSPACE, CMD_EDIT_BACKSPACE},
};

const KeyHelp key_help[] = {
    {"Right / Left", "next / previous stage"},
    {"PgDn / PgUp", "next / previous block (a clicker's buttons)"},
    {"Home / End", "first / last stage"},
    {"Space", "play / pause;  < >  slower / faster"},
    {"Tab / Shift+Tab", "next / previous view: stage, attention, decoding, positions, training, compare, patch"},
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
    {"B", "the backward pass: loss to embeddings, then Adam's step (B again: the forward pass)"},
    {"D;  G", "a gradient or its tensor;  G: check this stage's gradient against finite differences"},
    {"W;  J", "a learner's wrong backward formula: softmax, LayerNorm, dW in turn;  J: where it acts"},
    {"Z", "generating: greedy, then sampling, then beam search, then greedy again (the pass re-runs)"},
    {"+ / -", "bigger / smaller (for a projector)"},
    {"H", "high-contrast presenter theme"},
    {"F or F11", "fullscreen"},
    {"S", "save a PNG of the window (in the browser: a download)"},
    {"Shift+S", "write the lesson's handout page: narration, code, pictures (in the browser: a download)"},
    {"K", "copy the link of this place, for the browser page"},
    {"a question;  A;  T", "type + Enter or click its cell;  Right reveals, then goes on;  A: ask again;  T: presenter"},
    {"page links", "index.html?lesson=&stage=&view=&size=WxH&replay= (docs/browser.md)"},
    {"?", "this list"},
    {"Q or Esc", "quit (Esc first closes this list or the editor; in a browser, close the tab)"},
};
const int key_help_count = sizeof key_help / sizeof key_help[0];


bool keys_command(const Event *ev, bool editing, Command *out) {
    *out = (Command){CMD_NONE, 0, false};
    if (ev->kind == EV_KEY && editing) {
        for (size_t i = 0; i < sizeof edit_table / sizeof edit_table[0]; i++)
            if (edit_table[i].key == ev->key) return *out = (Command){edit_table[i].act, 0, false}, true;
        return false;
    }
    if (ev->kind == EV_KEY) {
        if (ev->key == KEY_OTHER) return false;
        if (ev->key == KEY_TAB && ev->shift) return *out = (Command){CMD_PREV_VIEW, 0, false}, true;
        if ((ev->key == KEY_PAGEDOWN || ev->key == KEY_PAGEUP) && ev->shift)  // the lesson's text, by a page
            return *out = (Command){CMD_SCROLL_TEXT, ev->key == KEY_PAGEDOWN ? 1 : -1, false}, true;
        for (size_t i = 0; i < sizeof key_table / sizeof key_table[0]; i++)
            if (key_table[i].key == ev->key) return *out = (Command){key_table[i].act, 0, false}, true;
        return false;
    }
    if (ev->kind == EV_TEXT && !editing && ev->text[0] && !ev->text[1])
        for (size_t i = 0; i < sizeof text_table / sizeof text_table[0]; i++)
            if (text_table[i].text == ev->text[0]) return *out = (Command){text_table[i].act, text_table[i].param, false}, true;
    return false;
}
