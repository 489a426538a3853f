// test_marian_lesson.c: lessons/marian.md and lessons/alignment.md run the translation model
// scripts/train_marian_model.sh trained in C (assets/models/marian-gettext-en-de), and every
// number they state of it is measured here on the committed folder:
// - PyTorch's answers: the module of scripts/make_hub_fixtures.py, loading the folder's own
//   config.json and model.safetensors, gives the logits `trace --dump` gives to 1e-4 of the
//   largest, and `run` writes its greedy ids (tests/fixtures/hub/lesson-marian-gettext-en-de);
// - each lesson's src_ids are its input as the folder's tokenizer reads it;
// - the data: the pairs and catalogues catalogues.txt counts, the held-out pairs of heldout.tsv
//   and the exact match greedy decoding reaches on them;
// - what the lessons quote: the translation, the first round's probability, and which source
//   token each new token's cross-attention reads most (the heads' mean, last layer).
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "check.h"
#include "cli_run.h"
#include "hub.h"
#include "session.h"
#include "train.h"

#define FOLDER MODELS "/marian-gettext-en-de"

static char *text_of(const char *path) {
    char *t = NULL;
    size_t n;
    Err e = {{0}};
    CHECK(file_read_all(path, "a file", &t, &n, &e), "%s", e.msg);
    return t;
}

// The lesson states the formatted text.
static void states(const char *lesson, const char *text, const char *fmt, ...) {
    char s[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    CHECK(text && strstr(text, s), "%s states '%s'", lesson, s);
    printf("  %s: %s\n", lesson, s);
}

// The lesson's header line `key: value` into buf.
static bool header(const char *text, const char *key, char *buf, size_t n) {
    const char *p = text ? strstr(text, key) : NULL;
    if (!p) return false;
    p += strlen(key);
    const size_t len = strcspn(p, "\n");
    snprintf(buf, n, "%.*s", (int)len, p);
    return true;
}

static void same_as_pytorch(void) {
    StFile c;
    Err e = {{0}};
    if (!st_load(&c, FIXTURES "/hub/lesson-marian-gettext-en-de.safetensors", &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    char src[512], tgt[512], want[512] = "\"output_ids\":[";
    ids_csv(st_find(&c, "src"), src, sizeof src);
    ids_csv(st_find(&c, "tgt"), tgt, sizeof tgt);
    int code = run("trace --model '%s' --src-ids %s --tgt-ids %s --dump '%s/m.safetensors'", FOLDER, src, tgt, dir);
    char path[400];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    const double err_max = code == 0 ? dump_logits_error(path, &c) : -1;
    CHECK(err_max >= 0 && err_max <= 1e-4, "the lesson's model: PyTorch's logits to 1e-4 (%.3g): %s", err_max, err);
    code = run("run --model '%s' --src-ids %s --max-len %s --json", FOLDER, src, st_meta(&c, "max_new_tokens"));
    ids_csv(st_find(&c, "generated"), want + strlen(want), sizeof want - strlen(want));
    strcat(want, "]");
    CHECK(code == 0 && strstr(out, want), "PyTorch's greedy ids %s in: %s %s", want, out, err);
    st_free(&c);
}

// The lesson's src_ids are its input as the folder's tokenizer reads it.
static void ids_are_input(const char *lesson, const char *text) {
    char input[300], ids[300], want[400];
    CHECK(header(text, "\ninput: ", input, sizeof input) && header(text, "\nsrc_ids: ", ids, sizeof ids), "%s: input and src_ids", lesson);
    const int code = run("tokenize --model '%s' --text '%s' --json", FOLDER, input);
    snprintf(want, sizeof want, "{\"ids\":[%s]", ids);
    CHECK(code == 0 && !strncmp(out, want, strlen(want)), "%s: src_ids %s are '%s' tokenized: %s", lesson, ids, input, out);
}

// The data and the held-out exact match.
static void data(const char *lesson, const char *text) {
    char *cat = text_of(FOLDER "/catalogues.txt");
    int pairs = 0, catalogues = 0;
    const char *p = cat ? strstr(cat, "how many pairs each gave: ") : NULL;
    CHECK(p && sscanf(p, "how many pairs each gave: %d pairs from %d catalogues", &pairs, &catalogues) == 2, "catalogues.txt counts");
    states(lesson, text, "%d pairs from %d catalogues", pairs, catalogues);
    free(cat);
    Model m;
    Lesson l;
    Err e = {{0}};
    Tokenizer *src = NULL, *tgt = NULL;
    if (!lesson_load(&l, LESSONS "/marian.md", &e) || !model_load(&m, FOLDER, &l.program, NULL, &e)) {
        CHECK(false, "%s", e.msg);
        return;
    }
    PairData d;
    const int S = m.cfg.max_positions;
    bool ok = hub_tokenizers(FOLDER, &src, &tgt, &e) && pairs_load(&d, FOLDER "/heldout.tsv", src, tgt, S, S, &e);
    CHECK(ok, "heldout.tsv reads: %s", e.msg);
    int right = 0;
    for (int from = 0; ok && from < d.n; from += 250) ok = pairs_exact(&d, &l.program, &m, S, S, from, d.n - from < 250 ? d.n - from : 250, &right, &e);
    CHECK(ok, "%s", e.msg);
    CHECK(d.read == pairs / 10, "heldout.tsv holds every 10th pair: %d of %d", d.read, pairs);
    states(lesson, text, "%d of the %d held-out pairs (%.1f%%)", right, d.n, 100.0 * right / d.n);
    if (ok) pairs_free(&d);
    hub_tokenizers_free(src, tgt);
    model_free(&m);
    lesson_free(&l);
}

// The lesson run to its end: its translation, the first round's probability and, for each
// token written, the source token its last cross-attention reads most (the heads' mean).
static void what_it_writes(const char *lesson, const char *text, bool alignment) {
    char path[400];
    snprintf(path, sizeof path, "%s/%s", LESSONS, lesson);
    Session s;
    SessionSpec spec = {.lesson_path = path};
    Err e = {{0}};
    if (!session_open(&s, &spec, &e) || !interp_run(s.it, &e)) {
        CHECK(false, "%s: %s", lesson, e.msg);
        return;
    }
    int n;
    StopReason why;
    const float *gen = interp_generated(s.it, &n, &why);
    char written[400];
    vocab_decode(&s.model.tgt_vocab, gen, n, written, sizeof written);
    states(lesson, text, "writes `%s`", written);
    const int probs = interp_find(s.it, "step.0.generator.probs");
    const float *p = probs >= 0 ? interp_output(s.it, probs) : NULL;
    if (p) states(lesson, text, "`%s` with %.3f", vocab_token(&s.model.tgt_vocab, (int)gen[0]), p[(int)gen[0]]);
    for (int r = 0; alignment && r < n; r++) {
        char id[96];
        snprintf(id, sizeof id, "step.%d.decoder.layers.%d.cross_attn.weights", r, s.model.cfg.num_decoder_layers - 1);
        const int k = interp_find(s.it, id);
        if (k < 0) continue;
        const Stage *st = interp_stage(s.it, k);
        const int H = st->shape.dim[0], T = st->shape.dim[1], S = st->shape.dim[2];
        const float *w = interp_output(s.it, k);
        int best = 0;
        double bw = -1;
        for (int j = 0; j < S; j++) {
            double m = 0;
            for (int h = 0; h < H; h++) m += w[((size_t)h * T + T - 1) * S + j] / H;
            if (m > bw) bw = m, best = j;
        }
        int len;
        const float *src = interp_input_ids(s.it, st->axes.slot[2], &len);
        states(lesson, text, "| `%s` | `%s` | %.2f |", vocab_token(&s.model.tgt_vocab, (int)gen[r]),
               best < len ? vocab_token(&s.model.src_vocab, (int)src[best]) : "?", bw);
    }
    session_close(&s);
}

// The largest |logit| difference between two dumps' logits, or -1.
static double logits_apart(const char *a, const char *b) {
    StFile x, y;
    Err e = {{0}};
    if (!st_load(&x, a, &e)) return -1;
    double worst = -1;
    if (st_load(&y, b, &e)) {
        const StEntry *p = st_find(&x, "logits"), *q = st_find(&y, "logits");
        if (p && q && shape_eq(&p->shape, &q->shape)) {
            worst = 0;
            for (long long i = 0; i < shape_numel(&p->shape); i++) worst = fmax(worst, fabs((double)p->data[i] - q->data[i]));
        }
        st_free(&y);
    }
    st_free(&x);
    return worst;
}

// Each of Marian's differences from the paper undone, on the lesson's model and input: what the
// same weights then write, and how far the logits of the teacher-forced pass on the correct
// translation move (PyTorch's case: its source and its greedy ids).
static void differences(const char *text) {
    static const struct {
        const char *start, *line, *what;
    } undo[] = {
        {"pos = add_positions(embed, @model.", "table = positional_table()\npos = add_positions(embed, table)",
         "the paper's interleaved table"},
        {"act = silu(fc1)", "act = activation(fc1)", "ReLU for SiLU"},
        {"default embed_scale", "default embed_scale = 1", "no sqrt(d_model)"},
        {"logits = linear(x, @lm_head.weight, @final_logits_bias)", "logits = linear(x, @lm_head.weight)", "no final_logits_bias"},
    };
    StFile c;
    Err e = {{0}};
    if (!st_load(&c, FIXTURES "/hub/lesson-marian-gettext-en-de.safetensors", &e)) return;
    char src[512], tgt[512], right[400], wrong[400];
    ids_csv(st_find(&c, "src"), src, sizeof src);
    ids_csv(st_find(&c, "tgt"), tgt, sizeof tgt);
    st_free(&c);
    snprintf(right, sizeof right, "%s/right.safetensors", dir);
    snprintf(wrong, sizeof wrong, "%s/wrong.safetensors", dir);
    CHECK(run("trace --model '%s' --src-ids %s --tgt-ids %s --dump '%s'", FOLDER, src, tgt, right) == 0, "%s", err);
    for (size_t k = 0; k < sizeof undo / sizeof undo[0]; k++) {
        const char *program = lesson_variant(LESSONS "/marian.md", undo[k].start, undo[k].line);
        int code = run("run --model '%s' --program '%s' --src-ids %s --max-len 16 --json", FOLDER, program, src);
        const char *t = strstr(out, "\"output_text\":\"");
        char written[300] = "";
        if (t) snprintf(written, sizeof written, "%.*s", (int)strcspn(t + 15, "\""), t + 15);
        CHECK(code == 0 && t, "%s runs: %s", undo[k].what, err);
        code = run("trace --model '%s' --program '%s' --src-ids %s --tgt-ids %s --dump '%s'", FOLDER, program, src, tgt, wrong);
        const double moved = code == 0 ? logits_apart(right, wrong) : -1;
        CHECK(moved >= 0, "%s: the dump compares: %s", undo[k].what, err);
        states("marian.md", text, "| %s | `%s` | %.2f |", undo[k].what, written, moved);
    }
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    same_as_pytorch();
    char *marian = text_of(LESSONS "/marian.md");
    ids_are_input("marian.md", marian);
    data("marian.md", marian);
    what_it_writes("marian.md", marian, true);
    differences(marian);
    free(marian);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_marian_lesson");
}
