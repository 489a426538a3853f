// test_attach.c: the narration beside each step describes that step (attach.h, parts.h).
//
// - `steps` blocks: read, and refused with a message naming the line when they are wrong;
// - which section a step shows, on a lesson written here;
// - every course lesson: a forward stage shows only its own section's prose, every word of a
//   `steps` block names a step the lesson has, and a lesson that narrates the backward pass
//   narrates every one of its steps;
// - backprop.md and training.md against what a reader expects beside each step, written out
//   here by hand (the lecturer's trial: Adam's prose on a LayerNorm step, "What appears" on
//   attention).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "back_pass.h"
#include "check.h"
#include "course.h"
#include "parts.h"
#include "session.h"

// The text of the first heading shown in r ("" when none).
static void range_heading(const Lesson *l, BlockRange r, char *s, size_t n) {
    s[0] = '\0';
    for (int i = r.begin; i < r.end; i++) {
        if (!lesson_range_shows(l, r, i) || l->blocks[i].kind != RB_HEADING) continue;
        for (int k = 0; k < l->blocks[i].n_spans; k++) strncat(s, l->blocks[i].spans[k].text, n - strlen(s) - 1);
        return;
    }
}

static void parse_fails(const char *md, const char *expect) {
    Lesson l;
    Err e = {{0}};
    const bool ok = lesson_parse(&l, "t.md", md, &e);
    if (ok) lesson_free(&l);
    CHECK(!ok && strstr(e.msg, expect), "refused with \"%s\": got %s", expect, ok ? "no error" : e.msg);
}

#define HEAD "# T\n\n```lesson\nmodel: random\n```\n\nIntro.\n\n```program\ninput src\n```\n\n"

static void test_refused(void) {
    parse_fails(HEAD "## B\n\n```steps\nbackward: layer_nrom\n```\n", "t.md:16: 'layer_nrom' names no step");
    parse_fails(HEAD "## B\n\n```steps\nbackward: layer_nrom\n```\n", "did you mean 'layer_norm'?");
    parse_fails(HEAD "## B\n\n```steps\nforward: adam\n```\n", "t.md:16: `adam` is a step of the backward pass");
    parse_fails(HEAD "```steps\nbackward: loss\n```\n", "t.md:13: a `steps` block stands under the heading");
    parse_fails(HEAD "## B\n\n```steps\nbackward: loss\n```\n\nText.\n\n```steps\nbackward: adam\n```\n",
                "a second `steps` block in one section (the first is at line 15)");
    parse_fails(HEAD "## B\n\n```steps\nbackward:\n```\n", "t.md:16: `backward:` names no steps");
    parse_fails(HEAD "## B\n\n```steps\nbackwards: loss\n```\n", "did you mean 'backward'?");
    parse_fails(HEAD "## B\n\n```step\nbackward: loss\n```\n", "did you mean `steps`?");
}

static Stage stage_at(const char *id, Op op, int line) {
    Stage st;
    memset(&st, 0, sizeof st);
    snprintf(st.id, sizeof st.id, "%s", id);
    st.op = op, st.line = line;
    return st;
}

// A lesson written here: two cells, a section attached to LayerNorm's backward steps and one to
// Adam's, between them; which section each step shows.
static void test_which_section(void) {
    const char *md = "# T\n\n```lesson\nmodel: random\n```\n\nIntro.\n\n"     // 1-8
                     "## Norms\n\nThe forward norm.\n\n"                        // 9-12
                     "```program\ninput src\nx = layer_norm(src)\n```\n\n"     // 13-16
                     "## Back through norms\n\n```steps\nbackward: layer_norm\n```\n\nNorm gradients.\n\n"  // 18-24
                     "## Adam\n\n```steps\nbackward: adam after *.second\n```\n\nAdam's prose.\n\n"      // 26-32
                     "## More\n\nThe second cell.\n\n"                         // 34-37
                     "```program\ny = add(x, x)\n```\n\n## End\n\nClosing.\n";
    Lesson l;
    Err e = {{0}};
    const bool parsed = lesson_parse(&l, "t.md", md, &e);
    CHECK(parsed, "%s", e.msg);
    if (!parsed) return;
    CHECK(l.n_attachments == 2 && l.attachments[0].n_words == 1 && l.attachments[1].n_words == 3, "two steps blocks read");
    const bool has[2] = {true, true};
    LessonParts p;
    CHECK(lesson_parts(&p, &l, has, &e), "%s", e.msg);
    const Stage norm = stage_at("x", OP_LAYER_NORM, 15), second = stage_at("step.2.y.second", OP_ADD, 39);
    char h[200];
    range_heading(&l, lesson_narration_of(&p, &l, STEP_FORWARD, &norm), h, sizeof h);
    CHECK(!strcmp(h, "Norms"), "a forward norm shows its cell's section: %s", h);
    range_heading(&l, lesson_narration_of(&p, &l, STEP_BACKWARD, &norm), h, sizeof h);
    CHECK(!strcmp(h, "Back through norms"), "a backward norm shows the section naming layer_norm: %s", h);
    range_heading(&l, lesson_narration_of(&p, &l, STEP_ADAM, &norm), h, sizeof h);
    CHECK(!strcmp(h, "Adam"), "Adam's step shows Adam's section: %s", h);
    range_heading(&l, lesson_narration_of(&p, &l, STEP_BACKWARD, &second), h, sizeof h);
    CHECK(!strcmp(h, "Adam"), "an id pattern matches without the round's prefix: %s", h);
    const BlockRange loss = lesson_narration_of(&p, &l, STEP_LOSS, &norm);
    CHECK(loss.begin == loss.end, "the loss's step, named by no section, shows none");
    // The second cell's narration skips the two attached sections before it: only "More".
    const BlockRange cell2 = lesson_narration_of(&p, &l, STEP_FORWARD, &second);
    int shown = 0;
    for (int i = cell2.begin; i < cell2.end; i++) shown += lesson_range_shows(&l, cell2, i);
    range_heading(&l, cell2, h, sizeof h);
    CHECK(!strcmp(h, "More") && shown == 2, "the second cell shows its own section only: %s, %d blocks", h, shown);
    lesson_parts_free(&p);
    lesson_free(&l);
}

// The last heading before block b that stands in no attached section, or -1.
static int own_heading(const Lesson *l, int b) {
    for (int i = b - 1; i >= 0; i--)
        if (l->blocks[i].kind == RB_HEADING && l->blocks[i].attachment == NOT_ATTACHED) return i;
    return -1;
}

// A forward stage's narration, when no section names it: the prose of its cell's own section.
// (once per cell: seen[cell]).
static void check_forward(const Lesson *l, const LessonParts *p, const Stage *st, bool *seen) {
    const BlockRange r = lesson_narration_of(p, l, STEP_FORWARD, st);
    const int cell = lesson_cell_of_line(l, st->line), own = cell >= 0 ? own_heading(l, l->cells[cell].block) : -1;
    if (r.of != NOT_ATTACHED || cell < 0 || seen[cell]) return;
    seen[cell] = true;
    for (int i = r.begin; i < r.end; i++)
        if (lesson_range_shows(l, r, i) && l->blocks[i].kind == RB_HEADING && l->blocks[i].level >= 2)
            CHECK(i == own, "%s:%d: stage %s (line %d) shows the section at line %d, not its own cell's (line %d)",
                  l->path, l->blocks[i].line, st->id, st->line, l->blocks[i].line, own >= 0 ? l->blocks[own].line : 0);
}

// Every word of every `steps` block names a step of this lesson; with its backward pass bp
// (NULL: none), every backward step of a lesson that narrates the backward pass is narrated.
static void check_words(const Lesson *l, const Interp *it, const BackPass *bp) {
    bool narrates_back = false;
    for (int k = 0; k < l->n_attachments; k++)
        for (int w = 0; w < l->attachments[k].n_words; w++) {
            const StepWord *sw = &l->attachments[k].words[w];
            narrates_back |= sw->kind != STEP_FORWARD;
            bool used = false;
            if (sw->kind == STEP_FORWARD)
                for (int i = 0; i < interp_n_stages(it) && !used; i++)
                    used = attach_word_matches(sw, STEP_FORWARD, interp_stage(it, i)->op, interp_stage(it, i)->id);
            for (int s = 0; bp && s < bp->n_steps && !used; s++) {
                const Stage *st = interp_stage(it, bp->steps[s].stage);
                used = attach_word_matches(sw, back_step_kind(bp->steps[s].kind), st->op, st->id);
            }
            CHECK(used || (!bp && sw->kind != STEP_FORWARD), "%s:%d: '%s' names no step of this lesson", l->path,
                  sw->line, sw->pattern);
        }
    CHECK(!narrates_back || bp, "%s narrates the backward pass: its lesson block sets a target", l->path);
    if (!bp || !narrates_back) return;
    LessonParts p;
    Err e = {{0}};
    CHECK(lesson_parts_of_run(&p, l, it, &e), "%s", e.msg);
    for (int s = 0; s < bp->n_steps; s++) {
        const Stage *st = interp_stage(it, bp->steps[s].stage);
        const BlockRange r = lesson_narration_of(&p, l, back_step_kind(bp->steps[s].kind), st);
        CHECK(r.of != NOT_ATTACHED, "%s: the backward pass's %s step of %s has no section naming it", l->path,
              back_kind_names[bp->steps[s].kind], st->id);
    }
    lesson_parts_free(&p);
}

static bool backward_of(Session *s, BackPass *bp) {
    float labels[64];
    int n = 0;
    Err e = {{0}};
    if (!s->run.tgt || !back_pass_next_tokens(s->it, &s->model, labels, 64, &n)) return false;
    const bool ok = back_pass_build(bp, s->it, &s->model, labels, n, 0, &e);
    CHECK(ok, "%s: %s", s->lesson.path, e.msg);
    return ok;
}

// Opens the lesson at path, runs its pass and splits its narration (p); false, with a failed
// check and nothing left open, if any of it fails.
static bool open_run(Session *s, LessonParts *p, const char *path) {
    Err e = {{0}};
    SessionSpec spec = {.lesson_path = path};
    if (!session_open(s, &spec, &e)) {
        CHECK(false, "%s: %s", path, e.msg);
        return false;
    }
    const bool ok = interp_run(s->it, &e) && lesson_parts_of_run(p, &s->lesson, s->it, &e);
    CHECK(ok, "%s: %s", path, e.msg);
    if (!ok) session_close(s);
    return ok;
}

static void test_course(void) {
    Course c;
    Err e = {{0}};
    const bool loaded = course_load(&c, LESSONS, &e);
    CHECK(loaded, "%s", e.msg);
    if (!loaded) return;
    int lessons = 0, attached = 0;
    for (int k = 0; k < c.n; k++) {
        Session s;
        LessonParts p;
        if (!open_run(&s, &p, c.items[k].path)) continue;
        const Lesson *l = &s.lesson;
        bool *seen = calloc((size_t)l->n_cells + 1, 1);
        for (int i = 0; i < interp_n_stages(s.it); i++) check_forward(l, &p, interp_stage(s.it, i), seen);
        free(seen);
        lesson_parts_free(&p);
        BackPass bp;
        const bool back = l->n_attachments > 0 && backward_of(&s, &bp);
        check_words(l, s.it, back ? &bp : NULL);
        if (back) back_pass_free(&bp);
        lessons++, attached += l->n_attachments > 0;
        session_close(&s);
    }
    CHECK(lessons >= 30 && attached >= 2, "the course's lessons checked (%d, %d with steps blocks)", lessons, attached);
    course_free(&c);
}

// What a reader of backprop.md expects beside each step (headings as the lesson writes them).
static void test_backprop(void) {
    static const struct {
        StepKind kind;
        const char *id;       // the stage (a step of the loss, Adam or the end: the scored stage)
        const char *heading;  // the section shown
    } expect[] = {
        {STEP_LOSS, "generator.logits", "Where the backward pass starts: the loss"},
        {STEP_BACKWARD, "generator.logits", "The generator's step"},
        {STEP_BACKWARD, "decoder.norm", "Through LayerNorm and the residual"},
        {STEP_BACKWARD, "decoder.layers.1.add3", "Through LayerNorm and the residual"},
        {STEP_BACKWARD, "decoder.layers.1.linear2", "Through the feed-forward"},
        {STEP_BACKWARD, "encoder.layers.0.activation", "Through the feed-forward"},
        {STEP_BACKWARD, "decoder.layers.0.cross_attn.weights", "Through softmax and attention"},
        {STEP_BACKWARD, "encoder.layers.1.self_attn.scaled", "Through softmax and attention"},
        {STEP_BACKWARD, "encoder.layers.0.self_attn.q", "Through softmax and attention"},
        {STEP_BACKWARD, "encoder.pos", "Into the embeddings"},
        {STEP_BACKWARD, "encoder.embed", "Into the embeddings"},
        {STEP_ADAM, "encoder.embed", "One whole training step"},
        {STEP_AFTER, "generator.logits", "One whole training step"},
        {STEP_FORWARD, "encoder.layers.0.norm1", "The encoder"},
        {STEP_FORWARD, "decoder.layers.1.cross_attn.weights", "Attention and the feed-forward"},
        {STEP_FORWARD, "generator.logits", "The generator"},
    };
    Session s;
    LessonParts p;
    if (!open_run(&s, &p, LESSONS "/backprop.md")) return;
    for (size_t k = 0; k < sizeof expect / sizeof *expect; k++) {
        const int i = interp_find(s.it, expect[k].id);
        CHECK(i >= 0, "backprop.md has stage %s", expect[k].id);
        if (i < 0) continue;
        char h[200];
        range_heading(&s.lesson, lesson_narration_of(&p, &s.lesson, expect[k].kind, interp_stage(s.it, i)), h, sizeof h);
        CHECK(!strncmp(h, expect[k].heading, strlen(expect[k].heading)), "backprop.md, %s step of %s: \"%s\", not \"%s\"",
              step_kind_names[expect[k].kind], expect[k].id, expect[k].heading, h);
    }
    lesson_parts_free(&p);
    session_close(&s);
}

// training.md: no stage of the forward pass shows the Training view's description.
static void test_training(void) {
    Session s;
    LessonParts p;
    if (!open_run(&s, &p, LESSONS "/training.md")) return;
    int seen = 0, wrong = 0;
    for (int i = 0; i < interp_n_stages(s.it); i++) {
        const BlockRange r = lesson_narration_of(&p, &s.lesson, STEP_FORWARD, interp_stage(s.it, i));
        for (int b = r.begin; b < r.end; b++) {
            const RichBlock *rb = &s.lesson.blocks[b];
            if (!lesson_range_shows(&s.lesson, r, b) || rb->kind != RB_HEADING || !rb->n_spans) continue;
            seen++;
            wrong += !strcmp(rb->spans[0].text, "What appears");
        }
    }
    CHECK(seen > 0 && !wrong, "training.md: %d of its stages' narrations show \"What appears\" (of %d)", wrong, seen);
    lesson_parts_free(&p);
    session_close(&s);
}

int main(void) {
    test_refused();
    test_which_section();
    test_course();
    test_backprop();
    test_training();
    return check_finish("test_attach");
}
