// platform_web.c: the browser side of platform.h (emscripten). The page's animation frames run
// the loop; a file that is not in the in-memory file system yet is fetched from the site, next
// to index.html, under the same path below WEB_ROOT; files written for the user are downloads.
#include <SDL.h>
#include <emscripten.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"
#include "web_root.h"

bool platform_prefers_software(void) { return true; }  // the same pixels as `stepformer export`

bool platform_video_prepare(bool software_renderer, bool *paced, bool *high_dpi, Err *e) {
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) return err_set(e, "SDL could not start video in the page: %s", SDL_GetError());
    if (software_renderer) SDL_SetHint(SDL_HINT_RENDER_DRIVER, "software");
    *paced = false;  // requestAnimationFrame holds frames to the display's rate
    // SDL 2.26's software framebuffer in a page fills the canvas at the page's pixels, not the
    // screen's: at a devicePixelRatio of 2 a high-density canvas got a picture in its top-left
    // quarter. The browser scales the canvas instead (and the pointer's pixels stay the picture's).
    *high_dpi = false;
    return true;
}

typedef struct {
    PlatformFrame frame;
    void (*done)(void *ctx);
    void *ctx;
} LoopState;

static LoopState loop_state;  // the one loop the page runs; only this file sees it

static void one_frame(void *arg) {
    LoopState *s = arg;
    if (s->frame(s->ctx) >= 0) return;
    emscripten_cancel_main_loop();
    s->done(s->ctx);
    // The loop ends only when a replay says quit: say so, rather than leave a blank canvas.
    EM_ASM({
        document.getElementById("canvas").style.display = "none";
        document.getElementById("loading").style.display = "block";
        document.getElementById("what").textContent = "stepformer has stopped: its replay ended. Reload the page to start again.";
        document.getElementById("bar").style.display = "none";
    });
}

void platform_loop(PlatformFrame frame, void (*done)(void *ctx), void *ctx) {
    loop_state = (LoopState){frame, done, ctx};
    emscripten_set_main_loop_arg(one_frame, &loop_state, 0, 0);
}

// ---- files fetched on demand ----
enum { MAX_FETCHES = 64 };
typedef enum { FETCH_RUNNING, FETCH_FAILED, FETCH_MISSING } FetchState;  // MISSING: the site has no such file (404)
typedef struct {
    char path[512];
    FetchState state;
    double progress;
    char why[160];
    bool head;  // only the header, for a stand-in (src/web/reader.js): the rest is read by range
} Fetch;

static Fetch fetches[MAX_FETCHES];
static int n_fetches;

static void fetched(unsigned handle, void *arg, const char *file) {
    (void)handle, (void)file;
    Fetch *f = arg;
    f->progress = 1.0;  // the file now exists: the next platform_file_ready finds it
}

static void fetch_failed(unsigned handle, void *arg, int status) {
    (void)handle;
    Fetch *f = arg;
    enum { HTTP_NOT_FOUND = 404 };
    f->state = status == HTTP_NOT_FOUND ? FETCH_MISSING : FETCH_FAILED;
    snprintf(f->why, sizeof f->why, "the site answered %d", status);
}

static void fetch_progress(unsigned handle, void *arg, int percent) {
    (void)handle;
    ((Fetch *)arg)->progress = percent / 100.0;
}

static bool make_parents(const char *path) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(dir, 0755) != 0 && errno != EEXIST) return false;
            *p = '/';
        }
    return true;
}

// An absolute path with its "." and ".." parts resolved (lesson files name their models as
// ../assets/models/...); false if it climbs above the root or does not fit.
static bool normalise(char *out, size_t cap, const char *path) {
    size_t k = 0;
    if (path[0] != '/') return false;
    for (const char *p = path; *p;) {
        while (*p == '/') p++;
        const size_t n = strcspn(p, "/");
        if (n == 0) break;
        if (n == 1 && p[0] == '.') {
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (k == 0) return false;
            while (k > 0 && out[k - 1] != '/') k--;
            if (k > 0) k--;  // the slash before the part dropped
        } else {
            if (k + 1 + n + 1 > cap) return false;
            out[k++] = '/';
            memcpy(out + k, p, n), k += n;
        }
        p += n;
    }
    out[k] = '\0';
    return true;
}

bool platform_fetches_files(void) { return true; }

// ---- a folder the user gave the page (index.html writes its files, then calls this) ----
static char given_folder[512];

EMSCRIPTEN_KEEPALIVE void web_open_folder(const char *path) { snprintf(given_folder, sizeof given_folder, "%s", path); }

bool platform_take_folder(char *path, size_t n) {
    if (!given_folder[0]) return false;
    snprintf(path, n, "%s", given_folder);
    given_folder[0] = '\0';
    return true;
}

static bool file_ready(const char *asked, bool may_lack, bool head, double *progress, Err *e);

bool platform_file_ready(const char *asked, double *progress, Err *e) { return file_ready(asked, false, false, progress, e); }
bool platform_file_settled(const char *asked, double *progress, Err *e) { return file_ready(asked, true, false, progress, e); }
bool platform_file_head(const char *asked, double *progress, Err *e) { return file_ready(asked, false, true, progress, e); }

// How the header fetch of a stand-in goes (reader.js: pageHeads): running, or failed (f says why).
static void head_state(Fetch *f) {
    enum { HTTP_NOT_FOUND = 404 };
    const int state = EM_ASM_INT({
        const h = pageHeads[UTF8ToString($0)];
        if (!h || !h.state) return 0;
        stringToUTF8(h.why, $1, $2);
        return h.state;
    }, f->path, f->why, (int)sizeof f->why);
    if (state) f->state = state == HTTP_NOT_FOUND ? FETCH_MISSING : FETCH_FAILED;
}

static bool file_ready(const char *asked, bool may_lack, bool head, double *progress, Err *e) {
    *progress = 1.0;
    if (access(asked, R_OK) == 0) return true;
    char path[512];
    const size_t root = strlen(WEB_ROOT);
    if (!normalise(path, sizeof path, asked) || strncmp(path, WEB_ROOT "/", root + 1) != 0)
        return true;  // not one of the site's files: whoever opens it reports it missing
    for (int i = 0; i < n_fetches; i++)
        if (!strcmp(fetches[i].path, path)) {
            if (fetches[i].head && fetches[i].state == FETCH_RUNNING) head_state(&fetches[i]);
            if (fetches[i].state == FETCH_MISSING && may_lack) return true;
            const bool failed = fetches[i].state != FETCH_RUNNING;
            *progress = failed ? -1.0 : fetches[i].progress;
            if (failed) err_set(e, "%s could not be fetched: %s", path + root + 1, fetches[i].why);
            return false;
        }
    if (n_fetches == MAX_FETCHES) return err_set(e, "too many files fetched at once (%d)", MAX_FETCHES), *progress = -1, false;
    Fetch *f = &fetches[n_fetches++];
    *f = (Fetch){.state = FETCH_RUNNING};
    snprintf(f->path, sizeof f->path, "%s", path);
    if (!make_parents(path)) {
        f->state = FETCH_FAILED;
        snprintf(f->why, sizeof f->why, "its folder could not be made");
    } else if (head) {
        f->head = true;
        EM_ASM({ pageFetchHead(UTF8ToString($0), UTF8ToString($1)); }, path + root + 1, path);
    } else {
        emscripten_async_wget2(path + root + 1, path, "GET", "", f, fetched, fetch_failed, fetch_progress);
    }
    *progress = 0.0;
    return false;
}

// ---- reads by range into place (src/web/reader.js) ----
bool platform_reads_later(void) { return true; }

void platform_read_queue(const char *path, uint64_t begin, uint64_t end, uint64_t file_bytes, void *to) {
    EM_ASM({ pageQueue(UTF8ToString($0), $1, $2, $3, $4); }, path, (double)begin, (double)end, (double)file_bytes, to);
}

ReadsState platform_read_poll(double *progress, Err *e) {
    char why[300] = "";
    const int state = EM_ASM_INT({ return pageReadPoll($0, $1, $2); }, progress, why, (int)sizeof why);
    if (state == 2) return err_set(e, "%s", why), READS_FAILED;
    return state == 1 ? READS_DONE : READS_RUNNING;
}

void platform_read_cancel(void) {
    EM_ASM({ pageReadCancel(); });
}

void platform_deliver(const char *path, char *msg, unsigned long n) {
    const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    // clang-format off
    EM_ASM({
        const data = FS.readFile(UTF8ToString($0));
        const a = document.createElement("a");
        a.href = URL.createObjectURL(new Blob([data], {type: "application/octet-stream"}));
        a.download = UTF8ToString($1);
        document.body.appendChild(a);
        a.click();
        setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    }, path, name);
    // clang-format on
    snprintf(msg, n, "downloaded %s", name);
}

void platform_share_link(const char *query, char *msg, unsigned long n) {
    char link[900];
    // clang-format off
    EM_ASM({
        const url = location.origin + location.pathname + UTF8ToString($0);
        stringToUTF8(url, $1, $2);
        if (navigator.clipboard) navigator.clipboard.writeText(url).catch(function () {});
    }, query, link, (int)sizeof link);
    // clang-format on
    snprintf(msg, n, "copied: %s", link);
}

bool platform_may_quit(void) { return false; }

void platform_title(const char *title) {
    EM_ASM({ document.title = UTF8ToString($0); }, title);
}
