// cli.h: the command line's modes and the option parsing they share.
#ifndef STEPFORMER_CLI_H
#define STEPFORMER_CLI_H

#include <stdio.h>

#include "session.h"
#include "window.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

// Options by bit, so each command can say which it takes.
enum {
    OPT_MODEL = 1 << 0, OPT_INPUT = 1 << 1, OPT_SRC_IDS = 1 << 2, OPT_TARGET = 1 << 3,
    OPT_TGT_IDS = 1 << 4, OPT_MAX_LEN = 1 << 5, OPT_JSON = 1 << 6, OPT_DUMP = 1 << 7,
    OPT_TO = 1 << 8, OPT_PRINT = 1 << 9, OPT_PROGRAM = 1 << 10, OPT_MODEL_FLAGS = 1 << 11,
    OPT_REPEAT = 1 << 12, OPT_INIT = 1 << 13, OPT_WINDOW = 1 << 14, OPT_EXPORT = 1 << 15,
    OPT_TRAIN = 1 << 16, OPT_TOKEN_FLAGS = 1 << 17,  // --bos --eos --pad
    OPT_GRADS = 1 << 18,  // --labels --grads --gradcheck --backward-mistake --lens
    OPT_PROBE = 1 << 19,  // patch: --clean --corrupt --sweep --stage --head --position
    OPT_AGAINST = 1 << 20,  // lesson: --against-correct
    OPT_DECODE = 1 << 21,   // --temperature --top-k --top-p --seed --beam: how a decoder generates
    OPT_EXAMPLES = 1 << 22, // examples: --task --count --seed
    OPT_TOKENIZE = 1 << 23, // tokenize: --text
    OPT_TRACE_MB = 1 << 24, // --trace-mb, --widen-weights: the memory the trace and the weights take
};
// What every command that runs a model takes.
enum { MODEL_OPTS = OPT_MODEL | OPT_PROGRAM | OPT_MODEL_FLAGS | OPT_TOKEN_FLAGS | OPT_TRACE_MB };

// train's settings, as given (0 or NULL: not given).
typedef struct {
    const char *task, *init, *schedule;
    const char *data;  // --task text: the file
    int block;         // --task text: characters a window
    bool shuffle;      // --task text: shuffle the lines first
    const char *tokenizer;  // --task text: read the text as this tokenizer.json's tokens
    const char *dtype;      // --task text --tokenizer: how model.safetensors stores the weights
    int steps, batch, warmup, d_model, layers, enc_layers, dec_layers, d_ff, eval_every;
    bool has_warmup, has_eval_every;
    float lr, label_smoothing, stop_at;
    bool has_label_smoothing;
} TrainFlags;

typedef struct {
    SessionSpec spec;
    bool json;
    const char *dump, *to, *print;
    const char *labels, *grads, *gradcheck;  // trace: the loss's labels, where its gradients go, what to check
    const char *backward_mistake;            // trace: a learner's wrong formula to run (back_mistakes.h)
    bool lens;                               // trace: the logit lens
    bool questions;                          // lesson: print the questions with their answers
    bool presenter;                          // window: a lesson's questions graded only when revealed
    const char *clean, *corrupt, *sweep, *stage;  // patch
    int head, position;                      // patch: 0 when not given, else 1-based head, 0-based + 1 position
    int repeat;
    const char *out;  // init, export, train (--out)
    long seed;
    bool vocab_chars;
    const char *record, *replay;  // window
    int width, height;            // --size WxH
    bool against;                 // lesson: beside its correct program (`correct:`)
    bool headless, ui_bench, train_bench, scale_bench, no_peer;
    const char *only;             // bench: the paths to run ("forward,greedy")
    const char *view;             // export: a view name
    const char *stages;           // export: the stages to draw ("a,b"), or NULL: every one
    bool backward;                // export: the backward pass's steps too
    bool whole_window;            // export --html / --pdf: pictures of the whole window
    const char *html, *pdf;       // export: the handout's folder (--html); --pdf (refused: print the page)
    bool has_seed;
    bool has_temperature, has_top_p;  // given (their values are in spec.choice)
    bool no_cache;                    // run: the plain decoder, every round whole
    int count;                        // examples: how many lines
    const char *text;                 // tokenize: the text
    TrainFlags train;
    const char *positional[4];  // arguments that are not options
    int n_positional;
    char lesson_file[1024];     // the lesson argument as found (cli_lesson_arg)
} CliOptions;

// Parses argv (argv[0] is the command name) allowing the OPT_* bits in `allowed`.
// Returns -1 to go on, or an exit code (help printed: 0; bad usage: 2, message printed).
int cli_parse(int argc, char **argv, unsigned allowed, const char *usage, CliOptions *o);

// Generating commands: the decoding choice the flags give (--seed included), checked against
// what needs no model; false with a message (exit 1) for --temperature <= 0.
bool cli_take_choice(CliOptions *o, const char *cmd);

// session_open, then the model's note (ignored tensors, unused configuration) on stderr.
bool cli_open_session(Session *s, const SessionSpec *spec, Err *e);
// Prints "stepformer: <msg>" on stderr and returns EXIT_FAIL.
int cli_fail(const Err *e);
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// A usage error unless --model was given and nothing else stands alone; -1 to go on.
int cli_need_model(const CliOptions *o, const char *cmd);

// Prints one stage's tensor: shape, and rows labelled with tokens where they have them.
void cli_print_tensor(FILE *out, const Interp *it, int stage);
// One line per stage: index, id, shape, op, source line.
void cli_print_stage_line(FILE *out, const Interp *it, int stage);
// The stage a user means by `id` (--to, --print): the stage of that id, or, when greedy
// decoding named its rounds' stages step.K.ID, the last round's (said on stderr). -1 when
// there is none, with a message naming `what` and the ids that end in `id`, or the rounds.
int cli_find_stage(const Interp *it, const char *id, const char *what, Err *e);

int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_patch(int argc, char **argv);
int cmd_stages(int argc, char **argv);
int cmd_lesson(int argc, char **argv);
// The lesson in the terminal, stage by stage (cmd names the command in usage errors).
int cli_run_lesson_headless(const char *cmd, const CliOptions *o);
// `lesson FILE --questions`: each question with its stage and the answer the trace gives.
int cli_print_questions(const CliOptions *o);
int cmd_bench(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_window(int argc, char **argv);
int cmd_export(int argc, char **argv);
// export --pdf FILE (cmd_pdf.c): the handout printed by WeasyPrint; its page stays in
// o->html_dir when --html gave one. Returns the exit status.
int export_pdf(ExportOptions *o, const char *pdf);
int cmd_train(int argc, char **argv);
int cmd_examples(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
// cli_window.c: the window on a lesson or model (spec), honouring --record/--replay/--size.
int cli_open_window(const CliOptions *o);
// The folder of lessons the window switches between: the lesson's own, else the course among
// stepformer's data (data.h). Returns dir.
const char *cli_course_dir(const char *lesson, char *dir, size_t n);
// The lesson argument (a file, or a course lesson's bare name: `lesson backprop`) into
// o->lesson_file; a lesson not found says which is nearest ("did you mean lessons/backprop.md?")
// on stderr and returns false.
bool cli_lesson_arg(CliOptions *o, const char *arg);

// --dtype's word (f32, f16, bf16, any case) into *out; else a usage error (its exit code in *code).
bool cli_dtype(const char *cmd, const char *arg, StDtype *out, int *code);

#endif
