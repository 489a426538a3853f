// fuzz_lesson.c: a lesson file. lesson_parse reads the Markdown, its setup block and its
// program; for a lesson that parses, every line's cell and every cell's narration are looked
// up, and each must point inside the lesson.
#include <assert.h>

#include "fuzz.h"
#include "lesson.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    char *text = fuzz_text(data, n);
    Lesson l;
    Err e = {{0}};
    if (lesson_parse(&l, "fuzz/lesson.md", text, &e)) {
        for (int line = 0; line <= l.n_lines + 1; line++) {
            const int c = lesson_cell_of_line(&l, line);
            assert(c >= -1 && c < l.n_cells);
            if (c >= 0) assert(line >= 1 && line <= l.n_lines);
        }
        for (int c = -1; c <= l.n_cells; c++) {
            int begin, end;
            lesson_narration(&l, c, &begin, &end);
            assert(0 <= begin && begin <= end && end <= l.n_blocks);
        }
        for (int b = 0; b < l.n_blocks; b++)
            for (int s = 0; s < l.blocks[b].n_spans; s++) assert(l.blocks[b].spans[s].text);
        lesson_free(&l);
    } else {
        assert(e.msg[0]);
    }
    free(text);
    return 0;
}
