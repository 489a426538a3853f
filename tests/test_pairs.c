// test_pairs.c: the translation task (train --task translate): its pairs read as a Marian
// folder's tokens (pairs.h), the split by the file's line (every 10th pair held out, a pair too
// long left out of its part), each bad file refused in one line, and a short run that learns:
// its loss falls, and it saves a folder that opens as Marian's (its SentencePiece files, its
// decoder_start_token_id the pad id, its three tied tables trained as one and saved once).
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bounds.h"
#include "check.h"
#include "cli_run.h"
#include "hub.h"
#include "pairs.h"

#define TOK FIXTURES "/hub/marian-tok"

static const char *write_pairs(const char *name, int n, int long_at, const char *bad) {
    static char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    for (int i = 1; f && i <= n; i++) {
        if (i == long_at) {
            for (int k = 0; k < 40; k++) fputs("word ", f);
            fputs("\tlang\n", f);
        } else if (bad && i == 3) fprintf(f, "%s\n", bad);
        else fprintf(f, "the %s %d\tder %s %d\n", i % 2 ? "file" : "folder", i, i % 2 ? "Datei" : "Ordner", i);
    }
    if (f) fclose(f);
    return path;
}

static void split(void) {
    Tokenizer *src, *tgt;
    Err e = {{0}};
    if (!hub_tokenizers(TOK, &src, &tgt, &e) || !src) {
        CHECK(false, "the fixture's tokenizers: %s", e.msg);
        return;
    }
    PairData d;
    const bool ok = pairs_load(&d, write_pairs("p.tsv", 25, 10, NULL), src, tgt, 16, 16, &e);
    CHECK(ok, "%s", e.msg);
    if (ok) {
        CHECK(d.read == 25 && d.n == 24 && d.skipped == 1, "25 pairs read, 1 too long (%d, %d, %d)", d.read, d.n, d.skipped);
        CHECK(d.n_train == 23 && d.n - d.n_train == 1, "line 10 (too long) and line 20 held out: 1 left (%d)", d.n - d.n_train);
        int *a, na, *b, nb;
        CHECK(tokenizer_encode(src, "the folder 20", true, &a, &na, &e) && tokenizer_encode(tgt, "der Ordner 20", true, &b, &nb, &e), "%s", e.msg);
        const int *h = d.ids + d.at[d.n_train];
        bool same = d.src_n[d.n_train] == na && d.tgt_n[d.n_train] == nb && a[na - 1] == 0;
        for (int i = 0; same && i < na; i++) same = h[i] == a[i];
        for (int i = 0; same && i < nb; i++) same = h[na + i] == b[i];
        CHECK(same, "the held-out pair is line 20, each side as its tokenizer gives it, </s> last");
        free(a), free(b);
        pairs_free(&d);
    }
    CHECK(!pairs_load(&d, write_pairs("bad.tsv", 25, 0, "no tab here"), src, tgt, 16, 16, &e) && strstr(e.msg, "line 3: not SOURCE<TAB>TARGET"),
          "a line without a tab is named: %s", e.msg);
    CHECK(!pairs_load(&d, write_pairs("few.tsv", 5, 0, NULL), src, tgt, 16, 16, &e) && strstr(e.msg, "at least 10"),
          "too few pairs: %s", e.msg);
    hub_tokenizers_free(src, tgt);
}

// The first and last "loss X" of train's progress lines.
static void losses(const char *text, double *first, double *last) {
    *first = *last = -1;
    for (const char *p = strstr(text, "loss "); p; p = strstr(p + 1, "loss ")) {
        const double v = atof(p + 5);
        if (*first < 0) *first = v;
        *last = v;
    }
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    split();
    const char *data = write_pairs("train.tsv", 60, 0, NULL);
    int code = run("train --task translate --data '%s' --tokenizer '%s' --program '%s/marian.md' --steps 150 --batch 16 "
                   "--eval-every 0 --config 'd_model=32 encoder_layers=1 decoder_layers=1 encoder_attention_heads=2 "
                   "encoder_ffn_dim=64' --out '%s/m'", data, TOK, LESSONS, dir);
    double first, last;
    losses(err, &first, &last);
    CHECK(code == 0 && first > 0 && last < first / 2, "training runs and its loss halves (%.3f -> %.3f): %s", first, last, err);
    CHECK(strstr(out, "held-out exact match:") != NULL, "it reports held-out exact match: %s", out);
    code = run("run --model '%s/m' --input 'the file 7' --max-len 6 --json", dir);
    CHECK(code == 0 && strstr(out, "\"output_ids\""), "the saved folder opens and translates: %s %s", out, err);
    char path[500], *cfg = NULL;
    size_t n;
    Err e = {{0}};
    snprintf(path, sizeof path, "%s/m/config.json", dir);
    CHECK(file_read_all(path, "config", &cfg, &n, &e) && strstr(cfg, "\"decoder_start_token_id\":\t442") &&
          strstr(cfg, "\"pad_token_id\":\t442") && strstr(cfg, "\"decoder_attention_heads\":\t2"),
          "config.json starts the decoder from <pad> (442), and names the decoder's heads: %s", cfg ? cfg : e.msg);
    free(cfg);
    snprintf(path, sizeof path, "%s/m/target.spm", dir);
    CHECK(access(path, R_OK) == 0, "the folder has its SentencePiece files");
    // The encoder's table, the decoder's and the head are one tensor (two ties sharing a name):
    // trained as one, they are saved once, as transformers saves them, under model.shared.weight.
    StFile f;
    snprintf(path, sizeof path, "%s/m/model.safetensors", dir);
    if (st_load(&f, path, &e)) {
        CHECK(st_find(&f, "model.shared.weight") && !st_find(&f, "model.encoder.embed_tokens.weight") &&
              !st_find(&f, "model.decoder.embed_tokens.weight") && !st_find(&f, "lm_head.weight"),
              "after training, the three tied tables still hold one table's numbers");
        st_free(&f);
    } else CHECK(false, "%s", e.msg);
    code = run("train --task translate --data '%s' --program '%s/marian.md' --out '%s/x'", data, LESSONS, dir);
    EXPECT(code, 2, err, "needs --data FILE (SOURCE<TAB>TARGET lines) and --tokenizer DIR");
    code = run("train --task translate --data '%s' --tokenizer '%s' --out '%s/x'", data, TOK, dir);
    EXPECT(code, 1, err, "give --program");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_pairs");
}
