// test_formats.c: safetensors and model files, good and bad. Every bad file must give one
// message that names the file (and the tensor, where there is one) and says what was expected.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "session.h"
#include "model.h"
#include "rng.h"

static char dir[] = "/tmp/stepformer-formats-XXXXXX";

static const char *tmp(const char *name) {
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

// Writes an 8-byte header length (`claimed`, or the real one if negative), the header, then data.
static void write_raw(const char *path, const char *header, long claimed, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    unsigned long long len = claimed >= 0 ? (unsigned long long)claimed : strlen(header);
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(len >> (8 * i));
    fwrite(b, 1, 8, f);
    fwrite(header, 1, strlen(header), f);
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

// Loads `path`, expects failure with a message holding the path and every `want` fragment.
// A load error names the file and mentions w1 (and w2, if given).
static void check_message(const Err *e, const char *path, const char *w1, const char *w2) {
    CHECK(strstr(e->msg, path) != NULL, "message names the file: %s", e->msg);
    CHECK(strstr(e->msg, w1) != NULL, "message mentions '%s': %s", w1, e->msg);
    if (w2) CHECK(strstr(e->msg, w2) != NULL, "message mentions '%s': %s", w2, e->msg);
}

static void expect_st_error(const char *path, const char *want1, const char *want2) {
    StFile f;
    Err e = {{0}};
    bool ok = st_load(&f, path, &e);
    CHECK(!ok, "%s should not load", path);
    if (ok) return st_free(&f);
    check_message(&e, path, want1, want2);
}

static void test_bad_safetensors(void) {
    float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const char *p = tmp("truncated.safetensors");
    FILE *f = fopen(p, "wb");
    fwrite("\x10\x00\x00", 1, 3, f);
    fclose(f);
    expect_st_error(p, "truncated", NULL);
    p = tmp("past.safetensors");
    write_raw(p, "{}", 4096, NULL, 0);
    expect_st_error(p, "header length 4096", "past the end");
    p = tmp("json.safetensors");
    write_raw(p, "{\"a\": {\"dtype\": \"F32\",", -1, NULL, 0);
    expect_st_error(p, "not valid JSON", NULL);
    p = tmp("array.safetensors");
    write_raw(p, "[1, 2]", -1, NULL, 0);
    expect_st_error(p, "not a JSON object", NULL);
    p = tmp("range.safetensors");
    write_raw(p, "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,32]}}", -1, data, 16);
    expect_st_error(p, "'w'", "past the end of the data section");
    p = tmp("overlap.safetensors");
    write_raw(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}", -1, data, 32);
    expect_st_error(p, "overlap", "'b'");
    p = tmp("overlap-past-empty.safetensors");  // an empty tensor between two that overlap
    write_raw(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
                 "\"z\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}", -1, data, 32);
    expect_st_error(p, "overlap", "'b'");
    p = tmp("twice.safetensors");
    write_raw(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                 "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", -1, data, 8);
    expect_st_error(p, "names 'a' twice", NULL);
    p = tmp("meta-twice.safetensors");
    write_raw(p, "{\"__metadata__\":{\"x\":\"1\"},\"__metadata__\":{\"y\":\"2\",\"z\":\"3\"}}", -1, NULL, 0);
    expect_st_error(p, "names '__metadata__' twice", NULL);
    p = tmp("i64.safetensors");
    write_raw(p, "{\"h\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", -1, data, 8);
    expect_st_error(p, "dtype I64", "'h'");
    p = tmp("f16-size.safetensors");  // 2 bytes a number: [2] needs 4, not 8
    write_raw(p, "{\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[0,8]}}", -1, data, 8);
    expect_st_error(p, "'h'", "needs 4 (2 bytes per F16)");
    p = tmp("size.safetensors");
    write_raw(p, "{\"s\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", -1, data, 16);
    expect_st_error(p, "'s'", "shape needs 12");
    p = tmp("meta.safetensors");
    write_raw(p, "{\"__metadata__\":{\"d_model\":32}}", -1, NULL, 0);
    expect_st_error(p, "metadata 'd_model' is not a string", NULL);
    expect_st_error(tmp("does-not-exist.safetensors"), "cannot open", NULL);
}

static void test_roundtrip(void) {
    float a[6] = {1, -2, 3.5f, 0, 1e-8f, -1e8f}, b[3] = {7, 8, 9};
    StTensor t[2] = {{"alpha", shape2(2, 3), a}, {"beta.x", shape1(3), b}};
    StMeta meta[1] = {{"note", "hello \"world\""}};
    Err e = {{0}};
    const char *p = tmp("good.safetensors");
    CHECK(st_save(p, t, 2, meta, 1, &e), "save: %s", e.msg);
    StFile f;
    bool ok = st_load(&f, p, &e);
    CHECK(ok, "load: %s", e.msg);
    if (!ok) return;
    const StEntry *ea = st_find(&f, "alpha"), *eb = st_find(&f, "beta.x");
    CHECK(ea && eb && shape_eq(&ea->shape, &t[0].shape) && memcmp(ea->data, a, sizeof a) == 0 &&
          memcmp(eb->data, b, sizeof b) == 0, "tensors survive a round trip");
    CHECK(st_meta(&f, "note") && strcmp(st_meta(&f, "note"), "hello \"world\"") == 0, "metadata too");
    st_free(&f);
}

// st_open reads the header alone; st_read_entry then reads each tensor from the file, F32 and
// widened from F16, the same numbers st_load gives. A file changed (a size unlike the one opened)
// or removed in between is refused in one line naming the file and the tensor.
static void test_deferred(void) {
    float a[6] = {1, -2, 3.5f, 0, 0.25f, -1e4f}, b[3] = {7, 8, 9}, out[6];
    StTensor t[2] = {{"alpha", shape2(2, 3), a}, {"beta", shape1(3), b}};
    Err e = {{0}};
    const char *p = tmp("deferred.safetensors"), *h = tmp("deferred-f16.safetensors");
    CHECK(st_save(p, t, 2, NULL, 0, &e) && st_save_as(h, t, 2, NULL, 0, ST_F16, &e), "save: %s", e.msg);
    StFile f, g;
    bool ok = st_open(&f, p, &e) && st_open(&g, h, &e);
    CHECK(ok, "open: %s", e.msg);
    if (!ok) return;
    const StEntry *ea = st_find(&f, "alpha"), *ha = st_find(&g, "alpha");
    CHECK(ea && !ea->data && ha && !ha->data, "st_open reads no numbers");
    CHECK(ea && st_read_entry(&f, ea, out, &e) && !memcmp(out, a, sizeof a), "F32 read in place: %s", e.msg);
    CHECK(ha && st_read_entry(&g, ha, out, &e) && !memcmp(out, a, sizeof a), "F16 widened in place: %s", e.msg);
    FILE *grow = fopen(p, "ab");  // the file changes after it was opened
    CHECK(grow && fputs("more", grow) >= 0 && fclose(grow) == 0, "append to %s", p);
    Err e2 = {{0}};
    CHECK(ea && !st_read_entry(&f, ea, out, &e2) && strstr(e2.msg, "the file changed while it was read") &&
              strstr(e2.msg, "tensor 'alpha'") && strstr(e2.msg, "deferred.safetensors"),
          "a changed file: '%s'", e2.msg);
    remove(h);
    Err e3 = {{0}};
    CHECK(ha && !st_read_entry(&g, ha, out, &e3) && strstr(e3.msg, "tensor 'alpha'") && strstr(e3.msg, "deferred-f16"),
          "a removed file: '%s'", e3.msg);
    st_free(&f), st_free(&g);
}

// The value of the 2-byte format nearest x, found by trying every finite value of it (ties:
// the even bit pattern): the reference st_f32_to_f16 and st_f32_to_bf16 must agree with.
static uint16_t nearest_by_search(float x, bool bf16) {
    uint16_t best = 0;
    double best_d = INFINITY;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        const float v = bf16 ? bf16_to_f32((uint16_t)h) : f16_to_f32((uint16_t)h);
        if (!isfinite(v)) continue;
        const double d = fabs((double)v - (double)x);
        if (d < best_d || (d == best_d && !(h & 1u)))
            best_d = d, best = (uint16_t)h;
    }
    return best;
}

// F16 and BF16 written: rounded to the nearest value, ties to even, read back as written.
static void test_two_byte_save(void) {
    Rng rng = {99};
    int wrong[2] = {0, 0};
    float probe[400];
    for (int i = 0; i < 400; i++) {  // magnitudes from 2^-26 (below the smallest half) to 2^16
        const double u = (double)(rng_u64(&rng) >> 11) / 9007199254740992.0;
        probe[i] = (float)((i & 1 ? -1 : 1) * exp2(-26.0 + 42.0 * u));
    }
    probe[0] = 65519.0f, probe[1] = 1.0f + 0x1p-11f, probe[2] = 0x1p-25f, probe[3] = 1.0f + 0x1p-8f;  // ties
    for (int i = 0; i < 400; i++)
        for (int b = 0; b < 2; b++) {
            const float x = probe[i];
            const bool bf16 = b == 1;
            if (!bf16 && fabsf(x) >= 65520.0f) continue;  // past the largest half: infinity, below
            const uint16_t got = bf16 ? st_f32_to_bf16(x) : st_f32_to_f16(x);
            const float gv = bf16 ? bf16_to_f32(got) : f16_to_f32(got);
            const float wv = bf16 ? bf16_to_f32(nearest_by_search(x, true)) : f16_to_f32(nearest_by_search(x, false));
            if (gv != wv && wrong[b]++ < 3)
                fprintf(stderr, "  %s(%.9g) = %.9g, the nearest is %.9g\n", bf16 ? "bf16" : "f16", x, gv, wv);
        }
    CHECK(!wrong[0] && !wrong[1], "the nearest value: %d F16 and %d BF16 roundings wrong", wrong[0], wrong[1]);
    CHECK(st_f32_to_f16(65520.0f) == 0x7C00 && st_f32_to_f16(-1e9f) == 0xFC00 && st_f32_to_f16(65504.0f) == 0x7BFF,
          "past 65504 rounds to infinity, 65504 stays");
    CHECK(st_f32_to_f16(1.0f + 0x1p-11f) == 0x3C00 && st_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3C02 &&
          st_f32_to_bf16(1.0f + 0x1p-8f) == 0x3F80 && st_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82,
          "a tie goes to the even value");
    CHECK(isnan(f16_to_f32(st_f32_to_f16(NAN))) && isnan(bf16_to_f32(st_f32_to_bf16(NAN))), "NaN stays NaN");
    float a[5] = {1.0f, -0.333333343f, 1e-6f, 70000.0f, 3.14159274f};
    StTensor t[1] = {{"w", shape1(5), a}};
    Err e = {{0}};
    for (int d = ST_F16; d <= ST_BF16; d++) {
        const char *p = tmp("two-byte.safetensors");
        CHECK(st_save_as(p, t, 1, NULL, 0, (StDtype)d, &e), "save as %s: %s", st_dtype_names[d], e.msg);
        StFile f;
        const bool ok = st_load(&f, p, &e);
        CHECK(ok, "load %s: %s", st_dtype_names[d], e.msg);
        if (!ok) continue;
        const StEntry *w = st_find(&f, "w");
        int same = 0;
        for (int i = 0; w && i < 5; i++)
            same += w->data[i] == (d == ST_F16 ? f16_to_f32(st_f32_to_f16(a[i])) : bf16_to_f32(st_f32_to_bf16(a[i])));
        CHECK(same == 5, "%s: the file holds each value rounded (%d of 5)", st_dtype_names[d], same);
        FILE *fp = fopen(p, "rb");
        unsigned char len8[8] = {0};
        const bool head = fp && fread(len8, 1, 8, fp) == 8;
        long header = 0;
        for (int i = 7; i >= 0; i--) header = header << 8 | len8[i];
        if (fp) fseek(fp, 0, SEEK_END);
        const long size = fp ? ftell(fp) : -1;
        if (fp) fclose(fp);
        CHECK(head && size == 8 + header + 10, "%s: 2 bytes a value (file %ld bytes, header %ld)", st_dtype_names[d],
              size, header);
        st_free(&f);
    }
}

// st_load reads each tensor straight from the file into its place; st_parse copies it from the
// file's bytes in memory. The two must hold the same tensors, in a file whose tensors lie in
// another order than its header names them (a model PyTorch saved), and in one written here
// with a gap before its first tensor.
static void same_as_parse(const char *path) {
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL, "open %s", path);
    if (!fp) return;
    fseek(fp, 0, SEEK_END);
    const long n = ftell(fp);
    unsigned char *bytes = malloc((size_t)n);
    rewind(fp);
    const bool read = bytes && fread(bytes, 1, (size_t)n, fp) == (size_t)n;
    fclose(fp);
    StFile a, b;
    Err e = {{0}};
    const bool ok = read && st_load(&a, path, &e) && st_parse(&b, bytes, (size_t)n, path, &e);
    CHECK(ok, "%s: %s", path, e.msg);
    if (ok) {
        int same = a.n_entries == b.n_entries;
        for (int i = 0; same && i < a.n_entries; i++)
            same = !strcmp(a.entries[i].name, b.entries[i].name) && shape_eq(&a.entries[i].shape, &b.entries[i].shape) &&
                   !memcmp(a.entries[i].data, b.entries[i].data, sizeof(float) * (size_t)shape_numel(&a.entries[i].shape));
        CHECK(same && a.n_entries > 0, "%s: st_load and st_parse hold different tensors", path);
        st_free(&a), st_free(&b);
    }
    free(bytes);
}

static void test_load_matches_parse(void) {
    same_as_parse(FIXTURES "/post_2x2.safetensors");
    float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const char *p = tmp("gap.safetensors");  // b first in the data, a after a gap of 4 bytes
    write_raw(p, "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[20,32]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", -1, data, 32);
    same_as_parse(p);
    StFile f;
    Err e = {{0}};
    if (st_load(&f, p, &e)) {
        const StEntry *a = st_find(&f, "a"), *b = st_find(&f, "b");
        CHECK(a && b && a->data[0] == 6 && a->data[2] == 8 && b->data[0] == 1 && b->data[3] == 4,
              "gap.safetensors: each tensor read from its own offsets");
        st_free(&f);
    }
}

static bool same_id(OptId a, OptId b) { return a.set == b.set && (!a.set || a.id == b.id); }

static bool same_config(const ModelConfig *a, const ModelConfig *b) {
    return a->d_model == b->d_model && a->nhead == b->nhead &&
           a->num_encoder_layers == b->num_encoder_layers &&
           a->num_decoder_layers == b->num_decoder_layers && a->dim_feedforward == b->dim_feedforward &&
           a->src_vocab_size == b->src_vocab_size && a->tgt_vocab_size == b->tgt_vocab_size &&
           a->max_positions == b->max_positions && a->norm_first == b->norm_first &&
           a->layer_norm_eps == b->layer_norm_eps && a->activation == b->activation &&
           a->layer_norm == b->layer_norm && same_id(a->bos_id, b->bos_id) &&
           same_id(a->eos_id, b->eos_id) && same_id(a->pad_id, b->pad_id) && same_id(a->unk_id, b->unk_id);
}

static ModelConfig tiny(void) {
    ModelConfig c = config_base();
    c.d_model = 32, c.nhead = 4, c.num_encoder_layers = 2, c.num_decoder_layers = 2;
    c.dim_feedforward = 48, c.src_vocab_size = 11, c.tgt_vocab_size = 13, c.max_positions = 20;
    return c;
}

// Re-saves model m leaving out tensor `drop` and with metadata key `key` set to `val`
// (`val` NULL removes it).
static void save_variant(const Model *m, const char *path, const char *drop, const char *key,
                         const char *val) {
    const char *src = tmp("base.safetensors");
    Err e;
    model_save(m, src, &e);
    StFile f;
    st_load(&f, src, &e);
    StTensor t[256];
    StMeta meta[32];
    int n = 0, nm = 0;
    for (int i = 0; i < f.n_entries; i++)
        if (!drop || strcmp(f.entries[i].name, drop) != 0)
            t[n++] = (StTensor){f.entries[i].name, f.entries[i].shape, f.entries[i].data};
    for (int i = 0; i < f.n_meta; i++)
        if (!key || strcmp(f.meta[i].name, key) != 0) meta[nm++] = f.meta[i];
    if (key && val) meta[nm++] = (StMeta){(char *)key, (char *)val};
    st_save(path, t, n, meta, nm, &e);
    st_free(&f);
}

// Opens the model on the standard program (with --config text, or NULL) and expects an error
// naming `where` (the file, or the program line) and the words given.
static void expect_model_error(const char *path, const char *config, const char *where, const char *w1,
                               const char *w2) {
    Session s;
    Err e = {{0}};
    SessionSpec spec = {.model_path = path, .config = config, .src_ids = "4,5", .tgt_ids = "2,4"};
    bool ok = session_open(&s, &spec, &e);
    CHECK(!ok, "%s should not open", path);
    if (ok) return session_close(&s);
    check_message(&e, where ? where : path, w1, w2);
}

static void test_models(void) {
    ModelConfig c = tiny();
    c.norm_first = true, c.activation = ACT_GELU, c.layer_norm = LN_ANNOTATED;
    c.layer_norm_eps = 1.23456784e-05f;  // a float that needs 9 digits to survive the round trip
    Model m, back;
    Lesson l;
    Err e = {{0}};
    CHECK(lesson_parse(&l, "pre-norm.md", session_builtin_lesson("pre-norm.md", NULL), &e), "%s", e.msg);
    CHECK(model_init_config(&m, &l.program, &c, 7, &e), "init: %s", e.msg);
    CHECK(m.n_params == 2 * 12 + 2 * 18 + 2 + 2 + 2 + 3, "the pre-norm program declares %d tensors", m.n_params);
    const char *p = tmp("model.safetensors");
    CHECK(model_save(&m, p, &e), "save: %s", e.msg);
    bool ok = model_load(&back, p, &l.program, NULL, &e);
    CHECK(ok, "load: %s", e.msg);
    if (ok) {
        CHECK(same_config(&back.cfg, &m.cfg), "config survives a round trip");
        const StEntry *w = model_weight(&back, "transformer.decoder.layers.1.multihead_attn.in_proj_weight");
        const StEntry *w0 = model_weight(&m, "transformer.decoder.layers.1.multihead_attn.in_proj_weight");
        CHECK(w && w0 && memcmp(w->data, w0->data, sizeof(float) * 3 * 32 * 32) == 0, "weights too");
        CHECK(back.note[0] == '\0', "nothing to note: %s", back.note);
        model_free(&back);
    }
    p = tmp("wide.safetensors");
    save_variant(&m, p, NULL, "d_model", "64");
    expect_model_error(p, NULL, NULL, "is [11 x 32] in the file", "declares it [11 x 64]");
    p = tmp("missing.safetensors");
    save_variant(&m, p, "transformer.decoder.layers.1.norm3.weight", NULL, NULL);
    expect_model_error(p, NULL, NULL, "missing tensor 'transformer.decoder.layers.1.norm3.weight'", "pre-norm.md:");
    p = tmp("nhead5.safetensors");
    save_variant(&m, p, NULL, "nhead", "5");
    expect_model_error(p, NULL, "pre-norm.md:", "heads=5 must divide the 32 columns", NULL);
    p = tmp("nohead.safetensors");
    save_variant(&m, p, NULL, "nhead", NULL);
    expect_model_error(p, NULL, "pre-norm.md:", "'nhead' is not set", "--config nhead=");
    Session s;
    SessionSpec four = {.model_path = p, .config = "nhead=4", .src_ids = "4,5", .tgt_ids = "2,4"};
    ok = session_open(&s, &four, &e);
    CHECK(ok && s.model.cfg.nhead == 4, "--config supplies what the metadata lacks: %s", e.msg);
    if (ok) session_close(&s);
    expect_model_error(tmp("model.safetensors"), "nhead=8", NULL, "nhead is 8 in --config, but 4 in the metadata of", NULL);
    p = tmp("layers.safetensors");  // one layer less in the metadata: the file's layer 1 is noted
    save_variant(&m, p, NULL, "num_encoder_layers", "1");
    ok = model_load(&back, p, &l.program, NULL, &e);
    CHECK(ok && back.cfg.num_encoder_layers == 1 && strstr(back.note, "transformer.encoder.layers.1.") &&
              strstr(back.note, "not declared by the program"), "extra tensors noted: %s %s", e.msg, ok ? back.note : "");
    if (ok) model_free(&back);
    p = tmp("normfirst.safetensors");
    save_variant(&m, p, NULL, "norm_first", "yes");
    expect_model_error(p, NULL, NULL, "norm_first", "\"false\" or \"true\"");
    p = tmp("vocab.safetensors");
    save_variant(&m, p, NULL, "src_tokens", "[\"a\", \"b\"]");
    expect_model_error(p, NULL, NULL, "src_tokens holds 2 tokens", "vocabulary size is 11");
    p = tmp("bos.safetensors");
    save_variant(&m, p, NULL, "bos_id", "99");
    expect_model_error(p, NULL, NULL, "bos_id 99", "outside the vocabulary");
    p = tmp("unused.safetensors");  // a name the program never reads is noted, not refused
    save_variant(&m, p, NULL, "num_classes", "3");
    ok = model_load(&back, p, &l.program, NULL, &e);
    CHECK(ok && strstr(back.note, "num_classes") && strstr(back.note, "not used"), "unused name noted: %s",
          ok ? back.note : e.msg);
    if (ok) model_free(&back);
    p = tmp("noname.safetensors");  // an empty metadata key names nothing: it is no configuration item
    save_variant(&m, p, NULL, "", "4");
    StFile nf;
    Conf nc = {0};
    ok = st_load(&nf, p, &e) && conf_from_meta(&nc, &nf, p, &e);
    const bool skipped = ok && !conf_find(&nc, "");
    CHECK(skipped, "an empty metadata key is skipped: %s", e.msg);
    conf_free(&nc);
    st_free(&nf);
    if (skipped) {  // (kept as a name, the search for it in the program's text never ended)
        ok = model_load(&back, p, &l.program, NULL, &e);
        CHECK(ok, "a file with an empty metadata key loads: %s", e.msg);
        if (ok) model_free(&back);
    }
    model_free(&m);
    lesson_free(&l);
}

// Appends to a growing text (aborts when memory runs out: this is a test).
static void append(char **text, size_t *len, size_t *cap, const char *fmt, int a, int b) {
    char piece[256];
    const size_t n = (size_t)snprintf(piece, sizeof piece, fmt, a, b);
    if (*len + n + 1 > *cap && !(*text = realloc(*text, *cap = 2 * (*len + n + 1)))) abort();
    memcpy(*text + *len, piece, n + 1);
    *len += n;
}

// Loads a header (no tensor data) as the model of the standard lesson, expecting failure.
static void load_header(const Lesson *l, const char *header, size_t len, Err *e) {
    unsigned char *bytes = malloc(len + 8);
    if (!bytes) abort();
    for (int i = 0; i < 8; i++) bytes[i] = (unsigned char)((unsigned long long)len >> (8 * i));
    memcpy(bytes + 8, header, len);
    StFile f;
    Model m;
    const bool ok = st_parse(&f, bytes, len + 8, "big.safetensors", e) &&
                    model_from_file(&m, &f, "big.safetensors", &l->program, NULL, e);
    free(bytes);
    CHECK(!ok, "a header of %zu bytes loads", len);
    if (ok) model_free(&m);
}

static void too_slow(int sig) {
    (void)sig;
    static const char msg[] = "test_formats: FAILED: a large header took more than 30 s of CPU to load\n";
    const ssize_t r = write(2, msg, sizeof msg - 1);
    _exit(r < 0 ? 2 : 1);
}

// Large headers load in time that grows with their size. Counting the encoder layers of a file
// with 250000 other tensors looked each name up among all of them, layer after layer (a minute
// of CPU; st_find now searches the sorted names), and each of 5000 numbers in the metadata was
// looked for among the ones before it (now a configuration holds at most 4096 names).
static void test_large_headers(void) {
    Lesson l;
    Err e = {{0}};
    const bool parsed = lesson_parse(&l, "forward-pass.md", session_builtin_lesson("forward-pass.md", NULL), &e);
    CHECK(parsed, "%s", e.msg);
    if (!parsed) return;
    size_t len = 0, cap = 0;
    char *h = NULL;
    append(&h, &len, &cap, "{\"__metadata__\":{\"d_model\":\"1\",\"nhead\":\"1\",\"dim_feedforward\":\"1\","
           "\"src_vocab_size\":\"1\",\"tgt_vocab_size\":\"1\",\"max_positions\":\"1\",\"num_decoder_layers\":\"1\"}", 0, 0);
    for (int k = 0; k < 250000; k++)  // first in the data section, the first read in order
        append(&h, &len, &cap, ",\"transformer.encoder.layers.x%d\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}", k, 0);
    for (int k = 0; k < 4096; k++)
        append(&h, &len, &cap, ",\"transformer.encoder.layers.%d.norm1.weight\":{\"dtype\":\"F32\",\"shape\":[0],"
               "\"data_offsets\":[0,0]}", k, 0);
    append(&h, &len, &cap, "}", 0, 0);
    signal(SIGVTALRM, too_slow);
    setitimer(ITIMER_VIRTUAL, &(struct itimerval){.it_value = {30, 0}}, NULL);
    load_header(&l, h, len, &e);
    CHECK(strstr(e.msg, "more than 20000 tensors declared"), "4096 layers counted, then too many tensors: %s", e.msg);
    len = 0;
    append(&h, &len, &cap, "{\"__metadata__\":{\"k0\":\"0\"", 0, 0);
    for (int k = 1; k < 5000; k++) append(&h, &len, &cap, ",\"k%d\":\"%d\"", k, k);
    append(&h, &len, &cap, "}}", 0, 0);
    load_header(&l, h, len, &e);
    setitimer(ITIMER_VIRTUAL, &(struct itimerval){{0, 0}, {0, 0}}, NULL);
    CHECK(strstr(e.msg, "the metadata of big.safetensors: more than 4096 configuration names"), "%s", e.msg);
    free(h);
    lesson_free(&l);
}

int main(void) {
    if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
    test_bad_safetensors();
    test_roundtrip();
    test_deferred();
    test_two_byte_save();
    test_load_matches_parse();
    test_models();
    test_large_headers();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_finish("test_formats");
}
