// cmd_train.c: `train` teaches a model a task in C and saves it with its vocabulary.
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "train.h"

static const char train_usage[] =
    "usage: stepformer train --task TASK --out FILE [--steps N] [--seed S] [options]\n"
    "\n"
    "Trains a Transformer in C on a task generated on the fly, then saves it (.safetensors,\n"
    "with its configuration and vocabulary). Sequence tasks, for encoder-decoder programs: copy,\n"
    "reverse, sort (1-12 lowercase letters) and dates (a date in 8 written forms -> ISO\n"
    "YYYY-MM-DD). Classification tasks, for programs without a decoder whose logits are one row\n"
    "of class scores: majority (which of a-f occurs most often in 1-12 letters) and brackets\n"
    "(whether 2-12 of ( ) [ ] balance). The last line gives the accuracy on 1000 held-out\n"
    "examples no batch ever contained. Ctrl-C stops training and still saves.\n"
    "\n"
    "The text task (--task text --data FILE) trains a decoder-only program (default\n"
    "lessons/text-model.md) on the characters of a UTF-8 text file (at most 64 MB, or\n"
    "STEPFORMER_MAX_TEXT_MB; at most 1000 distinct characters; a line break is <eos>). Every\n"
    "10th line is held out; training draws windows of --block characters from the others. It\n"
    "reports the held-out loss (nats a character, and perplexity) beside a bigram baseline's.\n"
    "With --tokenizer tokenizer.json the text is read as that tokenizer's tokens instead: each line\n"
    "as tokenizer(line) gives it, then eos_id (given in --config), for a family's own program\n"
    "(--program lessons/gpt2.md or lessons/llama.md, sized by --config with its config.json\n"
    "names); --out is then a folder in the hub's layout (config.json, model.safetensors,\n"
    "tokenizer.json) that --model DIR opens.\n"
    "\n"
    "  --steps N            optimisation steps (default 3000)\n"
    "  --seed S             seed of the weights, the batches and the held-out set (default 1)\n"
    "  --batch N            examples per step (64; the text task: 32)\n"
    "  --lr X, --warmup N   peak learning rate (0.002; the text task: 0.003) after N warm-up steps\n"
    "                       (200); then it decays as 1/sqrt(step)\n"
    "  --schedule S         peak (the above), paper (lr = X * d_model^-0.5 * min(step^-0.5,\n"
    "                       step * warmup^-1.5), X = --lr or 1), or constant (--lr throughout)\n"
    "  --label-smoothing X  (0.1; the text task: 0)\n"
    "  --d-model N, --nhead N, --layers N (encoder and decoder), --enc-layers N, --dec-layers N,\n"
    "  --d-ff N, --norm-first, --activation relu|gelu   model size (48, 4, 2, 2, 2, 128; the text\n"
    "                       task: 64, 4, 2 decoder layers, 256)\n"
    "  --layer-norm torch|annotated, --eps X   the LayerNorm form (torch) and epsilon (1e-5)\n"
    "  --init FILE          continue from a model (its vocabulary must fit the task)\n"
    "  --program LESSON.md  train that lesson's program (default: the standard encoder-decoder,\n"
    "                       or lessons/transformers-from-scratch.md for a classification task)\n"
    "  --config \"k=v ...\"   configuration over the defaults (a program's own names too)\n"
    "  --eval-every N       check held-out accuracy (the text task: loss) every N steps (500; 0:\n"
    "                       only at the end)\n"
    "  --stop-at A          stop once held-out exact match reaches A (e.g. 0.99)\n"
    "  --data FILE          the text task's text\n"
    "  --block N            the text task: characters a window feeds the model (32; at most 1024)\n"
    "  --shuffle            the text task: shuffle the lines (by --seed) before the split, for a list\n"
    "                       whose order means nothing, such as a sorted word list\n"
    "  --tokenizer FILE     the text task: read the text as this tokenizer.json's tokens\n"
    "  --dtype f32|f16|bf16 with --tokenizer: how model.safetensors stores the weights (f32)\n";

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// Fails early if the model could not be written, so no training is lost to a bad path. A hub
// folder (folder) that is missing must have a parent it can be made in (it is made on saving).
static bool writable(const char *path, bool folder, Err *e) {
    if (folder) {
        struct stat st;
        char copy[4096];
        snprintf(copy, sizeof copy, "%s", path);
        const bool exists = stat(path, &st) == 0;
        const char *where = exists ? path : dirname(copy);  // a missing folder is made in its parent
        if (exists && !S_ISDIR(st.st_mode))
            return err_set(e, "%s: not a folder: with --tokenizer, --out names the folder the model is saved in", path);
        if (access(where, W_OK) != 0)
            return err_set(e, "%s: cannot write the model's folder there: %s", where, strerror(errno));
        return true;
    }
    if (access(path, F_OK) == 0) {
        if (access(path, W_OK) != 0) return err_set(e, "%s: cannot write the model there: %s", path, strerror(errno));
        return true;
    }
    FILE *f = fopen(path, "wb");
    if (!f) return err_set(e, "%s: cannot write the model there: %s", path, strerror(errno));
    fclose(f);
    remove(path);
    return true;
}

static void progress(FILE *out, int step, int total, const StepStats *s, double rate, bool tty) {
    const int width = 24, filled = total ? (int)((long)width * step / total) : width;
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    const double eta = rate > 0 ? (total - step) / rate : 0;
    fprintf(out, "%sstep %5d/%d [%s] loss %.3f  acc %5.1f%%  %5.1f steps/s  ETA %d:%02d%s", tty ? "\r" : "", step, total,
            bar, (double)s->loss, 100.0 * s->token_acc, rate, (int)eta / 60, (int)eta % 60, tty ? "   " : "\n");
    fflush(out);
}

// What the text task predicts: a character, or a token of --tokenizer.
static const char *unit_of(const Trainer *t) { return trainer_text(t)->tokens ? "token" : "character"; }

typedef struct {
    int eval_every;
    double stop_at;
} EvalPlan;

// A check of the model on what training never saw, on stderr: held-out loss for the text
// task, else exact match (or accuracy) on the first n held-out examples (all if n <= 0).
static bool check(Trainer *t, int n, double *acc, const char *lead, int step, double seconds, Err *e) {
    double nats;
    size_t labels;
    if (trainer_text(t)) {
        if (!trainer_text_loss(t, &nats, &labels, e)) return false;
        fprintf(stderr, "%sstep %d: held-out loss %.4f nats a %s (perplexity %.3f) after %.1f s\n", lead, step,
                nats, unit_of(t), exp(nats), seconds);
        return true;
    }
    if (!trainer_eval(t, n, acc, e)) return false;
    fprintf(stderr, "%sstep %d: held-out %s %.1f%% after %.1f s\n", lead, step,
            task_classes(trainer_config(t)->task) ? "accuracy" : "exact match", 100 * *acc, seconds);
    return true;
}

// Returns 0 when the steps are done, 1 on failure, 2 when interrupted, 3 when the goal was met.
static int loop(Trainer *t, const TrainConfig *c, const EvalPlan *sch, Err *e) {
    const bool tty = isatty(fileno(stderr));
    const double t0 = now();
    StepStats s = {0};
    for (int step = 1; step <= c->steps; step++) {
        if (interrupted) return 2;
        if (!trainer_step(t, &s, e)) return 1;
        const double rate = step / (now() - t0);
        if (step % 10 == 0 || step == c->steps) progress(stderr, step, c->steps, &s, rate, tty);
        if (sch->eval_every > 0 && (step % sch->eval_every == 0) && step < c->steps) {
            double acc = 0;
            if (!check(t, sch->stop_at > 0 ? 0 : 200, &acc, tty ? "\n" : "", step, now() - t0, e)) return 1;
            if (sch->stop_at > 0 && acc >= sch->stop_at) return 3;
        }
    }
    if (tty) fputc('\n', stderr);
    return 0;
}

// What only the text task takes (--data, --block) and what it does not (--stop-at,
// --enc-layers): -1 to go on, else a usage error.
static int text_flags(const TrainFlags *f, bool text, bool translate) {
    if (translate) {
        if (!f->data || !f->tokenizer)
            return cli_usage_error("train", "--task translate needs --data FILE (SOURCE<TAB>TARGET lines) and --tokenizer DIR "
                                   "(a Marian folder's source.spm, target.spm and vocab.json)");
        if (f->shuffle) return cli_usage_error("train", "--shuffle is for --task text: the translation task draws pairs at random");
        return -1;
    }
    if (!text && (f->data || f->block || f->shuffle || f->tokenizer))
        return cli_usage_error("train", "--data, --block, --shuffle and --tokenizer are for --task text and translate");
    if (f->dtype && !f->tokenizer)
        return cli_usage_error("train", "--dtype sets how a hub folder stores the weights: it goes with --tokenizer");
    if (!text) return -1;
    if (!f->data) return cli_usage_error("train", "--task text needs --data FILE: the UTF-8 text to learn");
    if (f->stop_at > 0)
        return cli_usage_error("train", "--stop-at stops at a held-out exact match, which the text task does not have "
                               "(it reports held-out loss)");
    if (f->enc_layers)
        return cli_usage_error("train", "the text task trains a decoder-only program: --enc-layers sets nothing in it "
                               "(--layers or --dec-layers sets its layers)");
    return -1;
}

// The training configuration from the defaults and the flags.
static int configure(const CliOptions *o, TrainConfig *c, char *config, size_t config_n) {
    const TrainFlags *f = &o->train;
    Task task = TASK_COPY;
    if (!f->task)
        return cli_usage_error("train", "--task is required (copy, reverse, sort, dates, majority, brackets, text or translate)");
    const bool text = !strcmp(f->task, "text"), translate = !strcmp(f->task, "translate");
    if (!text && !translate && !task_from_name(f->task, &task))
        return cli_usage_error("train", "unknown task '%s': the tasks are copy, reverse, sort, dates, majority, "
                               "brackets, text and translate", f->task);
    int code = text_flags(f, text, translate);
    if (code >= 0) return code;
    if (!o->out) return cli_usage_error("train", "--out FILE is required");
    *c = text ? train_text_defaults(f->data) : train_defaults(task);
    if (translate) c->pairs = true, c->data = f->data, c->block = 32;
    if (f->block) c->block = f->block;
    c->shuffle = f->shuffle;
    c->tokenizer = f->tokenizer;
    if (f->dtype && !cli_dtype("train", f->dtype, &c->dtype, &code)) return code;
    if (f->steps) c->steps = f->steps;
    if (f->batch) c->batch = f->batch;
    if (f->lr > 0) c->lr = f->lr;
    if (f->has_warmup) c->warmup = f->warmup;
    if (f->has_label_smoothing) c->label_smoothing = f->label_smoothing;
    if (o->has_seed) c->seed = (unsigned long long)o->seed;
    if (f->d_model) c->model.d_model = f->d_model;
    if (f->d_ff) c->model.dim_feedforward = f->d_ff;
    if (f->layers) c->model.num_encoder_layers = c->model.num_decoder_layers = f->layers;
    if (f->enc_layers) c->model.num_encoder_layers = f->enc_layers;
    if (f->dec_layers) c->model.num_decoder_layers = f->dec_layers;
    if (o->spec.flags[0] && o->spec.config)
        return cli_usage_error("train", "give the configuration either as flags (--nhead ...) or as --config, not both");
    // Sizes given as flags are given values: they beat a program's `default` lines.
    int k = snprintf(config, config_n, "%s", o->spec.config ? o->spec.config : o->spec.flags);
#define GIVEN(flag, name) \
    if (flag && (size_t)k < config_n) k += snprintf(config + k, config_n - (size_t)k, " " name "=%d", flag);
    GIVEN(f->d_model, "d_model")
    GIVEN(f->d_ff, "dim_feedforward")
    GIVEN(text ? 0 : f->layers ? f->layers : f->enc_layers, "num_encoder_layers")
    GIVEN(f->layers ? f->layers : f->dec_layers, "num_decoder_layers")
#undef GIVEN
    if ((size_t)k >= config_n) return cli_usage_error("train", "the configuration is too long");
    c->config = config[0] ? config : NULL;
    c->program = o->spec.program_path;
    c->init = f->init;
    if (f->schedule) {
        int which = -1;
        for (int i = 0; i < SCHED_COUNT; i++)
            if (!strcmp(f->schedule, schedule_names[i])) which = i;
        if (which < 0) return cli_usage_error("train", "--schedule is peak, paper or constant, not '%s'", f->schedule);
        c->schedule = (Schedule)which;
        if (c->schedule == SCHED_PAPER && !(f->lr > 0)) c->lr = 1.0f;  // the paper's factor
        if (c->schedule == SCHED_PAPER && !f->has_warmup) c->warmup = 4000;
    }
    return -1;
}

static int finish(Trainer *t, const char *out, int how, double seconds, Err *e) {
    if (how == 1) fprintf(stderr, "\nstepformer: %s\n", e->msg);
    if (!trainer_save(t, out, e)) return cli_fail(e);
    const int steps = trainer_steps_done(t);
    fprintf(stderr, "%ssaved %s after %d steps (%.1f s, %.1f steps/s)\n", how == 2 ? "\ninterrupted: " : "", out,
            steps, seconds, steps / (seconds > 0 ? seconds : 1));
    if (how == 1) return EXIT_FAIL;
    const TextData *text = trainer_text(t);
    double acc, nats, bigram;
    size_t labels;
    if (text) {
        if (!trainer_text_loss(t, &nats, &labels, e) || !text_bigram_loss(text, &bigram, e)) return cli_fail(e);
        printf("held-out loss: %.4f nats a %s (perplexity %.3f) on %zu %ss never trained on; the bigram "
               "baseline's: %.4f (perplexity %.3f) (%s)\n", nats, unit_of(t), exp(nats), labels, unit_of(t), bigram,
               exp(bigram), out);
        return how == 2 ? 130 : EXIT_OK;
    }
    if (!trainer_eval(t, 0, &acc, e)) return cli_fail(e);
    const PairData *d = trainer_pairs(t);
    if (d) {
        printf("held-out exact match: %.1f%% of %d pairs never seen in training (%s)\n", 100 * acc, d->n - d->n_train, out);
        return how == 2 ? 130 : EXIT_OK;
    }
    printf("held-out %s: %.1f%% of 1000 examples never seen in training (%s)\n",
           task_classes(trainer_config(t)->task) ? "accuracy" : "exact match", 100 * acc, out);
    return how == 2 ? 130 : EXIT_OK;
}

// The text task's first lines: the model, the text and its split, and the bigram baseline.
static bool text_header(const Trainer *t, const TrainConfig *c, long long numbers, Err *e) {
    const Model *model = trainer_model(t);
    const ModelConfig *m = &model->cfg;
    const TextData *x = trainer_text(t);
    double bigram;
    if (!text_bigram_loss(x, &bigram, e)) return false;
    const char *program = trainer_program(t)->file, *base = strrchr(program, '/');
    fprintf(stderr, "training text (%s): d_model %d, %d heads, %d layers, %lld weights in %d tensors, vocab %d, "
            "block %d, batch %d, %d steps, seed %llu\n", base ? base + 1 : program, m->d_model, m->nhead,
            m->num_decoder_layers, numbers, model->n_params, m->tgt_vocab_size, c->block, c->batch, c->steps, c->seed);
    const char *u = unit_of(t);
    if (x->tokens)
        fprintf(stderr, "%s: %zu tokens of %s (%d ids; each line ends in eos %d) in %zu lines%s; ", c->data, x->n,
                c->tokenizer, x->n_chars, m->eos_id.id, x->lines, c->shuffle ? ", shuffled" : "");
    else
        fprintf(stderr, "%s: %zu characters (%d distinct) in %zu lines%s; ", c->data, x->n, x->n_chars, x->lines,
                c->shuffle ? ", shuffled" : "");
    fprintf(stderr, "training on %zu lines (%zu %ss), holding out every %dth: %zu lines (%zu %ss)\n",
            x->lines - x->held_lines, x->n_train, u, TEXT_HOLD_EVERY, x->held_lines, x->n - x->n_train, u);
    fprintf(stderr, "bigram baseline (add-one counts over the training lines): held-out loss %.4f nats a %s "
            "(perplexity %.3f)\n", bigram, u, exp(bigram));
    return true;
}

// A generated task's first line: the model and the run.
static void task_header(const Trainer *t, const TrainConfig *c, long long numbers) {
    const Model *model = trainer_model(t);
    const ModelConfig *m = &model->cfg;
    const PairData *d = trainer_pairs(t);
    if (d)
        fprintf(stderr, "training translate (%s): d_model %d, %d heads, %d+%d layers, %lld weights in %d tensors, vocab %d, "
                "batch %d, %d steps, seed %llu\n%s: %d pairs of at most %d tokens a side (%d longer left out); training on %d, "
                "holding out every %dth: %d\n", trainer_program(t)->file, m->d_model, m->nhead, m->num_encoder_layers,
                m->num_decoder_layers, numbers, model->n_params, m->tgt_vocab_size, c->batch, c->steps, c->seed, c->data, d->n,
                c->block, d->skipped, d->n_train, PAIRS_HOLD_EVERY, d->n - d->n_train);
    else if (task_classes(c->task))
        fprintf(stderr, "training %s (%s): d_model %d, %d heads, %d layers, %lld weights in %d tensors, %d classes, "
                "batch %d, %d steps, seed %llu\n", task_names[c->task], trainer_program(t)->file, m->d_model, m->nhead,
                m->num_encoder_layers, numbers, model->n_params, task_classes(c->task), c->batch, c->steps, c->seed);
    else
        fprintf(stderr, "training %s: d_model %d, %d heads, %d+%d layers, %lld weights in %d tensors, vocab %d, "
                "batch %d, %d steps, seed %llu\n", task_names[c->task], m->d_model, m->nhead, m->num_encoder_layers,
                m->num_decoder_layers, numbers, model->n_params, m->tgt_vocab_size, c->batch, c->steps, c->seed);
}

int cmd_train(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, OPT_TRAIN | OPT_MODEL_FLAGS, train_usage, &o);
    if (code >= 0) return code;
    if (o.n_positional) return cli_usage_error("train", "unexpected argument '%s'", o.positional[0]);
    TrainConfig c;
    char config[sizeof o.spec.flags + 256];
    if ((code = configure(&o, &c, config, sizeof config)) >= 0) return code;
    struct sigaction sa = {.sa_handler = on_sigint, .sa_flags = SA_RESETHAND};  // a second Ctrl-C kills
    sigaction(SIGINT, &sa, NULL);
    Err e = {{0}};
    if (!writable(o.out, c.tokenizer != NULL, &e)) return cli_fail(&e);
    Trainer *t = trainer_new(&c, &e);
    if (!t) return cli_fail(&e);
    const Model *model = trainer_model(t);
    long long numbers = 0;  // what the program declared, whatever its sizes are called
    for (int i = 0; i < model->weights.n_entries; i++) numbers += shape_numel(&model->weights.entries[i].shape);
    if (!trainer_text(t)) {
        task_header(t, &c, numbers);
    } else if (!text_header(t, &c, numbers, &e)) {
        trainer_free(t);
        return cli_fail(&e);
    }
    const EvalPlan sch = {o.train.has_eval_every ? o.train.eval_every : 500, o.train.stop_at};
    const double t0 = now();
    const int how = loop(t, &c, &sch, &e);
    code = finish(t, o.out, how, now() - t0, &e);
    trainer_free(t);
    return code;
}
