// test_marian_tok.c: Marian's tokenizer as the hub ships it (source.spm, target.spm, vocab.json),
// read by spm.c and tokenizer_spm.c, against the sentencepiece library. The fixture
// (scripts/make_hub_fixtures.py, marian-tok) was trained by spm_train: a Unigram source model
// with the default nmt_nfkc rules and a BPE target model. reference.json holds spm_encode's
// pieces for the hard strings and a few sentences, mapped through vocab.json as MarianTokenizer
// maps them (a piece vocab.json lacks is <unk>; `▁the` was left out on purpose), `</s>` last;
// and the source model written as a tokenizer.json of type Unigram (a Precompiled normalizer
// holding the model's character map, Metaspace, Viterbi in double precision) gives the
// library's own ids.
// Also: `tokenize --json`, `run --input` against PyTorch's greedy ids on those ids, a language
// code (`>>fra<<`) read as one token, and each broken folder refused in one line.
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "check.h"
#include "cli_run.h"
#include "hub.h"

#define FOLDER FIXTURES "/hub/marian-tok"

// Every reference string, on one side: the same ids.
static void against_reference(const Tokenizer *t, const cJSON *strings, const cJSON *ids, const char *side) {
    int compared = 0, unknowns = 0;
    for (int k = 0; k < cJSON_GetArraySize(strings); k++) {
        const char *s = cJSON_GetArrayItem(strings, k)->valuestring;
        const cJSON *want = cJSON_GetArrayItem(ids, k);
        int *got = NULL, n = 0;
        Err e = {{0}};
        const bool ok = tokenizer_encode(t, s, true, &got, &n, &e);
        bool same = ok && n == cJSON_GetArraySize(want);
        for (int i = 0; same && i < n; i++) same = got[i] == cJSON_GetArrayItem(want, i)->valueint;
        for (int i = 0; same && i < n; i++) unknowns += got[i] == 1;  // <unk>, 1 in both numberings
        CHECK(same, "%s: '%s' gives the reference's %d ids (got %d: %s)", side, s, cJSON_GetArraySize(want), n, e.msg);
        free(got);
        compared++;
    }
    CHECK(compared >= 20, "%s: %d strings compared", side, compared);
    CHECK(unknowns > 0, "%s: some piece is <unk> (vocab.json lacks it): %d", side, unknowns);
}

static void reference(void) {
    Tokenizer *src, *tgt;
    Err e = {{0}};
    const bool ok = hub_tokenizers(FOLDER, &src, &tgt, &e);
    CHECK(ok && src && tgt && src != tgt, "the folder's two sides load: %s", e.msg);
    if (!ok || !src) return;
    char *text = NULL;
    size_t n;
    const bool read = file_read_all(FOLDER "/reference.json", "the reference", &text, &n, &e);
    cJSON *ref = read ? cJSON_ParseWithLength(text, n) : NULL;
    CHECK(ref != NULL, "reference.json reads: %s", e.msg);
    if (ref) {
        const cJSON *strings = cJSON_GetObjectItem(ref, "strings");
        against_reference(src, strings, cJSON_GetObjectItem(ref, "ids"), "source.spm");
        against_reference(tgt, strings, cJSON_GetObjectItem(ref, "target_ids"), "target.spm");
        // The same model as a tokenizer.json of type Unigram gives the library's own ids.
        Tokenizer *uni = tokenizer_load(FOLDER "/unigram-tokenizer.json", &e);
        CHECK(uni != NULL, "the Unigram tokenizer.json loads: %s", e.msg);
        if (uni) against_reference(uni, strings, cJSON_GetObjectItem(ref, "spm_ids"), "unigram-tokenizer.json");
        tokenizer_free(uni);
    }
    // Labels and decoding: the pieces as a person reads them, `▁` a space.
    char label[64];
    tokenizer_label(src, 0, label, sizeof label);
    CHECK(!strcmp(label, "</s>"), "id 0 reads </s> (%s)", label);
    int *ids = NULL, count = 0;
    CHECK(tokenizer_encode(tgt, "The black cat sleeps.", false, &ids, &count, &e), "%s", e.msg);
    char *back = ids ? tokenizer_decode(tgt, ids, count) : NULL;
    CHECK(back && !strcmp(back, "The black cat sleeps."), "decoded back: '%s'", back ? back : "(null)");
    free(back), free(ids);
    cJSON_Delete(ref);
    free(text);
    hub_tokenizers_free(src, tgt);
}

// A copy of the fixture folder, then `shell` run in it (to break it).
static const char *broken(const char *name, const char *shell) {
    static char folder[400];
    char cmd[1400];
    snprintf(folder, sizeof folder, "%s/%s", dir, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && cd '%s' && %s", folder, FOLDER, folder, folder, shell);
    CHECK(system(cmd) == 0, "made %s", folder);
    return folder;
}

static void refused(const char *name, const char *shell, const char *args, const char *message) {
    const char *folder = broken(name, shell);
    const int code = run("%s --model '%s' %s", args, folder, !strncmp(args, "tokenize", 8) ? "--text 'The cat.'" : "--input 'The cat.' --json");
    EXPECT(code, 1, err, message);
    CHECK(strchr(err, '\n') == strrchr(err, '\n'), "%s: one line: %s", name, err);
    CHECK(!*out, "%s: nothing printed: %s", name, out);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    reference();
    // The contract: tokenize --json prints the source ids, </s> last.
    int code = run("tokenize --model '%s' --text 'The black cat sleeps.' --json", FOLDER);
    StFile c;
    Err e = {{0}};
    const bool loaded = st_load(&c, FOLDER "/case.safetensors", &e);
    CHECK(loaded, "%s", e.msg);
    char ids[400] = "{\"ids\":[";
    if (loaded) ids_csv(st_find(&c, "src"), ids + strlen(ids), sizeof ids - strlen(ids));
    strcat(ids, "]");
    CHECK(code == 0 && !strncmp(out, ids, strlen(ids)), "tokenize: %s in %s %s", ids, out, err);
    // --input reads the text so, and greedy decoding writes PyTorch's ids.
    code = run("run --model '%s' --input 'The black cat sleeps.' --max-len %s --json", FOLDER, loaded ? st_meta(&c, "max_new_tokens") : "6");
    char want[200] = "\"output_ids\":[";
    if (loaded) ids_csv(st_find(&c, "generated"), want + strlen(want), sizeof want - strlen(want));
    strcat(want, "]");
    CHECK(code == 0 && strstr(out, want), "run --input: %s in %s %s", want, out, err);
    if (loaded) st_free(&c);
    // A multilingual model's language code is one token, never cut: then the text as before.
    const char *multi = broken("multi", "sed -i '1s/{/{\\n \">>fra<<\": 443,/' vocab.json");
    code = run("tokenize --model '%s' --text '>>fra<< The black cat sleeps.' --json", multi);
    char with_code[440];
    snprintf(with_code, sizeof with_code, "{\"ids\":[443,%s", ids + strlen("{\"ids\":["));
    CHECK(code == 0 && !strncmp(out, with_code, strlen(with_code)), "'>>fra<<' is id 443, then the same ids: %s (want %s)", out,
          with_code);
    // Broken folders: one line each, exit 1, nothing printed.
    refused("no-vocab", "rm vocab.json", "tokenize", "no vocab.json");
    refused("no-vocab-run", "rm vocab.json", "run", "no vocab.json");
    refused("not-spm", "printf 'not a model' > source.spm", "tokenize", "not a SentencePiece model");
    refused("other-vocab", "printf '{\"</s>\": 0, \"<unk>\": 1, \"x\": 2}' > vocab.json", "tokenize", "another tokenizer's vocabulary");
    refused("no-eos", "sed -i 's/\"<\\/s>\"/\"<\\/z>\"/' vocab.json", "tokenize", "has no '</s>'");
    refused("separate", "sed -i 's/\"share_encoder_decoder_embeddings\": true/\"share_encoder_decoder_embeddings\": false/' config.json",
            "tokenize", "target_vocab.json");
    // A source longer than max_position_embeddings (128): one line, nothing run.
    char longer[400] = "";
    for (int i = 0; i < 130; i++) strcat(longer, "a ");
    code = run("run --model '%s' --input '%s' --json", FOLDER, longer);
    EXPECT(code, 1, err, "131 tokens, more than the 128 positions");
    CHECK(!*out, "nothing printed: %s", out);
    // Ids past the vocabulary are refused.
    code = run("run --model '%s' --src-ids 5,99999,0 --json", FOLDER);
    EXPECT(code, 1, err, "99999");
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_marian_tok");
}
