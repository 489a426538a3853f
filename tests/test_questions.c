// test_questions.c: the `question` blocks (question.h, quiz.h). Each course question's answer
// is recomputed here from the trace's tensors with a plain loop and compared with what quiz.c
// computed; answers are graded right, wrong and malformed; a bad block is an error naming the
// lesson's file:line.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "check.h"
#include "quiz.h"
#include "session.h"

static const char *const course[] = {"self-attention.md", "scaling.md", "multi-head.md", "positional-encoding.md",
                                     "encoder-layer.md", "masks.md", "cross-attention.md", "forward-pass.md",
                                     "greedy-decoding.md", "cached-decoding.md", "gpt2.md", "llama.md", "four-ways.md",
                                     "marian.md"};

static bool open_lesson(Session *s, const char *path) {
    SessionSpec spec = {.lesson_path = path};
    Err e = {{0}};
    bool ok = session_open(s, &spec, &e) && interp_run(s->it, &e);
    CHECK(ok, "%s: %s", path, e.msg);
    return ok;
}

// The answer recomputed: the stage found by its exact id, the row read by hand, the largest
// column found by a loop, the value rounded by printf.
static void check_question(const Session *s, const Question *q, int *kinds) {
    Answer a;
    Err e = {{0}};
    const bool ok = quiz_answer(&a, &s->lesson, q, s->it, &e);
    CHECK(ok, "%s:%d: %s", s->lesson.path, q->line, e.msg);
    if (!ok) return;
    kinds[q->kind]++;
    const int k = interp_find(s->it, q->at);
    CHECK(k == a.stage, "%s:%d: the stage is %s", s->lesson.path, q->line, q->at);
    const Stage *st = interp_stage(s->it, k);
    const float *x = interp_output(s->it, k);
    const int nd = st->shape.ndim, cols = (int)st->shape.dim[nd - 1];
    const int rows = nd >= 2 ? (int)st->shape.dim[nd - 2] : 1;
    const int row = q->row >= 0 ? q->row : rows - 1;
    const float *r = x + ((size_t)(nd == 3 ? q->head - 1 : 0) * (size_t)rows + (size_t)row) * (size_t)cols;
    if (q->kind == QUESTION_VALUE) {
        char want[64];
        snprintf(want, sizeof want, "%.*f", q->decimals, (double)r[q->column]);
        CHECK(!strcmp(a.text, want), "%s:%d: answer %s, by hand %s", s->lesson.path, q->line, a.text, want);
        CHECK(quiz_grade(&a, q, s->it, want, &e) == GRADE_RIGHT, "%s:%d: the true value %s graded right",
              s->lesson.path, q->line, want);
        char off[64];
        snprintf(off, sizeof off, "%.*f", q->decimals, (double)r[q->column] + 3 * pow(10.0, -q->decimals));
        CHECK(quiz_grade(&a, q, s->it, off, &e) == GRADE_WRONG, "%s:%d: %s graded wrong", s->lesson.path, q->line, off);
        return;
    }
    int best = 0;
    for (int c = 0; c < cols; c++)
        if (r[c] > r[best]) best = c;
    CHECK(a.index == best, "%s:%d: answer %d, by hand %d", s->lesson.path, q->line, a.index, best);
    char typed[64];
    if (q->kind == QUESTION_TOKEN) snprintf(typed, sizeof typed, "%s", vocab_token(&s->model.tgt_vocab, best));
    else snprintf(typed, sizeof typed, "%d", best);
    CHECK(quiz_grade(&a, q, s->it, typed, &e) == GRADE_RIGHT, "%s:%d: '%s' graded right: %s", s->lesson.path, q->line,
          typed, e.msg);
    const int other = best == 0 ? 1 : 0;
    if (q->kind == QUESTION_TOKEN) snprintf(typed, sizeof typed, "%s", vocab_token(&s->model.tgt_vocab, other + 10));
    else snprintf(typed, sizeof typed, "%d", other);
    if (q->kind == QUESTION_ARGMAX) CHECK(quiz_grade_column(&a, other) == GRADE_WRONG, "a click elsewhere is wrong");
    if (q->kind == QUESTION_ARGMAX) CHECK(quiz_grade_column(&a, best) == GRADE_RIGHT, "a click on it is right");
    CHECK(quiz_grade(&a, q, s->it, typed, &e) == (other + 10 == best && q->kind == QUESTION_TOKEN ? GRADE_RIGHT : GRADE_WRONG),
          "%s:%d: '%s' graded wrong", s->lesson.path, q->line, typed);
}

static void test_course_questions(void) {
    int kinds[QUESTION_KIND_COUNT] = {0};
    for (size_t i = 0; i < sizeof course / sizeof course[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", LESSONS, course[i]);
        Session s;
        if (!open_lesson(&s, path)) continue;
        CHECK(s.lesson.n_questions >= 1, "%s asks at least one question", course[i]);
        for (int k = 0; k < s.lesson.n_questions; k++) check_question(&s, &s.lesson.questions[k], kinds);
        session_close(&s);
    }
    for (int k = 0; k < QUESTION_KIND_COUNT; k++) CHECK(kinds[k] >= 2, "the course asks %s questions", question_kind_names[k]);
}

// Grading details on the self-attention lesson's questions: tokens, rounding, bad text.
static void test_grading(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/self-attention.md", LESSONS);
    Session s;
    if (!open_lesson(&s, path)) return;
    Answer v, m;
    Err e = {{0}};
    const Question *qv = &s.lesson.questions[0], *qm = &s.lesson.questions[1];
    CHECK(quiz_answer(&v, &s.lesson, qv, s.it, &e) && quiz_answer(&m, &s.lesson, qm, s.it, &e), "%s", e.msg);
    CHECK(!strcmp(v.text, "0.52") && m.index == 7, "value %s, argmax %d", v.text, m.index);
    CHECK(quiz_grade(&v, qv, s.it, " 0.5209 ", &e) == GRADE_RIGHT, "0.5209 rounds to 0.52");
    CHECK(quiz_grade(&v, qv, s.it, "0.53", &e) == GRADE_WRONG, "0.53 is wrong");
    CHECK(quiz_grade(&v, qv, s.it, "half", &e) == GRADE_MALFORMED && strstr(e.msg, "not a number"), "%s", e.msg);
    CHECK(quiz_grade(&m, qm, s.it, "0", &e) == GRADE_WRONG, "a number is a position: '0' is position 0, not the '0'");
    CHECK(quiz_grade(&m, qm, s.it, "6", &e) == GRADE_WRONG, "'6' is position 6: wrong");
    CHECK(quiz_grade(&m, qm, s.it, "/", &e) == GRADE_MALFORMED && strstr(e.msg, "2 positions"), "%s", e.msg);
    CHECK(quiz_grade(&m, qm, s.it, "42", &e) == GRADE_MALFORMED && strstr(e.msg, "0 to 9"), "%s", e.msg);
    session_close(&s);
    snprintf(path, sizeof path, "%s/multi-head.md", LESSONS);  // the `v` of November: a token once
    if (!open_lesson(&s, path)) return;
    CHECK(quiz_answer(&m, &s.lesson, &s.lesson.questions[0], s.it, &e), "%s", e.msg);
    CHECK(quiz_grade(&m, &s.lesson.questions[0], s.it, "v", &e) == GRADE_RIGHT, "'v' names its column: %s", e.msg);
    CHECK(quiz_grade(&m, &s.lesson.questions[0], s.it, "N", &e) == GRADE_WRONG, "'N' names another column");
    session_close(&s);
}

// A lesson with one question block spliced in; the error expected from parsing or answering.
static void check_bad(const char *block, const char *want) {
    char path[600];
    snprintf(path, sizeof path, "%s/self-attention.md", LESSONS);
    char *text = NULL;
    size_t n = 0;
    Err e = {{0}};
    CHECK(file_read_all(path, "the lesson", &text, &n, &e), "%s", e.msg);
    if (!text) return;
    text[n] = '\0';
    const char *at = strstr(text, "## The rows to attend over");
    char *doc = malloc(n + strlen(block) + 8);
    snprintf(doc, n + strlen(block) + 8, "%.*s%s\n\n%s", (int)(at - text), text, block, at);
    Lesson l;
    bool ok = lesson_parse(&l, "bad.md", doc, &e);
    if (ok) {
        Session s;
        SessionSpec spec = {.lesson_path = path};
        ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
        if (ok) {
            Answer a;
            ok = quiz_answer(&a, &l, &l.questions[0], s.it, &e);
            session_close(&s);
        }
        lesson_free(&l);
    }
    CHECK(!ok && strstr(e.msg, want), "'%s': got '%s'", want, ok ? "no error" : e.msg);
    free(doc);
    free(text);
}

static void test_errors(void) {
    // The lesson's line 17 is the "## The rows" heading before which each block is put.
    check_bad("```question\nask: Which?\nkind: argmx\nat: encoder.pos\nrow: 1\n```", "bad.md:19: unknown kind 'argmx'; did you mean 'argmax'?");
    check_bad("```question\nask: Which?\nkind: argmax\nrwo: 1\n```", "bad.md:20: unknown question key 'rwo'; did you mean 'row'?");
    check_bad("```question\nkind: argmax\nrow: 1\n```", "bad.md:17: this question has no `ask:` line");
    check_bad("```question\nask: Which?\nrow: 1\n```", "bad.md:17: this question has no `kind:` line");
    check_bad("```question\nask: What?\nkind: value\nrow: 1\n```", "bad.md:17: a `value` question needs `column:`");
    check_bad("```question\nask: Which?\nkind: argmax\nat: encoder.bare.weight\nrow: 1\n```",
              "bad.md:20: the question's `at:` names a stage, but the pass has no stage 'encoder.bare.weight'");
    check_bad("```question\nask: Which?\nkind: argmax\nat: encoder.bare.weights\nrow: 10\n```",
              "bad.md:17: row 10, but stage encoder.bare.weights has rows 0 to 9");
    check_bad("```question\nask: Which?\nkind: argmax\nat: encoder.bare.weights\nhead: 2\nrow: 1\n```",
              "bad.md:17: head 2, but stage encoder.bare.weights has 1 head");
    check_bad("```question\nask: Which?\nkind: argmax\nat: encoder.bare.weights\n```",
              "bad.md:17: stage encoder.bare.weights has 10 rows: say which with `row:`");
    check_bad("```question\nask: Which?\nkind: token\nat: encoder.bare.weights\nrow: 1\n```",
              "bad.md:17: a token question reads a row over the target vocabulary");
    check_bad("```Question\nask: Which?\nkind: token\n```", "bad.md:17: a code block tagged `Question`: did you mean `question`?");
}

int main(void) {
    test_course_questions();
    test_grading();
    test_errors();
    return check_finish("test_questions");
}
