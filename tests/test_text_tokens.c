// test_text_tokens.c: the text task read as a tokenizer's tokens (train --tokenizer), and the
// hub folder it saves. The split against the test's own: each line's ids as the tokenizer gives
// them for that line alone, then eos, every 10th line held out; the bigram baseline against a
// naive count; a short run of lessons/llama.md saved as a folder in F32 and in BF16, opened
// again by `--model DIR`'s loader: every weight as trained (F32) or as its BF16 rounding, the
// tied lm_head left out of the file and read from the embedding, config.json's fields those of
// the model; and the bad inputs, each one line and exit 1.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"
#include "bounds.h"
#include "hub_save.h"
#include "load.h"
#include "session.h"
#include "train.h"

#define BPE ASSETS "/tokenizers/licences-bpe/tokenizer.json"

static const char *path_in(const char *name) {
    static char p[8][400];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

// 40 lines of licence-like prose; line 7 is empty.
static void write_corpus(const char *path) {
    static const char *const words[] = {"the", "software", "is", "provided", "as", "is,", "without", "warranty",
                                        "of", "any", "kind;", "you", "may", "copy", "and", "distribute", "it"};
    FILE *f = fopen(path, "w");
    for (int line = 0; line < 40; line++) {
        for (int w = 0; line != 6 && w < 5 + line % 7; w++)
            fprintf(f, "%s%s", w ? " " : "", words[(line * 7 + w * 3) % (int)(sizeof words / sizeof words[0])]);
        fputc('\n', f);
    }
    fclose(f);
}

// The ids of the corpus split by hand: line p (from 0) is held out when p % 10 == 9.
static size_t split_by_hand(const Tokenizer *tk, const char *path, int eos, int *train, size_t *n_train, int *held) {
    FILE *f = fopen(path, "r");
    char line[512];
    size_t nh = 0, p = 0;
    *n_train = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        int *ids = NULL, n = 0;
        Err e = {{0}};
        if (line[0] && tokenizer_encode(tk, line, true, &ids, &n, &e)) {
            int *to = p % 10 == 9 ? held : train;
            size_t *at = p % 10 == 9 ? &nh : n_train;
            for (int i = 0; i < n; i++) to[(*at)++] = ids[i];
            to[(*at)++] = eos;
        }
        free(ids);
        p++;
    }
    fclose(f);
    return nh;
}

static void reads_tokens(void) {
    Err e = {{0}};
    Tokenizer *tk = tokenizer_load(BPE, &e);
    CHECK(tk != NULL, "%s", e.msg);
    if (!tk) return;
    const char *corpus = path_in("corpus.txt");
    write_corpus(corpus);
    static int train[8192], held[2048];
    size_t nt;
    const size_t nh = split_by_hand(tk, corpus, 2, train, &nt, held);
    TextData t;
    const bool ok = text_load_tokens(&t, corpus, false, 1, tk, 2, &e);
    CHECK(ok, "%s", e.msg);
    if (ok) {
        bool same = t.n_train == nt && t.n == nt + nh && t.tokens && t.n_chars == tokenizer_size(tk);
        for (size_t i = 0; same && i < t.n; i++) same = (int)t.ids[i] == (i < nt ? train[i] : held[i - nt]);
        CHECK(same, "the ids are each line's, then eos, held-out lines after (%zu + %zu, by hand %zu + %zu)", t.n_train,
              t.n - t.n_train, nt, nh);
        CHECK(t.ids[0] == 1, "a line begins with Llama's <s>, as tokenizer(line) gives it (%u)", t.ids[0]);
        // The bigram baseline against a naive count over every pair.
        const double V = tokenizer_size(tk);
        double sum = 0;
        for (size_t j = 1; j < nh; j++) {
            double pair = 0, first = 0;
            for (size_t i = 0; i + 1 < nt; i++) first += train[i] == held[j - 1], pair += train[i] == held[j - 1] && train[i + 1] == held[j];
            sum -= log((pair + 1) / (first + V));
        }
        double nats = 0;
        CHECK(text_bigram_loss(&t, &nats, &e) && fabs(nats - sum / (double)(nh - 1)) < 1e-12,
              "bigram baseline %.15f, by hand %.15f", nats, sum / (double)(nh - 1));
        text_free(&t);
    }
    tokenizer_free(tk);
}

static TrainConfig llama_config(const char *corpus, StDtype dtype) {
    TrainConfig c = train_text_defaults(corpus);
    c.tokenizer = BPE, c.program = LESSONS "/llama.md", c.dtype = dtype;
    c.config = "num_hidden_layers=1 num_attention_heads=2 num_key_value_heads=1 hidden_size=16 intermediate_size=24 "
               "max_position_embeddings=16 tie_word_embeddings=1 bos_id=1 eos_id=2";
    c.block = 16, c.batch = 4, c.steps = 3, c.warmup = 1;
    return c;
}

static double rounded(float x, StDtype d) {
    return d == ST_BF16 ? bf16_to_f32(st_f32_to_bf16(x)) : d == ST_F16 ? f16_to_f32(st_f32_to_f16(x)) : x;
}

// Every weight of the folder as the trainer held it, rounded as the file stores it.
static void same_weights(const Model *trained, const char *folder, StDtype d) {
    Lesson l;
    Err e = {{0}};
    const bool read = lesson_load(&l, LESSONS "/llama.md", &e);
    CHECK(read, "%s", e.msg);
    if (!read) return;
    Model m;
    ConfSpec cs = {0};
    const bool ok = model_load(&m, folder, &l.program, &cs, &e);
    CHECK(ok, "the saved folder opens: %s", e.msg);
    int wrong = 0;
    for (int i = 0; ok && i < trained->weights.n_entries; i++) {
        const StEntry *a = &trained->weights.entries[i], *b = model_weight(&m, a->name);
        if (!b || !shape_eq(&a->shape, &b->shape)) {
            wrong++;
            continue;
        }
        float *got = malloc(sizeof(float) * (size_t)shape_numel(&b->shape));  // held as the file stores it, maybe
        if (!got) {
            wrong++;
            continue;
        }
        model_numbers(&m, (int)(b - m.weights.entries), got);
        for (long k = 0; k < shape_numel(&a->shape); k++) wrong += rounded(a->data[k], d) != got[k];
        free(got);
    }
    CHECK(ok && wrong == 0, "%s: %d numbers differ from the trained weights' %s", folder, wrong, st_dtype_names[d]);
    if (ok) model_free(&m);
    lesson_free(&l);
}

// What the folder's files hold: config.json's fields, the tensors' dtype, no lm_head.
static void folder_files(const Model *trained, const char *folder, StDtype d) {
    char path[600], *text = NULL;
    size_t n;
    Err e = {{0}};
    snprintf(path, sizeof path, "%s/config.json", folder);
    cJSON *root = file_read_within(path, "config", LIMIT_TEXT_MB, &text, &n, &e) ? cJSON_Parse(text) : NULL;
    CHECK(root != NULL, "%s: %s", path, e.msg);
    static const char *const fields[] = {"num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                                         "hidden_size", "intermediate_size", "max_position_embeddings", "vocab_size"};
    for (size_t k = 0; root && k < sizeof fields / sizeof fields[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, fields[k]);
        double want = -1;
        conf_get(&trained->conf, fields[k], &want);
        CHECK(cJSON_IsNumber(v) && v->valuedouble == want, "config.json's %s is the model's %g", fields[k], want);
    }
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type"),
                *tie = cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings"),
                *eos = cJSON_GetObjectItemCaseSensitive(root, "eos_token_id");
    CHECK(cJSON_IsString(mt) && !strcmp(mt->valuestring, "llama") && cJSON_IsTrue(tie) && cJSON_IsNumber(eos) &&
          eos->valueint == 2, "config.json names the family, the tie and the eos id");
    cJSON_Delete(root), free(text);
    snprintf(path, sizeof path, "%s/model.safetensors", folder);
    text = NULL;
    size_t header = 0;
    const bool read = file_read_within(path, "weights", LIMIT_TEXT_MB, &text, &n, &e) && n > 8;
    for (int i = 7; read && i >= 0; i--) header = header << 8 | (unsigned char)text[i];
    root = read && header <= n - 8 ? cJSON_ParseWithLength(text + 8, header) : NULL;
    CHECK(root != NULL, "%s's header parses", path);
    int tensors = 0, right_dtype = 0;
    for (const cJSON *it = root ? root->child : NULL; it; it = it->next) {
        if (!strcmp(it->string, "__metadata__")) continue;
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(it, "dtype");
        tensors++, right_dtype += cJSON_IsString(dt) && !strcmp(dt->valuestring, st_dtype_names[d]);
    }
    CHECK(tensors == trained->weights.n_entries - 1 && right_dtype == tensors && root &&
          !cJSON_GetObjectItemCaseSensitive(root, "lm_head.weight"),
          "every weight but the tied lm_head, as %s (%d of %d tensors, %d so stored)", st_dtype_names[d], tensors,
          trained->weights.n_entries, right_dtype);
    cJSON_Delete(root), free(text);
    char *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    snprintf(path, sizeof path, "%s/tokenizer.json", folder);
    CHECK(file_read_within(path, "t", LIMIT_TEXT_MB, &a, &na, &e) && file_read_within(BPE, "t", LIMIT_TEXT_MB, &b, &nb, &e) && na == nb &&
          !memcmp(a, b, na), "the tokenizer.json is the one trained with");
    free(a), free(b);
}

static void saves_folder(StDtype d) {
    const char *corpus = path_in("corpus.txt"), *folder = path_in(d == ST_F32 ? "llama-f32" : "llama-bf16");
    write_corpus(corpus);
    TrainConfig c = llama_config(corpus, d);
    Err e = {{0}};
    Trainer *t = trainer_new(&c, &e);
    CHECK(t != NULL, "%s", e.msg);
    if (!t) return;
    StepStats s;
    for (int i = 0; i < c.steps; i++) CHECK(trainer_step(t, &s, &e), "step %d: %s", i, e.msg);
    CHECK(trainer_save(t, folder, &e), "save: %s", e.msg);
    folder_files(trainer_model(t), folder, d);
    same_weights(trainer_model(t), folder, d);
    trainer_free(t);
}

static void bad_inputs(void) {
    const char *corpus = path_in("corpus.txt");
    write_corpus(corpus);
    static const struct {
        const char *args, *says;
        int code;
    } cases[] = {
        {"--program " LESSONS "/llama.md --config hidden_size=16", "eos_id", 1},
        {"--config eos_id=2", "train a family's own program", 1},
        {"--program " LESSONS "/llama.md --config eos_id=5000", "eos_id=5000", 1},
        {"--program " LESSONS "/llama.md --config eos_id=2 --dtype f8", "--dtype is f32, f16 or bf16", 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int code = run("train --task text --data %s --tokenizer %s --steps 1 --out %s %s", corpus, BPE,
                             path_in("bad-out"), cases[k].args);
        EXPECT(code, cases[k].code, err, cases[k].says);
        CHECK(strchr(err, '\n') == strrchr(err, '\n') || cases[k].code == 2, "one line: %s", err);
    }
    CHECK(access(path_in("bad-out"), F_OK) != 0, "a run refused before training leaves no folder behind");
    FILE *f = fopen(path_in("a-file"), "w");
    fclose(f);
    int code = run("train --task text --data %s --tokenizer %s --program %s/llama.md --config eos_id=2 --steps 1 --out %s",
                   corpus, BPE, LESSONS, path_in("a-file"));
    EXPECT(code, 1, err, "not a folder");
    code = run("train --task copy --dtype bf16 --out %s", path_in("x.safetensors"));
    EXPECT(code, 2, err, "--dtype");
}

// --tokenizer naming the tokenizer.json already in the --out folder: it is kept, not emptied by
// being opened to be written over itself.
static void tokenizer_in_the_folder(void) {
    const char *corpus = path_in("corpus.txt"), *folder = path_in("own-tokenizer");
    char tk[600], *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    Err e = {{0}};
    snprintf(tk, sizeof tk, "%s/tokenizer.json", folder);
    mkdir(folder, 0755);
    CHECK(file_read_within(BPE, "t", LIMIT_TEXT_MB, &a, &na, &e), "%s", e.msg);
    FILE *f = fopen(tk, "wb");
    if (f) fwrite(a, 1, na, f), fclose(f);
    write_corpus(corpus);
    TrainConfig c = llama_config(corpus, ST_F32);
    c.tokenizer = tk;
    Trainer *t = trainer_new(&c, &e);
    CHECK(t && trainer_save(t, folder, &e), "%s", e.msg);
    trainer_free(t);
    CHECK(file_read_within(tk, "t", LIMIT_TEXT_MB, &b, &nb, &e) && na == nb && !memcmp(a, b, na),
          "the folder's own tokenizer.json is intact (%zu bytes, was %zu)", nb, na);
    free(a), free(b);
}

int main(void) {
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    reads_tokens();
    saves_folder(ST_F32);
    saves_folder(ST_BF16);
    tokenizer_in_the_folder();
    bad_inputs();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_text_tokens");
}
