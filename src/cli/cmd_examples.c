// cmd_examples.c: `examples`: a task's examples as lines of text, SOURCE=TARGET, drawn from a
// seed: a text file a decoder-only model can learn the task from (train --task text).
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "rng.h"
#include "tasks.h"

static const char usage[] =
    "usage: stepformer examples --task NAME [--count N] [--seed S]\n"
    "\n"
    "Prints N examples of a task (copy, reverse, sort, dates, majority, brackets), one a line,\n"
    "as SOURCE=TARGET, drawn as `train --task NAME` draws its examples. A decoder-only model\n"
    "trained on such lines (`train --task text --data FILE`) learns to continue \"SOURCE=\"\n"
    "with the target.\n"
    "\n"
    "  --task NAME   the task\n"
    "  --count N     how many lines (default 1000)\n"
    "  --seed S      the generator's seed (default 1)\n";

int cmd_examples(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, OPT_EXAMPLES, usage, &o);
    if (code >= 0) return code;
    if (o.n_positional) return cli_usage_error("examples", "unexpected argument '%s'", o.positional[0]);
    Task t;
    if (!o.train.task) return cli_usage_error("examples", "--task is required (copy, reverse, sort, dates, majority or brackets)");
    if (!task_from_name(o.train.task, &t))
        return cli_usage_error("examples", "unknown task '%s': the tasks are copy, reverse, sort, dates, majority and "
                               "brackets", o.train.task);
    Rng rng = {o.has_seed ? (uint64_t)o.seed : 1};
    char src[64], tgt[64];
    for (int i = 0; i < (o.count ? o.count : 1000); i++) {
        task_example(t, &rng, src, sizeof src, tgt, sizeof tgt);
        if (printf("%s=%s\n", src, tgt) < 0) return fprintf(stderr, "stepformer examples: cannot write\n"), EXIT_FAIL;
    }
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
