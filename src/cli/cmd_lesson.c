// cmd_lesson.c: `lesson FILE` runs a lesson headless, one line per stage.
#include <stdlib.h>
#include <string.h>

#include "against.h"
#include "cli.h"

static const char lesson_usage[] =
    "usage: stepformer lesson FILE [--input TEXT] [--model FILE]             (the window)\n"
    "       stepformer lesson FILE --headless | --to STAGE | --print STAGE   (the terminal)\n"
    "\n"
    "Opens a lesson (Markdown with program cells) in the window: a FILE, or a lesson of the\n"
    "course by its name (`stepformer lesson backprop`, as the page's links name it). With\n"
    "--headless or --to it\n"
    "runs without a window and prints one line per stage: index, stage id, output shape, op and\n"
    "the lesson line that computed it. --print alone prints only that stage's tensor.\n"
    "In greedy decoding the decoder's stages of round K are named step.K.ID; an ID given\n"
    "without its step.K. means the last round's (stderr says which).\n"
    "\n"
    "  --headless      run in the terminal\n"
    "  --to STAGE      stop after this stage\n"
    "  --print STAGE   print this stage's tensor (rows and columns labelled with their tokens)\n"
    "  --questions     print the lesson's questions, each with its stage and the answer the\n"
    "                  trace gives (for the teacher's notes)\n"
    "  --json          with --print: the tensor as JSON, {\"id\", \"shape\", \"values\"}, every\n"
    "                  float exact (a masked -inf is null)\n"
    "  --input TEXT    replace the lesson's input\n"
    "  --src-ids LIST  token ids instead (a model folder without a tokenizer)\n"
    "  --trace-mb N    the memory the pass's outputs may hold, in MB (as for `run`)\n"
    "  --widen-weights hold an F16 or BF16 file's matrices as float32 (as for `run`)\n"
    "  --target TEXT   teacher forcing with this target instead of greedy decoding\n"
    "  --max-len N     greedy decoding: at most N tokens\n"
    "  --temperature T, --top-k K, --top-p P, --seed N, --beam K   sample, or search with a beam,\n"
    "                  instead of greedy decoding (as for `run`; Z in the window switches)\n"
    "  --model FILE    run the lesson's program on these weights (a file, or a hub folder)\n"
    "  --against-correct   a mistake lesson: run its correct program (its `correct:`) on the\n"
    "                  same model and input, and print the first stage where the two differ\n"
    "                  (by more than 1e-5), the largest difference there, and each output\n"
    "  --record FILE, --replay FILE, --size WxH, --presenter   as for the window (stepformer --help)\n";

static void print_result(const Session *s) {
    int n;
    StopReason why;
    const float *ids = interp_generated(s->it, &n, &why);
    if (why == STOP_NONE) return;
    char text[8192];
    vocab_decode(&s->model.tgt_vocab, ids, n, text, sizeof text);
    printf("input:  %s\noutput: %s  (%d tokens, stopped at %s)\n", s->input_text, text, n,
           why == STOP_EOS ? "eos" : "max_len");
}

// Runs until the stage called `id` has run (when id is given and the pass has it), else to the end.
static bool run_until(Interp *it, const char *id, Err *e) {
    StepStatus s;
    while ((s = interp_step(it, e)) == STEP_RAN)
        if (id && !strcmp(interp_stage(it, interp_n_done(it) - 1)->id, id)) return true;
    return s == STEP_DONE;
}

int cli_run_lesson_headless(const char *cmd, const CliOptions *o) {
    if (o->record || o->replay || o->width || o->presenter)
        return cli_usage_error(cmd, "%s is for the window; --headless, --to and --print print text instead",
                               o->record ? "--record" : o->replay ? "--replay" : o->width ? "--size" : "--presenter");
    Session s;
    Err e = {{0}};
    if (!cli_open_session(&s, &o->spec, &e)) return cli_fail(&e);
    const bool listing = o->to || o->headless || !o->print;  // --print alone prints its tensor only
    if (listing) printf("%s\nmodel: %s\n", s.lesson.title, s.model.source);
    bool ok = run_until(s.it, o->to ? o->to : o->print, &e);
    int last = interp_n_done(s.it) - 1;  // the last stage listed
    if (ok && o->to) {
        const int k = cli_find_stage(s.it, o->to, s.lesson.path, &e);
        ok = k >= 0;
        if (ok) last = k;
    }
    for (int i = 0; listing && i <= last; i++) cli_print_stage_line(stdout, s.it, i);
    if (ok && o->print) {
        const int k = cli_find_stage(s.it, o->print, s.lesson.path, &e);
        ok = k >= 0;
        char *json = ok && o->json ? interp_stage_json(s.it, k) : NULL;
        if (ok && o->json) ok = json ? puts(json) >= 0 : err_code(&e, ERR_MEMORY, "out of memory");
        else if (ok) cli_print_tensor(stdout, s.it, k);
        free(json);
    }
    if (ok && listing && !o->to) print_result(&s);
    session_close(&s);
    return ok ? EXIT_OK : cli_fail(&e);
}

// --against-correct: the mistake and its correct program, matched stage by stage.
static int run_against(const CliOptions *o) {
    Session m, c;
    Err e = {{0}};
    if (!cli_open_session(&m, &o->spec, &e)) return cli_fail(&e);
    if (!against_open(&c, &m, &o->spec, &e)) return session_close(&m), cli_fail(&e);
    Against a;
    if (!against_match(&a, m.it, c.it, &e)) return session_close(&c), session_close(&m), cli_fail(&e);
    printf("%s\ncorrect program: %s\nmodel: %s\n", m.lesson.title, c.lesson.path, c.model.source);
    if (a.first < 0) {
        printf("first difference: none (every stage with a counterpart agrees within %g)\n", (double)AGAINST_TOLERANCE);
    } else {
        const StageMatch *s = &a.stage[a.first];
        const Stage *st = interp_stage(m.it, a.first), *ot = interp_stage(c.it, s->other);
        char sh1[64], sh2[64];
        printf("first difference: %d %s (%s", a.first, st->id, match_kind_names[s->kind]);
        if (s->kind == MATCH_SHAPE)
            printf(": %s here, %s in the correct program)\n", shape_str(&st->shape, sh1, sizeof sh1),
                   shape_str(&ot->shape, sh2, sizeof sh2));
        else printf(", largest |difference| %.6g)\n", (double)s->max_diff);
    }
    int count[MATCH_COUNT] = {0};
    for (int i = 0; i < a.n; i++) count[a.stage[i].kind]++;
    printf("stages: %d here: %d the same, %d with other values, %d of another shape, %d without a counterpart; "
           "%d of the correct program's without one here\n", a.n, count[MATCH_SAME], count[MATCH_VALUES],
           count[MATCH_SHAPE], count[MATCH_MISSING], a.n_unmatched);
    for (int i = 0, shown = 0; i < a.n && shown < 8; i++)  // the widths that changed, e.g. a narrower hidden layer
        if (a.stage[i].kind == MATCH_SHAPE) {
            char sh1[64], sh2[64];
            printf("%s %s: %s here, %s in the correct program\n", shown++ ? "          " : "other shape:", interp_stage(m.it, i)->id,
                   shape_str(&interp_stage(m.it, i)->shape, sh1, sizeof sh1),
                   shape_str(&interp_stage(c.it, a.stage[i].other)->shape, sh2, sizeof sh2));
        }
    int n_gen;
    StopReason why;
    interp_generated(m.it, &n_gen, &why);
    if (why != STOP_NONE) {  // greedy decoding: what each wrote
        printf("this program:\n");
        print_result(&m);
        printf("correct program:\n");
        print_result(&c);
    }
    against_free(&a);
    session_close(&c);
    session_close(&m);
    return EXIT_OK;
}

enum { LESSON_OPTS = OPT_TO | OPT_PRINT | OPT_JSON | OPT_INPUT | OPT_SRC_IDS | OPT_TARGET | OPT_MAX_LEN | OPT_MODEL |
                     OPT_MODEL_FLAGS | OPT_TOKEN_FLAGS | OPT_WINDOW | OPT_AGAINST | OPT_DECODE | OPT_TRACE_MB };

int cmd_lesson(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, LESSON_OPTS, lesson_usage, &o);
    if (code >= 0) return code;
    if (o.n_positional != 1) return cli_usage_error("lesson", "give one lesson file");
    if (!cli_take_choice(&o, "lesson")) return EXIT_FAIL;
    if (!cli_lesson_arg(&o, o.positional[0])) return EXIT_FAIL;
    o.spec.lesson_path = o.lesson_file;
    if (o.against) return run_against(&o);
    if (o.questions) return cli_print_questions(&o);
    if (o.to || o.print || o.headless) return cli_run_lesson_headless("lesson", &o);
    return cli_open_window(&o);
}


