// test_tokenizer.c: tokenizer.json read and run in C gives the reference implementations' ids.
// The fixtures (scripts/make_tokenizer_fixtures.sh) hold, for a fixed list of hard strings (runs
// of spaces, leading and trailing spaces, newlines and tabs, contractions, digits, accents,
// combining marks, CJK, emoji, special tokens inside a text, one long run of a letter), the ids
// and decoded text of Hugging Face's tokenizers.js on GPT-2's tokenizer (which OpenAI's own
// encoder, npm's gpt-3-encoder, was checked to agree with id for id) and on a byte-fallback
// SentencePiece BPE in Llama 2's form (checked against spm_encode). Also: both ways of writing
// merges, labels a person can read, the BOS a template adds, and files it must refuse.
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tokenizer.h"

#define ASSETS FIXTURES "/../../assets/tokenizers"

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

// Every string of the reference: the same ids, the same decoded text, and decode(encode(s)) == s
// wherever the reference's is.
static void against_reference(const char *tokenizer, const char *ref_file) {
    Err e = {{0}};
    Tokenizer *t = tokenizer_load(tokenizer, &e);
    char *text = slurp(ref_file);
    cJSON *ref = text ? cJSON_Parse(text) : NULL;
    CHECK(t && ref, "%s and %s load: %s", tokenizer, ref_file, e.msg);
    if (!t || !ref) goto done;
    const cJSON *strings = cJSON_GetObjectItem(ref, "strings"), *ids = cJSON_GetObjectItem(ref, "ids"),
                *decoded = cJSON_GetObjectItem(ref, "decoded");
    int compared = 0;
    for (int k = 0; k < cJSON_GetArraySize(strings); k++) {
        const char *s = cJSON_GetArrayItem(strings, k)->valuestring;
        const cJSON *want = cJSON_GetArrayItem(ids, k);
        int *got, n;
        if (!tokenizer_encode(t, s, false, &got, &n, &e)) {
            CHECK(false, "%s: encode '%s': %s", tokenizer, s, e.msg);
            continue;
        }
        bool same = n == cJSON_GetArraySize(want);
        for (int i = 0; same && i < n; i++) same = got[i] == cJSON_GetArrayItem(want, i)->valueint;
        CHECK(same, "%s: '%s' gives the reference's %d ids (got %d, first %d)", tokenizer, s, cJSON_GetArraySize(want), n,
              n ? got[0] : -1);
        char *back = tokenizer_decode(t, got, n);
        const char *want_text = cJSON_GetArrayItem(decoded, k)->valuestring;
        CHECK(back && !strcmp(back, want_text), "%s: decode gives the reference's '%s' (got '%s')", tokenizer, want_text,
              back ? back : "(null)");
        if (!strcmp(want_text, s)) CHECK(back && !strcmp(back, s), "%s: decode(encode('%s')) is itself", tokenizer, s);
        free(back);
        free(got);
        compared++;
    }
    CHECK(compared >= 25, "%s: %d strings compared", tokenizer, compared);
done:
    cJSON_Delete(ref);
    free(text);
    tokenizer_free(t);
}

static void labels_and_bos(void) {
    Err e = {{0}};
    Tokenizer *g = tokenizer_load(ASSETS "/gpt2/tokenizer.json", &e), *l = tokenizer_load(ASSETS "/licences-bpe/tokenizer.json", &e);
    CHECK(g && l, "both load: %s", e.msg);
    if (!g || !l) {
        tokenizer_free(g), tokenizer_free(l);
        return;
    }
    int *ids, n;
    char label[64];
    CHECK(tokenizer_encode(g, " the\n", true, &ids, &n, &e) && n == 2, "GPT-2: ' the\\n' is two tokens, no BOS added");
    tokenizer_label(g, ids[0], label, sizeof label);
    CHECK(!strcmp(tokenizer_piece(g, ids[0]), "\xC4\xA0the") && !strcmp(label, "\xE2\x90\xA3the"), "Ġthe reads ␣the: %s", label);
    tokenizer_label(g, ids[1], label, sizeof label);
    CHECK(!strcmp(label, "\xE2\x86\xB5"), "GPT-2's newline reads ↵: %s", label);
    free(ids);
    CHECK(tokenizer_size(g) == 50257, "GPT-2 has 50257 tokens (%d)", tokenizer_size(g));
    CHECK(tokenizer_encode(l, "\n", true, &ids, &n, &e) && n >= 2 && ids[0] == 1, "Llama's form adds BOS (id 1) by its template");
    bool newline = false;
    for (int i = 1; i < n; i++) {
        tokenizer_label(l, ids[i], label, sizeof label);
        newline = newline || (!strcmp(tokenizer_piece(l, ids[i]), "<0x0A>") && !strcmp(label, "\xE2\x86\xB5"));
    }
    CHECK(newline, "<0x0A> reads ↵");
    free(ids);
    tokenizer_free(g), tokenizer_free(l);
}

// A file written here: its text, then what loading it must say (NULL: it loads).
static void refuses(const char *json, const char *want) {
    char path[] = "/tmp/stepformer-tok-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0 || write(fd, json, strlen(json)) != (ssize_t)strlen(json)) {
        CHECK(false, "temp file");
        return;
    }
    close(fd);
    Err e = {{0}};
    Tokenizer *t = tokenizer_load(path, &e);
    if (want) CHECK(!t && strstr(e.msg, want) && strstr(e.msg, path), "refused naming the file and '%s': %s", want, e.msg);
    else CHECK(t != NULL, "loads: %s", e.msg);
    int *ids = NULL, n = 0;
    if (t && !want) {  // merges written as pairs and as strings read the same
        CHECK(tokenizer_encode(t, "abab", false, &ids, &n, &e) && n == 1 && ids[0] == 4, "'abab' is one token (%d)", n);
        free(ids);
    }
    tokenizer_free(t);
    unlink(path);
}

// Whitespace keeps words and symbols apart; WhitespaceSplit only cuts at spaces. With the merge
// ", c" ranked first, "ab,cd" is ab | , | cd under the first and ab | ,c | d under the second.
static void whitespace(void) {
    static const char *const types[2] = {"Whitespace", "WhitespaceSplit"};
    static const int want[2][3] = {{0, 2, 1}, {0, 7, 6}};
    for (int k = 0; k < 2; k++) {
        char json[600];
        snprintf(json, sizeof json,
                 "{\"pre_tokenizer\": {\"type\": \"%s\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {\"ab\": 0, \"cd\": 1, "
                 "\",\": 2, \"a\": 3, \"b\": 4, \"c\": 5, \"d\": 6, \",c\": 7}, \"merges\": [\", c\", \"a b\", \"c d\"]}}",
                 types[k]);
        Err e = {{0}};
        Tokenizer *t = tokenizer_parse(json, strlen(json), "ws.json", &e);
        int *ids = NULL, n = 0;
        const bool ok = t && tokenizer_encode(t, "ab,cd", false, &ids, &n, &e);
        CHECK(ok && n == 3 && ids[0] == want[k][0] && ids[1] == want[k][1] && ids[2] == want[k][2],
              "%s: 'ab,cd' is %d %d %d (%s; got %d ids)", types[k], want[k][0], want[k][1], want[k][2], e.msg, n);
        free(ids);
        tokenizer_free(t);
    }
}

int main(void) {
    against_reference(ASSETS "/gpt2/tokenizer.json", FIXTURES "/tokenizers/gpt2.ref.json");
    against_reference(ASSETS "/licences-bpe/tokenizer.json", FIXTURES "/tokenizers/licences-bpe.ref.json");
    labels_and_bos();
    whitespace();
    const char *model = "\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"ba\": 3, \"abab\": 4}, ";
    char buf[600];
    snprintf(buf, sizeof buf, "{%s\"merges\": [[\"a\", \"b\"], [\"ab\", \"ab\"]]}}", model);
    refuses(buf, NULL);
    snprintf(buf, sizeof buf, "{%s\"merges\": [\"a b\", \"ab ab\"]}}", model);
    refuses(buf, NULL);
    refuses("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "the Unigram model has no vocab");
    refuses("{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"a\", 1], [\"b\"]]}}", "Unigram piece 1 is not [\"piece\", score]");
    refuses("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", "the model type WordPiece is not implemented");
    refuses("{\"normalizer\": {\"type\": \"Precompiled\", \"precompiled_charsmap\": \"AAA\"}, \"model\": {\"type\": \"Unigram\", "
            "\"vocab\": [[\"a\", 1]]}}", "not a SentencePiece character map");
    snprintf(buf, sizeof buf, "{%s\"merges\": []}, \"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}}", model);
    refuses(buf, "the pre_tokenizer BertPreTokenizer is not implemented");
    snprintf(buf, sizeof buf, "{%s\"merges\": []}, \"normalizer\": {\"type\": \"NFKD\"}}", model);
    refuses(buf, "the normalizer NFKD is not implemented");
    snprintf(buf, sizeof buf, "{%s\"merges\": [3]}}", model);
    refuses(buf, "merge 0 is neither");
    refuses("[1, 2]", "not a JSON object");
    return check_finish("test_tokenizer");
}
