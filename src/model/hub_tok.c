// hub_tok.c: the tokenizers of a model folder (hub.h): tokenizer.json, or Marian's SentencePiece
// models with their vocabularies.
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "bounds.h"
#include "hub.h"

// DIR/name into buf; whether that file is there.
static bool file_in(const char *dir, const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", dir, name);
    return hub_file_exists(buf);
}

// DIR/name parsed, or NULL (no such file, or not JSON): what the folder says, when it says it.
static cJSON *json_in(const char *dir, const char *name) {
    char path[4200], *text;
    size_t n;
    Err ignored = {{0}};
    if (!file_in(dir, name, path, sizeof path) || !file_read_all(path, "the configuration", &text, &n, &ignored)) return NULL;
    cJSON *root = cJSON_ParseWithLength(text, n);
    free(text);
    return root;
}

// Whether DIR/config.json sets share_encoder_decoder_embeddings false: then MarianTokenizer
// numbers the target side by target_vocab.json (separate_vocabs).
static bool separate_vocabs(const char *dir) {
    cJSON *root = json_in(dir, "config.json");
    const bool separate = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "share_encoder_decoder_embeddings"));
    cJSON_Delete(root);
    return separate;
}

bool hub_tokenizers(const char *dir, Tokenizer **src, Tokenizer **tgt, Err *e) {
    *src = *tgt = NULL;
    char spm[4200], vocab[4200], tspm[4200], tvocab[4200], json[4200];
    if (!file_in(dir, "source.spm", spm, sizeof spm)) {
        if (!file_in(dir, "tokenizer.json", json, sizeof json)) return true;
        *src = *tgt = tokenizer_load(json, e);
        return *src != NULL;
    }
    if (!file_in(dir, "vocab.json", vocab, sizeof vocab))
        return err_set(e, "%s: the folder has source.spm but no vocab.json: Marian's tokenizer numbers the pieces by it", dir);
    if (!file_in(dir, "target.spm", tspm, sizeof tspm))
        return err_set(e, "%s: the folder has source.spm but no target.spm: Marian's tokenizer reads both", dir);
    const bool separate = separate_vocabs(dir);
    if (separate && !file_in(dir, "target_vocab.json", tvocab, sizeof tvocab))
        return err_set(e, "%s: config.json sets share_encoder_decoder_embeddings false, so the target side is numbered by "
                       "target_vocab.json, and the folder has none", dir);
    if (!(*src = tokenizer_sentencepiece(spm, vocab, e))) return false;
    if (!(*tgt = tokenizer_sentencepiece(tspm, separate ? tvocab : vocab, e))) return tokenizer_free(*src), *src = NULL, false;
    return true;
}

void hub_generation(const char *dir, char *buf, size_t n) {
    static const char *const files[] = {"generation_config.json", "config.json"};
    static const char *const keys[] = {"num_beams", "forced_eos_token_id"};
    buf[0] = '\0';
    for (int f = 0; f < 2 && !buf[0]; f++) {
        size_t k = 0;
        cJSON *root = json_in(dir, files[f]);
        const cJSON *beams = cJSON_GetObjectItemCaseSensitive(root, "num_beams");
        for (int i = 0; cJSON_IsNumber(beams) && beams->valuedouble > 1 && i < 2; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, keys[i]);
            if (cJSON_IsNumber(v) && k < n) k += (size_t)snprintf(buf + k, n - k, "%s%s %d", k ? ", " : "", keys[i], v->valueint);
        }
        if (buf[0] && k < n) snprintf(buf + k, n - k, " (%s)", files[f]);
        cJSON_Delete(root);
    }
}

void hub_tokenizers_free(Tokenizer *src, Tokenizer *tgt) {
    if (tgt != src) tokenizer_free(tgt);
    tokenizer_free(src);
}
