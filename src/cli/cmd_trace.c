// cmd_trace.c: `trace`: one teacher-forced pass, its stages dumped or listed; with --labels,
// the loss and the backward pass too (grad_pass.h), the weights' gradients written with
// --grads, and a gradient check with --gradcheck.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "back_mistakes.h"
#include "gradcheck.h"
#include "probe.h"

static const char trace_usage[] =
    "usage: stepformer trace --model FILE (--src-ids LIST | --input TEXT)\n"
    "                        [--tgt-ids LIST | --target TEXT] [--dump OUT.safetensors]\n"
    "                        [--labels IDS [--grads OUT.safetensors] [--gradcheck ID]]\n"
    "\n"
    "One teacher-forced forward pass. With --dump, writes every stage's output under its stage\n"
    "id, plus src_ids, tgt_ids, memory [S, d_model] and logits [T, tgt_vocab]; the attention\n"
    "maps are encoder.layers.{i}.self_attn.weights, decoder.layers.{i}.self_attn.weights and\n"
    "decoder.layers.{i}.cross_attn.weights ([nhead, queries, keys]). Without --dump, lists the\n"
    "stages. --tgt-ids are used as given; --target TEXT is fed after bos. A decoder-only\n"
    "program (a decode loop and no encoder) runs once over its prompt, --src-ids or --input:\n"
    "logits [prompt length, vocab], one row per prompt position.\n"
    "\n"
    "  --trace-mb N       the memory the pass's outputs may hold, in MB (default: a quarter\n"
    "                     of this machine's memory). Past it, what is read only inside a block is\n"
    "                     dropped and recomputed when read, the same numbers\n"
    "  --widen-weights    hold an F16 or BF16 file's matrices as float32 (by default they stay\n"
    "                     2 bytes a number, widened tile by tile as they are used: the same results)\n"
    "  --labels IDS       one id per row of the published logits (an encoder-decoder: the next\n"
    "                     token at each target position; a classifier: its class); the model's\n"
    "                     pad id does not count. The loss is the mean cross-entropy of those rows\n"
    "                     (no label smoothing), or the mean NLL of log_probs when a program\n"
    "                     publishes no logits; then the backward pass runs, stage by stage.\n"
    "  --grads FILE       write the gradient of the loss for every weight (not buffers) under\n"
    "                     its own name and shape, and `loss` [1]\n"
    "  --gradcheck ID     move the elements of stage or weight ID with the largest gradients by\n"
    "                     +-h, and print the central difference beside the analytic gradient\n"
    "  --backward-mistake NAME  run a learner's wrong formula in the backward pass, for\n"
    "                     --gradcheck to catch: softmax-no-sum, layernorm-no-mean, dw-no-transpose\n"
    "  With --labels, --dump also writes grad.ID, the gradient of each stage the loss reaches.\n"
    "  --lens             the logit lens: each layer's output put through the stages that make\n"
    "                     the logits (the final norm, the output projection); the three likeliest\n"
    "                     tokens at each position, layer by layer (--json: as JSON)\n"
    "Model flags as for `stepformer run`.\n";

enum { MAX_LABELS = 4096 };

// A stage's output for the dump, read when it is written: the reads before it released, so under
// a trace budget the dump recomputes one tensor at a time.
typedef struct {
    const Interp *it;
    const int *stage_of;  // [tensors] the stage each dumped output is
} DumpReader;

static const float *dump_read(void *ctx, int i) {
    const DumpReader *r = ctx;
    interp_release_reads(r->it);
    return interp_output(r->it, r->stage_of[i]);
}

// The pass's stages (and, after a backward pass, each stage's gradient and every weight's).
static bool dump_trace(const Session *s, const Grads *g, const char *path, Err *e) {
    const Interp *it = s->it;
    const Model *m = &s->model;
    int n_out, n = interp_n_done(it);
    const ProgramOutput *outs = interp_outputs(it, &n_out);
    StTensor *t = calloc((size_t)(2 * n + n_out + m->n_params + 2), sizeof *t);
    int *stage_of = calloc((size_t)(2 * n + n_out + m->n_params + 2), sizeof *stage_of);  // a stage's output: read when written
    char (*names)[STAGE_ID_MAX + 8] = calloc((size_t)(n + m->n_params) + 1, sizeof *names);
    if (!t || !names || !stage_of) return free(t), free(names), free(stage_of), err_code(e, ERR_MEMORY, "out of memory");
    int k = 0, q = 0;
    t[k++] = (StTensor){"src_ids", shape1(s->run.S), s->run.src};
    if (s->run.tgt) t[k++] = (StTensor){"tgt_ids", shape1(s->run.T), s->run.tgt};
    for (int i = 0; i < n_out; i++) {
        const Stage *st = interp_stage(it, outs[i].stage);
        stage_of[k] = outs[i].stage;
        t[k++] = (StTensor){outs[i].name, st->shape, NULL};
    }
    for (int i = 0; i < n; i++) {
        const Stage *st = interp_stage(it, i);
        stage_of[k] = i;
        t[k++] = (StTensor){st->id, st->shape, NULL};
        const float *d = g ? grads_stage(g, i) : NULL;
        if (!d) continue;
        snprintf(names[q], sizeof names[q], "grad.%s", st->id);
        t[k++] = (StTensor){names[q++], st->shape, d};
    }
    for (int w = 0; g && w < m->n_params; w++) {
        const float *d = m->params[w].fixed ? NULL : grads_of((Grads *)g, m->params[w].name);
        snprintf(names[q], sizeof names[q], "grad.%s", m->params[w].name);
        if (d && interp_find(it, names[q] + 5) < 0) t[k++] = (StTensor){names[q++], m->params[w].shape, d};
    }
    const StMeta meta[] = {{"producer", "stepformer trace"}, {"model", (char *)s->model.source}};
    DumpReader r = {it, stage_of};
    bool ok = st_save_stream(path, t, k, meta, 2, ST_F32, dump_read, &r, e);
    free(t), free(names), free(stage_of);
    return ok;
}

// The gradient of every trained weight under its own name, and the loss.
static bool save_grads(const Session *s, Grads *g, const LossInfo *li, const char *path, Err *e) {
    const Model *m = &s->model;
    StTensor *t = calloc((size_t)m->n_params + 1, sizeof *t);
    if (!t) return err_code(e, ERR_MEMORY, "out of memory");
    int k = 0;
    const float loss = (float)li->loss;
    t[k++] = (StTensor){"loss", shape1(1), &loss};
    for (int w = 0; w < m->n_params; w++)
        if (!m->params[w].fixed) t[k++] = (StTensor){m->params[w].name, m->params[w].shape, grads_of(g, m->params[w].name)};
    const StMeta meta[] = {{"producer", "stepformer trace --grads"}, {"model", (char *)m->source}};
    bool ok = st_save(path, t, k, meta, 2, e);
    free(t);
    return ok;
}

// The backward pass as a list: each stage the loss reached, last to first, and its gradient.
static void print_backward(const Session *s, const Grads *g, const LossInfo *li) {
    char sh[64];
    printf("loss %.7g: mean %s over %d label%s (%s %s)\n", li->loss, li->log_probs ? "NLL" : "cross-entropy",
           li->counted, li->counted == 1 ? "" : "s", li->log_probs ? "log_probs" : "logits",
           shape_str(&interp_stage(s->it, li->scored)->shape, sh, sizeof sh));
    for (int i = li->scored; i >= 0; i--) {
        const float *d = grads_stage(g, i);
        if (!d) continue;
        const Stage *st = interp_stage(s->it, i);
        double norm = 0;
        for (int64_t q = 0; q < shape_numel(&st->shape); q++) norm += (double)d[q] * d[q];
        printf("%4d  d%-47s %-16s %-18s |grad| %.4g\n", i, st->id, shape_str(&st->shape, sh, sizeof sh),
               op_info[st->op].name, sqrt(norm));
    }
}

static void print_check(const GradCheck *c) {
    printf("gradient check of %s %s: central differences from step h down, extrapolated to h = 0 (the pass in "
           "float32)\n", c->weight ? "weight" : "stage", c->what);
    printf("  %10s  %14s  %9s  %14s  %14s  %10s  %10s\n", "element", "value", "h", "analytic", "numeric", "+-", "rel. error");
    for (int q = 0; q < c->n; q++)
        printf("  %10zu  %14.7g  %9.2g  %14.7g  %14.7g  %10.1e  %10.2e%s\n", c->pt[q].index, c->pt[q].value, c->pt[q].h,
               c->pt[q].analytic, c->pt[q].numeric, c->pt[q].error, c->pt[q].rel_error, c->pt[q].agrees ? "" : "  DISAGREE");
    if (c->kinked)
        printf("  (%d element%s with larger gradients passed over: a ReLU turns over within +-h, a kink no difference can "
               "measure)\n", c->kinked, c->kinked == 1 ? "" : "s");
    if (!c->n) printf("FAILED: no element could be checked\n");
    else if (c->passed) printf("passed: all %d agree; the largest relative error is %.2e\n", c->n, c->worst);
    else printf("FAILED: %d of %d disagree (by more than %.0f%% plus twice the +- estimate); the largest relative error is %.2e\n",
                c->disagree, c->n, 100 * GRADCHECK_TOLERANCE, c->worst);
}

// The gradient check runs on a pass of its own that reads the weights as they are (not packed).
static bool run_check(Session *s, Grads *g, const LossInfo *li, const float *labels, const char *id, bool *passed,
                      Err *e) {
    RunSpec spec = s->run;
    spec.pack_weights = false;
    Interp *it = interp_new(&s->lesson.program, &s->model, &spec, e);
    GradCheck c;
    bool ok = it && interp_run(it, e) && gradcheck(&c, it, &s->model, g, li, labels, id, e);
    if (ok) print_check(&c);
    *passed = ok && c.passed;
    interp_free(it);
    return ok;
}

static int backward_pass(Session *s, const CliOptions *o) {
    Err e = {{0}};
    LossInfo li;
    float *labels = malloc(sizeof(float) * MAX_LABELS);
    Grads *g = NULL;
    float *d = NULL;
    int n = 0;
    bool ok = labels && loss_target(s->it, &li, &e) && labels_parse(o->labels, "--labels", labels, MAX_LABELS, &n, &e);
    if (ok) ok = (g = grads_new(&s->model, &e)) && (d = malloc(sizeof(float) * (size_t)li.rows * (size_t)li.V));
    BackwardMistake mistake = MISTAKE_NONE;
    if (ok && o->backward_mistake && !backward_mistake_lookup(o->backward_mistake, &mistake))
        ok = err_set(&e, "--backward-mistake is softmax-no-sum, layernorm-no-mean or dw-no-transpose, not '%s'",
                     o->backward_mistake);
    if (ok) grads_set_mistake(g, mistake);
    if (ok) ok = grad_pass(g, s->it, labels, n, d, &li, &e);
    if (ok && li.untied)
        fprintf(stderr, "stepformer: note: %s:%d ties tensors that hold different numbers in this model: they are "
                "trained apart\n", s->lesson.program.file, li.untied);
    bool passed = true;
    if (ok && o->grads) ok = save_grads(s, g, &li, o->grads, &e);
    if (ok && o->dump) ok = dump_trace(s, g, o->dump, &e);
    if (ok && !o->grads && !o->dump && !o->gradcheck) print_backward(s, g, &li);
    else if (ok) printf("loss %.7g over %d label%s\n", li.loss, li.counted, li.counted == 1 ? "" : "s");
    if (ok && o->gradcheck) ok = run_check(s, g, &li, labels, o->gradcheck, &passed, &e);
    if (!ok && !e.msg[0]) err_code(&e, ERR_MEMORY, "out of memory");
    free(labels), free(d);
    grads_free(g);
    return !ok ? cli_fail(&e) : passed ? EXIT_OK : EXIT_FAIL;
}

static int print_lens(Session *s, bool json) {
    Err e = {{0}};
    Lens *l = malloc(sizeof *l);
    if (!l || !interp_run(s->it, &e) || !logit_lens(l, s->it, &e)) {
        if (!l) err_code(&e, ERR_MEMORY, "out of memory");
        free(l);
        return cli_fail(&e);
    }
    const Vocab *v = &s->model.tgt_vocab;
    cJSON *root = json ? cJSON_CreateArray() : NULL;
    for (int k = 0; k < l->n_rows; k++) {
        const LensRow *r = &l->rows[k];
        cJSON *row = json ? cJSON_CreateObject() : NULL, *pos = json ? cJSON_AddArrayToObject(row, "positions") : NULL;
        if (json) cJSON_AddStringToObject(row, "stage", r->label), cJSON_AddItemToArray(root, row);
        else printf("%s\n", r->label);
        for (int t = 0; t < r->rows; t++) {
            cJSON *top = json ? cJSON_CreateArray() : NULL;
            if (!json) printf("  %3d ", t);
            for (int q = 0; q < 3 && r->top[t][q] >= 0; q++) {
                if (json) {
                    cJSON *item = cJSON_CreateObject();
                    cJSON_AddNumberToObject(item, "id", r->top[t][q]);
                    cJSON_AddStringToObject(item, "token", vocab_token(v, r->top[t][q]));
                    cJSON_AddNumberToObject(item, "p", r->prob[t][q]);
                    cJSON_AddItemToArray(top, item);
                } else printf("  %-8s %.3f", vocab_token(v, r->top[t][q]), (double)r->prob[t][q]);
            }
            if (json) cJSON_AddItemToArray(pos, top);
            else printf("\n");
        }
    }
    if (json) {
        char *text = cJSON_PrintUnformatted(root);
        printf("%s\n", text);
        free(text);
        cJSON_Delete(root);
    }
    free(l);
    return EXIT_OK;
}

int cmd_trace(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv,
                         MODEL_OPTS | OPT_INPUT | OPT_SRC_IDS | OPT_TARGET | OPT_TGT_IDS | OPT_DUMP | OPT_GRADS | OPT_JSON,
                         trace_usage, &o);
    if (code >= 0 || (code = cli_need_model(&o, "trace")) >= 0) return code;
    if (!o.spec.input && !o.spec.src_ids) return cli_usage_error("trace", "give --src-ids LIST or --input TEXT");
    if ((o.grads || o.gradcheck) && !o.labels)
        return cli_usage_error("trace", "--%s needs --labels IDS: the loss is taken against them", o.grads ? "grads" : "gradcheck");
    o.spec.force_prompt = true;  // a decoder-only program: one pass over its prompt
    Session s;
    Err e = {{0}};
    if (!cli_open_session(&s, &o.spec, &e)) return cli_fail(&e);
    if (program_has_decoder(&s.lesson.program) && !s.run.tgt) {  // a decoder needs its target
        session_close(&s);
        return cli_usage_error("trace", "teacher forcing needs a target: --tgt-ids LIST or --target TEXT");
    }
    if (o.lens) {
        code = print_lens(&s, o.json);
        session_close(&s);
        return code;
    }
    if (o.labels) {
        code = backward_pass(&s, &o);
        session_close(&s);
        return code;
    }
    bool ok = interp_run(s.it, &e);
    if (ok && o.dump) ok = dump_trace(&s, NULL, o.dump, &e);
    else if (ok)
        for (int i = 0; i < interp_n_done(s.it); i++) cli_print_stage_line(stdout, s.it, i);
    session_close(&s);
    return ok ? EXIT_OK : cli_fail(&e);
}
