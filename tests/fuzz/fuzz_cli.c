// fuzz_cli.c: the command line's values. The input is argv, its arguments split on NUL bytes
// (the first is the command's name); cli_parse reads them with every option allowed. It must
// return: go on (-1), help asked for (0) or bad usage (2), and never exit.
#include <assert.h>
#include <getopt.h>

#include "cli.h"
#include "fuzz.h"
#include "window.h"

enum { MAX_ARGS = 64 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    fuzz_small_limits();
    return 0;
}

// Whether an argument asks for help: "--help" or a prefix of it that getopt takes for it.
static bool asks_help(const char *a) {
    const size_t k = strlen(a);
    return k >= 3 && k <= 6 && !strncmp(a, "--help", k);
}

static void check_options(const CliOptions *o) {
    assert(strlen(o->spec.flags) < sizeof o->spec.flags);
    assert(o->spec.max_len >= 0 && o->spec.max_len <= 100000);
    assert(o->repeat >= 0 && o->repeat <= 100000);
    assert(o->seed >= 0);
    assert((o->width == 0 && o->height == 0) ||
           (o->width >= WINDOW_MIN_W && o->width <= 8192 && o->height >= WINDOW_MIN_H && o->height <= 8192));
    assert(o->n_positional >= 0 && o->n_positional <= 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n) {
    char *s = fuzz_text(data, n);  // (the NUL after the last byte ends the last argument)
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (size_t at = 0; at <= n && argc < MAX_ARGS; at += strlen(s + at) + 1) argv[argc++] = s + at;
    argv[argc] = NULL;
    bool help = false;
    for (int i = 1; i < argc; i++) help = help || asks_help(argv[i]);
    CliOptions o;
    const int code = cli_parse(argc, argv, ~0u, "usage\n", &o);
    assert(code == -1 || code == EXIT_USAGE || (code == EXIT_OK && help));
    if (code == -1) check_options(&o);
    // getopt keeps a pointer into the last argv between calls: start it afresh.
    static char *none[] = {"fuzz", NULL};
    optind = 0;
    getopt_long(1, none, ":", (struct option[]){{0, 0, 0, 0}}, NULL);
    free(s);
    return 0;
}
