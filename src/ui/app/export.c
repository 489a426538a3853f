// export.c: the window's views without a window: one PNG per stage (slides, render tests),
// the frame-time benchmark, and the handout page of `export --html` (handout_run; the window's
// Shift+S is handout.c's app_handout).
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dispatch.h"
#include "heat.h"
#include "handout.h"
#include "window.h"

static bool make_dir(const char *dir, Err *e) {
    struct stat sb;
    if (stat(dir, &sb) == 0) return S_ISDIR(sb.st_mode) || err_set(e, "%s exists and is not a folder", dir);
    if (mkdir(dir, 0777) != 0) return err_set(e, "%s: cannot create the folder: %s", dir, strerror(errno));
    return true;
}

int export_run(const ExportOptions *o) {
    App a;
    Err e = {{0}};
    if (!app_open(&a, &o->spec, &e) || !make_dir(o->out_dir, &e) || !interp_run(a.session.it, &e)) {
        fprintf(stderr, "stepformer: %s\n", e.msg);
        if (a.loaded) app_free(&a);
        return 1;
    }
    Gfx *g = gfx_open_offscreen(o->w, o->h, &e);
    if (!g) {
        fprintf(stderr, "stepformer: %s\n", e.msg);
        app_free(&a);
        return 1;
    }
    app_set_course(&a, o->course_dir, a.session.lesson.path);  // drawn as the window draws it
    Ui ui = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    const int n = interp_n_done(a.session.it);
    int written = 0, wanted = 0;
    bool *chosen = calloc((size_t)(n > 0 ? n : 1), sizeof *chosen);  // the stages to write
    if (!chosen) err_code(&e, ERR_MEMORY, "out of memory");
    for (int i = 0; chosen && i < n; i++) chosen[i] = !o->stages;
    for (const char *p = chosen ? o->stages : NULL; p && *p;) {  // "a,b": each as --to takes it
        const size_t len = strcspn(p, ",");
        char id[STAGE_ID_MAX];
        bool by_round;
        snprintf(id, sizeof id, "%.*s", (int)(len < sizeof id ? len : sizeof id - 1), p);
        const int k = interp_find_stage(a.session.it, id, a.session.lesson.path, &by_round, &e);
        if (k < 0) {
            fprintf(stderr, "stepformer: %s\n", e.msg);
            break;
        }
        wanted += !chosen[k], chosen[k] = true;
        p += len + (p[len] == ',');
    }
    if (!o->stages) wanted = n;
    for (int i = 0; chosen && i < n; i++) {
        if (!chosen[i]) continue;
        app_goto(&a, i);
        a.view = o->view >= 0 ? (ViewKind)o->view : app_view_for(&a, i);
        app_draw(&ui, &a);
        gfx_present(g);
        char path[1200];
        snprintf(path, sizeof path, "%s/%04d-%s.png", o->out_dir, i, interp_stage(a.session.it, i)->id);
        if (!gfx_save_png(g, path, &e)) {
            fprintf(stderr, "stepformer: %s\n", e.msg);
            break;
        }
        written++;
    }
    if (o->backward && !e.msg[0]) {  // the backward pass after the forward one, as B opens it
        app_goto(&a, n - 1);
        a.error[0] = '\0';
        app_act(&a, CMD_BACKWARD, 0);
        if (!app_back_step(&a)) err_set(&e, "%s", a.error[0] ? a.error : "the backward pass could not be built");
        const int steps = app_back_step(&a) ? a.back.pass.n_steps : 0;
        wanted += steps;
        for (int k = 0; k < steps && !e.msg[0]; k++) {
            app_backward_goto(&a, k);
            const BackStep *b = &a.back.pass.steps[k];
            const bool att = b->kind == BACK_STAGE && interp_stage(a.session.it, b->stage)->role == ROLE_WEIGHTS;
            a.view = o->view >= 0 ? (ViewKind)o->view : att ? VIEW_ATTENTION : VIEW_STAGE;
            app_draw(&ui, &a);
            gfx_present(g);
            char path[1200];
            const char *what = b->kind == BACK_ADAM ? a.session.model.params[b->weight].name
                             : b->kind == BACK_STAGE ? interp_stage(a.session.it, b->stage)->id : back_kind_names[b->kind];
            snprintf(path, sizeof path, "%s/b%04d-%s-%s.png", o->out_dir, k, back_kind_names[b->kind], what);
            for (char *c = path + strlen(o->out_dir) + 1; *c; c++) *c = *c == ' ' ? '_' : *c;
            if (gfx_save_png(g, path, &e)) written++;
        }
        if (e.msg[0]) fprintf(stderr, "stepformer: %s\n", e.msg);
    }
    printf("wrote %d PNGs (%dx%d) to %s\n", written, o->w, o->h, o->out_dir);
    free(chosen);
    heat_cache_free(ui.heat);
    gfx_close(g);
    app_free(&a);
    return written == wanted && !e.msg[0] ? 0 : 1;
}

// ---- the frame benchmark ----

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void report(const char *what, double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp);
    printf("  %-44s median %6.2f ms   p99 %6.2f ms   (%d frames)\n", what, t[n / 2],
           t[(int)ceil(n * 0.99) - 1], n);
}

// Redraws the frame on screen `frames` times (after three untimed), the mouse moving over it, into
// t[frames] (sorted). False if there is no t.
static bool redraw_times(Ui *ui, App *a, double *t, int frames) {
    for (int f = -3; f < frames && t; f++) {
        ui->mx = 300 + f % 400, ui->my = 300 + f % 200;  // a moving mouse: hover readouts change
        double t0 = now_ms();
        if (a->train) train_job_snapshot(a->train, &a->train_snap);  // as the window does
        app_draw(ui, a);
        gfx_present(ui->g);
        if (f >= 0) t[f] = now_ms() - t0;
    }
    if (t) qsort(t, (size_t)frames, sizeof *t, cmp);
    return t != NULL;
}

static void frame_times(Ui *ui, App *a, const char *what, int frames) {
    double *t = malloc(sizeof *t * (size_t)frames);
    if (redraw_times(ui, a, t, frames)) report(what, t, frames);
    free(t);
}

int ui_bench_run(int frames) {
    ModelConfig c = config_base();
    App a;
    memset(&a, 0, sizeof a);
    Err e = {{0}};
    if (!app_open(&a, &(SessionSpec){.builtin_lesson = "forward-pass.md"}, &e)) return fprintf(stderr, "%s\n", e.msg), 1;
    app_free(&a);
    memset(&a, 0, sizeof a);
    a.scale = 1.0f, a.all_heads = true, a.zoom = (ZoomBox){0, 0, 1, 1}, a.loaded = true;
    if (!session_open_random(&a.session, &c, NULL, 1, 32, 32, &e) || !interp_run(a.session.it, &e))
        return fprintf(stderr, "stepformer: %s\n", e.msg), 1;
    pe_init(&a.pe, c.d_model);
    pe_from_program(&a.pe, a.session.it, &a.session.model);
    pe_rebuild(&a.pe, &a.session.model, &e);
    Gfx *g = gfx_open_offscreen(1920, 1080, &e);
    if (!g) return fprintf(stderr, "stepformer: %s\n", e.msg), 1;
    Ui ui = {.g = g, .heat = heat_cache_new()};
    const Interp *it = a.session.it;
    printf("window frames, base configuration (d_model 512, 8 heads, 6+6 layers), 1920x1080 off screen:\n");
    struct { const char *id; ViewKind v; const char *what; } cases[] = {
        {"decoder.layers.5.linear1", VIEW_STAGE, "stage: linear1, weights [2048 x 512]"},
        {"decoder.layers.5.cross_attn.weights", VIEW_ATTENTION, "attention: 8 heads of cross-attention"},
        {"generator.probs", VIEW_DECODE, "decoding: generator softmax"},
        {"encoder.embed", VIEW_PE, "positions explorer"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        app_goto(&a, interp_find(it, cases[k].id));
        a.view = cases[k].v;
        frame_times(&ui, &a, cases[k].what, frames);
    }
    // Compare: one self-attention pinned, another beside it, and their difference.
    app_goto(&a, interp_find(it, "encoder.layers.0.self_attn.weights"));
    app_act(&a, CMD_PIN, 0);
    app_goto(&a, interp_find(it, "encoder.layers.5.self_attn.weights"));
    a.view = VIEW_COMPARE;
    frame_times(&ui, &a, "compare: two attentions and their difference", frames);
    // Training: a model learning in the background while the view draws its curves and maps.
    a.view = VIEW_TRAIN;
    app_train(&a, CMD_TRAIN_TOGGLE, 0);
    frame_times(&ui, &a, "training: while a model trains", frames);
    if (a.train) train_job_ask_stop(a.train);
    // Step to frame: a key press moves the cursor; the next frame builds that stage's images.
    double t[200];
    a.view = VIEW_STAGE;
    app_goto(&a, 0);
    for (int s = 0; s < 200; s++) {
        double t0 = now_ms();
        app_act(&a, CMD_NEXT, 0);
        app_draw(&ui, &a);
        gfx_present(g);
        t[s] = now_ms() - t0;
    }
    report("step to frame (Right, 200 stages)", t, 200);
    heat_cache_free(ui.heat);
    gfx_close(g);
    app_free(&a);
    return 0;
}

const char *const ui_bench_view_names[UI_BENCH_VIEWS] = {
    "stage: the last layer's c_fc", "attention: the last layer's heads", "decoding: the output head's softmax",
    "positions explorer", "compare: the first and last layers' attention"};

// The last stage whose id ends with `tail`, or -1.
static int last_ending(const Interp *it, const char *tail) {
    const size_t n = strlen(tail);
    for (int i = interp_n_done(it) - 1; i >= 0; i--) {
        const char *id = interp_stage(it, i)->id;
        if (strlen(id) >= n && !strcmp(id + strlen(id) - n, tail)) return i;
    }
    return -1;
}

// Each of ui_bench_view_names on the open session, redrawn (redraw_times): out->view_*.
static void view_frames(Ui *ui, App *a, LongPassFigures *out) {
    enum { FRAMES = 30 };
    const Interp *it = a->session.it;
    const struct { const char *tail; ViewKind v; } at[UI_BENCH_VIEWS] = {
        {".mlp.c_fc", VIEW_STAGE}, {"_attn.weights", VIEW_ATTENTION}, {"generator.probs", VIEW_DECODE},
        {"tok_emb", VIEW_PE}, {"_attn.weights", VIEW_COMPARE}};
    double t[FRAMES];
    for (int k = 0; k < UI_BENCH_VIEWS; k++) {
        const int i = last_ending(it, at[k].tail);
        if (i < 0) continue;
        if (at[k].v == VIEW_COMPARE) {  // the first attention pinned, the last beside it
            for (int j = 0; j < i; j++)
                if (interp_stage(it, j)->role == ROLE_WEIGHTS) {
                    app_goto(a, j), app_act(a, CMD_PIN, 0);
                    break;
                }
        }
        app_goto(a, i);
        a->view = at[k].v;
        if (redraw_times(ui, a, t, FRAMES)) out->view_median[k] = t[FRAMES / 2], out->view_p99[k] = t[FRAMES - 1];
    }
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

// The stage at the cursor in the view the window picks for it, drawn and presented off screen.
static void draw_at_cursor(Ui *ui, App *a) {
    a->view = app_view_for(a, a->cursor);
    app_draw(ui, a);
    gfx_present(ui->g);
}

// A click on each block of the architecture map (CMD_GOTO_BLOCK: the block's first stage) after
// the steps, in an order that jumps about the pass (block k * 7 mod n, from the last, so far from
// what the steps left held), each timed to its frame: out->click_*.
static void map_clicks(Ui *ui, App *a, LongPassFigures *out) {
    enum { MAX_ROWS = 512 };
    BlockRow *rows = malloc(sizeof *rows * MAX_ROWS);
    double *t = malloc(sizeof *t * MAX_ROWS);
    const int n = rows && t ? block_rows(a, 0, rows, MAX_ROWS) : 0;
    int stride = 7;
    while (n > 1 && gcd(stride, n) != 1) stride++;  // every row once: a stride prime to n
    for (int k = 0; k < n; k++) {
        const int first = rows[(n - 1 + (size_t)k * stride) % n].first;
        const double s0 = now_ms();
        cmd_push(&a->queue, (Command){CMD_GOTO_BLOCK, first, true});  // as app_click queues a map row's
        app_drain(a, ui);
        draw_at_cursor(ui, a);
        t[k] = now_ms() - s0;
    }
    if (n > 0) {
        qsort(t, (size_t)n, sizeof *t, cmp);
        out->click_median = t[n / 2], out->click_max = t[n - 1], out->clicks = n;
    }
    free(rows), free(t);
}

// Traces the open session's pass, then draws its first stage (the frame the window opens on) and
// steps to every other stage as Right does, each in the view the window picks, timing each step
// to its frame (drawn off screen at 1920x1080).
static bool step_all(App *a, bool pause, bool views, LongPassFigures *out, Err *e) {
    const double t0 = now_ms();
    bool ok = interp_run(a->session.it, e);
    out->trace_ms = now_ms() - t0;
    Gfx *g = ok ? gfx_open_offscreen(1920, 1080, e) : NULL;
    const int n = interp_n_stages(a->session.it);
    double *t = g ? malloc(sizeof *t * (size_t)n) : NULL;
    if (g && !t) err_code(e, ERR_MEMORY, "out of memory");
    if (t) {
        Ui ui = {.g = g, .heat = heat_cache_new()};
        app_goto(a, 0);
        int readied = 0;
        for (int s = 0; s < n; s++) {  // as Right does, each stage in the view the window picks
            const size_t held = interp_trace_bytes(a->session.it);
            readied += pause && app_warm_next(a) && interp_trace_bytes(a->session.it) > held;
            const double s0 = now_ms();
            app_goto(a, s);
            draw_at_cursor(&ui, a);
            t[s] = now_ms() - s0;
        }
        const int m = n > 1 ? n - 1 : 1;  // the steps: each stage after the first, which opening draws
        double *st = n > 1 ? t + 1 : t;
        qsort(st, (size_t)m, sizeof *st, cmp);
        *out = (LongPassFigures){out->trace_ms, t[0], st[m / 2], st[(int)ceil(m * 0.99) - 1], st[m - 1], m};
        out->trace_bytes = interp_trace_bytes(a->session.it), out->readied = readied;
        if (views) map_clicks(&ui, a, out), view_frames(&ui, a, out);
        heat_cache_free(ui.heat);
    }
    free(t);
    if (g) gfx_close(g);
    return t != NULL;
}

bool ui_bench_long(int len, LongPassFigures *out, Err *e) {
    ModelConfig c = config_base();
    if (c.max_positions < len) c.max_positions = len;
    App a;
    memset(&a, 0, sizeof a);
    a.scale = 1.0f, a.all_heads = true, a.zoom = (ZoomBox){0, 0, 1, 1}, a.loaded = true;
    if (!session_open_random(&a.session, &c, NULL, 1, len, len, e)) return false;
    const bool ok = step_all(&a, false, false, out, e);
    app_free(&a);
    return ok;
}

bool ui_bench_open(const SessionSpec *spec, bool pause, LongPassFigures *out, Err *e) {
    App a;
    memset(&a, 0, sizeof a);
    a.scale = 1.0f, a.all_heads = true, a.zoom = (ZoomBox){0, 0, 1, 1};
    const double t0 = now_ms();
    if (!app_open(&a, spec, e)) {
        if (a.loaded) app_free(&a);
        return false;
    }
    const double opened = now_ms() - t0;
    const bool ok = step_all(&a, pause, true, out, e);
    out->open_ms = opened;
    app_free(&a);
    return ok;
}

int handout_run(const ExportOptions *o) {
    App a;
    Err e = {{0}};
    if (!app_open(&a, &o->spec, &e)) {
        fprintf(stderr, "stepformer: %s\n", e.msg);
        if (a.loaded) app_free(&a);
        return 1;
    }
    struct stat sb;
    if (stat(o->html_dir, &sb) != 0 && mkdir(o->html_dir, 0777) != 0) {
        fprintf(stderr, "stepformer: %s: cannot create the folder: %s\n", o->html_dir, strerror(errno));
        return app_free(&a), 1;
    }
    if (stat(o->html_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "stepformer: %s exists and is not a folder\n", o->html_dir);
        return app_free(&a), 1;
    }
    Gfx *g = gfx_open_offscreen(o->w, o->h, &e);
    if (!g) {
        fprintf(stderr, "stepformer: %s\n", e.msg);
        app_free(&a);
        return 1;
    }
    app_set_course(&a, o->course_dir, a.session.lesson.path);
    Ui ui = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    const bool ok = handout_write(&a, &ui, o->html_dir, o->whole_window, &e);
    if (!ok) fprintf(stderr, "stepformer: %s\n", e.msg);  // (a page for --pdf alone is said by the PDF's line)
    else if (!o->scratch_page) printf("wrote %s/index.html (pictures: %s, drawn at %dx%d)\n", o->html_dir,
                                         o->whole_window ? "the whole window" : "the centre view", o->w, o->h);
    heat_cache_free(ui.heat);
    gfx_close(g);
    app_free(&a);
    return ok ? 0 : 1;
}
