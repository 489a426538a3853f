// cli_common.c: option parsing and printing shared by the command-line modes.
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "text.h"
#include "window.h"

static const struct {
    struct option opt;
    unsigned bit;
} options[] = {
    {{"model", required_argument, 0, 'm'}, OPT_MODEL},
    {{"input", required_argument, 0, 'i'}, OPT_INPUT},
    {{"src-ids", required_argument, 0, 's'}, OPT_SRC_IDS},
    {{"target", required_argument, 0, 't'}, OPT_TARGET},
    {{"tgt-ids", required_argument, 0, 'T'}, OPT_TGT_IDS},
    {{"max-len", required_argument, 0, 'n'}, OPT_MAX_LEN},
    {{"trace-mb", required_argument, 0, 1040}, OPT_TRACE_MB},
    {{"widen-weights", no_argument, 0, 1041}, OPT_TRACE_MB},
    {{"json", no_argument, 0, 'j'}, OPT_JSON},
    {{"dump", required_argument, 0, 'd'}, OPT_DUMP},
    {{"to", required_argument, 0, 'o'}, OPT_TO},
    {{"print", required_argument, 0, 'p'}, OPT_PRINT},
    {{"program", required_argument, 0, 'P'}, OPT_PROGRAM | OPT_INIT | OPT_TRAIN | OPT_EXPORT},
    {{"repeat", required_argument, 0, 'r'}, OPT_REPEAT},
    {{"bos", required_argument, 0, 'b'}, OPT_TOKEN_FLAGS},
    {{"eos", required_argument, 0, 'e'}, OPT_TOKEN_FLAGS},
    {{"pad", required_argument, 0, 'a'}, OPT_TOKEN_FLAGS},
    {{"nhead", required_argument, 0, 'H'}, OPT_MODEL_FLAGS},
    {{"norm-first", no_argument, 0, 'N'}, OPT_MODEL_FLAGS},
    {{"layer-norm", required_argument, 0, 'L'}, OPT_MODEL_FLAGS},
    {{"activation", required_argument, 0, 'A'}, OPT_MODEL_FLAGS},
    {{"eps", required_argument, 0, 'E'}, OPT_MODEL_FLAGS},
    {{"out", required_argument, 0, 'O'}, OPT_INIT | OPT_EXPORT | OPT_TRAIN},
    {{"config", required_argument, 0, 'C'}, OPT_INIT | OPT_MODEL_FLAGS},
    {{"seed", required_argument, 0, 'S'}, OPT_INIT | OPT_TRAIN | OPT_DECODE | OPT_EXAMPLES},
    {{"count", required_argument, 0, 1037}, OPT_EXAMPLES},
    {{"text", required_argument, 0, 1039}, OPT_TOKENIZE},
    {{"temperature", required_argument, 0, 1032}, OPT_DECODE},
    {{"top-k", required_argument, 0, 1033}, OPT_DECODE},
    {{"top-p", required_argument, 0, 1034}, OPT_DECODE},
    {{"beam", required_argument, 0, 1035}, OPT_DECODE},
    {{"no-cache", no_argument, 0, 1036}, OPT_DECODE},
    {{"task", required_argument, 0, 1000}, OPT_TRAIN | OPT_EXAMPLES},
    {{"steps", required_argument, 0, 1001}, OPT_TRAIN},
    {{"batch", required_argument, 0, 1002}, OPT_TRAIN},
    {{"lr", required_argument, 0, 1003}, OPT_TRAIN},
    {{"warmup", required_argument, 0, 1004}, OPT_TRAIN},
    {{"label-smoothing", required_argument, 0, 1005}, OPT_TRAIN},
    {{"d-model", required_argument, 0, 1006}, OPT_TRAIN},
    {{"layers", required_argument, 0, 1007}, OPT_TRAIN},
    {{"enc-layers", required_argument, 0, 1008}, OPT_TRAIN},
    {{"dec-layers", required_argument, 0, 1009}, OPT_TRAIN},
    {{"d-ff", required_argument, 0, 1010}, OPT_TRAIN},
    {{"init", required_argument, 0, 1011}, OPT_TRAIN},
    {{"eval-every", required_argument, 0, 1012}, OPT_TRAIN},
    {{"stop-at", required_argument, 0, 1013}, OPT_TRAIN},
    {{"schedule", required_argument, 0, 1014}, OPT_TRAIN},
    {{"vocab", required_argument, 0, 'V'}, OPT_INIT},
    {{"record", required_argument, 0, 'R'}, OPT_WINDOW},
    {{"replay", required_argument, 0, 'Y'}, OPT_WINDOW},
    {{"size", required_argument, 0, 'z'}, OPT_WINDOW | OPT_EXPORT},
    {{"headless", no_argument, 0, 'l'}, OPT_WINDOW},
    {{"view", required_argument, 0, 'w'}, OPT_EXPORT},
    {{"stages", required_argument, 0, 'g'}, OPT_EXPORT},
    {{"html", required_argument, 0, 1027}, OPT_EXPORT},
    {{"pdf", required_argument, 0, 1028}, OPT_EXPORT},
    {{"whole-window", no_argument, 0, 1038}, OPT_EXPORT},
    {{"ui", no_argument, 0, 'u'}, OPT_REPEAT},
    {{"train", no_argument, 0, 'x'}, OPT_REPEAT},
    {{"only", required_argument, 0, 'y'}, OPT_REPEAT},
    {{"scale", no_argument, 0, 'Z'}, OPT_REPEAT},
    {{"no-peer", no_argument, 0, 'W'}, OPT_REPEAT},
    {{"labels", required_argument, 0, 1015}, OPT_GRADS},
    {{"grads", required_argument, 0, 1016}, OPT_GRADS},
    {{"gradcheck", required_argument, 0, 1017}, OPT_GRADS},
    {{"backward", no_argument, 0, 1018}, OPT_EXPORT},
    {{"backward-mistake", required_argument, 0, 1019}, OPT_GRADS},
    {{"lens", no_argument, 0, 1020}, OPT_GRADS},
    {{"clean", required_argument, 0, 1021}, OPT_PROBE},
    {{"corrupt", required_argument, 0, 1022}, OPT_PROBE},
    {{"sweep", required_argument, 0, 1023}, OPT_PROBE},
    {{"stage", required_argument, 0, 1024}, OPT_PROBE},
    {{"head", required_argument, 0, 1025}, OPT_PROBE},
    {{"position", required_argument, 0, 1026}, OPT_PROBE},
    {{"against-correct", no_argument, 0, 1029}, OPT_AGAINST},
    {{"questions", no_argument, 0, 1030}, OPT_TO},
    {{"presenter", no_argument, 0, 1031}, OPT_WINDOW},
    {{"data", required_argument, 0, 1050}, OPT_TRAIN},
    {{"block", required_argument, 0, 1051}, OPT_TRAIN},
    {{"shuffle", no_argument, 0, 1052}, OPT_TRAIN},
    {{"tokenizer", required_argument, 0, 1053}, OPT_TRAIN},
    {{"dtype", required_argument, 0, 1054}, OPT_TRAIN | OPT_INIT},
    {{"help", no_argument, 0, 'h'}, 0},
};
enum { N_OPTIONS = sizeof options / sizeof options[0] };

bool cli_open_session(Session *s, const SessionSpec *spec, Err *e) {
    if (!session_open(s, spec, e)) return false;
    if (s->model.note[0]) fprintf(stderr, "stepformer: note: %s\n", s->model.note);
    return true;
}

int cli_fail(const Err *e) {
    fprintf(stderr, "stepformer: %s\n", e->msg);
    return EXIT_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    const bool bare = !strcmp(cmd, "stepformer");  // the window, opened with no command
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, bare ? "stepformer: " : "stepformer %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    if (bare) fprintf(stderr, "\n(see stepformer --help-window)\n");
    else fprintf(stderr, "\n(see stepformer %s --help)\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

enum { TRACE_MB_MOST = 1 << 30 };  // --trace-mb's ceiling (a petabyte): past any machine, short of overflow

static bool parse_whole(const char *s, long lo, long hi, long *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

// Options whose value is taken as it is. Returns false if c is not one of them.
static bool take_plain(CliOptions *o, int c, const char *arg) {
    SessionSpec *s = &o->spec;
    switch (c) {
    case 'm': s->model_path = arg; return true;
    case 'i': s->input = arg; return true;
    case 's': s->src_ids = arg; return true;
    case 't': s->target = arg; return true;
    case 'T': s->tgt_ids = arg; return true;
    case 'j': o->json = true; return true;
    case 'd': o->dump = arg; return true;
    case 'o': o->to = arg; return true;
    case 'p': o->print = arg; return true;
    case 'P': s->program_path = arg; return true;
    case 'N': {
        const size_t k = strlen(s->flags);
        snprintf(s->flags + k, sizeof s->flags - k, "%snorm_first=true", k ? " " : "");
        return true;
    }
    case 'O': o->out = arg; return true;
    case 'R': o->record = arg; return true;
    case 'Y': o->replay = arg; return true;
    case 'l': o->headless = true; return true;
    case 'u': o->ui_bench = true; return true;
    case 'x': o->train_bench = true; return true;
    case 'y': o->only = arg; return true;
    case 'Z': o->scale_bench = true; return true;
    case 'W': o->no_peer = true; return true;
    case 'w': o->view = arg; return true;
    case 'g': o->stages = arg; return true;
    case 'C': s->config = arg; return true;
    case 1015: o->labels = arg; return true;
    case 1016: o->grads = arg; return true;
    case 1017: o->gradcheck = arg; return true;
    case 1018: o->backward = true; return true;
    case 1027: o->html = arg; return true;
    case 1028: o->pdf = arg; return true;
    case 1038: o->whole_window = true; return true;
    case 1019: o->backward_mistake = arg; return true;
    case 1020: o->lens = true; return true;
    case 1021: o->clean = arg; return true;
    case 1022: o->corrupt = arg; return true;
    case 1023: o->sweep = arg; return true;
    case 1024: o->stage = arg; return true;
    case 1029: o->against = true; return true;
    case 1030: o->questions = true; return true;
    case 1031: o->presenter = true; return true;
    case 1036: o->no_cache = true; return true;
    case 1050: o->train.data = arg; return true;
    case 1052: o->train.shuffle = true; return true;
    case 1053: o->train.tokenizer = arg; return true;
    case 1054: o->train.dtype = arg; return true;
    }
    return false;
}

static bool parse_real(const char *s, float lo, float hi, float *out) {
    char *end;
    float v = strtof(s, &end);
    if (end == s || *end || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

// train's options (codes 1000 and up). Returns false with *code set for a bad value.
static bool take_train(CliOptions *o, int c, const char *cmd, const char *arg, int *code) {
    TrainFlags *t = &o->train;
    static const char *const names[] = {"--task", "--steps", "--batch", "--lr", "--warmup", "--label-smoothing",
                                        "--d-model", "--layers", "--enc-layers", "--dec-layers", "--d-ff",
                                        "--init", "--eval-every", "--stop-at"};
    int *ints[] = {NULL, &t->steps, &t->batch, NULL, &t->warmup, NULL, &t->d_model, &t->layers, &t->enc_layers,
                   &t->dec_layers, &t->d_ff, NULL, &t->eval_every, NULL};
    const int k = c - 1000;
    long v;
    if (c == 1000) return t->task = arg, true;
    if (c == 1011) return t->init = arg, true;
    if (c == 1014) return t->schedule = arg, true;
    if (c == 1003 && parse_real(arg, 1e-7f, 10.0f, &t->lr)) return true;
    if (c == 1005 && parse_real(arg, 0.0f, 0.99f, &t->label_smoothing)) return t->has_label_smoothing = true;
    if (c == 1013 && parse_real(arg, 0.0f, 1.0f, &t->stop_at)) return true;
    if (ints[k] && parse_whole(arg, k == 4 || k == 12 || k == 7 || k == 8 || k == 9 ? 0 : 1, 10000000, &v)) {
        *ints[k] = (int)v;
        if (k == 4) t->has_warmup = true;
        if (k == 12) t->has_eval_every = true;
        return true;
    }
    *code = cli_usage_error(cmd, "%s: '%s' is not a valid value", names[k], arg);
    return false;
}

// The flags that stand for configuration items (token ids, heads, LayerNorm, activation):
// appended to the spec's flags text, where they meet --config and the file's metadata.
static bool take_model_flag(CliOptions *o, int c, const char *cmd, const char *arg, int *code) {
    static const struct {
        int c;
        const char *key, *flag, *want;
        bool number;
    } flags[] = {
        {'b', "bos_id", "--bos", "a token id", true}, {'e', "eos_id", "--eos", "a token id", true},
        {'a', "pad_id", "--pad", "a token id", true},
        {'H', "nhead", "--nhead", "a whole number of at least 1", true},
        {'L', "layer_norm", "--layer-norm", "'torch' or 'annotated'", false},
        {'A', "activation", "--activation", "'relu' or 'gelu'", false},
        {'E', "layer_norm_eps", "--eps", "a non-negative number", false},
    };
    char *text = o->spec.flags;
    const size_t k = strlen(text), room = sizeof o->spec.flags - k;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (flags[i].c != c) continue;
        long v;
        char *end;
        bool ok = flags[i].number ? parse_whole(arg, c == 'H' ? 1 : 0, 1 << 24, &v)
                : c == 'L'        ? !strcmp(arg, "torch") || !strcmp(arg, "annotated")
                : c == 'A'        ? !strcmp(arg, "relu") || !strcmp(arg, "gelu")
                                  : (strtof(arg, &end) >= 0 && end != arg && !*end);
        if (!ok || (int)room <= snprintf(text + k, room, "%s%s=%s", k ? " " : "", flags[i].key, arg)) {
            text[k] = '\0';
            *code = cli_usage_error(cmd, "%s needs %s, not '%s'", flags[i].flag, flags[i].want, arg);
            return false;
        }
        return true;
    }
    return false;
}

// --temperature, --top-k, --top-p, --beam: numbers here; their ranges are checked when the
// vocabulary is known (decode_check), each with its own message.
static bool take_choice_flag(CliOptions *o, int c, const char *cmd, const char *arg, int *code) {
    static const char *const names[] = {"--temperature", "--top-k", "--top-p", "--beam"};
    DecodeChoice *d = &o->spec.choice;
    char *end;
    const double x = strtod(arg, &end);
    const bool number = end != arg && !*end && isfinite(x), whole = number && fabs(x) <= 1 << 24 && x == floor(x);
    unsigned *f = &o->spec.choice_fields;
    if (c == 1032 && number) return d->temperature = x, *f |= CHOICE_TEMPERATURE, o->has_temperature = true;
    if (c == 1034 && number) return d->top_p = x, *f |= CHOICE_TOP_P, o->has_top_p = true;
    if ((c == 1033 || c == 1035) && whole) {
        if (c == 1033) d->top_k = (int)x, *f |= CHOICE_TOP_K;
        else d->beam = (int)x, *f |= CHOICE_BEAM;
        return true;
    }
    *code = cli_usage_error(cmd, "%s needs %s, not '%s'", names[c - 1032], c == 1033 || c == 1035 ? "a whole number" : "a number", arg);
    return false;
}

bool cli_take_choice(CliOptions *o, const char *cmd) {
    if (o->has_seed) o->spec.choice.seed = (uint64_t)o->seed, o->spec.choice_fields |= CHOICE_SEED;
    const DecodeChoice *d = &o->spec.choice;
    const char *bad = o->has_temperature && !(d->temperature > 0) ? "--temperature must be above 0: greedy decoding, the default, is temperature 0 (leave the flag out)"
                    : d->top_k < 0 ? "--top-k must be at least 1" : d->beam < 0 || d->beam == 1 ? "--beam must be at least 2 (1 is greedy decoding, the default)"
                    : o->has_top_p && !(d->top_p > 0 && d->top_p <= 1) ? "--top-p must be in (0, 1]: the share of probability kept"
                    : NULL;
    if (bad) fprintf(stderr, "stepformer %s: %s\n", cmd, bad);
    return !bad;
}

// Options whose value is checked; false for a bad value (message printed, *code set).
static bool take_value(CliOptions *o, int c, const char *cmd, const char *arg, int *code) {
    long v;
    if (take_plain(o, c, arg)) return true;
    if (c >= 1000 && c <= 1014) return take_train(o, c, cmd, arg, code);  // train's codes
    if (c > 0 && c < 128 && strchr("beaHLAE", c)) return take_model_flag(o, c, cmd, arg, code);
    switch (c) {
    case 'z': {
        int used = 0;
        if (sscanf(arg, "%dx%d%n", &o->width, &o->height, &used) == 2 && !arg[used] && o->width >= WINDOW_MIN_W &&
            o->height >= WINDOW_MIN_H && o->width <= 8192 && o->height <= 8192)
            return true;
        *code = cli_usage_error(cmd, "--size is WIDTHxHEIGHT (at least %dx%d), not '%s'", WINDOW_MIN_W,
                                WINDOW_MIN_H, arg);
        return false;
    }
    case 'S':
        if (parse_whole(arg, 0, 1L << 62, &o->seed)) return o->has_seed = true;
        *code = cli_usage_error(cmd, "--seed needs a whole number, not '%s'", arg);
        return false;
    case 'V':
        if (!strcmp(arg, "chars")) return o->vocab_chars = true;
        *code = cli_usage_error(cmd, "--vocab: only 'chars' is known, not '%s'", arg);
        return false;
    case 'n':
        if (parse_whole(arg, 1, 100000, &v)) return o->spec.max_len = (int)v, true;
        *code = cli_usage_error(cmd, "--max-len needs a whole number of at least 1, not '%s'", arg);
        return false;
    case 1041: return o->spec.widen_weights = true;
    case 1040:
        if (parse_whole(arg, 1, TRACE_MB_MOST, &v)) return o->spec.trace_mb = v, true;
        *code = cli_usage_error(cmd, "--trace-mb needs a whole number of megabytes of at least 1, not '%s'", arg);
        return false;
    case 'r':
        if (parse_whole(arg, 1, 100000, &v)) return o->repeat = (int)v, true;
        *code = cli_usage_error(cmd, "--repeat needs a whole number of at least 1, not '%s'", arg);
        return false;
    case 1032: case 1033: case 1034: case 1035: return take_choice_flag(o, c, cmd, arg, code);
    case 1039: o->text = arg; return true;
    case 1037:
        if (parse_whole(arg, 1, 10000000, &v)) return o->count = (int)v, true;
        *code = cli_usage_error(cmd, "--count needs a whole number from 1 to 10000000, not '%s'", arg);
        return false;
    case 1025:
        if (parse_whole(arg, 1, 4096, &v)) return o->head = (int)v, true;
        *code = cli_usage_error(cmd, "--head needs a head number from 1, not '%s'", arg);
        return false;
    case 1026:
        if (parse_whole(arg, 0, 1 << 20, &v)) return o->position = (int)v + 1, true;
        *code = cli_usage_error(cmd, "--position needs a position from 0, not '%s'", arg);
        return false;
    case 1051:
        if (parse_whole(arg, 1, TEXT_MAX_BLOCK, &v)) return o->train.block = (int)v, true;
        *code = cli_usage_error(cmd, "--block needs a whole number of characters from 1 to %d, not '%s'", TEXT_MAX_BLOCK,
                                arg);
        return false;
    }
    return false;
}

int cli_parse(int argc, char **argv, unsigned allowed, const char *usage, CliOptions *o) {
    memset(o, 0, sizeof *o);
    const char *cmd = argv[0];
    struct option longopts[N_OPTIONS + 1];
    int n = 0;
    for (int i = 0; i < N_OPTIONS; i++)
        if (options[i].bit == 0 || (options[i].bit & allowed)) longopts[n++] = options[i].opt;
    longopts[n] = (struct option){0, 0, 0, 0};
    optind = 1;
    opterr = 0;
    int c, code = EXIT_USAGE;
    while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return EXIT_OK;
        }
        if (c == '?') return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        if (c == ':') return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        if (!take_value(o, c, cmd, optarg, &code)) return code;
    }
    for (int i = optind; i < argc; i++) {
        if (o->n_positional == 4) return cli_usage_error(cmd, "too many arguments");
        o->positional[o->n_positional++] = argv[i];
    }
    return -1;
}

// The tokens that label axis `axis` of a stage's output, or NULL.
static const Vocab *axis_vocab(const Interp *it, const Stage *st, int axis, const float **ids,
                               int *len) {
    int slot = st->axes.slot[axis];
    if (slot == AXIS_NONE) return NULL;
    *ids = interp_input_ids(it, slot, len);
    const Program *p = interp_program(it);
    const Model *m = interp_model(it);
    return strcmp(p->inputs[slot], "src") == 0 ? &m->src_vocab : &m->tgt_vocab;
}

// A token as the terminal shows it: a space as the visible mark \u2423, so a column of spaces
// does not read as a column of nothing.
static const char *shown(const char *token) { return strcmp(token, " ") ? token : "\xe2\x90\xa3"; }

// Prints s in `width` terminal columns (cut, or padded on the left or right): counted in
// characters, not bytes, so the space mark lines up.
static void print_cell(FILE *out, const char *s, int width, bool right) {
    int cols = 0;
    size_t bytes = 0;
    for (; s[bytes] && cols < width; cols++) {
        bytes++;
        while ((s[bytes] & 0xC0) == 0x80) bytes++;
    }
    if (right) fprintf(out, "%*s", width - cols, "");
    fwrite(s, 1, bytes, out);
    if (!right) fprintf(out, "%*s", width - cols, "");
}

static void print_matrix(FILE *out, const float *x, int R, int C, const Vocab *rv,
                         const float *rids, int rlen) {
    for (int r = 0; r < R; r++) {
        if (rv && r < rlen) fputs("  ", out), print_cell(out, shown(vocab_token(rv, (int)rids[r])), 10, false);
        else fprintf(out, "  [%3d]     ", r);
        for (int c = 0; c < C; c++) fprintf(out, " %9.4f", (double)x[(size_t)r * C + c]);
        fputc('\n', out);
    }
}

// The column labels: the tokens of the last axis, when it has them; for the generator's scores,
// the target vocabulary they score.
static void print_columns(FILE *out, const Interp *it, const Stage *st) {
    const float *ids = NULL;
    int len = 0;
    const Vocab *v = axis_vocab(it, st, st->shape.ndim - 1, &ids, &len);
    const Vocab *tv = &interp_model(it)->tgt_vocab;
    const bool vocab = !v && st->where.part == PART_GENERATOR && tv->n == shape_last(&st->shape);
    if (!vocab && (!v || len != shape_last(&st->shape))) return;
    fprintf(out, "  %-10s", "");
    for (int c = 0; c < (vocab ? tv->n : len); c++)
        fputc(' ', out), print_cell(out, shown(vocab_token(vocab ? tv : v, vocab ? c : (int)ids[c])), 9, true);
    fputc('\n', out);
}

void cli_print_tensor(FILE *out, const Interp *it, int i) {
    const Stage *st = interp_stage(it, i);
    const float *x = interp_output(it, i);
    char sh[64];
    fprintf(out, "%s %s  (%s)\n", st->id, shape_str(&st->shape, sh, sizeof sh), op_info[st->op].name);
    if (!x) {
        fprintf(out, "  (not run yet)\n");
        return;
    }
    const int nd = st->shape.ndim;
    if (st->kind == TK_IDS) {  // argmax over the generator: target tokens
        const Vocab *v = &interp_model(it)->tgt_vocab;
        for (int k = 0; k < st->shape.dim[0]; k++)
            fprintf(out, "  %d %s\n", (int)x[k], shown(vocab_token(v, (int)x[k])));
        return;
    }
    const int C = st->shape.dim[nd - 1], R = nd >= 2 ? st->shape.dim[nd - 2] : 1;
    const int B = (int)(shape_numel(&st->shape) / ((long)R * C));
    const float *rids = NULL;
    int rlen = 0;
    const Vocab *rv = nd >= 2 ? axis_vocab(it, st, nd - 2, &rids, &rlen) : NULL;
    print_columns(out, it, st);
    for (int b = 0; b < B; b++) {
        if (B > 1) fprintf(out, " [%d]\n", b);
        print_matrix(out, x + (size_t)b * R * C, R, C, rv, rids, rlen);
    }
}

void cli_print_stage_line(FILE *out, const Interp *it, int i) {
    const Stage *st = interp_stage(it, i);
    char sh[64];
    fprintf(out, "%4d  %-48s %-16s %-13s line %d\n", i, st->id, shape_str(&st->shape, sh, sizeof sh),
            op_info[st->op].name, st->line);
}

int cli_find_stage(const Interp *it, const char *id, const char *what, Err *e) {
    bool by_round;
    const int k = interp_find_stage(it, id, what, &by_round, e);
    if (k >= 0 && by_round)
        fprintf(stderr, "stepformer: %s: the %s, %s\n", id, interp_done(it) ? "last round's" : "latest round's so far",
                interp_stage(it, k)->id);
    return k;
}

bool cli_dtype(const char *cmd, const char *arg, StDtype *out, int *code) {
    for (int i = ST_F32; i <= ST_BF16; i++)
        if (!strcasecmp(arg, st_dtype_names[i])) return *out = (StDtype)i, true;
    *code = cli_usage_error(cmd, "--dtype is f32, f16 or bf16, not '%s'", arg);
    return false;
}
