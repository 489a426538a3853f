// test_pictures.c: the README's pictures of the window are what the window draws today.
// scripts/pictures.sh, run with the built program into a scratch folder, must make exactly the
// pictures committed in docs/img/ (no more, no fewer), and each must match its committed twin:
// the same size, and at most 0.1% of its pixels differing by more than 24 (of 255) in a channel,
// room for font antialiasing. Each committed picture must be shown in README.md. A failure names
// the picture and says to run scripts/pictures.sh.
#include <SDL_image.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"
#include "files.h"

enum { MAX_PICTURES = 16, CHANNEL_TOLERANCE = 24 };
static const double MAX_FRACTION = 0.001;  // of the pixels, beyond CHANNEL_TOLERANCE

static char dir[] = "/tmp/stepformer-pictures-XXXXXX";

// The PNG as RGBA bytes (ABGR8888 on a little-endian machine), or NULL.
static SDL_Surface *load(const char *path) {
    SDL_Surface *raw = IMG_Load(path);
    if (!raw) return NULL;
    SDL_Surface *s = SDL_ConvertSurfaceFormat(raw, SDL_PIXELFORMAT_ABGR8888, 0);
    SDL_FreeSurface(raw);
    return s;
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

// The names of the PNGs in a folder, sorted; returns how many.
static int list_pngs(const char *folder, char names[][64]) {
    DIR *d = opendir(folder);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        const size_t len = strlen(de->d_name);
        if (len < 5 || len >= 64 || strcmp(de->d_name + len - 4, ".png") != 0 || n == MAX_PICTURES) continue;
        snprintf(names[n++], 64, "%s", de->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, 64, by_name);
    return n;
}

// One committed picture against the one remade now.
static void compare(const char *name) {
    char want_path[600], got_path[600];
    snprintf(want_path, sizeof want_path, "%s/%s", IMG_DIR, name);
    snprintf(got_path, sizeof got_path, "%s/%s", dir, name);
    SDL_Surface *want = load(want_path), *got = load(got_path);
    CHECK(want && got, "docs/img/%s: cannot read the committed picture or the one remade (%s); run scripts/pictures.sh",
          name, IMG_GetError());
    if (want && got) {
        CHECK(want->w == got->w && want->h == got->h, "docs/img/%s is %dx%d, the window now draws %dx%d: run scripts/pictures.sh",
              name, want->w, want->h, got->w, got->h);
        long off = 0;
        int worst = 0;
        for (int y = 0; y < want->h && y < got->h; y++) {
            const unsigned char *a = (const unsigned char *)want->pixels + (size_t)y * (size_t)want->pitch;
            const unsigned char *b = (const unsigned char *)got->pixels + (size_t)y * (size_t)got->pitch;
            for (int x = 0; x < want->w && x < got->w; x++) {
                int d = 0;
                for (int c = 0; c < 3; c++) d = abs(a[4 * x + c] - b[4 * x + c]) > d ? abs(a[4 * x + c] - b[4 * x + c]) : d;
                off += d > CHANNEL_TOLERANCE;
                worst = d > worst ? d : worst;
            }
        }
        const double fraction = (double)off / ((double)want->w * want->h);
        printf("docs/img/%s: %ld pixels differ by more than %d (%.4f%%), the largest channel difference %d\n", name, off,
               CHANNEL_TOLERANCE, 100 * fraction, worst);
        CHECK(fraction <= MAX_FRACTION,
              "docs/img/%s is not what the window draws now: %.2f%% of its pixels differ (at most %.2f%% may), by up to %d: "
              "run scripts/pictures.sh",
              name, 100 * fraction, 100 * MAX_FRACTION, worst);
    }
    SDL_FreeSurface(want), SDL_FreeSurface(got);
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL, "a scratch folder");
    char cmd[1500];
    snprintf(cmd, sizeof cmd, "env -u DISPLAY -u WAYLAND_DISPLAY bash '%s/scripts/pictures.sh' '%s' '%s' >/dev/null",
             SOURCE_DIR, STEPFORMER_BIN, dir);
    const int status = system(cmd);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "scripts/pictures.sh exits %d",
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    static char committed[MAX_PICTURES][64], made[MAX_PICTURES][64];
    const int n_committed = list_pngs(IMG_DIR, committed), n_made = list_pngs(dir, made);
    CHECK(n_committed >= 2, "docs/img holds %d pictures", n_committed);
    bool same_names = n_committed == n_made;
    for (int i = 0; same_names && i < n_made; i++) same_names = !strcmp(committed[i], made[i]);
    CHECK(same_names, "scripts/pictures.sh makes %d pictures, docs/img holds %d, not the same names: run scripts/pictures.sh "
          "and commit docs/img", n_made, n_committed);

    char *readme = file_read(SOURCE_DIR "/README.md");
    CHECK(readme != NULL, "read README.md");
    for (int i = 0; i < n_committed; i++) {
        char link[100];
        snprintf(link, sizeof link, "](docs/img/%s)", committed[i]);
        CHECK(readme && strstr(readme, link), "README.md does not show docs/img/%s", committed[i]);
        compare(committed[i]);
    }
    free(readme);
    IMG_Quit();
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_pictures");
}
