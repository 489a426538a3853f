// app_cards.c: the keys that step onto and off the opening and closing cards (view_card.c draws
// them): Left on the first stage, Right on the last; Right again goes on to the backward pass.
#include "feature.h"

static bool card_act(App *a, Cmd act) {
    if (!a->loaded || app_back_step(a)) return false;
    const Interp *it = a->session.it;
    const bool last = a->cursor == interp_n_stages(it) - 1 && interp_done(it);
    switch (act) {
    case CMD_NEXT:
        if (a->card == CARD_OPENING) a->card = CARD_NONE;
        else if (a->card == CARD_NONE && last) a->card = CARD_CLOSING;
        else if (a->card == CARD_CLOSING) {  // on to the backward pass, when it can be built
            a->card = CARD_NONE;
            if (!app_backward_act(a, CMD_NEXT) || !app_back_step(a)) a->card = CARD_CLOSING;
        } else return false;
        a->scroll[SCROLL_CARD] = 0;  // a card opens at its top
        return true;
    case CMD_PREV:
        if (a->card == CARD_CLOSING) a->card = CARD_NONE;
        else if (a->card == CARD_NONE && a->cursor == 0) a->card = CARD_OPENING;
        else if (a->card == CARD_NONE) return false;
        a->scroll[SCROLL_CARD] = 0;
        return true;  // (Left on the opening card: it is the first)
    default: return false;
    }
}

static Follow on_first(App *a, const Command *c) {
    return !a->editing && card_act(a, c->kind) ? FOLLOW_TAKEN : FOLLOW_NOTHING;
}

const Feature feature_cards = {.name = "cards", .on_first = on_first};
