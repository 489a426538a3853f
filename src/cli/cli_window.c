// cli_window.c: the window as the command line opens it, for `lesson FILE` (cmd_lesson.c) and
// for stepformer with no command (cmd_window.c), and the folder of lessons it switches between.
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "course.h"
#include "data.h"
#include "window.h"

static void keep_status(int status, void *ctx) { *(int *)ctx = status; }

const char *cli_course_dir(const char *lesson, char *dir, size_t n) {
    data_path("lessons", dir, n);
    const char *slash = lesson ? strrchr(lesson, '/') : NULL;
    if (lesson) snprintf(dir, n, "%.*s", slash ? (slash == lesson ? 1 : (int)(slash - lesson)) : 1, slash ? lesson : ".");
    return dir;
}

bool cli_lesson_arg(CliOptions *o, const char *arg) {
    char dir[4352];
    Err e = {{0}};
    if (!strcmp(arg, "-")) return snprintf(o->lesson_file, sizeof o->lesson_file, "-"), true;  // the built-in lesson
    if (course_resolve(arg, data_path("lessons", dir, sizeof dir), o->lesson_file, sizeof o->lesson_file, &e)) return true;
    fprintf(stderr, "stepformer: %s\n", e.msg);
    return false;
}

int cli_open_window(const CliOptions *o) {
    char dir[4352];
    cli_course_dir(o->spec.lesson_path, dir, sizeof dir);
    WindowOptions w = {.spec = o->spec, .record = o->record, .replay = o->replay,
                       .w = o->width ? o->width : 1280, .h = o->height ? o->height : 800, .fit = !o->width,
                       .course_dir = dir, .view = -1, .presenter = o->presenter, .opening_card = true};
    int status = 1;
    window_run(&w, keep_status, &status);  // on the desktop it returns when the window closes
    return status;
}
