// test_warm.c: the idle window readies the stage Right steps to (app_warm_next). On lessons/gpt2.md
// (GPT-2's layout) after a 63-token prompt, traced under the least trace budget that holds it, the
// app steps to every stage as Right does; before each step it is idle once:
//   - app_warm_next readies the next stage once for each stage on screen (a second call does
//     nothing), never past the pass's last stage, and never while the backward pass is on screen
//     (on the dates lesson, which has a target);
//   - some stages the budget let go are recomputed in those pauses, and then the step reads the
//     stage without recomputing anything: the trace holds what it held after the pause;
//   - every stage so readied has the bits of the same pass traced without a budget, and the trace
//     never holds more than its budget.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "scene.h"

enum { PROMPT = 63, BUDGET_MB = 25 };

static size_t floats_of(const Interp *it, int i) {
    return (size_t)shape_numel(&interp_stage(it, i)->shape) * (size_t)interp_batch(it);
}

// The same pass without a budget: each stage's output, copied. NULL (a failed check) if it
// could not run.
static float **reference(const SessionSpec *spec, int *n) {
    Session s;
    Err e = {{0}};
    const bool ok = session_open(&s, spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "gpt2.md without a budget: %s", e.msg);
    if (!ok) return NULL;
    *n = interp_n_done(s.it);
    float **out = calloc((size_t)*n, sizeof *out);
    for (int i = 0; out && i < *n; i++) {
        const size_t bytes = sizeof(float) * floats_of(s.it, i);
        if ((out[i] = malloc(bytes))) memcpy(out[i], interp_output(s.it, i), bytes);
    }
    session_close(&s);
    return out;
}

// The backward pass steps its own way: with it on screen, nothing is readied (the dates lesson,
// which has a target to learn from).
static void backward_on_screen(void) {
    const SessionSpec spec = {.lesson_path = LESSONS "/forward-pass.md", .target = "2026-11-22"};
    Scene s;
    Err e = {{0}};
    if (!scene_open(&s, 1280, 720, &spec)) return;
    CHECK(interp_run(s.a.session.it, &e), "forward-pass.md: %s", e.msg);
    const int w = interp_find(s.a.session.it, "encoder.layers.0.self_attn.weights");
    app_goto(&s.a, w);
    app_act(&s.a, CMD_BACKWARD, 0);
    CHECK(app_back_step(&s.a) != NULL, "B on %s: the backward pass", "encoder.layers.0.self_attn.weights");
    CHECK(!app_warm_next(&s.a), "the backward pass on screen: nothing readied");
    app_act(&s.a, CMD_BACKWARD, 0);
    CHECK(app_back_step(&s.a) == NULL, "B again: the forward pass");
    scene_close(&s);
}

int main(void) {
    char ids[1024] = "";
    for (int i = 0, k = 0; i < PROMPT; i++) k += snprintf(ids + k, sizeof ids - (size_t)k, "%s%d", i ? "," : "", 100 + 37 * i);
    SessionSpec spec = {.lesson_path = LESSONS "/gpt2.md", .src_ids = ids, .max_len = 1};
    int n_ref = 0;
    float **ref = reference(&spec, &n_ref);
    spec.trace_mb = BUDGET_MB;
    Scene s;
    Err e = {{0}};
    if (!ref || !scene_open(&s, 1280, 720, &spec)) return check_finish("test_warm");
    App *a = &s.a;
    const Interp *it = a->session.it;
    CHECK(interp_run(a->session.it, &e), "gpt2.md under %d MB: %s", BUDGET_MB, e.msg);
    const int n = interp_n_done(it);
    CHECK(n == n_ref, "%d stages under the budget, %d without", n, n_ref);
    int readied = 0, differ = 0, over = 0, unheld = 0;
    app_goto(a, 0);
    for (int i = 0; i + 1 < n && n == n_ref; i++) {
        app_draw(&s.ui, a);  // the frame on screen: what it reads stays while the window is idle
        const size_t before = interp_trace_bytes(it);
        CHECK(app_warm_next(a), "stage %d: the next stage is readied", i);
        CHECK(!app_warm_next(a), "stage %d: readied once, not again", i);
        const size_t after = interp_trace_bytes(it);
        readied += after > before;
        over += after > interp_trace_budget(it);
        app_act(a, CMD_NEXT, 0);
        CHECK(a->cursor == i + 1, "Right from stage %d: on stage %d", i, a->cursor);
        const float *x = interp_output(it, i + 1);  // what the step's frame reads first
        unheld += interp_trace_bytes(it) != after;
        differ += !x || memcmp(x, ref[i + 1], sizeof(float) * floats_of(it, i + 1)) != 0;
    }
    printf("gpt2.md, %d-token prompt, under %d MB: %d stages, %d readied in a pause (recomputed)\n", PROMPT, BUDGET_MB,
           n, readied);
    CHECK(readied > 0, "no stage was recomputed in a pause: the budget let none go");
    CHECK(unheld == 0, "%d steps recomputed their stage after the pause had readied it", unheld);
    CHECK(differ == 0, "%d stages readied in a pause differ from the pass without a budget", differ);
    CHECK(over == 0, "the trace held more than its budget after %d pauses", over);
    CHECK(!app_warm_next(a), "on the last stage: nothing after it to ready");
    for (int i = 0; i < n_ref; i++) free(ref[i]);
    free(ref);
    scene_close(&s);
    backward_on_screen();
    return check_finish("test_warm");
}
