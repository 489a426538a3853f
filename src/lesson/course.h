// course.h: the lessons of a folder, in course order: first the files its README.md links to,
// in the order it lists them (lessons, and an index such as MISTAKES.md that the README places
// among them), then the folder's other lessons (.md files) by name. The README's "## " headings
// are the course's sections, and its numbered items ("8. [title](file.md)") the lessons' numbers.
// The window's lesson list, its title and its next / previous lesson keys read it.
#ifndef STEPFORMER_COURSE_H
#define STEPFORMER_COURSE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

enum { COURSE_MAX = 256, COURSE_PATH_MAX = 1024, COURSE_TITLE_MAX = 160 };

typedef struct {
    char path[COURSE_PATH_MAX];    // the folder + the file name
    char title[COURSE_TITLE_MAX];  // the file's first "# " heading, or its name
    char section[COURSE_TITLE_MAX];  // the README's "## " heading above its link ("" if none)
    bool listed;                   // README.md names it (the course proper)
    int number;                    // the README's number for it ("8. [...](file.md)"), or 0
} CourseEntry;

typedef struct {
    CourseEntry *items;  // [n]
    int n;
    int numbered;        // how many the README numbers (the course's length as it counts it)
} Course;

// Whether a file name is a lesson's: NAME.md, not an index named in capitals (README.md).
bool course_is_lesson_name(const char *name);
// Reads the folder `dir`. A folder without README.md gives its lessons by name; a folder that
// cannot be read is an error naming it.
bool course_load(Course *c, const char *dir, Err *e);
// The entry for the file at `path` (compared after resolving both paths), or -1.
int course_find(const Course *c, const char *path);
// Where entry k stands, as the README counts: "8/27" for a numbered lesson, "before 20/27" for
// an unnumbered one the README places before lesson 20, "" for none. Returns out.
const char *course_place(const Course *c, int k, char *out, size_t n);
void course_free(Course *c);

// The .md file of folder `dir` whose name is nearest to `name` (err_closest's edit distance),
// into out ("backprop.md" for "backprob.md"); false when none is near.
bool course_nearest(const char *dir, const char *name, char *out, size_t n);
// A lesson as the command line names it, into out: a file's path as it is; or a bare name
// ("backprop", as the page's links name a lesson; ".md" may follow) of a lesson in `course_dir`.
// A lesson found neither way fails with e naming the nearest lesson there is, as the same command
// would take it ("no lesson 'backprob': did you mean lessons/backprop.md?").
bool course_resolve(const char *arg, const char *course_dir, char *out, size_t n, Err *e);

#endif
