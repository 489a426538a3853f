// test_lesson.c: every lesson in lessons/ runs to its end headless; narration maps to stages;
// a lesson's mistakes are reported with the lesson's own line numbers; new input re-runs.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "course.h"
#include "session.h"

static void test_all_lessons_run(void) {
    DIR *d = opendir(LESSONS);
    CHECK(d != NULL, "cannot open %s", LESSONS);
    if (!d) return;
    int count = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        if (n < 4 || strcmp(de->d_name + n - 3, ".md") != 0) continue;
        if (!course_is_lesson_name(de->d_name)) continue;  // README.md, MISTAKES.md: indexes (course.c)
        char path[600];
        snprintf(path, sizeof path, "%s/%s", LESSONS, de->d_name);
        SessionSpec spec = {.lesson_path = path};
        Session s;
        Err e = {{0}};
        bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
        CHECK(ok, "%s: %s", de->d_name, e.msg);
        if (!ok) continue;
        CHECK(interp_done(s.it) && interp_n_done(s.it) > 10, "%s runs to its end", de->d_name);
        CHECK(s.lesson.title[0] != '\0', "%s has a title", de->d_name);
        // Every stage's line lies in a program cell that has narration before it.
        for (int i = 0; i < interp_n_stages(s.it); i++) {
            int cell = lesson_cell_of_line(&s.lesson, interp_stage(s.it, i)->line);
            int b, en;
            lesson_narration(&s.lesson, cell, &b, &en);
            if (cell < 0 || en <= b) {
                CHECK(false, "%s: stage %s has no narration", de->d_name, interp_stage(s.it, i)->id);
                break;
            }
        }
        session_close(&s);
        count++;
    }
    closedir(d);
    CHECK(count >= 2, "found %d lessons", count);
    CHECK(!course_is_lesson_name("README.md") && !course_is_lesson_name("MISTAKES.md") &&
              course_is_lesson_name("masks.md") && !course_is_lesson_name("notes.txt"), "which files are lessons");
}

static bool has_span(const Lesson *l, int b, int e, unsigned style, const char *text) {
    for (int i = b; i < e; i++)
        for (int k = 0; k < l->blocks[i].n_spans; k++)
            if ((l->blocks[i].spans[k].style & style) == style && strstr(l->blocks[i].spans[k].text, text))
                return true;
    return false;
}

static void test_narration(void) {
    SessionSpec spec = {.builtin_lesson = "forward-pass.md"};
    Session s;
    Err e = {{0}};
    if (!session_open(&s, &spec, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    const Lesson *l = &s.lesson;
    int i = interp_find(s.it, "encoder.layers.1.self_attn.scores");
    CHECK(i >= 0, "scores stage");
    int cell = lesson_cell_of_line(l, interp_stage(s.it, i)->line), b, en;
    lesson_narration(l, cell, &b, &en);
    CHECK(en > b && l->blocks[b].kind == RB_HEADING &&
          strstr(l->blocks[b].spans[0].text, "Attention"), "attention stages open with the attention heading");
    CHECK(has_span(l, b, en, STYLE_CODE, "in_proj_weight"), "inline code is a code span");
    CHECK(has_span(l, b, en, STYLE_STRONG, "queries"), "bold is a strong span");
    CHECK(strstr(l->lines[interp_stage(s.it, i)->line - 1], "scores = matmul") != NULL,
          "a stage's line is the lesson's line");
    i = interp_find(s.it, "generator.logits");
    if (i < 0) i = interp_find(s.it, "step.0.generator.logits");
    cell = lesson_cell_of_line(l, interp_stage(s.it, i)->line);
    lesson_narration(l, cell, &b, &en);
    CHECK(en > b && has_span(l, b, en, 0, "greedy decoding"), "the generator's narration");
    int list_items = 0;
    for (int k = 0; k < l->n_blocks; k++) list_items += l->blocks[k].kind == RB_LIST_ITEM;
    CHECK(list_items >= 4, "list items are blocks (%d)", list_items);
    // New input: re-run from the first affected stage; a bad one changes nothing.
    int first = -1;
    interp_run(s.it, &e);
    CHECK(session_set_input(&s, "hello there", &first, &e), "%s", e.msg);
    CHECK(first == 0 && !strcmp(s.input_text, "hello there") && s.run.S == 11, "new input taken");
    CHECK(interp_run(s.it, &e) && interp_done(s.it), "and run: %s", e.msg);
    const int done = interp_n_done(s.it);
    CHECK(!session_set_input(&s, "caf\xc3\xa9", &first, &e) && strstr(e.msg, "unknown source token '\xc3\xa9'"),
          "a character outside the vocabulary is named: %s", e.msg);
    CHECK(!session_set_input(&s, "", &first, &e) && strstr(e.msg, "empty"), "empty input: %s", e.msg);
    CHECK(interp_n_done(s.it) == done && !strcmp(s.input_text, "hello there"), "nothing lost");
    session_close(&s);
}

static void expect_lesson_error(const char *text, const char *w1, const char *w2) {
    Lesson l;
    Err e = {{0}};
    bool ok = lesson_parse(&l, "bad.md", text, &e);
    if (ok) lesson_free(&l);
    CHECK(!ok, "should fail: %.40s", text);
    CHECK(strstr(e.msg, w1) != NULL, "mentions '%s': %s", w1, e.msg);
    if (w2) CHECK(strstr(e.msg, w2) != NULL, "mentions '%s': %s", w2, e.msg);
}

// Lists nested deeper than the numbering table still parse, levels clamped, numbers kept.
static void test_deep_lists(void) {
    char text[4096] = "# Deep\n\n";
    for (int d = 0; d < 20; d++) {
        char line[128];
        snprintf(line, sizeof line, "%*s1. level %d\n", 4 * d, "", d);  // a nested list may start only at 1
        strcat(text, line);
    }
    strcat(text, "\nAfter.\n\n```program\ninput src\n```\n");
    Lesson l;
    Err e = {{0}};
    bool ok = lesson_parse(&l, "deep.md", text, &e);
    CHECK(ok, "a 20-deep list parses: %s", e.msg);
    if (!ok) return;
    int items = 0, deepest = 0, after = 0;
    for (int k = 0; k < l.n_blocks; k++) {
        const RichBlock *rb = &l.blocks[k];
        if (rb->kind == RB_LIST_ITEM) {
            items++;
            deepest = rb->level > deepest ? rb->level : deepest;
            CHECK(rb->number == 1, "item '%s' keeps its number (%d)", rb->spans[0].text, rb->number);
        }
        after += rb->kind == RB_PARA && rb->n_spans && !strcmp(rb->spans[0].text, "After.");
    }
    CHECK(items == 20 && deepest <= 15 && after == 1, "20 items (%d), level clamped (%d), the paragraph after (%d)",
          items, deepest, after);
    lesson_free(&l);
}

static void too_slow(int sig) {
    (void)sig;
    static const char msg[] = "test_lesson: FAILED: a lesson of 3.8 MB took more than 30 s of CPU to parse\n";
    const ssize_t r = write(2, msg, sizeof msg - 1);
    _exit(r < 0 ? 2 : 1);
}

// A lesson near the largest a lesson may be (one paragraph of 1.9 million lines, then 10000
// list items) parses in a time that grows with its size: each line of the paragraph used to
// copy the paragraph so far, and each block counted its line from the start of the file
// (minutes of CPU; now well under a second, a few seconds under the sanitizers).
static void test_large_lesson(void) {
    enum { LINES = 1900000, ITEMS = 10000 };
    const char head[] = "# Large\n\n", tail[] = "\n```program\ninput src\n```\n";
    char *text = malloc(sizeof head + 2 * LINES + 1 + 4 * ITEMS + sizeof tail);
    CHECK(text != NULL, "out of memory");
    if (!text) return;
    char *at = text + sprintf(text, "%s", head);
    for (int i = 0; i < LINES; i++) at = memcpy(at, "a\n", 2), at += 2;
    *at++ = '\n';
    for (int i = 0; i < ITEMS; i++) at = memcpy(at, "- b\n", 4), at += 4;
    strcpy(at, tail);
    signal(SIGVTALRM, too_slow);
    setitimer(ITIMER_VIRTUAL, &(struct itimerval){.it_value = {30, 0}}, NULL);
    Lesson l;
    Err e = {{0}};
    const bool ok = lesson_parse(&l, "large.md", text, &e);
    setitimer(ITIMER_VIRTUAL, &(struct itimerval){{0, 0}, {0, 0}}, NULL);
    free(text);
    CHECK(ok, "a large lesson parses: %s", e.msg);
    if (!ok) return;
    const RichBlock *para = &l.blocks[1], *last = &l.blocks[l.n_blocks - 2];
    CHECK(l.n_blocks == 1 + 1 + ITEMS + 1 && para->kind == RB_PARA && para->n_spans == 1 &&
              strlen(para->spans[0].text) == 2 * LINES - 1,
          "a heading, the paragraph (%zu characters), %d items, the program (%d blocks)",
          para->n_spans ? strlen(para->spans[0].text) : 0, ITEMS, l.n_blocks);
    CHECK(last->kind == RB_LIST_ITEM && last->line == LINES + ITEMS + 3 && l.cells[0].first_line == LINES + ITEMS + 6,
          "the last item at line %d (%d), the program at line %d (%d)", LINES + ITEMS + 3, last->line,
          LINES + ITEMS + 6, l.cells[0].first_line);
    lesson_free(&l);
}

// Every key of lesson_setup_keys reaches its parser, and an unknown key's message lists them all.
static void test_setup_keys(void) {
    char text[256];
    for (int k = 0; k < lesson_setup_n_keys; k++) {
        snprintf(text, sizeof text, "# x\n\n```lesson\n%s: 1\n```\n\n```program\ninput src\n```\n", lesson_setup_keys[k]);
        Lesson l;
        Err e = {{0}};
        if (lesson_parse(&l, "keys.md", text, &e)) lesson_free(&l);
        CHECK(!strstr(e.msg, "unknown setup key"), "'%s' is a key the parser knows: %s", lesson_setup_keys[k], e.msg);
    }
    Lesson l;
    Err e = {{0}};
    CHECK(!lesson_parse(&l, "keys.md", "```lesson\nmodle: x\n```\n```program\ninput src\n```\n", &e), "modle: refused");
    for (int k = 0; k < lesson_setup_n_keys; k++)
        CHECK(strstr(e.msg, lesson_setup_keys[k]) != NULL, "the message lists '%s': %s", lesson_setup_keys[k], e.msg);
}

// A teacher's slips: an unclosed fence names where it opened; a fence tagged in the wrong case or
// misspelt is an error, not a block silently skipped; a misspelt weight, op or tensor name and a
// misspelt configuration name suggest the closest.
static void test_teacher_slips(void) {
    Lesson l;
    Err e = {{0}};
    CHECK(!lesson_parse(&l, "open.md", "# T\n\n```program\ninput src\n\nmore prose\n", &e) &&
          strstr(e.msg, "open.md:3: this code fence is never closed"), "%s", e.msg);
    // Left open in the middle: the next cell's closing line would close it, and the prose
    // between would be blamed ("expected '=' after the name" at line 6).
    CHECK(!lesson_parse(&l, "mid.md", "# T\n\n```program\ninput src\n\nmore prose\n\n```program\nx = relu(src)\n```\n", &e) &&
          strstr(e.msg, "mid.md:3: this code fence is not closed before line 8 opens another cell"), "%s", e.msg);
    CHECK(!lesson_parse(&l, "case.md", "# T\n\n```Program\ninput src\n```\n", &e) &&
          strstr(e.msg, "case.md:3: a code block tagged `Program`: did you mean `program`?"), "%s", e.msg);
    CHECK(!lesson_parse(&l, "uk.md", "# T\n\n```programme\ninput src\n```\n", &e) && strstr(e.msg, "did you mean `program`?"),
          "%s", e.msg);
    CHECK(lesson_parse(&l, "py.md", "# T\n\n```python\nx = 1\n```\n```program\ninput src\n```\n", &e), "python is shown, not run: %s",
          e.msg);
    lesson_free(&l);
    const char *base = "# T\n\n```lesson\nmodel: random\nconfig: d_model=8 src_vocab_size=99\nvocab: chars\ninput: ab\n```\n\n"
                       "```program\ninput src\nparam @emb.weight [src_vocab_size, d_model] xavier\n";
    const struct { const char *tail, *want; } slips[] = {
        {"x = embedding(src, @emb.weihgt)\n```\n", "the weight 'emb.weihgt' is not declared: did you mean 'emb.weight'?"},
        {"x = embeding(src, @emb.weight)\n```\n", "unknown op 'embeding': did you mean 'embedding'?"},
        {"x = embedding(src, @emb.weight)\ny = softmax(xx)\n```\n", "undefined tensor 'xx': did you mean 'x'?"},
    };
    for (size_t k = 0; k < sizeof slips / sizeof *slips; k++) {
        char text[600], path[] = "/tmp/stepformer-slip-XXXXXX";
        snprintf(text, sizeof text, "%s%s", base, slips[k].tail);
        const int fd = mkstemp(path);
        CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "a scratch lesson");
        if (fd >= 0) close(fd);
        Session s;
        SessionSpec spec = {.lesson_path = path};
        bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
        CHECK(!ok && strstr(e.msg, slips[k].want), "%s: %s", slips[k].want, e.msg);
        if (s.it && ok) session_close(&s);
        unlink(path);
    }
    char text[600], path[] = "/tmp/stepformer-slip-XXXXXX";
    snprintf(text, sizeof text, "%sx = embedding(src, @emb.weight)\n```\n", base);
    const int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "a scratch lesson");
    if (fd >= 0) close(fd);
    Session s;
    SessionSpec spec = {.lesson_path = path, .config = "d_modle=16"};
    CHECK(!session_open(&s, &spec, &e) && strstr(e.msg, "--config: 'd_modle' is not a name") &&
          strstr(e.msg, "did you mean 'd_model'?"), "%s", e.msg);
    unlink(path);
}

// Line endings: "\r\n" and a lone "\r" end a line for md4c, so they must for the lesson's line
// numbers too (a lone "\r" used to put code blocks outside the line array). Files that are not
// regular (a FIFO would block, /dev/zero never ends) are refused before any read.
static void test_line_endings_and_files(void) {
    Lesson l;
    Err e = {{0}};
    CHECK(!lesson_parse(&l, "cr.md", "```lesson\r\r\ra\r```", &e) && strstr(e.msg, "cr.md:4:"), "a lone CR ends a line: %s",
          e.msg);
    const char *crlf = "# T\r\n\r\n```lesson\r\nmodel: random\r\n```\r\n\r\n```program\r\ninput src\r\nx = bogus(src)\r\n```\r\n";
    bool ok = lesson_parse(&l, "crlf.md", crlf, &e);
    CHECK(ok && l.n_cells == 1 && l.cells[0].first_line == 8 && !strcmp(l.lines[8], "x = bogus(src)"),
          "CRLF: the program's lines numbered as written: %s", e.msg);
    if (ok) lesson_free(&l);
    const char *mixed = "# T\r```program\rinput src\r```\r";
    ok = lesson_parse(&l, "mixed.md", mixed, &e);
    CHECK(ok && l.n_cells == 1 && l.cells[0].first_line == 3 && l.cells[0].last_line == 3, "lone CRs: cell lines 3..3");
    if (ok) lesson_free(&l);
    CHECK(!lesson_load(&l, "/dev/zero", &e) && strstr(e.msg, "not a regular file"), "/dev/zero: %s", e.msg);
    CHECK(!lesson_load(&l, "/tmp", &e) && strstr(e.msg, "not a regular file"), "a folder: %s", e.msg);
    const char *fifo = "/tmp/stepformer-fifo.md";
    remove(fifo);
    if (mkfifo(fifo, 0600) == 0) {
        CHECK(!lesson_load(&l, fifo, &e) && strstr(e.msg, "not a regular file"), "a FIFO is refused, not waited on");
        remove(fifo);
    }
}

static void test_bad_lessons(void) {
    test_line_endings_and_files();
    test_teacher_slips();
    expect_lesson_error("# x\n\n```lesson\nmodle: random\n```\n\n```program\ninput src\n```\n",
                        "bad.md:4:", "unknown setup key 'modle'");
    expect_lesson_error("# x\n\nJust prose.\n", "no program cells", NULL);
    expect_lesson_error("# x\n\n```program\nblock e\n```\n\ntext\n", "bad.md:4:", "no matching 'end'");
    expect_lesson_error("```lesson\nconfig: d_model=sixty\n```\n```program\ninput src\n```\n",
                        "bad.md:2:", "d_model = \"sixty\" is not a number");
}

// A program error found when the lesson runs names the lesson file and line.
static void expect_run_error(const char *program, const char *w1, const char *w2) {
    const char *path = "/tmp/stepformer-run-error.md";
    FILE *f = fopen(path, "w");
    fprintf(f, "# t\n```lesson\nmodel: random\nvocab: chars\ninput: ab\n```\n\nProse.\n\n"
               "```program\n%s```\n", program);
    fclose(f);
    SessionSpec spec = {.lesson_path = path};
    Session s;
    Err e = {{0}};
    bool ok = session_open(&s, &spec, &e);
    if (ok) session_close(&s);
    CHECK(!ok && strstr(e.msg, w1) && strstr(e.msg, w2), "expected '%s' and '%s': %s", w1, w2, e.msg);
    remove(path);
}

static void test_run_errors(void) {
    expect_run_error("input src\nparam @emb [src_vocab_size, d_model] xavier\nx = embedding(src, @emb)\n"
                     "y = add(x, src)\n", "stepformer-run-error.md:14: add", "x is [2 x 64], src is [2]");
    expect_run_error("input src\nx = embedding(src, @src_tok_emb.embedding.weight)\n", "stepformer-run-error.md:12:",
                     "'src_tok_emb.embedding.weight' is not declared");
    expect_run_error("input src\nparam @emb [src_vocab_size, d_modl] xavier\n", "stepformer-run-error.md:12:",
                     "'d_modl' is not set");
    expect_run_error("input src\n\nblock e\n  y = embedd(src)\nend\n", "stepformer-run-error.md:14:",
                     "unknown op 'embedd'");
    // A program with no stages: an error, not an empty window (which used to abort) or silence.
    expect_run_error("input src\n", "stepformer-run-error.md: the program has no op lines", "nothing to run");
    // Ids with more rows than the target (an argmax over the source) used to overflow it when
    // greedy decoding appended them.
    expect_run_error("input src\ninput tgt\nparam @emb [src_vocab_size, d_model] normal(1)\n"
                     "param @out [tgt_vocab_size, d_model] xavier\nx = embedding(src, @emb)\n"
                     "decode tgt from next\n  logits = linear(x, @out)\n  next = argmax(logits)\nend\n",
                     "stepformer-run-error.md:16: decode tgt from next",
                     "one id per position of tgt ([1]), but it is [2]");
}

int main(void) {
    test_all_lessons_run();
    test_narration();
    test_bad_lessons();
    test_setup_keys();
    test_deep_lists();
    test_large_lesson();
    test_run_errors();
    return check_finish("test_lesson");
}
