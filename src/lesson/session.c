// session.c: opening a lesson or a model with its inputs, and re-running on new input.
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "data.h"
#include "embedded.h"
#include "hub.h"
#include "rng.h"

const char *session_standard_lesson(const ModelConfig *c) {
    return c->norm_first ? "pre-norm.md" : "forward-pass.md";
}

// The built-in copies say where they would be among the data (data.h): a lesson's relative
// model path resolves from there, wherever the binary is.
const char *session_builtin_lesson(const char *name, const char **path) {
    static char where[8][4352];  // one per built-in file, computed once each
    for (int i = 0; i < embedded_file_count; i++)
        if (strcmp(embedded_files[i].name, name) == 0) {
            if (path && i < 8 && data_dir()[0]) {
                if (!where[i][0]) snprintf(where[i], sizeof where[i], "%s/lessons/%s", data_dir(), name);
                *path = where[i];
            } else if (path) {
                *path = embedded_files[i].path;
            }
            return embedded_files[i].text;
        }
    return NULL;
}

DecodeChoice session_decode_choice(const SessionSpec *spec, const LessonSetup *ls) {
    if (spec->has_choice) return spec->choice;
    DecodeChoice c = ls->choice;
    const unsigned f = spec->choice_fields;
    if (f & CHOICE_TEMPERATURE) c.temperature = spec->choice.temperature;
    if (f & CHOICE_TOP_K) c.top_k = spec->choice.top_k;
    if (f & CHOICE_TOP_P) c.top_p = spec->choice.top_p;
    if (f & CHOICE_SEED) c.seed = spec->choice.seed;
    if (f & CHOICE_BEAM) c.beam = spec->choice.beam;
    return c;
}

const Vocab *session_source_vocab(const Session *s) {
    return program_decoder_only(&s->lesson.program) ? &s->model.tgt_vocab : &s->model.src_vocab;
}

static bool open_builtin(Lesson *l, const char *name, Err *e) {
    const char *path;
    const char *text = session_builtin_lesson(name, &path);
    if (!text) return err_set(e, "no built-in lesson '%s'", name);
    return lesson_parse(l, path, text, e);
}

void session_conf_spec(ConfSpec *cs, const SessionSpec *spec, const Lesson *l, char *lesson_from, size_t n) {
    memset(cs, 0, sizeof *cs);
    cs->widen = spec->widen_weights, cs->later = spec->later;
    conf_spec_add(cs, spec->config, "--config", false);
    conf_spec_add(cs, spec->flags[0] ? spec->flags : NULL, "the command-line flags", false);
    // A lesson's config describes its own model: a file given instead brings its own.
    const bool replaced = l && spec->model_path && (l->setup.model_random || l->setup.model_path[0]);
    if (l && l->setup.config[0] && !replaced) {
        snprintf(lesson_from, n, "%s:%d: config", l->path, l->setup.config_line);
        conf_spec_add(cs, l->setup.config, lesson_from, false);
    }
    if (l && l->setup.vocab_chars && !replaced)  // (the sizes as weak defaults: a classifier has no target side)
        conf_spec_add(cs, VOCAB_CHARS_CONFIG, "vocab: chars", true);
}

// Random weights for the lesson's program: its config, over the small defaults.
static bool open_random(Session *s, const ConfSpec *cs, Err *e) {
    const LessonSetup *ls = &s->lesson.setup;
    char defaults[512];
    ModelConfig small = lesson_small_config();
    config_text(&small, defaults, sizeof defaults);
    ConfSpec all = *cs;
    conf_spec_add(&all, defaults, "the small defaults", true);
    if (!model_init_random(&s->model, &s->lesson.program, &all, ls->seed, e)) return false;
    if (ls->vocab_chars) {
        vocab_free(&s->model.src_vocab);
        vocab_free(&s->model.tgt_vocab);
        if (!vocab_chars(&s->model.src_vocab, e) || !vocab_chars(&s->model.tgt_vocab, e)) return false;
        s->model.has_vocab = true;
    }
    return true;
}

// The model the spec hands over (adopt), else the one at path.
static bool load_model(Session *s, const SessionSpec *spec, const char *path, const ConfSpec *cs, Err *e) {
    if (!spec->adopt) return model_load(&s->model, path, &s->lesson.program, cs, e);
    s->model = *spec->adopt;
    memset(spec->adopt, 0, sizeof *spec->adopt);
    return true;
}

static bool open_model(Session *s, const SessionSpec *spec, Err *e) {
    const LessonSetup *ls = &s->lesson.setup;
    char from[600];
    ConfSpec cs;
    session_conf_spec(&cs, spec, &s->lesson, from, sizeof from);
    const char *path = spec->model_path ? spec->model_path : ls->model_path[0] ? ls->model_path : NULL;
    if (path) return load_model(s, spec, path, &cs, e);
    if (!ls->model_random)
        return err_set(e, "%s: the lesson names no model (add `model:` to its lesson block, or "
                       "pass --model FILE)", s->lesson.path);
    return open_random(s, &cs, e);
}

// A hub folder without a lesson: config.json's model_type names the family's program.
static bool open_folder(Session *s, const SessionSpec *spec, Err *e) {
    HubFolder h;
    if (!hub_read_config(&h, spec->model_path, e)) return false;
    const bool ok = open_builtin(&s->lesson, h.family->program, e);
    hub_free(&h);
    char from[600];
    ConfSpec cs;
    session_conf_spec(&cs, spec, NULL, from, sizeof from);
    return ok && load_model(s, spec, spec->model_path, &cs, e);
}

// A model without a lesson: its metadata (or the flags) say which standard program runs it.
static bool open_standard(Session *s, const SessionSpec *spec, Err *e) {
    if (hub_is_folder(spec->model_path)) return open_folder(s, spec, e);
    StFile f;
    if (!st_open(&f, spec->model_path, e)) return false;
    char from[600];
    ConfSpec cs;
    session_conf_spec(&cs, spec, NULL, from, sizeof from);
    const char *nf = st_meta(&f, "norm_first");
    double given;
    const bool pre = conf_spec_get(&cs, "norm_first", &given) ? given == 1 : nf && !strcmp(nf, "true");
    if (!open_builtin(&s->lesson, pre ? "pre-norm.md" : "forward-pass.md", e)) return st_free(&f), false;
    if (spec->adopt) return st_free(&f), load_model(s, spec, spec->model_path, &cs, e);
    return model_from_file(&s->model, &f, spec->model_path, &s->lesson.program, &cs, e);
}

// The target for teacher forcing: given ids, or [bos] + the tokens of the text.
static bool make_target(Session *s, const char *text, const char *ids, Err *e) {
    const Model *m = &s->model;
    const int P = model_max_len(m);
    if (ids) {
        if (!vocab_parse_ids(&m->tgt_vocab, ids, "target", s->tgt, P, &s->run.T, e)) return false;
        // A folder's encoder-decoder (Marian) reads exactly the ids given: the first must be the
        // id its decoding starts from, as Hugging Face's decoder_input_ids begin.
        if (m->family[0] && !program_decoder_only(&s->lesson.program) && m->cfg.bos_id.set && s->run.T > 0 &&
            s->tgt[0] != (float)m->cfg.bos_id.id)
            return err_set(e, "--tgt-ids: the first id is %d, but %s's decoder starts from %d "
                           "(decoder_start_token_id): give it first", (int)s->tgt[0], m->family, m->cfg.bos_id.id);
        return true;
    }
    if (!m->cfg.bos_id.set)
        return err_set(e, "a target text is fed after bos, but the model names no bos_id: pass "
                       "--bos ID or give --tgt-ids");
    s->tgt[0] = (float)m->cfg.bos_id.id;
    int n;
    if (!vocab_encode(&m->tgt_vocab, text, "target", s->tgt + 1, P - 1, &n, e)) return false;
    s->run.T = n + 1;
    return true;
}

// Patching a decoder-only program: the input and the target as one text; the pass reads all
// but its last token, the one scored (session_open_scored).
static bool score_last_inputs(Session *s, const SessionSpec *spec, const Vocab *v, int P, Err *e) {
    const char *input = spec->input ? spec->input : s->lesson.setup.input;
    if (!spec->target || !*spec->target) return err_set(e, "patching needs a target: the token whose score it reads");
    const size_t n = strlen(input) + strlen(spec->target) + 1;
    char *joined = malloc(n);
    if (!joined) return err_code(e, ERR_MEMORY, "out of memory");
    snprintf(joined, n, "%s%s", input, spec->target);
    const bool ok = vocab_encode(v, joined, "prompt", s->src, P, &s->run.S, e);
    free(joined);
    if (!ok) return false;
    if (s->run.S < 2) return err_set(e, "patching needs at least one token before the target's last");
    snprintf(s->input_text, sizeof s->input_text, "%s", input);
    memcpy(s->tgt, s->src, sizeof(float) * (size_t)s->run.S);
    s->run.tgt = s->tgt, s->run.T = s->run.S - 1;
    return true;
}

// The spec's trace budget in bytes (at most SIZE_MAX: a 32-bit size_t holds under 4096 MB); 0,
// none, for a negative trace_mb.
static size_t trace_budget(const SessionSpec *spec) {
    if (spec->trace_mb < 0) return 0;
    const unsigned long long b = (unsigned long long)(spec->trace_mb > 0 ? spec->trace_mb : trace_budget_default_mb()) << 20;
    return b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

static bool make_inputs(Session *s, const SessionSpec *spec, Err *e) {
    const LessonSetup *ls = &s->lesson.setup;
    const Model *m = &s->model;
    const int P = model_max_len(m);
    s->src = calloc((size_t)P + 1, sizeof(float));
    s->tgt = calloc((size_t)P + 1, sizeof(float));
    if (!s->src || !s->tgt) return err_code(e, ERR_MEMORY, "out of memory");
    s->run = (RunSpec){.src = s->src, .max_new = spec->max_len ? spec->max_len : ls->max_len,
                       .pack_weights = true, .packs = &s->packs,  // a session never changes its model's weights
                       .choice = session_decode_choice(spec, ls), .cached = spec->cached,
                       .trace_budget = trace_budget(spec), .trace_budget_given = spec->trace_mb > 0};
    // A lesson's ids are its own model's tokens: a model given in its place (a folder the user
    // brings) tokenizes the lesson's text instead, where the lesson gives one.
    const bool replaced = spec->model_path && (ls->model_random || ls->model_path[0]) && ls->input[0];
    const char *ids = spec->src_ids ? spec->src_ids : spec->input || replaced ? NULL
                    : ls->src_ids[0] ? ls->src_ids : NULL;
    const char *text = spec->input ? spec->input : ls->input;
    const bool gpt = program_decoder_only(&s->lesson.program);
    const Vocab *v = session_source_vocab(s);
    const char *what = gpt ? "prompt" : "source";
    s->own_input = !spec->src_ids && (!spec->input || !strcmp(spec->input, ls->input));
    if (gpt && spec->score_last) return score_last_inputs(s, spec, v, P, e);
    if (ids) {
        if (!vocab_parse_ids(v, ids, what, s->src, P, &s->run.S, e)) return false;
        vocab_decode(v, s->src, s->run.S, s->input_text, sizeof s->input_text);
    } else {
        if (!vocab_encode(v, text, what, s->src, P, &s->run.S, e)) return false;
        snprintf(s->input_text, sizeof s->input_text, "%s", text);
    }
    if (spec->greedy || !program_has_decoder(&s->lesson.program)) return true;  // no decoder: no target
    const char *tids = spec->tgt_ids ? spec->tgt_ids : spec->target ? NULL
                     : ls->tgt_ids[0] ? ls->tgt_ids : NULL;
    const char *ttext = spec->target ? spec->target : ls->target[0] ? ls->target : NULL;
    if (!tids && !ttext && gpt && spec->force_prompt) {  // one pass over the prompt
        memcpy(s->tgt, s->src, sizeof(float) * (size_t)s->run.S);
        s->run.tgt = s->tgt, s->run.T = s->run.S;
        return true;
    }
    if (!tids && !ttext) return true;  // greedy
    s->run.tgt = s->tgt;
    return make_target(s, ttext, tids, e);
}

bool session_open(Session *s, const SessionSpec *spec, Err *e) {
    memset(s, 0, sizeof *s);
    bool ok;
    if (spec->program_path) {
        ok = lesson_load(&s->lesson, spec->program_path, e);
        if (ok && spec->lesson_path) {  // that lesson's setup, this program
            Lesson setup;
            ok = lesson_load(&setup, spec->lesson_path, e);
            if (ok) s->lesson.setup = setup.setup, lesson_free(&setup);
        }
        ok = ok && open_model(s, spec, e);
    } else if (spec->lesson_path) {
        ok = lesson_load(&s->lesson, spec->lesson_path, e) && open_model(s, spec, e);
    } else if (spec->builtin_lesson) {
        ok = open_builtin(&s->lesson, spec->builtin_lesson, e) && open_model(s, spec, e);
    } else {
        if (!spec->model_path) return err_set(e, "give a lesson or a model");
        ok = open_standard(s, spec, e);
    }
    ok = ok && make_inputs(s, spec, e);
    if (ok) {
        s->it = interp_new(&s->lesson.program, &s->model, &s->run, e);
        ok = s->it != NULL;
    }
    if (ok && interp_n_stages(s->it) == 0)  // nothing to step through, show or export
        ok = err_set(e, "%s: the program has no op lines, so there is nothing to run (add a line such as "
                     "x = embedding(src, @weight))", s->lesson.path);
    if (!ok) session_close(s);
    return ok;
}

void session_close_keeping(Session *s, Model *out) {
    interp_free(s->it);  // first: what it holds of the model (widened copies, packs) goes with it
    s->it = NULL;
    *out = s->model;
    memset(&s->model, 0, sizeof s->model);
    session_close(s);
}

void session_close(Session *s) {
    interp_free(s->it);
    packs_free(&s->packs);
    lesson_free(&s->lesson);
    model_free(&s->model);
    free(s->src);
    free(s->tgt);
    memset(s, 0, sizeof *s);
}

bool session_set_input(Session *s, const char *text, int *first, Err *e) {
    const int P = model_max_len(&s->model);
    float *ids = calloc((size_t)P + 1, sizeof(float));
    if (!ids) return err_code(e, ERR_MEMORY, "out of memory");
    int n;
    const bool gpt = program_decoder_only(&s->lesson.program);
    bool ok = vocab_encode(session_source_vocab(s), text, gpt ? "prompt" : "source", ids, P, &n, e);
    if (ok) {
        RunSpec r = s->run;
        r.src = ids, r.S = n;
        ok = interp_set_inputs(s->it, &r, first, e);
        if (ok) {
            memcpy(s->src, ids, sizeof(float) * (size_t)n);
            s->run.S = n;
            snprintf(s->input_text, sizeof s->input_text, "%s", text);
        }
    }
    free(ids);
    return ok;
}

bool session_set_choice(Session *s, const DecodeChoice *c, int *first, Err *e) {
    if (!program_has_decoder(&s->lesson.program))
        return err_set(e, "%s: the program has no decoder, so it generates no tokens to choose", s->lesson.path);
    if (s->run.tgt)
        return err_set(e, "%s: this pass is teacher-forced on its target, so it chooses no tokens: sampling and "
                       "beam search apply when it generates (open the lesson without a target)", s->lesson.path);
    RunSpec r = s->run;
    r.choice = *c;
    const bool same_rows = (c->beam < 2 && s->run.choice.beam < 2) || c->beam == s->run.choice.beam;
    if (same_rows) {
        if (!interp_set_inputs(s->it, &r, first, e)) return false;
        s->run = r;
        return true;
    }
    Interp *it = interp_new(&s->lesson.program, &s->model, &r, e);
    const Ablation *ab = interp_ablation(s->it);
    if (it && ablation_any(ab) && !interp_set_ablation(it, ab, &r, e)) interp_free(it), it = NULL;
    if (!it) return false;
    interp_free(s->it);
    s->it = it, s->run = r, *first = 0;
    return true;
}

// Random weights from `seed` for the open lesson's program, configured by `config` (its names),
// and S source and T target ids drawn from seed + 1: see session_open_random.
static bool open_random_on(Session *s, const char *config, uint64_t seed, int S, int T, Err *e) {
    ConfSpec cs = {0};
    conf_spec_add(&cs, config, "the benchmark's configuration", false);
    if (!model_init_random(&s->model, &s->lesson.program, &cs, seed, e)) {
        session_close(s);
        return false;
    }
    const ModelConfig *c = &s->model.cfg;
    const int P = model_max_len(&s->model);
    s->src = calloc((size_t)P + 1, sizeof(float));
    s->tgt = calloc((size_t)P + 1, sizeof(float));
    if (!s->src || !s->tgt || S > P || T > P) {
        session_close(s);
        return err_set(e, "the lengths %d and %d do not fit %d positions", S, T, P);
    }
    Rng rng = {seed + 1};
    const int first = c->unk_id.set ? 4 : 0;  // skip the special tokens where there are some
    const int Vs = c->src_vocab_size > first ? c->src_vocab_size : first + 1;
    const int Vt = c->tgt_vocab_size > first ? c->tgt_vocab_size : first + 1;
    for (int i = 0; i < S; i++) s->src[i] = (float)(first + rng_below(&rng, Vs - first));
    for (int i = 0; i < T; i++) s->tgt[i] = (float)(first + rng_below(&rng, Vt - first));
    if (c->bos_id.set) s->tgt[0] = (float)c->bos_id.id;
    const bool decoder = program_has_decoder(&s->lesson.program);
    s->run = (RunSpec){.src = s->src, .S = S, .tgt = decoder ? s->tgt : NULL, .T = decoder ? T : 0,
                       .pack_weights = true, .packs = &s->packs};  // as make_inputs: the weights never change
    vocab_decode(&s->model.src_vocab, s->src, S, s->input_text, sizeof s->input_text);
    s->it = interp_new(&s->lesson.program, &s->model, &s->run, e);
    if (!s->it) session_close(s);
    return s->it != NULL;
}

bool session_open_random(Session *s, const ModelConfig *cfg, const char *program, uint64_t seed, int S, int T,
                         Err *e) {
    memset(s, 0, sizeof *s);
    char text[512];
    config_text(cfg, text, sizeof text);
    const bool ok = program ? lesson_load(&s->lesson, program, e) : open_builtin(&s->lesson, session_standard_lesson(cfg), e);
    if (!ok) return session_close(s), false;
    return open_random_on(s, text, seed, S, T, e);
}

bool session_open_random_text(Session *s, const char *builtin, const char *config, uint64_t seed, int S, int T, Err *e) {
    memset(s, 0, sizeof *s);
    if (!open_builtin(&s->lesson, builtin, e)) return session_close(s), false;
    return open_random_on(s, config, seed, S, T, e);
}

bool session_open_scored(Session *s, const SessionSpec *spec, int *token, Err *e) {
    if (!spec->target || !spec->target[0]) return err_set(e, "patching needs a target: the token whose score it reads");
    SessionSpec scored = *spec;
    scored.score_last = true;
    if (!session_open(s, &scored, e)) return false;
    bool ok;
    if (program_decoder_only(&s->lesson.program)) {  // the joined text's last token (score_last_inputs)
        *token = (int)s->src[s->run.S - 1];
        ok = true;
    } else if (!program_has_decoder(&s->lesson.program)) {  // a classifier: the target is a class
        char *end;
        const long id = strtol(spec->target, &end, 10);
        *token = *end || end == spec->target ? vocab_find(&s->model.tgt_vocab, spec->target, strlen(spec->target)) : (int)id;
        ok = *token >= 0 || err_set(e, "the target '%s' is neither a class number nor a class name", spec->target);
    } else if (s->run.T < 2) {
        ok = err_set(e, "the target needs at least one token after bos");
    } else {
        int first;
        *token = (int)s->run.tgt[s->run.T - 1];
        s->run.T--;  // the decoder reads the target without its last token, and is scored on it
        ok = interp_set_inputs(s->it, &s->run, &first, e);
    }
    if (ok) ok = interp_run(s->it, e);
    if (!ok) session_close(s);
    return ok;
}
