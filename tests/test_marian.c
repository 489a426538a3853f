// test_marian.c: Marian (lessons/marian.md) opened from a folder in the hub's layout, against
// PyTorch. The fixture (scripts/make_hub_fixtures.py) was made by modules written from the
// structure of Hugging Face's MarianMTModel, with random weights and a random
// final_logits_bias: `trace --src-ids --tgt-ids --dump` must hold its logits to 1e-4 of the
// largest, and `run` write its greedy ids. The paper's interleaved positions, ReLU for swish, no
// embedding scale and no final_logits_bias must each fail that check; the positional table left
// out of the file is computed as Hugging Face computes it; and without its `ban` of the pad id
// (bad_words_ids), greedy decoding would write pad.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "cli_run.h"

#define FOLDER FIXTURES "/hub/marian"

static char src[128], tgt[128];

static void ids_of(const StEntry *en, char *buf, size_t n) {
    size_t k = 0;
    for (int i = 0; i < en->shape.dim[0] && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "", (int)en->data[i]);
}

// The largest difference of the dump's logits from the case's, over the largest |logit| (or
// 1); -1 when the run failed.
static double logits_error(const char *folder, const char *program, const StFile *c) {
    const int code = run("trace --model '%s' %s%s --src-ids %s --tgt-ids %s --dump '%s/m.safetensors'", folder,
                         program ? "--program " : "", program ? program : "", src, tgt, dir);
    char path[400];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    return code == 0 ? dump_logits_error(path, c) : -1;
}

// The fixture's folder without the two positional tables: the program computes them.
static const char *without_positions(void) {
    static char folder[400];
    char path[500];
    snprintf(folder, sizeof folder, "%s/marian-no-positions", dir);
    mkdir(folder, 0755);
    StFile f;
    Err e = {{0}};
    const bool loaded = st_load(&f, FOLDER "/model.safetensors", &e);
    CHECK(loaded, "%s", e.msg);
    if (!loaded) return folder;
    StTensor *t = calloc((size_t)f.n_entries, sizeof *t);
    int n = 0;
    for (int i = 0; t && i < f.n_entries; i++)
        if (!strstr(f.entries[i].name, "embed_positions"))
            t[n++] = (StTensor){f.entries[i].name, f.entries[i].shape, f.entries[i].data};
    snprintf(path, sizeof path, "%s/model.safetensors", folder);
    CHECK(t && n == f.n_entries - 2 && st_save(path, t, n, NULL, 0, &e), "the copy without positions: %s", e.msg);
    free(t);
    st_free(&f);
    snprintf(path, sizeof path, "cp '%s/config.json' '%s/'", FOLDER, folder);
    CHECK(system(path) == 0, "config.json copied");
    return folder;
}

// Another folder with its own case: its logits and greedy ids. (src and tgt are the main case's
// again after.)
static void other_case(const char *name, const char *what) {
    char folder[300], path[400];
    snprintf(folder, sizeof folder, "%s/hub/%s", FIXTURES, name);
    snprintf(path, sizeof path, "%s/case.safetensors", folder);
    StFile c;
    Err e = {{0}};
    CHECK(st_load(&c, path, &e), "%s", e.msg);
    if (!c.n_entries) return;
    char keep_src[128], keep_tgt[128], want[200] = "\"output_ids\":[";
    memcpy(keep_src, src, sizeof src), memcpy(keep_tgt, tgt, sizeof tgt);
    ids_of(st_find(&c, "src"), src, sizeof src);
    ids_of(st_find(&c, "tgt"), tgt, sizeof tgt);
    const double err_max = logits_error(folder, NULL, &c);
    CHECK(err_max >= 0 && err_max <= 1e-4, "%s: the logits are PyTorch's to 1e-4 (%.3g): %s", what, err_max, err);
    const int code = run("run --model '%s' --src-ids %s --max-len %s --json", folder, src, st_meta(&c, "max_new_tokens"));
    ids_csv(st_find(&c, "generated"), want + strlen(want), sizeof want - strlen(want));
    strcat(want, "]");
    CHECK(code == 0 && strstr(out, want), "%s: greedy ids %s in: %s %s", what, want, out, err);
    memcpy(src, keep_src, sizeof src), memcpy(tgt, keep_tgt, sizeof tgt);
    st_free(&c);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    // model.shared.weight alone for the three tied tables, as save_pretrained writes them.
    other_case("marian-shared-only", "model.shared.weight alone");
    // share_encoder_decoder_embeddings false: the encoder's and the decoder's own tables, the head
    // tied to the decoder's.
    other_case("marian-separate", "separate embeddings");
    StFile c;
    Err e = {{0}};
    if (!st_load(&c, FOLDER "/case.safetensors", &e)) return fprintf(stderr, "%s\n", e.msg), 1;
    ids_of(st_find(&c, "src"), src, sizeof src);
    ids_of(st_find(&c, "tgt"), tgt, sizeof tgt);
    double err_max = logits_error(FOLDER, NULL, &c);
    CHECK(err_max >= 0 && err_max <= 1e-4, "Marian's logits are PyTorch's to 1e-4 of the largest (%.3g): %s", err_max, err);
    // The same state_dict saved by torch.save (pytorch_model.bin, the embedding one storage
    // under its three names), read without running its pickle.
    err_max = logits_error(FIXTURES "/hub/marian-bin", NULL, &c);
    CHECK(err_max >= 0 && err_max <= 1e-4, "from pytorch_model.bin, the same logits (%.3g): %s", err_max, err);
    int code = run("run --model '%s' --src-ids %s --max-len %s --json", FOLDER, src, st_meta(&c, "max_new_tokens"));
    char want[200] = "\"output_ids\":[";
    const StEntry *gen = st_find(&c, "generated");
    for (int i = 0, k = (int)strlen(want); i < gen->shape.dim[0]; i++)
        k += snprintf(want + k, sizeof want - (size_t)k, "%s%d", i ? "," : "", (int)gen->data[i]);
    strcat(want, "]");
    CHECK(code == 0 && strstr(out, want), "greedy ids %s in: %s %s", want, out, err);
    // The table computed when the file lacks it: Marian's halves, as Hugging Face builds it.
    const char *bare = without_positions();
    err_max = logits_error(bare, NULL, &c);
    CHECK(err_max >= 0 && err_max <= 1e-4, "without the tables in the file, the computed ones give the logits (%.3g): %s",
          err_max, err);
    // Each difference from the paper, undone, moves the logits far past the tolerance.
    static const struct {
        const char *start, *line, *what;
        bool bare;  // run on the folder without the tables (the table's layout is then the program's)
    } mistakes[] = {
        {"buffer @model.encoder.embed_positions.weight",
         "buffer @model.encoder.embed_positions.weight [max_position_embeddings, d_model] sinusoid", "the paper's "
         "interleaved positions", true},
        {"act = silu(fc1)", "act = activation(fc1)", "ReLU for swish", false},
        {"default embed_scale", "default embed_scale = 1", "no embedding scale", false},
        {"logits = linear(x, @lm_head.weight, @final_logits_bias)", "logits = linear(x, @lm_head.weight)",
         "no final_logits_bias", false},
    };
    for (size_t k = 0; k < sizeof mistakes / sizeof mistakes[0]; k++) {
        const char *program = lesson_variant(LESSONS "/marian.md", mistakes[k].start, mistakes[k].line);
        err_max = logits_error(mistakes[k].bare ? bare : FOLDER, program, &c);
        CHECK(err_max > 1e-3, "%s moves the logits past the tolerance (%.3g): %s", mistakes[k].what, err_max, err);
    }
    // Without the ban the pad id is the likeliest token (the fixture's final_logits_bias makes it
    // so): greedy would write it, as generate() without bad_words_ids would.
    const char *unbanned = lesson_variant(LESSONS "/marian.md", "allowed = ban(logits, id=pad_id)", "allowed = scale(logits, by=1)");
    code = run("run --model '%s' --program %s --src-ids %s --max-len 3 --json", FOLDER, unbanned, src);
    CHECK(code == 0 && strstr(out, "\"output_ids\":[95"), "without the ban, greedy writes pad (95) first: %s %s", out, err);
    // The decoder reads the ids given, the start id first; other ids first are refused.
    code = run("trace --model '%s' --src-ids %s --tgt-ids 5,6 --dump '%s/x.safetensors'", FOLDER, src, dir);
    EXPECT(code, 1, err, "the first id is 5, but marian's decoder starts from 95 (decoder_start_token_id)");
    CHECK(!strchr(err, '\n') || strchr(err, '\n') == strrchr(err, '\n'), "one line: %s", err);
    code = run("run --model '%s' --src-ids 3,96 --json", FOLDER);
    EXPECT(code, 1, err, "96");
    // A decoder unlike the encoder is refused, not run wrong.
    char odd[400], cmd2[900];
    snprintf(odd, sizeof odd, "%s/marian-odd", dir);
    snprintf(cmd2, sizeof cmd2, "mkdir -p '%s' && cp '%s/model.safetensors' '%s/' && sed 's/\"decoder_ffn_dim\": 64/"
             "\"decoder_ffn_dim\": 128/' '%s/config.json' > '%s/config.json'", odd, FOLDER, odd, FOLDER, odd);
    CHECK(system(cmd2) == 0, "made %s", odd);
    code = run("run --model '%s' --src-ids %s --json", odd, src);
    EXPECT(code, 1, err, "\"encoder_ffn_dim\" is 64 and \"decoder_ffn_dim\" 128");
    st_free(&c);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_marian");
}
