// cmd_run.c: `run` (greedy decoding) and `stages` (list them); `trace` is in cmd_trace.c.
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char run_usage[] =
    "usage: stepformer run --model FILE (--input TEXT | --src-ids 3,4,5) [--max-len N] [--json]\n"
    "\n"
    "Greedy decoding: the encoder reads the source once, then the decoder runs once per new\n"
    "token, starting from bos and stopping at eos or after N tokens (default 64). A decoder-only\n"
    "program (--program; a decode loop and no encoder) continues its prompt, the --input or\n"
    "--src-ids: output_ids holds only the new tokens.\n"
    "\n"
    "  --model FILE       weights (.safetensors), or a model folder as the hub ships it\n"
    "  --input TEXT       source text, split as the model's vocabulary says (characters or words)\n"
    "  --src-ids LIST     source token ids, comma separated\n"
    "  --max-len N        generate at most N tokens\n"
    "  --temperature T    sample from softmax(logits / T) instead of taking the argmax (T > 0;\n"
    "                     greedy decoding, the default, is temperature 0)\n"
    "  --top-k K          sample only among the K likeliest tokens\n"
    "  --top-p P          sample only among the likeliest tokens whose probabilities reach P\n"
    "  --seed N           the sampler's seed (default 0): the same seed, the same tokens\n"
    "  --beam K           beam search with K hypotheses, scored by mean log-probability\n"
    "  --no-cache         the plain decoder: every round runs over every position again. By\n"
    "                     default each round computes only the new position (the cached\n"
    "                     decoder), the same bits; a stage it cannot cache runs whole\n"
    "  --json             print {\"output_ids\": [...], \"output_text\": \"...\", \"stop\": ...,\n"
    "                     \"input\": \"...\", \"input_ids\": [...]}; a model folder's output_ids end\n"
    "                     with the eos that stopped them, as transformers' generate() returns them\n"
    "  --trace-mb N       the memory the pass's outputs may hold, in MB (default: a quarter\n"
    "                     of this machine's memory). Past it, what is read only inside a block is\n"
    "                     dropped and recomputed when read, the same numbers\n"
    "  --widen-weights    hold an F16 or BF16 file's matrices as float32 (by default they stay\n"
    "                     2 bytes a number, widened tile by tile as they are used: the same results)\n"
    "  --program FILE     run this lesson's program instead of the standard one\n"
    "For files without metadata: --nhead N, --norm-first, --layer-norm torch|annotated,\n"
    "  --activation relu|gelu, --eps X, --bos ID, --eos ID, --pad ID\n";

static const char stages_usage[] =
    "usage: stepformer stages --model FILE [--src-ids LIST | --input TEXT] [--tgt-ids LIST]\n"
    "\n"
    "Lists the stages of one teacher-forced pass in order: index, id, output shape, op and the\n"
    "program line. Shapes are for the given inputs (by default one source and one target token).\n";

int cli_need_model(const CliOptions *o, const char *cmd) {
    if (o->n_positional) return cli_usage_error(cmd, "unexpected argument '%s'", o->positional[0]);
    if (!o->spec.model_path && !o->spec.program_path)  // a lesson's program brings its lesson's model
        return cli_usage_error(cmd, "--model FILE is required (or --program LESSON, which names its model)");
    return -1;
}

static int print_json(const Session *s, const float *ids, int n, StopReason why, const char *text) {
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "output_ids");
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(ids[i]));
    // A model folder's ids end with the eos that stopped them, as transformers' generate() returns them.
    if (s->model.family[0] && why == STOP_EOS) cJSON_AddItemToArray(arr, cJSON_CreateNumber(s->model.cfg.eos_id.id));
    cJSON_AddStringToObject(root, "output_text", text);
    cJSON_AddStringToObject(root, "stop", stop_names[why]);
    cJSON_AddStringToObject(root, "input", s->input_text);
    cJSON *in = cJSON_AddArrayToObject(root, "input_ids");  // the prompt or source as the model read it
    for (int i = 0; i < s->run.S; i++) cJSON_AddItemToArray(in, cJSON_CreateNumber(s->src[i]));
    char *out = cJSON_PrintUnformatted(root);
    printf("%s\n", out);
    free(out);
    cJSON_Delete(root);
    return EXIT_OK;
}

// A program without a decoder generates nothing: its published outputs are the result (a
// classifier's logits: each value, and which class is largest, by name when the model has them).
static void print_outputs(const Session *s, bool json) {
    int n_out;
    const ProgramOutput *outs = interp_outputs(s->it, &n_out);
    cJSON *root = json ? cJSON_CreateObject() : NULL;
    for (int k = 0; k < n_out; k++) {
        const Stage *st = interp_stage(s->it, outs[k].stage);
        const float *v = interp_output(s->it, outs[k].stage);
        const int64_t n = shape_numel(&st->shape);
        char sh[64];
        if (json) {
            cJSON *arr = cJSON_AddArrayToObject(root, outs[k].name);
            for (int64_t i = 0; i < n && i < 4096; i++) cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
            continue;
        }
        printf("%s %s", outs[k].name, shape_str(&st->shape, sh, sizeof sh));
        if (st->shape.ndim == 1) {
            const int best = row_argmax(v, (int)n);
            for (int i = 0; i < n; i++) printf(" %.6g", (double)v[i]);
            const Vocab *names = &s->model.tgt_vocab;  // a trained classifier keeps its class names there
            if (s->model.has_vocab && names->n == n) printf("  (largest: %d, %s)", best, vocab_token(names, best));
            else printf("  (largest: %d)", best);
        }
        printf("\n");
    }
    if (!json) return;
    cJSON_AddStringToObject(root, "input", s->input_text);
    char *out = cJSON_PrintUnformatted(root);
    printf("%s\n", out);
    free(out);
    cJSON_Delete(root);
}

// The cached decoder is the default; where it saved nothing, say why.
static void note_uncached(const Session *s) {
    int copied = 0, rounds = 0;
    for (int i = 0; i < interp_n_done(s->it); i++) {
        copied += interp_stage_rows(s->it, i) != ROWS_WHOLE;
        rounds = interp_stage(s->it, i)->step > rounds ? interp_stage(s->it, i)->step : rounds;
    }
    if (copied || rounds == 0) return;  // it cached, or there was one round only
    fprintf(stderr, "stepformer: note: every round ran whole, not cached: %s\n",
            s->run.choice.beam >= 2 ? "beam search's hypotheses change rows from round to round"
                                    : "no stage's earlier rows are sure to stay the same (a decoder without its "
                                      "causal mask, or a batch)");
}

int cmd_run(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, MODEL_OPTS | OPT_INPUT | OPT_SRC_IDS | OPT_MAX_LEN | OPT_JSON | OPT_DECODE,
                         run_usage, &o);
    if (code >= 0 || (code = cli_need_model(&o, "run")) >= 0) return code;
    if (!cli_take_choice(&o, "run")) return EXIT_FAIL;
    if (!o.spec.input && !o.spec.src_ids) return cli_usage_error("run", "give --input TEXT or --src-ids LIST");
    o.spec.greedy = true, o.spec.cached = !o.no_cache;
    if (!o.spec.max_len) o.spec.max_len = 64;
    Session s;
    Err e = {{0}};
    if (!cli_open_session(&s, &o.spec, &e) || !interp_run(s.it, &e)) {
        if (s.it) session_close(&s);
        return cli_fail(&e);
    }
    if (!program_has_decoder(&s.lesson.program)) {
        print_outputs(&s, o.json);
        session_close(&s);
        return EXIT_OK;
    }
    if (o.spec.cached) note_uncached(&s);
    int n;
    StopReason why;
    const float *ids = interp_generated(s.it, &n, &why);
    char text[8192];
    vocab_decode(&s.model.tgt_vocab, ids, n, text, sizeof text);
    if (why == STOP_POSITIONS)  // said, and what was made is printed
        fprintf(stderr, "stepformer: note: generation stopped after %d token%s, at the model's last position (%d)\n", n,
                n == 1 ? "" : "s", model_max_len(&s.model));
    if (o.json) print_json(&s, ids, n, why, text);
    else printf("%s\n", text);
    session_close(&s);
    return EXIT_OK;
}

int cmd_stages(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, MODEL_OPTS | OPT_INPUT | OPT_SRC_IDS | OPT_TGT_IDS,
                         stages_usage, &o);
    if (code >= 0 || (code = cli_need_model(&o, "stages")) >= 0) return code;
    if (!o.spec.input && !o.spec.src_ids) o.spec.src_ids = "0";
    if (!o.spec.tgt_ids) o.spec.tgt_ids = "0";
    Session s;
    Err e = {{0}};
    if (!cli_open_session(&s, &o.spec, &e)) return cli_fail(&e);
    for (int i = 0; i < interp_n_stages(s.it); i++) cli_print_stage_line(stdout, s.it, i);
    session_close(&s);
    return EXIT_OK;
}
