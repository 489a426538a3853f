// command.h: the one vocabulary of what a person asks the window to do. A key (keys.h's tables)
// and a click (a hot zone a view recorded, ui.h) both become a Command; app/app.c applies each
// in turn, offering it to the features' hooks (app/app.c's table) and then to the app itself.
#ifndef STEPFORMER_COMMAND_H
#define STEPFORMER_COMMAND_H

#include <stdbool.h>

typedef enum {
    CMD_NONE,
    // ---- from keys (keys.c) ----
    CMD_NEXT, CMD_PREV, CMD_PLAY, CMD_NEXT_BLOCK, CMD_PREV_BLOCK, CMD_FIRST, CMD_LAST,
    CMD_HEAD,  // param: the head (also a click on a head)
    CMD_ALL_HEADS, CMD_NEXT_VIEW, CMD_PREV_VIEW,
    CMD_EDIT,  // E, or a click on the input line
    CMD_FULLSCREEN, CMD_BIGGER, CMD_SMALLER, CMD_THEME, CMD_SCREENSHOT, CMD_HELP, CMD_QUIT,
    CMD_SLOWER, CMD_FASTER, CMD_PARAM_UP, CMD_PARAM_DOWN, CMD_PARAM_DEC, CMD_PARAM_INC,
    CMD_EDIT_ACCEPT, CMD_EDIT_CANCEL, CMD_EDIT_BACKSPACE,
    CMD_NEXT_LESSON, CMD_PREV_LESSON, CMD_LESSONS, CMD_OPEN, CMD_PIN,
    CMD_ABLATE_HEAD, CMD_ABLATE_MASK, CMD_ABLATE_POSITIONS, CMD_ABLATE_UNDO, CMD_LINK,
    CMD_BACKWARD, CMD_GRADIENT, CMD_GRADCHECK,  // B: into / out of the backward pass; D: tensor or gradient; G: check
    CMD_MISTAKE,     // W: the backward pass with a learner's wrong formula (cycles; back to the right one)
    CMD_FIRST_DIFF,  // J: a mistake lesson's first stage that differs from its correct program, in Compare
    CMD_HANDOUT,     // Shift+S: the open lesson's handout page (handout.h)
    CMD_DECODING,    // Z: greedy -> sampling -> beam search -> greedy (app_decode.c)
    CMD_SCROLL_TEXT, // Shift+PgDn / PgUp: the lesson's text (or the card's) by a page; param: +1 or -1
    // ---- from clicks on the zones the views record (ui_hot) ----
    CMD_GOTO_STAGE,   // param: stage index
    CMD_GOTO_BLOCK,   // param: the first stage of a block on the map (the backward pass: its step)
    CMD_VIEW,         // param: ViewKind
    CMD_PE_PARAM,     // param: parameter * 2 + (1 = increase, 0 = decrease)
    CMD_ZOOM_AREA,    // the zoomable heatmap: wheel zooms, drag pans
    CMD_TIMELINE,     // param: the number of steps spread over the zone's width
    CMD_BACK_STEP,    // param: a step of the backward pass (a click on the timeline past its stages)
    CMD_TRAIN_TOGGLE, // start or stop training
    CMD_TRAIN_TASK,   // param: the Task to train next
    CMD_TRAIN_SAVE,   // save the trained model
    CMD_TRAIN_USE,    // step through the trained model's forward pass
    CMD_OPEN_LESSON,  // param: the lesson's place in the course
    CMD_PATCH_CELL,   // param: (heads << 20) | (row << 10) | column of a Patch view sweep
    CMD_COUNT
} Cmd;

extern const char *const cmd_names[CMD_COUNT];
bool cmd_names_complete(void);  // whether every Cmd has its name (tested)

// One thing asked: what, and its parameter (a head, a stage, a view; 0 when it takes none).
typedef struct {
    Cmd kind;
    int param;
    // A click's, or one that a feature asks to follow: applied at once. A key's (false) first
    // passes what holds the keys (the help list, the lesson list, the cards, the backward pass)
    // and clears the error on screen.
    bool direct;
} Command;

// Commands waiting to be applied, first in first out: the input's, and what features ask to
// follow (J: the Compare view, then the stage). The app drains it after each input event, so that
// a key is read in the mode the one before it left (E, then typing), and once a frame.
enum { CMD_QUEUE_MAX = 32 };
typedef struct {
    Command items[CMD_QUEUE_MAX];
    int head, n;
} CommandQueue;

// Adds c; false (and nothing added) when the queue is full.
bool cmd_push(CommandQueue *q, Command c);
// Takes the oldest command into *c; false when there is none.
bool cmd_pop(CommandQueue *q, Command *c);

#endif
