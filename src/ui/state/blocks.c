// blocks.c: grouping stages into the blocks of the architecture figure: embedding, positions,
// each sublayer (attention, feed-forward, add & norm), final norms, the generator's steps.
#include <stdio.h>
#include <string.h>

#include "app.h"

// The block name of one stage, before neighbours are looked at: an attention's steps form one
// block whatever the program calls them.
static const char *base_group(const Stage *st) {
    const StageWhere *w = &st->where;
    if (w->sublayer[0]) return w->sublayer;
    if (st->role != ROLE_NONE) return "attention";
    if (!strcmp(w->name, "linear1") || !strcmp(w->name, "activation") || !strcmp(w->name, "linear2"))
        return "feed_forward";
    return w->name;
}

static bool same_index(const char *a, const char *b) {
    return !strcmp(a + strcspn(a, "0123456789"), b + strcspn(b, "0123456789"));
}

// An add followed by the norm with the same number is one "Add & Norm" block (post-norm).
static bool add_norm_pair(const Interp *it, int i, const StageWhere *w) {
    const int n = interp_n_stages(it);
    if (w->sublayer[0] || !w->has_layer) return false;
    if (!strncmp(w->name, "add", 3) && i + 1 < n) {
        StageWhere nx = interp_stage(it, i + 1)->where;
        return !strncmp(nx.name, "norm", 4) && same_index(nx.name, w->name) && nx.layer == w->layer;
    }
    if (!strncmp(w->name, "norm", 4) && i > 0) {
        StageWhere pv = interp_stage(it, i - 1)->where;
        return !strncmp(pv.name, "add", 3) && same_index(pv.name, w->name) && pv.layer == w->layer;
    }
    return false;
}

static const struct {
    const char *group, *label;
} labels[] = {
    {"embed", "Embedding"},          {"pos", "+ Positional encoding"}, {"feed_forward", "Feed-forward"},
    {"cross_attn", "Cross-attention"}, {"add_norm", "Add & Norm"},      {"norm", "Final norm"},
    {"logits", "Linear"},            {"probs", "Softmax"},             {"next", "Argmax"},
};

// What an attention block is, from its softmax (attention_kind).
static bool attention_label(BlockRow *b, const App *a) {
    const Interp *it = a->session.it;
    int w = -1;
    for (int i = b->first; i <= b->last && w < 0; i++)
        if (interp_stage(it, i)->role != ROLE_NONE) w = interp_stage(it, i)->att_weights;
    if (w < 0 || w >= interp_n_stages(it)) return false;
    snprintf(b->label, sizeof b->label, "%s", attention_kind_names[attention_kind(a, w)]);
    return true;
}

static void label_for(BlockRow *b, const char *group, const App *a) {
    if ((!strcmp(group, "self_attn") || !strcmp(group, "cross_attn") || !strcmp(group, "attention")) &&
        attention_label(b, a))
        return;
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (!strcmp(group, labels[i].group) && (!b->has_layer || strcmp(group, "norm") != 0)) {  // a layer's norm is no final one
            snprintf(b->label, sizeof b->label, "%s", labels[i].label);
            return;
        }
    if (!strncmp(group, "norm", 4)) snprintf(b->label, sizeof b->label, "Norm");
    else if (!strncmp(group, "add", 3)) snprintf(b->label, sizeof b->label, "Add");
    else snprintf(b->label, sizeof b->label, "%s", group);
}

// The first part of a stage's id (after a greedy round's "step.K."): the program's top block.
static void section_of(const Stage *st, char *out, size_t n) {
    const char *id = st->id;
    if (!strncmp(id, "step.", 5) && strchr(id + 5, '.')) id = strchr(id + 5, '.') + 1;
    snprintf(out, n, "%.*s", (int)strcspn(id, "."), id);
}

// A key that equal stages of one block share.
static void key_of(const Interp *it, int i, char *key, size_t n) {
    const Stage *st = interp_stage(it, i);
    StageWhere w = st->where;
    const char *g = add_norm_pair(it, i, &w) ? "add_norm" : base_group(st);
    const char *digits = w.name + strcspn(w.name, "0123456789");
    char section[32];
    section_of(st, section, sizeof section);
    snprintf(key, n, "%d|%d|%d|%d|%s|%s|%s", st->in_decode, st->step, w.part, w.has_layer ? w.layer : -1, g,
             !strcmp(g, "add_norm") ? digits : "", section);
}

BlockRow block_of(const App *a, int i) {
    const Interp *it = a->session.it;
    const int n = interp_n_stages(it);
    char k[160], o[160];
    key_of(it, i, k, sizeof k);
    BlockRow b = {i, i, PART_OTHER, 0, false, 0, ""};
    while (b.first > 0 && (key_of(it, b.first - 1, o, sizeof o), !strcmp(o, k))) b.first--;
    while (b.last + 1 < n && (key_of(it, b.last + 1, o, sizeof o), !strcmp(o, k))) b.last++;
    const Stage *st = interp_stage(it, i);
    StageWhere w = st->where;
    b.part = w.part, b.has_layer = w.has_layer, b.layer = w.layer, b.round = st->in_decode ? st->step : 0;
    section_of(st, b.section, sizeof b.section);
    label_for(&b, add_norm_pair(it, i, &w) ? "add_norm" : base_group(st), a);
    return b;
}

bool block_same_layer(const BlockRow *x, const BlockRow *y) {
    return x->has_layer && y->has_layer && x->layer == y->layer && x->part == y->part && x->round == y->round;
}

int block_rows(const App *a, int round, BlockRow *rows, int max) {
    const Interp *it = a->session.it;
    const int n = interp_n_stages(it);
    int count = 0;
    for (int i = 0; i < n && count < max;) {
        const Stage *st = interp_stage(it, i);
        if (st->in_decode && st->step != round) {
            i++;
            continue;
        }
        rows[count] = block_of(a, i);
        i = rows[count++].last + 1;
    }
    return count;
}
