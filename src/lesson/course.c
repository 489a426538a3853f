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

static CourseEntry *add(Course *c, const char *dir, const char *name, bool listed) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(strrchr(c->items[i].path, '/') + 1, name)) return NULL;  // listed twice: once
    if (c->n == COURSE_MAX) return NULL;
    CourseEntry *it = &c->items[c->n++];
    snprintf(it->path, sizeof it->path, "%s/%s", dir, name);
    it->listed = listed;
    read_title(it, name);
    return it;
}

// The number of a README line that is a numbered item, "20. [...](...)", or 0.
static int item_number(const char *line) {
    char *end;
    const long k = strtol(line, &end, 10);
    return end != line && isdigit((unsigned char)line[0]) && end[0] == '.' && end[1] == ' ' && k > 0 && k < 100000
               ? (int)k : 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// The README's links to files of the folder, "(name.md)", in the order they appear, each with
// the "## " heading above it and the number of its item.
static void listed_lessons(Course *c, const char *dir, char **names, int n) {
    char path[COURSE_PATH_MAX], section[COURSE_TITLE_MAX] = "";
    snprintf(path, sizeof path, "%s/README.md", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "## ", 3)) snprintf(section, sizeof section, "%.*s", (int)strcspn(line + 3, "\r\n"), line + 3);
        int number = item_number(line);  // the item's own link, its first; not the others it mentions
        for (char *p = strstr(line, "]("); p; p = strstr(p + 2, "](")) {
            const size_t len = strcspn(p + 2, ")");
            for (int i = 0; i < n; i++) {
                if (strlen(names[i]) != len || strncmp(p + 2, names[i], len)) continue;
                CourseEntry *it = add(c, dir, names[i], true);
                if (it) {
                    snprintf(it->section, sizeof it->section, "%s", section);
                    it->number = number;
                    c->numbered += number > 0;
                }
                number = 0;
            }
        }
    }
    fclose(f);
}

// Files the README may link to: lessons, and indexes in capitals other than README.md itself.
static bool linkable_name(const char *name) {
    const size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".md") && name[0] != '.' && strcmp(name, "README.md") != 0;
}

bool course_load(Course *c, const char *dir, Err *e) {
    memset(c, 0, sizeof *c);
    DIR *d = opendir(dir);
    if (!d) return err_set(e, "%s: cannot read this folder of lessons", dir);
    char *names[COURSE_MAX];
    int n = 0;
    for (struct dirent *en; (en = readdir(d)) && n < COURSE_MAX;)
        if (linkable_name(en->d_name) && (names[n] = strdup(en->d_name)) != NULL) n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    c->items = calloc(COURSE_MAX, sizeof *c->items);
    if (c->items) {
        listed_lessons(c, dir, names, n);
        for (int i = 0; i < n; i++)
            if (course_is_lesson_name(names[i])) add(c, dir, names[i], false);
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

const char *course_place(const Course *c, int k, char *out, size_t n) {
    out[0] = '\0';
    if (k < 0 || k >= c->n || !c->items[k].listed) return out;
    if (c->items[k].number > 0) {
        snprintf(out, n, "%d/%d", c->items[k].number, c->numbered);
        return out;
    }
    for (int j = k + 1; j < c->n; j++)  // an index placed among the lessons: before the next numbered one
        if (c->items[j].number > 0) {
            snprintf(out, n, "before %d/%d", c->items[j].number, c->numbered);
            return out;
        }
    return out;
}

void course_free(Course *c) {
    free(c->items);
    memset(c, 0, sizeof *c);
}

bool course_nearest(const char *dir, const char *name, char *out, size_t n) {
    enum { MAX_NAMES = 256 };
    char *names[MAX_NAMES];
    int k = 0;
    DIR *d = opendir(dir);
    for (struct dirent *en; d && (en = readdir(d)) && k < MAX_NAMES;)
        if (strstr(en->d_name, ".md") && (names[k] = strdup(en->d_name)) != NULL) k++;
    if (d) closedir(d);
    const char *near = err_closest(name, (const char *const *)names, k);
    if (near) snprintf(out, n, "%s", near);
    for (int i = 0; i < k; i++) free(names[i]);
    return near != NULL;
}

static bool is_file(const char *path) {
    FILE *f = fopen(path, "rb");
    return f ? fclose(f), true : false;
}

bool course_resolve(const char *arg, const char *course_dir, char *out, size_t n, Err *e) {
    snprintf(out, n, "%s", arg);
    if (is_file(arg)) return true;
    const char *slash = strrchr(arg, '/');
    const size_t len = strlen(arg);
    const bool has_md = len > 3 && !strcmp(arg + len - 3, ".md");
    if (!slash) snprintf(out, n, "%s/%s%s", course_dir, arg, has_md ? "" : ".md");  // a course lesson by its name
    else snprintf(out, n, "%s%s", arg, has_md ? "" : ".md");                         // a path without its .md
    if (is_file(out)) return true;
    char dir[COURSE_PATH_MAX], name[COURSE_PATH_MAX], near[COURSE_PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - arg) : (int)strlen(course_dir), slash ? arg : course_dir);
    snprintf(name, sizeof name, "%s%s", slash ? slash + 1 : arg, has_md ? "" : ".md");
    if (!course_nearest(dir, name, near, sizeof near))
        return err_set(e, "%s: no such lesson file%s", arg, slash ? "" : ", nor a lesson of the course by that name");
    // As the user would type it: their own folder, or the course's as "lessons/" when that is
    // where they stand.
    char shown[2 * COURSE_PATH_MAX + 8];
    snprintf(shown, sizeof shown, "lessons/%s", near);
    if (slash || !is_file(shown)) snprintf(shown, sizeof shown, "%s/%s", dir, near);
    return err_set(e, "%s: no such lesson: did you mean %s?", arg, shown);
}
