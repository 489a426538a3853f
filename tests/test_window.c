// test_window.c: the real window, as a person sees it. Runs stepformer in an X server (xvfb-run),
// driven by tests/ui/walkthrough.replay, which checks with `expect` that each key lands on the
// right stage and saves screenshots; this test then checks the pictures.
#include <SDL_image.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "files.h"
#include "colormap.h"
#include "session.h"
#include "ui.h"

typedef struct {
    SDL_Surface *s;  // ABGR8888: bytes R, G, B, A
    int w, h;
} Shot;

static Shot load(const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    SDL_Surface *raw = IMG_Load(path);
    CHECK(raw != NULL, "screenshot %s: %s", path, IMG_GetError());
    if (!raw) return (Shot){0};
    SDL_Surface *s = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_ABGR8888, 0);
    SDL_FreeSurface(raw);
    return (Shot){s, s ? s->w : 0, s ? s->h : 0};
}

static Rgba at(const Shot *s, int x, int y) {
    const uint8_t *p = (const uint8_t *)s->s->pixels + (size_t)y * s->s->pitch + (size_t)x * 4;
    return (Rgba){p[0], p[1], p[2], 255};
}

// Pixels of exactly colour c in the picture.
static long count(const Shot *s, Rgba c) {
    long n = 0;
    for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
            Rgba p = at(s, x, y);
            n += p.r == c.r && p.g == c.g && p.b == c.b;
        }
    return n;
}

static long differing(const Shot *a, const Shot *b) {
    long n = 0;
    for (int y = 0; y < a->h && y < b->h; y++)
        for (int x = 0; x < a->w && x < b->w; x++) {
            Rgba p = at(a, x, y), q = at(b, x, y);
            n += p.r != q.r || p.g != q.g || p.b != q.b;
        }
    return n;
}

static void check_shots(const char *dir) {
    const char *names[] = {"01-start.png", "02-attention.png", "03-head.png", "04-decoding.png", "05-positions.png",
                           "06-contrast.png", "07-edited.png", "08-small.png", "09-help.png"};
    Shot s[9];
    for (int i = 0; i < 9; i++) s[i] = load(dir, names[i]);
    for (int i = 0; i < 9; i++)
        if (!s[i].s) return;
    for (int i = 0; i < 7; i++) CHECK(s[i].w == 1280 && s[i].h == 800, "%s is 1280x800 (%dx%d)", names[i], s[i].w, s[i].h);
    CHECK(s[7].w == 800 && s[7].h == 600, "after the resize the window is 800x600 (%dx%d)", s[7].w, s[7].h);
    // The start: light theme, the first block lit on the map.
    CHECK(count(&s[0], theme_light.panel_alt) > 10000 && count(&s[0], theme_light.lit) > 500,
          "light theme (grey title bars), a lit block on the map");
    // Attention on the decoder's masked self-attention: the future is grey in every head.
    const long grey = count(&s[1], cmap_masked);
    CHECK(grey > 4 * 1000, "masked cells visible in the head grid (%ld grey pixels)", grey);
    CHECK(count(&s[1], (Rgba){253, 231, 37, 255}) > 20, "the first row's weight of 1 is yellow (viridis top)");
    CHECK(count(&s[2], cmap_masked) > 2000, "one head large: its masked triangle (%ld)", count(&s[2], cmap_masked));
    CHECK(differing(&s[1], &s[2]) > 50000, "picking a head changes the picture");
    CHECK(differing(&s[2], &s[3]) > 50000 && differing(&s[3], &s[4]) > 50000, "decoding and positions views differ");
    // The presenter theme: white and black, the lit block in strong yellow.
    CHECK(count(&s[5], theme_contrast.bg) > 200000 && count(&s[5], theme_contrast.lit) > 500 &&
              count(&s[5], theme_light.panel_alt) < 100,
          "high contrast: white background, no grey bars, yellow lit block");
    CHECK(differing(&s[5], &s[6]) > 5000, "a new sentence changes what is on screen");
    CHECK(differing(&s[7], &s[8]) > 50000, "the key list covers the window");
    for (int i = 0; i < 9; i++) SDL_FreeSurface(s[i].s);
}

// Runs stepformer in an X server whose screen is `screen` (WxH) from dir with `args`; returns
// its exit status.
static int run_window_on(const char *dir, const char *screen, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && ASAN_OPTIONS=detect_leaks=0 xvfb-run -a -s '-screen 0 %sx24' "
             "'%s' %s >> run.log 2>&1", dir, screen, STEPFORMER_BIN, args);
    int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int run_window(const char *dir, const char *args) { return run_window_on(dir, "1400x900", args); }

static void write_file(const char *dir, const char *name, const char *text, const char *mode) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, mode);
    if (f) fputs(text, f), fclose(f);
}

// Without --size the window opens at 1280x800, or as large as the screen where that is
// smaller: on a 1280x720 projector (no window manager) a taller window lost its header.
static void default_size(const char *dir) {
    write_file(dir, "size.replay", "400 expect encoder.embed\n500 shot size.png\n600 quit\n", "w");
    const char *screens[] = {"1280x720", "1920x1080", "1024x768"};
    const int want[][2] = {{1280, 720}, {1280, 800}, {1024, 768}};
    char shot[600];
    snprintf(shot, sizeof shot, "%s/size.png", dir);
    for (int i = 0; i < 3; i++) {
        remove(shot);  // each run's own picture, never the last one's
        CHECK(run_window_on(dir, screens[i], "--replay size.replay") == 0, "the window opened on a %s screen",
              screens[i]);
        Shot s = load(dir, "size.png");
        CHECK(s.w == want[i][0] && s.h == want[i][1], "on a %s screen the default window is %dx%d (%dx%d)", screens[i],
              want[i][0], want[i][1], s.w, s.h);
        if (s.s) SDL_FreeSurface(s.s);
    }
    remove(shot);
    CHECK(run_window_on(dir, "1280x720", "--size 1280x800 --replay size.replay") == 0, "--size on a smaller screen");
    Shot s = load(dir, "size.png");
    CHECK(s.w == 1280 && s.h == 800, "--size 1280x800 is kept as asked, even on a smaller screen (%dx%d)", s.w, s.h);
    if (s.s) SDL_FreeSurface(s.s);
}

// A session recorded with --record plays back to the same place.
static void record_and_replay(const char *dir) {
    write_file(dir, "drive.replay",
               "500 key PageDown\n600 key PageDown\n700 text 2\n800 key Tab\n900 move 640 400\n"
               "1200 expect encoder.layers.0.self_attn.q\n1300 quit\n", "w");
    CHECK(run_window(dir, "--replay drive.replay --record rec.replay") == 0, "the driven session ran");
    char path[600], rec[8192] = "";
    snprintf(path, sizeof path, "%s/rec.replay", dir);
    FILE *f = fopen(path, "r");
    if (f) rec[fread(rec, 1, sizeof rec - 1, f)] = '\0', fclose(f);
    CHECK(strstr(rec, " key PageDown\n") && strstr(rec, " text 2\n") && strstr(rec, " key Tab\n") &&
              strstr(rec, " move 640 400\n"), "the recording holds the session's input: %.300s", rec);
    write_file(dir, "rec.replay", "3000 expect encoder.layers.0.self_attn.q\n3100 quit\n", "a");
    CHECK(run_window(dir, "--replay rec.replay") == 0, "replaying the recording lands on the same stage");
}

// Live training in the window: the worker trains while frames keep coming, then stops. Five
// seconds between the two shots while it trains: under the sanitizers, beside another test on
// two cores, the niced worker has managed two steps in two seconds.
static void live_training(const char *dir) {
    write_file(dir, "train.replay",
               "400 key Tab\n450 key Tab\n500 key Tab\n550 key Tab\n800 shot t0.png\n900 key space\n"
               "4000 shot t1.png\n9000 shot t2.png\n9100 key space\n9600 shot t3.png\n9700 quit\n", "w");
    CHECK(run_window(dir, "--size 1280x800 --replay train.replay") == 0, "the training session ran");
    Shot t[4] = {load(dir, "t0.png"), load(dir, "t1.png"), load(dir, "t2.png"), load(dir, "t3.png")};
    if (t[0].s && t[1].s && t[2].s && t[3].s) {
        printf("training shots differ by %ld, %ld and %ld pixels\n", differing(&t[0], &t[1]), differing(&t[1], &t[2]),
               differing(&t[2], &t[3]));
        CHECK(differing(&t[0], &t[1]) > 20000, "starting shows curves and attention maps");
        CHECK(differing(&t[1], &t[2]) > 500, "the view keeps changing while it trains (the window is live)");
        CHECK(differing(&t[2], &t[3]) > 500, "stopping changes the controls (Stop becomes Start)");
    }
    for (int i = 0; i < 4; i++)
        if (t[i].s) SDL_FreeSurface(t[i].s);
}

// The 10-minute lecture (tests/ui/lecture.replay): six lessons, three questions answered and
// one revealed, two mistakes compared with their correct programs, a handout written. The
// replay's `expect` lines hold each step; here, the handout it wrote is checked on the page.
static void lecture(const char *dir) {
    char sub[600], args[1400];
    snprintf(sub, sizeof sub, "%s/lecture", dir);
    CHECK(mkdir(sub, 0777) == 0, "a folder for the lecture");
    snprintf(args, sizeof args, "lesson '%s/self-attention.md' --size 1280x720 --replay '%s/ui/lecture.replay'", LESSONS, TESTS);
    CHECK(run_window(sub, args) == 0, "the lecture replay ran to its end with every expect met (see %s/run.log)", sub);
    char path[700];
    snprintf(path, sizeof path, "%s/stepformer-handout-scaling/index.html", sub);
    char *page = file_read(path);
    CHECK(page != NULL, "Shift+S wrote the scaling lesson's handout, %s", path);
    if (!page) return;
    int pictures = 0;
    for (const char *p = strstr(page, "<figure><img "); p; p = strstr(p + 1, "<figure><img "))
        pictures += strstr(p, "src=\"data:image/png;base64,iVBORw0KGgo") != NULL;  // a PNG's signature
    CHECK(strstr(page, "<title>Why divide by sqrt(d_k)") != NULL, "the handout is the scaling lesson's");
    CHECK(pictures >= 2, "the handout carries the window's pictures (%d)", pictures);
    CHECK(strstr(page, "<strong>Question 1.</strong> Not divided") && strstr(page, "<h2>Answers</h2>") &&
              strstr(page, ">0.96 <span"),
          "the handout asks the lesson's questions and answers them at its end (0.96 for the first)");
    free(page);
}

// What gpt_tiny.md writes when opened with choice c, as `expect output` takes it ("6,6,0,7").
static void written(const DecodeChoice *c, char *out, size_t n) {
    Session s;
    Err e = {{0}};
    SessionSpec spec = {.lesson_path = TESTS "/programs/gpt_tiny.md", .choice = *c, .has_choice = true};
    snprintf(out, n, "(none)");
    CHECK(session_open(&s, &spec, &e) && interp_run(s.it, &e), "gpt_tiny.md: %s", e.msg);
    if (!s.it) return;
    int len;
    StopReason why;
    const float *g = interp_generated(s.it, &len, &why);
    out[0] = '\0';
    for (int i = 0; i < len; i++) snprintf(out + strlen(out), n - strlen(out), "%s%d", i ? "," : "", (int)g[i]);
    session_close(&s);
}

// Z in the window: greedy, sampling (temperature 1, seed 0), beam search (width 3), greedy,
// sampling again; each time the replay expects the mode, the stage kept and the tokens a session
// opened with that choice writes. The Decoding view of each is drawn differently.
static void decoding_keys(const char *dir) {
    char g[200], smp[200], b[200], replay[8192], args[700];
    written(&(DecodeChoice){0}, g, sizeof g);
    written(&(DecodeChoice){.temperature = 1}, smp, sizeof smp);
    written(&(DecodeChoice){.beam = 3}, b, sizeof b);
    CHECK(strcmp(g, smp) != 0, "sampling writes other tokens than greedy decoding (%s, %s)", g, smp);
    int k = snprintf(replay, sizeof replay, "300 key Tab\n350 key Tab\n400 expect view decoding\n");
    for (int i = 0; i < 73; i++)  // PageDown steps a block: 73 of them reach round 1's argmax
        k += snprintf(replay + k, sizeof replay - (size_t)k, "%d key PageDown\n", 450 + 20 * i);
    const char *mode[5] = {"greedy", "sampling", "beam", "greedy", "sampling"}, *out[5] = {g, smp, b, g, smp};
    for (int z = 0; z < 5; z++) {
        const int t = 2000 + 600 * z;
        if (z) k += snprintf(replay + k, sizeof replay - (size_t)k, "%d text z\n", t);
        k += snprintf(replay + k, sizeof replay - (size_t)k,
                      "%d expect decoding %s\n%d expect step.1.decoder.next\n%d expect output %s\n%d shot z%d.png\n",
                      t + 300, mode[z], t + 310, t + 320, out[z], t + 400, z);
    }
    snprintf(replay + k, sizeof replay - (size_t)k, "%d quit\n", 2000 + 600 * 5);
    write_file(dir, "decoding.replay", replay, "w");
    snprintf(args, sizeof args, "lesson '%s/programs/gpt_tiny.md' --size 1280x720 --replay decoding.replay", TESTS);
    CHECK(run_window(dir, args) == 0, "Z switched greedy, sampling and beam search, each as expected (see %s/run.log)", dir);
    Shot z[5] = {load(dir, "z0.png"), load(dir, "z1.png"), load(dir, "z2.png"), load(dir, "z3.png"), load(dir, "z4.png")};
    if (z[0].s && z[1].s && z[2].s && z[3].s && z[4].s) {
        CHECK(differing(&z[0], &z[1]) > 20000 && differing(&z[1], &z[2]) > 20000, "each choice draws its own Decoding view");
        CHECK(count(&z[1], theme_light.accent) > count(&z[0], theme_light.accent),
              "sampling names itself in the top bar and draws its distributions");
    }
    for (int i = 0; i < 5; i++)
        if (z[i].s) SDL_FreeSurface(z[i].s);
}

// A model dropped on the desktop window (here, a file of a hub folder: its folder opens) opens
// as `--model DIR` does, on the ids 1,2,3,4 for a folder without a tokenizer: it writes what a
// session opened so writes.
static void dropped_model(const char *dir) {
    const char *folder = FIXTURES "/hub/gpt2";
    Session s;
    Err e = {{0}};
    char want[400] = "", replay[1200];
    int len;
    StopReason why;
    if (session_open(&s, &(SessionSpec){.model_path = folder, .src_ids = "1,2,3,4"}, &e) && interp_run(s.it, &e)) {
        const float *g = interp_generated(s.it, &len, &why);
        for (int i = 0; i < len; i++) snprintf(want + strlen(want), sizeof want - strlen(want), "%s%d", i ? "," : "", (int)g[i]);
        session_close(&s);
    }
    CHECK(want[0], "%s: %s", folder, e.msg);
    snprintf(replay, sizeof replay, "300 drop %s/model.safetensors\n900 expect output %s\n950 shot dropped.png\n1000 quit\n",
             folder, want);
    write_file(dir, "drop.replay", replay, "w");
    CHECK(run_window(dir, "--size 1280x720 --replay drop.replay") == 0, "a dropped model folder opened and wrote %s (see %s/run.log)",
          want, dir);
}

int main(void) {
    char dir[] = "/tmp/stepformer-window-XXXXXX";
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    char cmd[2048];
    // Under AddressSanitizer the X11 and D-Bus libraries SDL loads leak at exit, from modules
    // already unloaded (so they cannot be suppressed by name): leak reports are off for this
    // process only. Every other check stays on, and test_render draws the same views with
    // leak detection.
    snprintf(cmd, sizeof cmd,
             "cd '%s' && ASAN_OPTIONS=detect_leaks=0 xvfb-run -a -s '-screen 0 1400x900x24' '%s' "
             "--target 'a transformer' --size 1280x800 --replay '%s/ui/walkthrough.replay' > run.log 2>&1",
             dir, STEPFORMER_BIN, TESTS);
    int status = system(cmd);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char log[4096] = "", path[600];
    snprintf(path, sizeof path, "%s/run.log", dir);
    FILE *f = fopen(path, "r");
    if (f) log[fread(log, 1, sizeof log - 1, f)] = '\0', fclose(f);
    CHECK(code == 0, "the replayed session ran cleanly (exit %d): %s", code, log);
    check_shots(dir);
    default_size(dir);
    record_and_replay(dir);
    live_training(dir);
    lecture(dir);
    decoding_keys(dir);
    dropped_model(dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (check_failed == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    if (check_failed) fprintf(stderr, "screenshots kept in %s\n", dir);
    return check_finish("test_window");
}
