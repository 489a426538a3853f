// trainer.c: training on a task (Trainer, see train.h): batches, schedule, held-out accuracy.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hub_save.h"
#include "session.h"
#include "trainer_impl.h"

const char *const schedule_names[SCHED_COUNT] = {"peak", "paper", "constant"};

TrainConfig train_defaults(Task task) {
    ModelConfig m = config_base();
    m.d_model = 48, m.nhead = 4, m.num_encoder_layers = 2, m.num_decoder_layers = 2, m.dim_feedforward = 128;
    m.max_positions = 32;
    return (TrainConfig){.task = task, .model = m, .steps = 3000, .batch = 64, .seed = 1, .lr = 2e-3f,
                         .warmup = 200, .label_smoothing = 0.1f, .held_out = 1000};
}

TrainConfig train_text_defaults(const char *data) {
    TrainConfig c = train_defaults(TASK_COPY);  // the schedule and the optimiser's settings
    c.data = data, c.block = 32, c.batch = 32, c.lr = 3e-3f, c.label_smoothing = 0.0f;
    c.model.d_model = 64, c.model.nhead = 4, c.model.num_decoder_layers = 2, c.model.dim_feedforward = 256;
    return c;
}

bool task_vocab(Task task, Vocab *v, Err *e) { return vocab_from_chars(v, task_alphabet(task), e); }

// A classifier's target side: the names of its classes, so that its outputs can be read.
static bool class_vocab(Task task, Vocab *v, Err *e) {
    memset(v, 0, sizeof *v);
    char json[256];
    int k = snprintf(json, sizeof json, "[");
    for (int c = 0; c < task_classes(task); c++)
        k += snprintf(json + k, sizeof json - (size_t)k, "%s\"%s\"", c ? "," : "", task_class_name(task, c));
    snprintf(json + k, sizeof json - (size_t)k, "]");
    return vocab_from_json(v, json, task_names[task], e);
}

// Every character of the task must be a token of the model, on both sides (a classifier: in
// the source, and its classes must be the task's).
static bool vocab_fits(const Model *m, Task task, const char *what, Err *e) {
    const int classes = task_classes(task);
    for (const char *c = task_alphabet(task); *c; c++)
        if (vocab_find(&m->src_vocab, c, 1) < 0 || (!classes && vocab_find(&m->tgt_vocab, c, 1) < 0))
            return err_set(e, "%s: the model's vocabulary has no token for '%c', which the %s task uses", what, *c,
                           task_names[task]);
    double n;
    if (classes && (!conf_get(&m->conf, "num_classes", &n) || n != classes))
        return err_set(e, "%s: the %s task has %d classes, but the model's num_classes is %s", what, task_names[task],
                       classes, conf_find(&m->conf, "num_classes") ? "different" : "not set");
    if (!m->cfg.pad_id.set || (!classes && (!m->cfg.bos_id.set || !m->cfg.eos_id.set)))
        return err_set(e, "%s: the model names no %s, which training needs", what, classes ? "pad id" : "bos, eos and pad ids");
    return true;
}

// The text task's program: the lesson named, or lessons/text-model.md; decoder-only either way.
static bool load_text_program(Trainer *t, Err *e) {
    const char *file = t->c.program, *path = NULL, *text = file ? NULL : session_builtin_lesson("text-model.md", &path);
    if (!(file ? lesson_load(&t->program, file, e) : lesson_parse(&t->program, path, text, e))) return false;
    const Program *p = &t->program.program;
    if (!program_has_decoder(p))
        return err_set(e, "%s has no decode loop, so it cannot learn the text task: train a decoder-only program, whose "
                       "only input is the one its decode loop grows (lessons/text-model.md)", p->file);
    if (program_input(p, "src") >= 0)
        return err_set(e, "%s reads a source (input src), but the text task gives none: train a decoder-only program, "
                       "whose only input is the one its decode loop grows (lessons/text-model.md)", p->file);
    if (t->c.tokenizer && !hub_family_of_program(p->file))
        return err_set(e, "%s: with --tokenizer the model is saved as a hub folder, whose config.json names a family: "
                       "train a family's own program (--program lessons/gpt2.md or lessons/llama.md)", p->file);
    return true;
}

// The program: the lesson named, or the standard lesson for norm_first.
static bool load_program(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    if (c->data && !c->pairs) return load_text_program(t, e);
    if (c->program) {
        if (!lesson_load(&t->program, c->program, e)) return false;
        const bool decoder = program_has_decoder(&t->program.program);
        if (!decoder && !t->classes)
            return err_set(e, "%s has no decoder loop, so it cannot learn the %s task, which writes a sequence: "
                           "train a classifier on a classification task (majority or brackets)", c->program,
                           task_names[c->task]);
        if (decoder && t->classes)
            return err_set(e, "%s has a decoder loop, but the %s task gives one class per sequence: train it on "
                           "a sequence task (copy, reverse, sort or dates)", c->program, task_names[c->task]);
        return true;
    }
    if (t->classes) {  // the classifier of the notes
        const char *path = NULL, *text = session_builtin_lesson("transformers-from-scratch.md", &path);
        return lesson_parse(&t->program, path, text, e);
    }
    ConfSpec cs = {.widen = true};  // training moves every weight: float32
    conf_spec_add(&cs, c->config, "the training configuration", false);
    double given;
    const bool pre = conf_spec_get(&cs, "norm_first", &given) ? given == 1 : c->model.norm_first;
    const char *name = pre ? "pre-norm.md" : "forward-pass.md", *path = NULL;
    const char *text = session_builtin_lesson(name, &path);
    return lesson_parse(&t->program, path, text, e);
}

// Whether the text task can train m: the ids it needs, room for a window, a token for each
// character of the text (filling t->tok).
static bool text_fits(Trainer *t, const char *what, Err *e) {
    const ModelConfig *mc = &t->m.cfg;
    if (!mc->pad_id.set || !mc->eos_id.set)
        return err_set(e, "%s: the model names no %s, which the text task needs (a line break is eos)", what,
                       mc->pad_id.set ? "eos id" : "pad id");
    if (model_max_len(&t->m) < t->c.block)
        return err_set(e, "%s: the model has %d positions, fewer than the %d characters of a window (--block)", what,
                       model_max_len(&t->m), t->c.block);
    t->tok = malloc(sizeof *t->tok * (size_t)t->text.n_chars);
    if (!t->tok) return err_code(e, ERR_MEMORY, "out of memory");
    return text_token_ids(&t->text, &t->m.tgt_vocab, mc->eos_id.id, t->tok, e) || err_prefix(e, "%s", what);
}

// The text task's model: its vocabulary is the text's characters, its positions the block.
static bool make_text_model(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    ConfSpec cs = {.widen = true};  // training moves every weight: float32
    conf_spec_add(&cs, c->config, "the training configuration", false);
    if (c->init)
        return model_load(&t->m, c->init, &t->program.program, &cs, e) && text_fits(t, c->init, e);
    Vocab v;
    if (!text_vocab(&t->text, &v, e)) return false;
    char vocab[160], sizes[512], ids[64];
    vocab_special_ids(ids, sizeof ids);
    snprintf(vocab, sizeof vocab, "tgt_vocab_size=%d %s", v.n, ids);
    vocab_free(&v);
    ModelConfig mc = c->model;
    mc.max_positions = c->block, mc.src_vocab_size = mc.tgt_vocab_size = 0, mc.num_encoder_layers = 0;
    config_text(&mc, sizes, sizeof sizes);
    conf_spec_add(&cs, vocab, c->data, false);
    conf_spec_add(&cs, sizes, "the training defaults", true);
    bool ok = model_init_random(&t->m, &t->program.program, &cs, c->seed, e);
    if (ok) {
        vocab_free(&t->m.src_vocab), vocab_free(&t->m.tgt_vocab);
        ok = text_vocab(&t->text, &t->m.src_vocab, e) && text_vocab(&t->text, &t->m.tgt_vocab, e);
        t->m.has_vocab = ok;
    }
    return ok && text_fits(t, t->program.program.file, e);
}

// The smallest id the text never uses: the label that counts for nothing (padding), unless the
// configuration names a pad_id. n_chars when it uses them all; -1 when memory runs out.
static int unused_id(const TextData *x) {
    bool *used = calloc((size_t)x->n_chars + 1, sizeof *used);
    int id = 0;
    if (!used) return -1;
    for (size_t i = 0; i < x->n; i++) used[x->ids[i]] = true;
    while (id < x->n_chars && used[id]) id++;
    free(used);
    return id;
}

// The text read as a tokenizer's tokens: the vocabulary is the tokenizer's, the configuration the
// program's own names (--config), and the labels the tokenizer's pieces.
static bool make_token_model(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    ConfSpec cs = {.widen = true};  // training moves every weight: float32
    conf_spec_add(&cs, c->config, "the training configuration", false);
    char vocab[160] = "";
    double pad;
    const int n = c->init ? 0 : snprintf(vocab, sizeof vocab, "vocab_size=%d", t->text.n_chars);
    if (!conf_spec_get(&cs, "pad_id", &pad)) {
        const int unused = unused_id(&t->text);
        if (unused < 0) return err_code(e, ERR_MEMORY, "out of memory");
        if (unused >= t->text.n_chars)
            return err_set(e, "%s: the text uses every id of %s, so none is left to pad with: give --config pad_id=ID",
                           c->data, c->tokenizer);
        snprintf(vocab + n, sizeof vocab - (size_t)n, " pad_id=%d", unused);
    }
    conf_spec_add(&cs, vocab, c->tokenizer, false);
    if (!(c->init ? model_load(&t->m, c->init, &t->program.program, &cs, e)
                  : model_init_random(&t->m, &t->program.program, &cs, c->seed, e)))
        return false;
    Tokenizer *tk = t->tk;
    t->tk = NULL;
    if (!model_use_tokenizer(&t->m, tk, e)) return false;
    return text_fits(t, c->init ? c->init : t->program.program.file, e);
}

static bool make_model(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    if (c->pairs) return pairs_make_model(t, e);
    if (c->tokenizer) return make_token_model(t, e);
    if (c->data) return make_text_model(t, e);
    Vocab v;
    if (!task_vocab(c->task, &v, e)) return false;
    char task[200], sizes[512], ids[64];
    vocab_special_ids(ids, sizeof ids);
    const int need = task_max_src_len(c->task) > task_max_tgt_len(c->task) + 1 ? task_max_src_len(c->task)
                                                                               : task_max_tgt_len(c->task) + 1;
    if (t->classes)
        snprintf(task, sizeof task, "src_vocab_size=%d num_classes=%d %s", v.n, t->classes, ids);
    else
        snprintf(task, sizeof task, "src_vocab_size=%d tgt_vocab_size=%d %s", v.n, v.n, ids);
    ModelConfig mc = c->model;
    if (mc.max_positions < need) mc.max_positions = need;
    mc.src_vocab_size = mc.tgt_vocab_size = 0;  // the task's, above
    if (t->classes) mc.num_decoder_layers = 0;  // a classifier has none (nor writes it in its metadata)
    config_text(&mc, sizes, sizeof sizes);
    vocab_free(&v);
    ConfSpec cs = {.widen = true};  // training moves every weight: float32
    conf_spec_add(&cs, c->config, "the training configuration", false);
    if (c->init) return model_load(&t->m, c->init, &t->program.program, &cs, e) && vocab_fits(&t->m, c->task, c->init, e);
    conf_spec_add(&cs, task, task_names[c->task], false);
    conf_spec_add(&cs, sizes, "the training defaults", true);
    bool ok = model_init_random(&t->m, &t->program.program, &cs, c->seed, e);
    if (ok) {
        vocab_free(&t->m.src_vocab), vocab_free(&t->m.tgt_vocab);
        ok = task_vocab(c->task, &t->m.src_vocab, e) &&
             (t->classes ? class_vocab(c->task, &t->m.tgt_vocab, e) : task_vocab(c->task, &t->m.tgt_vocab, e));
        t->m.has_vocab = ok;
    }
    return ok;
}

// The text as the tokenizer's tokens, each line ending in the configuration's eos_id.
static bool load_tokens(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    ConfSpec cs = {.widen = true};  // training moves every weight: float32
    conf_spec_add(&cs, c->config, "the training configuration", false);
    double eos;
    if (!conf_spec_get(&cs, "eos_id", &eos) || eos < 0 || eos != floor(eos))
        return err_set(e, "--tokenizer: name the token that ends a line in --config (eos_id=ID: GPT-2's <|endoftext|> is "
                       "50256, Llama's </s> 2)");
    if (!(t->tk = tokenizer_load(c->tokenizer, e))) return false;
    if (eos >= tokenizer_size(t->tk))
        return err_set(e, "eos_id=%.0f, but %s's ids run to %d", eos, c->tokenizer, tokenizer_size(t->tk) - 1);
    return text_load_tokens(&t->text, c->data, c->shuffle, c->seed, t->tk, (int)eos, e);
}

// The shapes of a batch, the program, the model, and the data the task draws from.
static bool trainer_setup(Trainer *t, Err *e) {
    const TrainConfig *c = &t->c;
    bool ok = (c->batch >= 1 || err_set(e, "the batch must hold at least one example (got %d)", c->batch)) &&
              (c->steps >= 0 || err_set(e, "the number of steps cannot be negative (got %d)", c->steps));
    if (ok && c->pairs) {
        t->S = t->T = c->block;
        ok = pairs_setup(t, e);
    } else if (ok && c->data) {
        ok = (c->block >= 1 && c->block <= TEXT_MAX_BLOCK) ||
             err_set(e, "the block must be 1 to %d characters (got %d)", TEXT_MAX_BLOCK, c->block);
        t->S = 0, t->T = c->block;
        ok = ok && (c->tokenizer ? load_tokens(t, e) : text_load(&t->text, c->data, c->shuffle, c->seed, e));
    } else {
        t->classes = task_classes(c->task);
        t->S = task_max_src_len(c->task), t->T = t->classes ? 1 : task_max_tgt_len(c->task) + 1;
    }
    ok = ok && load_program(t, e) && make_model(t, e);
    if (ok && !c->data && !c->pairs) ok = (t->held = task_held_out_new(c->task, c->seed + 1000003, c->held_out, e)) != NULL;
    return ok;
}

Trainer *trainer_new(const TrainConfig *c, Err *e) {
    Trainer *t = calloc(1, sizeof *t);
    if (!t) return err_code(e, ERR_MEMORY, "out of memory"), NULL;
    t->c = *c, t->rng = (Rng){c->seed * 0x9E3779B97F4A7C15ull + 17};
    const size_t B = (size_t)(c->batch > 0 ? c->batch : 0);
    bool ok = trainer_setup(t, e);
    t->src = malloc(sizeof(float) * (B * t->S + 1));  // (the text task has no source)
    t->tgt_in = malloc(sizeof(float) * (B * t->T + 1));
    t->tgt_out = malloc(sizeof(float) * (B * t->T + 1));
    t->n_weights = ok ? (size_t)(t->m.weights.entries[t->m.weights.n_entries - 1].data - t->m.weights.arena) +
                            (size_t)shape_numel(&t->m.weights.entries[t->m.weights.n_entries - 1].shape) : 0;
    t->backup = malloc(sizeof(float) * (t->n_weights + 1));
    if (ok && (!t->src || !t->tgt_in || !t->tgt_out || !t->backup)) ok = err_code(e, ERR_MEMORY, "out of memory");
    StepConfig sc = {c->batch, t->S, t->classes ? 0 : t->T, c->label_smoothing, 0.9f, 0.98f, 1e-9f};
    t->ts = ok ? train_state_new(&t->m, &t->program.program, &sc, e) : NULL;
    if (t->ts) {  // checked on a batch of padding before the first step
        const float pad = (float)t->m.cfg.pad_id.id;
        for (size_t i = 0; i < B * (size_t)t->S; i++) t->src[i] = pad;
        for (size_t i = 0; i < B * (size_t)t->T; i++) t->tgt_in[i] = pad;
        if (!train_state_prepare(t->ts, t->src, t->tgt_in, e)) train_state_free(t->ts), t->ts = NULL;
    }
    if (!t->ts) {
        trainer_free(t);
        return NULL;
    }
    return t;
}

void trainer_free(Trainer *t) {
    if (!t) return;
    train_state_free(t->ts);
    task_held_out_free(t->held);
    text_free(&t->text);
    pairs_free(&t->pairs);
    hub_tokenizers_free(t->tk, t->tk_tgt);
    if (t->program.path) lesson_free(&t->program);
    model_free(&t->m);
    free(t->src), free(t->tgt_in), free(t->tgt_out), free(t->backup), free(t->tok);
    free(t);
}

// Writes one example's characters as ids into a padded row.
static void encode_row(const Vocab *v, const char *s, float *row, int len, int first, int eos, int pad) {
    int k = 0;
    if (first >= 0) row[k++] = (float)first;
    for (const char *c = s; *c && k < len; c++) row[k++] = (float)vocab_find(v, c, 1);
    if (eos >= 0 && k < len) row[k++] = (float)eos;
    while (k < len) row[k++] = (float)pad;
}

static void next_batch(Trainer *t) {
    const ModelConfig *mc = &t->m.cfg;
    const int pad = mc->pad_id.id, bos = mc->bos_id.id, eos = mc->eos_id.id;
    char src[64], tgt[64];
    if (t->c.pairs) {
        pairs_batch(t);
        return;
    }
    for (int b = 0; b < t->c.batch && t->c.data; b++) {  // the text task: a window of the training lines
        const size_t start = text_draw_start(&t->text, &t->rng, t->T), row = (size_t)b * t->T;
        text_window(&t->text, start, t->text.n_train, t->T, t->tok, (float)pad, t->tgt_in + row, t->tgt_out + row);
    }
    for (int b = 0; b < t->c.batch && !t->c.data; b++) {
        do task_example(t->c.task, &t->rng, src, sizeof src, tgt, sizeof tgt);
        while (task_held_out_has(t->held, src));
        encode_row(&t->m.src_vocab, src, t->src + (size_t)b * t->S, t->S, -1, -1, pad);
        if (t->classes) {
            t->tgt_out[b] = (float)task_class_of(t->c.task, tgt);
            continue;
        }
        encode_row(&t->m.tgt_vocab, tgt, t->tgt_in + (size_t)b * t->T, t->T, bos, -1, pad);
        encode_row(&t->m.tgt_vocab, tgt, t->tgt_out + (size_t)b * t->T, t->T, -1, eos, pad);
    }
}

float trainer_lr(const Trainer *t) {
    const int s = t->step + 1, w = t->c.warmup;
    switch (t->c.schedule) {
    case SCHED_PAPER: return t->c.lr * noam_lr(t->m.cfg.d_model, s, w, 1.0f);
    case SCHED_CONSTANT: return t->c.lr;
    default:  // linear warm-up to the peak, then the inverse square root decay of the paper
        if (w <= 0) return t->c.lr;
        return t->c.lr * (s < w ? (float)s / w : sqrtf((float)w / s));
    }
}

bool trainer_step(Trainer *t, StepStats *s, Err *e) {
    next_batch(t);
    if (!train_state_step(t->ts, t->src, t->tgt_in, t->tgt_out, s, e)) {
        // A loss that is not finite: go back to the last weights whose loss was finite.
        if (!isfinite(s->loss) && t->step > 0) memcpy(t->m.weights.arena, t->backup, sizeof(float) * t->n_weights);
        if (!isfinite(s->loss))
            err_prefix(e, "step %d: training stopped and the last good weights (from step %d) were kept",
                       t->step + 1, t->step);
        return false;
    }
    memcpy(t->backup, t->m.weights.arena, sizeof(float) * t->n_weights);
    train_state_update(t->ts, trainer_lr(t));
    t->step++;
    return true;
}

int trainer_steps_done(const Trainer *t) { return t->step; }
const Model *trainer_model(const Trainer *t) { return &t->m; }
const TrainConfig *trainer_config(const Trainer *t) { return &t->c; }
const Program *trainer_program(const Trainer *t) { return &t->program.program; }
Model *trainer_model_mut(Trainer *t) { return &t->m; }

bool trainer_save(const Trainer *t, const char *path, Err *e) {
    if (!t->c.tokenizer) return model_save(&t->m, path, e);
    const char *base = strrchr(path, '/');
    char name[256];
    snprintf(name, sizeof name, "stepformer/%s", base && base[1] ? base + 1 : path);
    return hub_save(&t->m, &t->program.program, path, t->c.dtype, t->c.tokenizer, name, e);
}

// A classifier's answers: the largest of each example's class scores.
static bool class_answers(Trainer *t, const Interp *it, int from, int n, int *right, Err *e) {
    int n_out, k = -1;
    const ProgramOutput *o = interp_outputs(it, &n_out);
    for (int i = 0; i < n_out; i++)
        if (!strcmp(o[i].name, "logits")) k = o[i].stage;
    if (k < 0) return err_set(e, "%s publishes no 'logits'", t->program.program.file);
    if (shape_numel(&interp_stage(it, k)->shape) != t->classes)
        return err_set(e, "%s: logits holds %lld scores an example, but the %s task has %d classes",
                       t->program.program.file, (long long)shape_numel(&interp_stage(it, k)->shape),
                       task_names[t->c.task], t->classes);
    const float *z = interp_output(it, k);
    for (int b = 0; b < n; b++) {
        *right += row_argmax(z + (size_t)b * t->classes, t->classes) == task_class_of(t->c.task, task_held_out_tgt(t->held, from + b));
    }
    return true;
}

// Greedy decoding of held-out examples [from, from + n) in one batch; counts exact matches
// (a classifier: right classes).
static bool eval_batch(Trainer *t, int from, int n, int *right, Err *e) {
    float *src = malloc(sizeof(float) * (size_t)n * t->S);
    if (!src) return err_code(e, ERR_MEMORY, "out of memory");
    for (int b = 0; b < n; b++)
        encode_row(&t->m.src_vocab, task_held_out_src(t->held, from + b), src + (size_t)b * t->S, t->S, -1, -1,
                   t->m.cfg.pad_id.id);
    RunSpec spec = {src, t->S, NULL, 0, t->classes ? 0 : t->T, n};
    Interp *it = interp_new(&t->program.program, &t->m, &spec, e);
    bool ok = it && interp_run(it, e);
    if (ok && t->classes) {
        ok = class_answers(t, it, from, n, right, e);
        n = 0;
    }
    for (int b = 0; ok && b < n; b++) {
        int len;
        const float *ids = interp_generated_row(it, b, &len);
        char got[128];
        vocab_decode(&t->m.tgt_vocab, ids, len, got, sizeof got);
        *right += strcmp(got, task_held_out_tgt(t->held, from + b)) == 0;
    }
    interp_free(it);
    free(src);
    return ok;
}

bool trainer_eval(Trainer *t, int n, double *exact, Err *e) {
    if (t->c.pairs) return pairs_eval(t, n, exact, e);
    if (t->c.data) return err_set(e, "the text task is scored by its held-out loss, not by exact matches");  // (pairs: above)
    const int total = task_held_out_count(t->held);
    if (n <= 0 || n > total) n = total;
    int right = 0;
    for (int from = 0; from < n; from += 250)
        if (!eval_batch(t, from, n - from < 250 ? n - from : 250, &right, e)) return false;
    *exact = n ? (double)right / n : 0.0;
    return true;
}

const TextData *trainer_text(const Trainer *t) { return t->c.data && !t->c.pairs ? &t->text : NULL; }
const PairData *trainer_pairs(const Trainer *t) { return t->c.pairs ? &t->pairs : NULL; }

// The negative log-likelihood of each label that is not `ignore`, summed in double.
static double nll_sum(const float *logits, const float *labels, size_t N, int V, float ignore) {
    double sum = 0;
    for (size_t r = 0; r < N; r++) {
        if (labels[r] == ignore) continue;
        const float *z = logits + r * (size_t)V;
        float m = z[0];
        for (int v = 1; v < V; v++) m = z[v] > m ? z[v] : m;
        double total = 0;
        for (int v = 0; v < V; v++) total += exp((double)z[v] - m);
        sum += m + log(total) - z[(int)labels[r]];
    }
    return sum;
}

// Held-out windows [from, from + n) in one teacher-forced batch: adds their labels' summed
// negative log-likelihood to *sum and their count to *labels.
static bool text_loss_batch(Trainer *t, size_t from, int n, double *sum, size_t *labels, Err *e) {
    const int T = t->T;
    const float pad = (float)t->m.cfg.pad_id.id;
    float *in = malloc(sizeof(float) * (size_t)n * T), *label = malloc(sizeof(float) * (size_t)n * T);
    bool ok = (in && label) || err_code(e, ERR_MEMORY, "out of memory");
    for (int b = 0; ok && b < n; b++)
        *labels += (size_t)text_window(&t->text, t->text.n_train + (from + (size_t)b) * (size_t)T, t->text.n, T,
                                       t->tok, pad, in + (size_t)b * T, label + (size_t)b * T);
    RunSpec spec = {.src = t->src, .tgt = in, .T = T, .batch = n, .pack_weights = true};
    Interp *it = ok ? interp_new(&t->program.program, &t->m, &spec, e) : NULL;
    ok = it && interp_run(it, e);
    int n_out, k = -1;
    const ProgramOutput *o = ok ? interp_outputs(it, &n_out) : NULL;
    for (int i = 0; o && i < n_out; i++)
        if (!strcmp(o[i].name, "logits")) k = o[i].stage;
    if (k >= 0) {
        const Shape *sh = &interp_stage(it, k)->shape;  // [T, V] an example (checked before training)
        *sum += nll_sum(interp_output(it, k), label, (size_t)n * T, (int)sh->dim[sh->ndim - 1], pad);
    } else if (ok) {
        ok = err_set(e, "%s publishes no 'logits'", t->program.program.file);
    }
    interp_free(it);
    free(in), free(label);
    return ok;
}

// The held-out windows go in batches of 64, the batches shared between two threads as the
// training step shares its halves; each batch's sum is kept apart and they are added in order,
// so one core or two give the same number.
bool trainer_text_loss(Trainer *t, double *nats, size_t *labels, Err *e) {
    if (!trainer_text(t)) return err_set(e, "only the text task has a held-out loss");
    enum { WINDOWS = 64, THREADS = 2 };
    const size_t windows = text_held_windows(&t->text, t->T), batches = (windows + WINDOWS - 1) / WINDOWS;
    double *sum = calloc(batches, sizeof *sum);
    size_t *count = calloc(batches, sizeof *count);
    if (!sum || !count) return free(sum), free(count), err_code(e, ERR_MEMORY, "out of memory");
    Err errs[THREADS] = {{{0}}};
    bool ok[THREADS] = {true, true};
#pragma omp parallel for num_threads(THREADS) schedule(static, 1)
    for (int k = 0; k < THREADS; k++)
        for (size_t b = (size_t)k; b < batches && ok[k]; b += THREADS) {
            const size_t from = b * WINDOWS;
            const int n = windows - from < WINDOWS ? (int)(windows - from) : WINDOWS;
            ok[k] = text_loss_batch(t, from, n, &sum[b], &count[b], &errs[k]);
        }
    double total = 0;
    *labels = 0;
    for (size_t b = 0; b < batches; b++) total += sum[b], *labels += count[b];
    free(sum), free(count);
    for (int k = 0; k < THREADS; k++)
        if (!ok[k]) return e ? (*e = errs[k], false) : false;
    *nats = *labels ? total / (double)*labels : 0.0;
    return true;
}
