// keys.h: the platform's key events (events.h) -> commands (command.h), through one table for
// keys that type nothing, one for typed characters (whatever the keyboard layout) and one for
// the input line while it is edited; and the key list that `?` shows.
#ifndef STEPFORMER_KEYS_H
#define STEPFORMER_KEYS_H

#include "command.h"
#include "events.h"

// The command a key or a typed character asks for (editing: the input line is being edited, so
// characters are typed, not commands). False when it asks for none.
bool keys_command(const Event *ev, bool editing, Command *out);

// One entry of the key list that `?` shows.
typedef struct {
    const char *keys;
    const char *what;
} KeyHelp;
extern const KeyHelp key_help[];
extern const int key_help_count;

#endif
