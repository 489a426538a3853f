// test_limits.c: what a small file may ask for is bounded (bounds.h), and every refusal names the
// limit and the variable that raises it: loop iterations, stages, one tensor, a model, a pass's
// outputs, and the files read (their size, and only regular files).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "bounds.h"
#include "session.h"

static const char *lesson_path = "/tmp/stepformer-limits.md";

// Writes a lesson around `program` on a small random model and opens it (and runs it).
static bool open_program(const char *config, const char *program, Err *e) {
    FILE *f = fopen(lesson_path, "w");
    if (!f) return err_set(e, "cannot write %s", lesson_path);
    fprintf(f, "# Limits\n\n```lesson\nmodel: random\nconfig: %s\nvocab: chars\ninput: ab\n```\n\n```program\n%s```\n",
            config, program);
    fclose(f);
    Session s;
    const SessionSpec spec = {.lesson_path = lesson_path};
    if (!session_open(&s, &spec, e)) return false;
    const bool ok = interp_run(s.it, e);
    session_close(&s);
    return ok;
}

static const char *small = "d_model=8 nhead=2 src_vocab_size=99 max_positions=16";

static void expect_refusal(const char *config, const char *program, const char *w1, const char *w2) {
    Err e = {{0}};
    CHECK(!open_program(config, program, &e) && strstr(e.msg, w1) && strstr(e.msg, w2) && e.code == ERR_LIMIT,
          "expected '%s' and '%s' (a limit): %s", w1, w2, e.msg);
}

// Status, not message text: a finished pass says so without touching the Err, and runs without one.
static void status_not_text(void) {
    Session s;
    Err e = {{0}};
    const SessionSpec spec = {.builtin_lesson = "forward-pass.md"};
    if (!session_open(&s, &spec, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    CHECK(interp_run(s.it, NULL), "a pass runs with no Err to fill");
    strcpy(e.msg, "untouched");
    e.code = ERR_NONE;
    CHECK(interp_step(s.it, &e) == STEP_DONE && !strcmp(e.msg, "untouched") && e.code == ERR_NONE,
          "a finished pass: STEP_DONE, the Err left as it was");
    CHECK(!interp_run_to(s.it, "no.such.stage", &e) && e.code == ERR_FAILED && strstr(e.msg, "no stage"),
          "running to a stage the pass lacks fails with a message");
    session_close(&s);
    StFile f;
    CHECK(!st_load(&f, "/nonexistent/x.safetensors", &e) && e.code == ERR_IO, "a missing file: ERR_IO: %s", e.msg);
}

static void limits_of_programs(void) {
    const char *emb = "input src\nparam @emb [src_vocab_size, d_model] normal(1)\nx = embedding(src, @emb)\n";
    char program[512];
    // Three nested loops of 4096 used to run for hours, even with nothing in them.
    snprintf(program, sizeof program, "%sfor a in 4096\n  for b in 4096\n    for c in 4096\n    end\n  end\nend\n", emb);
    expect_refusal(small, program, "1000000 loop iterations", "STEPFORMER_MAX_ITERATIONS");
    setenv("STEPFORMER_MAX_STAGES", "50", 1);
    snprintf(program, sizeof program, "%sfor a in 60\n  block s{a}\n    y = relu(x)\n  end\nend\n", emb);
    expect_refusal(small, program, "more than 50 stages", "STEPFORMER_MAX_STAGES");
    unsetenv("STEPFORMER_MAX_STAGES");
    Err e = {{0}};
    CHECK(open_program(small, program, &e), "60 blocks run within the default limit: %s", e.msg);
    expect_refusal(small, "input src\npe = positional_table(positions=100000, width=100000)\n",
                   "[100000 x 100000]", "STEPFORMER_MAX_TENSOR_MB");
    expect_refusal("d_model=20000 nhead=2 src_vocab_size=40000 max_positions=16",
                   "input src\nparam @a [src_vocab_size, d_model] normal(1)\nparam @b [src_vocab_size, d_model] zeros\n"
                   "x = embedding(src, @a)\n", "the model would take 6104 MB", "STEPFORMER_MAX_MODEL_MB");
    setenv("STEPFORMER_MAX_TRACE_MB", "1", 1);
    expect_refusal(small, "input src\npe = positional_table(positions=600, width=600)\n", "1 MB a trace",
                   "STEPFORMER_MAX_TRACE_MB");
    unsetenv("STEPFORMER_MAX_TRACE_MB");
    CHECK(open_program(small, "input src\npe = positional_table(positions=600, width=600)\n", &e),
          "the same table within the default trace limit: %s", e.msg);
    remove(lesson_path);
}

static void limits_of_files(void) {
    StFile f;
    Err e = {{0}};
    CHECK(!st_load(&f, "/dev/zero", &e) && strstr(e.msg, "not a regular file"), "/dev/zero is refused: %s", e.msg);
    const char *fifo = "/tmp/stepformer-limits.fifo";
    remove(fifo);
    if (mkfifo(fifo, 0600) == 0) {
        CHECK(!st_load(&f, fifo, &e) && strstr(e.msg, "not a regular file"), "a FIFO is refused, not waited on");
        remove(fifo);
    }
    const char *big = "/tmp/stepformer-limits.safetensors";
    FILE *w = fopen(big, "wb");
    if (w) {
        static char zeros[1 << 16];
        for (int i = 0; i < 40; i++) fwrite(zeros, 1, sizeof zeros, w);  // 2.5 MB
        fclose(w);
        setenv("STEPFORMER_MAX_FILE_MB", "2", 1);
        CHECK(!st_load(&f, big, &e) && strstr(e.msg, "more than the 2 MB") && strstr(e.msg, "STEPFORMER_MAX_FILE_MB"),
              "a file over the limit is refused before it is read: %s", e.msg);
        unsetenv("STEPFORMER_MAX_FILE_MB");
        remove(big);
    }
    setenv("STEPFORMER_MAX_STAGES", "12x", 1);
    CHECK(limit_value(LIMIT_STAGES) == 500000, "a value that is not a whole number leaves the default");
    unsetenv("STEPFORMER_MAX_STAGES");
}

int main(void) {
    status_not_text();
    limits_of_programs();
    limits_of_files();
    return check_finish("test_limits");
}
