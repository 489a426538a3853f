// test_docs.c: docs/lessons.md, the teachers' reference, checked against the code. Every op in
// op_info has a section (a heading with the op as a code span) that names each attribute the op
// accepts as "`name=`"; every key of the lesson block (lesson_setup_keys) appears as "`key:`" in
// the lesson block's section; every way to start a tensor and every training task is named.
// The examples run: each op's example lines at the end of the scratch lesson, and every lesson
// the page holds.
//
// usage: test_docs [FILE]   (default: the repository's docs/lessons.md)
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "session.h"
#include "tasks.h"

static char *doc;  // the whole page

// One line of the page: where it starts, and whether it is a heading outside code.
typedef struct {
    const char *at;
    size_t len;
    bool heading;
} Line;

static Line *lines;
static int n_lines;

static int backticks(const char *s) {
    int k = 0;
    while (s[k] == '`') k++;
    return k;
}

// Splits the page into lines and marks the headings that stand outside fenced code (a fence
// of N backticks closes at a line of at least N backticks and nothing else).
static void split(void) {
    int cap = 64, open = 0;
    lines = malloc(sizeof *lines * (size_t)cap);
    for (const char *s = doc; *s;) {
        const size_t len = strcspn(s, "\n");
        if (n_lines == cap) lines = realloc(lines, sizeof *lines * (size_t)(cap *= 2));
        const int ticks = backticks(s);
        bool bare = true;
        for (size_t k = (size_t)ticks; k < len; k++) bare = bare && (s[k] == ' ' || s[k] == '\r');
        lines[n_lines++] = (Line){s, len, !open && ticks < 3 && s[0] == '#'};
        if (ticks >= 3 && !open) open = ticks;
        else if (ticks >= open && open && bare) open = 0;
        s += len + (s[len] == '\n');
    }
}

static bool line_has(const Line *l, const char *what) {
    const size_t n = strlen(what);
    for (size_t k = 0; k + n <= l->len; k++)
        if (!memcmp(l->at + k, what, n)) return true;
    return false;
}

// The lines [*from, *to) of the section whose heading holds `title`; false if there is none.
static bool section(const char *title, int *from, int *to) {
    for (int i = 0; i < n_lines; i++) {
        if (!lines[i].heading || !line_has(&lines[i], title)) continue;
        int j = i + 1;
        while (j < n_lines && !lines[j].heading) j++;
        *from = i, *to = j;
        return true;
    }
    return false;
}

// Whether a line of [from, to) is an entry for `what`: a list item or a table row that begins
// with it ("- `by=` ...", "| `seed:` | ..."), indented or not.
static bool has_entry(int from, int to, const char *what) {
    const size_t n = strlen(what);
    for (int i = from; i < to; i++) {
        const char *s = lines[i].at, *end = s + lines[i].len;
        while (s < end && *s == ' ') s++;
        if (end - s < 2 || (s[0] != '-' && s[0] != '|') || s[1] != ' ') continue;
        if ((size_t)(end - s - 2) >= n && !memcmp(s + 2, what, n)) return true;
    }
    return false;
}

static void test_ops_described(void) {
    for (int op = 0; op < OP_COUNT; op++) {
        char title[64], attr[64];
        snprintf(title, sizeof title, "`%s`", op_info[op].name);
        int from, to;
        const bool found = section(title, &from, &to);
        CHECK(found, "docs: no section headed %s", title);
        if (!found) continue;
        char list[128];
        snprintf(list, sizeof list, "%s", op_info[op].attrs);
        for (char *a = strtok(list, " "); a; a = strtok(NULL, " ")) {
            snprintf(attr, sizeof attr, "`%s=`", a);
            CHECK(has_entry(from, to, attr), "docs: the section of %s has no entry for %s", title, attr);
        }
    }
}

static void test_names_described(void) {
    int from, to;
    bool found = section("## The lesson block", &from, &to);
    CHECK(found && lesson_setup_n_keys > 0, "docs: no section '## The lesson block'");
    for (int k = 0; found && k < lesson_setup_n_keys; k++) {
        char key[48];
        snprintf(key, sizeof key, "`%s:`", lesson_setup_keys[k]);
        CHECK(has_entry(from, to, key), "docs: the lesson block's section has no entry for %s", key);
    }
    found = section("`param` and `buffer`", &from, &to);
    CHECK(found, "docs: no section for param and buffer");
    for (int k = 0; found && k < INIT_COUNT; k++) {
        char init[48], with_arg[48];  // `zeros` or `normal(STD)`
        snprintf(init, sizeof init, "`%s`", init_names[k]);
        snprintf(with_arg, sizeof with_arg, "`%s(", init_names[k]);
        CHECK(has_entry(from, to, init) || has_entry(from, to, with_arg), "docs: the param section has no entry for %s",
              init);
    }
    found = section("## Writing a new lesson and training its model", &from, &to);
    CHECK(found, "docs: no section on writing a new lesson");
    for (int t = 0; found && t < TASK_COUNT; t++) {
        char task[48];
        snprintf(task, sizeof task, "`%s`", task_names[t]);
        CHECK(has_entry(from, to, task), "docs: the training section has no entry for the task %s", task);
    }
}

// The text of the first fenced block tagged `tag` in lines [from, to), malloc'd, or NULL.
static char *fenced(int from, int to, const char *tag, int *after) {
    for (int i = from; i < to; i++) {
        const int ticks = backticks(lines[i].at);
        if (ticks < 3 || lines[i].len != (size_t)ticks + strlen(tag) || strncmp(lines[i].at + ticks, tag, strlen(tag)))
            continue;
        int j = i + 1;
        while (j < n_lines && !(backticks(lines[j].at) >= ticks && lines[j].len == (size_t)backticks(lines[j].at)))
            j++;
        const char *b = j > i + 1 ? lines[i + 1].at : lines[i].at + lines[i].len;
        const char *e = j < n_lines ? lines[j].at : doc + strlen(doc);
        char *s = malloc((size_t)(e - b) + 1);
        memcpy(s, b, (size_t)(e - b));
        s[e - b] = '\0';
        *after = j + 1;
        return s;
    }
    return NULL;
}

// Writes a lesson to a file and runs it to its end (a failed check names `what` and why).
static bool run_lesson(const char *text, const char *what) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/stepformer-docs-%d.md", (int)getpid());
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
    Session s;
    Err e = {{0}};
    SessionSpec spec = {.lesson_path = path};
    const bool ok = f && session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "docs: %s does not run: %s", what, e.msg);
    if (ok) {
        CHECK(interp_done(s.it), "docs: %s runs to its end", what);
        session_close(&s);
    }
    remove(path);
    return ok;
}

// Each op's example lines, added as a last cell to the scratch lesson of the ops section.
static void test_op_examples(void) {
    int from, to, after;
    char *scratch = section("## Ops", &from, &to) ? fenced(from, to, "markdown", &after) : NULL;
    CHECK(scratch != NULL, "docs: the ops section has no scratch lesson (a ````markdown block)");
    if (!scratch) return;
    for (int op = 0; op < OP_COUNT; op++) {
        char title[64], call[64], what[96];
        snprintf(title, sizeof title, "`%s`", op_info[op].name);
        snprintf(call, sizeof call, "= %s(", op_info[op].name);
        if (!section(title, &from, &to)) continue;  // reported by test_ops_described
        char *example = fenced(from, to, "program", &after);
        CHECK(example && strstr(example, call), "docs: the section of %s has no example '%s...)'", title, call);
        if (!example) continue;
        char *text = malloc(strlen(scratch) + strlen(example) + 64);
        sprintf(text, "%s\n\n```program\n%s```\n", scratch, example);
        snprintf(what, sizeof what, "the example of %s", title);
        run_lesson(text, what);
        free(text);
        free(example);
    }
    free(scratch);
}

// Every lesson the page shows (````markdown blocks) runs as it stands.
static void test_lessons_run(void) {
    int count = 0, at = 0;
    for (char *text; (text = fenced(at, n_lines, "markdown", &at)); free(text)) {
        char what[64];
        snprintf(what, sizeof what, "lesson %d of the page", ++count);
        run_lesson(text, what);
    }
    CHECK(count >= 3, "docs: the page shows %d lessons (the minimal one, the scratch one, the trained one)", count);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : DOCS;
    doc = file_read(path);
    if (!doc) return fprintf(stderr, "cannot read %s\n", path), 1;
    split();
    test_ops_described();
    test_names_described();
    test_op_examples();
    test_lessons_run();
    free(lines);
    free(doc);
    return check_finish("test_docs");
}
