// platform_desktop.c: the desktop side of platform.h (X11 or Wayland through SDL, files on disk).
#include <SDL.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform.h"

// Whether this process can draw with a GPU: a DRM device (card or render node) or NVIDIA's that
// it may open. Without one, OpenGL is Mesa's llvmpipe on the CPU: loading LLVM added 50 ms to
// start-up and each frame took 15 ms to present under Xvfb, where SDL's own software renderer,
// drawing into the window's surface, takes under 1 ms.
static bool usable_device(const char *path) { return access(path, R_OK | W_OK) == 0; }

bool platform_prefers_software(void) {
    DIR *d = opendir("/dev/dri");
    bool found = false;
    char path[300];
    for (struct dirent *en; d && !found && (en = readdir(d));)
        if (!strncmp(en->d_name, "card", 4) || !strncmp(en->d_name, "renderD", 7))
            found = snprintf(path, sizeof path, "/dev/dri/%s", en->d_name) < (int)sizeof path && usable_device(path);
    if (d) closedir(d);
    return !(found || usable_device("/dev/nvidia0"));
}

bool platform_video_prepare(bool software_renderer, bool *paced, bool *high_dpi, Err *e) {
    const char *disp = getenv("DISPLAY"), *way = getenv("WAYLAND_DISPLAY");
    if ((!disp || !*disp) && (!way || !*way) && !getenv("SDL_VIDEODRIVER"))
        return err_set(e, "no display (DISPLAY is not set). Without a window, `stepformer export "
                       "LESSON --out DIR` writes every stage as a PNG");
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
        return err_set(e, "no display: SDL could not start video (%s). Without a window, "
                       "`stepformer export LESSON --out DIR` writes every stage as a PNG", SDL_GetError());
    SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
    if (software_renderer) {  // at default priority: SDL_RENDER_DRIVER and the like in the environment win
        SDL_SetHintWithPriority(SDL_HINT_RENDER_DRIVER, "software", SDL_HINT_DEFAULT);
        SDL_SetHintWithPriority(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0", SDL_HINT_DEFAULT);
    }
    // SDL 2.26's software renderer claims SDL_RENDERER_PRESENTVSYNC, and so keeps SDL from
    // simulating vsync, yet presents at once: left alone, a playing window spins a core. gfx.c
    // paces it when this is set and the renderer it got is the software one.
    *paced = true;
    *high_dpi = true;
    return true;
}

void platform_loop(PlatformFrame frame, void (*done)(void *ctx), void *ctx) {
    for (int wait; (wait = frame(ctx)) >= 0;)
        if (wait > 0) SDL_WaitEventTimeout(NULL, wait);  // idle: wake for the next event
    done(ctx);
}

bool platform_fetches_files(void) { return false; }

// The desktop reads every file at once (platform_reads_later is false), so the window never
// queues a read here; one queued anyway is refused at the next poll, never done halfway.
static bool queued;

bool platform_reads_later(void) { return false; }

void platform_read_queue(const char *path, uint64_t begin, uint64_t end, uint64_t file_bytes, void *to) {
    (void)path, (void)begin, (void)end, (void)file_bytes, (void)to;
    queued = true;
}

ReadsState platform_read_poll(double *progress, Err *e) {
    *progress = 1.0;
    if (!queued) return READS_DONE;
    queued = false;
    err_set(e, "a read was left for later, but the desktop reads every file at once (platform_reads_later)");
    return READS_FAILED;
}

void platform_read_cancel(void) { queued = false; }

bool platform_take_folder(char *path, size_t n) {
    (void)path, (void)n;
    return false;
}

bool platform_file_ready(const char *path, double *progress, Err *e) {
    (void)path, (void)e;
    *progress = 1.0;
    return true;  // on disk: whoever opens it reports a missing file
}

bool platform_file_settled(const char *path, double *progress, Err *e) { return platform_file_ready(path, progress, e); }
bool platform_file_head(const char *path, double *progress, Err *e) { return platform_file_ready(path, progress, e); }

void platform_deliver(const char *path, char *msg, unsigned long n) { snprintf(msg, n, "saved %s", path); }

void platform_share_link(const char *query, char *msg, unsigned long n) {
    char link[600];
    snprintf(link, sizeof link, "index.html%s", query);
    const bool copied = SDL_SetClipboardText(link) == 0;
    snprintf(msg, n, "%s%s", copied ? "copied: " : "link: ", link);
}

bool platform_may_quit(void) { return true; }

void platform_title(const char *title) {
    SDL_Window *w = SDL_GetWindowFromID(1);  // the one window
    if (w) SDL_SetWindowTitle(w, title);
}
