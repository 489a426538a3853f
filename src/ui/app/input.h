// input.h: the platform's events (events.h) -> commands (command.h), applied to the app.
#ifndef STEPFORMER_INPUT_H
#define STEPFORMER_INPUT_H

#include "dispatch.h"
#include "events.h"
#include "keys.h"

// Applies one event to the app. Returns true when the user asked for a screenshot.
bool input_handle(App *a, const Ui *ui, const Event *ev);

#endif
