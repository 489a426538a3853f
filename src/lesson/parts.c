// parts.c: the narration split into opening card, the cells' narration and closing card.
#include "parts.h"

#include <stdlib.h>
#include <string.h>

bool lesson_block_shown(const RichBlock *b) {
    if (b->kind == RB_CODE)  // program cells stand in the program panel; a question waits for its stage (app_quiz.c)
        return strcmp(b->lang, "program") != 0 && strcmp(b->lang, "lesson") != 0 && strcmp(b->lang, "question") != 0 &&
               strcmp(b->lang, "steps") != 0;
    return b->kind == RB_RULE || b->kind == RB_TABLE_CELL || b->n_spans > 0;
}

bool lesson_range_shows(const Lesson *l, BlockRange r, int i) {
    return i >= r.begin && i < r.end && i < l->n_blocks && lesson_block_shown(&l->blocks[i]) &&
           l->blocks[i].attachment == r.of;
}

static BlockRange flow_range(int begin, int end) { return (BlockRange){begin, end, NOT_ATTACHED}; }

BlockRange lesson_narration_of(const LessonParts *p, const Lesson *l, StepKind kind, const Stage *st) {
    for (int k = 0; k < l->n_attachments; k++) {
        const Attachment *a = &l->attachments[k];
        for (int w = 0; w < a->n_words; w++)
            if (attach_word_matches(&a->words[w], kind, st ? st->op : OP_COUNT, st ? st->id : NULL))
                return (BlockRange){a->begin, a->end, k};
    }
    const int cell = st && (kind == STEP_FORWARD || kind == STEP_BACKWARD) ? lesson_cell_of_line(l, st->line) : -1;
    return cell >= 0 && cell < p->n_cells ? p->cells[cell] : flow_range(0, 0);
}

// Where the narration of the first cell with stages (cell c) begins.
static int first_begin(const Lesson *l, int c) {
    int begin, end;
    lesson_narration(l, c, &begin, &end);
    if (begin > 0) return begin;
    for (int i = end - 1; i >= 0; i--)  // no cell before it: from its section's heading
        if (l->blocks[i].kind == RB_HEADING && l->blocks[i].level >= 2) return i;
    for (int i = 0; i < end; i++)  // no section heading: all but the title
        if (l->blocks[i].kind == RB_HEADING) return i + 1;
    return 0;
}

bool lesson_parts(LessonParts *p, const Lesson *l, const bool *has_stages, Err *e) {
    memset(p, 0, sizeof *p);
    p->cells = calloc((size_t)(l->n_cells > 0 ? l->n_cells : 1), sizeof *p->cells);
    if (!p->cells) return err_code(e, ERR_MEMORY, "out of memory");
    p->n_cells = l->n_cells;
    int last = -1;  // the last cell with stages so far
    for (int c = 0; c < l->n_cells; c++) {
        if (!has_stages[c]) continue;
        const int begin = last < 0 ? first_begin(l, c) : l->cells[last].block + 1;
        p->cells[c] = flow_range(begin, l->cells[c].block);
        if (last < 0) p->opening = flow_range(0, begin);
        last = c;
    }
    for (int c = 0; c < l->n_cells; c++)
        if (!has_stages[c]) p->cells[c] = flow_range(0, 0);
    if (last < 0) p->opening = flow_range(0, l->n_blocks);
    else p->closing = flow_range(l->cells[last].block + 1, l->n_blocks);
    return true;
}

bool lesson_parts_of_run(LessonParts *p, const Lesson *l, const Interp *it, Err *e) {
    bool *has = calloc((size_t)(l->n_cells > 0 ? l->n_cells : 1), sizeof *has);
    if (!has) return memset(p, 0, sizeof *p), err_code(e, ERR_MEMORY, "out of memory");
    for (int i = 0, n = it ? interp_n_stages(it) : 0; i < n; i++) {
        const int c = lesson_cell_of_line(l, interp_stage(it, i)->line);
        if (c >= 0) has[c] = true;
    }
    const bool ok = lesson_parts(p, l, has, e);
    free(has);
    return ok;
}

void lesson_parts_free(LessonParts *p) {
    free(p->cells);
    memset(p, 0, sizeof *p);
}
