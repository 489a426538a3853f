// command.c: the commands' names and their queue (command.h).
#include "command.h"

#include <stddef.h>

const char *const cmd_names[CMD_COUNT] = {
    [CMD_NONE] = "none", [CMD_NEXT] = "next", [CMD_PREV] = "prev", [CMD_PLAY] = "play",
    [CMD_NEXT_BLOCK] = "next_block", [CMD_PREV_BLOCK] = "prev_block", [CMD_FIRST] = "first", [CMD_LAST] = "last",
    [CMD_HEAD] = "head", [CMD_ALL_HEADS] = "all_heads", [CMD_NEXT_VIEW] = "next_view", [CMD_PREV_VIEW] = "prev_view",
    [CMD_EDIT] = "edit", [CMD_FULLSCREEN] = "fullscreen", [CMD_BIGGER] = "bigger", [CMD_SMALLER] = "smaller",
    [CMD_THEME] = "theme", [CMD_SCREENSHOT] = "screenshot", [CMD_HELP] = "help", [CMD_QUIT] = "quit",
    [CMD_SLOWER] = "slower", [CMD_FASTER] = "faster", [CMD_PARAM_UP] = "param_up", [CMD_PARAM_DOWN] = "param_down",
    [CMD_PARAM_DEC] = "param_dec", [CMD_PARAM_INC] = "param_inc", [CMD_EDIT_ACCEPT] = "edit_accept",
    [CMD_EDIT_CANCEL] = "edit_cancel", [CMD_EDIT_BACKSPACE] = "edit_backspace", [CMD_NEXT_LESSON] = "next_lesson",
    [CMD_PREV_LESSON] = "prev_lesson", [CMD_LESSONS] = "lessons", [CMD_OPEN] = "open", [CMD_PIN] = "pin",
    [CMD_ABLATE_HEAD] = "ablate_head", [CMD_ABLATE_MASK] = "ablate_mask", [CMD_ABLATE_POSITIONS] = "ablate_positions",
    [CMD_ABLATE_UNDO] = "ablate_undo", [CMD_LINK] = "link", [CMD_BACKWARD] = "backward", [CMD_GRADIENT] = "gradient",
    [CMD_GRADCHECK] = "gradcheck", [CMD_MISTAKE] = "mistake", [CMD_FIRST_DIFF] = "first_diff",
    [CMD_HANDOUT] = "handout", [CMD_DECODING] = "decoding", [CMD_SCROLL_TEXT] = "scroll_text", [CMD_GOTO_STAGE] = "goto_stage", [CMD_GOTO_BLOCK] = "goto_block", [CMD_VIEW] = "view",
    [CMD_PE_PARAM] = "pe_param", [CMD_ZOOM_AREA] = "zoom_area", [CMD_TIMELINE] = "timeline",
    [CMD_BACK_STEP] = "back_step", [CMD_TRAIN_TOGGLE] = "train_toggle", [CMD_TRAIN_TASK] = "train_task",
    [CMD_TRAIN_SAVE] = "train_save", [CMD_TRAIN_USE] = "train_use", [CMD_OPEN_LESSON] = "open_lesson",
    [CMD_PATCH_CELL] = "patch_cell",
};

// Every command has its name: a missing one would be NULL (a test checks; a size check could not fail).
bool cmd_names_complete(void) {
    for (int i = 0; i < CMD_COUNT; i++)
        if (!cmd_names[i]) return false;
    return true;
}

bool cmd_push(CommandQueue *q, Command c) {
    if (q->n >= CMD_QUEUE_MAX) return false;
    q->items[(q->head + q->n++) % CMD_QUEUE_MAX] = c;
    return true;
}

bool cmd_pop(CommandQueue *q, Command *c) {
    if (q->n == 0) return false;
    *c = q->items[q->head];
    q->head = (q->head + 1) % CMD_QUEUE_MAX, q->n--;
    return true;
}
