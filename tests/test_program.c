// test_program.c: the program language (parse errors, expansion, stage ids, token axes) and
// the interpreter (stepping, rewinding, re-running after new input, greedy growth).
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "rows.h"
#include "kernels.h"
#include "ref.h"
#include "session.h"

static Model model;  // d_model 16, 2 heads, 2+2 layers, vocab 10 / 12

static const float src_ids[5] = {4, 5, 6, 7, 8}, tgt_ids[4] = {2, 9, 5, 4};

// Parses and expands `text`; expects failure with every fragment in the message.
static void expect_error(const char *text, const char *w1, const char *w2) {
    Program p;
    Err e = {{0}};
    bool ok = program_parse_text(&p, "t.sfp", text, &e);
    if (ok) {
        RunSpec spec = {src_ids, 5, tgt_ids, 4, 4};
        Interp *it = interp_new(&p, &model, &spec, &e);
        ok = it != NULL;
        interp_free(it);
        program_free(&p);
    }
    CHECK(!ok, "should fail: %s", text);
    CHECK(strstr(e.msg, w1) != NULL, "message mentions '%s': %s", w1, e.msg);
    if (w2) CHECK(strstr(e.msg, w2) != NULL, "message mentions '%s': %s", w2, e.msg);
}

static void test_errors(void) {
    expect_error("input src\nx = embedding(src, @src_tok_emb.embedding.weight)\ny = matmull(x, x)\n",
                 "t.sfp:3:", "unknown op 'matmull'");
    expect_error("input src\nx = embedding(src, @src_tok_emb.embedding.weight)\ny = softmax(scroes)\n",
                 "t.sfp:3:", "undefined tensor 'scroes'");
    expect_error("input src\ninput tgt\na = embedding(src, @src_tok_emb.embedding.weight)\n"
                 "b = embedding(tgt, @tgt_tok_emb.embedding.weight)\nc = add(a, b)\n",
                 "t.sfp:5: add", "a is [5 x 16], b is [4 x 16]");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight)\n"
                 "b = linear(a, @generator.weight, @generator.bias)\nc = linear(b, @generator.weight)\n",
                 "t.sfp:4: linear", "b is [5 x 12], generator.weight is [12 x 16]");
    expect_error("input src\na = embedding(src, @no.such.weight)\n", "t.sfp:2:", "'no.such.weight' is not declared");
    expect_error("block encoder\ninput src\n", "t.sfp:1:", "no matching 'end'");
    expect_error("end\n", "t.sfp:1:", "'end' without");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight, colour=3)\n",
                 "t.sfp:2:", "no attribute 'colour'");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight)\nb = scale(a, by=1/sqrt(dk))\n",
                 "t.sfp:3:", "'dk' is not set");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight)\nb = softmax(a)\nb = softmax(a)\n",
                 "t.sfp:4:", "already defined at line 3");
    expect_error("def f(x)\ny = softmax(x)\nend\ninput src\na = embedding(src, @src_tok_emb.embedding.weight)\nb = f(a)\n",
                 "t.sfp:1:", "ended without 'return'");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight)\nb = softmax(transpose(a))\n",
                 "t.sfp:3:", "transpose(...) may only be");
    expect_error("block x\ndecode tgt from next\nend\nend\n", "t.sfp:2:", "top level");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight) extra\n", "t.sfp:2:", "expected");
    expect_error("input src\na = split_heads(src, heads=3)\n", "t.sfp:2: split_heads", "2 dimensions");
    // Inputs the interpreter would never feed, and a decode loop over a name not declared.
    expect_error("input src\ninput tgt\ninput extra\n", "t.sfp:3:", "input 'extra'");
    expect_error("input src\ninput src\n", "t.sfp:2:", "declared twice");
    expect_error("input src\ninput tgt\ndecode tbt from next\n  next = softmax(src)\nend\n", "t.sfp:3:",
                 "no input 'tbt'");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight)\n"
                 "b = linear(a, @generator.weight, chunk=0, chunks=12)\nc = split_heads(b, heads=1)\n"
                 "d = linear(a, @generator.weight, chunk=0, chunks=1e10)\n",
                 "t.sfp:5:", "chunks=1e+10 must be a whole number");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight, scale=1e39)\n", "t.sfp:2:",
                 "not a usable number");
    expect_error("input src\nan_extremely_long_tensor_name_of_more_than_48_chars = softmax(src)\n", "t.sfp:2:",
                 "longer than 47");
    expect_error("input src\nfor a_loop_variable_named_at_very_great_length_indeed in 2\nend\n", "t.sfp:2:",
                 "longer than 47");
    expect_error("input src\na = embedding(src, @src_tok_emb.embedding.weight)\nb = split_heads(a, heads=16)\n"
                 "c = merge_heads(b)\nd = positional_table(positions=0, width=4)\n", "t.sfp:5:", "positions >= 1");
    // 300 nested brackets: a message, not a blown stack.
    char deep[1024] = "input src\na = embedding(src, @src_tok_emb.embedding.weight, scale=";
    for (int i = 0; i < 300; i++) strcat(deep, "(");
    strcat(deep, "1");
    for (int i = 0; i < 300; i++) strcat(deep, ")");
    strcat(deep, ")\n");
    expect_error(deep, "t.sfp:2:", "nested more than 200 deep");
}

// An unknown op's message lists, on its one line, the ops there are and the program's defs.
static void test_unknown_op(void) {
    static const char *const want[] = {"t.sfp:9: unknown op 'atention'", "the ops are embedding, add_positions, linear",
                                       "softmax", "positional_table", "mean_pool",
                                       "; this program's defs are attention, feed_forward"};
    const char *text = "def attention(x)\nw = softmax(x)\nreturn w\nend\ndef feed_forward(x)\nr = relu(x)\n"
                       "return r\nend\ny = atention(x)\n";
    Program p = {0};
    Err e = {{0}};
    RunSpec spec = {src_ids, 5, tgt_ids, 4, 4};
    Interp *it = program_parse_text(&p, "t.sfp", text, &e) ? interp_new(&p, &model, &spec, &e) : NULL;
    CHECK(!it && !strchr(e.msg, '\n'), "an unknown op is one line: %s", e.msg);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK(strstr(e.msg, want[i]) != NULL, "the message names '%s': %s", want[i], e.msg);
    interp_free(it);
    if (p.file) program_free(&p);
    expect_error("input src\ny = sofmax(src)\n", "t.sfp:2: unknown op 'sofmax'", "this program has no defs");
}

// Many names bound to one tensor (the environment grows while aliasing an entry of itself).
static void test_aliases(void) {
    char text[4096] = "input src\na = embedding(src, @src_tok_emb.embedding.weight)\n";
    for (int i = 0; i < 100; i++) {
        char line[32];
        snprintf(line, sizeof line, "n%d = %s\n", i, i ? "n0" : "a");
        strcat(text, line);
    }
    strcat(text, "p = softmax(n99)\n");
    Program p;
    Err e = {{0}};
    bool ok = program_parse_text(&p, "alias", text, &e);
    RunSpec spec = {src_ids, 5, NULL, 0, 0};
    Interp *it = ok ? interp_new(&p, &model, &spec, &e) : NULL;
    CHECK(it && interp_run(it, &e), "100 aliases: %s", e.msg);
    const int k = it ? interp_find(it, "p") : -1;
    CHECK(k >= 0 && interp_stage(it, k)->in[0].kind == REF_STAGE && interp_stage(it, k)->in[0].index == 0,
          "the last alias still names the embedding");
    interp_free(it);
    if (ok) program_free(&p);
}

static void too_slow(int sig) {
    (void)sig;
    static const char msg[] = "test_program: FAILED: declaring 19996 tensors took more than 30 s of CPU\n";
    const ssize_t r = write(2, msg, sizeof msg - 1);
    _exit(r < 0 ? 2 : 1);
}

// 19996 tensors (near the most a program may declare), over the 125 passes a chain of 60 defaults
// takes to settle: each declaration used to be compared with every one before it (60 s of
// CPU); now they are found by a hash, in about a second.
static void test_many_declarations(void) {
    char text[4096] = "input src\n";
    for (int k = 0; k < 60; k++) snprintf(text + strlen(text), sizeof text - strlen(text), "default a%d = a%d\n", k, k + 1);
    strcat(text, "default a60 = 1\nfor i in 3999\n  for j in 5\n    param @w{i}_{j} [1] zeros\n  end\nend\n"
                 "param @twice [a0] zeros\nparam @twice [1] ones\nx = embedding(src, @w0_0)\n");
    Program p;
    Err e = {{0}};
    bool ok = program_parse_text(&p, "many", text, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return;
    ConfSpec cs = {0};
    conf_spec_add(&cs, "src_vocab_size=10", "the test", false);
    signal(SIGVTALRM, too_slow);
    setitimer(ITIMER_VIRTUAL, &(struct itimerval){.it_value = {30, 0}}, NULL);
    Model m;
    ok = model_init_random(&m, &p, &cs, 1, &e);
    setitimer(ITIMER_VIRTUAL, &(struct itimerval){{0, 0}, {0, 0}}, NULL);
    CHECK(ok && m.n_params == 19996 && model_weight(&m, "w3998_4") && model_weight(&m, "twice") &&
              model_weight(&m, "twice")->data[0] == 0.0f,
          "19995 tensors, and one declared twice alike: %s", e.msg);
    if (ok) model_free(&m);
    program_free(&p);
}

// A hand-written program checked against direct kernel calls.
static void test_small_program(void) {
    const char *text =
        "input src\n"
        "block enc\n"
        "  e = embedding(src, @src_tok_emb.embedding.weight, scale=2)\n"
        "  for i in 2\n"
        "    block l{i}\n"
        "      h = split_heads(e, heads=nhead * (i + 1))\n"
        "      s = matmul(h, transpose(h))\n"
        "      p = softmax(s)\n"
        "    end\n"
        "  end\n"
        "end\n"
        "output probs = p\n";
    Program p;
    Err e = {{0}};
    bool ok = program_parse_text(&p, "small", text, &e);
    CHECK(ok, "%s", e.msg);
    if (!ok) return;
    RunSpec spec = {src_ids, 5, NULL, 0, 0};
    Interp *it = interp_new(&p, &model, &spec, &e);
    CHECK(it && interp_run(it, &e), "%s", e.msg);
    if (!it) return program_free(&p);
    CHECK(interp_n_stages(it) == 7, "7 stages, got %d", interp_n_stages(it));
    int k = interp_find(it, "enc.l1.p");
    CHECK(k == 6, "enc.l1.p is stage 6 (got %d)", k);
    const StEntry *tab = model_weight(&model, "src_tok_emb.embedding.weight");
    float emb[5 * 16], heads[5 * 16], scores[4 * 5 * 5], probs[4 * 5 * 5];
    ref_embedding(emb, src_ids, tab->data, 5, 16, 2.0f);
    ref_split_heads(heads, emb, 5, 4, 4);
    ref_matmul(scores, heads, heads, NULL, 4, 5, 5, 4, true);
    ref_softmax(probs, scores, 20, 5, false);
    CHECK(k >= 0 && interp_stage(it, k)->shape.dim[0] == 4, "loop variable reaches attributes");
    if (k >= 0) CHECK_CLOSE(interp_output(it, k), probs, 100, 1e-5, "program vs naive kernels");
    int n_out;
    const ProgramOutput *o = interp_outputs(it, &n_out);
    CHECK(n_out == 1 && o[0].stage == 6 && !strcmp(o[0].name, "probs"), "output names a stage");
    interp_free(it);
    program_free(&p);
}

static const Lesson *standard(Lesson *l) {
    const char *path;
    Err e = {{0}};
    bool ok = lesson_parse(l, "forward-pass.md", session_builtin_lesson("forward-pass.md", &path), &e);
    CHECK(ok, "%s", e.msg);
    return ok ? l : NULL;
}

static void test_standard_ids(const Program *p) {
    RunSpec spec = {src_ids, 5, tgt_ids, 4, 0};
    Err e = {{0}};
    Interp *it = interp_new(p, &model, &spec, &e);
    CHECK(it != NULL, "%s", e.msg);
    if (!it) return;
    static const struct { const char *id; Shape s; } want[] = {
        {"encoder.embed", {2, {5, 16}}},
        {"encoder.layers.1.self_attn.scores", {3, {2, 5, 5}}},
        {"encoder.layers.0.self_attn.weights", {3, {2, 5, 5}}},
        {"encoder.norm", {2, {5, 16}}},
        {"decoder.layers.0.self_attn.masked", {3, {2, 4, 4}}},
        {"decoder.layers.1.cross_attn.weights", {3, {2, 4, 5}}},
        {"decoder.layers.1.norm3", {2, {4, 16}}},
        {"generator.logits", {2, {4, 12}}},
        {"generator.next", {1, {4}}}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int k = interp_find(it, want[i].id);
        CHECK(k >= 0 && shape_eq(&interp_stage(it, k)->shape, &want[i].s), "stage %s", want[i].id);
    }
    // Token axes: which tokens label rows and columns.
    const Stage *cross = interp_stage(it, interp_find(it, "decoder.layers.1.cross_attn.weights"));
    CHECK(cross->axes.slot[0] == AXIS_HEADS && cross->axes.slot[1] == 1 && cross->axes.slot[2] == 0,
          "cross-attention: heads, target rows, source columns");
    const Stage *ff = interp_stage(it, interp_find(it, "encoder.layers.0.linear1"));
    CHECK(ff->axes.slot[0] == 0 && ff->axes.slot[1] == AXIS_NONE, "linear1: source rows");
    StageWhere where = stage_where(cross);
    CHECK(where.part == PART_DECODER && where.has_layer && where.layer == 1 && !strcmp(where.sublayer, "cross_attn") &&
          !strcmp(where.name, "weights"), "where: decoder layer 1 cross_attn weights");
    where = stage_where(ff);
    CHECK(where.part == PART_ENCODER && where.layer == 0 && !where.sublayer[0] && !strcmp(where.name, "linear1"),
          "where: encoder layer 0 linear1");
    CHECK(interp_run(it, &e), "%s", e.msg);
    // Causal mask: the decoder's self-attention gives the future exactly zero weight.
    const int k = interp_find(it, "decoder.layers.0.self_attn.weights");
    const float *w = interp_output(it, k);
    bool causal = true;
    for (int h = 0; h < 2; h++)
        for (int q = 0; q < 4; q++)
            for (int kk = 0; kk < 4; kk++) causal = causal && (kk <= q || w[(h * 4 + q) * 4 + kk] == 0.0f);
    CHECK(causal, "future keys get zero weight");
    interp_free(it);
}

static void test_stepping(const Program *p) {
    RunSpec spec = {src_ids, 5, tgt_ids, 4, 0};
    Err e = {{0}};
    Interp *it = interp_new(p, &model, &spec, &e);
    if (!it) return;
    CHECK(interp_run_to(it, "encoder.layers.0.norm1", &e), "%s", e.msg);
    const int at = interp_find(it, "encoder.layers.0.norm1");
    CHECK(interp_n_done(it) == at + 1, "run_to stops right after the stage");
    CHECK(!interp_run_to(it, "encoder.nope", &e) && strstr(e.msg, "no stage 'encoder.nope'"), "%s", e.msg);
    interp_rewind(it, 0);
    interp_run(it, &e);
    const int n = interp_n_stages(it), lg = interp_find(it, "generator.logits");
    float *first = malloc(sizeof(float) * 4 * 12);
    memcpy(first, interp_output(it, lg), sizeof(float) * 4 * 12);
    interp_rewind(it, 10);
    CHECK(interp_n_done(it) == 10 && interp_output(it, 10) == NULL, "rewind forgets later outputs");
    CHECK(interp_run(it, &e) && interp_n_done(it) == n, "runs again to the end");
    CHECK(memcmp(first, interp_output(it, lg), sizeof(float) * 48) == 0, "same logits after rewind");
    // A new target: the encoder's outputs stay, everything from the decoder on re-runs.
    const float *memory_before = interp_output(it, interp_find(it, "encoder.norm"));
    const float tgt2[3] = {2, 7, 7};
    RunSpec spec2 = {src_ids, 5, tgt2, 3, 0};
    int first_affected = -1;
    CHECK(interp_set_inputs(it, &spec2, &first_affected, &e), "%s", e.msg);
    CHECK(first_affected == interp_find(it, "decoder.embed"), "first affected is decoder.embed (%d)", first_affected);
    CHECK(interp_output(it, interp_find(it, "encoder.norm")) == memory_before, "encoder kept");
    CHECK(interp_n_done(it) == first_affected, "decoder stages forgotten");
    CHECK(interp_run(it, &e), "%s", e.msg);
    CHECK(interp_stage(it, interp_find(it, "generator.logits"))->shape.dim[0] == 3, "re-expanded for 3 tokens");
    // A bad input changes nothing.
    const float bad[2] = {4, 99};
    RunSpec spec3 = {bad, 2, tgt2, 3, 0};
    CHECK(!interp_set_inputs(it, &spec3, &first_affected, &e) && strstr(e.msg, "source id 99"), "%s", e.msg);
    CHECK(interp_n_done(it) == interp_n_stages(it), "the finished pass is untouched");
    free(first);
    interp_free(it);
}

static void test_greedy(const Program *p) {
    RunSpec spec = {src_ids, 5, NULL, 0, 3};
    Err e = {{0}};
    Interp *it = interp_new(p, &model, &spec, &e);
    CHECK(it && interp_run(it, &e), "%s", e.msg);
    if (!it) return;
    int n;
    StopReason why;
    const float *ids = interp_generated(it, &n, &why);
    CHECK((why == STOP_MAX_LEN && n == 3) || why == STOP_EOS, "stops at max_len 3 or eos");
    for (int k = 0; k < n; k++) {
        char id[96];
        snprintf(id, sizeof id, "step.%d.decoder.layers.1.cross_attn.weights", k);
        int i = interp_find(it, id);
        CHECK(i >= 0 && interp_stage(it, i)->shape.dim[1] == k + 1, "%s has %d rows", id, k + 1);
        snprintf(id, sizeof id, "step.%d.generator.next", k);
        i = interp_find(it, id);
        CHECK(i >= 0 && interp_output(it, i)[k] == ids[k], "round %d appends its last argmax", k);
    }
    CHECK(interp_find(it, "encoder.norm") >= 0 && interp_find(it, "step.0.encoder.norm") < 0,
          "the encoder runs once, before the rounds");
    // A rejected input leaves the finished pass and what it generated as they were.
    const float kept[3] = {n > 0 ? ids[0] : 0, n > 1 ? ids[1] : 0, n > 2 ? ids[2] : 0};
    RunSpec none = {src_ids, 5, NULL, 0, 0};
    int first, n2;
    CHECK(!interp_set_inputs(it, &none, &first, &e) && strstr(e.msg, "at least 1"), "%s", e.msg);
    ids = interp_generated(it, &n2, &why);
    CHECK(n2 == n && !memcmp(ids, kept, sizeof(float) * (size_t)n), "generated tokens survive a rejected input");
    // Greedy to teacher forcing with the target as long as the greedy one: one plain pass again.
    const int T = interp_stage(it, interp_find(it, "step.0.decoder.embed"))->shape.dim[0] + n;
    RunSpec forced = {src_ids, 5, tgt_ids, T < 4 ? T : 4, 0};
    CHECK(interp_set_inputs(it, &forced, &first, &e) && interp_run(it, &e), "%s", e.msg);
    CHECK(interp_find(it, "step.0.decoder.embed") < 0 && interp_find(it, "decoder.layers.0.self_attn.weights") >= 0,
          "teacher forcing after greedy has no rounds");
    interp_free(it);
}

// Greedy rounds other than the running one and the one read last are evicted and recomputed
// when read: every stage must read back the very bits it had when it ran, in any order, and
// after a rewind into the middle of a round; and the trace holds far less than all rounds.
// A small random model that never says eos, so greedy runs every round asked for.
static bool never_ending(Model *m, const Program *p, int heads, int layers, int d_ff, uint64_t seed) {
    ModelConfig c = config_base();
    c.d_model = 32, c.nhead = heads, c.num_encoder_layers = c.num_decoder_layers = layers, c.dim_feedforward = d_ff;
    c.src_vocab_size = 10, c.tgt_vocab_size = 12, c.max_positions = 32, c.eos_id.set = false;
    Err e = {{0}};
    const bool ok = model_init_config(m, p, &c, seed, &e);
    CHECK(ok, "%s", e.msg);
    return ok;
}

static void test_greedy_eviction(const Program *p) {
    Model m;
    Err e = {{0}};
    if (!never_ending(&m, p, 2, 1, 64, 5)) return;
    RunSpec spec = {src_ids, 5, NULL, 0, 14};
    Interp *it = interp_new(p, &m, &spec, &e);
    float *ref[4096] = {0};
    size_t size[4096] = {0}, all = 0;
    int n = 0;
    StepStatus st;
    while (it && (st = interp_step(it, &e)) == STEP_RAN && n < 4096) {  // each output as it ran
        size[n] = (size_t)shape_numel(&interp_stage(it, n)->shape) * sizeof(float);
        ref[n] = malloc(size[n]);
        memcpy(ref[n], interp_output(it, n), size[n]);
        all += size[n++];
    }
    CHECK(it && interp_done(it) && n == interp_n_stages(it), "%s", e.msg);
    CHECK(it && interp_held_bytes(it) < all / 2, "held %zu bytes of %zu", it ? interp_held_bytes(it) : 0, all);
    int same = 0;
    for (int i = n - 1; i >= 0; i--) same += !memcmp(interp_output(it, i), ref[i], size[i]);
    for (int i = 0; i < n; i += 7) same += !memcmp(interp_output(it, i), ref[i], size[i]);
    CHECK(same == n + (n + 6) / 7, "%d of %d reads gave the bits the stage had when it ran", same, n + (n + 6) / 7);
    const int mid = it ? interp_find(it, "step.5.decoder.layers.0.cross_attn.weights") : -1;
    CHECK(mid > 0, "round 5 has a cross-attention");
    interp_rewind(it, mid);
    CHECK(interp_run(it, &e), "%s", e.msg);
    same = 0;
    for (int i = 0; i < n; i++) same += !memcmp(interp_output(it, i), ref[i], size[i]);
    CHECK(same == n, "after a rewind into round 5: %d of %d stages the same", same, n);
    for (int i = 0; i < n; i++) free(ref[i]);
    interp_free(it);
    model_free(&m);
}

// Whether stage i's output in b holds the same bits as in a.
static bool same_output(const Interp *a, const Interp *b, int i) {
    const size_t bytes = sizeof(float) * (size_t)shape_numel(&interp_stage(a, i)->shape);
    float *x = malloc(bytes);
    const float *y = x ? interp_output(a, i) : NULL;
    if (y) memcpy(x, y, bytes);
    const float *z = y ? interp_output(b, i) : NULL;
    const bool same = z && !memcmp(x, z, bytes);
    free(x);
    return same;
}

// The cached decoder computes each round's new position only, growing last round's buffers in
// place, yet every stage of every round holds the same bits as the plain decoder's: as each
// stage runs, after a reader has looked back at an earlier round mid-run (as the window does),
// and recomputed once the run is over. The products and projections did take the cached path
// after the first round. `new_rows`: the attention squares hold their new rows alone (ROWS_NEW,
// their readers take them so), else (a square read by another op too) a new row and column.
static void test_cached_decoder(const Program *p, bool new_rows) {
    Model m;
    Err e = {{0}};
    if (!never_ending(&m, p, 4, 2, 48, 7)) return;
    RunSpec plain = {src_ids, 5, NULL, 0, 20, 1, true}, cached = plain;
    cached.cached = true;
    Interp *a = interp_new(p, &m, &plain, &e), *b = a ? interp_new(p, &m, &cached, &e) : NULL;
    CHECK(a && b && interp_run(a, &e), "%s", e.msg);
    int ran = 0, same_as_run = 0, looked_back = 0;
    StepStatus s = STEP_FAILED;
    while (b && (s = interp_step(b, &e)) == STEP_RAN) {
        same_as_run += same_output(a, b, ran++);
        int k;
        if (ran == interp_n_stages(a) * 2 / 3 && sscanf(interp_stage(b, ran - 1)->id, "step.%d.", &k) == 1 && k > 3) {
            char id[64];  // a reader looks at an early round, then at the last one, mid-round
            snprintf(id, sizeof id, "step.%d.decoder.layers.1.self_attn.weights", 2);
            const int early = interp_find(b, id);
            snprintf(id, sizeof id, "step.%d.decoder.layers.1.self_attn.weights", k - 1);
            const int last = interp_find(b, id);
            looked_back = early >= 0 && last >= 0 && same_output(a, b, early) && same_output(a, b, last);
        }
    }
    CHECK(s == STEP_DONE, "%s", e.msg);
    CHECK(ran > 0 && same_as_run == ran, "%d of %d stages the same bits as they ran", same_as_run, ran);
    CHECK(looked_back, "an earlier round looked at mid-run: the same bits");
    const int n = a && b ? interp_n_stages(a) : 0;
    CHECK(b && n == interp_n_stages(b), "the same stages");
    int same = 0, counts[ROWS_KIND_COUNT] = {0}, linear_cached = 0, linear_later = 0;
    for (int i = 0; i < n; i++) {
        const Stage *st = interp_stage(a, i);
        same += same_output(a, b, i);
        counts[interp_stage_rows(b, i)]++;
        if (st->op == OP_LINEAR && strncmp(st->id, "step.0.", 7) && !strncmp(st->id, "step.", 5)) {
            linear_later++;
            linear_cached += interp_stage_rows(b, i) == ROWS_GROWN || interp_stage_rows(b, i) == ROWS_SAME;
        }
    }
    CHECK(same == n, "%d of %d stages the same bits cached and plain, recomputed after the run", same, n);
    CHECK(linear_later > 0 && linear_cached == linear_later, "%d of %d linears after round 0 cached", linear_cached,
          linear_later);
    const int squares = counts[ROWS_SQUARE] + counts[ROWS_SQUARE0];
    const int alone = counts[ROWS_NEW_SQUARE] + counts[ROWS_NEW_HIDDEN] + counts[ROWS_NEW0];
    CHECK(new_rows ? counts[ROWS_NEW_SQUARE] > 0 && counts[ROWS_NEW_HIDDEN] > 0 && counts[ROWS_NEW0] > 0 && squares == 0
                   : counts[ROWS_SQUARE] > 0 && counts[ROWS_SQUARE0] > 0 && alone == 0,
          "squares %d, softmaxed squares %d; new rows alone: squares %d, masked %d, softmaxed %d", counts[ROWS_SQUARE],
          counts[ROWS_SQUARE0], counts[ROWS_NEW_SQUARE], counts[ROWS_NEW_HIDDEN], counts[ROWS_NEW0]);
    CHECK(counts[ROWS_SAME] > 0 && counts[ROWS_NEW] > 0, "copied %d; heads of new rows alone %d", counts[ROWS_SAME],
          counts[ROWS_NEW]);
    int na, nb;
    StopReason wa, wb;
    const float *ga = a ? interp_generated(a, &na, &wa) : NULL, *gb = b ? interp_generated(b, &nb, &wb) : NULL;
    CHECK(ga && gb && na == 20 && nb == 20 && !memcmp(ga, gb, sizeof(float) * 20), "the same 20 tokens");
    interp_free(a), interp_free(b);
    model_free(&m);
}

// The forward pass's lesson with its attention scores read by one more stage, an add no square
// path knows: the scores are kept whole (a new row and column each round), the same bits.
static void cached_square_read_twice(void) {
    const char *path, *text = session_builtin_lesson("forward-pass.md", &path);
    const char *at = text ? strstr(text, "  weights = softmax(masked)") : NULL;
    CHECK(at != NULL, "forward-pass.md computes weights = softmax(masked)");
    if (!at) return;
    const char extra[] = "  doubled = add(scores, scores)\n";
    char *changed = malloc(strlen(text) + sizeof extra);
    if (!changed) return;
    memcpy(changed, text, (size_t)(at - text));
    strcpy(changed + (at - text), extra);
    strcat(changed, at);
    Lesson l;
    Err e = {{0}};
    const bool ok = lesson_parse(&l, "forward-pass.md", changed, &e);
    CHECK(ok, "%s", e.msg);
    free(changed);
    if (!ok) return;
    test_cached_decoder(&l.program, false);
    lesson_free(&l);
}

int main(void) {
    ModelConfig c = config_base();
    c.d_model = 16, c.nhead = 2, c.num_encoder_layers = 2, c.num_decoder_layers = 2;
    c.dim_feedforward = 24, c.src_vocab_size = 10, c.tgt_vocab_size = 12, c.max_positions = 16;
    Err e = {{0}};
    Lesson l;
    if (!standard(&l)) return check_finish("test_program");
    if (!model_init_config(&model, &l.program, &c, 3, &e)) return fprintf(stderr, "%s\n", e.msg), 1;
    test_errors();
    test_unknown_op();
    test_aliases();
    test_small_program();
    test_many_declarations();
    {
        test_standard_ids(&l.program);
        test_stepping(&l.program);
        test_greedy(&l.program);
        test_greedy_eviction(&l.program);
        test_cached_decoder(&l.program, true);
        lesson_free(&l);
        cached_square_read_twice();
    }
    model_free(&model);
    return check_finish("test_program");
}
