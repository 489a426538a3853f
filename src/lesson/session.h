// session.h: one lesson (or model) opened with its inputs and a live interpreter; what the
// command line and the window both work on.
#ifndef STEPFORMER_SESSION_H
#define STEPFORMER_SESSION_H

#include "interp.h"
#include "lesson.h"

typedef struct {
    const char *lesson_path;   // a lesson file; NULL for the standard lesson of the model
    const char *builtin_lesson;  // or a lesson built into the program ("forward-pass.md")
    const char *program_path;  // --program: the lesson whose program (and narration) runs; the
                               // lesson_path's setup (model, input, config) still applies
    const char *model_path;    // weights; overrides the lesson's `model:`
    const char *config;        // --config "k=v ...": overrides nothing, contradicts nothing
    char flags[256];           // the same from --nhead, --eos, ... ("nhead=4 eos_id=3")
    const char *input;         // source text; overrides the lesson's
    const char *src_ids;       // "3,4,5"; overrides input
    const char *target;        // target text: teacher forcing with [bos] + its tokens
    const char *tgt_ids;       // "2,7,9": teacher forcing with exactly these ids
    bool greedy;               // ignore the lesson's target: decode greedily
    bool force_prompt;         // a decoder-only program: one teacher-forced pass over the prompt
                               // (logits for each of its positions) instead of generating
    bool score_last;           // patching (session_open_scored): a decoder-only program reads its
                               // input and then the target as one text, one pass over all but
                               // its last token, which is the token scored
    int max_len;               // 0: the lesson's (or 32)
    DecodeChoice choice;       // sampling or beam search (sample.h): all of it when has_choice,
    bool has_choice;           // else the fields in choice_fields over the lesson's (its
    unsigned choice_fields;    // temperature, top_k, ... keys); CHOICE_* bits
    bool cached;               // generate with the cached decoder (rows.h) even if the program
                               // does not ask for it: the same bits, less work
    long long trace_mb;        // --trace-mb: the trace's budget in MB (RunSpec.trace_budget);
                               // 0: trace_budget_default_mb(), raised for a pass that needs
                               // more; negative: none
    bool widen_weights;        // --widen-weights: hold an F16 or BF16 file's matrices as float32
                               // too (by default they stay 2 bytes a number: model_place)
    struct StReads *later;     // NULL, or where the model's reads are listed instead of done
                               // (safetensors.h: StReads): the session opens with its model
                               // placed but not read; run nothing until they are done and finished
    Model *adopt;              // NULL, or a model opened before on this spec's model and
                               // configuration (the session it was in closed): taken over, moved
                               // out of *adopt, instead of read again
} SessionSpec;

// Once open, a Session must stay where it is: its interpreter points into it (the program,
// the model, the inputs). Open a new one in place rather than copying one in.
typedef struct {
    Lesson lesson;
    Model model;
    Interp *it;
    RunSpec run;
    Packs packs;       // the model's linear weights packed for the GEMM, for every pass (run.packs)
    float *src, *tgt;  // [max_positions] each, what run points at
    char input_text[512];
    bool own_input;  // the source is the lesson's own (its questions, which may quote it, apply)
} Session;

bool session_open(Session *s, const SessionSpec *spec, Err *e);
void session_close(Session *s);
// The same, its model kept: moved into *out (the caller's to free, or to hand to another session
// on it with SessionSpec.adopt).
void session_close_keeping(Session *s, Model *out);

// A session on random weights for `cfg` with S source and T target ids drawn from `seed`
// (teacher forcing), on the standard lesson (or `program`, a lesson file, when not NULL): what
// the benchmarks run.
bool session_open_random(Session *s, const ModelConfig *cfg, const char *program, uint64_t seed, int S, int T,
                         Err *e);
// The same on a built-in lesson (`builtin`: "gpt2.md") configured in its own names (`config`:
// "n_layer=12 ..."): the weights are those `stepformer init --program lessons/BUILTIN --config
// CONFIG --seed SEED` writes.
bool session_open_random_text(Session *s, const char *builtin, const char *config, uint64_t seed, int S, int T, Err *e);
// The configuration sources of a spec and a lesson, highest precedence first (`cfg_text` and
// `lesson_from` are buffers the spec points into).
void session_conf_spec(ConfSpec *cs, const SessionSpec *spec, const Lesson *l, char *lesson_from, size_t n);

// A pass that scores one token, for activation patching (probe.h): the spec opened, and for a
// program with a decoder the target fed without its last token, which becomes *token (read at
// the last row); for a classifier, spec->target names the class (its number or its name). Runs
// the pass to its end.
bool session_open_scored(Session *s, const SessionSpec *spec, int *token, Err *e);

enum { CHOICE_TEMPERATURE = 1, CHOICE_TOP_K = 2, CHOICE_TOP_P = 4, CHOICE_SEED = 8, CHOICE_BEAM = 16 };
// How a session generates: the spec's whole choice, or the lesson's with the fields the spec
// gives (a --seed alone keeps the lesson's temperature).
DecodeChoice session_decode_choice(const SessionSpec *spec, const LessonSetup *ls);

// The vocabulary the input text is read with: the source's, or a decoder-only program's
// target vocabulary (its prompt is the start of its target).
const Vocab *session_source_vocab(const Session *s);

// New source text: tokenised, then the pass re-run from the first stage it affects.
// On error nothing changes. Returns the first affected stage in *first.
bool session_set_input(Session *s, const char *text, int *first, Err *e);

// Another way to choose each generated token (sample.h: greedy, sampling or beam search): the
// pass re-runs from the first stage the choice changes (*first). A beam of another width needs
// a new interpreter (its hypotheses are the batch's rows), made here on the same inputs with the
// same pieces switched off. A teacher-forced pass, or a program with no decoder, chooses no
// tokens: an error. On error nothing changes.
bool session_set_choice(Session *s, const DecodeChoice *c, int *first, Err *e);

// The lessons built into the program: the standard post-norm and pre-norm programs.
const char *session_builtin_lesson(const char *name, const char **path);
// The standard lesson for a model: pre-norm or post-norm.
const char *session_standard_lesson(const ModelConfig *c);

#endif
