// cmd_lesson.c: `lesson FILE` runs a lesson headless, one line per stage.
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char lesson_usage[] =
    "usage: stepformer lesson FILE [--input TEXT] [--model FILE]             (the window)\n"
    "       stepformer lesson FILE --headless | --to STAGE | --print STAGE   (the terminal)\n"
    "\n"
    "Opens a lesson (Markdown with program cells) in the window. With --headless or --to it\n"
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
    "  --target TEXT   teacher forcing with this target instead of greedy decoding\n"
    "  --max-len N     greedy decoding: at most N tokens\n"
    "  --model FILE    run the lesson's program on these weights\n"
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

enum { LESSON_OPTS = OPT_TO | OPT_PRINT | OPT_JSON | OPT_INPUT | OPT_TARGET | OPT_MAX_LEN | OPT_MODEL |
                     OPT_MODEL_FLAGS | OPT_TOKEN_FLAGS | OPT_WINDOW };

int cmd_lesson(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, LESSON_OPTS, lesson_usage, &o);
    if (code >= 0) return code;
    if (o.n_positional != 1) return cli_usage_error("lesson", "give one lesson file");
    o.spec.lesson_path = o.positional[0];
    if (o.questions) return cli_print_questions(&o);
    if (o.to || o.print || o.headless) return cli_run_lesson_headless("lesson", &o);
    return cli_open_window(&o);
}


