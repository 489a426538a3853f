// test_text.c: the text task (train --task text). Reading and splitting a file against the
// test's own UTF-8 decoding and split; every bad input, in C and on the command line (exit 1,
// one line, nothing written); the bigram baseline against a naive count; the windows; the
// trainer's held-out loss against the logits `trace` dumps, window by window; a short run that
// beats the bigram; and the numbers lessons/text-model.md states.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"
#include "files.h"
#include "rng.h"
#include "safetensors.h"
#include "session.h"
#include "train.h"

// A path in the scratch folder. The result lasts until the 16th call after this one: callers
// that keep a path longer copy it.
static const char *path_in(const char *name) {
    static char p[16][400];
    static int k;
    k = (k + 1) % 16;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void write_bytes(const char *path, const void *b, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n, "writing %s", path);
    if (f) fclose(f);
}

static void write_text(const char *path, const char *s) { write_bytes(path, s, strlen(s)); }

// The test's own UTF-8 reading (of valid text): code points into cp, returns how many.
static size_t decode_utf8(const char *s, uint32_t *cp) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p) {
        const int len = *p < 0x80 ? 1 : *p < 0xE0 ? 2 : *p < 0xF0 ? 3 : 4;
        uint32_t v = len == 1 ? *p : *p & (0x7F >> len);
        for (int i = 1; i < len; i++) v = v << 6 | (p[i] & 0x3F);
        cp[n++] = v, p += len;
    }
    return n;
}

// The split as the docs state it, worked out here: line i (from 0) is held out when i % 10 == 9;
// each part is its lines one after the other. Fills train and held with code points.
static void split_by_hand(const char *text, uint32_t *train, size_t *n_train, uint32_t *held, size_t *n_held) {
    static uint32_t cp[1 << 16];
    const size_t n = decode_utf8(text, cp);
    size_t line = 0;
    *n_train = *n_held = 0;
    for (size_t i = 0; i < n; i++) {
        if (line % 10 == 9) held[(*n_held)++] = cp[i];
        else train[(*n_train)++] = cp[i];
        line += cp[i] == '\n';
    }
}

static int cmp_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

// ---- reading and splitting ----

static const char *const words[] = {"apple", "Bär", "日本語", "tab\there", "o'clock", "naïve", "zebra", "ünïcödé",
                                    "emoji 🙂", "last"};

// 23 lines, the last without a line break.
static void mixed_text(char *buf, size_t n) {
    size_t k = 0;
    for (int i = 0; i < 23; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s %d%s", words[i % 10], i, i < 22 ? "\n" : "");
}

static void reads_and_splits(void) {
    static char text[4096];
    static uint32_t train[4096], held[4096], all[8192];
    mixed_text(text, sizeof text);
    write_text(path_in("mixed.txt"), text);
    size_t nt, nh;
    split_by_hand(text, train, &nt, held, &nh);
    TextData t;
    Err e = {{0}};
    CHECK(text_load(&t, path_in("mixed.txt"), false, 0, &e), "%s", e.msg);
    CHECK(t.lines == 23 && t.held_lines == 2, "23 lines, 2 held out (the 10th and 20th): %zu, %zu", t.lines,
          t.held_lines);
    CHECK(t.n == nt + nh && t.n_train == nt, "%zu characters, %zu training: want %zu, %zu", t.n, t.n_train, nt + nh, nt);
    // The symbols: the distinct code points, ascending.
    size_t n_all = decode_utf8(text, all), distinct = 0;
    qsort(all, n_all, sizeof *all, cmp_u32);
    for (size_t i = 0; i < n_all; i++) distinct += i == 0 || all[i] != all[i - 1];
    CHECK((size_t)t.n_chars == distinct, "%d symbols, want %zu", t.n_chars, distinct);
    bool ascending = true;
    for (int i = 1; i < t.n_chars; i++) ascending &= t.chars[i] > t.chars[i - 1];
    CHECK(ascending && t.chars[0] == '\t' && t.chars[1] == '\n' && t.chars[t.n_chars - 1] == 0x1F642,
          "ascending from tab, line break, ..., to U+1F642");
    int bad = 0;
    for (size_t i = 0; i < t.n && t.n == nt + nh; i++) bad += t.chars[t.ids[i]] != (i < nt ? train[i] : held[i - nt]);
    CHECK(bad == 0, "%d characters differ from the split worked out by hand", bad);
    // The vocabulary: the specials, then every symbol but the line break, which is eos.
    Vocab v;
    CHECK(text_vocab(&t, &v, &e) && v.n == VOCAB_SPECIALS + t.n_chars - 1 && v.by_char, "%s", e.msg);
    float tok[64];
    CHECK(t.n_chars <= 64 && text_token_ids(&t, &v, VOCAB_EOS, tok, &e), "%s", e.msg);
    CHECK(tok[1] == VOCAB_EOS && tok[0] == VOCAB_SPECIALS && !strcmp(vocab_token(&v, (int)tok[0]), "\t") &&
              !strcmp(vocab_token(&v, (int)tok[t.n_chars - 1]), "🙂"),
          "tab first, the line break as eos, the emoji last");
    float ids[16];
    int n;
    CHECK(vocab_encode(&v, "日本 Bär", "target", ids, 16, &n, &e) && n == 6, "a prompt splits into its characters");
    vocab_free(&v);
    Vocab ascii;  // another model's vocabulary, without the text's characters
    CHECK(vocab_chars(&ascii, &e) && !text_token_ids(&t, &ascii, VOCAB_EOS, tok, &e) &&
              strstr(e.msg, "has no token for '\t' (U+0009)"), "%s", e.msg);
    vocab_free(&ascii);
    text_free(&t);
}

// Shuffled lines: the order re-derived here from the documented rule, then split as above.
static void shuffles(void) {
    static char text[4096], shuffled[4096];
    static uint32_t train[4096], held[4096];
    mixed_text(text, sizeof text);  // 23 lines, the last without a line break
    const char *line[23];
    int len[23], order[23];
    for (int i = 0, at = 0; i < 23; i++) {
        line[i] = text + at, len[i] = (int)strcspn(text + at, "\n") + (i < 22), at += len[i], order[i] = i;
    }
    Rng rng = {9 * 0x9E3779B97F4A7C15ull + 0x5EED};
    for (int p = 22; p > 1; p--) {  // the unterminated last line stays last
        const int j = (int)(rng_u64(&rng) % (uint64_t)p), x = order[p - 1];
        order[p - 1] = order[j], order[j] = x;
    }
    size_t k = 0;
    for (int p = 0; p < 23; p++) k += (size_t)snprintf(shuffled + k, sizeof shuffled - k, "%.*s", len[order[p]], line[order[p]]);
    size_t nt, nh;
    split_by_hand(shuffled, train, &nt, held, &nh);
    TextData t, again, other;
    Err e = {{0}};
    CHECK(text_load(&t, path_in("mixed.txt"), true, 9, &e) && text_load(&again, path_in("mixed.txt"), true, 9, &e) &&
              text_load(&other, path_in("mixed.txt"), true, 10, &e),
          "%s", e.msg);
    int bad = 0, same = 0, differ = 0;
    for (size_t i = 0; i < t.n && t.n == nt + nh && t.n_train == nt; i++) {
        bad += t.chars[t.ids[i]] != (i < nt ? train[i] : held[i - nt]);
        same += t.ids[i] == again.ids[i], differ += t.ids[i] != other.ids[i];
    }
    CHECK(t.n == nt + nh && t.n_train == nt && bad == 0, "the shuffled split differs from the rule in %d characters", bad);
    CHECK((size_t)same == t.n && differ > 0, "seed 9 twice: the same order; seed 10: another");
    CHECK(order[0] != 0 || order[1] != 1 || order[2] != 2, "the lines moved");
    text_free(&t), text_free(&again), text_free(&other);
}

// ---- bad input ----

typedef struct {
    const char *name;
    const char *bytes;
    size_t n;
    const char *says;  // in the one-line message
} BadText;

static void bad_inputs(void) {
    char many[8192];  // 1001 distinct characters, one line each... plus enough lines
    size_t k = 0;
    for (uint32_t cp = 0x100; cp < 0x100 + 1000; cp++)  // two-byte UTF-8: U+0100 .. U+04E7
        k += (size_t)snprintf(many + k, sizeof many - k, "%c%c\n", (char)(0xC0 | cp >> 6), (char)(0x80 | (cp & 0x3F)));
    const BadText bad[] = {
        {"empty.txt", "", 0, "the file is empty"},
        {"nul.txt", "hello\nwo\0rld\n", 13, "a NUL byte at byte offset 8: this is a binary file"},
        {"stray.txt", "abc\x80zz\n", 7, "not UTF-8 text: byte offset 3 (0x80)"},
        {"overlong.txt", "ab\xC0\xAF\n", 5, "byte offset 2 (0xC0)"},
        {"surrogate.txt", "a\n\xED\xA0\x80\n", 6, "byte offset 2 (0xED)"},
        {"beyond.txt", "\xF4\x90\x80\x80", 4, "byte offset 0 (0xF4)"},
        {"cut.txt", "euro \xE2\x82", 7, "byte offset 5 (0xE2)"},
        {"short-cont.txt", "x\xE2\x28\xA1y", 5, "byte offset 1 (0xE2)"},
        {"many.txt", many, k, "1001 distinct characters, more than the 1000 the text task takes"},
        {"nine.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\n", 18, "9 lines: the text task holds out every 10th line"},
        {"held-short.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj", 19, "the held-out lines (every 10th) hold 1 character"},
    };
    Err e = {{0}};
    TextData t;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_bytes(path_in(bad[i].name), bad[i].bytes, bad[i].n);
        e.msg[0] = '\0';
        CHECK(!text_load(&t, path_in(bad[i].name), false, 0, &e) && strstr(e.msg, bad[i].says) && strstr(e.msg, bad[i].name),
              "%s: '%s' in: %s", bad[i].name, bad[i].says, e.msg);
        CHECK(t.ids == NULL && t.chars == NULL, "%s: nothing kept", bad[i].name);
        // The command line: exit 1, one line naming the file, no model written.
        char model[400];
        snprintf(model, sizeof model, "%s", path_in("never.safetensors"));
        const int code = run("train --task text --data '%s' --steps 5 --out '%s'", path_in(bad[i].name), model);
        CHECK(code == 1 && strstr(err, bad[i].says) && !strncmp(err, "stepformer: ", 12) &&
                  strchr(err, '\n') == err + strlen(err) - 1 && access(model, F_OK) != 0,
              "%s: exit %d (want 1), one line, no file: %s", bad[i].name, code, err);
    }
    CHECK(!text_load(&t, path_in("missing.txt"), false, 0, &e) && strstr(e.msg, "missing.txt: cannot open the text: No such file"),
          "%s", e.msg);
    CHECK(!text_load(&t, dir, false, 0, &e) && strstr(e.msg, "not a regular file"), "%s", e.msg);
    // Larger than the limit (lowered to 1 MB here: the default is 64 MB).
    char *big = malloc(3 << 19);
    for (int i = 0; big && i < 3 << 19; i++) big[i] = i % 50 == 49 ? '\n' : (char)('a' + i % 26);
    if (big) write_bytes(path_in("big.txt"), big, 3 << 19);
    free(big);
    setenv("STEPFORMER_MAX_TEXT_MB", "1", 1);
    CHECK(!text_load(&t, path_in("big.txt"), false, 0, &e) &&
              strstr(e.msg, "big.txt: 1.5 MB, more than the 1 MB a text to train on may have (set STEPFORMER_MAX_TEXT_MB"),
          "%s", e.msg);
    unsetenv("STEPFORMER_MAX_TEXT_MB");
    CHECK(text_load(&t, path_in("big.txt"), false, 0, &e), "under the default 64 MB: %s", e.msg);
    text_free(&t);
    snprintf(extra_env, sizeof extra_env, "STEPFORMER_MAX_TEXT_MB=1");
    const int code = run("train --task text --data '%s' --out '%s'", path_in("big.txt"), path_in("never.safetensors"));
    extra_env[0] = '\0';
    CHECK(code == 1 && strstr(err, "more than the 1 MB"), "exit %d: %s", code, err);
}

static void bad_flags(void) {
    const char *m = path_in("flags.safetensors");
    CHECK(run("train --task text --out '%s'", m) == 2 && strstr(err, "--task text needs --data FILE"), "%s", err);
    CHECK(run("train --task copy --data x.txt --out '%s'", m) == 2 && strstr(err, "--data, --block, --shuffle and --tokenizer are for --task text"),
          "%s", err);
    CHECK(run("train --task text --data x.txt --block 0 --out '%s'", m) == 2 && strstr(err, "--block needs a whole number"),
          "%s", err);
    CHECK(run("train --task text --data x.txt --block 1025 --out '%s'", m) == 2 && strstr(err, "from 1 to 1024"),
          "%s", err);
    CHECK(run("train --task text --data x.txt --stop-at 0.9 --out '%s'", m) == 2 && strstr(err, "--stop-at"), "%s",
          err);
    CHECK(run("train --task text --data x.txt --enc-layers 2 --out '%s'", m) == 2 && strstr(err, "decoder-only"),
          "%s", err);
    CHECK(run("train --task texts --out '%s'", m) == 2 && strstr(err, "brackets, text and translate"), "%s", err);
    // An encoder-decoder program cannot learn it: it reads a source the text task does not have.
    write_text(path_in("ten.txt"), "aa\nbb\ncc\ndd\nee\nff\ngg\nhh\nii\njj\n");
    CHECK(run("train --task text --data '%s' --program '%s/pre-norm.md' --out '%s'", path_in("ten.txt"), LESSONS, m) ==
                  1 && strstr(err, "pre-norm.md reads a source (input src)"),
          "%s", err);
    CHECK(run("train --task text --data '%s' --program '%s/transformers-from-scratch.md' --out '%s'",
              path_in("ten.txt"), LESSONS, m) == 1 && strstr(err, "has no decode loop"),
          "%s", err);
}

// ---- the bigram baseline ----

static void bigram_by_hand(void) {
    static char text[4096];
    static uint32_t train[4096], held[4096], chars[256];
    mixed_text(text, sizeof text);
    size_t nt, nh;
    split_by_hand(text, train, &nt, held, &nh);
    // Every distinct character, for V.
    size_t V = 0;
    for (size_t i = 0; i < nt + nh; i++) {
        const uint32_t c = i < nt ? train[i] : held[i - nt];
        bool seen = false;
        for (size_t j = 0; j < V; j++) seen |= chars[j] == c;
        if (!seen) chars[V++] = c;
    }
    double sum = 0;  // each held-out character after the first, given the one before it
    for (size_t j = 1; j < nh; j++) {
        double pair = 0, first = 0;
        for (size_t i = 0; i + 1 < nt; i++) first += train[i] == held[j - 1], pair += train[i] == held[j - 1] && train[i + 1] == held[j];
        sum -= log((pair + 1) / (first + (double)V));
    }
    TextData t;
    Err e = {{0}};
    double nats = 0;
    CHECK(text_load(&t, path_in("mixed.txt"), false, 0, &e) && text_bigram_loss(&t, &nats, &e), "%s", e.msg);
    CHECK(fabs(nats - sum / (double)(nh - 1)) < 1e-12, "bigram baseline %.15f, by hand %.15f", nats, sum / (double)(nh - 1));
    text_free(&t);
}

// ---- windows ----

static void windows(void) {
    TextData t;
    Err e = {{0}};
    CHECK(text_load(&t, path_in("mixed.txt"), false, 0, &e), "%s", e.msg);
    float tok[64];
    for (int i = 0; i < t.n_chars; i++) tok[i] = (float)(100 + i);  // any ids, told apart from the pad
    const float pad = -1;
    for (int block = 1; block <= 40; block += 13) {
        // Held out: every label once, in order, each predicted from the input before it.
        const size_t nw = text_held_windows(&t, block);
        size_t next = t.n_train + 1, bad = 0;
        float in[64], label[64];
        for (size_t w = 0; w < nw; w++) {
            const int counted = text_window(&t, t.n_train + w * (size_t)block, t.n, block, tok, pad, in, label);
            for (int k = 0; k < block; k++) {
                if (label[k] == pad) continue;
                bad += label[k] != tok[t.ids[next]] || in[k] != tok[t.ids[next - 1]];
                next++;
            }
            bad += counted != (w + 1 < nw ? block : (int)(t.n - t.n_train - 1 - w * (size_t)block));
        }
        CHECK(bad == 0 && next == t.n, "block %d: %zu held-out windows label each character once (%zu wrong)", block, nw,
              bad);
        // Training windows fit in the training part.
        Rng rng = {7};
        size_t lowest = t.n, highest = 0;
        for (int i = 0; i < 2000; i++) {
            const size_t s = text_draw_start(&t, &rng, block);
            lowest = s < lowest ? s : lowest, highest = s > highest ? s : highest;
        }
        CHECK(lowest == 0 && highest == t.n_train - (size_t)block - 1, "block %d: starts from 0 to %zu (got %zu..%zu)",
              block, t.n_train - (size_t)block - 1, lowest, highest);
    }
    text_free(&t);
    // A training part shorter than a window: one window, padded.
    TextData s;
    write_text(path_in("tiny.txt"), "ab\nc\nd\ne\nf\ng\nh\ni\nj\nxyz");
    CHECK(text_load(&s, path_in("tiny.txt"), false, 0, &e) && s.n_train == 19, "%s", e.msg);
    Rng rng = {1};
    float in[32], label[32];
    CHECK(text_draw_start(&s, &rng, 20) == 0, "the only start");
    CHECK(text_window(&s, 0, s.n_train, 20, tok, pad, in, label) == 18 && in[18] != pad && in[19] == pad &&
              label[17] != pad && label[18] == pad,
          "19 inputs, 18 labels, then padding");
    text_free(&s);
}

// ---- the trainer ----

static const char *const nato[] = {"alpha", "bravo", "charlie", "delta", "echo",  "foxtrot",
                                   "golf",  "hotel", "india",   "juliett", "kilo", "lima"};

// n lines, each a word drawn from the list by a seeded generator.
static void nato_text(const char *path, int n, uint64_t seed) {
    char *buf = malloc((size_t)n * 10 + 1);
    size_t k = 0;
    Rng rng = {seed};
    for (int i = 0; buf && i < n; i++) k += (size_t)sprintf(buf + k, "%s\n", nato[rng_below(&rng, 12)]);
    if (buf) write_bytes(path, buf, k);
    free(buf);
}

static TrainConfig tiny(const char *data, int block) {
    TrainConfig c = train_text_defaults(data);
    c.model.d_model = 32, c.model.nhead = 4, c.model.dim_feedforward = 64, c.model.num_decoder_layers = 1;
    c.block = block, c.batch = 32, c.lr = 3e-3f, c.warmup = 20;
    return c;
}

// Steps the trainer n times; false (a failed check) on an error.
static bool steps(Trainer *t, int n) {
    Err e = {{0}};
    StepStats s;
    for (int i = 0; i < n; i++)
        if (!trainer_step(t, &s, &e)) {
            CHECK(false, "step %d: %s", i + 1, e.msg);
            return false;
        }
    return true;
}

// The held-out loss again, from the logits `trace` dumps for each held-out window given as a
// prompt (--src-ids), with ids the test makes from the text and the saved vocabulary.
static double loss_from_trace(const char *model, const char *text_path, int block, size_t *labels) {
    StFile f;
    Err e = {{0}};
    Vocab v;
    if (!st_load(&f, model, &e) || !vocab_from_json(&v, st_meta(&f, "tgt_tokens"), "tgt_tokens", &e)) {
        CHECK(false, "%s", e.msg);
        return NAN;
    }
    const int eos = atoi(st_meta(&f, "eos_id"));
    st_free(&f);
    static uint32_t train[1 << 14], held[1 << 14];
    char *text = file_read(text_path);
    size_t nt, nh;
    split_by_hand(text, train, &nt, held, &nh);
    free(text);
    int ids[1 << 14];
    for (size_t i = 0; i < nh; i++) {
        char s[5] = {0};
        const uint32_t c = held[i];  // the test's own UTF-8 (ASCII here)
        s[0] = (char)c;
        ids[i] = c == '\n' ? eos : vocab_find(&v, s, 1);
    }
    vocab_free(&v);
    double sum = 0;
    *labels = 0;
    for (size_t start = 0; start + 1 < nh; start += (size_t)block) {
        const size_t len = nh - start < (size_t)block + 1 ? nh - start : (size_t)block + 1;
        char list[4096];
        size_t k = 0;
        for (size_t i = 0; i + 1 < len; i++) k += (size_t)snprintf(list + k, sizeof list - k, "%s%d", i ? "," : "", ids[start + i]);
        const int code = run("trace --program '%s/text-model.md' --model '%s' --src-ids %s --dump '%s'", LESSONS, model,
                             list, path_in("dump.safetensors"));
        if (code != 0 || !st_load(&f, path_in("dump.safetensors"), &e)) {
            CHECK(false, "trace: %s %s", err, e.msg);
            return NAN;
        }
        const StEntry *z = st_find(&f, "logits");
        const int V = z ? (int)z->shape.dim[z->shape.ndim - 1] : 0;
        CHECK(z && shape_numel(&z->shape) == (int64_t)(len - 1) * V, "logits: a row for each of the %zu prompt ids", len - 1);
        for (size_t r = 0; z && r + 1 < len; r++) {  // row r predicts id start + r + 1
            const float *row = z->data + r * (size_t)V;
            double m = row[0], total = 0;
            for (int j = 1; j < V; j++) m = row[j] > m ? row[j] : m;
            for (int j = 0; j < V; j++) total += exp(row[j] - m);
            sum += m + log(total) - row[ids[start + r + 1]];
            (*labels)++;
        }
        st_free(&f);
    }
    return sum / (double)*labels;
}

static void held_out_loss_matches_trace(void) {
    char data[400], model[400];
    snprintf(data, sizeof data, "%s", path_in("nato-60.txt")), snprintf(model, sizeof model, "%s", path_in("nato-60.safetensors"));
    nato_text(data, 60, 3);
    TrainConfig c = tiny(data, 8);
    c.batch = 8;
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    CHECK(t, "%s", e.msg);
    if (!t || !steps(t, 20)) return trainer_free(t);
    double nats = 0;
    size_t labels = 0, by_trace_labels = 0;
    CHECK(trainer_text_loss(t, &nats, &labels, &e) && trainer_save(t, model, &e), "%s", e.msg);
    const TextData *x = trainer_text(t);
    CHECK(labels == x->n - x->n_train - 1 && text_held_windows(x, 8) >= 4, "%zu labels in %zu windows", labels,
          text_held_windows(x, 8));
    const double by_trace = loss_from_trace(model, data, 8, &by_trace_labels);
    CHECK(by_trace_labels == labels && fabs(by_trace - nats) < 1e-5 * nats,
          "held-out loss %.7f over %zu labels; from trace's logits %.7f over %zu", nats, labels, by_trace, by_trace_labels);
    double exact;
    CHECK(!trainer_eval(t, 10, &exact, &e) && strstr(e.msg, "held-out loss"), "no exact match for text: %s", e.msg);
    trainer_free(t);
}

// A short run on 3000 NATO words: after the first letters or two a word is settled, which a
// bigram cannot know; 300 steps of a one-layer model take it well below the bigram.
static void learns(void) {
    char data[400];
    snprintf(data, sizeof data, "%s", path_in("nato.txt"));
    nato_text(data, 3000, 11);
    TrainConfig c = tiny(data, 16);
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    CHECK(t, "%s", e.msg);
    double nats = 0, bigram = 0;
    size_t labels;
    if (t && steps(t, 300)) {
        CHECK(trainer_text_loss(t, &nats, &labels, &e) && text_bigram_loss(trainer_text(t), &bigram, &e), "%s", e.msg);
        CHECK(nats < 0.6 * bigram, "held-out loss %.4f, the bigram's %.4f: want below 60%% of it", nats, bigram);
    }
    trainer_free(t);
    // One seed, one run: the windows come from the trainer's generator.
    Trainer *a = trainer_new(&c, &e), *b = trainer_new(&c, &e);
    double la = -1, lb = -2;
    CHECK(a && b && steps(a, 20) && steps(b, 20) && trainer_text_loss(a, &la, &labels, &e) &&
              trainer_text_loss(b, &lb, &labels, &e) && la == lb,
          "the same seed, the same loss: %.9f, %.9f %s", la, lb, e.msg);
    trainer_free(a), trainer_free(b);
}

// The command line end to end: train, then continue a prompt with the trained model.
static void cli(void) {
    char data[400], model[400];
    snprintf(data, sizeof data, "%s", path_in("nato.txt")), snprintf(model, sizeof model, "%s", path_in("cli.safetensors"));
    int code = run("train --task text --data '%s' --block 16 --d-model 32 --layers 1 --d-ff 64 --batch 16 --steps 40 "
                   "--eval-every 20 --out '%s'", data, model);
    CHECK(code == 0 && strstr(out, "held-out loss: ") && strstr(out, "the bigram baseline's: ") &&
              strstr(err, "holding out every 10th: 300 lines") && strstr(err, "step 20: held-out loss") &&
              strstr(err, "block 16, batch 16"),
          "exit %d: %s%s", code, out, err);
    TextData t;
    Err e = {{0}};
    double bigram = 0;
    CHECK(text_load(&t, data, false, 0, &e) && text_bigram_loss(&t, &bigram, &e), "%s", e.msg);
    char want[64], vocab[32];
    snprintf(want, sizeof want, "held-out loss %.4f nats", bigram);
    snprintf(vocab, sizeof vocab, "vocab %d,", VOCAB_SPECIALS + t.n_chars - 1);  // the line break is eos
    CHECK(strstr(err, want) && strstr(err, vocab), "the header states the bigram baseline (%s) and %s: %s", want, vocab,
          err);
    text_free(&t);
    code = run("run --program '%s/text-model.md' --model '%s' --input ch --max-len 10 --json", LESSONS, model);
    CHECK(code == 0 && strstr(out, "\"output_ids\"") && !strstr(err, "not used"), "run: %s%s", out, err);
}

// ---- lessons/text-model.md: the numbers it states ----

// What the lesson's model writes after `prompt` (NULL: the lesson's own, `pre`), greedy or
// sampled at `temperature` from `seed`.
static void continuation(const char *prompt, double temperature, uint64_t seed, char *text, size_t n) {
    char path[400];
    snprintf(path, sizeof path, "%s/text-model.md", LESSONS);
    SessionSpec spec = {.lesson_path = path, .input = prompt, .has_choice = temperature > 0,
                        .choice = {.temperature = temperature, .seed = seed}};
    Session ses;
    Err e = {{0}};
    text[0] = '\0';
    const bool ok = session_open(&ses, &spec, &e) && interp_run(ses.it, &e);
    CHECK(ok, "%s: %s", prompt ? prompt : "pre", e.msg);
    if (!ok) return;
    int len;
    StopReason why;
    const float *ids = interp_generated(ses.it, &len, &why);
    vocab_decode(&ses.model.tgt_vocab, ids, len, text, n);
    CHECK(why == STOP_EOS, "%s: the word ends with eos", prompt ? prompt : "pre");
    session_close(&ses);
}

static void lesson_numbers(void) {
    static const char list[] = "/usr/share/dict/words";
    if (access(list, R_OK) != 0) {
        CHECK(false, "%s is missing: install Debian's wamerican package (scripts/deps.sh)", list);
        return;
    }
    // The model's held-out loss and the bigram's, on the split the script trained with.
    char model[400];
    snprintf(model, sizeof model, "%s/words.safetensors", MODELS);
    TrainConfig c = train_text_defaults(list);
    c.shuffle = true, c.seed = 1, c.init = model;
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    CHECK(t, "%s", e.msg);
    double nats = 0, bigram = 0;
    size_t labels = 0;
    if (t && trainer_text_loss(t, &nats, &labels, &e) && text_bigram_loss(trainer_text(t), &bigram, &e)) {
        const TextData *x = trainer_text(t);
        CHECK(x->lines == 104334 && x->held_lines == 10433 && x->n_chars == 70 && trainer_model(t)->cfg.tgt_vocab_size == 73,
              "104,334 words, 10,433 held out, 69 characters and the line break, 73 tokens: %zu, %zu, %d, %d", x->lines,
              x->held_lines, x->n_chars, trainer_model(t)->cfg.tgt_vocab_size);
        CHECK_STATED(nats, 2.0778, 4, "the model's held-out loss");
        CHECK_STATED(exp(nats), 7.99, 2, "its perplexity");
        CHECK_STATED(bigram, 2.5187, 4, "the bigram's held-out loss");
        CHECK_STATED(exp(bigram), 12.41, 2, "its perplexity");
    } else {
        CHECK(false, "%s", e.msg);
    }
    trainer_free(t);
    static const char *const greedy[][2] = {{NULL, "ction"}, {"tr", "ans"}, {"qu", "iler"}, {"dis", "tration"}, {"b", "arding"}};
    char got[64];
    for (size_t i = 0; i < sizeof greedy / sizeof greedy[0]; i++) {
        continuation(greedy[i][0], 0, 0, got, sizeof got);
        CHECK(!strcmp(got, greedy[i][1]), "greedy after %s: '%s', the lesson says '%s'", greedy[i][0] ? greedy[i][0] : "pre",
              got, greedy[i][1]);
    }
    static const char *const sampled[4][2] = {{"mitions", "mnum's"}, {"nsition's", "nsitione"}, {"asness", "asnaed"},
                                              {"ditions", "etted"}};
    for (int seed = 1; seed <= 4; seed++)
        for (int k = 0; k < 2; k++) {
            continuation("pre", k ? 1.0 : 0.8, (uint64_t)seed, got, sizeof got);
            CHECK(!strcmp(got, sampled[seed - 1][k]), "seed %d, temperature %.1f: 'pre%s', the lesson says 'pre%s'", seed,
                  k ? 1.0 : 0.8, got, sampled[seed - 1][k]);
        }
}

int main(void) {
    if (!mkdtemp(dir)) return fprintf(stderr, "no scratch folder\n"), 1;
    reads_and_splits();
    shuffles();
    bad_inputs();
    bad_flags();
    bigram_by_hand();
    windows();
    held_out_loss_matches_trace();
    learns();
    cli();
    lesson_numbers();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_text");
}
