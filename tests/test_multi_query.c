// test_multi_query.c: lessons/multi-query.md says what the run shows, with numbers. This runs it
// headless and checks them: the tokens written, the positions of the last round, the shapes the
// cache keeps in each layer and their bytes (4 a number), what the Attention view says about each
// layer's key/value heads, the copies repeat makes, and that the cached decoder's every stage
// holds the plain decoder's bits.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "views.h"
#include "check.h"
#include "same_bits.h"
#include "files.h"
#include "rows.h"
#include "session.h"

static bool run(Session *s, const char *path) {
    SessionSpec spec = {.lesson_path = path};
    Err e = {{0}};
    const bool ok = session_open(s, &spec, &e) && interp_run(s->it, &e);
    CHECK(ok, "%s: %s", path, e.msg);
    return ok;
}

static const Stage *stage(const Session *s, const char *fmt, int layer, int *index) {
    char id[STAGE_ID_MAX];
    snprintf(id, sizeof id, fmt, layer);
    const int i = interp_find(s->it, id);
    CHECK(i >= 0, "%s exists", id);
    if (index) *index = i;
    return i >= 0 ? interp_stage(s->it, i) : NULL;
}

static bool is_shape(const Stage *st, int nd, int d0, int d1, int d2) {
    const int d[3] = {d0, d1, d2};
    bool ok = st && st->shape.ndim == nd;
    for (int k = 0; ok && k < nd; k++) ok = st->shape.dim[k] == d[k];
    return ok;
}

// The cache: each layer's k and v in the last round, and their bytes.
static void cache_numbers(const Session *s) {
    static const struct { int width; long bytes, per_token; const char *says; } layer[3] = {
        {64, 17920, 512, ""}, {16, 4480, 128, "8 query heads share 2 key/value heads"},
        {8, 2240, 64, "8 query heads share 1 key/value head"}};
    long all = 0;
    for (int l = 0; l < 3; l++) {
        const Stage *k = stage(s, "step.7.decoder.layers.%d.self_attn.k", l, NULL);
        const Stage *v = stage(s, "step.7.decoder.layers.%d.self_attn.v", l, NULL);
        CHECK(is_shape(k, 2, 35, layer[l].width, 0) && is_shape(v, 2, 35, layer[l].width, 0),
              "layer %d keeps k and v of [35 x %d]", l, layer[l].width);
        if (!k || !v) continue;
        const long bytes = (long)sizeof(float) * (shape_numel(&k->shape) + shape_numel(&v->shape));
        CHECK(bytes == layer[l].bytes, "layer %d: %ld bytes (the lesson says %ld)", l, bytes, layer[l].bytes);
        CHECK(bytes / 35 == layer[l].per_token && bytes % 35 == 0, "layer %d: %ld bytes a token", l, bytes / 35);
        all += bytes;
        int w;
        const Stage *weights = stage(s, "step.7.decoder.layers.%d.self_attn.weights", l, &w);
        char says[200];
        if (weights) attention_sharing(weights, says, sizeof says);
        CHECK(weights && is_shape(weights, 3, 8, 35, 35) && !strncmp(says, layer[l].says, strlen(layer[l].says)) &&
                  (l > 0 || !says[0]),
              "layer %d: 8 maps, and the Attention view says '%s'", l, weights ? says : "");
    }
    CHECK(layer[0].bytes / layer[1].bytes == 4 && layer[0].bytes / layer[2].bytes == 8, "4 and 8 times fewer");
    CHECK(all == 24640 && 3 * layer[0].bytes == 53760, "%ld bytes in all; 53,760 with 3 multi-head layers", all);
}

// The tokens, the rounds, the copies and what the cached decoder did with them.
static void test_lesson(void) {
    Session s;
    if (!run(&s, LESSONS "/multi-query.md")) return;
    int n, prompt;
    StopReason why;
    const float *ids = interp_generated(s.it, &n, &why);
    char out[64];
    vocab_decode(&s.model.tgt_vocab, ids, n, out, sizeof out);
    interp_input_ids(s.it, program_input(&s.lesson.program, "tgt"), &prompt);
    CHECK(!strcmp(out, "999jjjjj") && n == 8 && why == STOP_MAX_LEN, "it writes '%s' (%d tokens), stopped at max_len", out,
          n);
    const int last = interp_find(s.it, "step.7.decoder.embed");
    CHECK(last >= 0 && interp_find(s.it, "step.8.decoder.embed") < 0 && is_shape(interp_stage(s.it, last), 2, 35, 64, 0),
          "the last round is step.7, over the 28-character prompt and 7 tokens: 35 positions");
    cache_numbers(&s);
    int g, k;
    const Stage *groups = stage(&s, "step.7.decoder.layers.%d.self_attn.k_groups", 1, &g);
    const Stage *kept = stage(&s, "step.7.decoder.layers.%d.self_attn.k", 1, &k);
    CHECK(is_shape(groups, 3, 8, 35, 8) && rows_ran_whole(groups, interp_stage_rows(s.it, g)),
          "k_groups is [8 x 35 x 8], made again each round");
    CHECK(kept && interp_stage_rows(s.it, k) == ROWS_GROWN, "k is kept: the new position's row only");
    const Stage *one = stage(&s, "step.7.decoder.layers.%d.self_attn.k_head", 2, NULL);
    const Stage *scores = stage(&s, "step.7.decoder.layers.%d.self_attn.scores", 2, NULL);
    CHECK(is_shape(one, 3, 1, 35, 8) && scores && scores->in[1].kind == REF_STAGE &&
              !strcmp(scores->in_name[1], "step.7.decoder.layers.2.self_attn.k_head"),
          "the multi-query scores read the one key head [1 x 35 x 8]");
    session_close(&s);
}

// The same lesson without `cached`: every stage of every round, the same bits.
static void test_cached_bits(void) {
    char *text = file_read(LESSONS "/multi-query.md"), path[96];
    char *at = text ? strstr(text, "decode tgt from next cached") : NULL;
    CHECK(at != NULL, "the lesson decodes with the cached decoder");
    FILE *f = NULL;
    if (at) {
        memset(at + strlen("decode tgt from next"), ' ', strlen(" cached"));  // the word blanked out
        snprintf(path, sizeof path, "/tmp/stepformer-multi-query-plain-%d.md", (int)getpid());
        if ((f = fopen(path, "w"))) fputs(text, f), fclose(f);
    }
    free(text);
    Session plain, cached;
    const bool ok = f && run(&plain, path);
    if (f) remove(path);
    if (!ok) return;
    if (!run(&cached, LESSONS "/multi-query.md")) {
        session_close(&plain);
        return;
    }
    const int n = interp_n_stages(plain.it);
    const int same = same_bits_stages(plain.it, cached.it);
    CHECK(n > 500 && same == n, "%d of %d stages the same bits with and without the cache", same, n);
    session_close(&plain), session_close(&cached);
}

int main(void) {
    test_lesson();
    test_cached_bits();
    return check_finish("test_multi_query");
}
