// test_hub.c: model folders in exactly the Hugging Face hub's layout open as they are, and give
// PyTorch's numbers. The fixtures (scripts/make_hub_fixtures.py) were made by modules written
// from the structure of Hugging Face's GPT2LMHeadModel and LlamaForCausalLM: GPT-2 with the hub's
// bare keys, the attn.bias buffers and no lm_head (F32), GPT-2 with `transformer.` keys and
// lm_head (F16), LLaMA with grouped-query attention in two BF16 shards, LLaMA tied with another
// rope_theta (F32), and Qwen2 with its q, k and v biases. Through the command line, as a user
// runs it: `trace --dump` must hold PyTorch's logits at every prompt position to 1e-4 of the
// largest |logit|, and `run --json` the greedy ids. Programs with the exact GELU, the adjacent
// RoPE pairing, or GPT-2's c_proj read [out, in] must each fail that check (the fixtures can
// tell them apart). Bad folders exit 1 with one line naming the file and what is wrong.
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "cli_run.h"

#define HUB FIXTURES "/hub"

static bool load_case(const char *name, StFile *c, char *ids, size_t n) {
    char path[400];
    snprintf(path, sizeof path, HUB "/%s/case.safetensors", name);
    Err e = {{0}};
    if (!st_load(c, path, &e)) {
        CHECK(false, "%s", e.msg);
        return false;
    }
    ids_csv(st_find(c, "ids"), ids, n);
    return true;
}

// trace's logits and run's greedy ids, with the folder's own program or `program` ("" none).
static double trace_error(const char *name, const char *program, const StFile *c, const char *ids) {
    char dump[400];
    snprintf(dump, sizeof dump, "%s/%s.trace.safetensors", dir, name);
    unlink(dump);
    const int code = run("trace --model '" HUB "/%s' %s%s%s --src-ids %s --dump '%s'", name, *program ? "--program '" : "",
                         program, *program ? "'" : "", ids, dump);
    CHECK(code == 0, "%s: trace exits 0: %s", name, err);
    return code == 0 ? dump_logits_error(dump, c) : -1;
}

static void fixture(const char *name, const char *note) {
    StFile c;
    char ids[256];
    if (!load_case(name, &c, ids, sizeof ids)) return;
    const double e = trace_error(name, "", &c, ids);
    CHECK(e >= 0 && e <= 1e-4, "%s: the logits are PyTorch's to 1e-4 of the largest (%.3g)", name, e);
    if (note) CHECK(strstr(err, note) != NULL, "%s: stderr says '%s': %s", name, note, err);
    else CHECK(!strstr(err, "ignored"), "%s: nothing ignored: %s", name, err);
    const int code = run("run --model '" HUB "/%s' --src-ids %s --max-len %s --json", name, ids, st_meta(&c, "max_new_tokens"));
    CHECK(code == 0, "%s: run exits 0: %s", name, err);
    cJSON *j = cJSON_Parse(out);
    const cJSON *got = cJSON_GetObjectItem(j, "output_ids");
    const StEntry *want = st_find(&c, "generated");
    bool same = cJSON_IsArray(got) && cJSON_GetArraySize(got) == want->shape.dim[0];
    for (int i = 0; same && i < want->shape.dim[0]; i++) same = cJSON_GetArrayItem(got, i)->valueint == (int)want->data[i];
    CHECK(same, "%s: run gives PyTorch's greedy ids: %s", name, out);
    cJSON_Delete(j);
    st_free(&c);
}

// A copy of lessons/NAME.md with `from` replaced by `to` everywhere, in the scratch folder.
static void variant(const char *lesson, const char *from, const char *to, char *path, size_t n) {
    char src[300], *text;
    snprintf(src, sizeof src, LESSONS "/%s", lesson);
    FILE *f = fopen(src, "rb");
    text = calloc(1 << 20, 1);
    const size_t len = f && text ? fread(text, 1, (1 << 20) - 1, f) : 0;
    if (f) fclose(f);
    snprintf(path, n, "%s/variant-%s", dir, lesson);
    FILE *o = fopen(path, "wb");
    int replaced = 0;
    for (size_t i = 0; o && i < len;) {
        if (!strncmp(text + i, from, strlen(from))) fputs(to, o), i += strlen(from), replaced++;
        else fputc(text[i++], o);
    }
    if (o) fclose(o);
    free(text);
    CHECK(replaced > 0, "%s: '%s' found to replace", lesson, from);
}

// trace --labels --grads against PyTorch autograd: every weight's gradient to 1e-4 of its
// largest entry (a tied pair holds the sum under both names); and a gradient check of a norm's
// gain, through RMSNorm or LayerNorm, the new ops and the positions, by finite differences.
static void gradients(const char *name, const char *checked) {
    StFile c, want, got;
    char ids[256], labels[256], path[400], grads[400];
    if (!load_case(name, &c, ids, sizeof ids)) return;
    ids_csv(st_find(&c, "labels"), labels, sizeof labels);
    snprintf(grads, sizeof grads, "%s/%s.grads.safetensors", dir, name);
    int code = run("trace --model '" HUB "/%s' --src-ids %s --labels %s --grads '%s'", name, ids, labels, grads);
    CHECK(code == 0, "%s: trace --grads exits 0: %s", name, err);
    snprintf(path, sizeof path, HUB "/%s/grads.safetensors", name);
    Err e = {{0}};
    if (code == 0 && st_load(&want, path, &e)) {
        if (st_load(&got, grads, &e)) {
            double worst = 0;
            const char *where = "";
            for (int i = 0; i < want.n_entries; i++) {
                const StEntry *w = &want.entries[i], *g = st_find(&got, w->name);
                CHECK(g && shape_eq(&g->shape, &w->shape), "%s: the gradient of %s, with PyTorch's shape", name, w->name);
                if (!g || !shape_eq(&g->shape, &w->shape)) continue;
                double big = 1e-6, diff = 0;
                for (long k = 0; k < shape_numel(&w->shape); k++)
                    big = fmax(big, fabs(w->data[k])), diff = fmax(diff, fabs((double)g->data[k] - w->data[k]));
                if (diff / big > worst) worst = diff / big, where = w->name;
            }
            CHECK(worst <= 1e-4, "%s: every weight's gradient is PyTorch's to 1e-4 of its largest (worst %.3g, %s)", name,
                  worst, where);
            st_free(&got);
        }
        st_free(&want);
    }
    code = run("trace --model '" HUB "/%s' --src-ids %s --labels %s --gradcheck %s", name, ids, labels, checked);
    CHECK(code == 0, "%s: --gradcheck %s agrees: %s%s", name, checked, out, err);
    st_free(&c);
}

// Mixing the pairings: Meta's (adjacent) on a hub file made for rotate_half is right at the first
// position, which turns by no angle, and wrong after it.
static void pairing_mixed(void) {
    StFile c, d;
    char ids[256], dump[400];
    if (!load_case("llama-mha-tied", &c, ids, sizeof ids)) return;
    snprintf(dump, sizeof dump, "%s/mixed.safetensors", dir);
    const int code = run("trace --model '" HUB "/llama-mha-tied' --config rope_adjacent=1 --src-ids %s --dump '%s'", ids, dump);
    Err e = {{0}};
    CHECK(code == 0 && st_load(&d, dump, &e), "trace with rope_adjacent=1: %s %s", err, e.msg);
    if (code != 0 || !d.n_entries) {
        st_free(&c);
        return;
    }
    const StEntry *got = st_find(&d, "logits"), *want = st_find(&c, "logits");
    const int V = want->shape.dim[1], T = want->shape.dim[0];
    double first = 0, later = 0;
    for (int t = 0; got && t < T; t++)
        for (int v = 0; v < V; v++) {
            const double diff = fabs((double)got->data[t * V + v] - want->data[t * V + v]);
            if (t == 0) first = fmax(first, diff);
            else later = fmax(later, diff);
        }
    CHECK(got && first < 1e-4 && later > 1e-2, "mixed pairings: position 0 right (%.3g), later ones wrong (%.3g)", first, later);
    st_free(&d), st_free(&c);
}

// A copy of lessons/NAME.md with the line that starts with `start` replaced by `line`.
static void variant_line(const char *lesson, const char *start, const char *line, char *path, size_t n) {
    char src[300], buf[4096];
    snprintf(src, sizeof src, LESSONS "/%s", lesson);
    snprintf(path, n, "%s/line-%s", dir, lesson);
    FILE *f = fopen(src, "rb"), *o = fopen(path, "wb");
    int replaced = 0;
    while (f && o && fgets(buf, sizeof buf, f)) {
        if (!strncmp(buf, start, strlen(start))) fprintf(o, "%s\n", line), replaced++;
        else fputs(buf, o);
    }
    if (f) fclose(f);
    if (o) fclose(o);
    CHECK(replaced == 1, "%s: one line starts with '%s'", lesson, start);
}

// Each would-be mistake moves the logits far past the tolerance: the fixtures catch it.
static void mistakes_fail(void) {
    static const struct {
        const char *folder, *lesson, *from, *to, *what;
        double above;  // the error it makes is at least this (the contract allows 1e-4)
    } cases[] = {
        {"gpt2", "gpt2.md", "gelu_tanh(", "gelu(", "the exact GELU in GPT-2's MLP", 1.1e-4},
        {"gpt2", "gpt2.md", "[n_embd, n_embd] normal(0.02) in_out", "[n_embd, n_embd] normal(0.02)",
         "GPT-2's attention c_proj read [out, in]", 1e-3},
        {"llama-mha-tied", "llama.md", "default rope_adjacent = 0", "default rope_adjacent = 1", "RoPE on adjacent pairs", 1e-3},
        {"qwen2", "llama.md", "q = linear(x, @q_proj.weight, @q_proj.bias)", "q = linear(x, @q_proj.weight)",
         "Qwen2 without its q bias", 1e-3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        StFile c;
        char ids[256], program[400];
        if (!load_case(cases[k].folder, &c, ids, sizeof ids)) continue;
        variant(cases[k].lesson, cases[k].from, cases[k].to, program, sizeof program);
        const double e = trace_error(cases[k].folder, program, &c, ids);
        CHECK(e > cases[k].above, "%s: %s moves the logits past the tolerance (%.3g)", cases[k].folder, cases[k].what, e);
        st_free(&c);
    }
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (f) fputs(text, f), fclose(f);
}

static void copy_file(const char *from, const char *to, long cut) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    long k = 0;
    for (int ch; a && b && (ch = fgetc(a)) != EOF && (cut < 0 || k < cut); k++) fputc(ch, b);
    if (a) fclose(a);
    if (b) fclose(b);
}

// A folder in the scratch space: config.json's text (NULL: none), and gpt2's weights, cut short
// after `cut` bytes when cut >= 0.
static const char *folder(const char *name, const char *config, long cut) {
    static char path[400];
    char p[500];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    if (config) snprintf(p, sizeof p, "%s/config.json", path), write_text(p, config);
    snprintf(p, sizeof p, "%s/model.safetensors", path);
    copy_file(HUB "/gpt2/model.safetensors", p, cut);
    return path;
}

static void bad_folders(void) {
    const char *gpt2 = "{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_head\": 4, \"n_embd\": 32, \"n_positions\": 32, "
                       "\"vocab_size\": 96, \"layer_norm_epsilon\": 1e-5, \"activation_function\": \"gelu_new\"}";
    const char *d = folder("noconfig", NULL, -1);
    int code = run("run --model '%s' --src-ids 1,2", d);
    EXPECT(code, 1, err, "needs config.json");
    d = folder("bert", "{\"model_type\": \"bert\"}", -1);
    code = run("run --model '%s' --src-ids 1,2", d);
    EXPECT(code, 1, err, "model_type \"bert\" has no program");
    CHECK(strstr(err, "gpt2, llama, qwen2") != NULL, "the supported types are named: %s", err);
    d = folder("wide", "{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_head\": 4, \"n_embd\": 48, \"n_positions\": 32, "
                       "\"vocab_size\": 96, \"layer_norm_epsilon\": 1e-5}", -1);
    code = run("run --model '%s' --src-ids 1,2", d);
    CHECK(code == 1 && strstr(err, "wte.weight") && strstr(err, "48"), "a shape against config.json names both: %s", err);
    d = folder("short", gpt2, 40000);
    code = run("run --model '%s' --src-ids 1,2", d);
    CHECK(code == 1 && strstr(err, "run past the end"), "a cut file: %s", err);
    d = folder("ok", gpt2, -1);
    code = run("run --model '%s' --src-ids 1,96", d);
    CHECK(code == 1 && strstr(err, "96"), "an id of vocab_size is refused: %s", err);
    code = run("run --model '%s' --src-ids 1,-1", d);
    CHECK(code == 1, "a negative id is refused: %s", err);
    d = folder("exact", "{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_head\": 4, \"n_embd\": 32, \"n_positions\": 32, "
                        "\"vocab_size\": 96, \"layer_norm_epsilon\": 1e-5, \"activation_function\": \"gelu\"}", -1);
    code = run("run --model '%s' --src-ids 1,2", d);
    EXPECT(code, 1, err, "\"activation_function\" is \"gelu\"");
    d = folder("inverse", "{\"model_type\": \"gpt2\", \"n_layer\": 2, \"n_head\": 4, \"n_embd\": 32, \"n_positions\": 32, "
                          "\"vocab_size\": 96, \"scale_attn_by_inverse_layer_idx\": true}", -1);
    code = run("run --model '%s' --src-ids 1,2", d);
    EXPECT(code, 1, err, "\"scale_attn_by_inverse_layer_idx\" is true, which stepformer does not compute");
    char p[500];
    d = folder("shards", gpt2, -1);
    snprintf(p, sizeof p, "%s/model.safetensors", d), unlink(p);
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", d);
    write_text(p, "{\"weight_map\": {\"wte.weight\": \"model-00001-of-00002.safetensors\"}}");
    code = run("run --model '%s' --src-ids 1,2", d);
    EXPECT(code, 1, err, "names model-00001-of-00002.safetensors, which the folder does not have");
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", d), unlink(p);
    code = run("run --model '%s' --src-ids 1,2", d);
    EXPECT(code, 1, err, "no model.safetensors");
    // Weights too large for the machine are refused from the header, before anything is read.
    const char *header = "{\"wte.weight\":{\"dtype\":\"BF16\",\"shape\":[1048576,1048576],\"data_offsets\":[0,2]}}";
    snprintf(p, sizeof p, "%s/model.safetensors", d);
    FILE *f = fopen(p, "wb");
    if (f) {
        const unsigned long long n = strlen(header);
        for (int i = 0; i < 8; i++) fputc((int)(n >> (8 * i)) & 0xFF, f);
        fputs(header, f), fputs("xx", f), fclose(f);
    }
    code = run("run --model '%s' --src-ids 1,2", d);
    CHECK(code == 1 && strstr(err, "need about 2199.0 GB") && strstr(err, "GB free"), "the estimate refuses it, 2 bytes a BF16 number: %s", err);
}

// A folder made here: `init` writes random weights for lessons/LESSON (its model line replaced
// by random weights of `config`), beside config.json's text and, when given, one of
// assets/tokenizers/.
static const char *made_folder(const char *name, const char *lesson, const char *config, const char *config_json,
                               const char *tokenizer) {
    static char path[400];
    char program[400], p[600], line[300];
    snprintf(line, sizeof line, "model: random\nconfig: %s", config);
    variant_line(lesson, "model: ", line, program, sizeof program);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    const int code = run("init --program '%s' --out '%s/model.safetensors'", program, path);
    CHECK(code == 0, "init %s: %s", name, err);
    snprintf(p, sizeof p, "%s/config.json", path), write_text(p, config_json);
    if (tokenizer) {
        char src[300];
        snprintf(src, sizeof src, LESSONS "/../assets/tokenizers/%s/tokenizer.json", tokenizer);
        snprintf(p, sizeof p, "%s/tokenizer.json", path), copy_file(src, p, -1);
    }
    return path;
}

// The ids run --json says the model read.
static bool input_ids_are(const int *want, int n) {
    cJSON *j = cJSON_Parse(out);
    const cJSON *ids = cJSON_GetObjectItem(j, "input_ids");
    bool same = cJSON_IsArray(ids) && cJSON_GetArraySize(ids) == n;
    for (int i = 0; same && i < n; i++) same = cJSON_GetArrayItem(ids, i)->valueint == want[i];
    cJSON_Delete(j);
    return same;
}

// --input goes through the folder's own tokenizer, as tokenizer(TEXT) does; a folder without
// one takes ids only; text past the positions is refused, and generation past them stops.
static void text_input(void) {
    const char *g = made_folder("gpt2-tok", "gpt2.md", "n_layer=1 n_head=2 n_embd=16 n_positions=8 vocab_size=50257",
                                "{\"model_type\": \"gpt2\", \"n_layer\": 1, \"n_head\": 2, \"n_embd\": 16, \"n_positions\": 8, "
                                "\"vocab_size\": 50257, \"layer_norm_epsilon\": 1e-5, \"_name_or_path\": \"tiny/gpt2\"}",
                                "gpt2");
    int code = run("run --model '%s' --input 'Hello world' --max-len 2 --json", g);
    const int hello[] = {15496, 995};  // GPT-2's "Hello" and " world"; no BOS
    CHECK(code == 0 && input_ids_are(hello, 2), "GPT-2's --input reads Hello, world as 15496, 995: %s %s", out, err);
    code = run("tokenize --model '%s' --text 'Hello<|endoftext|> world' --json", g);
    CHECK(code == 0 && strstr(out, "\"ids\":[15496,50256,995]") && strstr(out, "\"pieces\":[\"Hello\",\"<|endoftext|>\",\"\u0120world\"]"),
          "tokenize --json: the special token inside the text is one id: %s", out);
    // Patching a decoder-only model: the prompt and the target read as one text; the last
    // layer's output at the last position carries the whole difference.
    code = run("patch --model '%s' --clean 'The cat sat' --corrupt 'The dog sat' --target ' on' --json", g);
    cJSON *p = cJSON_Parse(out);
    const cJSON *rows = cJSON_GetObjectItem(p, "rows"), *last = cJSON_GetArrayItem(rows, cJSON_GetArraySize(rows) - 1);
    const cJSON *eff = cJSON_GetObjectItem(last, "effects");
    const double clean = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "clean_logit")),
                 corrupt = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "corrupt_logit"));
    CHECK(code == 0 && cJSON_GetObjectItem(p, "target_token") && cJSON_GetObjectItem(p, "target_token")->valueint == 319 &&
              clean != corrupt && cJSON_GetArraySize(eff) == 3 &&
              fabs(cJSON_GetArrayItem(eff, 2)->valuedouble - 1.0) < 1e-6,
          "patch on GPT-2: ' on' (319) scored after 3 tokens, the last layer's last position restores it: %s %s", out, err);
    cJSON_Delete(p);
    code = run("run --model '%s' --input '' --json", g);
    EXPECT(code, 1, err, "empty");
    code = run("run --model '%s' --input 'a b c d e f g h i' --json", g);  // 9 tokens, 8 positions
    EXPECT(code, 1, err, "9 tokens, more than the 8 positions");
    code = run("run --model '%s' --input 'a b c d e f g h' --max-len 3 --json", g);  // exactly 8: one token, then the end
    CHECK(code == 0 && strstr(out, "\"stop\":\"positions\"") && strstr(err, "last position"),
          "8 tokens in 8 positions: one token made, the stop said: %s %s", out, err);
    const char *l = made_folder("llama-tok", "llama.md", "num_hidden_layers=1 num_attention_heads=2 num_key_value_heads=1 hidden_size=16 "
                                "intermediate_size=32 max_position_embeddings=32 vocab_size=1000 rms_norm_eps=1e-5",
                                "{\"model_type\": \"llama\", \"num_hidden_layers\": 1, \"num_attention_heads\": 2, "
                                "\"num_key_value_heads\": 1, \"hidden_size\": 16, \"intermediate_size\": 32, "
                                "\"max_position_embeddings\": 32, \"vocab_size\": 1000, \"rms_norm_eps\": 1e-5, "
                                "\"hidden_act\": \"silu\", \"tie_word_embeddings\": false}",
                                "licences-bpe");
    code = run("run --model '%s' --input 'the licence' --max-len 1 --json", l);
    cJSON *j = cJSON_Parse(out);
    const cJSON *ids = cJSON_GetObjectItem(j, "input_ids");
    CHECK(code == 0 && cJSON_GetArraySize(ids) >= 2 && cJSON_GetArrayItem(ids, 0)->valueint == 1,
          "the Llama-form tokenizer's template puts BOS (1) first: %s %s", out, err);
    cJSON_Delete(j);
    const char *bare = made_folder("gpt2-bare", "gpt2.md", "n_layer=1 n_head=2 n_embd=16 n_positions=8 vocab_size=64",
                                   "{\"model_type\": \"gpt2\", \"n_layer\": 1, \"n_head\": 2, \"n_embd\": 16, \"n_positions\": 8, "
                                   "\"vocab_size\": 64, \"layer_norm_epsilon\": 1e-5}", NULL);
    code = run("run --model '%s' --input 'hello' --json", bare);
    EXPECT(code, 1, err, "has no tokenizer.json");
    code = run("run --model '%s' --src-ids 1,2,3 --max-len 1 --json", bare);
    CHECK(code == 0, "a folder without a tokenizer runs on ids: %s", err);
}

// attention-is-all-you-need-pytorch with separate source and target vocabularies: its ties follow
// the original's switches, so with emb_src_trg_weight_sharing off the source embedding stands
// alone (trace --labels had stopped at "tie: ... have different shapes").
static void ties_follow_switches(void) {
    char program[400], model[400], grads[400], buf[4096];
    snprintf(program, sizeof program, "%s/jadore.md", dir);
    FILE *f = fopen(LESSONS "/attention-is-all-you-need-pytorch.md", "rb"), *o = fopen(program, "wb");
    while (f && o && fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "config: ", 8))
            fputs("config: d_model=32 nhead=4 d_k=6 d_v=10 num_encoder_layers=1 num_decoder_layers=1 dim_feedforward=48 "
                  "src_vocab_size=80 tgt_vocab_size=99 max_positions=64 emb_src_trg_weight_sharing=0 bos_id=2 eos_id=3 pad_id=1\n", o);
        else if (strncmp(buf, "vocab: ", 7)) fputs(buf, o);
    if (f) fclose(f);
    if (o) fclose(o);
    snprintf(model, sizeof model, "%s/jadore.safetensors", dir);
    snprintf(grads, sizeof grads, "%s/jadore.grads.safetensors", dir);
    int code = run("init --program '%s' --out '%s'", program, model);
    CHECK(code == 0, "init: %s", err);
    code = run("trace --program '%s' --model '%s' --src-ids 5,6,7 --tgt-ids 2,8,9 --labels 8,9,3 --grads '%s'", program, model, grads);
    CHECK(code == 0, "trace --labels with separate vocabularies: %s", err);
    StFile g;
    Err e = {{0}};
    if (code == 0 && st_load(&g, grads, &e)) {
        const StEntry *src = st_find(&g, "encoder.src_word_emb.weight"), *trg = st_find(&g, "decoder.trg_word_emb.weight"),
                      *prj = st_find(&g, "trg_word_prj.weight");
        CHECK(src && trg && prj && src->shape.dim[0] == 80 && trg->shape.dim[0] == 99, "the two embeddings keep their sizes");
        CHECK(trg && prj && !memcmp(trg->data, prj->data, sizeof(float) * 99 * 32), "the projection still shares the target's");
        st_free(&g);
    }
}

// The backward pass of GPT-2's lesson drawn whole: a chunk of a weight stored [in, out] (c_attn's
// q, k, v) is shown, and its gradient kept, as the whole weight (its share was written past a
// chunk-sized buffer before; the sanitizer build catches any such write).
static void backward_drawn(void) {
    const int code = run("export " LESSONS "/gpt2.md --out '%s/gpt2-backward' --size 640x480 --backward", dir);
    CHECK(code == 0 && strstr(out, "PNGs"), "export --backward of gpt2.md: %s %s", out, err);
}

// The whole GPT-2 small configuration (12 layers, 768 wide, 50257 tokens, 124M weights, random)
// as a hub folder with GPT-2's tokenizer: it runs, and the window draws its last attention map.
// The peak memory is printed, not asserted. (Skipped under the sanitizers: their shadow memory
// triples it.)
static void full_gpt2(void) {
#if defined(__SANITIZE_ADDRESS__)
    puts("full GPT-2: skipped under AddressSanitizer");
#else
    const char *g = made_folder("gpt2-full", "gpt2.md", "n_layer=12 n_head=12 n_embd=768 n_positions=1024 vocab_size=50257",
                                "{\"model_type\": \"gpt2\", \"n_layer\": 12, \"n_head\": 12, \"n_embd\": 768, \"n_positions\": "
                                "1024, \"vocab_size\": 50257, \"layer_norm_epsilon\": 1e-5, \"activation_function\": "
                                "\"gelu_new\", \"bos_token_id\": 50256, \"eos_token_id\": 50256}",
                                "gpt2");
    int code = run("run --model '%s' --input 'The capital of France is' --max-len 2 --json", g);
    const int ids[] = {464, 3139, 286, 4881, 318};
    CHECK(code == 0 && input_ids_are(ids, 5), "GPT-2 small runs on its own tokens: %s %s", out, err);
    code = run("export --model '%s' --input 'The capital of France is' --out '%s/full-png' --size 1280x720 --view attention "
               "--stages step.0.decoder.layers.11.self_attn.weights " LESSONS "/gpt2.md", g, dir);
    CHECK(code == 0, "the window draws GPT-2 small's last attention: %s %s", out, err);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    printf("full GPT-2 small: peak resident memory of a command %.2f GB\n", ru.ru_maxrss / 1048576.0);
#endif
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    fixture("gpt2", "h.0.attn.bias");  // the mask buffers are noted and left
    fixture("gpt2-prefixed-f16", "h.0.attn.bias");
    fixture("llama-gqa-bf16", NULL);
    fixture("llama-mha-tied", NULL);
    fixture("qwen2", NULL);
    fixture("llama-mlp-bias", NULL);  // attention_bias and mlp_bias: every projection has a bias
    gradients("gpt2", "h.0.ln_2.weight");
    gradients("gpt2-prefixed-f16", "h.1.attn.c_attn.weight");
    gradients("llama-gqa-bf16", "model.layers.0.input_layernorm.weight");
    gradients("llama-mha-tied", "model.layers.1.mlp.gate_proj.weight");
    gradients("qwen2", "model.layers.0.self_attn.k_proj.bias");
    gradients("llama-mlp-bias", "model.layers.1.mlp.down_proj.bias");
    mistakes_fail();
    pairing_mixed();
    bad_folders();
    text_input();
    ties_follow_switches();
    backward_drawn();
    full_gpt2();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "removing %s", dir);
    return check_finish("test_hub");
}
