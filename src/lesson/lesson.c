// lesson.c: reading a lesson's Markdown with md4c into rich blocks, cells and a program.
#include "lesson.h"
#include "bounds.h"

#include <md4c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    Lesson *l;
    const char *doc;
    size_t doc_len;
    int list_depth;
    int ol_next[16];  // next number per list depth (0 = bullet list)
    unsigned style;
    int cur;          // block receiving text, -1 for none
    bool in_quote;
    int row, col;     // the table cell being read (row -1 before the first)
    bool oom;
    const char *at;   // where line_of last counted to, and the line there
    int at_line;
    char *tail;       // the span text add_text extends, its length and its room
    size_t tail_len, tail_cap;
} Builder;

// The line of p in the document, counted on from the last call's place (md4c's text runs
// forward, so a lesson of many blocks is read in one pass), 0 outside it.
static int line_of(Builder *b, const char *p) {
    if (p < b->doc || p > b->doc + b->doc_len) return 0;
    if (!b->at || p < b->at) b->at = b->doc, b->at_line = 1;
    for (; b->at < p; b->at++) b->at_line += *b->at == '\n';
    return b->at_line;
}

static int new_block(Builder *b, RichKind kind) {
    Lesson *l = b->l;
    RichBlock *nb = realloc(l->blocks, sizeof *nb * (size_t)(l->n_blocks + 1));
    if (!nb) return b->oom = true, -1;
    l->blocks = nb;
    RichBlock *r = &l->blocks[l->n_blocks];
    memset(r, 0, sizeof *r);
    r->kind = kind, r->attachment = NOT_ATTACHED;
    return l->n_blocks++;
}

static void add_text(Builder *b, const char *text, size_t n, unsigned style) {
    if (b->cur < 0) b->cur = new_block(b, RB_PARA);
    if (b->cur < 0) return;
    RichBlock *r = &b->l->blocks[b->cur];
    if (r->line == 0 && line_of(b, text) > 0) {  // newlines before this text move it down
        int before = 0;
        for (int k = 0; k < r->n_spans; k++)
            for (const char *c = r->spans[k].text; *c; c++) before += *c == '\n';
        r->line = line_of(b, text) - before;
    }
    Span *last = r->n_spans ? &r->spans[r->n_spans - 1] : NULL;
    if (last && last->style == style) {  // extend the previous span, its room doubling as it grows
        if (last->text != b->tail) b->tail = last->text, b->tail_len = strlen(last->text), b->tail_cap = b->tail_len + 1;
        if (b->tail_len + n + 1 > b->tail_cap) {
            char *t = realloc(last->text, 2 * (b->tail_len + n + 1));
            if (!t) return (void)(b->oom = true);
            last->text = b->tail = t, b->tail_cap = 2 * (b->tail_len + n + 1);
        }
        memcpy(last->text + b->tail_len, text, n);
        b->tail_len += n;
        last->text[b->tail_len] = '\0';
        return;
    }
    Span *ns = realloc(r->spans, sizeof *ns * (size_t)(r->n_spans + 1));
    char *t = malloc(n + 1);
    if (!ns || !t) {
        free(t);
        if (ns) r->spans = ns;
        return (void)(b->oom = true);
    }
    r->spans = ns;
    memcpy(t, text, n);
    t[n] = '\0';
    r->spans[r->n_spans++] = (Span){t, style};
}

// The numbering entry of the current list depth, clamped to the table.
static int list_slot(const Builder *b) {
    const int last = (int)(sizeof b->ol_next / sizeof b->ol_next[0]) - 1;
    return b->list_depth < last ? b->list_depth : last;
}

static int enter_block(MD_BLOCKTYPE type, void *detail, void *ud) {
    Builder *b = ud;
    switch (type) {
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        b->list_depth++;  // lists deeper than the numbering table share its last entry
        b->ol_next[list_slot(b)] = type == MD_BLOCK_OL ? (int)((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
        break;
    case MD_BLOCK_LI:
        b->cur = new_block(b, RB_LIST_ITEM);
        if (b->cur >= 0) {
            b->l->blocks[b->cur].level = list_slot(b);
            b->l->blocks[b->cur].number = b->ol_next[list_slot(b)];
            if (b->ol_next[list_slot(b)]) b->ol_next[list_slot(b)]++;
        }
        break;
    case MD_BLOCK_H:
        b->cur = new_block(b, RB_HEADING);
        if (b->cur >= 0) b->l->blocks[b->cur].level = (int)((MD_BLOCK_H_DETAIL *)detail)->level;
        break;
    case MD_BLOCK_CODE: {
        b->cur = new_block(b, RB_CODE);
        const MD_BLOCK_CODE_DETAIL *d = detail;
        if (b->cur >= 0 && d->lang.size)
            snprintf(b->l->blocks[b->cur].lang, sizeof b->l->blocks[b->cur].lang, "%.*s",
                     (int)d->lang.size, d->lang.text);
        break;
    }
    case MD_BLOCK_P:
        // A list item's first paragraph writes into the item itself.
        if (b->cur < 0 || b->l->blocks[b->cur].kind != RB_LIST_ITEM ||
            b->l->blocks[b->cur].n_spans > 0)
            b->cur = new_block(b, b->in_quote ? RB_QUOTE : RB_PARA);
        break;
    case MD_BLOCK_QUOTE: b->in_quote = true; break;
    case MD_BLOCK_HR: new_block(b, RB_RULE); break;
    case MD_BLOCK_TABLE: b->row = -1; break;
    case MD_BLOCK_TR: b->row++, b->col = -1; break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
        b->cur = new_block(b, RB_TABLE_CELL);
        b->col++;
        if (b->cur >= 0) b->l->blocks[b->cur].row = b->row, b->l->blocks[b->cur].col = b->col;
        break;
    default: break;
    }
    return 0;
}

static int leave_block(MD_BLOCKTYPE type, void *detail, void *ud) {
    (void)detail;
    Builder *b = ud;
    if (type == MD_BLOCK_UL || type == MD_BLOCK_OL) b->list_depth--;
    if (type == MD_BLOCK_QUOTE) b->in_quote = false;
    if (type == MD_BLOCK_P || type == MD_BLOCK_H || type == MD_BLOCK_CODE || type == MD_BLOCK_LI ||
        type == MD_BLOCK_TH || type == MD_BLOCK_TD)
        b->cur = -1;
    return 0;
}

static unsigned span_style(MD_SPANTYPE t) {
    switch (t) {
    case MD_SPAN_EM: return STYLE_EM;
    case MD_SPAN_STRONG: return STYLE_STRONG;
    case MD_SPAN_CODE: return STYLE_CODE;
    case MD_SPAN_A: return STYLE_LINK;
    default: return 0;
    }
}

static int enter_span(MD_SPANTYPE t, void *detail, void *ud) {
    (void)detail;
    ((Builder *)ud)->style |= span_style(t);
    return 0;
}

static int leave_span(MD_SPANTYPE t, void *detail, void *ud) {
    (void)detail;
    ((Builder *)ud)->style &= ~span_style(t);
    return 0;
}

static int on_text(MD_TEXTTYPE t, const MD_CHAR *text, MD_SIZE n, void *ud) {
    Builder *b = ud;
    switch (t) {
    case MD_TEXT_SOFTBR: add_text(b, " ", 1, b->style); break;
    case MD_TEXT_BR: add_text(b, "\n", 1, b->style); break;
    case MD_TEXT_NULLCHAR: break;
    case MD_TEXT_ENTITY: {
        const char *rep = !strncmp(text, "&amp;", n) ? "&" : !strncmp(text, "&lt;", n) ? "<"
                        : !strncmp(text, "&gt;", n) ? ">" : !strncmp(text, "&quot;", n) ? "\"" : NULL;
        if (rep) add_text(b, rep, strlen(rep), b->style);
        else add_text(b, text, n, b->style);
        break;
    }
    default: add_text(b, text, n, b->style); break;
    }
    return 0;
}

static bool split_lines(Lesson *l, Err *e) {
    int n = 1;
    for (const char *c = l->source; *c; c++) n += *c == '\n';
    l->lines = calloc((size_t)n + 1, sizeof *l->lines);
    if (!l->lines) return err_code(e, ERR_MEMORY, "out of memory");
    const char *s = l->source;
    for (l->n_lines = 0; l->n_lines < n; l->n_lines++) {
        size_t len = strcspn(s, "\n");
        l->lines[l->n_lines] = malloc(len + 1);
        if (!l->lines[l->n_lines]) return err_code(e, ERR_MEMORY, "out of memory");
        memcpy(l->lines[l->n_lines], s, len);
        l->lines[l->n_lines][len] = '\0';
        s += strcspn(s, "\n");
        if (*s) s++;
    }
    return true;
}

bool lesson_setup_parse(LessonSetup *s, const Lesson *l, int first, int last, Err *e);

// The fenced blocks a lesson reads; every other tag is shown, not run.
static const char *const cell_tags[] = {"program", "lesson", "question", "steps"};
enum { N_CELL_TAGS = (int)(sizeof cell_tags / sizeof cell_tags[0]) };

// A `question` block: parsed, and tied to the cell after it (the one whose narration holds it).
static bool add_question(Lesson *l, int block, int first, int last, Err *e) {
    Question *nq = realloc(l->questions, sizeof *nq * (size_t)(l->n_questions + 1));
    if (!nq) return err_code(e, ERR_MEMORY, "out of memory");
    l->questions = nq;
    Question *q = &l->questions[l->n_questions];
    if (!question_parse(q, l->path, l->lines, first, last, e)) return false;
    q->block = block, q->cell = l->n_cells;
    l->n_questions++;
    return true;
}

// A `steps` block: parsed; its section is found once every block is known (attach_sections).
static bool add_attachment(Lesson *l, int block, int first, int last, Err *e) {
    Attachment *na = realloc(l->attachments, sizeof *na * (size_t)(l->n_attachments + 1));
    if (!na) return err_code(e, ERR_MEMORY, "out of memory");
    l->attachments = na;
    Attachment *a = &l->attachments[l->n_attachments];
    if (!attach_parse(a, l->path, l->lines, first, last, e)) return false;
    a->block = block;
    l->n_attachments++;
    return true;
}

static bool is_cell(const RichBlock *b) { return b->kind == RB_CODE && !strcmp(b->lang, "program"); }

// Each `steps` block's section: from the heading above it to the next heading or program cell,
// marked as attached so that no cell's narration or card shows it.
static bool attach_sections(Lesson *l, Err *e) {
    for (int k = 0; k < l->n_attachments; k++) {
        Attachment *a = &l->attachments[k];
        int begin = a->block;
        while (begin > 0 && l->blocks[begin].kind != RB_HEADING && !is_cell(&l->blocks[begin - 1])) begin--;
        if (l->blocks[begin].kind != RB_HEADING || l->blocks[begin].level < 2)
            return err_set(e, "%s:%d: a `steps` block stands under the heading (##) of the section it attaches; "
                              "this one has none above it since the last program cell", l->path, a->line);
        int end = a->block + 1;
        while (end < l->n_blocks && l->blocks[end].kind != RB_HEADING && !is_cell(&l->blocks[end])) end++;
        for (int i = begin; i < end; i++) {
            if (l->blocks[i].attachment != NOT_ATTACHED)
                return err_set(e, "%s:%d: a second `steps` block in one section (the first is at line %d); "
                                  "put its words on the first one's lines", l->path, a->line,
                               l->attachments[l->blocks[i].attachment].line);
            l->blocks[i].attachment = k;
        }
        a->begin = begin, a->end = end;
    }
    return true;
}

// Collects the program cells and parses their lines as one program.
static bool build_program(Lesson *l, Err *e) {
    SourceLine *lines = calloc((size_t)l->n_lines + 1, sizeof *lines);
    if (!lines) return err_code(e, ERR_MEMORY, "out of memory");
    int n = 0;
    bool ok = true, setup_seen = false;
    for (int i = 0; i < l->n_blocks && ok; i++) {
        RichBlock *r = &l->blocks[i];
        if (r->kind != RB_CODE || r->line == 0) continue;
        int first = r->line, last = first - 1;
        for (int k = 0; k < r->n_spans; k++)
            for (const char *c = r->spans[k].text; *c; c++) last += *c == '\n';
        if (!strcmp(r->lang, "lesson")) {
            if (setup_seen) ok = err_set(e, "%s:%d: a second `lesson` block; a lesson has one", l->path, first);
            else ok = lesson_setup_parse(&l->setup, l, first, last, e);
            setup_seen = true;
            continue;
        }
        if (!strcmp(r->lang, "question")) {
            ok = add_question(l, i, first, last, e);
            continue;
        }
        if (!strcmp(r->lang, "steps")) {
            ok = add_attachment(l, i, first, last, e);
            continue;
        }
        const char *near = err_closest(r->lang, cell_tags, N_CELL_TAGS), *cased = NULL;
        for (int t = 0; t < N_CELL_TAGS && !cased; t++)
            if (!strcasecmp(r->lang, cell_tags[t])) cased = cell_tags[t];
        const bool exact = !strcmp(r->lang, "program");
        if (!exact && (near || cased))
            ok = err_set(e, "%s:%d: a code block tagged `%s`: did you mean `%s`? (only `program`, `lesson`, "
                         "`question` and `steps` blocks are read, in lower case; docs/lessons.md)", l->path,
                         first > 1 ? first - 1 : first, r->lang, near ? near : cased);
        if (!ok || strcmp(r->lang, "program") != 0) continue;
        Cell *nc = realloc(l->cells, sizeof *nc * (size_t)(l->n_cells + 1));
        if (!nc) ok = err_code(e, ERR_MEMORY, "out of memory");
        else {
            l->cells = nc;
            l->cells[l->n_cells++] = (Cell){i, first, last};
            for (int ln = first; ln <= last && ln <= l->n_lines; ln++)
                lines[n++] = (SourceLine){ln, l->lines[ln - 1]};
        }
    }
    for (int k = 0; k < l->n_questions; k++)
        if (l->questions[k].cell >= l->n_cells) l->questions[k].cell = -1;
    if (ok && l->n_cells == 0)
        ok = err_set(e, "%s: no program cells (fenced code blocks tagged `program`)", l->path);
    ok = ok && attach_sections(l, e) && program_parse(&l->program, l->path, lines, n, e);
    free(lines);
    return ok;
}

// Copies text with every line ending made "\n": Markdown (md4c) also ends a line at "\r\n" and
// at a lone "\r", and the lesson's own line numbers must count the same lines.
static void copy_lines(char *dst, const char *src) {
    for (; *src; src++) {
        if (*src == '\r' && src[1] == '\n') continue;
        *dst++ = *src == '\r' ? '\n' : *src;
    }
    *dst = '\0';
}

// Whether a fence's info string (from s) names a block a lesson reads (cell_tags).
static bool cell_tag(const char *s) {
    while (*s == ' ') s++;
    for (int k = 0; k < N_CELL_TAGS; k++) {
        const size_t n = strlen(cell_tags[k]);
        if (!strncmp(s, cell_tags[k], n) && (!s[n] || s[n] == ' ')) return true;
    }
    return false;
}

// A code fence that is never closed runs to the end of the file in Markdown, swallowing every
// cell after it: an error naming the line where it opened. A fence is three or more ` or ~ after
// at most three spaces; it closes at a line of at least as many of the same, and nothing else.
// A cell's fence still open where another cell's fence opens was left unclosed there (the next
// cell's closing line would close it, and the prose between would be read as code).
static bool fences_closed(const Lesson *l, Err *e) {
    int open_line = 0, open_len = 0;
    char open_ch = 0;
    bool open_cell = false;
    for (int ln = 1; ln <= l->n_lines; ln++) {
        const char *s = l->lines[ln - 1];
        int ind = 0;
        while (s[ind] == ' ' && ind < 4) ind++;
        if (ind > 3 || (s[ind] != '`' && s[ind] != '~')) continue;
        int k = ind;
        while (s[k] == s[ind]) k++;
        if (k - ind < 3) continue;
        if (!open_line) {
            open_line = ln, open_len = k - ind, open_ch = s[ind], open_cell = cell_tag(s + k);
            continue;
        }
        int rest = k;
        while (s[rest] == ' ' || s[rest] == '\t') rest++;
        if (s[ind] == open_ch && k - ind >= open_len && !s[rest]) open_line = 0;
        else if (open_cell && s[ind] == open_ch && k - ind >= open_len && cell_tag(s + k))
            return err_set(e, "%s:%d: this code fence is not closed before line %d opens another cell: add a line of "
                           "%d %c after its code", l->path, open_line, ln, open_len, open_ch);
    }
    return !open_line || err_set(e, "%s:%d: this code fence is never closed: add a line of %d %c after its code", l->path,
                                 open_line, open_len, open_ch);
}

bool lesson_parse(Lesson *l, const char *path, const char *text, Err *e) {
    memset(l, 0, sizeof *l);
    l->path = malloc(strlen(path) + 1);
    l->source = malloc(strlen(text) + 1);
    if (!l->path || !l->source) return lesson_free(l), err_code(e, ERR_MEMORY, "out of memory");
    strcpy(l->path, path);
    copy_lines(l->source, text);
    l->setup.max_len = 32;
    if (!split_lines(l, e) || !fences_closed(l, e)) return lesson_free(l), false;
    Builder b = {.l = l, .doc = l->source, .doc_len = strlen(l->source), .cur = -1};
    MD_PARSER parser = {0, MD_FLAG_NOHTML | MD_FLAG_STRIKETHROUGH | MD_FLAG_TABLES, enter_block, leave_block,
                        enter_span, leave_span, on_text, NULL, NULL};
    if (md_parse(l->source, (MD_SIZE)b.doc_len, &parser, &b) != 0 || b.oom) {
        lesson_free(l);
        return err_set(e, "%s: the Markdown could not be read", path);
    }
    for (int i = 0; i < l->n_blocks; i++)
        if (l->blocks[i].kind == RB_HEADING && l->blocks[i].n_spans) {
            snprintf(l->title, sizeof l->title, "%s", l->blocks[i].spans[0].text);
            break;
        }
    if (!build_program(l, e)) {
        lesson_free(l);
        return false;
    }
    return true;
}

bool lesson_load(Lesson *l, const char *path, Err *e) {
    char *buf;
    size_t n;
    if (!file_read_all(path, "the lesson", &buf, &n, e)) return false;
    if (n > LESSON_MAX_BYTES) {
        free(buf);
        return err_set(e, "%s: %zu bytes, more than a lesson may have (%d MB)", path, n, LESSON_MAX_BYTES >> 20);
    }
    buf[n] = '\0';
    if (strlen(buf) != n) {
        free(buf);
        return err_set(e, "%s: not a text file (it holds a NUL byte)", path);
    }
    bool ok = lesson_parse(l, path, buf, e);
    free(buf);
    return ok;
}

void lesson_free(Lesson *l) {
    for (int i = 0; i < l->n_blocks; i++) {
        for (int k = 0; k < l->blocks[i].n_spans; k++) free(l->blocks[i].spans[k].text);
        free(l->blocks[i].spans);
    }
    for (int i = 0; i < l->n_lines; i++) free(l->lines[i]);
    free(l->lines);
    free(l->blocks);
    free(l->cells);
    free(l->questions);
    free(l->attachments);
    free(l->path);
    free(l->source);
    program_free(&l->program);
    memset(l, 0, sizeof *l);
}

int lesson_cell_of_line(const Lesson *l, int line) {
    for (int c = 0; c < l->n_cells; c++)
        if (line >= l->cells[c].first_line && line <= l->cells[c].last_line) return c;
    return -1;
}

void lesson_narration(const Lesson *l, int cell, int *begin, int *end) {
    if (cell < 0 || cell >= l->n_cells) {
        *begin = *end = 0;
        return;
    }
    *end = l->cells[cell].block;
    *begin = cell > 0 ? l->cells[cell - 1].block + 1 : 0;
}
