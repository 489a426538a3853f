// test_handout.c: `stepformer export LESSON --html DIR` writes one page with every paragraph,
// list item, heading, table cell and code block of the lesson, in order (read back from the
// page's elements and compared with the lesson's own blocks), every program cell, and one
// picture per cell that makes stages, each a PNG data URI of the size asked; its questions in
// place and their answers at the end; and `--pdf FILE` prints it with WeasyPrint.
#define _GNU_SOURCE  // memmem
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "check.h"
#include "files.h"
#include "quiz.h"
#include "session.h"

enum { MAX_ELEMENTS = 4096 };

typedef struct {
    char tag[12];
    char *text;  // the inner text, tags dropped and entities read; for img its src
} Element;

// The inner text of html[from, to): tags dropped (<br> a newline), the four entities read.
static char *inner_text(const char *s, const char *end) {
    char *out = malloc((size_t)(end - s) + 1), *o = out;
    while (out && s < end) {
        if (*s == '<') {
            if (!strncmp(s, "<br>", 4)) *o++ = '\n';
            while (s < end && *s != '>') s++;
            s++;
        } else if (*s == '&') {
            static const struct { const char *ent; char c; } ents[] = {{"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}};
            size_t k = 0;
            while (k < 4 && strncmp(s, ents[k].ent, strlen(ents[k].ent))) k++;
            *o++ = k < 4 ? ents[k].c : '&';
            s += k < 4 ? strlen(ents[k].ent) : 1;
        } else *o++ = *s++;
    }
    if (out) *o = '\0';
    return out;
}

// The page's text elements (p, li, h1-h6, th, td, pre), hr and img, in document order.
static int elements(const char *html, Element *el) {
    static const char *const tags[] = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "th", "td", "pre"};
    int n = 0;
    for (const char *s = strchr(html, '<'); s && n < MAX_ELEMENTS; s = strchr(s + 1, '<')) {
        size_t len = strcspn(s + 1, " >");
        char tag[12];
        snprintf(tag, sizeof tag, "%.*s", (int)(len < 11 ? len : 11), s + 1);
        if (!strcmp(tag, "img")) {
            const char *src = strstr(s, "src=\""), *q = src ? strchr(src + 5, '"') : NULL;
            if (!q) continue;
            el[n] = (Element){"img", inner_text(src + 5, q)};
            n++;
            continue;
        }
        if (!strcmp(tag, "hr")) {
            el[n++] = (Element){"hr", inner_text(s, s)};
            continue;
        }
        bool text_tag = false;
        for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++) text_tag |= !strcmp(tag, tags[k]);
        if (!text_tag) continue;
        char close[16];
        snprintf(close, sizeof close, "</%s>", tag);
        const char *open_end = strchr(s, '>'), *end = open_end ? strstr(open_end, close) : NULL;
        if (!end) continue;
        snprintf(el[n].tag, sizeof el[n].tag, "%s", tag);
        el[n++].text = inner_text(open_end + 1, end);
        s = end;
    }
    return n;
}

static char *block_text(const RichBlock *b) {
    size_t len = 1;
    for (int k = 0; k < b->n_spans; k++) len += strlen(b->spans[k].text);
    char *t = calloc(len, 1);
    for (int k = 0; t && k < b->n_spans; k++) strcat(t, b->spans[k].text);
    return t;
}

// Width and height from the IHDR of a base64 PNG data URI; false if it is not one.
static bool png_size(const char *src, unsigned *w, unsigned *h) {
    static const char prefix[] = "data:image/png;base64,";
    if (strncmp(src, prefix, strlen(prefix)) != 0) return false;
    const char *b = src + strlen(prefix);
    unsigned char bytes[24];
    for (int i = 0; i < 8; i++) {  // 32 digits: 24 bytes
        unsigned v = 0;
        for (int k = 0; k < 4; k++) {
            const char c = b[4 * i + k];
            const char *d = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", c);
            if (!c || !d) return false;
            v = v << 6 | (unsigned)(d - "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
        }
        bytes[3 * i] = (unsigned char)(v >> 16), bytes[3 * i + 1] = (unsigned char)(v >> 8), bytes[3 * i + 2] = (unsigned char)v;
    }
    if (memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) != 0 || memcmp(bytes + 12, "IHDR", 4) != 0) return false;
    *w = (unsigned)bytes[16] << 24 | (unsigned)bytes[17] << 16 | (unsigned)bytes[18] << 8 | bytes[19];
    *h = (unsigned)bytes[20] << 24 | (unsigned)bytes[21] << 16 | (unsigned)bytes[22] << 8 | bytes[23];
    return true;
}

static int run(const char *cmd) {
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void handout(const char *name) {
    char dir[] = "/tmp/stepformer-handout-XXXXXX", cmd[1024], path[600];
    CHECK(mkdtemp(dir) != NULL, "a temporary folder");
    snprintf(cmd, sizeof cmd, "%s export %s/%s --html %s/page --size 640x360 >/dev/null", STEPFORMER_BIN, LESSONS, name, dir);
    CHECK(run(cmd) == 0, "%s", cmd);
    snprintf(path, sizeof path, "%s/page/index.html", dir);
    char *html = file_read(path);
    CHECK(html != NULL, "%s was written", path);
    Session s;
    Err e = {{0}};
    snprintf(path, sizeof path, "%s/%s", LESSONS, name);
    const bool ok = session_open(&s, &(SessionSpec){.lesson_path = path}, &e) && interp_run(s.it, &e);
    CHECK(ok, "%s", e.msg);
    if (!html || !ok) return free(html);
    Element *el = calloc(MAX_ELEMENTS, sizeof *el);
    const int n = elements(html, el);
    const Lesson *l = &s.lesson;
    // Every shown block and every program cell, in order, each matched by an element of its text.
    int at = 0, matched = 0, want = 0;
    for (int i = 0; i < l->n_blocks; i++) {
        const RichBlock *b = &l->blocks[i];
        const bool program = b->kind == RB_CODE && !strcmp(b->lang, "program");
        const bool question = b->kind == RB_CODE && !strcmp(b->lang, "question");
        const bool shown = b->kind == RB_CODE ? program || strcmp(b->lang, "lesson") != 0
                                              : b->kind == RB_RULE || b->kind == RB_TABLE_CELL || b->n_spans > 0;
        if (!shown) continue;
        want++;
        if (question) {  // a question stands as "Question K. ASK", its answer at the end
            int q = 0;
            while (q < l->n_questions && l->questions[q].block != i) q++;
            char ask[400];
            snprintf(ask, sizeof ask, "Question %d. %s", q + 1, q < l->n_questions ? l->questions[q].ask : "?");
            int k = at;
            while (k < n && (strcmp(el[k].tag, "p") || strcmp(el[k].text, ask))) k++;
            CHECK(k < n, "%s:%d: the question \"%.60s\" is on the page, in its place", name, b->line, ask);
            if (k < n) at = k + 1, matched++;
            continue;
        }
        char *t = block_text(b);
        const char *tag = b->kind == RB_RULE ? "hr" : b->kind == RB_CODE ? "pre" : NULL;
        int k = at;
        while (k < n && (tag ? strcmp(el[k].tag, tag) : !strcmp(el[k].tag, "img") || !strcmp(el[k].tag, "hr")
                                                                   || !strcmp(el[k].tag, "pre") || strcmp(el[k].text, t)))
            k++;
        if (tag && k < n && strcmp(tag, "hr") && strcmp(el[k].text, t)) k = n;  // code: the same text
        CHECK(k < n, "%s:%d: the block \"%.60s\" is on the page, after the one before", name, b->line, t);
        if (k < n) at = k + 1, matched++;
        free(t);
    }
    CHECK(matched == want && want > 10, "%s: %d of %d blocks on the page, in order", name, matched, want);
    // The answers at the end, after a heading "Answers", one item a question in order, each as
    // the window gives it (quiz.h: test_questions holds those to loops over the trace).
    int ak = 0;
    while (ak < n && (strcmp(el[ak].tag, "h2") || strcmp(el[ak].text, "Answers"))) ak++;
    CHECK((ak < n) == (l->n_questions > 0), "%s: an Answers section exactly when there are questions", name);
    for (int q = 0; q < l->n_questions && ak < n; q++) {
        Answer ans;
        CHECK(quiz_answer(&ans, l, &l->questions[q], s.it, &e), "%s", e.msg);
        char line[300];
        snprintf(line, sizeof line, "%s (%s)", ans.text, interp_stage(s.it, ans.stage)->id);
        while (ak < n && strcmp(el[ak].tag, "li")) ak++;
        CHECK(ak < n && !strcmp(el[ak].text, line), "%s: answer %d is '%s' (the page: '%s')", name, q + 1, line,
              ak < n ? el[ak].text : "none");
        ak++;
    }
    // One picture per cell with stages, each the centre view of a 640x360 window: smaller than it.
    bool *has = calloc((size_t)l->n_cells, sizeof *has);
    int cells = 0, pictures = 0;
    for (int i = 0; has && i < interp_n_stages(s.it); i++) {
        const int c = lesson_cell_of_line(l, interp_stage(s.it, i)->line);
        if (c >= 0 && !has[c]) has[c] = true, cells++;
    }
    for (int k = 0; k < n; k++) {
        if (strcmp(el[k].tag, "img")) continue;
        unsigned w = 0, h = 0;
        CHECK(png_size(el[k].text, &w, &h) && w > 640 / 3 && w < 640 && h > 360 / 2 && h < 360,
              "%s: picture %d is the centre of a 640x360 window (%ux%u)", name, pictures, w, h);
        pictures++;
    }
    CHECK(pictures == cells && cells > 0, "%s: %d pictures for %d cells with stages", name, pictures, cells);
    for (int k = 0; k < n; k++) free(el[k].text);
    free(el);
    free(has);
    free(html);
    session_close(&s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run(cmd);
}

static void errors(void) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s export %s/no-such-lesson.md --html /tmp/stepformer-handout-none 2>/dev/null", STEPFORMER_BIN, LESSONS);
    CHECK(run(cmd) == 1, "an unknown lesson: exit 1");
    struct stat sb;
    CHECK(stat("/tmp/stepformer-handout-none", &sb) != 0, "and no folder made");
    snprintf(cmd, sizeof cmd, "%s export %s/scaling.md --html /proc/no/such 2>/dev/null", STEPFORMER_BIN, LESSONS);
    CHECK(run(cmd) == 1, "an unwritable folder: exit 1");
    // --pdf without WeasyPrint on the PATH: one line naming the package, exit 1, no file.
    snprintf(cmd, sizeof cmd, "env PATH=/nonexistent %s export %s/scaling.md --pdf /tmp/stepformer-handout-none.pdf 2>&1 | grep -q 'apt-get install weasyprint'",
             STEPFORMER_BIN, LESSONS);
    CHECK(run(cmd) == 0, "--pdf without weasyprint names the package");
    CHECK(stat("/tmp/stepformer-handout-none.pdf", &sb) != 0, "and writes no PDF");
    snprintf(cmd, sizeof cmd, "%s export %s/scaling.md --out /tmp/x --pdf x.pdf 2>/dev/null", STEPFORMER_BIN, LESSONS);
    CHECK(run(cmd) == 2, "--out with --pdf: a usage error");
}

// --pdf: the handout printed by WeasyPrint (scripts/deps.sh --test installs it): a PDF of
// several pages, the page kept beside it with --html, no scratch folder left behind.
static void pdf(void) {
    char dir[] = "/tmp/stepformer-handout-pdf-XXXXXX", cmd[1024], path[600];
    CHECK(mkdtemp(dir) != NULL, "a temporary folder");
    CHECK(run("command -v weasyprint >/dev/null") == 0, "weasyprint is installed (scripts/deps.sh --test)");
    snprintf(cmd, sizeof cmd, "%s export %s/scaling.md --html %s/page --pdf %s/scaling.pdf --size 640x360 >/dev/null 2>&1",
             STEPFORMER_BIN, LESSONS, dir, dir);
    CHECK(run(cmd) == 0, "%s", cmd);
    snprintf(path, sizeof path, "%s/scaling.pdf", dir);
    FILE *f = fopen(path, "rb");
    static char doc[16 << 20];  // binary: counted with memmem, not as a string
    const size_t n = f ? fread(doc, 1, sizeof doc, f) : 0;
    if (f) fclose(f);
    CHECK(n > 5 && !memcmp(doc, "%PDF-", 5), "%s is a PDF", path);
    int pages = 0;  // page objects: "/Type /Page" and then not "s" (the /Pages tree)
    for (const char *p = memmem(doc, n, "/Type /Page", 11); p; p = memmem(p + 1, n - (size_t)(p + 1 - doc), "/Type /Page", 11))
        pages += p + 11 < doc + n && p[11] != 's';
    CHECK(pages >= 3, "the handout's PDF has its pages (%d)", pages);
    snprintf(path, sizeof path, "%s/page/index.html", dir);
    struct stat sb;
    CHECK(stat(path, &sb) == 0, "with --html the page stays: %s", path);
    // --pdf alone: the page is a scratch one; success says one line on stdout, nothing on stderr.
    snprintf(cmd, sizeof cmd, "%s export %s/scaling.md --pdf %s/only.pdf --size 640x360 >%s/out.txt 2>%s/err.txt",
             STEPFORMER_BIN, LESSONS, dir, dir, dir);
    CHECK(run(cmd) == 0, "%s", cmd);
    snprintf(path, sizeof path, "%s/err.txt", dir);
    char *err = file_read(path);
    CHECK(err && !strstr(err, "stepformer:"), "--pdf prints no error line when it succeeds: '%s'", err ? err : "(none)");
    free(err);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *out = file_read(path);
    CHECK(out && strstr(out, "only.pdf"), "it says what it wrote: '%s'", out ? out : "(none)");
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run(cmd);
}

// On paper: a handout made at the window's usual 1280x720 prints its pictures' smallest text (14
// px) at 8 pt or more on A4 (17 cm of text width, 481.9 pt: 14 px x 481.9 / width >= 8 when the
// picture is at most 843 px wide); --whole-window keeps the whole window (1280 px, 5.3 pt).
static void paper(void) {
    char dir[] = "/tmp/stepformer-handout-paper-XXXXXX", cmd[1024], path[600];
    CHECK(mkdtemp(dir) != NULL, "a temporary folder");
    const char *how[2] = {"", " --whole-window"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "%s export %s/scaling.md --html %s/p%d --size 1280x720%s >/dev/null", STEPFORMER_BIN, LESSONS,
                 dir, k, how[k]);
        CHECK(run(cmd) == 0, "%s", cmd);
        snprintf(path, sizeof path, "%s/p%d/index.html", dir, k);
        char *html = file_read(path);
        const char *img = html ? strstr(html, "<img width=\"") : NULL;
        const int w = img ? atoi(img + strlen("<img width=\"")) : 0;
        if (k == 0) CHECK(w > 0 && 14.0 * 481.9 / w >= 8.0, "the centre view's text prints at %.1f pt (%d px wide)", 14.0 * 481.9 / (w ? w : 1), w);
        else CHECK(w == 1280, "--whole-window: the whole window, %d px wide", w);
        free(html);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    run(cmd);
}

int main(void) {
    paper();
    handout("scaling.md");
    handout("greedy-decoding.md");
    errors();
    pdf();
    return check_finish("test_handout");
}
