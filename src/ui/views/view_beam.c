// view_beam.c: beam search in the Decoding view. The hypotheses live after the round on screen
// (before that round has chosen: the ones it extends), each with its tokens (the prompt, or
// <bos>, muted; the token this round added lit), the row of the round before it grew from, its
// sum of log p and that sum over its length; then the hypotheses finished so far, best first, by
// that normalised score, the best marked (the answer, once the search has ended).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_decode.h"

enum { MAX_GEN = 512, MAX_DONE = 64 };

typedef struct {
    int x[7];  // where each column starts: #, tokens, grew from, sum log p, / length, status; the end
    int rh;    // a row
    int px;
} Cols;

// Text that fits in w, cut at its start ("…" in front) when it does not: a sequence's end is
// what tells hypotheses apart.
static void tail_fit(Ui *ui, FontFace f, int px, const char *s, int w, char *out, size_t n) {
    snprintf(out, n, "%s", s);
    const char *p = s;
    while (*p && gfx_text_width(ui->g, f, px, out) > w) {
        do p++;
        while ((*p & 0xC0) == 0x80);  // a whole UTF-8 character
        snprintf(out, n, "\xe2\x80\xa6%s", p);
    }
}

// The tokens of one hypothesis: the start (a prompt, or <bos>) muted, a bar, the generated tokens
// as the vocabulary writes them, and its last token as a chip: lit when the round shown added
// it, plain when it is the <eos> that finished it.
static void tokens(Ui *ui, const App *a, const Round *R, int x, int y, int w, const int *gen, int n, bool lit) {
    const Theme *t = ui->th;
    const Vocab *v = &a->session.model.tgt_vocab;
    const int px = ui->small, ch = chip_h(ui, px), lh = gfx_line_height(ui->g, FONT_SANS, px), ty = y + (ch - lh) / 2;
    const int x0 = x;
    float ids[MAX_GEN];
    char text[1024], fit[1024];
    const int m = R->start < MAX_GEN ? R->start : MAX_GEN;
    for (int i = 0; i < m && R->ids; i++) ids[i] = R->ids[i];
    vocab_decode(v, ids, R->ids ? m : 0, text, sizeof text);
    tail_fit(ui, FONT_SANS, px, text, w / 3, fit, sizeof fit);
    x += gfx_text(ui->g, FONT_SANS, px, t->muted, x, ty, fit);
    x += gfx_text(ui->g, FONT_BOLD, px, t->muted, x, ty, " \xe2\x94\x82 ");
    const int eos = a->session.model.cfg.eos_id.set ? a->session.model.cfg.eos_id.id : -1;
    const bool chip = n > 0 && (lit || gen[n - 1] == eos);
    const char *last = chip ? decode_shown(a, gen[n - 1]) : "";
    const int cw = chip ? chip_w(ui, px, last, w / 3) : 0;
    for (int i = 0; i < n - chip; i++) ids[i] = (float)gen[i];
    vocab_decode(v, ids, n - chip, text, sizeof text);
    tail_fit(ui, FONT_BOLD, px, text, w - (x - x0) - cw - ui->pad / 4, fit, sizeof fit);
    x += gfx_text(ui->g, FONT_BOLD, px, t->text, x, ty, fit) + ui->pad / 4;
    if (chip) chip_draw(ui, px, (Rect){x, y, cw, ch}, last, lit ? CHIP_NEW : CHIP_GIVEN);
}

// One row of the table.
typedef struct {
    const char *label;  // "#0" for a live hypothesis, "" for a finished one
    const int *gen;     // the tokens generated [n]
    int n;
    bool lit;           // the last token was added in the round shown
    const char *from;   // the row it grew from, or the round it finished in
    double score;       // sum of log p
    const char *status;
    bool best;          // the answer, or the best finished so far
} BeamRow;

static void row(Ui *ui, const App *a, const Round *R, const Cols *c, int y, const BeamRow *b) {
    const Theme *t = ui->th;
    const int lh = gfx_line_height(ui->g, FONT_SANS, c->px), ty = y + (c->rh - lh) / 2;
    const FontFace f = b->best ? FONT_BOLD : FONT_SANS;
    if (b->best) gfx_rect(ui->g, (Rect){c->x[0], y - 1, c->x[6] - c->x[0], c->rh}, t->generator);
    gfx_text(ui->g, FONT_BOLD, c->px, t->muted, c->x[0], ty, b->label);
    tokens(ui, a, R, c->x[1], y + 1, c->x[2] - c->x[1] - ui->pad, b->gen, b->n, b->lit);
    char s[32], m[32];
    snprintf(s, sizeof s, "%.4f", b->score);
    snprintf(m, sizeof m, "%.4f", beam_normalised(b->score, b->n));
    gfx_text(ui->g, FONT_SANS, c->px, t->text, c->x[2], ty, b->from);
    gfx_text(ui->g, FONT_SANS, c->px, t->text, c->x[4] - ui->pad - gfx_text_width(ui->g, FONT_SANS, c->px, s), ty, s);
    gfx_text(ui->g, f, c->px, t->text, c->x[5] - ui->pad - gfx_text_width(ui->g, f, c->px, m), ty, m);
    ui_text_fit(ui, f, c->px, b->best ? t->text : t->muted, c->x[5], ty, b->status, c->x[6] - c->x[5]);
}

static Cols columns(Ui *ui, Rect r) {
    const int px = ui->small;
    Cols c = {.px = px, .rh = chip_h(ui, px) + ui->pad / 3};
    const int n1 = gfx_text_width(ui->g, FONT_BOLD, px, "-00.0000"), n2 = gfx_text_width(ui->g, FONT_BOLD, px, "sum log p");
    const int f1 = gfx_text_width(ui->g, FONT_BOLD, px, "grew from"), f2 = gfx_text_width(ui->g, FONT_SANS, px, "in round 00");
    const int num = (n1 > n2 ? n1 : n2) + ui->pad, from = (f1 > f2 ? f1 : f2) + ui->pad;
    const int status = gfx_text_width(ui->g, FONT_BOLD, px, "finished: max_len") + ui->pad;
    c.x[6] = r.x + r.w, c.x[5] = c.x[6] - status, c.x[4] = c.x[5] - num, c.x[3] = c.x[4] - num, c.x[2] = c.x[3] - from;
    c.x[0] = r.x, c.x[1] = r.x + gfx_text_width(ui->g, FONT_BOLD, px, "#00") + ui->pad / 2;
    return c;
}

static void heads(Ui *ui, const Cols *c, int y) {
    const Theme *t = ui->th;
    static const char *const h[] = {"#", "start \xe2\x94\x82 tokens generated", "grew from", "sum log p", "\xc3\xb7 length"};
    for (int k = 0; k < 3; k++) gfx_text(ui->g, FONT_BOLD, c->px, t->muted, c->x[k], y, h[k]);
    for (int k = 3; k < 5; k++)
        gfx_text(ui->g, FONT_BOLD, c->px, t->muted, c->x[k + 1] - ui->pad - gfx_text_width(ui->g, FONT_BOLD, c->px, h[k]), y, h[k]);
}

// The hypotheses finished in rounds up to r, best normalised score first (ties: the one that
// finished first, as chooser_best), leaving out the last `counted` (the live ones a search that
// reached max_len counts as finished: their rows are the live ones). Returns how many.
static int finished(const Chooser *ch, int r, int counted, int *idx) {
    int n_done, n = 0;
    const BeamDone *d = chooser_done(ch, &n_done);
    for (int i = 0; i < n_done - counted && n < MAX_DONE; i++) {
        if (d[i].round > r) continue;
        int j = n++;
        while (j > 0 && d[i].norm > d[idx[j - 1]].norm) idx[j] = idx[j - 1], j--;
        idx[j] = i;
    }
    return n;
}

// What the table shows: round rr's hypotheses (rr < 0: the start, before round 0 has chosen).
typedef struct {
    const Chooser *ch;
    int rr, n_live, counted;  // counted: live ones that count as finished (max_len), 0 or n_live
    const BeamLive *live;
    const BeamDone *done;
    int n_done;               // all of chooser_done
    int best;                 // the answer (once ended) or the best finished so far: an index of done, or -1
    bool end;
} BeamShown;

static BeamShown shown_at(const Round *R) {
    BeamShown b = {.ch = interp_chooser(R->it), .best = -1};
    b.rr = R->next_run && decode_round_chosen(R, R->round) ? R->round : R->round - 1;
    b.end = R->why != STOP_NONE && b.rr == decode_rounds_run(R->it) - 1;
    b.live = b.rr >= 0 ? chooser_live(b.ch, b.rr, &b.n_live) : NULL;
    b.done = chooser_done(b.ch, &b.n_done);
    b.counted = b.end && (R->why == STOP_MAX_LEN || R->why == STOP_POSITIONS) ? b.n_live : 0;
    int idx[MAX_DONE];
    if (b.end && chooser_best(b.ch)) b.best = (int)(chooser_best(b.ch) - b.done);
    else if (b.rr >= 0 && finished(b.ch, b.rr, 0, idx) > 0) b.best = idx[0];
    return b;
}

// The title over the table: which round's hypotheses these are. Returns its height.
static int title(Ui *ui, const Round *R, Rect r, const BeamShown *b, int n_done) {
    const Theme *t = ui->th;
    const int k = chooser_choice(b->ch)->beam;
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small), lhb = gfx_line_height(ui->g, FONT_BOLD, ui->px);
    char head[160], sub[160] = "";
    if (b->rr < 0) snprintf(head, sizeof head, "Round 1 extends the start by its %d likeliest tokens", k);
    else if (b->rr < R->round) snprintf(head, sizeof head, "Round %d extends these %d hypotheses", R->round + 1, b->n_live);
    else snprintf(head, sizeof head, "Beam search, width %d: the hypotheses after round %d", k, b->rr + 1);
    if (b->rr >= 0) snprintf(sub, sizeof sub, "   %d live, %d finished", b->n_live - b->counted, n_done + b->counted);
    const int w = ui_text_fit(ui, FONT_BOLD, ui->px, t->text, r.x, r.y, head, r.w);
    ui_text_fit(ui, FONT_SANS, ui->small, t->muted, r.x + w, r.y + (lhb - lh) / 2, sub, r.w - w);
    return lhb + ui->pad / 2;
}

static const char *best_text(const BeamShown *b) {
    return b->end ? "\xe2\x98\x85 the answer" : "\xe2\x98\x85 best so far";
}

// The live rows from y, as many as fit above `bottom`; returns the y after them.
static int live_rows(Ui *ui, const App *a, const Round *R, const Cols *c, int y, int bottom, const BeamShown *b) {
    int gen[MAX_GEN];
    if (b->rr < 0) {  // before round 0 has chosen: the start alone
        row(ui, a, R, c, y, &(BeamRow){.label = "#0", .gen = gen, .from = "", .status = "the start"});
        return y + c->rh;
    }
    for (int j = 0; j < b->n_live && y + c->rh <= bottom; j++, y += c->rh) {
        char label[16], from[24];
        snprintf(label, sizeof label, "#%d", j);
        if (b->rr == 0) snprintf(from, sizeof from, "the start");
        else snprintf(from, sizeof from, "#%d", b->live[j].parent);
        const bool best = b->counted && b->best == b->n_done - b->counted + j;  // counted rows follow in live order
        BeamRow br = {label, gen, beam_tokens(b->ch, b->rr, j, gen, MAX_GEN), b->rr == R->round, from,
                      b->live[j].score, best ? best_text(b) : b->counted ? "finished: max_len" : "", best};
        row(ui, a, R, c, y, &br);
    }
    return y;
}

// The finished rows from y, as many as fit above `bottom`; returns the y after them.
static int done_rows(Ui *ui, const App *a, const Round *R, const Cols *c, int y, int bottom, const BeamShown *b) {
    int idx[MAX_DONE], gen[MAX_GEN];
    const int n = b->rr >= 0 ? finished(b->ch, b->rr, b->counted, idx) : 0;
    if (n == 0) return y;
    gfx_text(ui->g, FONT_BOLD, c->px, ui->th->muted, c->x[0], y, "finished, best first");
    y += gfx_line_height(ui->g, FONT_BOLD, c->px);
    int i = 0;
    for (; i < n && y + c->rh <= bottom; i++, y += c->rh) {
        const BeamDone *h = &b->done[idx[i]];
        const int m = h->n < MAX_GEN ? h->n : MAX_GEN;
        for (int j = 0; j < m; j++) gen[j] = (int)h->ids[j];
        char when[48];
        snprintf(when, sizeof when, "in round %d", h->round + 1);
        const bool best = idx[i] == b->best;
        row(ui, a, R, c, y, &(BeamRow){"", gen, m, false, when, h->score, best ? best_text(b) : "", best});
    }
    if (i < n) {
        char more[64];
        snprintf(more, sizeof more, "and %d more finished", n - i);
        gfx_text(ui->g, FONT_SANS, c->px, ui->th->muted, c->x[1], y, more);
        y += gfx_line_height(ui->g, FONT_SANS, c->px);
    }
    return y;
}

int view_beam(Ui *ui, const App *a, const Round *R, Rect r) {
    if (!interp_chooser(R->it)) return 0;
    const BeamShown b = shown_at(R);
    const int lh = gfx_line_height(ui->g, FONT_SANS, ui->small);
    int idx[MAX_DONE];
    int y = r.y + title(ui, R, r, &b, b.rr >= 0 ? finished(b.ch, b.rr, b.counted, idx) : 0);
    const Cols c = columns(ui, r);
    heads(ui, &c, y);
    y += lh + ui->pad / 3;
    const int bottom = r.y + r.h - 3 * lh - ui->pad;
    y = live_rows(ui, a, R, &c, y, bottom, &b);
    y = done_rows(ui, a, R, &c, y + ui->pad / 3, bottom, &b) + ui->pad / 2;
    char legend[400];
    snprintf(legend, sizeof legend, "Each round scores every live hypothesis h and token v by score(h) + log p(v | h) and "
             "keeps the %d best; an <eos> among them finishes its hypothesis. The answer is the finished one with the "
             "best sum \xc3\xb7 length.", chooser_choice(b.ch)->beam);
    y += ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->muted, (Rect){r.x, y, r.w, 3 * lh}, legend);
    return y - r.y;
}
