// app_pin.c: C pins the stage on screen for the Compare view (view_compare.c). The pin keeps a
// copy of the output and of the words that label it: the tokens along its rows and columns, and
// for a stage of token ids, the tokens they stand for. Those come from the input and the
// vocabulary of the moment it was pinned, so after the input is edited or another lesson is
// opened, the pinned map still reads as it did, not with the new input's tokens.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature.h"

enum { PIN_LABELS_MAX = 512 };  // per axis, as many as the Compare view draws

static void pin_free(Pin *p) {
    free(p->data), free(p->label_text), free(p->labels);
    p->data = NULL, p->label_text = NULL, p->labels = NULL;
    p->n_row_labels = p->n_col_labels = p->n_id_labels = 0;
}

// Copies n strings into one owned block, and points p->labels at the copies (in the same order).
static bool own_labels(Pin *p, const char **src, int n) {
    size_t bytes = 0;
    for (int i = 0; i < n; i++) bytes += strlen(src[i]) + 1;
    p->label_text = malloc(bytes ? bytes : 1), p->labels = malloc(sizeof(char *) * (size_t)(n ? n : 1));
    if (!p->label_text || !p->labels) return false;
    char *w = p->label_text;
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(src[i]) + 1;
        memcpy(w, src[i], len);
        p->labels[i] = w, w += len;
    }
    return true;
}

// The labels of stage i as the Compare view draws them: rows, then columns, then (a stage of
// token ids) each id's token. False when out of memory.
static bool pin_labels(App *a, Pin *p, int i) {
    const Stage *st = interp_stage(a->session.it, i);
    const int nd = st->shape.ndim;
    const int ids = st->kind == TK_IDS ? (int)shape_numel(&st->shape) : 0;
    const char **all = malloc(sizeof(char *) * (2 * PIN_LABELS_MAX + (size_t)ids + 1));
    if (!all) return false;
    p->n_row_labels = stage_axis_labels(a, i, nd >= 2 ? nd - 2 : 0, all, PIN_LABELS_MAX);
    p->n_col_labels = stage_axis_labels(a, i, nd - 1, all + p->n_row_labels, PIN_LABELS_MAX);
    const float *x = interp_output(a->session.it, i);
    for (int k = 0; k < ids; k++) all[p->n_row_labels + p->n_col_labels + k] = decode_shown(a, (int)x[k]);
    p->n_id_labels = ids;
    const bool ok = own_labels(p, all, p->n_row_labels + p->n_col_labels + ids);
    free(all);
    return ok;
}

// C: pins the stage on screen (its output copied), or unpins. A pin that switching a piece off
// made by itself is replaced by the stage on screen, not dropped: C after X pins, as C does.
void app_pin_toggle(App *a) {
    Pin *p = &a->pin;
    if (p->data && p->automatic && a->loaded) pin_free(p);
    if (p->data || !a->loaded) {
        pin_free(p);
        if (a->loaded) app_notify(a, "unpinned");
        return;
    }
    const Stage *st = interp_stage(a->session.it, a->cursor);
    const float *x = interp_output(a->session.it, a->cursor);
    const size_t n = (size_t)shape_numel(&st->shape);
    if (!x || !(p->data = malloc(sizeof(float) * n))) return;
    if (!pin_labels(a, p, a->cursor)) {
        pin_free(p);
        app_notify(a, "could not pin: out of memory");
        return;
    }
    memcpy(p->data, x, sizeof(float) * n);
    p->shape = st->shape, p->kind = st->kind, p->serial++, p->automatic = false;
    snprintf(p->stage_id, sizeof p->stage_id, "%s", st->id);
    snprintf(p->label, sizeof p->label, "%s: %s", a->source, st->id);
    app_pin_input(a, "pinned", p->sub, sizeof p->sub);
    char msg[STAGE_ID_MAX + 80];
    snprintf(msg, sizeof msg, "pinned %s: the Compare view sets it beside any stage", st->id);
    app_notify(a, msg);
}

static Follow on_command(App *a, const Command *c) {
    if (c->kind != CMD_PIN) return FOLLOW_NOTHING;
    app_pin_toggle(a);
    return FOLLOW_TAKEN;
}

static void on_free(App *a) { pin_free(&a->pin); }

const Feature feature_pin = {.name = "pin", .on_command = on_command, .on_free = on_free};
