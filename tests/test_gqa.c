// test_gqa.c: grouped-query and multi-query attention written with repeat, concat and matmul's
// broadcasting, in programs. Against PyTorch (tests/fixtures/ops/attention*.safetensors, made by
// scripts/make_op_fixtures.py): every intermediate tensor, the loss and every weight's gradient.
// The roles: how many key/value heads each attention's query heads share, and which one each
// reads. The cached decoder: the same bits as the plain one in every stage of every round. And
// the messages for shapes that do not fit, naming the line.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "same_bits.h"
#include "grad_pass.h"
#include "rows.h"
#include "session.h"

static const char *write_lesson(const char *name, const char *block, const char *program) {
    static char path[2][96];
    static int k;
    char *p = path[k++ % 2];
    snprintf(p, sizeof path[0], "/tmp/stepformer-gqa-%s-%d.md", name, (int)getpid());
    FILE *f = fopen(p, "w");
    if (!f) return NULL;
    fprintf(f, "# %s\n\n```lesson\n%s```\n\nProse.\n\n```program\n%s```\n", name, block, program);
    fclose(f);
    return p;
}

// The fixture's model: 4 query heads; grouped-query keys and values of 2 heads, repeated; a
// multi-query key and value of 1 head, broadcast; both outputs side by side, mixed, scored.
static const char *const attention_program =
    "input src\n"
    "default d_k = d_model / nhead\n"
    "param @emb [src_vocab_size, d_model] xavier\n"
    "param @wq [d_model, d_model] xavier\n"
    "param @wk [kv_heads*d_k, d_model] xavier\n"
    "param @wv [kv_heads*d_k, d_model] xavier\n"
    "param @wk1 [d_k, d_model] xavier\n"
    "param @wv1 [d_k, d_model] xavier\n"
    "param @wmix [d_model, 2*d_model] xavier\n"
    "def attend(q, k, v, ids)\n"
    "  scores = matmul(q, transpose(k))\n"
    "  scaled = scale(scores, by=1/sqrt(d_k))\n"
    "  masked = mask(scaled, ids, causal=1)\n"
    "  weights = softmax(masked)\n"
    "  context = matmul(weights, v)\n"
    "  return context\n"
    "end\n"
    "x = embedding(src, @emb, scale=1)\n"
    "q_all = linear(x, @wq)\n"
    "q = split_heads(q_all, heads=nhead)\n"
    "block gqa\n"
    "  k_all = linear(x, @wk)\n"
    "  v_all = linear(x, @wv)\n"
    "  k = split_heads(k_all, heads=kv_heads)\n"
    "  v = split_heads(v_all, heads=kv_heads)\n"
    "  k_rep = repeat(k, times=nhead/kv_heads, axis=0)\n"
    "  v_rep = repeat(v, times=nhead/kv_heads, axis=0)\n"
    "  grouped = attend(q, k_rep, v_rep, src)\n"
    "end\n"
    "block mqa\n"
    "  k_all = linear(x, @wk1)\n"
    "  v_all = linear(x, @wv1)\n"
    "  k = split_heads(k_all, heads=1)\n"
    "  v = split_heads(v_all, heads=1)\n"
    "  shared = attend(q, k, v, src)\n"
    "end\n"
    "g = merge_heads(grouped)\n"
    "m = merge_heads(shared)\n"
    "joined = concat(g, m, axis=-1)\n"
    "mixed = linear(joined, @wmix)\n"
    "logits = linear(mixed, @emb)\n"
    "output logits = logits\n";

static void ids_string(const StEntry *en, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; en && i < en->shape.dim[0] && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%d", i ? "," : "", (int)en->data[i]);
}

// Each tensor of the case that names a stage holds what that stage computed.
static int compare_stages(const Session *s, const StFile *f) {
    int compared = 0;
    for (int j = 0; j < f->n_entries; j++) {
        const StEntry *want = &f->entries[j];
        const int i = interp_find(s->it, want->name);
        if (i < 0) continue;
        char a[64], b[64];
        const Stage *st = interp_stage(s->it, i);
        CHECK(shape_eq(&st->shape, &want->shape), "%s is %s here, %s in PyTorch", want->name,
              shape_str(&st->shape, a, sizeof a), shape_str(&want->shape, b, sizeof b));
        if (shape_eq(&st->shape, &want->shape))
            CHECK_CLOSE(interp_output(s->it, i), want->data, shape_numel(&want->shape), 1e-5, want->name);
        compared++;
    }
    return compared;
}

// The loss's gradient for every weight, as autograd gives it.
static void compare_grads(Session *s, const StFile *f) {
    Err e = {{0}};
    LossInfo li;
    const StEntry *labels = st_find(f, "labels"), *loss = st_find(f, "loss");
    Grads *g = grads_new(&s->model, &e);
    float *d = labels ? malloc(sizeof(float) * 4096) : NULL;
    bool ok = g && d && loss && loss_target(s->it, &li, &e) && li.rows * li.V <= 4096 &&
              grad_pass(g, s->it, labels->data, labels->shape.dim[0], d, &li, &e);
    CHECK(ok, "the gradient pass: %s", e.msg);
    if (ok) {
        CHECK(fabs(li.loss - loss->data[0]) < 1e-5, "loss %.7f, PyTorch %.7f", li.loss, (double)loss->data[0]);
        int compared = 0;
        for (int w = 0; w < s->model.n_params; w++) {
            char key[300];
            snprintf(key, sizeof key, "grad.%s", s->model.params[w].name);
            const StEntry *want = st_find(f, key);
            CHECK(want != NULL, "PyTorch has %s", key);
            if (!want) continue;
            CHECK_CLOSE(grads_of(g, s->model.params[w].name), want->data, shape_numel(&want->shape), 2e-5, key);
            compared++;
        }
        CHECK(compared == 7, "%d weights' gradients compared", compared);
    }
    grads_free(g);
    free(d);
}

// How many key/value heads the attention whose softmax is `id` shares, and which each head reads.
static void check_sharing(const Session *s, const char *id, int kv, bool tiled, const int *reads, int H) {
    const int i = interp_find(s->it, id);
    CHECK(i >= 0, "%s exists", id);
    if (i < 0) return;
    const Stage *w = interp_stage(s->it, i);
    CHECK(w->role == ROLE_WEIGHTS && w->kv_heads == kv && w->kv_tiled == tiled, "%s: %d query heads share %d key/value "
          "heads%s (found %d%s)", id, H, kv, tiled ? ", tiled" : "", w->kv_heads, w->kv_tiled ? ", tiled" : "");
    for (int h = 0; h < H; h++)
        CHECK(stage_kv_head(w, h) == reads[h], "%s: query head %d reads key/value head %d, not %d", id, h, reads[h],
              stage_kv_head(w, h));
}

static void test_against_torch(void) {
    StFile f;
    Err e = {{0}};
    const bool loaded = st_load(&f, FIXTURES "/ops/attention.case.safetensors", &e);
    CHECK(loaded, "%s", e.msg);
    if (!loaded) return;
    char src[256];
    ids_string(st_find(&f, "src_ids"), src, sizeof src);
    const char *path = write_lesson("torch", "", attention_program);
    SessionSpec spec = {.lesson_path = path, .model_path = FIXTURES "/ops/attention.safetensors", .src_ids = src};
    Session s;
    const bool ok = path && session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "the grouped- and multi-query program on PyTorch's weights: %s", e.msg);
    if (ok) {
        const int n = compare_stages(&s, &f);
        CHECK(n == 9, "%d stages compared with PyTorch", n);
        static const int grouped[4] = {0, 0, 1, 1}, one[4] = {0, 0, 0, 0};
        check_sharing(&s, "gqa.weights", 2, false, grouped, 4);
        check_sharing(&s, "mqa.weights", 1, false, one, 4);
        const int sc = interp_find(s.it, "gqa.scores");
        CHECK(sc >= 0 && interp_stage(s.it, sc)->role == ROLE_SCORES && interp_stage(s.it, sc)->kv_heads == 2,
              "the scores know it too");
        compare_grads(&s, &f);
        session_close(&s);
    }
    if (path) remove(path);
    st_free(&f);
}

// A random-weight encoder-decoder whose decoder attends to itself with 2 key/value heads for 4
// query heads (repeated; tiled when `tiled`), and to the memory with 1 (broadcast); concat joins
// the two sublayers' outputs.
static const char *decoder_program(bool cached, bool tiled) {
    static char text[3000];
    snprintf(text, sizeof text,
             "input src\ninput tgt\n"
             "default d_k = d_model / nhead\n"
             "param @src_emb [src_vocab_size, d_model] xavier\n"
             "param @tgt_emb [tgt_vocab_size, d_model] xavier\n"
             "buffer @pe [max_positions, d_model] sinusoid\n"
             "param @wq [d_model, d_model] xavier\n"
             "param @wkv [2*kv_heads*d_k, d_model] xavier\n"
             "param @wq2 [d_model, d_model] xavier\n"
             "param @wkv1 [2*d_k, d_model] xavier\n"
             "param @wo [d_model, 2*d_model] xavier\n"
             "param @gen [tgt_vocab_size, d_model] xavier\n"
             "block encoder\n  e = embedding(src, @src_emb)\n  memory = add_positions(e, @pe)\nend\n"
             "output memory = memory\n"
             "decode tgt from next%s\n"
             "  block decoder\n"
             "    e = embedding(tgt, @tgt_emb)\n"
             "    x = add_positions(e, @pe)\n"
             "    block self_attn\n"
             "      q_all = linear(x, @wq)\n"
             "      q = split_heads(q_all, heads=nhead)\n"
             "      k_all = linear(x, @wkv, chunk=0, chunks=2)\n"
             "      v_all = linear(x, @wkv, chunk=1, chunks=2)\n"
             "      k = split_heads(k_all, heads=kv_heads)\n"
             "      v = split_heads(v_all, heads=kv_heads)\n"
             "      k_rep = repeat(k, times=nhead/kv_heads, axis=0, interleave=%d)\n"
             "      v_rep = repeat(v, times=nhead/kv_heads, axis=0, interleave=%d)\n"
             "      scores = matmul(q, transpose(k_rep))\n"
             "      scaled = scale(scores, by=1/sqrt(d_k))\n"
             "      masked = mask(scaled, tgt, causal=1)\n"
             "      weights = softmax(masked)\n"
             "      context = matmul(weights, v_rep)\n"
             "      self_out = merge_heads(context)\n"
             "    end\n"
             "    block cross_attn\n"
             "      q_all = linear(x, @wq2)\n"
             "      q = split_heads(q_all, heads=nhead)\n"
             "      k_one = linear(memory, @wkv1, chunk=0, chunks=2)\n"
             "      v_one = linear(memory, @wkv1, chunk=1, chunks=2)\n"
             "      k = split_heads(k_one, heads=1)\n"
             "      v = split_heads(v_one, heads=1)\n"
             "      scores = matmul(q, transpose(k))\n"
             "      weights = softmax(scores)\n"
             "      context = matmul(weights, v)\n"
             "      cross_out = merge_heads(context)\n"
             "    end\n"
             "    both = concat(self_out, cross_out, axis=1)\n"
             "    y = linear(both, @wo)\n"
             "  end\n"
             "  block generator\n    logits = linear(y, @gen)\n    next = argmax(logits)\n  end\n"
             "end\noutput logits = logits\n",
             cached ? " cached" : "", !tiled, !tiled);
    return text;
}

static const char *const decoder_block =
    "model: random\nconfig: d_model=16 nhead=4 kv_heads=2 src_vocab_size=9 tgt_vocab_size=12 max_positions=24\n"
    "seed: 5\nsrc_ids: 4,5,6,7,8\nmax_len: 12\n";

static bool open_decoder(Session *s, const char *name, bool cached, bool tiled) {
    const char *path = write_lesson(name, decoder_block, decoder_program(cached, tiled));
    SessionSpec spec = {.lesson_path = path, .greedy = true};
    Err e = {{0}};
    const bool ok = path && session_open(s, &spec, &e) && interp_run(s->it, &e);
    CHECK(ok, "%s: %s", name, e.msg);
    if (path) remove(path);
    return ok;
}

static RowsKind kind_of(const Session *s, const char *id, bool *whole) {
    const int i = interp_find(s->it, id);
    CHECK(i >= 0, "%s exists", id);
    if (i < 0) return ROWS_WHOLE;
    *whole = rows_ran_whole(interp_stage(s->it, i), interp_stage_rows(s->it, i));
    return interp_stage_rows(s->it, i);
}

// The cached decoder computes each round's new row through the repeats, the broadcast products
// and the concat, and every stage of every round holds the plain decoder's bits.
static void test_cached(void) {
    Session plain, cached;
    if (!open_decoder(&plain, "plain", false, false)) return;
    if (!open_decoder(&cached, "cached", true, false)) return session_close(&plain);
    const int n = interp_n_stages(plain.it);
    int same = 0, len;
    StopReason why;
    interp_generated(plain.it, &len, &why);
    CHECK(n == interp_n_stages(cached.it) && len >= 8, "the same %d stages; %d rounds", n, len);
    same = same_bits_stages(plain.it, cached.it);
    CHECK(same == n, "%d of %d stages the same bits cached and plain", same, n);
    char id[96];
    static const struct { const char *stage; RowsKind kind; bool whole; } want[] = {
        {"decoder.self_attn.k_all", ROWS_GROWN, false},  {"decoder.self_attn.k_rep", ROWS_GROWN, true},
        {"decoder.self_attn.scores", ROWS_NEW_SQUARE, false}, {"decoder.self_attn.context", ROWS_NEW, false},
        {"decoder.cross_attn.k_one", ROWS_SAME, false},   {"decoder.cross_attn.scores", ROWS_NEW, false},
        {"decoder.cross_attn.context", ROWS_NEW, false}, {"decoder.both", ROWS_GROWN, true},
        {"decoder.y", ROWS_GROWN, false}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        snprintf(id, sizeof id, "step.%d.%s", len - 1, want[k].stage);
        bool whole = false;
        const RowsKind got = kind_of(&cached, id, &whole);
        CHECK(got == want[k].kind && whole == want[k].whole, "%s: rows kind %d (want %d), ran whole %d", id, got,
              want[k].kind, whole);
    }
    session_close(&plain), session_close(&cached);
}

// Tiled keys (interleave=0): query head h reads key/value head h mod 2; the broadcast memory head
// serves all four; the standard lesson's heads each have their own.
static void test_roles(void) {
    Session s;
    if (open_decoder(&s, "tiled", false, true)) {
        static const int tiled[4] = {0, 1, 0, 1}, one[4] = {0, 0, 0, 0};
        check_sharing(&s, "step.0.decoder.self_attn.weights", 2, true, tiled, 4);
        check_sharing(&s, "step.0.decoder.cross_attn.weights", 1, false, one, 4);
        session_close(&s);
    }
    Err e = {{0}};
    const SessionSpec spec = {.builtin_lesson = "forward-pass.md"};
    const bool ok = session_open(&s, &spec, &e) && interp_run(s.it, &e);
    CHECK(ok, "the standard lesson: %s", e.msg);
    if (!ok) return;
    static const int own[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const int H = s.model.cfg.nhead;
    check_sharing(&s, "encoder.layers.0.self_attn.weights", H, false, own, H < 8 ? H : 8);
    session_close(&s);
}

// Shapes that do not fit: one message naming the file, the line and what is wrong.
static void test_errors(void) {
    static const struct { const char *line, *want; } cases[] = {
        {"s = matmul(q, transpose(k2))\n", "the leading dimensions 4 and 2 differ"},
        {"s = matmul(q, k2)\n", "inner dimensions differ"},
        {"r = repeat(k2, times=2, axis=3)\n", "axis=3 is not an axis of a tensor of 3 dimensions"},
        {"r = repeat(k2, times=2, axis=-4)\n", "axis=-4 is not an axis"},
        {"r = repeat(k2, times=0)\n", "times= must be a whole number of 1 or more"},
        {"r = repeat(k2, times=1.5)\n", "times=1.5 must be a whole number"},
        {"r = repeat(x, times=100000000, axis=1)\n", "times= makes the axis longer than 2^30"},
        {"r = repeat(k2, times=50000000, axis=1)\n", "more than the"},
        {"r = repeat(k2, heads=2)\n", "repeat has no attribute 'heads' (it takes: times axis interleave)"},
        {"c = concat(q, x, axis=0)\n", "every tensor must have the same shape but along the axis"},
        {"c = concat(q, k2, axis=2)\n", "every tensor must have the same shape but along the axis"},
        {"c = concat(q)\n", "concat takes at least 2 tensors, got 1"},
        {"c = concat(q, q, q, q, q)\n", "concat takes at most 4 tensors"},
        {"c = concat(q, transpose(q))\n", "may only be matmul's second argument"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char program[600];
        snprintf(program, sizeof program,
                 "input src\nparam @emb [src_vocab_size, d_model] xavier\nparam @wk [d_model/2, d_model] xavier\n"
                 "x = embedding(src, @emb)\nq = split_heads(x, heads=4)\nk = linear(x, @wk)\n"
                 "k2 = split_heads(k, heads=2)\n%s", cases[i].line);
        const char *path = write_lesson("errors", "model: random\nconfig: d_model=16 nhead=4 src_vocab_size=9\n"
                                        "src_ids: 4,5,6\n", program);
        Session s;
        Err e = {{0}};
        SessionSpec spec = {.lesson_path = path};
        const bool ok = path && session_open(&s, &spec, &e);
        if (ok) session_close(&s);
        char at[64];
        snprintf(at, sizeof at, "%s:19:", path ? path : "");
        CHECK(!ok && strstr(e.msg, at) && strstr(e.msg, cases[i].want), "'%.*s' is refused at line 19 with \"%s\": %s",
              (int)strlen(cases[i].line) - 1, cases[i].line, cases[i].want, e.msg);
        if (path) remove(path);
    }
}

int main(void) {
    test_against_torch();
    test_cached();
    test_roles();
    test_errors();
    return check_finish("test_gqa");
}
