// cmd_tokenize.c: `tokenize`: a text split into the tokens of a model folder's tokenizer,
// as Hugging Face's tokenizer gives them: tokenizer.json's with no BOS or EOS added, Marian's
// with `</s>` appended (the source side, as MarianTokenizer(text) gives it); special tokens
// inside the text recognised.
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hub.h"
#include "tokenizer.h"

static const char usage[] =
    "usage: stepformer tokenize --model DIR --text TEXT [--json]\n"
    "\n"
    "Splits TEXT into the tokens of the folder's tokenizer.json (DIR may also name the\n"
    "tokenizer.json itself), as Hugging Face's tokenizer.encode(TEXT) does: nothing added\n"
    "before or after, special tokens inside the text recognised. A Marian folder's source side\n"
    "(source.spm, its pieces numbered by vocab.json) gives the ids MarianTokenizer(TEXT) gives,\n"
    "`</s>` last. Prints one token a line: its id, its piece as the file writes it, and the\n"
    "piece as the window labels it.\n"
    "\n"
    "  --model DIR   a model folder as the hub ships it\n"
    "  --text TEXT   the text\n"
    "  --json        print {\"ids\": [...], \"pieces\": [...]}\n";

static int print(const Tokenizer *t, const int *ids, int n, bool json) {
    if (json) {
        cJSON *root = cJSON_CreateObject(), *jids = cJSON_AddArrayToObject(root, "ids"),
              *pieces = cJSON_AddArrayToObject(root, "pieces");
        for (int i = 0; i < n; i++) {
            cJSON_AddItemToArray(jids, cJSON_CreateNumber(ids[i]));
            cJSON_AddItemToArray(pieces, cJSON_CreateString(tokenizer_piece(t, ids[i])));
        }
        char *s = cJSON_PrintUnformatted(root);
        const bool ok = s && printf("%s\n", s) >= 0;
        free(s);
        cJSON_Delete(root);
        return ok ? EXIT_OK : EXIT_FAIL;
    }
    for (int i = 0; i < n; i++) {
        char label[256];
        tokenizer_label(t, ids[i], label, sizeof label);
        if (printf("%d\t%s\t%s\n", ids[i], tokenizer_piece(t, ids[i]), label) < 0) return EXIT_FAIL;
    }
    return EXIT_OK;
}

int cmd_tokenize(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, OPT_MODEL | OPT_TOKENIZE | OPT_JSON, usage, &o);
    if (code >= 0) return code;
    if (o.n_positional) return cli_usage_error("tokenize", "unexpected argument '%s'", o.positional[0]);
    if (!o.spec.model_path) return cli_usage_error("tokenize", "--model DIR is required");
    if (!o.text) return cli_usage_error("tokenize", "--text TEXT is required");
    Err e = {{0}};
    if (!*o.text) return err_set(&e, "--text is empty: give the text to split"), cli_fail(&e);
    Tokenizer *t = NULL, *tgt = NULL;
    const bool folder = hub_is_folder(o.spec.model_path);
    if (!folder) t = tgt = tokenizer_load(o.spec.model_path, &e);
    else if (hub_tokenizers(o.spec.model_path, &t, &tgt, &e) && !t)
        err_set(&e, "%s: the folder has no tokenizer: no tokenizer.json, and no source.spm with vocab.json", o.spec.model_path);
    if (!t) return cli_fail(&e);
    const bool marian = tokenizer_is_marian(t);
    int *ids, n;
    code = tokenizer_encode(t, o.text, marian, &ids, &n, &e) ? print(t, ids, n, o.json) : cli_fail(&e);
    free(ids);
    hub_tokenizers_free(t, tgt);
    return code;
}
