// app_probe.c: the Patch view's runs. The lesson's input (clean) and its `corrupt:` input are
// opened as two more passes scored on the target's last token (session_open_scored), swept
// once (probe.h: every layer output by position, every attention by head, with attribution),
// and read through the logit lens; a clicked cell is patched alone and its prediction kept.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feature.h"

static void probe_free(App *a) {
    for (int k = 0; a->probe.open && k < 2; k++) session_close(&a->probe.run[k]);
    free(a->probe.resid), free(a->probe.heads), free(a->probe.lens);
    a->probe.resid = a->probe.heads = NULL, a->probe.lens = NULL;
    a->probe.open = false, a->probe.lesson[0] = '\0', a->probe.why[0] = '\0', a->probe.pick_row = -1;
}

static bool open_runs(App *a, Err *e) {
    const Lesson *l = &a->session.lesson;
    if (!l->setup.corrupt[0])
        return err_set(e, "This lesson has no corrupted input to patch from. Add a corrupt: line to its lesson block (as "
                       "many tokens as input:, and a target: whose last token is scored), or use stepformer patch.");
    SessionSpec spec = {.lesson_path = l->path, .input = l->setup.input, .target = l->setup.target};
    if (!session_open_scored(&a->probe.run[0], &spec, &a->probe.token, e)) return false;
    spec.input = l->setup.corrupt;
    if (!session_open_scored(&a->probe.run[1], &spec, &a->probe.token, e)) return session_close(&a->probe.run[0]), false;
    a->probe.open = true;
    if (a->probe.run[0].run.S != a->probe.run[1].run.S)
        return err_set(e, "patching needs inputs of the same length: input has %d tokens, corrupt %d", a->probe.run[0].run.S,
                       a->probe.run[1].run.S);
    return true;
}

static void prepare(App *a) {
    if (!a->loaded || !strcmp(a->probe.lesson, a->session.lesson.path)) return;
    probe_free(a);
    snprintf(a->probe.lesson, sizeof a->probe.lesson, "%s", a->session.lesson.path);
    Err e = {{0}};
    a->probe.resid = malloc(sizeof *a->probe.resid), a->probe.heads = malloc(sizeof *a->probe.heads);
    a->probe.lens = malloc(sizeof *a->probe.lens);
    bool ok = a->probe.resid && a->probe.heads && a->probe.lens;
    if (!ok) err_code(&e, ERR_MEMORY, "out of memory");
    ok = ok && open_runs(a, &e);
    Interp *clean = ok ? a->probe.run[0].it : NULL, *corrupt = ok ? a->probe.run[1].it : NULL;
    ok = ok && patch_sweep(a->probe.resid, clean, corrupt, SWEEP_RESID, a->probe.token, &e) &&
         patch_sweep(a->probe.heads, clean, corrupt, SWEEP_HEADS, a->probe.token, &e) && logit_lens(a->probe.lens, clean, &e);
    if (!ok) snprintf(a->probe.why, sizeof a->probe.why, "%s", e.msg);
}

void app_probe_pick(App *a, bool heads, int row, int col) {
    const PatchSweep *p = heads ? a->probe.heads : a->probe.resid;
    if (!a->probe.open || !p || row < 0 || row >= p->n_rows || col < 0 || col >= p->rows[row].n) return;
    Err e = {{0}};
    const Stage *st = interp_stage(a->probe.run[1].it, p->rows[row].stage);
    double logit;
    int top;
    if (!patch_one(a->probe.run[0].it, a->probe.run[1].it, st->id, heads ? col : -1, heads ? -1 : col, a->probe.token, &logit,
                   &top, &e))
        return app_set_error(a, e.msg);
    a->probe.pick_heads = heads, a->probe.pick_row = row, a->probe.pick_col = col;
    a->probe.picked_logit = logit, a->probe.picked_top = top;
}

static Follow on_command(App *a, const Command *c) {
    if (c->kind != CMD_PATCH_CELL) return FOLLOW_NOTHING;
    app_probe_pick(a, c->param >> 20, (c->param >> 10) & 1023, c->param & 1023);
    return FOLLOW_TAKEN;
}

static void on_tick(App *a) {
    if (a->loaded && a->view == VIEW_PATCH) prepare(a);
}

const Feature feature_probe = {.name = "probe", .on_command = on_command, .on_tick = on_tick, .on_free = probe_free};
