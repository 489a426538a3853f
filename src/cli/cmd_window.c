// cmd_window.c: the window (stepformer with no command; cli_window.c opens it, cmd_lesson.c
// runs it --headless) and `export` (the same views as PNGs).
#include <string.h>
#include <strings.h>

#include "app.h"
#include "cli.h"
#include "window.h"

static const char window_usage[] =
    "usage: stepformer [--model FILE (--input TEXT | --src-ids LIST)] [--record FILE]\n"
    "                  [--replay FILE] [--size WxH] [--headless]\n"
    "\n"
    "Opens the window on the built-in forward-pass lesson, or on the forward pass of a model.\n"
    "Press ? in the window for every key.\n"
    "\n"
    "  --model FILE      step through this model's forward pass (a file, or a hub folder: config.json,\n"
    "                    model.safetensors, tokenizer.json; with --input or --src-ids;\n"
    "                    --target TEXT for teacher forcing, else greedy decoding)\n"
    "  --record FILE     save this session's input events\n"
    "  --replay FILE     play a recorded (or written) session back; see src/ui/platform/events.h\n"
    "  --size WxH        the window's size (default 1280x800, or the screen's if smaller)\n"
    "  --headless        no window: run the lesson in the terminal, one line per stage\n"
    "  --presenter       a lesson's questions take answers but grade them only when Right\n"
    "                    reveals them (T in the window switches it)\n"
    "  --trace-mb N      the memory the pass's outputs may hold, in MB (default: a quarter of\n"
    "                    this machine's memory); past it a block's stages are recomputed when shown\n"
    "  --widen-weights   hold an F16 or BF16 file's matrices as float32 (as for `run`)\n"
    "  --temperature T, --top-k K, --top-p P, --seed N, --beam K\n"
    "                    how the decoder chooses each token it generates, as for `run`\n"
    "                    (Z in the window switches greedy, sampling, beam search)\n"
    "\n"
    "Other commands: run, trace, lesson, stages, export, init, bench (stepformer COMMAND --help).\n";

int cmd_window(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv,
                         OPT_WINDOW | OPT_MODEL | OPT_MODEL_FLAGS | OPT_TOKEN_FLAGS | OPT_PROGRAM | OPT_INPUT |
                             OPT_SRC_IDS | OPT_TARGET | OPT_TGT_IDS | OPT_MAX_LEN | OPT_DECODE | OPT_TRACE_MB,
                         window_usage, &o);
    if (code >= 0) return code;
    if (!cli_take_choice(&o, "stepformer")) return EXIT_FAIL;
    if (o.n_positional) return cli_usage_error("stepformer", "unknown command '%s'", o.positional[0]);
    if (o.spec.model_path && !o.spec.input && !o.spec.src_ids)
        return cli_usage_error("stepformer", "with --model, give --input TEXT or --src-ids LIST");
    if (!o.spec.model_path && !o.spec.lesson_path) o.spec.builtin_lesson = "forward-pass.md";
    if (o.headless) return cli_run_lesson_headless("stepformer", &o);
    return cli_open_window(&o);
}

static const char export_usage[] =
    "usage: stepformer export LESSON --out DIR [--size WxH] [--view NAME] [--stages LIST]\n"
    "       stepformer export LESSON --html DIR | --pdf FILE [--size WxH] [--whole-window]\n"
    "\n"
    "Writes one PNG per stage of the lesson's pass into DIR, named by index and stage id\n"
    "(0007-encoder.layers.0.self_attn.scores.png), drawn exactly as the window draws it. Needs\n"
    "no display. LESSON may be a file, a course lesson's name (backprop) or \"-\" for the built-in\n"
    "lesson. --view picks one view for every stage (stage, attention, decoding, positions,\n"
    "training, compare, patch: the last three as a window opens with them); by default each\n"
    "stage gets the view that suits it. --size\n"
    "defaults to 1920x1080. --stages writes only these stages (comma-separated ids, as --to\n"
    "takes them). --backward then writes every step of the backward pass (b0000-loss-loss.png,\n"
    "...): the lesson needs a target (--target TEXT), whose next tokens are the labels.\n"
    "--html DIR writes the lesson's handout instead, one self-contained page DIR/index.html: the\n"
    "whole narration, each program cell, and after each cell that makes stages the picture of its\n"
    "first stage: the view in the centre of the window, so its text prints at 8 pt or more on A4\n"
    "(--whole-window: the whole window). --pdf FILE prints that page to a PDF with WeasyPrint (Debian's weasyprint;\n"
    "with --html DIR the page is kept there too); any browser prints the page as well.\n"
    "--temperature, --top-k, --top-p, --seed and --beam choose the generated tokens as for `run`;\n"
    "--trace-mb N bounds the memory the pass's outputs hold, and --widen-weights widens an F16 or\n"
    "BF16 file's matrices, as for `run`.\n";

int cmd_export(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv,
                         OPT_EXPORT | OPT_MODEL | OPT_MODEL_FLAGS | OPT_TOKEN_FLAGS | OPT_INPUT | OPT_TARGET |
                             OPT_MAX_LEN | OPT_DECODE | OPT_TRACE_MB,
                         export_usage, &o);
    if (code >= 0) return code;
    if (!cli_take_choice(&o, "export")) return EXIT_FAIL;
    if (o.n_positional != 1) return cli_usage_error("export", "give one lesson file (or - for the built-in lesson)");
    if (!o.out && !o.html && !o.pdf)
        return cli_usage_error("export", "--out DIR (the PNGs), --html DIR or --pdf FILE (the handout) is required");
    if (o.out && (o.html || o.pdf)) return cli_usage_error("export", "give --out DIR or the handout (--html, --pdf), not both");
    if (o.whole_window && !o.html && !o.pdf) return cli_usage_error("export", "--whole-window is for the handout (--html, --pdf)");
    ExportOptions e = {.spec = o.spec, .out_dir = o.out, .w = o.width ? o.width : 1920,
                       .h = o.height ? o.height : 1080, .view = -1, .stages = o.stages, .backward = o.backward, .html_dir = o.html,
                       .whole_window = o.whole_window};
    if (strcmp(o.positional[0], "-") == 0) e.spec.builtin_lesson = "forward-pass.md";
    else if (!cli_lesson_arg(&o, o.positional[0])) return EXIT_FAIL;
    else e.spec.lesson_path = o.lesson_file;
    char dir[4352];
    if (e.spec.lesson_path) e.course_dir = cli_course_dir(e.spec.lesson_path, dir, sizeof dir);
    if (o.view) {
        for (int v = 0; v < VIEW_COUNT; v++)  // training and compare show the state a window opens with
            if (!strcasecmp(o.view, view_names[v])) e.view = v;
        if (e.view < 0)
            return cli_usage_error("export", "--view is stage, attention, decoding, positions, training, compare or patch, not '%s'", o.view);
    }
    return o.pdf ? export_pdf(&e, o.pdf) : e.html_dir ? handout_run(&e) : export_run(&e);
}
