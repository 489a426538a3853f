// test_parts.c: every block of every course lesson's narration reaches the window once, in
// order: the opening card, the narration of each cell with stages, the closing card (parts.h,
// which the window draws from), or else the steps a section is attached to (attach.h); and
// Markdown tables are read into cells row by row.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "course.h"
#include "parts.h"
#include "session.h"

// Marks the shown blocks of r as covered, checking each is covered for the first time and that
// they come after every block covered before (*next: the first block not yet passed).
static void cover(const Lesson *l, BlockRange r, int *seen, int *next, const char *what) {
    for (int i = r.begin; i < r.end; i++) {
        if (!lesson_range_shows(l, r, i)) continue;
        CHECK(i >= *next, "%s: block %d (line %d) shown out of order in %s", l->path, i, l->blocks[i].line, what);
        seen[i]++;
        *next = i + 1;
    }
}

static bool heading_is(const RichBlock *b, const char *text) {
    return b->kind == RB_HEADING && b->n_spans > 0 && !strcmp(b->spans[0].text, text);
}

static void check_lesson(const char *path) {
    Session s;
    Err e = {{0}};
    SessionSpec spec = {.lesson_path = path};
    const bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "%s: %s", path, e.msg);
    if (!ok) return;
    const Lesson *l = &s.lesson;
    LessonParts p;
    CHECK(lesson_parts_of_run(&p, l, s.it, &e), "%s", e.msg);
    int *seen = calloc((size_t)l->n_blocks + 1, sizeof *seen), next = 0;
    cover(l, p.opening, seen, &next, "the opening card");
    for (int c = 0; c < p.n_cells; c++) cover(l, p.cells[c], seen, &next, "a cell's narration");
    cover(l, p.closing, seen, &next, "the closing card");
    for (int k = 0; k < l->n_attachments; k++) {  // a section attached to steps: shown with them (attach.h)
        const BlockRange r = {l->attachments[k].begin, l->attachments[k].end, k};
        int at = r.begin;
        cover(l, r, seen, &at, "a section attached to steps");
    }
    for (int i = 0; i < l->n_blocks; i++)
        if (lesson_block_shown(&l->blocks[i]))
            CHECK(seen[i] == 1, "%s:%d: a block shown %d times, not once", path, l->blocks[i].line, seen[i]);
    // The title opens the opening card; "What to look at" (where a lesson has it) is on the closing one.
    CHECK(p.opening.end > p.opening.begin && l->blocks[p.opening.begin].kind == RB_HEADING &&
          l->blocks[p.opening.begin].level == 1, "%s: the opening card starts with the title", path);
    bool look = false, closing_look = false;
    for (int i = 0; i < l->n_blocks; i++) look |= heading_is(&l->blocks[i], "What to look at");
    for (int i = p.closing.begin; i < p.closing.end; i++) closing_look |= heading_is(&l->blocks[i], "What to look at");
    CHECK(closing_look == look, "%s: \"What to look at\" is on the closing card", path);
    // The opening card holds more than the title: the introduction.
    int intro = 0;
    for (int i = p.opening.begin; i < p.opening.end; i++) intro += l->blocks[i].kind == RB_PARA;
    CHECK(intro > 0, "%s: the opening card has the introduction's paragraphs", path);
    free(seen);
    lesson_parts_free(&p);
    session_close(&s);
}

static void test_course_lessons(void) {
    Course c;
    Err e = {{0}};
    CHECK(course_load(&c, LESSONS, &e), "%s", e.msg);
    int listed = 0;
    for (int k = 0; k < c.n; k++) {
        if (!c.items[k].listed) continue;
        listed++;
        check_lesson(c.items[k].path);
    }
    CHECK(listed >= 19, "the course lists its lessons (%d)", listed);
    course_free(&c);
}

static void test_table(void) {
    const char *md = "# T\n\n```lesson\nmodel: random\n```\n\nBefore.\n\n"
                     "| scale | max weight |\n|---|--:|\n| none | 0.99 |\n| `sqrt(d_k)` | 0.41 |\n\n"
                     "```program\ninput src\n```\n";
    Lesson l;
    Err e = {{0}};
    CHECK(lesson_parse(&l, "t.md", md, &e), "%s", e.msg);
    int cells = 0;
    static const struct { int row, col; const char *text; } want[] = {
        {0, 0, "scale"}, {0, 1, "max weight"}, {1, 0, "none"}, {1, 1, "0.99"}, {2, 0, "sqrt(d_k)"}, {2, 1, "0.41"}};
    for (int i = 0; i < l.n_blocks; i++) {
        const RichBlock *b = &l.blocks[i];
        if (b->kind != RB_TABLE_CELL) continue;
        CHECK(cells < 6, "six cells");
        if (cells >= 6) break;
        CHECK(b->row == want[cells].row && b->col == want[cells].col, "cell %d at %d,%d", cells, b->row, b->col);
        CHECK(b->n_spans == 1 && !strcmp(b->spans[0].text, want[cells].text), "cell %d reads %s", cells, want[cells].text);
        CHECK(b->line == 9 + want[cells].row + (want[cells].row > 0), "cell %d on line %d", cells, b->line);
        cells++;
    }
    CHECK(cells == 6, "the table has 6 cells, not %d", cells);
    if (cells >= 6) CHECK(l.blocks[l.n_blocks - 1].kind == RB_CODE, "the cell after the table");
    lesson_free(&l);
}

int main(void) {
    test_table();
    test_course_lessons();
    return check_finish("test_parts");
}
