// platform.h: what differs between the desktop and the browser, below the window's code.
//
// The window is SDL on both: the render vocabulary (gfx.h) and SDL's events are shared. What
// is not shared lives behind these calls, with one side for each platform:
//   platform_desktop.c  a Linux desktop: X11 or Wayland, fontconfig, files on disk, a blocking loop
//   platform_web.c      a browser page (emscripten): the canvas, fonts that come with the page,
//                       files fetched from the site as they are needed, requestAnimationFrame
// The app and the views above never ask which one runs.
#ifndef STEPFORMER_PLATFORM_H
#define STEPFORMER_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"

// Before the window opens: whether there is a display, and hints for the renderer. Sets *paced
// when the window must hold frames apart itself (a renderer that does not wait for the display),
// and *high_dpi when the window may draw at the screen's own pixel density.
bool platform_video_prepare(bool software_renderer, bool *paced, bool *high_dpi, Err *e);
// Whether SDL's software renderer is the one to use (no GPU to draw with).
bool platform_prefers_software(void);

// One frame of the main loop: returns how many milliseconds the loop may sleep waiting for an
// event before the next frame (0: at once), or a negative number to end the loop.
typedef int (*PlatformFrame)(void *ctx);
// Runs `frame` until it asks to end, then calls `done(ctx)`. On the desktop this returns after
// `done`; in the browser it returns at once and the page's animation frames drive the loop, so
// ctx must outlive the call (allocate it, never on the caller's stack).
void platform_loop(PlatformFrame frame, void (*done)(void *ctx), void *ctx);

// Whether files may have to be fetched before they open (the browser); false where every file
// the program reads is on disk already, and asking platform_file_ready is never needed.
bool platform_fetches_files(void);
// A file the program reads (a lesson's model): true when it can be opened now. Otherwise it
// is being fetched (in the browser, from the site): *progress gets the fraction so far (0-1),
// and a fetch that failed sets e and returns false with *progress < 0.
bool platform_file_ready(const char *path, double *progress, Err *e);
// Whether a model's weights are read after it is placed (the browser: a weights file of the
// user's disk, or of the site, is read by range straight into the model's memory, never held
// whole): the window then opens a model with its reads left for later (safetensors.h: StReads),
// queues them here and draws while they are done. False on the desktop, which reads at once.
bool platform_reads_later(void);
// Queues a read: bytes [begin, end) of `path` (a file of file_bytes bytes when its header was
// read) into `to`, which must stay valid until the reads are done or cancelled.
void platform_read_queue(const char *path, uint64_t begin, uint64_t end, uint64_t file_bytes, void *to);
typedef enum { READS_RUNNING, READS_DONE, READS_FAILED } ReadsState;
// How the queued reads are going: *progress, the fraction of their bytes read (0-1); a failed
// read sets e (naming the file) and ends them all.
ReadsState platform_read_poll(double *progress, Err *e);
// Drops the queued reads: nothing more is written to their places (the model they go to closes).
void platform_read_cancel(void);
// A model folder the user gave the page (its file picker, or dropped on the canvas), its files
// written into the page's file system: its path into `path` (n bytes), once; false when none
// waits (always on the desktop).
bool platform_take_folder(char *path, size_t n);
// The same for a model folder's weights file, of which only the header must be here now: in
// the browser a stand-in holds it (src/web/reader.js), and the tensors are read by range later
// (platform_read_queue). On the desktop, platform_file_ready.
bool platform_file_head(const char *path, double *progress, Err *e);
// The same for a file a folder may lack (a model folder's tokenizer): true also once the site
// has said it has no such file (404), which is then not an error.
bool platform_file_settled(const char *path, double *progress, Err *e);
// A file the program has written for the user (a PNG, a trained model): in the browser it is
// offered as a download, on the desktop it stays where it was written. Returns a message that
// says where it went ("saved shot.png", "downloaded shot.png").
void platform_deliver(const char *path, char *msg, unsigned long n);
// The link that opens the browser page at `query` ("?lesson=...&stage=...&view=..."): copied to
// the clipboard; msg says what it is. In the browser it is the page's own address with the
// query; on the desktop, index.html of the site (scripts/web.sh build) with it.
void platform_share_link(const char *query, char *msg, unsigned long n);
// Whether Q and Esc may end the program: not in a page, where an Esc meant for something else
// would leave the class a blank canvas (a page is left by closing its tab).
bool platform_may_quit(void);
// The window's title (the page's document.title in the browser).
void platform_title(const char *title);

#endif
