// lesson.h: lessons are literate programs: Markdown narration around program cells.
//
// A lesson file is Markdown (parsed with md4c). Fenced code blocks tagged `program` are
// program cells; read in order, they make one program (see program.h), so a block or a loop
// may open in one cell and close in a later one, with prose between. One block tagged
// `lesson` sets the lesson up, one `key: value` a line:
//
//   model: PATH            weights (.safetensors), relative to the lesson file; or
//   model: random          fresh weights from `config:` and `seed:`
//   config: d_model=64 nhead=4 num_encoder_layers=2 ...   (any names the program uses)
//   seed: 7
//   vocab: chars           random models: a character vocabulary (printable ASCII)
//   input: the cat sat     the source text (or `src_ids: 5,6,7`)
//   target: ...            teacher forcing with this target (or `tgt_ids:`); default greedy
//   max_len: 12            greedy decoding: the most tokens to generate
//   correct: forward-pass.md   a mistake's correct program (that lesson's program, this setup)
//   correct_model: PATH    ... run on these weights instead (a mistake trained into its own model)
//
// Blocks tagged `question` ask the class a question at a stage (question.h).
//
// The narration of a stage is the section a `steps` block attaches to it (attach.h), else the
// prose just before the cell that holds its line (parts.h).
// docs/lessons.md is the reference for teachers: every op, statement and setup key.
#ifndef STEPFORMER_LESSON_H
#define STEPFORMER_LESSON_H

#include "model.h"
#include "load.h"

// The largest lesson file read (a lesson is text; the course's longest is a few tens of kB).
enum { LESSON_MAX_BYTES = 4 << 20 };
#include "program.h"
#include "attach.h"
#include "question.h"
#include "sample.h"

enum { NOT_ATTACHED = -1 };  // a block in the cells' and cards' narration, not in an attached section

enum { STYLE_EM = 1, STYLE_STRONG = 2, STYLE_CODE = 4, STYLE_LINK = 8 };

typedef struct {
    char *text;
    unsigned style;  // STYLE_* bits
} Span;

// A Markdown table is a run of RB_TABLE_CELL blocks, row by row (row 0 the header row); a
// table starts at a cell of row 0, column 0.
typedef enum { RB_PARA, RB_HEADING, RB_CODE, RB_LIST_ITEM, RB_QUOTE, RB_RULE, RB_TABLE_CELL, RB_COUNT } RichKind;

typedef struct {
    RichKind kind;
    int level;    // heading level 1-6; list nesting depth (1 = top)
    int number;   // ordered list item number, 0 for a bullet
    int line;     // source line where the block starts
    int row, col; // table cells: the row (0: the header) and the column
    int attachment; // the Attachment whose section holds it (attach.h), or NOT_ATTACHED
    char lang[16];  // code blocks: the info string's first word
    Span *spans;
    int n_spans;
} RichBlock;

typedef struct {
    int block;              // index of its RichBlock
    int first_line, last_line;  // source lines of the code (inclusive)
} Cell;

typedef struct {
    bool model_random;
    char model_path[512];  // resolved against the lesson's folder; empty if none
    char config[512];      // the `config:` text ("" if none)
    int config_line;       // where it stands
    unsigned long long seed;
    bool vocab_chars;
    char input[512], src_ids[512], target[512], tgt_ids[512];
    int max_len;
    char corrupt[512];     // the Patch view's corrupted input, the same length as input ("" if none)
    char correct[512];     // a mistake's correct program: a lesson file, resolved ("" if none)
    char correct_model[512];  // the model the correct program runs on, resolved ("": this lesson's)
    DecodeChoice choice;   // temperature, top_k, top_p, sample_seed, beam: how it generates (greedy)
} LessonSetup;

typedef struct {
    char *path;
    char *source;     // the whole file
    char **lines;     // [n_lines] the source split into lines (line k at lines[k-1])
    int n_lines;
    char title[128];  // the first heading
    LessonSetup setup;
    RichBlock *blocks;
    int n_blocks;
    Cell *cells;
    int n_cells;
    Question *questions;  // the `question` blocks (question.h), in the order they stand
    int n_questions;
    Attachment *attachments;  // the `steps` blocks (attach.h), in the order they stand
    int n_attachments;
    Program program;
} Lesson;

// The keys a `lesson` block accepts (lesson_setup.c parses each), lesson_setup_n_keys of them.
extern const char *const lesson_setup_keys[];
extern const int lesson_setup_n_keys;

// Parses a lesson from its text; `path` names it in messages and anchors relative paths.
bool lesson_parse(Lesson *l, const char *path, const char *text, Err *e);
bool lesson_load(Lesson *l, const char *path, Err *e);
void lesson_free(Lesson *l);

// The cell holding a program line, or -1.
int lesson_cell_of_line(const Lesson *l, int line);
// The narration before cell c: blocks [*begin, *end).
void lesson_narration(const Lesson *l, int cell, int *begin, int *end);

// What a random model starts from when its lesson's config leaves a name out: d_model 64,
// 4 heads, 2+2 layers, d_ff 128, vocabulary 99, 64 positions (weak defaults).
ModelConfig lesson_small_config(void);

#endif
