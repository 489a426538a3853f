// test_readme.c: the README and the manual say what is true today. Every `sh` block of README.md
// and of each docs/*.md in which a command shows its output is run as written, in a scratch folder
// that sees the tree's `build/stepformer`, `assets/` and `lessons/`, and every line it shows must
// be printed.
//
// In a block, a line starting with `build/stepformer ` is a command (a trailing `\` continues
// it); the lines after it that are not commands are what it prints. A shown line may end in a
// comment after two spaces and `#` (the page's note on it, not output). A shown line matches a
// printed line (stdout or stderr) word by word from the start; numbers match to 1e-3 (another
// instruction set may round the last digits otherwise) and whatever follows a number in its word
// (`%`, `:`) must be the same. The commands run on the AVX2 vector path (STEPFORMER_SIMD=avx2:
// on an AVX-512 host too), so a training run stops at the step the page shows wherever it runs.
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "files.h"

enum { MAX_LINES = 4000, MAX_BLOCK = 64, LINE = 1024 };

typedef struct {
    char cmd[2048];
    char shown[8][LINE];  // the lines the page shows it printing
    int n_shown;
    const char *page;     // README.md or docs/NAME.md
    int line;             // the page's line of the command
} Command;

static char dir[] = "/tmp/stepformer-readme-XXXXXX";

static void chomp(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = '\0';
}

// The shown line without the page's own comment ("  # ...").
static void strip_comment(char *s) {
    char *c = strstr(s, "  #");
    if (c) *c = '\0';
    chomp(s);
}

// One word against another: numbers to 1e-3 with the same suffix, other words exactly.
static bool word_matches(const char *want, size_t nw, const char *got, size_t ng) {
    char a[128], b[128];
    if (nw >= sizeof a || ng >= sizeof b) return nw == ng && !strncmp(want, got, nw);
    memcpy(a, want, nw), a[nw] = '\0';
    memcpy(b, got, ng), b[ng] = '\0';
    char *ea, *eb;
    const double x = strtod(a, &ea), y = strtod(b, &eb);
    if (ea == a || eb == b) return !strcmp(a, b);
    return fabs(x - y) <= 1e-3 * fmax(1.0, fabs(x)) && !strcmp(ea, eb);
}

// Does `got` (one printed line) start with the words of `want`?
static bool line_matches(const char *want, const char *got, size_t got_n) {
    const char *w = want, *g = got, *g_end = got + got_n;
    for (;;) {
        while (*w == ' ') w++;
        while (g < g_end && (*g == ' ' || *g == '\t' || *g == '\r')) g++;
        if (!*w) return true;
        const size_t nw = strcspn(w, " ");
        size_t ng = 0;
        while (g + ng < g_end && g[ng] != ' ' && g[ng] != '\t' && g[ng] != '\r') ng++;
        if (!ng || !word_matches(w, nw, g, ng)) return false;
        w += nw, g += ng;
    }
}

static bool printed(const char *want, const char *text) {
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        const size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (line_matches(want, p, n)) return true;
        p = nl ? nl + 1 : NULL;
    }
    return false;
}

static void run_block(const Command *cmds, int n) {
    for (int i = 0; i < n; i++) {
        char sh[3000];
        snprintf(sh, sizeof sh, "cd '%s' && env -u DISPLAY -u WAYLAND_DISPLAY STEPFORMER_SIMD=avx2 sh -c '%s' >out 2>err </dev/null",
                 dir, cmds[i].cmd);
        const int status = system(sh);
        char p[300];
        snprintf(p, sizeof p, "%s/out", dir);
        char *out = file_read(p);
        snprintf(p, sizeof p, "%s/err", dir);
        char *err = file_read(p);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s line %d: '%s' exits %d: %s", cmds[i].page, cmds[i].line, cmds[i].cmd,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1, err ? err : "");
        for (int k = 0; k < cmds[i].n_shown; k++)
            CHECK(printed(cmds[i].shown[k], out) || printed(cmds[i].shown[k], err),
                  "%s line %d: '%s' does not print the line the page shows:\n  %s\nit printed:\n%s%s", cmds[i].page,
                  cmds[i].line, cmds[i].cmd, cmds[i].shown[k], out ? out : "", err ? err : "");
        free(out), free(err);
    }
}

static bool is_command(const char *s) { return !strncmp(s, "build/stepformer ", 17); }
static bool is_other_command(const char *s) {
    return !strncmp(s, "scripts/", 8) || !strncmp(s, "/usr/bin/", 9) || !strncmp(s, "sudo ", 5) || s[0] == '#' ||
           !strncmp(s, "cmake ", 6);
}

// Reads the fenced block opening at lines[*i] into cmds; returns how many commands it holds and
// leaves *i on its closing fence. `shown` counts the lines shown as output.
static int read_block(const char *page, char **lines, int n_lines, int *i, Command *cmds, int *shown) {
    const size_t indent = strspn(lines[*i], " ");
    int n = 0;
    *shown = 0;
    for ((*i)++; *i < n_lines; (*i)++) {
        char *s = lines[*i];
        if (strlen(s) >= indent) s += strspn(s, " ") < indent ? strspn(s, " ") : indent;
        if (!strncmp(s, "```", 3)) break;
        if (is_command(s) && n < MAX_BLOCK) {
            Command *c = &cmds[n++];
            *c = (Command){.page = page, .line = *i + 1};
            snprintf(c->cmd, sizeof c->cmd, "%s", s);
            while (strlen(c->cmd) && c->cmd[strlen(c->cmd) - 1] == '\\' && *i + 1 < n_lines) {
                c->cmd[strlen(c->cmd) - 1] = ' ';
                const char *next = lines[++(*i)];
                strncat(c->cmd, next + strspn(next, " "), sizeof c->cmd - strlen(c->cmd) - 1);
            }
        } else if (n && *s && *s != ' ' && !is_other_command(s) && cmds[n - 1].n_shown < 8) {
            Command *c = &cmds[n - 1];
            snprintf(c->shown[c->n_shown], LINE, "%s", s);
            strip_comment(c->shown[c->n_shown]);
            if (c->shown[c->n_shown][0]) c->n_shown++, (*shown)++;
        }
    }
    return n;
}

typedef struct {
    int pages, blocks, commands, lines;  // what ran: pages read, blocks, their commands, lines compared
} Tally;

// Runs every block of one page (README.md, or docs/NAME.md under the tree) that shows output.
static void run_page(const char *path, const char *page, Tally *t) {
    char *text = file_read(path);
    CHECK(text != NULL, "read %s", path);
    if (!text) return;
    static char *lines[MAX_LINES];
    int n_lines = 0;
    for (char *p = text; p && *p && n_lines < MAX_LINES;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        chomp(p);
        lines[n_lines++] = p;
        p = nl ? nl + 1 : NULL;
    }
    static Command cmds[MAX_BLOCK];
    t->pages++;
    for (int i = 0; i < n_lines; i++) {
        const char *s = lines[i] + strspn(lines[i], " ");
        if (strncmp(s, "```sh", 5) != 0) continue;
        int shown = 0;
        const int n = read_block(page, lines, n_lines, &i, cmds, &shown);
        if (!shown) continue;  // a block of commands to adapt (M.safetensors, ...), none showing output
        run_block(cmds, n);
        t->blocks++, t->commands += n, t->lines += shown;
    }
    free(text);
}

static int by_name(const void *a, const void *b) { return strcmp(a, b); }

// README.md, then every docs/*.md in name order.
static void run_pages(Tally *t) {
    run_page(README, "README.md", t);
    DIR *d = opendir(DOC_DIR);
    CHECK(d != NULL, "open %s", DOC_DIR);
    static char names[256][256];
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d)) != NULL && n < 256;) {
        const size_t len = strlen(de->d_name);
        if (len > 3 && !strcmp(de->d_name + len - 3, ".md")) snprintf(names[n++], sizeof names[0], "%s", de->d_name);
    }
    if (d) closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int i = 0; i < n; i++) {
        char path[800], page[300];
        snprintf(path, sizeof path, "%s/%s", DOC_DIR, names[i]);
        snprintf(page, sizeof page, "docs/%s", names[i]);
        run_page(path, page, t);
    }
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL, "a scratch folder");
    char ln[600];
    const char *links[][2] = {{"build", BUILD_DIR}, {"assets", ASSETS}, {"lessons", LESSONS}};
    for (int k = 0; k < 3; k++) {
        snprintf(ln, sizeof ln, "%s/%s", dir, links[k][0]);
        CHECK(symlink(links[k][1], ln) == 0, "link %s", ln);
    }
    Tally t = {0};
    run_pages(&t);
    printf("test_readme: %d pages read (README.md and docs/*.md), %d blocks run, %d commands, %d shown lines compared\n",
           t.pages, t.blocks, t.commands, t.lines);
    // The examples with output when the manual moved to docs/ (3 blocks, 7 commands, 8 lines):
    // training dates and sort, the majority classifier, the words model. A parser that found
    // fewer would test less than it did.
    CHECK(t.blocks >= 3 && t.commands >= 7 && t.lines >= 8, "the pages show output for their examples (%d blocks, %d commands, "
          "%d lines)", t.blocks, t.commands, t.lines);
    snprintf(ln, sizeof ln, "rm -rf '%s'", dir);
    if (system(ln) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_readme");
}
