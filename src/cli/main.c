// main.c: stepformer's entry point: picks the mode from the first argument.
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "data.h"
#include "mem.h"

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"run", cmd_run, "greedy-decode an input with a model"},
    {"trace", cmd_trace, "one teacher-forced pass; dump every stage to .safetensors"},
    {"patch", cmd_patch, "activation patching: which layer, position or head carries the answer"},
    {"lesson", cmd_lesson, "run a lesson headless, one line per stage"},
    {"stages", cmd_stages, "list a model's stages in order"},
    {"train", cmd_train, "train a model on a task (copy, reverse, sort, dates) in C"},
    {"export", cmd_export, "write every stage as a PNG, drawn as the window draws it"},
    {"examples", cmd_examples, "print a task's examples as text lines, SOURCE=TARGET"},
    {"tokenize", cmd_tokenize, "split a text into a model folder's tokens (tokenizer.json, or Marian's source.spm)"},
    {"init", cmd_init, "write a model with random weights from a config and a seed"},
    {"bench", cmd_bench, "time the base configuration"},
};

static void usage(FILE *out) {
    fprintf(out,
            "usage: stepformer [COMMAND] [OPTIONS]\n"
            "\n"
            "An educational, step-by-step interpreter of the Transformer of \"Attention Is All You\n"
            "Need\". Without a command it opens the window on the built-in forward-pass lesson\n"
            "(stepformer --help-window for its options).\n"
            "\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`stepformer COMMAND --help` describes each. --version prints the version.\n");
}

int main(int argc, char **argv) {
    mem_setup();  // large buffers back to the system when freed (mem.h)
    if (argc < 2 || argv[1][0] == '-') {
        if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            usage(stdout);
            return EXIT_OK;
        }
        if (argc >= 2 && !strcmp(argv[1], "--help-window")) {
            char *args[] = {"stepformer", "--help", NULL};
            return cmd_window(2, args);
        }
        if (argc >= 2 && !strcmp(argv[1], "--version")) {
            printf("stepformer %s\nlessons and models: %s\n", STEPFORMER_VERSION,
                   data_dir()[0] ? data_dir() : "not found (set STEPFORMER_DATA to the folder holding lessons/)");
            return EXIT_OK;
        }
        argv[0] = "stepformer";
        return cmd_window(argc, argv);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "stepformer: unknown command '%s' (stepformer --help lists the commands)\n", argv[1]);
    return EXIT_USAGE;
}
