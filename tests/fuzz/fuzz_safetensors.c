// fuzz_safetensors.c: a weights file. st_parse reads the bytes; a file that parses is checked
// against what st_parse promises, then loaded as the model of the built-in standard lesson
// (configuration from its metadata and shapes) and, when it loads, run once greedily.
#include <assert.h>
#include <stdio.h>

#include "fuzz.h"
#include "interp.h"
#include "lesson.h"
#include "session.h"

static Lesson lesson;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    const char *path;
    const char *text = session_builtin_lesson("forward-pass.md", &path);
    Err e = {{0}};
    if (!text || !lesson_parse(&lesson, path, text, &e)) {
        fprintf(stderr, "fuzz_safetensors: the built-in lesson: %s\n", e.msg);
        abort();
    }
    return 0;
}

// Every entry lies inside the arena, in order, and holds as many floats as its shape.
static void check_file(const StFile *f) {
    const float *at = f->arena;
    for (int i = 0; i < f->n_entries; i++) {
        const StEntry *en = &f->entries[i];
        assert(en->name && en->shape.ndim >= 0 && en->shape.ndim <= SHAPE_MAX_DIMS);
        assert(en->data >= at);
        at = en->data + shape_numel(&en->shape);
        assert(st_find(f, en->name) != NULL);
    }
    for (int i = 0; i < f->n_meta; i++) assert(st_meta(f, f->meta[i].name) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    StFile f;
    Err e = {{0}};
    if (!st_parse(&f, data, n, "fuzz.safetensors", &e)) {
        assert(e.msg[0] && f.n_entries == 0 && f.arena == NULL);
        return 0;
    }
    check_file(&f);
    Model m;
    if (!model_from_file(&m, &f, "fuzz.safetensors", &lesson.program, NULL, &e)) {
        assert(e.msg[0] && f.n_entries == 0);
        return 0;
    }
    static const float src[3] = {4, 5, 6};
    const RunSpec spec = {.src = src, .S = 3, .max_new = 3, .batch = 1};
    Interp *it = interp_new(&lesson.program, &m, &spec, &e);
    if (it) interp_run(it, &e);
    interp_free(it);
    model_free(&m);
    return 0;
}
