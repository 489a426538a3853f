// main_web.c: the page's entry. It reads its link (link.h), then opens the window on the canvas
// at the place the link names, exactly as the desktop window would show it. Its files sit under
// WEB_ROOT (web_root.h): the lessons and fonts come packed with the page, a lesson's model is
// fetched from the site when the lesson opens.
#include <emscripten.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "course.h"
#include "kernels.h"
#include "link.h"
#include "web_root.h"
#include "window.h"

void web_bench(void);  // bench_web.c

static Link page;  // the link the page was opened with: read by the window for as long as it runs
static char lesson_path[256], error[400];

// The canvas: fixed at the size the link names, at the top-left corner with no margin, or the
// whole browser window, following it when it is resized.
static void size_canvas(int *w, int *h) {
    if (page.w) {
        EM_ASM({
            const c = document.getElementById("canvas");
            c.style.width = $0 + "px";
            c.style.height = $1 + "px";
        }, page.w, page.h);
        *w = page.w, *h = page.h;
        return;
    }
    EM_ASM({
        const c = document.getElementById("canvas");
        c.style.width = "100vw";
        c.style.height = "100vh";
    });
    *w = EM_ASM_INT({ return window.innerWidth; }), *h = EM_ASM_INT({ return window.innerHeight; });
    if (*w < WINDOW_MIN_W) *w = WINDOW_MIN_W;
    if (*h < WINDOW_MIN_H) *h = WINDOW_MIN_H;
}

// The lesson file the link names, or an error (the window then opens the default lesson).
static const char *lesson_file(void) {
    const char *name = page.lesson[0] ? page.lesson : "forward-pass";
    snprintf(lesson_path, sizeof lesson_path, "%s/lessons/%s.md", WEB_ROOT, name);
    if (access(lesson_path, R_OK) == 0 && course_is_lesson_name(strrchr(lesson_path, '/') + 1)) return lesson_path;
    snprintf(error, sizeof error, "link: lesson='%s' is not a lesson of the course (L lists them)", name);
    snprintf(lesson_path, sizeof lesson_path, "%s/lessons/forward-pass.md", WEB_ROOT);
    return lesson_path;
}

// A replay given in the link, as a file the window's replayer reads.
static const char *replay_file(void) {
    if (!page.replay[0]) return NULL;
    static const char path[] = "/tmp/replay.txt";
    FILE *f = fopen(path, "w");
    if (!f || fputs(page.replay, f) < 0 || fclose(f) != 0) {
        snprintf(error, sizeof error, "the replay could not be written to %s", path);
        return NULL;
    }
    return path;
}

int main(void) {
    // Which program the loader chose (index.html), as the GEMM ran it: "simd128 fma" where its
    // multiply-adds are fused, "simd128" where not (tests/web/test_page.py reads this line).
    printf("stepformer: the GEMM's kernel: %s\n", sgemm_kernel_name());
    const char *query = emscripten_run_script_string("window.location.search");
    if (!link_parse(query ? query : "", &page)) snprintf(error, sizeof error, "%s", page.error);
    if (page.bench && !error[0]) {
        web_bench();
        return 0;
    }
    WindowOptions o = {.course_dir = WEB_ROOT "/lessons", .view = -1, .announce = true};
    o.spec.lesson_path = page.model[0] && !page.lesson[0] ? NULL : lesson_file();
    static char model[sizeof WEB_ROOT + LINK_MODEL_MAX + 1];
    if (!error[0] && page.model[0]) snprintf(model, sizeof model, "%s/%s", WEB_ROOT, page.model), o.spec.model_path = model;
    if (!error[0] && page.input[0]) o.spec.input = page.input;
    if (!error[0] && page.ids[0]) o.spec.src_ids = page.ids;
    o.replay = replay_file();
    if (!error[0]) o.stage = page.stage[0] ? page.stage : NULL, o.view = page.view;
    o.error = error[0] ? error : NULL;
    size_canvas(&o.w, &o.h);
    window_run(&o, NULL, NULL);  // the page's animation frames run it from here
    return 0;
}
