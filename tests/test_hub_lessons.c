// test_hub_lessons.c: the models lessons/gpt2.md and lessons/llama.md run, folders in the hub's
// layout that scripts/train_hub_models.sh trained in C, and what the lessons say of them.
// - PyTorch's answers: modules written from Hugging Face's GPT2LMHeadModel and
//   LlamaForCausalLM, loading the same config.json and model.safetensors
//   (scripts/make_hub_fixtures.py: tests/fixtures/hub/lesson-*.safetensors), give the logits
//   `trace --dump` gives to 1e-4 of the largest |logit|, and `run` writes their greedy ids.
// - The lesson's src_ids are its input as the folder's tokenizer reads it (`run --input`).
// - Every number the narration states: the held-out loss and the bigram baseline's on the
//   licence texts (as the trainer splits them), the greedy continuation, the first round's
//   probabilities.
// - lessons/four-ways.md: each of its maps against a closed form or a loop over the folder's
//   weights, and every number it states.
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bounds.h"
#include "check.h"
#include "cli_run.h"
#include "session.h"
#include "train.h"

#define LICENCES "/usr/share/common-licenses"

typedef struct {
    const char *folder, *lesson, *eos;
    const char *stated_text;   // the continuation the lesson quotes
    const char *first_token;   // the first round's choice, as the lesson writes it
    double first_p;            // and its probability (3 decimals)
} Case;

static const Case cases[] = {
    {"gpt2-licences", "gpt2.md", "eos_id=50256", " have the rights granted to", "` have` with 0.777", 0.777},
    {"llama-licences", "llama.md", "eos_id=2", "convey a covered work under the terms of this License.",
     "`▁convey` with 0.167", 0.167},
};

// A whole file (NUL after it) as the project reads one (bounds.h), or NULL.
static char *read_all(const char *path) {
    char *s = NULL;
    size_t n;
    Err e = {{0}};
    return file_read_all(path, "a test's file", &s, &n, &e) ? s : NULL;
}

// PyTorch's logits and greedy ids for the folder, on the lesson's ids.
static void same_as_pytorch(const Case *c, const char *ids) {
    char path[600];
    snprintf(path, sizeof path, "%s/hub/lesson-%s.safetensors", FIXTURES, c->folder);
    StFile want;
    Err e = {{0}};
    const bool loaded = st_load(&want, path, &e);
    CHECK(loaded, "%s", e.msg);
    if (!loaded) return;
    int code = run("trace --model '%s/%s' --src-ids %s --dump '%s/%s.safetensors'", MODELS, c->folder, ids, dir, c->folder);
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, c->folder);
    const double err_max = code == 0 ? dump_logits_error(path, &want) : -1;
    CHECK(err_max >= 0 && err_max <= 1e-4, "%s: logits against PyTorch's: %.3g of the largest (exit %d: %s)", c->folder,
          err_max, code, err);
    code = run("run --model '%s/%s' --src-ids %s --max-len 8 --json", MODELS, c->folder, ids);
    const StEntry *gen = st_find(&want, "generated");
    char expect[200] = "\"output_ids\":[";
    int k = (int)strlen(expect), n = 0;
    for (; gen && n < gen->shape.dim[0]; n++) {  // our run stops at eos, PyTorch's loop does not
        const int id = (int)gen->data[n];
        k += snprintf(expect + k, sizeof expect - (size_t)k, "%s%d", n ? "," : "", id);
        if (id == atoi(strchr(c->eos, '=') + 1)) break;  // (the eos that stopped it ends the ids, as generate() ends them)
    }
    snprintf(expect + k, sizeof expect - (size_t)k, "]");
    CHECK(code == 0 && strstr(out, expect), "%s: greedy ids %s in: %s", c->folder, expect, out);
    st_free(&want);
}

// The licence texts as train_hub_models.sh feeds them: each regular file once, in name order.
static bool write_licences(const char *path) {
    struct dirent **names;
    const int n = scandir(LICENCES, &names, NULL, alphasort);
    if (n < 0) return false;
    FILE *f = fopen(path, "wb");
    for (int i = 0; i < n; i++) {
        char p[600];
        struct stat st;
        snprintf(p, sizeof p, LICENCES "/%s", names[i]->d_name);
        char *text = lstat(p, &st) == 0 && S_ISREG(st.st_mode) ? read_all(p) : NULL;
        if (text && f) fputs(text, f);
        free(text), free(names[i]);
    }
    free(names);
    return f && fclose(f) == 0;
}

// The held-out loss and the bigram baseline's, as training reported them.
static void stated_losses(const Case *c, const char *lesson_text, const char *licences) {
    char tokenizer[600], folder[600], program[600];
    snprintf(tokenizer, sizeof tokenizer, "%s/%s/tokenizer.json", MODELS, c->folder);
    snprintf(folder, sizeof folder, "%s/%s", MODELS, c->folder);
    snprintf(program, sizeof program, "%s/%s", LESSONS, c->lesson);
    TrainConfig tc = train_text_defaults(licences);
    tc.tokenizer = tokenizer, tc.program = program, tc.config = c->eos, tc.init = folder, tc.block = 64;
    Err e = {{0}};
    Trainer *t = trainer_new(&tc, &e);
    CHECK(t != NULL, "%s: %s", c->folder, e.msg);
    if (!t) return;
    double nats = 0, bigram = 0;
    size_t labels = 0;
    CHECK(trainer_text_loss(t, &nats, &labels, &e) && text_bigram_loss(trainer_text(t), &bigram, &e), "%s", e.msg);
    char a[32], b[32];
    snprintf(a, sizeof a, "%.4f nats a token", nats);
    snprintf(b, sizeof b, "loses %.4f", bigram);
    CHECK(strstr(lesson_text, a) && strstr(lesson_text, b), "%s states the held-out loss %s and the bigram's %s", c->lesson,
          a, b);
    if (!strcmp(c->lesson, "gpt2.md")) {  // the course's list quotes the GPT-2 lesson's
        char *readme = read_all(LESSONS "/README.md"), want[120];
        snprintf(want, sizeof want, "(held-out loss %.4f nats a token, the bigram's %.4f)", nats, bigram);
        CHECK(readme && strstr(readme, want), "lessons/README.md states '%s'", want);
        free(readme);
    }
    trainer_free(t);
}

static void lesson_case(const Case *c, const char *licences) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", LESSONS, c->lesson);
    char *text = read_all(path);
    Lesson l;
    Err e = {{0}};
    const bool read = text && lesson_load(&l, path, &e);
    CHECK(read, "%s: %s", path, e.msg);
    if (!read) return free(text);
    same_as_pytorch(c, l.setup.src_ids);
    // The ids are the lesson's input as the folder's tokenizer reads it (BOS where it adds one).
    int code = run("run --model '%s/%s' --input '%s' --max-len 16 --json", MODELS, c->folder, l.setup.input);
    char ids[600];
    snprintf(ids, sizeof ids, "\"input_ids\":[%s]", l.setup.src_ids);
    CHECK(code == 0 && strstr(out, ids), "%s: src_ids are tokenizer('%s'): want %s in %s", c->lesson, l.setup.input, ids,
          out);
    char said[200];
    snprintf(said, sizeof said, "\"output_text\":\"%s\"", c->stated_text);
    char *readme = read_all(LESSONS "/README.md");
    CHECK(strstr(out, said) && strstr(out, "\"stop\":\"eos\"") && strstr(text, c->stated_text) && readme &&
              strstr(readme, c->stated_text),
          "%s: writes '%s' and ends the line, as it and the course's list say: %s", c->lesson, c->stated_text, out);
    free(readme);
    // The first round's probability of the token it writes: the softmax of the dump's last row.
    snprintf(path, sizeof path, "%s/%s.safetensors", dir, c->folder);
    StFile d;
    double best = -1;
    if (st_load(&d, path, &e)) {
        const StEntry *z = st_find(&d, "logits");
        const long V = z ? z->shape.dim[1] : 0;
        const float *last = z ? z->data + (z->shape.dim[0] - 1) * V : NULL;
        double m = -INFINITY, sum = 0;
        for (long v = 0; v < V; v++) m = fmax(m, last[v]);
        for (long v = 0; v < V; v++) sum += exp(last[v] - m);
        best = V ? 1.0 / sum : -1;  // the largest probability: exp(m - m) / sum
        st_free(&d);
    }
    CHECK(fabs(best - c->first_p) < 0.0005 && strstr(text, c->first_token), "%s: the first round's choice %.4f, stated %s",
          c->lesson, best, c->first_token);
    stated_losses(c, text, licences);
    lesson_free(&l);
    free(text);
}

// ---- lessons/four-ways.md: its maps against closed forms and loops over the folder's weights ----

// The values of `lesson four-ways.md --print STAGE --json` (at most n).
static int printed(const char *stage, double *v, int n) {
    if (run("lesson '%s/four-ways.md' --print %s --json", LESSONS, stage) != 0) return 0;
    const char *p = strstr(out, "\"values\"");
    int k = 0;
    for (p = p ? strchr(p, '[') : NULL; p && k < n;) {
        char *end;
        p++;
        v[k++] = strtod(p, &end);
        p = *end == ',' ? end : NULL;
    }
    return k;
}

// The sentence the lesson must hold, with the number written to 4 decimals.
static void states(const char *lesson, const char *fmt, double value) {
    char want[200];
    snprintf(want, sizeof want, fmt, value);
    CHECK(strstr(lesson, want) != NULL, "four-ways.md states '%s'", want);
}

static void four_ways(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/gpt2-licences/model.safetensors", MODELS);
    StFile f;
    Err e = {{0}};
    const bool loaded = st_load(&f, path, &e);
    CHECK(loaded, "%s", e.msg);
    if (!loaded) return;
    snprintf(path, sizeof path, "%s/four-ways.md", LESSONS);
    char *lesson = read_all(path);
    const int d = 64, T = 12;
    const float *x = st_find(&f, "wte.weight")->data + 262 * d, *wpe = st_find(&f, "wpe.weight")->data;
    static double got[4 * 12 * 12];
    // None: |x|^2 everywhere.
    double xx = 0;
    for (int j = 0; j < d; j++) xx += (double)x[j] * x[j];
    int n = printed("none.dots_none", got, T * T), off = 0;
    for (int i = 0; i < n; i++) off += fabs(got[i] - xx) > 1e-5;
    CHECK(n == T * T && !off, "dots_none is |x|^2 = %.6f everywhere (%d of %d differ)", xx, off, n);
    states(lesson, "the same number, %.4f.", xx);
    // Sinusoidal: PE(p) . PE(p') = sum_i cos((p - p') w_i), and (x + PE(p)) . (x + PE(p')).
    double table1 = 0;
    for (int i = 0; i < d / 2; i++) table1 += cos(pow(10000.0, -2.0 * i / d));
    n = printed("sinusoidal.table_dots", got, T * T);
    CHECK(n == T * T && fabs(got[0 * T + 1] - table1) < 1e-4 && fabs(got[5 * T + 6] - table1) < 1e-4,
          "table_dots' neighbours are sum cos(w_i) = %.6f (%.6f, %.6f)", table1, got[1], got[5 * T + 6]);
    states(lesson, "(neighbours: %.4f, at every `p`)", table1);
    double with_sin[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        const int p = k ? 5 : 0;
        for (int j = 0; j < d; j++) {
            const double w = pow(10000.0, -(double)(j - j % 2) / d);
            const double a = x[j] + (j % 2 ? cos(p * w) : sin(p * w)), b = x[j] + (j % 2 ? cos((p + 1) * w) : sin((p + 1) * w));
            with_sin[k] += a * b;
        }
    }
    n = printed("sinusoidal.dots_sin", got, T * T);
    CHECK(n == T * T && fabs(got[1] - with_sin[0]) < 1e-4 && fabs(got[5 * T + 6] - with_sin[1]) < 1e-4,
          "dots_sin by hand: %.6f, %.6f", with_sin[0], with_sin[1]);
    char both[200];
    snprintf(both, sizeof both, "neighbours 0 and 1 give %.4f, neighbours 5\nand 6 give %.4f", with_sin[0], with_sin[1]);
    CHECK(strstr(lesson, both) != NULL, "four-ways.md states '%s'", both);
    // Learned: rows of wpe.
    double w01 = 0, w56 = 0;
    for (int j = 0; j < d; j++) w01 += (double)wpe[j] * wpe[d + j], w56 += (double)wpe[5 * d + j] * wpe[6 * d + j];
    n = printed("learned.wpe_dots", got, T * T);
    CHECK(n == T * T && fabs(got[1] - w01) < 1e-5 && fabs(got[5 * T + 6] - w56) < 1e-5, "wpe_dots by hand: %.6f, %.6f",
          w01, w56);
    states(lesson, "a dot product of %.4f, and", w01);
    states(lesson, "as close, have %.4f.", w56);
    // Rotary, head 1 (columns 0-15), pairs (i, i + 8): the dot of two turned rows is
    // sum_i (x_i^2 + x_{i+8}^2) cos((p - p') w_i), w_i = 10000^(-2i/16).
    double dist[2] = {0, 0};
    for (int i = 0; i < 8; i++) {
        const double r2 = (double)x[i] * x[i] + (double)x[i + 8] * x[i + 8], w = pow(10000.0, -2.0 * i / 16);
        dist[0] += r2, dist[1] += r2 * cos(3 * w);
    }
    n = printed("rotary.dots_rope", got, 4 * T * T);
    CHECK(n == 4 * T * T && fabs(got[0 * T + 3] - dist[1]) < 1e-5 && fabs(got[5 * T + 8] - dist[1]) < 1e-5 &&
          fabs(got[8 * T + 11] - dist[1]) < 1e-5 && fabs(got[4 * T + 7] - dist[1]) < 1e-5 && fabs(got[0] - dist[0]) < 1e-5,
          "dots_rope by hand: distance 3 %.6f, distance 0 %.6f", dist[1], dist[0]);
    states(lesson, "positions 0 and 3\ngive %.4f, and so do", dist[1]);
    states(lesson, "(the token with itself, %.4f in head 1)", dist[0]);
    free(lesson);
    st_free(&f);
}

int main(void) {
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    char licences[400];
    snprintf(licences, sizeof licences, "%s/licences.txt", dir);
    CHECK(write_licences(licences), "%s: the licence texts (Debian's base-files) are missing", LICENCES);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) lesson_case(&cases[k], licences);
    four_ways();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_hub_lessons");
}
