// input.h: the platform's events (events.h) -> app actions, through the key tables.
#ifndef STEPFORMER_INPUT_H
#define STEPFORMER_INPUT_H

#include "actions.h"
#include "events.h"

// Applies one event to the app. Returns true when the user asked for a screenshot.
bool input_handle(App *a, const Ui *ui, const Event *ev);

#endif
