// test_render.c: what the views draw, checked in pixels, off screen (no display needed).
//   - a known matrix drawn as a heatmap has the published colours of its map in the right cells,
//     with labels and a colour bar beside it;
//   - every view of the forward-pass lesson draws something at 800x600 and 1920x1080;
//   - export writes one PNG per stage, named by index and stage id.
#include <SDL_image.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dispatch.h"
#include "check.h"
#include "kernels_llm.h"
#include "scene.h"
#include "events.h"
#include "heat.h"
#include "window.h"

static void write_text(const char *path, const char *text);

static bool same(Rgba a, Rgba b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

static Rgba pixel(const Rgba *px, int w, int x, int y) { return px[(size_t)y * w + x]; }

// The ends and middle of each map, as published (ColorBrewer RdBu, viridis).
static const Rgba rdbu_blue = {5, 48, 97, 255}, rdbu_white = {247, 247, 247, 255},
                  rdbu_red = {103, 0, 31, 255}, viridis_low = {68, 1, 84, 255},
                  viridis_high = {253, 231, 37, 255};

static void test_pixels(void) {
    const float m[2 * 3] = {-2, 0, 2, 1, -INFINITY, -1};
    Rgba px[6];
    heat_pixels(px, 3, 2, m, NULL, 3, 0, 2, 0, 3, CMAP_DIVERGING, -2, 2);
    CHECK(same(px[0], rdbu_blue) && same(px[1], rdbu_white) && same(px[2], rdbu_red),
          "diverging: -max blue, 0 white, +max red");
    CHECK(same(px[4], cmap_masked), "-inf is the masked grey");
    CHECK(px[3].r > px[3].b && px[5].b > px[5].r, "+1 reddish, -1 bluish");
    const float p[3] = {0, 0.5f, 1};
    heat_pixels(px, 3, 1, p, NULL, 3, 0, 1, 0, 3, CMAP_SEQUENTIAL, 0, 1);
    CHECK(same(px[0], viridis_low) && same(px[2], viridis_high), "sequential: 0 dark purple, 1 yellow");
    // Downsampling: each pixel is the mean of its block (here 2 x 2 cells -> 1 pixel).
    const float d[4 * 4] = {1, 1, -1, -1, 1, 1, -1, -1, 2, 0, 0, 0, 0, -2, 0, 0};
    Rgba ds[4];
    heat_pixels(ds, 2, 2, d, NULL, 4, 0, 4, 0, 4, CMAP_DIVERGING, -1, 1);
    CHECK(same(ds[0], rdbu_red) && same(ds[1], rdbu_blue) && same(ds[2], rdbu_white) && same(ds[3], rdbu_white),
          "block means: (1,-1,0,0)");
    // A mask shows masked keys as masked even where the data is a finite 0.
    const float w[2] = {1, 0}, mk[2] = {0, -INFINITY};
    heat_pixels(ds, 2, 1, w, mk, 2, 0, 1, 0, 2, CMAP_SEQUENTIAL, 0, 1);
    CHECK(same(ds[1], cmap_masked) && same(ds[0], viridis_high), "mask overrides the value");
}

// A stage id cut at its front keeps its end, as much of it as fits, and fits.
static void test_fit_tail(Gfx *g) {
    Ui ui = {.g = g, .th = &theme_light, .px = 16, .small = 13, .pad = 8, .mx = -1, .my = -1};
    const char *id = "step.10.decoder.layers.1.cross_attn.weights";
    const int full = gfx_text_width(g, FONT_SANS, 13, id), em = gfx_text_width(g, FONT_SANS, 13, "W");
    gfx_begin(g, theme_light.bg);
    CHECK(ui_text_fit_tail(&ui, FONT_SANS, 13, theme_light.text, 0, 0, id, full) == full, "an id that fits is whole");
    const int w = ui_text_fit_tail(&ui, FONT_SANS, 13, theme_light.text, 0, 20, id, full / 2);
    CHECK(w <= full / 2 && w > full / 2 - 2 * em, "cut to fit half its width: %d of %d", w, full / 2);
    CHECK(ui_text_fit_tail(&ui, FONT_SANS, 13, theme_light.text, 0, 40, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", em) <= em,
          "a cut between two-byte characters fits");
    gfx_present(g);
}

// Draws a 3 x 4 matrix large enough that each cell is many pixels, and samples cell centres.
static void test_heatmap_widget(Gfx *g, HeatCache *cache) {
    const float m[3 * 4] = {-3, -1.5f, 0, 1.5f, 3, 0, 0, 0, 0, 0, -3, 3};
    const char *rows[3] = {"the", "cat", "sat"};
    Ui ui = {.g = g, .th = &theme_light, .px = 16, .small = 13, .pad = 8, .mx = -1, .my = -1, .heat = cache};
    gfx_begin(g, theme_light.bg);
    HeatSpec h = {.title = "x", .shape = shape2(3, 4), .kind = TK_VALUES, .data = m, .rows = 3, .cols = 4,
                  .row_labels = rows, .n_row_labels = 3, .key = {99, 1, 0, 0}};
    Rect cells = heat_draw(&ui, &h, (Rect){20, 20, 600, 400});
    gfx_present(g);
    int w, hh;
    gfx_size(g, &w, &hh);
    Rgba *px = malloc(sizeof *px * (size_t)w * hh);
    CHECK(gfx_read(g, px), "read back the canvas");
    CHECK(cells.w >= 4 * 20 && cells.h >= 3 * 20, "cells are large (%dx%d)", cells.w, cells.h);
    const float cw = cells.w / 4.0f, ch = cells.h / 3.0f;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++) {
            Rgba want = cmap_value(CMAP_DIVERGING, m[r * 4 + c], -3, 3);
            Rgba got = pixel(px, w, cells.x + (int)((c + 0.5f) * cw), cells.y + (int)((r + 0.5f) * ch));
            CHECK(same(got, want), "cell (%d,%d): got %d,%d,%d want %d,%d,%d", r, c, got.r, got.g, got.b,
                  want.r, want.g, want.b);
        }
    // Row labels: dark text pixels left of the cells, beside each row.
    for (int r = 0; r < 3; r++) {
        int dark = 0;
        for (int x = 20; x < cells.x - 2; x++)
            for (int y = cells.y + (int)(r * ch); y < cells.y + (int)((r + 1) * ch); y++) {
                Rgba p = pixel(px, w, x, y);
                dark += p.r < 100 && p.g < 100 && p.b < 100;
            }
        CHECK(dark > 10, "row %d has a label (%d dark pixels)", r, dark);
    }
    // The colour bar: a column right of the cells, red near its top and blue near its bottom.
    bool bar = false;
    for (int x = cells.x + cells.w + 1; x < w - 1 && !bar; x++) {
        Rgba top = pixel(px, w, x, cells.y + ui.small), bottom = pixel(px, w, x, cells.y + cells.h - ui.small);
        bar = top.r > 80 && top.b < 60 && bottom.b > 80 && bottom.r < 60;
    }
    CHECK(bar, "a colour bar right of the cells: red at the top, blue at the bottom");
    free(px);
    // Tokens for the first rows only (a view's labels stop at HEAT_MAX_LABELS): every row is
    // numbered, never tokens above and positions below.
    gfx_note_texts(g, true);
    h.n_row_labels = 2;
    heat_draw(&ui, &h, (Rect){20, 20, 600, 400});
    const GfxTextNote *notes;
    int tokens = 0, twos = 0;
    for (int i = 0, n = gfx_text_notes(g, &notes); i < n; i++)
        tokens += !strcmp(notes[i].text, "the") || !strcmp(notes[i].text, "cat"), twos += !strcmp(notes[i].text, "2");
    CHECK(tokens == 0 && twos == 2, "2 labels for 3 rows: rows numbered (%d tokens drawn, '2' %d times: row and column)",
          tokens, twos);
    gfx_note_texts(g, false);
}

// Share of pixels in r that differ from the background.
static double busy(const Rgba *px, int w, Rect r, Rgba bg) {
    long n = 0, diff = 0;
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++, n++) diff += !same(pixel(px, w, x, y), bg);
    return n ? (double)diff / n : 0;
}

static void test_views(void) {
    static const int sizes[2][2] = {{800, 600}, {1920, 1080}};
    static const char *const at[VIEW_COUNT] = {"encoder.layers.1.linear1", "step.2.decoder.layers.1.cross_attn.weights",
                                               "step.3.generator.probs", "encoder.embed", "encoder.embed",
                                               "encoder.layers.0.self_attn.weights", "encoder.embed"};
    for (int s = 0; s < 2; s++) {
        const int W = sizes[s][0], H = sizes[s][1];
        Err e = {{0}};
        Gfx *g = gfx_open_offscreen(W, H, &e);
        CHECK(g != NULL, "%s", e.msg);
        if (!g) return;
        App a;
        CHECK(app_open(&a, &(SessionSpec){.builtin_lesson = "forward-pass.md"}, &e) && interp_run(a.session.it, &e),
              "%s", e.msg);
        Ui ui = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
        Rgba *px = malloc(sizeof *px * (size_t)W * H);
        for (int v = 0; v < VIEW_COUNT; v++) {
            app_goto(&a, interp_find(a.session.it, at[v]));
            a.view = (ViewKind)v;
            if (v == VIEW_COMPARE && !a.pin.data) app_act(&a, CMD_PIN, 0);  // compared with itself
            if (v == VIEW_PATCH) {  // this lesson has no corrupted input: the view says so (test_backward_ui draws one)
                app_tick(&a, 0, 10);
                CHECK(strstr(a.probe.why, "no corrupted input to patch from"), "Patch view: %s", a.probe.why);
                continue;
            }
            app_draw(&ui, &a);
            gfx_present(g);
            gfx_read(g, px);
            Rect center = {W / 5, H / 8, W / 2, H * 3 / 4};
            double b = busy(px, W, center, theme_light.panel);
            CHECK(b > 0.05, "%s view at %dx%d: %.1f%% of the centre drawn", view_names[v], W, H, b * 100);
            CHECK(!a.error[0], "%s view: no error (%s)", view_names[v], a.error);
            CHECK(ui.n_hot > 10, "%s view registers clickable zones (%d)", view_names[v], ui.n_hot);
        }
        free(px);
        heat_cache_free(ui.heat);
        app_free(&a);
        gfx_close(g);
    }
}

// Words of several styled pieces, kilobytes long but narrow (combining accents), fill the lesson
// panel without writing past its line buffer (AddressSanitizer watches this one).
static void test_long_words(void) {
    const char *path = "/tmp/stepformer-long-words.md";
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "write %s", path);
    if (!f) return;
    fputs("# Long words\n\n```lesson\nmodel: random\nvocab: chars\ninput: ab\n```\n\n", f);
    for (int w = 0; w < 30; w++) {
        const char *open[3] = {"**", "`", "*"}, *close[3] = {"**", "`", "*"};
        for (int piece = 0; piece < 3; piece++) {
            fprintf(f, "%sa", open[piece]);
            for (int k = 0; k < 700; k++) fputs("\xcc\x81", f);  // U+0301, zero width
            fputs(close[piece], f);
        }
        fputs(w % 3 == 2 ? "\n" : " ", f);
    }
    fputs("\n```program\ninput src\nparam @emb [src_vocab_size, d_model] xavier\nx = embedding(src, @emb)\n```\n", f);
    fclose(f);
    Scene sc;
    if (scene_open(&sc, 800, 600, &(SessionSpec){.lesson_path = path})) {
        for (int v = 0; v < VIEW_COUNT; v++) {
            sc.a.view = (ViewKind)v;
            app_draw(&sc.ui, &sc.a);
        }
        CHECK(!sc.a.error[0], "the long words draw without an error (%s)", sc.a.error);
        scene_close(&sc);
    }
    remove(path);
}

// The attention view follows the cursor and never shows a map the cursor has not reached, even
// when the pass has run ahead of it.
static void test_attention_choice(void) {
    App a;
    Err e = {{0}};
    const bool ok = app_open(&a, &(SessionSpec){.builtin_lesson = "forward-pass.md"}, &e) && interp_run(a.session.it, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return;
    const Interp *it = a.session.it;
    const int w0 = interp_find(it, "encoder.layers.0.self_attn.weights");
    static const struct {
        const char *cursor, *want;  // want NULL: no map yet
    } cases[] = {{"encoder.embed", NULL},
                 {"encoder.layers.0.self_attn.q", NULL},
                 {"encoder.layers.0.self_attn.scores", "encoder.layers.0.self_attn.scores"},
                 {"encoder.layers.0.self_attn.out_proj", "encoder.layers.0.self_attn.weights"},
                 {"encoder.layers.1.self_attn.q", "encoder.layers.0.self_attn.weights"}};
    CHECK(w0 >= 0, "the first encoder layer's weights");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int got = attention_stage_for(&a, interp_find(it, cases[i].cursor));
        const int want = cases[i].want ? interp_find(it, cases[i].want) : -1;
        CHECK(got == want, "at %s the attention view shows stage %d (want %d)", cases[i].cursor, got, want);
    }
    app_free(&a);
}

// Where (x, y) falls in the zoomed heatmap, in columns and rows of the slice (-1: off the cells).
static void cell_under(const Ui *ui, int x, int y, float *col, float *row) {
    const ZoomView *v = &ui->zoom_view;
    const bool on = rect_has(v->cells, x, y);
    *col = on ? v->c0 + (float)(v->c1 - v->c0) * (float)(x - v->cells.x) / v->cells.w : -1;
    *row = on ? v->r0 + (float)(v->r1 - v->r0) * (float)(y - v->cells.y) / v->cells.h : -1;
}

// Wheeling in and out keeps the cell under the pointer under it (within a cell, never drifting).
static void test_wheel_anchor(void) {
    Scene sc;
    if (!scene_open(&sc, 1280, 800, &(SessionSpec){.builtin_lesson = "forward-pass.md"})) return;
    App *a = &sc.a;
    Ui *ui = &sc.ui;
    app_goto(a, interp_find(a->session.it, "encoder.layers.0.linear1"));  // [16 x 128]
    a->view = VIEW_STAGE;
    app_draw(ui, a);
    const Rect r = ui->zoom_view.cells;
    CHECK(r.w > 100 && r.h > 50, "a zoomable map (%dx%d)", r.w, r.h);
    const int x = r.x + r.w * 7 / 10, y = r.y + r.h * 2 / 3;
    float col0, row0, col, row;
    cell_under(ui, x, y, &col0, &row0);
    for (int step = 0; step < 12; step++) {
        app_wheel(a, ui, x, y, step < 7 ? 1 : -1);
        app_draw(ui, a);
        cell_under(ui, x, y, &col, &row);
        const ZoomView *v = &ui->zoom_view;  // at an edge of the slice the box cannot move further
        const bool col_edge = v->c0 == 0 || v->c1 == 128, row_edge = v->r0 == 0 || v->r1 == 16;
        CHECK((fabsf(col - col0) <= 1.0f || col_edge) && (fabsf(row - row0) <= 1.0f || row_edge),
              "wheel step %d: the pointer is over column %.2f row %.2f (was %.2f, %.2f)", step, col, row, col0, row0);
        CHECK(step >= 7 || (v->c1 - v->c0 < 128 && !col_edge && !row_edge), "zooming in away from the edges (%d)", step);
    }
    scene_close(&sc);
}

// The help list is modal: keys that would change what is behind it do nothing, and a click
// closes it without reaching the map. Asking to edit while editing keeps the typed text.
static void test_modal_help_and_edit(void) {
    Scene sc;
    if (!scene_open(&sc, 1000, 700, &(SessionSpec){.builtin_lesson = "forward-pass.md"})) return;
    App *a = &sc.a;
    Ui *ui = &sc.ui;
    app_goto(a, 3);
    app_draw(ui, a);
    const HotZone *z = NULL;
    for (int i = 0; i < ui->n_hot && !z; i++)
        if ((ui->hot[i].cmd == CMD_GOTO_STAGE || ui->hot[i].cmd == CMD_GOTO_BLOCK) && ui->hot[i].param != 3) z = &ui->hot[i];
    CHECK(z != NULL, "a stage to click on the map");
    app_act(a, CMD_HELP, 0);
    app_act(a, CMD_NEXT, 0);
    app_act(a, CMD_LAST, 0);
    CHECK(a->help && a->cursor == 3, "with help open, Right and End do nothing (cursor %d)", a->cursor);
    if (z) app_click(a, ui, z->r.x + z->r.w / 2, z->r.y + z->r.h / 2);
    CHECK(!a->help && a->cursor == 3, "a click closes help and goes nowhere (cursor %d)", a->cursor);
    app_act(a, CMD_EDIT, 0);
    app_type(a, "7 May 1999");
    app_act(a, CMD_EDIT, 0);
    CHECK(a->editing && !strcmp(a->edit, "7 May 1999"), "editing again keeps the typed text ('%s')", a->edit);
    scene_close(&sc);
}

// Draws the stage view of `id` and reads the window back.
static void draw_stage(Ui *ui, App *a, const char *id, Rgba *px) {
    app_goto(a, interp_find(a->session.it, id));
    a->view = VIEW_STAGE;
    app_draw(ui, a);
    gfx_present(ui->g);
    gfx_read(ui->g, px);
}

// Replacing the model in place (the window's "Step through it") redraws its weights from the new
// model: the same pixels as a fresh window on it, not the old model's cached images.
static void test_model_swap(void) {
    enum { W = 1000, H = 700 };
    const char *id = "encoder.layers.0.linear1";
    SessionSpec other = {.model_path = MODELS "/dates-prenorm.safetensors",
                         .input = "22 November 2026"};
    Err e = {{0}};
    Gfx *g = gfx_open_offscreen(W, H, &e);
    App a, b;
    bool ok = g && app_open(&a, &(SessionSpec){.model_path = MODELS "/dates.safetensors",
                                                .input = "22 November 2026"}, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return gfx_close(g);
    Ui ui = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    Ui fresh = {.g = g, .heat = heat_cache_new(), .mx = -1, .my = -1};
    Rgba *before = malloc(sizeof(Rgba) * W * H), *swapped = malloc(sizeof(Rgba) * W * H),
         *want = malloc(sizeof(Rgba) * W * H);
    draw_stage(&ui, &a, id, before);
    CHECK(app_reopen(&a, &other, &e), "%s", e.msg);
    draw_stage(&ui, &a, id, swapped);
    CHECK(app_open(&b, &other, &e), "%s", e.msg);
    draw_stage(&fresh, &b, id, want);
    const int y0 = H / 8, y1 = H - H / 8;  // the stage's operands, below the title bar
    const size_t n = sizeof(Rgba) * W * (size_t)(y1 - y0);
    CHECK(memcmp(before + (size_t)y0 * W, want + (size_t)y0 * W, n) != 0, "the two models look different");
    CHECK(memcmp(swapped + (size_t)y0 * W, want + (size_t)y0 * W, n) == 0,
          "after the swap the weights are the new model's, as a fresh window draws them");
    free(before), free(swapped), free(want);
    // A model of another width: the positions explorer follows it (it used to keep the old d_model).
    const SessionSpec narrow = {.lesson_path = LESSONS "/transformers-from-scratch.md"};
    CHECK(app_reopen(&a, &narrow, &e) && a.session.model.cfg.d_model == 32 && a.pe.d_model == 32 && a.pe.it,
          "the positions explorer takes the new model's d_model (%d): %s", a.pe.d_model, e.msg);
    const SessionSpec missing = {.lesson_path = "/nonexistent/lesson.md"};
    CHECK(!app_reopen(&a, &missing, &e) && !a.loaded, "a reopen that fails leaves the window empty, not the old one");
    heat_cache_free(ui.heat), heat_cache_free(fresh.heat);
    app_free(&a), app_free(&b);
    gfx_close(g);
}

static void test_export(void) {
    char dir[] = "/tmp/stepformer-export-XXXXXX";
    if (!mkdtemp(dir)) return;
    char out[300];
    snprintf(out, sizeof out, "%s/png", dir);
    ExportOptions o = {.spec = {.builtin_lesson = "forward-pass.md", .target = "2026-11-22"}, .out_dir = out,
                       .w = 640, .h = 480, .view = -1};
    CHECK(export_run(&o) == 0, "export runs");
    char path[400];
    snprintf(path, sizeof path, "%s/0011-encoder.layers.0.self_attn.weights.png", out);
    SDL_Surface *img = IMG_Load(path);
    CHECK(img && img->w == 640 && img->h == 480, "PNG named by index and id, at the asked size: %s", path);
    if (img) SDL_FreeSurface(img);
    snprintf(path, sizeof path, "%s/0118-generator.next.png", out);  // the teacher-forced pass's last stage
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "the last stage is exported: %s", path);
    if (f) fclose(f);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    if (system(path) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

// Replay files: typed spaces survive, a wheel turns where it was recorded, and a malformed line
// is refused at load with its file and line.
static void test_replay_files(void) {
    CHECK(SDL_InitSubSystem(SDL_INIT_EVENTS) == 0, "SDL events: %s", SDL_GetError());
    const char *path = "/tmp/stepformer-replay-test.txt";
    write_text(path, "# a comment\n0 text  \n0 text a\n0 wheel 10 20 -1\n5 quit\n");
    Err e = {{0}};
    Replayer *r = replayer_open(path, &e);
    CHECK(r != NULL, "%s", e.msg);
    char arg[64];
    if (r) CHECK(replayer_poll(r, 1, arg, sizeof arg) == REPLAY_IDLE, "quit is not due yet");
    SDL_Event ev[3];
    int n = 0;
    while (n < 3 && SDL_PollEvent(&ev[n])) n += ev[n].type == SDL_TEXTINPUT || ev[n].type == SDL_MOUSEWHEEL;
    CHECK(n == 3 && !strcmp(ev[0].text.text, " ") && !strcmp(ev[1].text.text, "a"), "a typed space replays as a space");
    CHECK(n == 3 && ev[2].wheel.mouseX == 10 && ev[2].wheel.mouseY == 20 && ev[2].wheel.y == -1,
          "the wheel turns at (10, 20)");
    CHECK(replayer_failures(r) == 0, "every event delivered");
    replayer_close(r);
    // A directive waits one frame only for events pushed in the same call: a quit with none
    // before it comes at the first frame (bench's start-to-first-frame relies on this).
    write_text(path, "0 quit\n");
    r = replayer_open(path, &e);
    CHECK(r && replayer_poll(r, 0, arg, sizeof arg) == REPLAY_QUIT, "a quit with nothing before it is due at once");
    replayer_close(r);
    write_text(path, "0 key Right\n0 shot a.png\n0 quit\n");
    r = replayer_open(path, &e);
    ReplayStep got[3] = {REPLAY_DONE, REPLAY_DONE, REPLAY_DONE};
    for (int i = 0; r && i < 3; i++) got[i] = replayer_poll(r, 0, arg, sizeof arg);
    CHECK(got[0] == REPLAY_IDLE && got[1] == REPLAY_SHOT && got[2] == REPLAY_QUIT,
          "after a key: a frame, then the shot, then the quit at once (%d %d %d)", got[0], got[1], got[2]);
    replayer_close(r);
    SDL_FlushEvents(SDL_FIRSTEVENT, SDL_LASTEVENT);
    static const char *const bad[][2] = {
        {"0 uit\n", "unknown event 'uit'"},       {"0 ey Right\n", "unknown event 'ey'"},
        {"0 click 1 2 3\n", "TIME click X Y"},    {"0 wheel 1 2\n", "TIME wheel X Y STEPS"},
        {"0 key Nonsense\n", "unknown key name"}, {"0 shot\n", "TIME shot FILE.png"},
        {"0 quit now\n", "TIME quit"},           {"soon key Right\n", "expected 'TIME EVENT"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i][0]);
        Replayer *b = replayer_open(path, &e);
        CHECK(!b && strstr(e.msg, "replay-test.txt:1:") && strstr(e.msg, bad[i][1]), "'%.20s' refused: %s",
              bad[i][0], e.msg);
        replayer_close(b);
    }
    FILE *many = fopen(path, "w");  // a line takes 504 bytes loaded: a long file used to take them all
    for (int i = 0; many && i <= 200000; i++) fputs("0 quit\n", many);
    if (many) fclose(many);
    Replayer *b = replayer_open(path, &e);
    CHECK(!b && strstr(e.msg, "replay-test.txt:200001: more than 200000 events"), "200001 lines refused: %s", e.msg);
    replayer_close(b);
    remove(path);
    SDL_QuitSubSystem(SDL_INIT_EVENTS);
}

// The lesson panel scrolls: at 800x600 the attention paragraph does not fit, the wheel over it
// moves it (and the pixels there), scrolling stops at the end, Shift+PgDn pages, and the next
// paragraph starts at its top. The kernel scrolls the same way, a line at a time.
static void test_lesson_scroll(void) {
    Scene s;
    const SessionSpec spec = {.builtin_lesson = "forward-pass.md"};
    if (!scene_open(&s, 800, 600, &spec)) return;
    Rgba *px = malloc(sizeof(Rgba) * 800 * 600), *px2 = malloc(sizeof(Rgba) * 800 * 600);
    draw_stage(&s.ui, &s.a, "encoder.layers.0.self_attn.k_heads", px);
    const ScrollView v = s.ui.scroll[SCROLL_NARRATION], k = s.ui.scroll[SCROLL_KERNEL];
    CHECK(v.r.w > 0 && v.max > 0 && v.page > 0, "the attention paragraph scrolls at 800x600 (max %d)", v.max);
    // Above the "more" mark the text ends at a whole line: the strip beside the mark, as tall as
    // it, holds no part of a line (before, half a line showed there).
    const int tag_h = gfx_line_height(s.ui.g, FONT_BOLD, s.ui.small);
    long inked = 0;
    for (int y = v.r.y + v.r.h - tag_h; y < v.r.y + v.r.h; y++)
        for (int x = v.r.x; x < v.r.x + v.r.w / 2; x++) inked += !same(pixel(px, 800, x, y), pixel(px, 800, v.r.x, y));
    CHECK(v.r.h > tag_h && inked == 0, "no half line beside the 'more' mark (%ld pixels inked)", inked);
    app_wheel(&s.a, &s.ui, v.r.x + v.r.w / 2, v.r.y + v.r.h / 2, -1);  // one notch down
    CHECK(s.a.scroll[SCROLL_NARRATION] == 3 * v.unit, "a notch moves three lines: %d", s.a.scroll[SCROLL_NARRATION]);
    draw_stage(&s.ui, &s.a, "encoder.layers.0.self_attn.k_heads", px2);
    long moved = 0;
    for (int y = v.r.y; y < v.r.y + v.r.h; y++)
        for (int x = v.r.x; x < v.r.x + v.r.w; x++) moved += !same(pixel(px, 800, x, y), pixel(px2, 800, x, y));
    CHECK(moved > 500, "the text moved (%ld pixels changed)", moved);
    for (int i = 0; i < 100; i++) app_wheel(&s.a, &s.ui, v.r.x + 5, v.r.y + 5, -1);
    CHECK(s.a.scroll[SCROLL_NARRATION] == v.max, "scrolling stops at the end: %d of %d", s.a.scroll[SCROLL_NARRATION],
          v.max);
    app_scroll(&s.a, &s.ui, SCROLL_NARRATION, -1);
    CHECK(s.a.scroll[SCROLL_NARRATION] == (v.max - v.page > 0 ? v.max - v.page : 0), "a page up");
    if (k.r.w > 0) {
        app_wheel(&s.a, &s.ui, k.r.x + 5, k.r.y + 2, -1);
        CHECK(s.a.scroll[SCROLL_KERNEL] == (k.max < 3 ? k.max : 3), "the kernel scrolls by lines: %d",
              s.a.scroll[SCROLL_KERNEL]);
    }
    draw_stage(&s.ui, &s.a, "encoder.layers.0.norm1", px2);
    CHECK(s.a.scroll[SCROLL_NARRATION] == 0, "another paragraph starts at its top");
    free(px), free(px2);
    scene_close(&s);
}

// A folder of three lessons (the second broken): N / P and the list open them in course order;
// the broken one leaves the window empty with its error, never another lesson in its place.
static const char tiny_lesson[] =
    "# %s\n\n```lesson\nmodel: random\nconfig: d_model=8 nhead=2 src_vocab_size=99 max_positions=16\n"
    "vocab: chars\ninput: ab\n```\n\nSome words.\n\n```program\ninput src\nblock encoder\n"
    "  param @emb [src_vocab_size, d_model] normal(1)\n  x = %s(src, @emb)\nend\noutput memory = x\n```\n";

static void test_switch_lessons(void) {
    char dir[] = "/tmp/stepformer-course-XXXXXX", path[128], text[1024];
    if (!mkdtemp(dir)) {
        CHECK(false, "mkdtemp");
        return;
    }
    static const char *const names[3] = {"b-first.md", "a-broken.md", "c-last.md"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        snprintf(text, sizeof text, tiny_lesson, names[i], i == 1 ? "embeddding" : "embedding");
        write_text(path, text);
    }
    snprintf(path, sizeof path, "%s/README.md", dir);
    write_text(path, "1. [first](b-first.md)\n2. [broken](a-broken.md)\n");
    Scene s;
    snprintf(path, sizeof path, "%s/b-first.md", dir);
    const SessionSpec spec = {.lesson_path = path};
    if (!scene_open(&s, 800, 600, &spec)) return;
    app_set_course(&s.a, dir, path);
    CHECK(s.a.course.n == 3 && s.a.lesson_at == 0, "three lessons, the first open (%d, at %d)", s.a.course.n,
          s.a.lesson_at);
    app_act(&s.a, CMD_NEXT_LESSON, 0);
    CHECK(!s.a.loaded && s.a.lesson_at == 1 && s.a.lesson_failed[1] && strstr(s.a.error, "embeddding"),
          "the broken lesson: nothing shown, its error on screen: %s", s.a.error);
    app_draw(&s.ui, &s.a);  // an empty window draws
    app_act(&s.a, CMD_NEXT_LESSON, 0);
    CHECK(s.a.loaded && s.a.lesson_at == 2 && !strcmp(s.a.session.lesson.title, "c-last.md"), "then the last");
    app_act(&s.a, CMD_LESSONS, 0);
    app_act(&s.a, CMD_PARAM_DOWN, 0);  // wraps to the first
    app_act(&s.a, CMD_OPEN, 0);
    CHECK(s.a.loaded && s.a.lesson_at == 0 && !s.a.lesson_list, "the list opens the first again");
    app_act(&s.a, CMD_LESSONS, 0);
    app_draw(&s.ui, &s.a);
    const HotZone *row = NULL;
    for (int i = 0; i < s.ui.n_hot; i++)
        if (s.ui.hot[i].cmd == CMD_OPEN_LESSON && s.ui.hot[i].param == 2) row = &s.ui.hot[i];
    CHECK(row != NULL, "the list draws a row for the third lesson");
    if (row) app_click(&s.a, &s.ui, row->r.x + 5, row->r.y + 2);
    CHECK(s.a.loaded && s.a.lesson_at == 2, "a click on its row opens it");
    scene_close(&s);
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, i < 3 ? names[i] : "README.md");
        remove(path);
    }
    rmdir(dir);
}

// X, M, O switch pieces off in the window: the pass re-runs at once, the stage as it was is
// pinned for the Compare view, the title bar says what is off, and U puts everything back.
static void test_ablate_keys(void) {
    Scene s;
    const SessionSpec spec = {.builtin_lesson = "forward-pass.md"};
    if (!scene_open(&s, 1000, 700, &spec)) return;
    const int w = interp_find(s.a.session.it, "encoder.layers.0.self_attn.weights");
    app_goto(&s.a, w);
    app_act(&s.a, CMD_HEAD, 1);
    app_act(&s.a, CMD_ABLATE_HEAD, 0);
    const Ablation *ab = interp_ablation(s.a.session.it);
    CHECK(ab->n_heads == 1 && ab->heads[0].head == 1 && s.a.pin.data && s.a.before[0], "head 2 off, pinned first");
    const float *x = interp_output(s.a.session.it, w);
    float sum = 0, pinned = 0;
    for (int i = 0; x && i < 16 * 16; i++) sum += x[16 * 16 + i], pinned += s.a.pin.data[16 * 16 + i];
    CHECK(x && sum == 0 && fabsf(pinned - 16) < 1e-3f, "now its weights are 0; the pinned rows still sum to 1 each "
          "(%g, %g)", sum, pinned);
    app_act(&s.a, CMD_ABLATE_MASK, 0);
    app_act(&s.a, CMD_ABLATE_POSITIONS, 0);
    CHECK(ab->no_mask && ab->no_positions, "mask and positions off too");
    app_draw(&s.ui, &s.a);  // the title bar's badge draws
    app_act(&s.a, CMD_ABLATE_UNDO, 0);
    x = interp_output(s.a.session.it, w);
    CHECK(!ablation_any(interp_ablation(s.a.session.it)) && x && !memcmp(x, s.a.pin.data, sizeof(float) * 4 * 16 * 16),
          "U: everything back, the same numbers as before");
    CHECK(s.a.cursor == w, "the cursor stays on the stage");
    scene_close(&s);
}

// The Positions explorer starts from the lesson program's own table (base 1000 in the mistake),
// and says what the lesson's model adds to its tokens: the table itself, stored or computed, a
// learned one, or nothing.
static void test_pe_from_program(void) {
    static const struct { const char *lesson; PeSource source; int base; const char *names; } cases[] = {
        {"mistake-pe-base-1000.md", PE_SOURCE_COMPUTED, 1000, "base 1000"},
        {"forward-pass.md", PE_SOURCE_STORED, 10000, "@positional_encoding.pos_embedding"},
        {"gpt-block.md", PE_SOURCE_LEARNED, 10000, "@pos_emb.weight"},
        {"mistake-no-positions.md", PE_SOURCE_NONE, 10000, "adds no positions"},
        {"gpt2.md", PE_SOURCE_LEARNED, 10000, "@wpe.weight"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        App a;
        memset(&a, 0, sizeof a);
        Err e = {{0}};
        char path[256];
        snprintf(path, sizeof path, LESSONS "/%s", cases[k].lesson);
        const bool ok = app_open(&a, &(SessionSpec){.lesson_path = path}, &e);
        CHECK(ok && a.pe.source == cases[k].source && a.pe.base == cases[k].base &&
                  a.pe.d_model == a.session.model.cfg.d_model && strstr(a.pe.about, cases[k].names),
              "%s: %s; source %d, base %d, d_model %d: '%s'", cases[k].lesson, e.msg, (int)a.pe.source, a.pe.base,
              a.pe.d_model, a.pe.about);
        // A learned table is shown itself: the explorer's "pe" holds the weight's rows.
        const int pe_stage = ok && a.pe.it ? interp_find(a.pe.it, "pe") : -1;
        const StEntry *w = ok && cases[k].source == PE_SOURCE_LEARNED ? model_weight(&a.session.model, a.pe.learned) : NULL;
        float *rows = w ? malloc(sizeof(float) * (size_t)shape_numel(&w->shape)) : NULL;  // as float32, however it is held
        if (rows) model_numbers(&a.session.model, (int)(w - a.session.model.weights.entries), rows);
        if (cases[k].source == PE_SOURCE_LEARNED)
            CHECK(rows && pe_stage >= 0 && shape_numel(&interp_stage(a.pe.it, pe_stage)->shape) == shape_numel(&w->shape) &&
                      !memcmp(interp_output(a.pe.it, pe_stage), rows, sizeof(float) * (size_t)shape_numel(&w->shape)),
                  "%s: the Positions view's table is the learned weight itself", cases[k].lesson);
        free(rows);
        if (ok) app_free(&a);
    }
    // RoPE: the explorer's table at the head's width and rope_theta holds the angles each pair
    // turns by: column 2i at position p is sin(p / theta^(2i/d)), as rope_angle gives it.
    App a;
    memset(&a, 0, sizeof a);
    Err e = {{0}};
    const bool ok = app_open(&a, &(SessionSpec){.lesson_path = LESSONS "/llama.md"}, &e);
    const int pe_stage = ok ? interp_find(a.pe.it, "pe") : -1;
    CHECK(ok && a.pe.source == PE_SOURCE_ROPE && a.pe.d_model == 16 && a.pe.base == 10000 && pe_stage >= 0 &&
              strstr(a.pe.about, "rope_theta 10000, d = head width 16"),
          "llama.md: RoPE at the head width 16 and rope_theta: %s; %s", e.msg, a.pe.about);
    if (pe_stage >= 0) {
        const float *t = interp_output(a.pe.it, pe_stage);
        double worst = 0;
        for (int p = 0; p < 10; p++)
            for (int i = 0; i < 8; i++) worst = fmax(worst, fabs(t[p * 16 + 2 * i] - sin(rope_angle(p, i, 16, 10000.0f))));
        CHECK(worst < 1e-5, "the table's sin columns are RoPE's angles (%.3g)", worst);
    }
    if (ok) app_free(&a);
}

// The colour bar's bounds: the signed map is symmetric about 0, probabilities' and other
// sequential maps span the values, and a tensor of zeros is 0 to 0 (not -0, which a bar printed
// as "-0.0000"). The bar shows the half of the signed map the values use when they all have one
// sign: log-probabilities' bar ends at 0, not at +max|x|.
static void test_ranges(void) {
    const float zeros[3] = {0}, mixed[4] = {-2.0f, 1.0f, NAN, 0.5f}, none[2] = {NAN, INFINITY};
    const float logp[3] = {-6.5f, -0.25f, -INFINITY}, relu[3] = {0.0f, 3.0f, 1.0f};
    float lo, hi, b0, b1;
    cmap_range(CMAP_DIVERGING, zeros, 3, &lo, &hi, &b0, &b1);
    CHECK(lo == 0.0f && !signbit(lo) && hi == 0.0f && b0 == 0.0f && !signbit(b0) && b1 == 0.0f,
          "zeros on the signed map: +0 to 0, the bar too (%g, %g; %g, %g)", (double)lo, (double)hi, (double)b0, (double)b1);
    cmap_range(CMAP_DIVERGING, mixed, 4, &lo, &hi, &b0, &b1);
    CHECK(lo == -2.0f && hi == 2.0f && b0 == -2.0f && b1 == 2.0f, "signed map of -2 .. 1: -2 to 2, the NaN skipped (%g, %g; %g, %g)",
          (double)lo, (double)hi, (double)b0, (double)b1);
    cmap_range(CMAP_DIVERGING, logp, 3, &lo, &hi, &b0, &b1);
    CHECK(lo == -6.5f && hi == 6.5f && b0 == -6.5f && b1 == 0.0f && !signbit(b1),
          "signed map of -6.5 .. -0.25: colours -6.5 to 6.5, the bar -6.5 to +0 (%g, %g; %g, %g)", (double)lo, (double)hi,
          (double)b0, (double)b1);
    cmap_range(CMAP_DIVERGING, relu, 3, &lo, &hi, &b0, &b1);
    CHECK(lo == -3.0f && hi == 3.0f && b0 == 0.0f && !signbit(b0) && b1 == 3.0f,
          "signed map of 0 .. 3: colours -3 to 3, the bar 0 to 3 (%g, %g; %g, %g)", (double)lo, (double)hi, (double)b0, (double)b1);
    cmap_range(CMAP_SEQUENTIAL, mixed, 4, &lo, &hi, &b0, &b1);
    CHECK(lo == -2.0f && hi == 1.0f && b0 == lo && b1 == hi, "sequential map of -2 .. 1: -2 to 1 (%g, %g)", (double)lo, (double)hi);
    cmap_range(CMAP_DIVERGING, none, 2, &lo, &hi, &b0, &b1);
    CHECK(lo == 0.0f && hi == 1.0f && b0 == 0.0f && b1 == 1.0f, "nothing finite: 0 to 1 (%g, %g)", (double)lo, (double)hi);
}

// The command queue: first in, first out, across its wrap, and full at CMD_QUEUE_MAX (nothing lost
// silently: a push that does not fit says so).
static void test_command_queue(void) {
    CommandQueue q = {.n = 0};
    Command c;
    CHECK(!cmd_pop(&q, &c), "an empty queue gives nothing");
    for (int round = 0; round < 3; round++) {  // the second and third rounds start mid-array
        for (int k = 0; k < CMD_QUEUE_MAX; k++) CHECK(cmd_push(&q, (Command){CMD_HEAD, round * 100 + k, k % 2}), "push %d", k);
        CHECK(!cmd_push(&q, (Command){CMD_NEXT, 0, false}) && q.n == CMD_QUEUE_MAX, "a full queue refuses one more");
        for (int k = 0; k < CMD_QUEUE_MAX - 5; k++)
            CHECK(cmd_pop(&q, &c) && c.kind == CMD_HEAD && c.param == round * 100 + k && c.direct == (k % 2),
                  "round %d: pop %d is push %d (%d)", round, k, k, c.param);
        for (int k = CMD_QUEUE_MAX - 5; k < CMD_QUEUE_MAX; k++) CHECK(cmd_pop(&q, &c) && c.param == round * 100 + k, "pop %d", k);
        CHECK(!cmd_pop(&q, &c) && q.n == 0, "round %d: empty again", round);
        CHECK(cmd_push(&q, (Command){CMD_PREV, 7, false}) && cmd_pop(&q, &c) && c.kind == CMD_PREV, "one more, one out");
    }
}

int main(void) {
    CHECK(cmd_names_complete(), "every command has a name in cmd_names");
    CHECK(app_views_complete(), "every ViewKind has its view in app_views and its name in view_names");
    test_command_queue();
    test_ranges();
    test_ablate_keys();
    test_pe_from_program();
    test_switch_lessons();
    test_lesson_scroll();
    test_pixels();
    test_replay_files();
    Err e = {{0}};
    Gfx *g = gfx_open_offscreen(800, 600, &e);
    CHECK(g != NULL, "%s", e.msg);
    if (g) {
        HeatCache *c = heat_cache_new();
        test_heatmap_widget(g, c);
        test_fit_tail(g);
        heat_cache_free(c);
        gfx_close(g);
    }
    test_views();
    test_long_words();
    test_model_swap();
    test_attention_choice();
    test_wheel_anchor();
    test_modal_help_and_edit();
    test_export();
    return check_finish("test_render");
}
