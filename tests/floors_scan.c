// floors_scan.c: reads a source tree for test_floors.c (floors.h). Not a C parser: enough of C
// to find, per file, the headers it includes, the functions it defines and declares at top
// level, the function-like macros it defines, and the names it calls inside function bodies.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "floors.h"

static const char *const keywords[] = {
    "if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "default", "goto",
    "break", "continue", "typedef", "struct", "union", "enum", "static", "extern", "inline",
    "const", "volatile", "register", "restrict", "auto", "signed", "unsigned", "void", "char",
    "short", "int", "long", "float", "double", "_Bool", "bool", "_Alignof", "_Alignas",
    "alignof", "_Static_assert", "static_assert", "_Generic", "_Noreturn", "_Thread_local",
    "__attribute__", "__typeof__", "typeof", "asm", "__asm__", "__extension__", "_Pragma",
};

bool floors_is_keyword(const char *name) {
    for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
        if (!strcmp(name, keywords[i])) return true;
    return false;
}

void floors_add_fact(Facts *fs, const char *name, int len, int line, bool is_static) {
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? 2 * fs->cap : 16;
        fs->v = realloc(fs->v, sizeof *fs->v * (size_t)fs->cap);
        if (!fs->v) abort();
    }
    Fact *f = &fs->v[fs->n++];
    snprintf(f->name, sizeof f->name, "%.*s", len, name);
    f->line = line, f->is_static = is_static;
}

static bool ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Blanks s[from, to) but its newlines.
static void blank(char *s, size_t from, size_t to) {
    for (size_t k = from; k < to; k++)
        if (s[k] != '\n') s[k] = ' ';
}

// The end of the string or char literal opening at s[i] (just past its closing quote).
static size_t literal_end(const char *s, size_t i) {
    const char q = s[i];
    for (i++; s[i] && s[i] != q && s[i] != '\n'; i++)
        if (s[i] == '\\' && s[i + 1]) i++;
    return s[i] == q ? i + 1 : i;
}

// What a directive's text (comments gone) says: #include "x" (its base name), #define NAME(.
static void directive(const char *d, int line, SrcFile *f) {
    d += strspn(d, " \t#");
    d += strspn(d, " \t");
    if (!strncmp(d, "include", 7)) {
        const char *q = strchr(d, '"'), *end = q ? strchr(q + 1, '"') : NULL;
        if (!end) return;  // <system.h>
        const char *base = q + 1;
        for (const char *c = q + 1; c < end; c++)
            if (*c == '/') base = c + 1;
        floors_add_fact(&f->includes, base, (int)(end - base), line, false);
    } else if (!strncmp(d, "define", 6) && (d[6] == ' ' || d[6] == '\t')) {
        d += 6 + strspn(d + 6, " \t");
        int n = 0;
        while (ident_char(d[n])) n++;
        if (n && d[n] == '(') floors_add_fact(&f->macros, d, n, line, false);
    }
}

// The directive starting at s[i] ('#' first on its line): noted, then blanked with its
// continuation lines and any comment in it. Returns where it ends; *line counts its newlines.
static size_t take_directive(char *s, size_t i, int *line, SrcFile *f) {
    char d[512];
    size_t n = 0, j = i;
    const int first = *line;
    while (s[j] && s[j] != '\n') {
        if (s[j] == '\\' && s[j + 1] == '\n') {
            j += 2, (*line)++;
        } else if (s[j] == '/' && s[j + 1] == '/') {
            while (s[j] && s[j] != '\n') j++;
        } else if (s[j] == '/' && s[j + 1] == '*') {
            for (j += 2; s[j] && !(s[j] == '*' && s[j + 1] == '/'); j++) *line += s[j] == '\n';
            j += s[j] ? 2 : 0;
        } else {
            size_t end = s[j] == '"' || s[j] == '\'' ? literal_end(s, j) : j + 1;
            for (; j < end; j++)
                if (n + 1 < sizeof d) d[n++] = s[j];
        }
    }
    d[n] = 0;
    directive(d, first, f);
    blank(s, i, j);
    return j;
}

// Blanks comments, literals and preprocessor lines (newlines kept, so lines keep their numbers).
static void strip(char *s, SrcFile *f) {
    int line = 1;
    bool line_start = true;  // only blanks since the last newline
    for (size_t i = 0; s[i];) {
        size_t end = i + 1;
        if (s[i] == '\n') {
            line++, line_start = true;
        } else if (s[i] == '/' && s[i + 1] == '/') {
            for (end = i; s[end] && s[end] != '\n'; end++) {}
            blank(s, i, end);
        } else if (s[i] == '/' && s[i + 1] == '*') {
            for (end = i + 2; s[end] && !(s[end] == '*' && s[end + 1] == '/'); end++) line += s[end] == '\n';
            end += s[end] ? 2 : 0;
            blank(s, i, end);
        } else if (s[i] == '"' || s[i] == '\'') {
            end = literal_end(s, i);
            blank(s, i, end), line_start = false;
        } else if (s[i] == '#' && line_start) {
            end = take_directive(s, i, &line, f);
        } else if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\f') {
            line_start = false;
        }
        i = end;
    }
}

// A token of the blanked text: 'i' an identifier, 'n' a number, 'a' the arrow ->, else the
// punctuation character itself.
typedef struct {
    char kind;
    const char *p;
    int len, line;
} Tok;

static Tok *tokenize(const char *s, int *n_out) {
    int n = 0, cap = 1024, line = 1;
    Tok *t = malloc(sizeof *t * (size_t)cap);
    for (size_t i = 0; t && s[i];) {
        if (s[i] == '\n') line++;
        if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f') {
            i++;
            continue;
        }
        if (n == cap) t = realloc(t, sizeof *t * (size_t)(cap *= 2));
        if (!t) break;
        Tok *k = &t[n++];
        size_t len = 1;
        k->kind = s[i];
        if (ident_char(s[i])) {  // identifiers, and numbers with their suffixes and exponents
            k->kind = s[i] >= '0' && s[i] <= '9' ? 'n' : 'i';
            while (ident_char(s[i + len]) || (k->kind == 'n' && s[i + len] == '.')) len++;
        } else if (s[i] == '-' && s[i + 1] == '>') {
            k->kind = 'a', len = 2;
        }
        k->p = s + i, k->len = (int)len, k->line = line;
        i += len;
    }
    if (!t) abort();
    *n_out = n;
    return t;
}

static bool tok_is(const Tok *t, const char *word) {
    return t->kind == 'i' && (int)strlen(word) == t->len && !strncmp(t->p, word, (size_t)t->len);
}

static bool tok_keyword(const Tok *t) {
    char name[FLOORS_NAME];
    snprintf(name, sizeof name, "%.*s", t->len, t->p);
    return floors_is_keyword(name);
}

// The name a top-level declaration t[0, n) declares as a function: the first identifier
// outside parentheses followed by '(' (keywords aside); -1 for none, a typedef, or a variable
// (an '=' comes first).
static int declared_name(const Tok *t, int n) {
    int depth = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].kind == '(') depth++;
        else if (t[i].kind == ')') depth--;
        else if (depth == 0 && t[i].kind == '=') return -1;
        else if (tok_is(&t[i], "typedef")) return -1;
        else if (depth == 0 && t[i].kind == 'i' && i + 1 < n && t[i + 1].kind == '(' && !tok_keyword(&t[i])) return i;
    }
    return -1;
}

static bool has_static(const Tok *t, int n) {
    for (int i = 0; i < n; i++)
        if (tok_is(&t[i], "static")) return true;
    return false;
}

// The '}' closing the '{' at t[i] (n - 1 if it is never closed).
static int closing(const Tok *t, int n, int i) {
    for (int depth = 0; i < n; i++) {
        depth += t[i].kind == '{';
        depth -= t[i].kind == '}';
        if (depth == 0) return i;
    }
    return n - 1;
}

// Calls inside a function body t[from, to): name( that is no keyword nor a member (. or ->).
static void take_calls(const Tok *t, int from, int to, SrcFile *f) {
    for (int i = from; i < to; i++)
        if (t[i].kind == 'i' && t[i + 1].kind == '(' && !tok_keyword(&t[i]) && t[i - 1].kind != '.' &&
            t[i - 1].kind != 'a')
            floors_add_fact(&f->calls, t[i].p, t[i].len, t[i].line, false);
}

static bool is_file_macro(const Tok *t, const SrcFile *f) {
    for (int k = 0; k < f->macros.n; k++)
        if (tok_is(t, f->macros.v[k].name)) return true;
    return false;
}

// Past the top-level invocations of the file's own function-like macros from t[start] on, which
// take no ';' (DEFINE_ROW_KERNEL(row_avx2, ...) defining functions): where the declaration starts.
static int past_invocations(const Tok *t, int n, int start, const SrcFile *f) {
    while (start + 1 < n && t[start].kind == 'i' && t[start + 1].kind == '(' && is_file_macro(&t[start], f)) {
        int depth = 0, i = start + 1;
        for (; i < n; i++) {
            depth += t[i].kind == '(';
            depth -= t[i].kind == ')';
            if (depth == 0) break;
        }
        start = i + 1;
    }
    return start;
}

void floors_scan_text(char *text, SrcFile *f) {
    strip(text, f);
    int n;
    Tok *t = tokenize(text, &n);
    int start = 0;  // the current top-level declaration's first token
    for (int i = 0; i < n; i++) {
        start = past_invocations(t, n, start, f);
        if (i < start) i = start;
        if (i >= n) break;
        if (t[i].kind == ';') {
            const int name = declared_name(t + start, i - start);
            if (name >= 0)
                floors_add_fact(&f->protos, t[start + name].p, t[start + name].len, t[start + name].line,
                                has_static(t + start, name));
            start = i + 1;
        } else if (t[i].kind == '{') {
            const int name = declared_name(t + start, i - start), end = closing(t, n, i);
            if (name >= 0 && t[i - 1].kind == ')') {  // a function's body
                floors_add_fact(&f->defs, t[start + name].p, t[start + name].len, t[start + name].line,
                                has_static(t + start, name));
                take_calls(t, i + 1, end, f);
            }
            i = end, start = end + 1;
        }
    }
    free(t);
}

static char *read_all(const char *path) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    size_t n = 0, cap = 1 << 16;
    char *s = malloc(cap);
    for (size_t got; s && (got = fread(s + n, 1, cap - n - 1, fp)) > 0;)
        if ((n += got) + 1 == cap) s = realloc(s, cap *= 2);
    fclose(fp);
    if (s) s[n] = 0;
    return s;
}

// The floor whose folder holds `path` (the longest such folder), or -1.
static int floor_of(const char *path, const FloorPlan *plan) {
    const char *slash = strrchr(path, '/');
    const size_t dir = slash ? (size_t)(slash - path) : 0;
    int best = -1;
    for (int k = 0; k < plan->n_floors; k++) {
        const size_t len = strlen(plan->floors[k].folder);
        if (len <= dir && !strncmp(path, plan->floors[k].folder, len) && (path[len] == '/') &&
            (best < 0 || len > strlen(plan->floors[best].folder)))
            best = k;
    }
    return best;
}

static bool add_file(const char *root, const char *rel, const FloorPlan *plan, Tree *t) {
    char full[2 * FLOORS_PATH];
    snprintf(full, sizeof full, "%s/%s", root, rel);
    char *text = read_all(full);
    if (!text) return fprintf(stderr, "test_floors: cannot read %s\n", full), false;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->f = realloc(t->f, sizeof *t->f * (size_t)t->cap);
        if (!t->f) abort();
    }
    SrcFile *f = &t->f[t->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", rel);
    const char *slash = strrchr(f->path, '/');
    f->base = slash ? slash + 1 : f->path;
    f->header = strlen(rel) > 2 && !strcmp(rel + strlen(rel) - 2, ".h");
    f->floor = floor_of(f->path, plan);
    floors_scan_text(text, f);
    free(text);
    return true;
}

// Every .c and .h under root/rel (rel "" for the root itself).
static bool walk(const char *root, const char *rel, const FloorPlan *plan, Tree *t) {
    char dir[2 * FLOORS_PATH];
    snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) return fprintf(stderr, "test_floors: cannot open %s\n", dir), false;
    bool ok = true;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char sub[FLOORS_PATH], full[3 * FLOORS_PATH];
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat st;
        if (stat(full, &st) != 0) continue;
        const size_t len = strlen(sub);
        if (S_ISDIR(st.st_mode)) ok = walk(root, sub, plan, t);
        else if (len > 2 && (!strcmp(sub + len - 2, ".c") || !strcmp(sub + len - 2, ".h"))) ok = add_file(root, sub, plan, t);
    }
    closedir(d);
    return ok;
}

static int by_path(const void *a, const void *b) { return strcmp(((const SrcFile *)a)->path, ((const SrcFile *)b)->path); }

bool floors_read_tree(const char *root, const FloorPlan *plan, Tree *t) {
    memset(t, 0, sizeof *t);
    if (!walk(root, "", plan, t)) return floors_free_tree(t), false;
    qsort(t->f, (size_t)t->n, sizeof *t->f, by_path);
    for (int i = 0; i < t->n; i++) {  // base points into path, which moved
        const char *slash = strrchr(t->f[i].path, '/');
        t->f[i].base = slash ? slash + 1 : t->f[i].path;
    }
    return true;
}

void floors_free_tree(Tree *t) {
    for (int i = 0; i < t->n; i++) {
        SrcFile *f = &t->f[i];
        free(f->includes.v), free(f->defs.v), free(f->protos.v), free(f->calls.v), free(f->macros.v);
    }
    free(t->f);
    memset(t, 0, sizeof *t);
}
