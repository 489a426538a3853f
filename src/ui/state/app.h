// app.h: the window's state, its read-only queries and its plain mutators (the state floor).
//
// The App owns the session (model, lesson, interpreter) and the view state (which stage is
// on screen, which head, zoom, scale, theme). Views receive it as const and draw; the features'
// hooks and the app's dispatcher change it, in response to commands (command.h).
#ifndef STEPFORMER_APP_H
#define STEPFORMER_APP_H

#include "against.h"
#include "back_pass.h"
#include "course.h"
#include "gradcheck.h"
#include "parts.h"
#include "probe.h"
#include "session.h"
#include "train_job.h"
#include "ui.h"
#include "quiz_state.h"

typedef enum { VIEW_STAGE, VIEW_ATTENTION, VIEW_DECODE, VIEW_PE, VIEW_TRAIN, VIEW_COMPARE, VIEW_PATCH, VIEW_COUNT } ViewKind;
extern const char *const view_names[VIEW_COUNT];

// The positional-encoding explorer's settings and its own small trace.
typedef enum { PE_D_MODEL, PE_POSITIONS, PE_BASE, PE_DIM, PE_POSITION, PE_PARAM_COUNT } PeParam;
extern const char *const pe_param_names[PE_PARAM_COUNT];

// What the lesson's model does for positions, for the view's first line. The explorer shows the
// sinusoidal formula, except for a learned table (GPT-2's wpe), which it shows itself; for RoPE
// it starts on the model's head width and rope_theta, whose table holds the angles RoPE turns by.
// Marian's table (sinusoid_halves) is shown beside the paper's: the same numbers, the columns in
// another order.
typedef enum { PE_SOURCE_NONE, PE_SOURCE_LEARNED, PE_SOURCE_STORED, PE_SOURCE_COMPUTED, PE_SOURCE_OTHER, PE_SOURCE_ROPE,
               PE_SOURCE_HALVES } PeSource;

typedef struct {
    int d_model, positions, base, dim, position;
    PeParam selected;
    PeSource source;  // the lesson's model's positions (pe_from_program)
    char about[400];  // one sentence on them
    char learned[STAGE_ID_MAX];  // PE_SOURCE_LEARNED: the weight shown (its rows: the positions);
                                 // PE_SOURCE_HALVES: Marian's stored table, shown beside the formula's
    Program program;  // the explorer's program: the table and its similarity matrix
    Interp *it;       // its trace (NULL until built)
    unsigned generation;  // changes with every rebuild (heatmap cache key)
} PeExplorer;

// A stage's output copied aside (C) to compare with what is on screen later, even after another
// lesson has been opened.
typedef struct {
    float *data;          // [shape] (owned), NULL when nothing is pinned
    Shape shape;
    TensorKind kind;
    char stage_id[STAGE_ID_MAX];
    char label[200];      // "lesson title: stage id"
    char sub[400];        // "pinned, input 'hello': lesson title", under its map
    unsigned serial;      // changes with every pin (heatmap cache key)
    bool automatic;       // made by switching a piece off (X, M, O), not by C
    // The words that labelled it when pinned (app_pin.c): n_row_labels for its rows, then
    // n_col_labels for its columns, then, for token ids, n_id_labels tokens, one an id.
    const char **labels;  // [n_row_labels + n_col_labels + n_id_labels] into label_text (owned)
    char *label_text;     // the strings (owned)
    int n_row_labels, n_col_labels, n_id_labels;
} Pin;

// What the session was opened with, its strings owned here: the backward pass re-opens a greedy
// lesson teacher-forced on the answer it wrote (app_backward.c).
enum { OPENED_TEXTS = 9 };
typedef struct {
    SessionSpec spec;
    char text[OPENED_TEXTS][1024];  // what spec's strings point at
} OpenedSpec;

// The cards before the first stage and after the last (view_card.c): the lesson's opening and
// closing narration, drawn large in the centre.
typedef enum { CARD_NONE, CARD_OPENING, CARD_CLOSING, CARD_COUNT } CardKind;
extern const char *const card_names[CARD_COUNT];

typedef struct App {
    Session session;
    OpenedSpec opened;
    bool loaded;              // session holds a lesson and a trace
    char source[600];         // what was opened, for the title bar
    int cursor;               // the stage on screen
    bool warm;                // app_warm_next has not yet readied the stage after it
    CardKind card;            // or a card in front of it (Left on the first stage, Right on the last)
    ViewKind view;
    int head;                 // the head drawn large
    bool all_heads;           // attention view: the grid of every head
    float scale;              // +/- : multiplies every size
    bool contrast;            // the high-contrast presenter theme
    bool fullscreen, help;
    bool playing;
    int play_ms;              // Space: one stage every play_ms
    double next_tick;
    bool editing;             // E: the input line is being edited
    bool edit_fresh;          // nothing typed yet: the first key replaces the old sentence
    char edit[512];
    char error[640];          // shown on screen until the next successful action
    char notice[600];         // a passing message ("saved shot.png"), shown until notice_until
    double notice_until;
    ZoomBox zoom;
    bool dragging;
    int drag_x, drag_y;
    PeExplorer pe;
    Pin pin;                  // C: the stage kept aside for the Compare view
    char before[256];         // the output before anything was switched off (X, M, O)
    Course course;            // the lessons of the folder the window was opened on
    int lesson_at;            // the open lesson's place in it (-1: not one of them)
    bool lesson_list;         // L: the lesson list is open
    int lesson_pick;          // the row chosen in it
    bool lesson_failed[COURSE_MAX];  // lessons that could not be opened (marked in the list)
    // What waits to be opened until its files are here (in the browser a lesson's model is
    // fetched when the lesson opens); app_tick opens it once they are.
    struct {
        bool on;
        SessionSpec spec;
        int k;            // its place in the course, or -1
        double progress;  // how much of its files has arrived, 0-1 (the progress bar)
    } waiting;
    // A session open with its model placed but its weights still being read into place (the
    // browser reads a model's files by range: platform_reads_later). Not loaded until they are
    // all in and finished (st_reads_finish); nothing runs on it meanwhile.
    struct {
        bool on;
        StReads reads;
        SessionSpec spec;
        int k;            // its place in the course, or -1
        double progress;  // the fraction of the bytes read, 0-1
    } reading;
    int scroll[SCROLL_COUNT]; // the lesson panel: narration offset (pixels), kernel offset (lines)
    TrainJob *train;          // the training view's worker (owned here, never by a view)
    Task train_task;          // the task it trains next
    TrainSnapshot train_snap; // what the worker last published, copied once a frame
    // The backward pass (B, or Right past the last stage), built from the pass on screen.
    struct {
        BackPass pass;
        bool built;
        unsigned generation;  // the a->generation it was built for
        int step;             // the step on screen (pass.steps), or -1: the forward pass
        bool values;          // D: the forward tensors instead of their gradients
        GradCheck check;      // G: the last gradient check, shown while the cursor stays
        int check_stage;      // on this stage (-1: none shown)
        bool check_back;      // made in the backward pass (else in the forward one)
        int mistake;          // W: a learner's wrong formula the pass runs (a BackwardMistake; 0: none)
        int mistake_step;     // the first step it changes a number at (-1: none), for W's notice and J
        char mistake_what[STAGE_ID_MAX + 16];  // what it changes there: "dL/d ...masked"
    } back;
    // The Patch view (app_probe.c): the lesson's clean and corrupted runs, patched piece by piece.
    struct {
        Session run[2];       // clean (the lesson's input), corrupted (its `corrupt:`)
        bool open;
        int token;            // the token scored at the last row
        PatchSweep *resid, *heads;
        Lens *lens;
        char lesson[1024];    // the lesson it was built for
        char why[400];        // why there is nothing to show, or ""
        int pick_row, pick_col;  // a clicked cell of the resid sweep (-1: none), and its patched pass:
        bool pick_heads;
        double picked_logit;
        int picked_top;       // the token the patched pass then predicts at the last row
    } probe;
    // A mistake lesson's correct program (its `correct:`), on the same model and input, matched
    // stage by stage for the Compare view and J (app_against.c).
    struct {
        Session run;
        Against match;
        bool open;
        unsigned generation;  // the a->generation it was built for
        char lesson[1024];    // the lesson it was built for
        char why[400];        // why there is none, or ""
    } against;
    Quiz quiz;                // the lesson's questions (app_quiz.c)
    CommandQueue queue;       // what features asked to follow, applied once a frame (app_drain)
    unsigned generation;      // changes whenever the trace changes (heatmap cache key)
    unsigned model_serial;    // changes whenever another model is opened (weight images' key)
    bool quit;
} App;

// ---- app_state.c: plain changes, with no drawing; none calls up ----
// The App's state before anything is opened.
void app_defaults(App *a);
// Opens what the spec names, or fails with e (export: no fallback).
bool app_open(App *a, const SessionSpec *spec, Err *e);
// Replaces the session with what the spec names, reading it once; if that cannot open, the
// window is left empty (the caller shows the error), never on the old model.
bool app_reopen(App *a, const SessionSpec *spec, Err *e);
// The same for other inputs on the open model and configuration: the model is kept, not read
// again (in the page a model folder's files are not held to read again).
bool app_reopen_inputs(App *a, const SessionSpec *spec, Err *e);
// After a session opened: the title, the positions explorer on its model.
void app_loaded(App *a, const SessionSpec *spec);
void app_set_error(App *a, const char *msg);
// A passing message at the foot of the window.
void app_notify(App *a, const char *msg);
// Runs the pass until stage i has run (or it ends).
void app_run_to(App *a, int i);
// Moves the cursor to stage i, running the pass up to it if needed.
void app_goto(App *a, int i);
// After the pass changed: to the stage called `id` if the new pass has it (running it that far),
// else to stage `fallback` (or the last there is).
void app_goto_id(App *a, const char *id, int fallback);
// While the window is idle, once for each stage on screen: the stage Right steps to gets its
// output back if the trace's budget let it go (recomputed, the same bits), so that step draws
// without waiting for it. True if there was such a stage to ready.
bool app_warm_next(App *a);
// Drops the backward pass built from the pass on screen (it reads the session's model).
void app_backward_free(App *a);

// ---- app_scroll.c: the wheel and a drag, on the heatmap or the lesson panel as last drawn ----
// Scrolls a part of the lesson panel by `pages` pages (as last drawn).
void app_scroll(App *a, const Ui *ui, ScrollId id, int pages);
void app_wheel(App *a, const Ui *ui, int x, int y, int dy);
void app_drag(App *a, const Ui *ui, int x, int y);

// ---- the positional-encoding explorer (pe.c) ----
void pe_init(PeExplorer *pe, int d_model);
// Reads the lesson's program for what its model adds to its tokens (source, about) and starts
// the settings from its own table when it builds one (its base and width; at least the usual
// 50 positions).
void pe_from_program(PeExplorer *pe, const Interp *it, const Model *m);
// Re-runs the explorer's program for its current settings; clamps them to sensible ranges.
bool pe_rebuild(PeExplorer *pe, const Model *m, Err *e);
// Changes parameter p by one step (dir = +1 / -1) and rebuilds.
bool pe_adjust(PeExplorer *pe, const Model *m, PeParam p, int dir, Err *e);
void pe_free(PeExplorer *pe);

// ---- queries.c: read-only questions of the App ----
// The view that suits stage i: attention maps the attention view, the generator the decoding
// view, the rest the stage view.
ViewKind app_view_for(const App *a, int i);
// The backward step on screen, or NULL in the forward pass (or when the trace changed since it
// was built).
const BackStep *app_back_step(const App *a);
// The narration the lesson panel shows with the step on screen (parts.h: the section attached to
// it, else its cell's); an empty range when nothing is loaded.
BlockRange app_narration(const App *a);
// After a move: the narration's scroll back to its top when the narration on screen is no longer
// `was` (app_narration before the move), kept when it is the same.
void app_narration_moved(App *a, BlockRange was, int scrolled);
// Whether the timeline has the backward steps to show (built for the pass on screen).
bool app_back_ready(const App *a);
// The backward view of a forward stage on screen: whether views draw gradients for it.
bool app_back_gradients(const App *a);
// The match of stage i of the pass on screen with a mistake lesson's correct program, or NULL
// when there is none (no `correct:`, or not prepared for this pass).
const StageMatch *app_against_at(const App *a, int i);
// "pinned, input 'hello': lesson title" (when = "pinned"), for the map of the lesson on screen.
void app_pin_input(const App *a, const char *when, char *s, size_t n);
// A token as shown on screen: a space is drawn as an open box so that it can be seen.
const char *decode_shown(const App *a, int id);
// Labels for the rows of weight `name` (its full name) with `rows` rows, when they are indexed by
// token (the embeddings, the generator's weights): the vocabulary's tokens, a space shown as a
// visible mark. Returns how many (0 when its rows are not the vocabulary's, or more than max).
int weight_row_labels(const App *a, const char *name, int rows, const char **labels, int max);
// For the stage that picks each generated token (a decoding round's argmax) while sampling or beam
// search chose the token instead (Z): what did, in one sentence, naming the token it appended
// ("This pass samples (Z): round 3 drew '<eos>' ..."); the formula that chose into formula.
// False for every other stage, and in greedy decoding or teacher forcing.
bool app_choice_note(const App *a, int stage, char *s, size_t n, const char **formula);

// ---- blocks (blocks.c): the rows of the map, and what PgUp / PgDn jump between ----
typedef struct {
    int first, last;  // stage range [first, last]
    Part part;
    int layer;        // valid when has_layer
    bool has_layer;
    int round;        // the decoding round (0 outside greedy decoding)
    char label[40];   // "Self-attention", "Add & Norm", "Feed-forward", ...
    char section[32]; // the program's top block it is in ("encoder", "classifier", ...)
} BlockRow;

// The block stage i belongs to.
BlockRow block_of(const App *a, int i);
// Whether two blocks stand in one layer (of one part, in one round): the map unfolds the layer
// of the stage on screen and folds the others into one row.
bool block_same_layer(const BlockRow *x, const BlockRow *y);
// The rows of one pass as the map shows them: the encoder, then the decoder round `round`
// (its rows only when greedy; the one decoder pass under teacher forcing). Returns the count.
int block_rows(const App *a, int round, BlockRow *rows, int max);

// ---- helpers the views share ----
// A shorter name for display: an input stage without the prefix it shares with stage `from`
// ("encoder.layers.0.norm1" seen from "encoder.layers.0.linear1" is "norm1"); a weight by its
// last two parts ("linear1.weight") (queries.c).
const char *stage_short_name(const char *name, const char *from, bool weight);
// Labels for the columns of a generator's output: the target vocabulary's tokens (a space shown
// as a visible mark). Returns how many (0 when cols is not the vocabulary's size).
int vocab_column_labels(const App *a, int cols, const char **labels, int max);
// The token strings that label axis `axis` of stage i's output (NULL if it has none).
// Writes at most max labels; returns how many.
int stage_axis_labels(const App *a, int stage, int axis, const char **labels, int max);
// The panel title of a view that shows one row of the batch (the Stage and Attention views):
// "view: what", or, when the pass runs more than one row (beam search's hypotheses), which row
// it shows instead: "Stage: hypothesis row 1 of 4 (Decoding shows all 4)".
void batch_title(const App *a, const char *view, const char *what, char *s, size_t n);
// The attention stage to show for the cursor: the [H, Tq, Tk] stage itself, or the softmax
// weights of the attention block the cursor is in (once the cursor has passed them), or the last
// weights passed. -1 if the cursor has passed none (never a map the cursor has not reached).
int attention_stage_for(const App *a, int cursor);
// The stage with `role` (a StageRole) of the attention whose softmax is stage `weights`, or -1.
int attention_step(const App *a, int weights, int role);
// What the attention whose softmax is stage `weights` is: cross-attention when its queries and
// keys come from different inputs, masked when its mask is causal, else self-attention.
typedef enum { ATT_SELF, ATT_MASKED, ATT_CROSS, ATT_COUNT } AttentionKind;
extern const char *const attention_kind_names[ATT_COUNT];  // "Self-attention", ...
AttentionKind attention_kind(const App *a, int weights);
// For an attention softmax: head h's slice of the stage its mask made, whose -inf cells are the
// keys the softmax was not allowed to see (draw them masked). Else NULL.
const float *attention_mask_for(const App *a, int stage, int h);

#endif
