// test_floors.c: the source tree's floors (issue 41). Every folder of src/ is on a floor of
// the table below; a file may include headers from, and call functions defined on, its own
// floor and the floors below it, never one above nor one beside it (views and features, cli
// and web). Asserts, over every .c and .h (floors_rules.c says how each is found):
//   - each file's folder is on a floor (a file directly in src/ui/ is not);
//   - no two files share a base name (the include directories are flat);
//   - no #include "x.h" reaches up or sideways (a header not in the tree is the system's or a
//     library's; embedded.h is in src/lesson, only the embedded.c it declares is generated, in
//     the build folder, and read by no one here);
//   - no call reaches up or sideways to a function defined there;
//   - no function is defined, not static, in two files (but the desktop's side and the
//     browser's of the platform, which are never linked together; and main);
//   - a function a header declares is defined on the header's floor;
//   - within a floor no .c files call each other round in a circle.
// It first proves it can fail: planted trees in a temporary folder, one with each kind of
// violation (each must be reported at its file and line, and nothing else), one clean with the
// traps a light scanner could fall into (nothing reported). Then the real tree (argv[1], by
// default the repository's src/), every violation printed as FILE:LINE: KIND: WHAT.
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "floors.h"

#ifndef SRC_ROOT
#define SRC_ROOT "src"
#endif

// The floors, from the bottom. Folders relative to src/; a floor holds its sub-folders too.
static const Floor floors[] = {
    {"tensor", 0},
    {"model", 1},
    {"language", 2},
    {"lesson", 3},
    {"train", 4},
    {"ui/platform", 5},
    {"ui/core", 6},
    {"ui/widgets", 7},
    {"ui/state", 8},
    {"ui/views", 9},  // side by side with features
    {"ui/features", 9},
    {"ui/app", 10},
    {"cli", 11},  // side by side with web
    {"web", 11},
};
// Files never linked together (CMakeLists.txt builds one of each pair): they define the same names.
static const char *const alternatives[][2] = {
    {"platform_desktop.c", "platform_web.c"},
    {"fonts_fc.c", "fonts_web.c"},
};
static const FloorPlan plan = {floors, sizeof floors / sizeof *floors, alternatives,
                               sizeof alternatives / sizeof *alternatives};

typedef struct {
    const char *path, *text;
} Planted;

typedef struct {
    ViolationKind kind;
    const char *file;
    int line;
    const char *names;  // what the report must name besides
} Expected;

// A tree with one of each violation, and where each must be reported.
static const Planted bad_tree[] = {
    {"tensor/a.c", "// a.c: the bottom floor, reaching the top\n#include \"x.h\"\nint a_fn(void) { return 0; }\n"},
    {"ui/app/x.h", "int x_fn(void);\n"},
    {"model/b.c", "int lesson_c(void);\n#define LONG(x) \\\n    ((x) + 1)\n/* two\n   lines */\n"
                  "int b_fn(void) {\n    return lesson_c();\n}\n"},
    {"lesson/c.c", "int lesson_c(void) { return 1; }\n"},
    {"ui/views/v.c", "int feat_f(void);\nint v_fn(void) { return feat_f(); }\n"},
    {"ui/views/v2.c", "#include \"f.h\"\n"},
    {"ui/features/f.c", "int feat_f(void) { return 2; }\n"},
    {"ui/features/f.h", "int feat_f(void);\n"},
    {"ui/views/same.h", "\n"},
    {"ui/widgets/same.h", "\n"},
    {"language/p.c", "int q_fn(void);\nint p_fn(void) { return q_fn(); }\n"},
    {"language/q.c", "int p_fn(void);\n\nint q_fn(void) {\n    return p_fn() + 1;\n}\n"},
    {"model/decl.h", "// decl.h\nint moved(void);\n"},
    {"tensor/moved.c", "int moved(void) { return 3; }\n"},
    {"ui/flat.c", "int flat(void) { return 4; }\n"},
    {"loose.h", "\n"},
    {"train/d1.c", "int twice(void) { return 1; }\n"},
    {"train/d2.c", "\nint twice(void) { return 2; }\n"},
    {"cli/k.c", "#include \"w.h\"\n"},
    {"web/w.h", "\n"},
};
static const Expected bad_found[] = {
    {V_INCLUDE, "tensor/a.c", 2, "ui/app/x.h, up"},
    {V_CALL, "model/b.c", 7, "lesson_c, defined at lesson/c.c:1, up"},
    {V_CALL, "ui/views/v.c", 2, "feat_f, defined at ui/features/f.c:1, sideways"},
    {V_INCLUDE, "ui/views/v2.c", 1, "ui/features/f.h, sideways"},
    {V_SAME_NAME, "ui/widgets/same.h", 1, "ui/views/same.h"},
    {V_CIRCLE, "language/p.c", 2, "language/q.c:4 calls p_fn"},
    {V_DECLARED, "model/decl.h", 2, "moved on model, defined at tensor/moved.c:1"},
    {V_NO_FLOOR, "ui/flat.c", 1, "ui/ is no floor's folder"},
    {V_NO_FLOOR, "loose.h", 1, "./ is no floor's folder"},
    {V_DUPLICATE, "train/d1.c", 1, "twice is defined here and in train/d2.c:2"},
    {V_INCLUDE, "cli/k.c", 1, "web/w.h, sideways"},
};

// A clean tree with the traps: calls and includes in comments and strings, a function-like
// macro named as a function above, a member called as a function above, static helpers of
// one name in two files, a header's static inline, a definition split over lines, an #if's
// two definitions of one function, alternative files, two mains, calls on one floor without
// a circle, a view calling a view, the app calling both views and features.
static const Planted clean_tree[] = {
    {"tensor/t.h", "// t.h: an inline helper and a macro\n#define TWICE(x) ((x) * 2)\n"
                   "static inline int t_inline(int x) { return x + 1; }\nint t_fn(int x);\n"},
    {"tensor/t.c", "#include \"t.h\"\n#include <stdio.h>\n#include \"cJSON.h\"\nstatic int helper(void) { return 1; }\n"
                   "int t_fn(int x) {\n    if (x) return t_inline(x) + helper();\n    return (int)sizeof(x);\n}\n"},
    {"model/m.c", "#include \"t.h\"\n/* lesson_up() and #include \"l.h\" in a comment */\n#define lesson_up(x) (x)\n"
                  "struct S { int (*lesson_fmt)(const char *); };\nstatic int helper(void) { return 2; }\n"
                  "int m_fn(struct S *s) {\n    const char *msg = \"lesson_fmt(\\\"x\\\") #include \\\"l.h\\\"\";\n"
                  "    char c = '(';\n    (void)c;\n    return s->lesson_fmt(msg) + helper() + t_fn(TWICE(1)) + lesson_up(3);\n}\n"},
    {"lesson/l.h", "int lesson_up(int x);\nint lesson_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));\n"},
    {"lesson/l.c", "#include \"l.h\"\nint lesson_up(int x)\n{\n    return x;\n}\nint lesson_fmt(const char *fmt,\n"
                   "               ...) {\n    return fmt ? lesson_up(1) : 0;\n}\n"},
    {"lesson/alt.c", "#ifdef X\nint alt_fn(void) { return 1; }\n#else\nint alt_fn(void) { return 2; }\n#endif\n"},
    {"ui/views/v.c", "int v2_fn(void);\nint t_fn(int x);\nint v_fn(void) { return v2_fn() + t_fn(1); }\n"},
    {"ui/views/v2.c", "int v2_fn(void) { return 0; }\n"},
    {"ui/features/f.c", "#include \"t.h\"\nint f_fn(void) { return t_fn(2); }\n"},
    {"ui/platform/platform.h", "int plat_open(void);\n"},
    {"ui/platform/platform_desktop.c", "#include \"platform.h\"\nint plat_open(void) { return 1; }\n"},
    {"ui/platform/platform_web.c", "#include \"platform.h\"\nint plat_open(void) { return 2; }\n"},
    {"ui/app/app.c", "#include \"platform.h\"\nint f_fn(void);\nint v_fn(void);\n"
                     "int app_fn(void) { return plat_open() + f_fn() + v_fn(); }\n"},
    {"cli/main.c", "#include \"l.h\"\nint app_fn(void);\nint main(void) { return lesson_up(0) + app_fn(); }\n"},
    {"web/main_web.c", "int app_fn(void);\nint main(void) { return app_fn(); }\n"},
    {"train/tr.c", "int tr2(void);\nint tr1(void) { return tr2(); }\n"},
    {"train/tr2.c", "static int tr3(void) { return 0; }\nint tr2(void) { return tr3() + tr2(); }\n"},
};

static bool plant(const char *root, const Planted *files, int n) {
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", root, files[i].path);
        for (char *slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
            *slash = 0;
            mkdir(path, 0700);  // exists already: fine
            *slash = '/';
        }
        FILE *f = fopen(path, "w");
        if (!f) return false;
        const bool written = fputs(files[i].text, f) >= 0;
        if (fclose(f) != 0 || !written) return false;
    }
    return true;
}

static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(sub);
        else unlink(sub);
    }
    if (d) closedir(d);
    rmdir(path);
}

static void print_violations(const char *root, const Violations *v) {
    for (int i = 0; i < v->n; i++)
        fprintf(stderr, "%s/%s:%d: %s: %s\n", root, v->v[i].file, v->v[i].line, floors_kind_name(v->v[i].kind),
                v->v[i].what);
}

// The violations of a planted tree (false if it could not be made or read).
static bool check_planted(const Planted *files, int n, Violations *v) {
    const char *tmp = getenv("TMPDIR");
    char root[256];
    snprintf(root, sizeof root, "%s/floors-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) return false;
    Tree t;
    const bool ok = plant(root, files, n) && floors_read_tree(root, &plan, &t);
    if (ok) floors_check(&t, &plan, v), floors_free_tree(&t);
    remove_tree(root);
    return ok;
}

static bool reported(const Violations *v, const Expected *x) {
    for (int i = 0; i < v->n; i++)
        if (v->v[i].kind == x->kind && !strcmp(v->v[i].file, x->file) && v->v[i].line == x->line &&
            strstr(v->v[i].what, x->names))
            return true;
    return false;
}

static void test_planted(void) {
    Violations v = {0};
    const int n_bad = sizeof bad_found / sizeof *bad_found;
    CHECK(check_planted(bad_tree, sizeof bad_tree / sizeof *bad_tree, &v), "planting the bad tree");
    for (int i = 0; i < n_bad; i++)
        CHECK(reported(&v, &bad_found[i]), "planted %s at %s:%d (%s) not reported", floors_kind_name(bad_found[i].kind),
              bad_found[i].file, bad_found[i].line, bad_found[i].names);
    CHECK(v.n == n_bad, "the bad tree: %d violations reported, %d planted", v.n, n_bad);
    if (v.n != n_bad) print_violations("(bad tree)", &v);
    floors_free_violations(&v);

    CHECK(check_planted(clean_tree, sizeof clean_tree / sizeof *clean_tree, &v), "planting the clean tree");
    CHECK(v.n == 0, "the clean tree: %d violations reported", v.n);
    print_violations("(clean tree)", &v);
    floors_free_violations(&v);
}

// The scanner alone: what a file with every kind of fact yields, with its lines.
static void test_scanner(void) {
    char text[] = "#include \"a.h\" // note\n#include <b.h>\n#define M(x) \\\n  f(x)\n"
                  "static int g(int y);\nint h(void) {\n  /* k() */ return g(1) + M(2);\n}\n";
    SrcFile f = {0};
    floors_scan_text(text, &f);
    CHECK(f.includes.n == 1 && !strcmp(f.includes.v[0].name, "a.h") && f.includes.v[0].line == 1, "includes");
    CHECK(f.macros.n == 1 && !strcmp(f.macros.v[0].name, "M") && f.macros.v[0].line == 3, "macros");
    CHECK(f.protos.n == 1 && !strcmp(f.protos.v[0].name, "g") && f.protos.v[0].is_static && f.protos.v[0].line == 5,
          "prototypes");
    CHECK(f.defs.n == 1 && !strcmp(f.defs.v[0].name, "h") && !f.defs.v[0].is_static && f.defs.v[0].line == 6,
          "definitions");
    CHECK(f.calls.n == 2 && !strcmp(f.calls.v[0].name, "g") && f.calls.v[0].line == 7 && !strcmp(f.calls.v[1].name, "M"),
          "calls: %d", f.calls.n);
    free(f.includes.v), free(f.defs.v), free(f.protos.v), free(f.calls.v), free(f.macros.v);
}

int main(int argc, char **argv) {
    test_scanner();
    test_planted();
    const char *root = argc > 1 ? argv[1] : SRC_ROOT;
    Tree t;
    Violations v = {0};
    CHECK(floors_read_tree(root, &plan, &t), "reading %s", root);
    floors_check(&t, &plan, &v);
    print_violations(root, &v);
    CHECK(v.n == 0, "%s: %d violations of the floors in %d files", root, v.n, t.n);
    floors_free_violations(&v);
    floors_free_tree(&t);
    return check_finish("test_floors");
}
