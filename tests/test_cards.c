// test_cards.c: the opening and closing cards in the window: the keys that reach them (Left on
// the first stage, Right on the last, Right again to the backward pass), and a card drawn off
// screen with the scaling lesson's summary table as a table: a grid of 4 columns and 11 rows,
// text in every cell between its lines.
#include <stdlib.h>

#include "scene.h"

static bool scene_run(Scene *s, int w, int h, const SessionSpec *spec) {
    if (!scene_open(s, w, h, spec)) return false;
    Err e = {{0}};
    const bool ok = interp_run(s->a.session.it, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) scene_close(s);
    return ok;
}

static bool same(Rgba a, Rgba b) { return a.r == b.r && a.g == b.g && a.b == b.b; }

static void keys(void) {
    Scene s;
    if (!scene_run(&s, 1280, 720, &(SessionSpec){.lesson_path = LESSONS "/backprop.md"})) return;
    App *a = &s.a;
    const int n = interp_n_stages(a->session.it);
    CHECK(a->card == CARD_NONE && a->cursor == 0, "opens on the first stage");
    app_act(a, CMD_PREV, 0);
    CHECK(a->card == CARD_OPENING && a->cursor == 0, "Left on the first stage: the opening card");
    app_act(a, CMD_PREV, 0);
    CHECK(a->card == CARD_OPENING, "Left on the opening card: still there");
    app_act(a, CMD_NEXT, 0);
    CHECK(a->card == CARD_NONE && a->cursor == 0, "Right from the opening card: the first stage");
    app_act(a, CMD_PREV, 0);
    app_act(a, CMD_FIRST, 0);
    CHECK(a->card == CARD_NONE && a->cursor == 0, "Home: the first stage, off the card");
    app_act(a, CMD_LAST, 0);
    app_act(a, CMD_NEXT, 0);
    CHECK(a->card == CARD_CLOSING && a->cursor == n - 1 && !app_back_step(a), "Right on the last stage: the closing card");
    app_act(a, CMD_PREV, 0);
    CHECK(a->card == CARD_NONE && a->cursor == n - 1, "Left from the closing card: the last stage");
    app_act(a, CMD_NEXT, 0);
    app_act(a, CMD_NEXT, 0);
    CHECK(a->card == CARD_NONE && app_back_step(a) && app_back_step(a)->kind == BACK_LOSS,
          "Right on the closing card: the backward pass, at the loss");
    scene_close(&s);
    // A lesson without a backward pass (no target) stays on its closing card.
    if (!scene_run(&s, 1280, 720, &(SessionSpec){.lesson_path = LESSONS "/self-attention.md"})) return;
    app_act(&s.a, CMD_LAST, 0);
    app_act(&s.a, CMD_NEXT, 0);
    app_act(&s.a, CMD_NEXT, 0);
    CHECK(s.a.card == CARD_CLOSING && !app_back_step(&s.a), "no backward pass: Right stays on the closing card");
    scene_close(&s);
}

// A lesson opened from the course (the list, N, P) starts on its opening card, where its
// introduction is; Right goes on to its first stage.
static void opened_on_card(void) {
    Scene s;
    if (!scene_open(&s, 1280, 720, &(SessionSpec){.lesson_path = LESSONS "/scaling.md"})) return;
    App *a = &s.a;
    app_set_course(a, LESSONS, LESSONS "/scaling.md");
    CHECK(a->card == CARD_NONE, "opened directly (a link, --to, a test): on its first stage");
    app_act(a, CMD_NEXT_LESSON, 0);
    CHECK(a->loaded && a->card == CARD_OPENING && a->cursor == 0, "N: the next lesson, on its opening card (%d)", (int)a->card);
    app_act(a, CMD_NEXT, 0);
    CHECK(a->card == CARD_NONE && a->cursor == 0, "Right: its first stage");
    app_act(a, CMD_PREV, 0);
    app_act(a, CMD_NEXT_VIEW, 0);
    CHECK(a->card == CARD_NONE && a->cursor == 0, "Tab from the opening card: the next view, in place of the card");
    app_act(a, CMD_PREV, 0);
    app_act(a, CMD_PLAY, 0);
    CHECK(a->card == CARD_NONE && a->cursor == 0 && a->playing, "Space on the opening card: playing from the first stage");
    app_act(a, CMD_PLAY, 0);
    app_act(a, CMD_PREV_LESSON, 0);
    CHECK(a->loaded && strstr(a->session.lesson.path, "scaling.md") && a->card == CARD_OPENING, "P: back, on the opening card");
    app_act(a, CMD_LESSONS, 0);
    app_act(a, CMD_OPEN, 0);
    CHECK(a->loaded && a->card == CARD_OPENING, "the list opens a lesson on its opening card");
    scene_close(&s);
}

// A greedy lesson, as the window opens it (the pass runs as the cursor goes): the same keys.
static void greedy(void) {
    Scene s;
    if (!scene_open(&s, 1280, 720, &(SessionSpec){.lesson_path = LESSONS "/greedy-decoding.md"})) return;
    App *a = &s.a;
    app_act(a, CMD_PREV, 0);
    CHECK(a->card == CARD_OPENING, "greedy: Left on the first stage, the opening card (%d)", (int)a->card);
    app_act(a, CMD_LAST, 0);
    app_act(a, CMD_NEXT, 0);
    CHECK(a->card == CARD_CLOSING, "greedy: End, Right: the closing card (%d; cursor %d of %d, done %d)", (int)a->card,
          a->cursor, interp_n_stages(a->session.it), interp_done(a->session.it));
    scene_close(&s);
}

// Runs of border-coloured pixels at least `len` long: vertical ones (counted by column) and
// horizontal ones (by row), within r.
static int runs(const Rgba *px, int w, Rect r, Rgba c, int len, bool vertical, int *at, int max) {
    int found = 0;
    const int outer = vertical ? r.w : r.h, inner = vertical ? r.h : r.w;
    for (int i = 0; i < outer; i++) {
        int run = 0, best = 0;
        for (int j = 0; j < inner; j++) {
            const int x = r.x + (vertical ? i : j), y = r.y + (vertical ? j : i);
            run = same(px[(size_t)y * w + x], c) ? run + 1 : 0;
            if (run > best) best = run;
        }
        if (best >= len) {
            if (found < max && (found == 0 || at[found - 1] != i - 1)) at[found++] = i;
            else if (found > 0 && at[found - 1] == i - 1) at[found - 1] = i;  // a thick line: its last pixel
        }
    }
    return found;
}

static void table_card(int w, int h) {
    Scene s;
    if (!scene_run(&s, w, h, &(SessionSpec){.lesson_path = LESSONS "/scaling.md"})) return;
    App *a = &s.a;
    app_act(a, CMD_LAST, 0);
    app_act(a, CMD_NEXT, 0);
    CHECK(a->card == CARD_CLOSING, "the closing card");
    app_draw(&s.ui, a);
    Rgba *px = malloc(sizeof *px * (size_t)w * (size_t)h);
    CHECK(px && gfx_read(s.g, px), "read back");
    if (px) {
        const Rect centre = {w / 5, h / 12, w / 2, h * 3 / 4};  // inside the centre area
        int xs[16], ys[32];
        const int nx = runs(px, w, centre, s.ui.th->border, h / 4, true, xs, 16);
        const int ny = runs(px, w, centre, s.ui.th->border, w / 10, false, ys, 32);
        CHECK(nx == 5, "%dx%d: the table's grid has 5 vertical lines (4 columns), not %d", w, h, nx);
        CHECK(ny == 12, "%dx%d: and 12 horizontal ones (a header and 10 rows), not %d", w, h, ny);
        // Text (ink, dark in the light theme) in every cell: between each pair of lines.
        for (int r = 0; nx == 5 && ny == 12 && r < 11; r++)
            for (int c = 0; c < 4; c++) {
                int ink = 0;
                for (int y = centre.y + ys[r] + 2; y < centre.y + ys[r + 1] - 1; y++)
                    for (int x = centre.x + xs[c] + 2; x < centre.x + xs[c + 1] - 1; x++)
                        ink += px[(size_t)y * w + x].r + px[(size_t)y * w + x].g + px[(size_t)y * w + x].b < 300;  // dark text on light
                CHECK(ink > 0, "%dx%d: cell %d,%d has its text", w, h, r, c);
            }
    }
    free(px);
    // Without the card, the stage: no table there.
    app_act(a, CMD_PREV, 0);
    CHECK(a->card == CARD_NONE, "Left: the stage");
    scene_close(&s);
}

int main(void) {
    opened_on_card();
    keys();
    greedy();
    table_card(1280, 720);
    table_card(1920, 1080);
    return check_finish("test_cards");
}
