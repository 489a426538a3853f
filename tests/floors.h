// floors.h: what test_floors.c reads of a source tree (floors_scan.c) and the rules it holds
// the tree to (floors_rules.c). A file's facts are found by a light C scanner: comments,
// string and char literals and preprocessor lines are blanked first (#include "x.h" and
// #define NAME( are noted on the way), then top-level `name(...) {` is a definition,
// top-level `name(...);` a prototype, and `name(` inside a function body a call.
#ifndef STEPFORMER_FLOORS_H
#define STEPFORMER_FLOORS_H

#include <stdbool.h>

enum { FLOORS_NAME = 96, FLOORS_PATH = 256 };

// One floor of the table: a folder under the root ("ui/views"; its sub-folders too) and its
// level. Two floors of one level are side by side: neither may reach the other.
typedef struct {
    const char *folder;
    int level;
} Floor;

// The rules' data: the floors from the bottom, and pairs of files (by base name) that are
// never linked together (the desktop's side and the browser's), so may define the same names.
typedef struct {
    const Floor *floors;
    int n_floors;
    const char *const (*alternatives)[2];
    int n_alternatives;
} FloorPlan;

typedef struct {
    char name[FLOORS_NAME];  // a header's base name, a function's or a macro's name
    int line;
    bool is_static;  // definitions and prototypes
} Fact;

typedef struct {
    Fact *v;
    int n, cap;
} Facts;

typedef struct {
    char path[FLOORS_PATH];  // relative to the root: "tensor/err.c"
    const char *base;        // its base name, inside path
    bool header;
    int floor;  // index into the plan's floors; -1: not on a floor
    Facts includes, defs, protos, calls, macros;  // macros: function-like #defines
} SrcFile;

typedef struct {
    SrcFile *f;
    int n, cap;
} Tree;

typedef enum { V_NO_FLOOR, V_INCLUDE, V_CALL, V_SAME_NAME, V_DUPLICATE, V_DECLARED, V_CIRCLE } ViolationKind;

typedef struct {
    ViolationKind kind;
    char file[FLOORS_PATH];  // relative to the root
    int line;
    char what[1024];
} Violation;

typedef struct {
    Violation *v;
    int n, cap;
} Violations;

// floors_scan.c
// Reads every .c and .h under root (hidden folders skipped) into t, sorted by path, each on
// the floor its folder gives. False (message on stderr) if root cannot be read.
bool floors_read_tree(const char *root, const FloorPlan *plan, Tree *t);
// Scans one file's text (modified: blanked in place) into f's facts.
void floors_scan_text(char *text, SrcFile *f);
void floors_free_tree(Tree *t);
bool floors_is_keyword(const char *name);
void floors_add_fact(Facts *fs, const char *name, int len, int line, bool is_static);

// floors_rules.c
// Every violation of the rules in t, in the order: not on a floor, same base names, includes,
// duplicate definitions, calls, declarations, circles.
void floors_check(const Tree *t, const FloorPlan *plan, Violations *out);
const char *floors_kind_name(ViolationKind k);
void floors_free_violations(Violations *v);

#endif
