// view_timeline.c: every stage of the pass along the bottom, coloured by part (encoder, decoder,
// generator), with the decoding rounds marked and the stage on screen pointed at, then the
// backward pass's steps once built (B). In a mistake lesson beside its correct program, the first
// stage that differs is marked red. Click to jump.
#include <stdio.h>

#include "views.h"

// Stages that have run in their part's colour, a little deeper; the rest paler.
static Rgba shade(Rgba c, bool run) {
    if (run) return (Rgba){(uint8_t)(c.r * 7 / 8), (uint8_t)(c.g * 7 / 8), (uint8_t)(c.b * 7 / 8), 255};
    return (Rgba){(uint8_t)((c.r + 255) / 2), (uint8_t)((c.g + 255) / 2), (uint8_t)((c.b + 255) / 2), 255};
}

static Rgba stage_colour(const Theme *t, const Stage *st, bool run) {
    StageWhere w = st->where;
    Rgba c = w.part == PART_ENCODER ? t->encoder : w.part == PART_DECODER ? t->decoder
           : w.part == PART_GENERATOR ? t->generator : t->panel_alt;
    return shade(c, run);
}

static void caption(Ui *ui, const App *a, Rect r) {
    const Interp *it = a->session.it;
    const Stage *st = interp_stage(it, a->cursor);
    const BackStep *b = app_back_step(a);
    char sh[64], s[512], right[96];
    if (b && b->kind == BACK_ADAM)
        snprintf(s, sizeof s, "backward step %d of %d   Adam on %s", a->back.step + 1, a->back.pass.n_steps,
                 a->session.model.params[b->weight].name);
    else if (b)
        snprintf(s, sizeof s, "backward step %d of %d   %s%s  %s   %s", a->back.step + 1, a->back.pass.n_steps,
                 b->kind == BACK_STAGE ? "dL/d " : "", b->kind == BACK_STAGE ? st->id : back_kind_names[b->kind],
                 shape_str(&st->shape, sh, sizeof sh), b->kind == BACK_STAGE ? op_info[st->op].name : "");
    else if (a->card != CARD_NONE)  // a card stands before the first stage or after the last
        snprintf(s, sizeof s, "the lesson's %s card, %s stage %d of %d", card_names[a->card],
                 a->card == CARD_OPENING ? "before" : "after", a->cursor + 1, interp_n_stages(it));
    else
        snprintf(s, sizeof s, "stage %d of %d%s   %s  %s   %s", a->cursor + 1, interp_n_stages(it),
                 interp_done(it) ? "" : "+", st->id, shape_str(&st->shape, sh, sizeof sh), op_info[st->op].name);
    if (a->playing) snprintf(right, sizeof right, "playing, %.1f s a stage  (< > speed)", a->play_ms / 1000.0);
    else if (app_against_at(a, a->cursor)) snprintf(right, sizeof right, "J: the first difference   ? keys");
    else snprintf(right, sizeof right, "? keys");
    int rw = gfx_text_width(ui->g, FONT_SANS, ui->small, right);
    ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->text, r.x, r.y, s, r.w - rw - ui->pad);
    gfx_text(ui->g, FONT_SANS, ui->small, ui->th->muted, r.x + r.w - rw, r.y, right);
}

void view_timeline(Ui *ui, const App *a, Rect r) {
    const Theme *t = ui->th;
    gfx_rect(ui->g, r, t->panel_alt);
    gfx_rect(ui->g, (Rect){r.x, r.y, r.w, t->line}, t->border);
    const Interp *it = a->session.it;
    const int n = interp_n_stages(it), done = interp_n_done(it);
    if (n == 0) return;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    Rect text = {r.x + ui->pad, r.y + ui->pad / 2, r.w - 2 * ui->pad, lh};
    caption(ui, a, text);
    Rect strip = {r.x + ui->pad, text.y + lh + ui->pad / 2, r.w - 2 * ui->pad, r.h - lh - ui->pad * 3 / 2};
    if (strip.h < 4) return;
    // One pixel column at a time: the stage under it decides its colour; the backward steps,
    // when they are built, follow the forward stages in a colour of their own.
    const int back = app_back_ready(a) ? a->back.pass.n_steps : 0, total = n + back;
    for (int x = 0; x < strip.w; x++) {
        int i = (int)((long)x * total / strip.w);
        const BackStep *b = i >= n ? &a->back.pass.steps[i - n] : NULL;
        Rgba c = !b ? stage_colour(t, interp_stage(it, i), i < done)
               : shade(t->backward, b->kind != BACK_ADAM);
        gfx_rect(ui->g, (Rect){strip.x + x, strip.y, 1, strip.h}, c);
    }
    if (back) gfx_rect(ui->g, (Rect){strip.x + (int)((long)n * strip.w / total), strip.y - 3, t->line * 2, strip.h + 6}, t->text);
    // Round boundaries in greedy decoding.
    int last_step = -1;
    for (int i = 0; i < n; i++) {
        const Stage *st = interp_stage(it, i);
        if (!st->in_decode || st->step == last_step) continue;
        last_step = st->step;
        int x = strip.x + (int)((long)i * strip.w / total);
        gfx_rect(ui->g, (Rect){x, strip.y, t->line, strip.h}, t->muted);
    }
    // A mistake lesson beside its correct program: the first stage that differs, marked red.
    const StageMatch *m0 = app_against_at(a, 0);
    const int first = m0 ? a->against.match.first : -1;
    if (first >= 0) {
        const int fx = strip.x + (int)((long)first * strip.w / total), fw = t->line * 3 > 3 ? t->line * 3 : 3;
        gfx_rect(ui->g, (Rect){fx - fw / 2, strip.y - ui->pad / 2, fw, strip.h + ui->pad}, t->error_bg);
    }
    const int at = app_back_step(a) ? n + a->back.step : a->cursor;
    int cx = strip.x + (int)((long)at * strip.w / total);
    int cw = strip.w / total > 3 ? strip.w / total : 3;
    gfx_rect(ui->g, (Rect){cx - 1, strip.y - 3, cw + 2, strip.h + 6}, t->text);
    gfx_rect(ui->g, (Rect){cx, strip.y, cw, strip.h}, t->lit);
    ui_hot(ui, strip, CMD_TIMELINE, total);
}
