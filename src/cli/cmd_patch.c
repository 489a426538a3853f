// cmd_patch.c: `patch`: activation patching from the command line (probe.h). Two teacher-forced
// passes, clean and corrupted, and the target token's logit restored piece by piece.
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "probe.h"

static const char patch_usage[] =
    "usage: stepformer patch --model FILE [--program LESSON] --clean TEXT --corrupt TEXT --target TEXT\n"
    "                        [--sweep resid|heads | --stage ID [--head H | --position P]] [--json]\n"
    "\n"
    "Runs the clean and the corrupted input (the same number of tokens), each teacher-forced on\n"
    "the target but its last token, and reads the logit of that last token at the last row. Then\n"
    "copies pieces of the clean pass into the corrupted one and re-runs what follows:\n"
    "  --sweep resid      each layer's output at each position (the default)\n"
    "  --sweep heads      each attention's heads, one at a time (their part of the context)\n"
    "  --stage ID         one stage's output; with --head H (from 1) only that head of an\n"
    "                     attention's context, with --position P (from 0) only that row\n"
    "The effect is (patched - corrupted) / (clean - corrupted): 1 when the piece carries the\n"
    "whole difference, 0 when it carries none. A classifier takes its class as --target. A\n"
    "decoder-only model (a GPT) reads each input followed by the target as one text, all but\n"
    "its last token, and is scored on that token.\n"
    "  --json             print the target, both logits and every effect as JSON\n"
    "  --trace-mb N       the memory the pass's outputs may hold, in MB (default: a quarter\n"
    "                     of this machine's memory). Past it, what is read only inside a block is\n"
    "                     dropped and recomputed when read, the same numbers\n"
    "  --widen-weights    hold an F16 or BF16 file's matrices as float32 (by default they stay\n"
    "                     2 bytes a number, widened tile by tile as they are used: the same results)\n";

typedef struct {
    Session s[2];  // clean, corrupted
    bool open[2];
    int token;     // the target token whose logit is read
} Runs;

// Opens one run on `input`, scored on the target's last token.
static bool open_run(Runs *r, int k, const CliOptions *o, const char *input, Err *e) {
    SessionSpec spec = o->spec;
    spec.input = input, spec.src_ids = NULL, spec.tgt_ids = NULL;
    if (!(r->open[k] = session_open_scored(&r->s[k], &spec, &r->token, e))) return false;
    if (r->s[k].model.note[0] && k == 0) fprintf(stderr, "stepformer: note: %s\n", r->s[k].model.note);
    return true;
}

// The columns' heading: the heads by number (as the window counts them, from 1), or the
// positions, with the clean run's source and target tokens under them (a layer of the encoder
// reads the source's, one of the decoder the target's).
static void print_columns(const Runs *r, const PatchSweep *p) {
    int cols = 0;
    for (int k = 0; k < p->n_rows; k++) cols = p->rows[k].n > cols ? p->rows[k].n : cols;
    printf("%-36s", p->sweep == SWEEP_HEADS ? "head:" : "position:");
    for (int c = 0; c < cols; c++) printf(" %6d", c + (p->sweep == SWEEP_HEADS));
    printf("\n");
    if (p->sweep == SWEEP_HEADS) return;
    const Session *s = &r->s[0];
    const char *names[2] = {"src", "tgt"}, *titles[2] = {"  source token (encoder rows):", "  target token (decoder rows):"};
    for (int side = 0; side < 2; side++) {
        const int slot = program_input(&s->lesson.program, names[side]);
        int len = 0;
        const float *ids = slot >= 0 ? interp_input_ids(s->it, slot, &len) : NULL;
        if (!ids) continue;
        const Vocab *v = side == 0 ? &s->model.src_vocab : &s->model.tgt_vocab;
        printf("%-36s", titles[side]);
        for (int c = 0; c < cols && c < len; c++) {
            const char *t = vocab_token(v, (int)ids[c]);
            printf(" %6s", !strcmp(t, " ") ? "' '" : t);
        }
        printf("\n");
    }
}

static void print_sweep(const Runs *r, const PatchSweep *p) {
    const Session *s = &r->s[0];
    printf("target %s '%s' at the last row: logit %.4f clean, %.4f corrupted\n", program_has_decoder(&s->lesson.program) ? "token" : "class",
           vocab_token(&s->model.tgt_vocab, r->token), p->target.clean, p->target.corrupt);
    printf("effect of patching each %s (1: restores the clean logit, 0: no change)\n",
           p->sweep == SWEEP_HEADS ? "head" : "layer's output at each position");
    print_columns(r, p);
    for (int k = 0; k < p->n_rows; k++) {
        const PatchRow *row = &p->rows[k];
        printf("%-36s", row->label);
        for (int c = 0; c < row->n; c++) printf(" %6.3f", row->effect[c]);
        printf("\n");
    }
    printf("attribution, gradient x (clean - corrupted): what patching would give were the rest linear\n");
    print_columns(r, p);
    for (int k = 0; k < p->n_rows; k++) {
        const PatchRow *row = &p->rows[k];
        printf("%-36s", row->label);
        for (int c = 0; c < row->n; c++) printf(" %6.3f", row->attribution[c]);
        printf("\n");
    }
}

static void print_json(const Runs *r, const PatchSweep *p) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "target_token", r->token);
    cJSON_AddStringToObject(root, "target_text", vocab_token(&r->s[0].model.tgt_vocab, r->token));
    cJSON_AddNumberToObject(root, "clean_logit", p->target.clean);
    cJSON_AddNumberToObject(root, "corrupt_logit", p->target.corrupt);
    cJSON_AddStringToObject(root, "sweep", sweep_names[p->sweep]);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (int k = 0; k < p->n_rows; k++) {
        cJSON *row = cJSON_CreateObject(), *eff = cJSON_AddArrayToObject(row, "effects"), *lg = cJSON_AddArrayToObject(row, "logits");
        cJSON *att = cJSON_AddArrayToObject(row, "attribution");
        cJSON_AddStringToObject(row, "label", p->rows[k].label);
        cJSON_AddStringToObject(row, "stage", interp_stage(r->s[0].it, p->rows[k].stage)->id);
        for (int c = 0; c < p->rows[k].n; c++) {
            cJSON_AddItemToArray(eff, cJSON_CreateNumber(p->rows[k].effect[c]));
            cJSON_AddItemToArray(lg, cJSON_CreateNumber(p->rows[k].logit[c]));
            cJSON_AddItemToArray(att, cJSON_CreateNumber(p->rows[k].attribution[c]));
        }
        cJSON_AddItemToArray(rows, row);
    }
    char *text = cJSON_PrintUnformatted(root);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(root);
}

static bool run_patch(Runs *r, const CliOptions *o, Err *e) {
    if (!open_run(r, 0, o, o->clean, e) || !open_run(r, 1, o, o->corrupt, e)) return false;
    if (r->s[0].run.S != r->s[1].run.S)
        return err_set(e, "patching needs runs of the same length: --clean has %d tokens, --corrupt has %d", r->s[0].run.S,
                       r->s[1].run.S);
    if (o->stage) {
        PatchTarget t;
        double logit;
        if (!patch_target(&t, r->s[0].it, r->token, e)) return false;
        const double corrupt = interp_output(r->s[1].it, t.scored)[(size_t)t.row * shape_last(&interp_stage(r->s[1].it, t.scored)->shape) + t.token];
        if (!patch_one(r->s[0].it, r->s[1].it, o->stage, o->head - 1, o->position - 1, r->token, &logit, NULL, e)) return false;
        printf(o->json ? "{\"clean_logit\":%.9g,\"corrupt_logit\":%.9g,\"patched_logit\":%.9g,\"effect\":%.9g}\n"
                       : "logit: clean %.6g, corrupted %.6g, patched %.6g; effect %.4f\n",
               t.clean, corrupt, logit, (logit - corrupt) / (t.clean - corrupt));
        return true;
    }
    Sweep sweep = SWEEP_RESID;
    if (o->sweep && !strcmp(o->sweep, "heads")) sweep = SWEEP_HEADS;
    else if (o->sweep && strcmp(o->sweep, "resid")) return err_set(e, "--sweep is resid or heads, not '%s'", o->sweep);
    PatchSweep *p = malloc(sizeof *p);
    if (!p) return err_code(e, ERR_MEMORY, "out of memory");
    const bool ok = patch_sweep(p, r->s[0].it, r->s[1].it, sweep, r->token, e);
    if (ok && o->json) print_json(r, p);
    else if (ok) print_sweep(r, p);
    free(p);
    return ok;
}

int cmd_patch(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, MODEL_OPTS | OPT_TARGET | OPT_JSON | OPT_PROBE, patch_usage, &o);
    if (code >= 0 || (code = cli_need_model(&o, "patch")) >= 0) return code;
    if (!o.clean || !o.corrupt || !o.spec.target)
        return cli_usage_error("patch", "give --clean TEXT, --corrupt TEXT and --target TEXT");
    if ((o.head || o.position) && !o.stage) return cli_usage_error("patch", "--head and --position go with --stage ID");
    if (o.stage && o.sweep) return cli_usage_error("patch", "give --sweep or --stage, not both");
    Runs r = {0};
    Err e = {{0}};
    const bool ok = run_patch(&r, &o, &e);
    for (int k = 0; k < 2; k++)
        if (r.open[k]) session_close(&r.s[k]);
    return ok ? EXIT_OK : cli_fail(&e);
}
