// course.h: the lessons of a folder, in course order: first the lessons its README.md links to,
// in the order it lists them, then the folder's other lessons (.md files) by name. The window's
// lesson list and its next / previous lesson keys read it.
#ifndef STEPFORMER_COURSE_H
#define STEPFORMER_COURSE_H

#include <stdbool.h>

#include "err.h"

enum { COURSE_MAX = 256, COURSE_PATH_MAX = 1024, COURSE_TITLE_MAX = 160 };

typedef struct {
    char path[COURSE_PATH_MAX];    // the folder + the file name
    char title[COURSE_TITLE_MAX];  // the file's first "# " heading, or its name
    bool listed;                   // README.md names it (the course proper)
} CourseEntry;

typedef struct {
    CourseEntry *items;  // [n]
    int n;
} Course;

// Whether a file name is a lesson's: NAME.md, not an index named in capitals (README.md).
bool course_is_lesson_name(const char *name);
// Reads the folder `dir`. A folder without README.md gives its lessons by name; a folder that
// cannot be read is an error naming it.
bool course_load(Course *c, const char *dir, Err *e);
// The entry for the file at `path` (compared after resolving both paths), or -1.
int course_find(const Course *c, const char *path);
void course_free(Course *c);

#endif
