// course.c: a folder of lessons in course order (see course.h).
#define _XOPEN_SOURCE 700  // realpath
#include "course.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HEAD_BYTES = 4096 };  // a lesson's title is on one of its first lines

// A lesson is a .md file; files named in capitals (README.md, MISTAKES.md) are indexes, not lessons.
bool course_is_lesson_name(const char *name) {
    const size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".md") && !isupper((unsigned char)name[0]) && name[0] != '.';
}

// The first "# " heading of the file, or the file name when there is none.
static void read_title(CourseEntry *c, const char *name) {
    snprintf(c->title, sizeof c->title, "%s", name);
    FILE *f = fopen(c->path, "rb");
    if (!f) return;
    char buf[HEAD_BYTES + 1];
    const size_t n = fread(buf, 1, HEAD_BYTES, f);
    fclose(f);
    buf[n] = '\0';
    for (char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (line[0] == '#' && line[1] == ' ') {
            const size_t len = strcspn(line + 2, "\r\n");
            snprintf(c->title, sizeof c->title, "%.*s", (int)len, line + 2);
            return;
        }
}

static bool add(Course *c, const char *dir, const char *name, bool listed) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(strrchr(c->items[i].path, '/') + 1, name)) return true;  // listed twice: once
    if (c->n == COURSE_MAX) return false;
    CourseEntry *it = &c->items[c->n++];
    snprintf(it->path, sizeof it->path, "%s/%s", dir, name);
    it->listed = listed;
    read_title(it, name);
    return true;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// The README's links to lesson files of the folder, "(name.md)", in the order they appear.
static void listed_lessons(Course *c, const char *dir, char **names, int n) {
    char path[COURSE_PATH_MAX];
    snprintf(path, sizeof path, "%s/README.md", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f))
        for (char *p = strstr(line, "]("); p; p = strstr(p + 2, "](")) {
            const size_t len = strcspn(p + 2, ")");
            for (int i = 0; i < n; i++)
                if (strlen(names[i]) == len && !strncmp(p + 2, names[i], len)) add(c, dir, names[i], true);
        }
    fclose(f);
}

bool course_load(Course *c, const char *dir, Err *e) {
    memset(c, 0, sizeof *c);
    DIR *d = opendir(dir);
    if (!d) return err_set(e, "%s: cannot read this folder of lessons", dir);
    char *names[COURSE_MAX];
    int n = 0;
    for (struct dirent *en; (en = readdir(d)) && n < COURSE_MAX;)
        if (course_is_lesson_name(en->d_name) && (names[n] = strdup(en->d_name)) != NULL) n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    c->items = calloc(COURSE_MAX, sizeof *c->items);
    if (c->items) {
        listed_lessons(c, dir, names, n);
        for (int i = 0; i < n; i++) add(c, dir, names[i], false);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    return c->items || err_set(e, "out of memory for the lessons of %s", dir);
}

int course_find(const Course *c, const char *path) {
    char want[PATH_MAX], got[PATH_MAX];
    if (!path || !realpath(path, want)) return -1;
    for (int i = 0; i < c->n; i++)
        if (realpath(c->items[i].path, got) && !strcmp(want, got)) return i;
    return -1;
}

void course_free(Course *c) {
    free(c->items);
    memset(c, 0, sizeof *c);
}
