// fuzz_replay.c: a replay file (--replay). The bytes are written to a file, which
// replayer_open reads as the window does; a file it accepts is played to its end into SDL's
// event queue (SDL's video is the dummy driver: no window, no display).
#include <SDL.h>
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "events.h"
#include "fuzz.h"

static char path[64];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {  // key names need the keyboard's key map
        fprintf(stderr, "fuzz_replay: SDL: %s\n", SDL_GetError());
        abort();
    }
    snprintf(path, sizeof path, "/tmp/fuzz_replay.%ld.replay", (long)getpid());
    atexit(remove_file);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) abort();
    Err e = {{0}};
    Replayer *r = replayer_open(path, &e);
    if (!r) {
        assert(e.msg[0]);
        return 0;
    }
    char arg[512];
    ReplayStep step = REPLAY_IDLE;
    for (size_t round = 0; step != REPLAY_DONE; round++) {
        assert(round <= 2 * n + 2);  // a directive waits one frame; nothing waits longer
        step = replayer_poll(r, INFINITY, arg, sizeof arg);  // every line is due, however late
        assert(strlen(arg) < sizeof arg || step == REPLAY_IDLE || step == REPLAY_DONE);
    }
    replayer_close(r);
    Event ev;
    while (events_poll(&ev)) {  // drained as the window does: a drop's path is the reader's to free
    }
    return 0;
}
