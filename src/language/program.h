// program.h: the architecture as a program.
//
// A program is plain text, one statement a line, `#` starts a comment:
//
//   input src                         a token-id input the run supplies
//   x = op(arg, arg, key=expr)        one kernel call: a stage; its id is the block path + x
//   x = y                             another name for y (no stage)
//   y = f(arg, ...)                   call a def; y names what it returns (no stage itself)
//   block NAME [weights PREFIX]       stage ids inside get NAME. in front; `@w` inside means
//   ...                               the weight PREFIX.w (without `weights`: w as written)
//   end
//   for i in EXPR ... end             repeat with i = 0, 1, ...; {i} in names is replaced
//   def f(a, b) ... return r end      a reusable piece; sees only its parameters and config
//   decode tgt from next ... end      the decoder loop: once with a given target (teacher
//                                     forcing), or greedily: each round appends the last id
//                                     of `next` to tgt, until eos or the length limit;
//                                     `... from next cached`: each greedy round computes
//                                     the new position only, the earlier ones kept (rows.h)
//   output NAME = x                   publishes x under a stable NAME (memory, logits)
//   param @w [d0, d1, ...] INIT        declares a learned weight: its name (under the enclosing
//                                     `weights` prefix, with {i} holes), its shape (expressions
//                                     over configuration names) and how a fresh one starts:
//                                     xavier, normal(STD), uniform(BOUND), zeros, ones,
//                                     sinusoid (the positional table; any layout [P, d],
//                                     [P, 1, d] or [1, P, d])
//   buffer @w [d0, ...] INIT          the same for a fixed tensor saved with the model (a
//                                     positional table): never trained
//   param @w [...] INIT if EXPR       declared only when EXPR is not 0; where it is 0 the
//                                     weight is absent, and an op's last argument naming it
//                                     is left out (nanoGPT's biases with bias=False)
//   default NAME = EXPR               a configuration value for when nothing else sets it
//   tie @a @b ...                     the original shares one tensor under these names (the
//                                     file holds each with the same numbers): when they are
//                                     equal in the model, each name's gradient is the sum of
//                                     all of theirs, as PyTorch gives a shared parameter
//
// Arguments: a tensor name, `@weight.name`, `transpose(name)` (matmul's second argument),
// numbers (reshape's and permute's dimensions), or key=expr attributes. Expressions use
// numbers, + - * / ( ), sqrt/exp/log and configuration names. The configuration is open: a
// program may use any name (d_model, nhead, d_k, num_classes, ...); the values come from
// --config, the lesson's `config:` line, the weights file's metadata, the shapes of declared
// tensors (a dimension written as a single name takes its size from the file) and `default`
// lines, in that order (see conf.h). Every weight an op reads must be declared.
//
// Ops beyond the Transformer's own: reshape(x, d0, d1, ...) reads the same numbers in another
// shape (one dimension may be -1); permute(x, p0, p1, ...) reorders the axes; chunk(x, chunk=k,
// chunks=n) takes piece k of the last axis; max_pool(x[, ids]) and mean_pool(x[, ids]) reduce
// [T, C] to [C] over the positions whose id is not pad. positional_table() builds the sinusoidal
// table: positions= (default max_positions), width= (default d_model), base= (default 10000).
// repeat(x, times=n, axis=a, interleave=1) repeats one axis's entries in place (0: tiles the
// axis); concat(a, b, ..., axis=a) joins up to four tensors along one axis. matmul broadcasts
// its leading axes as torch.matmul does (a side of size 1 serves every index of the other).
// op_info (ops.c) lists every op; docs/lessons.md describes each for teachers.
//
// The expander turns the statement tree into the flat list of stages the interpreter runs.
#ifndef STEPFORMER_PROGRAM_H
#define STEPFORMER_PROGRAM_H

#include "err.h"
#include "model.h"
#include "ops.h"

typedef enum {
    ST_INPUT,   // name
    ST_OUTPUT,  // name = text
    ST_BLOCK,   // name (template), text = weights prefix template or NULL; body
    ST_FOR,     // name = loop variable, text = count expression; body
    ST_DEF,     // name, args = parameters; body
    ST_RETURN,  // text = returned name
    ST_DECODE,  // name = the input it grows, text = the ids tensor it appends from; body
    ST_ASSIGN,  // name = text(args): an op or a def call
    ST_ALIAS,   // name = text
    ST_PARAM,   // name = weight template, args = dims (ARG_EXPR), text = init kind, key of an
                // optional last ARG_KEYWORD "init" = its argument; fixed: a buffer
    ST_DEFAULT, // name = configuration name, text = expression
    ST_TIE,     // args = two or more ARG_WEIGHT names (top level, written out in full); cond: `if EXPR`
    ST_COUNT
} StmtKind;

typedef enum { ARG_TENSOR, ARG_WEIGHT, ARG_TRANSPOSED, ARG_EXPR, ARG_KEYWORD } ArgKind;

typedef struct {
    ArgKind kind;
    char *key;   // ARG_KEYWORD: the attribute name
    char *text;  // the name, weight template or expression
} Arg;

typedef struct Stmt {
    StmtKind kind;
    int line;  // in the source file
    char *name;
    char *text;
    Arg *args;
    int n_args;
    int end;  // block-like statements: index one past the last statement of the body
    bool fixed;  // ST_PARAM: a buffer (saved, never trained)
    char *cond;  // ST_PARAM: `... if EXPR`: declared only where EXPR is not 0 (NULL: always)
    bool in_out; // ST_PARAM: `... in_out`: a linear weight stored [in, out] (GPT-2's Conv1D), not [out, in]
    bool cached; // ST_DECODE: `decode tgt from next cached`, the cached decoder (rows.h)
} Stmt;

// One line of program text and where it stands in its file (lessons interleave prose).
typedef struct {
    int line;
    const char *text;
} SourceLine;

#define PROGRAM_MAX_INPUTS 4
#define PROGRAM_NAME_MAX 47  // characters in a name a program binds (config.json's longest, 32, fits)

typedef struct Program {
    char *file;
    Stmt *stmts;
    int n;
    char *inputs[PROGRAM_MAX_INPUTS];  // declared input names, slot = index
    int n_inputs;
    int decode;  // index of the top-level decode statement, or n when there is none
} Program;

bool program_parse(Program *p, const char *file, const SourceLine *lines, int n, Err *e);
// Splits text into lines numbered from 1 and parses them.
bool program_parse_text(Program *p, const char *file, const char *text, Err *e);
void program_free(Program *p);
// The slot of a declared input, or -1.
int program_input(const Program *p, const char *name);
// Whether the program has a decode loop (an encoder-decoder), or only an encoder.
bool program_has_decoder(const Program *p);
// Whether it is decoder-only (a GPT): a decode loop, and no input but the one the loop grows.
// Its prompt is the run's source ids; greedy decoding continues the prompt instead of [bos].
bool program_decoder_only(const Program *p);
// The statement after statement i, past its body when it has one.
int program_next(const Program *p, int i);
// The top-level def called `name`, or -1.
int program_find_def(const Program *p, const char *name);

// Evaluates an expression; `lookup` supplies names (return false if unknown).
typedef bool (*ExprLookup)(void *ctx, const char *name, double *out);
bool expr_eval(const char *text, ExprLookup lookup, void *ctx, double *out, char *why, int why_n);
// Copies a name template into out, replacing each {expr} with its whole value.
bool expr_interpolate(const char *tpl, ExprLookup lookup, void *ctx, char *out, size_t n, char *why,
                      int why_n);

// ---- expansion ----

// Fills st->where, st->attr_text and st->role from the statement s that made it (roles.c);
// stages[0..n) are the ones before it, whose roles it sets when st is an attention map's
// softmax, which will be stages[n].
void stage_describe(Stage *st, Stage *stages, int n, const Stmt *s);

typedef struct Expander Expander;

typedef struct {
    char name[32];
    int stage;  // index of the stage it names
} ProgramOutput;

Expander *expander_new(const Program *p, const Model *m);
void expander_free(Expander *x);
// Where each input slot's ids sit (floats into its buffer) and how many there are per example,
// for the stages that follow.
void expander_set_input(Expander *x, int slot, int len, size_t offset);
// Expands the statements before the decode statement (all of them if there is none).
bool expand_prelude(Expander *x, Err *e);
// Expands the decode body once. `greedy` puts "step.{step}." in front of its stage ids.
// Sets *next_stage to the stage whose last id is appended after a greedy round.
bool expand_decode(Expander *x, bool greedy, int step, int *next_stage, Err *e);
// Expands what follows the decode statement.
bool expand_rest(Expander *x, Err *e);

const Stage *expander_stages(const Expander *x, int *n);
const ProgramOutput *expander_outputs(const Expander *x, int *n);

#endif
