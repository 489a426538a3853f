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
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

// The largest |logit| difference over the largest |logit| (or 1), or -1 when unreadable.
static double logits_error(const char *dump, const StFile *want_file) {
    StFile d;
    Err e = {{0}};
    if (!st_load(&d, dump, &e)) return -1;
    const StEntry *got = st_find(&d, "logits"), *want = st_find(want_file, "logits");
    double err_max = -1;
    if (got && want && shape_eq(&got->shape, &want->shape)) {
        double big = 1.0, diff = 0.0;
        for (long i = 0; i < shape_numel(&want->shape); i++) {
            big = fmax(big, fabs(want->data[i]));
            diff = fmax(diff, fabs((double)got->data[i] - want->data[i]));
        }
        err_max = diff / big;
    }
    st_free(&d);
    return err_max;
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
    const double err_max = code == 0 ? logits_error(path, &want) : -1;
    CHECK(err_max >= 0 && err_max <= 1e-4, "%s: logits against PyTorch's: %.3g of the largest (exit %d: %s)", c->folder,
          err_max, code, err);
    code = run("run --model '%s/%s' --src-ids %s --max-len 8 --json", MODELS, c->folder, ids);
    const StEntry *gen = st_find(&want, "generated");
    char expect[200] = "\"output_ids\":[";
    int k = (int)strlen(expect), n = 0;
    for (; gen && n < gen->shape.dim[0]; n++) {  // our run stops at eos, PyTorch's loop does not
        const int id = (int)gen->data[n];
        if (id == atoi(strchr(c->eos, '=') + 1)) break;  // (eos is not written)
        k += snprintf(expect + k, sizeof expect - (size_t)k, "%s%d", n ? "," : "", id);
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
    CHECK(strstr(out, said) && strstr(out, "\"stop\":\"eos\"") && strstr(text, c->stated_text),
          "%s: writes '%s' and ends the line, as it says: %s", c->lesson, c->stated_text, out);
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

int main(void) {
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    char licences[400];
    snprintf(licences, sizeof licences, "%s/licences.txt", dir);
    CHECK(write_licences(licences), "%s: the licence texts (Debian's base-files) are missing", LICENCES);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) lesson_case(&cases[k], licences);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_hub_lessons");
}
