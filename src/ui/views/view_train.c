// view_train.c: the Training view: a small Transformer learns a task live while the class watches.
//
// It reads only the app's copy of the worker's snapshot (a->train_snap, see train_job.h) and
// the task chosen for the next run (a->train_task); the app starts, stops and saves. On screen:
// the task buttons, Start / Stop, "Save model" and "Step through it", a status line; the
// training loss and the accuracy over the steps (token accuracy on the training batches as a
// curve, held-out exact match as dots); and the cross-attention of one fixed example decoded
// greedily with the current weights, one heatmap per head, so the alignment between the
// characters written and the source characters can be seen forming.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "views.h"
#include "heat.h"

#define ELLIPSIS "\xe2\x80\xa6"
#define ARROW "\xe2\x86\x92"
#define LQ "\xe2\x80\x98"
#define RQ "\xe2\x80\x99"
#define DOT "  \xc2\xb7  "

static int lh_of(Ui *ui, FontFace f, int px) { return gfx_line_height(ui->g, f, px); }
static int text_w(Ui *ui, FontFace f, int px, const char *s) { return gfx_text_width(ui->g, f, px, s); }

static Rect rect_and(Rect a, Rect b) {
    const int x0 = a.x > b.x ? a.x : b.x, y0 = a.y > b.y ? a.y : b.y;
    const int x1 = a.x + a.w < b.x + b.w ? a.x + a.w : b.x + b.w, y1 = a.y + a.h < b.y + b.h ? a.y + a.h : b.y + b.h;
    return (Rect){x0, y0, x1 > x0 ? x1 - x0 : 0, y1 > y0 ? y1 - y0 : 0};
}

static Rgba mix(Rgba a, Rgba b, float t) {  // a, moved towards b by t
    return (Rgba){(unsigned char)(a.r + (b.r - a.r) * t), (unsigned char)(a.g + (b.g - a.g) * t),
                  (unsigned char)(a.b + (b.b - a.b) * t), 255};
}

// ---- a left-to-right flow of boxes that wraps at the right edge ----

typedef struct {
    Rect r;
    int x, y, row_h, gap, vgap;  // gaps between boxes and between rows
} Flow;

// Starts a new row unless w more pixels fit on this one.
static void flow_need(Flow *f, int w) {
    if (f->x > f->r.x && f->x + w > f->r.x + f->r.w) f->x = f->r.x, f->y += f->row_h + f->vgap, f->row_h = 0;
}

static Rect flow_next(Flow *f, int w, int h) {
    flow_need(f, w);
    if (w > f->r.w) w = f->r.w;
    Rect b = {f->x, f->y, w, h};
    f->x += w + f->gap;
    f->row_h = h > f->row_h ? h : f->row_h;
    return b;
}

static int flow_height(const Flow *f) { return f->y + f->row_h - f->r.y; }

// ---- controls ----

typedef enum { LOOK_PLAIN, LOOK_CHOSEN, LOOK_GO, LOOK_STOP } Look;

// A button; a disabled one is greyed and takes no clicks.
static void button(Ui *ui, Rect b, const char *label, Look look, bool enabled, Cmd cmd, int param) {
    const Theme *t = ui->th;
    Rgba bg = t->panel_alt, fg = t->text, edge = t->border;
    if (look == LOOK_CHOSEN || look == LOOK_GO) bg = edge = t->accent, fg = t->on_accent;
    if (look == LOOK_STOP) bg = edge = t->error_bg, fg = t->error_text;
    if (!enabled) {
        bg = mix(bg, t->panel, look == LOOK_PLAIN ? 0.5f : 0.45f), edge = mix(edge, t->panel, 0.5f);
        if (look == LOOK_PLAIN) fg = mix(t->text, t->panel, 0.6f);
    }
    gfx_rect(ui->g, b, bg);
    gfx_frame(ui->g, b, t->line, edge);
    const FontFace f = look == LOOK_PLAIN ? FONT_SANS : FONT_BOLD;
    const int w = text_w(ui, f, ui->px, label), inner = b.w - ui->pad;
    ui_text_fit(ui, f, ui->px, fg, b.x + (w < inner ? (b.w - w) / 2 : ui->pad / 2),
                b.y + (b.h - lh_of(ui, f, ui->px)) / 2, label, inner);
    if (enabled) ui_hot(ui, b, cmd, param);
}

// The task buttons, Start / Stop, Save and "Step through it". Returns the height used.
static int controls(Ui *ui, const App *a, Rect r) {
    const TrainSnapshot *s = &a->train_snap;
    const bool run = s->running, done = !run && s->steps > 0;
    const int bh = lh_of(ui, FONT_BOLD, ui->px) + ui->pad, bpad = ui->pad * 3 / 2;
    Flow f = {r, r.x, r.y, 0, ui->pad / 2 + 2, ui->pad / 2 + 2};
    int tw[TASK_COUNT], group = 0;
    for (int k = 0; k < TASK_COUNT; k++)  // sized for bold, which the chosen one is
        if (!task_classes((Task)k)) tw[k] = text_w(ui, FONT_BOLD, ui->px, task_names[k]) + bpad, group += tw[k] + f.gap;
    int sw = text_w(ui, FONT_BOLD, ui->px, "Start training");  // one width whatever it says
    const int w2 = text_w(ui, FONT_BOLD, ui->px, "Stopping" ELLIPSIS), lw = text_w(ui, FONT_BOLD, ui->px, "Task");
    sw = (sw > w2 ? sw : w2) + bpad;
    const int save_w = text_w(ui, FONT_SANS, ui->px, "Save model") + bpad;
    const int use_w = text_w(ui, FONT_SANS, ui->px, "Step through it") + bpad;
    const int rest = ui->pad + sw + save_w + use_w + 2 * f.gap;
    const bool label = group + lw + f.gap + rest <= r.w || group + rest > r.w;  // unless it alone breaks the row
    flow_need(&f, group + (label ? lw + f.gap : 0));
    if (label) {
        Rect l = flow_next(&f, lw, bh);
        gfx_text(ui->g, FONT_BOLD, ui->px, run ? ui->th->muted : ui->th->text, l.x,
                 l.y + (bh - lh_of(ui, FONT_BOLD, ui->px)) / 2, "Task");
    }
    for (int k = 0; k < TASK_COUNT; k++)  // the window trains the standard encoder-decoder: sequence tasks
        if (!task_classes((Task)k)) button(ui, flow_next(&f, tw[k], bh), task_names[k], a->train_task == (Task)k ? LOOK_CHOSEN : LOOK_PLAIN, !run,
               CMD_TRAIN_TASK, k);
    f.x += ui->pad;  // the main button stands apart
    const char *go = s->stopping ? "Stopping" ELLIPSIS : run ? "Stop" : "Start training";
    button(ui, flow_next(&f, sw, bh), go, run ? LOOK_STOP : LOOK_GO, !s->stopping, CMD_TRAIN_TOGGLE, 0);
    button(ui, flow_next(&f, save_w, bh), "Save model", LOOK_PLAIN, done, CMD_TRAIN_SAVE, 0);
    button(ui, flow_next(&f, use_w, bh), "Step through it", LOOK_PLAIN, done, CMD_TRAIN_USE, 0);
    return flow_height(&f);
}

// "1:05" or "1:02:03".
static void clock_str(double seconds, char *buf, size_t n) {
    const int t = (int)seconds;
    if (t >= 3600) snprintf(buf, n, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    else snprintf(buf, n, "%d:%02d", t / 60, t % 60);
}

// The facts of the run, as pieces that wrap whole. Returns the height used.
static int status(Ui *ui, const App *a, Rect r) {
    const TrainSnapshot *s = &a->train_snap;
    char p[6][96], t[32];
    int n = 0, held = -1;
    snprintf(p[n++], sizeof p[0], "%s: %s %d", task_names[s->task],
             s->running ? "step" : "stopped at step", s->steps);
    if (s->seconds > 0) snprintf(p[n++], sizeof p[0], "%.0f steps/s", s->steps / s->seconds);
    snprintf(p[n++], sizeof p[0], "learning rate %.2g", (double)s->lr);
    snprintf(p[n++], sizeof p[0], "d_model %d, %d heads, %d+%d layers", s->cfg.d_model, s->cfg.nhead,
             s->cfg.num_encoder_layers, s->cfg.num_decoder_layers);
    clock_str(s->seconds, t, sizeof t);
    snprintf(p[n++], sizeof p[0], "%s elapsed", t);
    held = n;
    if (s->n_evals > 0)
        snprintf(p[n++], sizeof p[0], "held-out %.1f%% at step %d", 100.0 * s->eval[s->n_evals - 1],
                 s->eval_step[s->n_evals - 1]);
    else snprintf(p[n++], sizeof p[0], "held-out: not checked yet");
    const int slh = lh_of(ui, FONT_SANS, ui->px), dw = text_w(ui, FONT_SANS, ui->px, DOT);
    Flow f = {r, r.x, r.y, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        const FontFace face = i == 0 || (i == held && s->n_evals > 0) ? FONT_BOLD : FONT_SANS;
        const int w = text_w(ui, face, ui->px, p[i]);
        if (i > 0 && f.x + dw + w <= r.x + r.w)  // a separator, or a new line
            f.x += gfx_text(ui->g, FONT_SANS, ui->px, ui->th->muted, f.x, f.y, DOT);
        else if (i > 0)
            f.x = r.x, f.y += f.row_h, f.row_h = 0;
        Rect b = flow_next(&f, w, slh);
        if (b.y + slh > r.y + r.h) break;
        ui_text_fit(ui, face, ui->px, ui->th->text, b.x, b.y, p[i], b.w);
    }
    return flow_height(&f);
}

// The worker's error, in the theme's error colours. Returns the height used.
static int error_box(Ui *ui, const char *msg, Rect r) {
    if (!msg[0]) return 0;
    const Rect in = {r.x + ui->pad / 2, r.y + ui->pad / 4, r.w - ui->pad, r.h};
    const int h = ui_text_wrap(ui, FONT_BOLD, ui->px, ui->th->error_text, (Rect){-100000, 0, in.w, r.h}, msg);
    gfx_rect(ui->g, (Rect){r.x, r.y, r.w, h + ui->pad / 2}, ui->th->error_bg);
    ui_text_wrap(ui, FONT_BOLD, ui->px, ui->th->error_text, in, msg);
    return h + ui->pad / 2;
}

// Before anything has run: what will happen, and how to start it.
static void explain(Ui *ui, const App *a, Rect r) {
    const Task task = a->train_task;
    const TrainConfig c = train_defaults(task);
    char out[64] = "", msg[2000];
    task_solve(task, train_example(task), out, sizeof out);
    // A GPT lesson's reader may expect its own model here: say what is trained, and where a GPT is.
    const bool gpt = a->loaded && program_decoder_only(&a->session.lesson.program);
    const char *words = "A language model of English words";  // the title of lessons/text-model.md
    char where[160];
    if (strcmp(a->source, words)) snprintf(where, sizeof where, "the lesson " LQ "%s" RQ " says", words);
    else snprintf(where, sizeof where, "this lesson says");
    snprintf(msg, sizeof msg,
             "%s%s%s"
             "Press Space or click Start training to train a small Transformer (d_model %d, %d heads, "
             "%d+%d layers) from random weights on the %s task, here in the window.\n\n"
             "Choose the task first with the buttons or Up/Down. While it learns, the loss falls and the "
             "accuracy rises; every few hundred steps it is checked on held-out examples it never trains on. "
             "Below the curves, one fixed example, " LQ "%s" RQ " " ARROW " " LQ "%s" RQ ", is decoded every few "
             "steps, with the cross-attention of each head: watch each output character learn where to look "
             "in the source.\n\n"
             "Space stops it. Then Save model writes it to ./stepformer-%s.safetensors, and Step through "
             "it opens its forward pass in the other views.",
             gpt ? "This lesson's model is decoder-only, a GPT. This view trains the course's task models, which "
                   "are encoder-decoders. The command line trains a GPT on the lines of any text file: stepformer "
                   "train --task text --data FILE (" : "",
             gpt ? where : "", gpt ? " how its model was made).\n\n" : "",
             c.model.d_model, c.model.nhead, c.model.num_encoder_layers, c.model.num_decoder_layers,
             task_names[task], train_example(task), out, task_names[task]);
    ui_text_wrap(ui, FONT_SANS, ui->px, ui->th->text, r, msg);
}

// ---- plots ----

typedef struct {
    Rect p;          // the plotting area inside the axes
    double x1, y1;   // x runs 0..x1 (steps), y 0..y1
} Axes;

static int ax_x(const Axes *A, double v) { return A->p.x + (int)lround(v / A->x1 * (A->p.w - 1)); }
static int ax_y(const Axes *A, double v) {
    if (v > A->y1) v = A->y1;
    return A->p.y + A->p.h - 1 - (int)lround(v / A->y1 * (A->p.h - 1));
}

// The smallest of 1, 2, 2.5, 5 times a power of ten that cuts `range` into at most n parts.
static double nice_step(double range, int n) {
    if (n < 1) n = 1;
    if (!(range > 0) || !isfinite(range)) return 1;
    static const double m[] = {1, 2, 2.5, 5};
    for (double p = pow(10.0, floor(log10(range / n)) - 1);; p *= 10)
        for (int i = 0; i < 4; i++)
            if (range / (m[i] * p) <= n + 1e-9) return m[i] * p;
}

// The largest of 1, 2, 2.5, 5 times a power of ten that is not above v.
static double nice_below(double v) {
    const double p = pow(10.0, floor(log10(v)));
    static const double m[] = {5, 2.5, 2, 1};
    for (int i = 0; i < 4; i++)
        if (m[i] * p <= v * (1 + 1e-9)) return m[i] * p;
    return p;
}

static void tick_label(char *buf, size_t n, double v, double step, bool percent) {
    if (percent) snprintf(buf, n, "%.0f%%", v);
    else if (step >= 1) snprintf(buf, n, v >= 10000 && fmod(v, 1000) == 0 ? "%.0fk" : "%.0f", v >= 10000 ? v / 1000 : v);
    else snprintf(buf, n, step >= 0.1 ? "%.1f" : "%.2f", v);
}

// Horizontal grid lines and their labels at the left, `gap` from the axis; the 0 sits above the
// x axis, clear of the step labels under it.
static void y_ticks(Ui *ui, const Axes *A, double step, bool percent, int gap) {
    const int slh = lh_of(ui, FONT_SANS, ui->small);
    char s[24];
    for (double v = 0; v <= A->y1 + step * 1e-6; v += step) {
        const int y = ax_y(A, v);
        if (v > 0) gfx_rect(ui->g, (Rect){A->p.x, y, A->p.w, 1}, ui->th->grid);
        tick_label(s, sizeof s, v, step, percent);
        gfx_text(ui->g, FONT_SANS, ui->small, ui->th->muted, A->p.x - gap - text_w(ui, FONT_SANS, ui->small, s),
                 v > 0 ? y - slh / 2 : y - slh + 2, s);
    }
}

// Step labels under the x axis, as many as fit without touching.
static void x_ticks(Ui *ui, const Axes *A, int right) {
    char s[24];
    tick_label(s, sizeof s, A->x1, 1, false);
    const int lw = text_w(ui, FONT_SANS, ui->small, s) + ui->pad * 2;
    const double step = nice_step(A->x1, A->p.w / (lw > 1 ? lw : 1));
    const int y = A->p.y + A->p.h + 3;
    for (double v = 0; v <= A->x1 + step * 1e-6; v += step) {
        const int x = ax_x(A, v);
        tick_label(s, sizeof s, v, step, false);
        const int w = text_w(ui, FONT_SANS, ui->small, s);
        gfx_rect(ui->g, (Rect){x, A->p.y + A->p.h, 1, 3}, ui->th->border);
        if (x + w / 2 <= right) gfx_text(ui->g, FONT_SANS, ui->small, ui->th->muted, x - w / 2, y, s);
    }
}

// Axes in r for y in 0..ymax (a little more unless a percentage) and x in 0..x1 steps, named
// `yname` and "step".
static Axes axes(Ui *ui, Rect r, const char *yname, double ymax, bool percent, double x1) {
    const Theme *t = ui->th;
    const int slh = lh_of(ui, FONT_SANS, ui->small), bottom = slh + 5, top = slh / 2;
    const double y1 = percent ? ymax : ymax * 1.05;  // a little room above the highest point
    double step = nice_step(y1, (r.h - top - bottom) / (slh * 2));
    if (step > y1) step = nice_below(y1);  // at least one labelled line above 0
    Axes A = {{0}, x1 > 0 ? x1 : 1, y1};
    char s[24];
    int tw = 0;
    for (double v = 0; v <= A.y1 + step * 1e-6; v += step) {
        tick_label(s, sizeof s, v, step, percent);
        const int w = text_w(ui, FONT_SANS, ui->small, s);
        tw = w > tw ? w : tw;
    }
    const int w0 = text_w(ui, FONT_SANS, ui->small, "0"), ws = text_w(ui, FONT_SANS, ui->small, "step");
    const int gap = w0 / 2 + 4;
    int left = slh + 4 + tw + gap;
    left = left > ws + w0 / 2 + 10 ? left : ws + w0 / 2 + 10;
    tick_label(s, sizeof s, A.x1, 1, false);
    const int right = text_w(ui, FONT_SANS, ui->small, s) / 2 + 2;
    A.p = (Rect){r.x + left, r.y + top, r.w - left - right, r.h - top - bottom};
    if (A.p.w < 8 || A.p.h < 8) return A;
    y_ticks(ui, &A, step, percent, gap);
    x_ticks(ui, &A, r.x + r.w);
    gfx_rect(ui->g, (Rect){A.p.x, A.p.y, t->line, A.p.h}, t->border);
    gfx_rect(ui->g, (Rect){A.p.x, A.p.y + A.p.h - t->line, A.p.w, t->line}, t->border);
    const int nw = text_w(ui, FONT_SANS, ui->small, yname);
    if (nw <= A.p.h) gfx_text_up(ui->g, FONT_SANS, ui->small, t->muted, r.x, A.p.y + (A.p.h + nw) / 2, yname);
    gfx_text(ui->g, FONT_SANS, ui->small, t->muted, A.p.x - w0 / 2 - 8 - ws, A.p.y + A.p.h + 3, "step");
    return A;
}

// A curve of n points, point k at the end of the `every` steps it averages; points that share a
// pixel column are drawn as one vertical stroke, so the cost follows the width, not n.
static void curve(Ui *ui, const Axes *A, const float *v, int n, int every, float scale, Rgba c) {
    const int thick = ui->px / 10 > 2 ? ui->px / 10 : 2;
    int cx = -1, lo = 0, hi = 0, last = 0, px = -1, py = 0;
    for (int k = 0; k <= n; k++) {
        const int x = k < n ? ax_x(A, (double)(k + 1) * every) : -2, y = k < n ? ax_y(A, v[k] * scale) : 0;
        if (x == cx) {
            lo = y < lo ? y : lo, hi = y > hi ? y : hi, last = y;
            continue;
        }
        if (cx >= 0) {  // flush the column just finished
            for (int d = 0; d < thick; d++) {
                if (px >= 0) gfx_line(ui->g, px, py + d, cx, lo + d, c), gfx_line(ui->g, px, py + d, cx, hi + d, c);
                gfx_line(ui->g, cx + d, lo, cx + d, hi + thick - 1, c);
            }
            px = cx, py = last;
        }
        cx = x, lo = hi = last = y;
    }
}

// A square marker with a dark edge, visible on the curve and the grid.
static void marker(Ui *ui, int x, int y, int size) {
    Rect m = {x - size / 2, y - size / 2, size, size};
    gfx_rect(ui->g, m, ui->th->lit);
    gfx_frame(ui->g, m, size >= 10 ? 2 : 1, ui->th->text);
}

// The plot's title line: the name in bold, then a note (its short form if the long one does not fit).
static void plot_title(Ui *ui, Rect r, const char *title, const char *note, const char *brief) {
    const int w = ui_text_fit(ui, FONT_BOLD, ui->small, ui->th->text, r.x, r.y, title, r.w);
    const char *n = text_w(ui, FONT_SANS, ui->small, note) <= r.w - w ? note : brief;
    ui_text_fit(ui, FONT_SANS, ui->small, ui->th->muted, r.x + w, r.y, n, r.w - w);
}

typedef struct {
    const char *text, *brief;  // the short form when the long one does not fit
    bool dot;                  // a held-out marker; else a short line of the curve's colour
} Key;

static const Key loss_keys[] = {{"cross-entropy on the training batches", "cross-entropy", false}};
static const Key acc_keys[] = {{"token accuracy (training batches)", "token accuracy", false},
                               {"held-out exact match", "held-out exact", true}};

// A legend whose entries wrap whole. Returns the height used; draws only when `draw`.
static int legend(Ui *ui, Rect r, const Key *k, int n, bool draw) {
    const int slh = lh_of(ui, FONT_SANS, ui->small), sw = ui->small * 3 / 2, m = ui->small * 2 / 3;
    Flow f = {r, r.x, r.y, 0, ui->pad * 2, 0};
    for (int i = 0; i < n; i++) {
        const int kw = k[i].dot ? m + 2 : sw;
        const char *t = kw + 6 + text_w(ui, FONT_SANS, ui->small, k[i].text) <= r.w ? k[i].text : k[i].brief;
        const Rect p = flow_next(&f, kw + 6 + text_w(ui, FONT_SANS, ui->small, t), slh);
        if (!draw) continue;
        if (k[i].dot) marker(ui, p.x + m / 2 + 1, p.y + slh / 2, m);
        else gfx_rect(ui->g, (Rect){p.x, p.y + slh / 2 - 1, sw, 3}, ui->th->accent);
        ui_text_fit(ui, FONT_SANS, ui->small, ui->th->text, p.x + kw + 6, p.y, t, p.w - kw - 6);
    }
    return flow_height(&f);
}

// The height of the title and legend above the axes of a plot w pixels wide.
static int plot_head(Ui *ui, int w, bool acc) {
    const Rect r = {0, 0, w, 1 << 20};
    return lh_of(ui, FONT_BOLD, ui->small) +
           (acc ? legend(ui, r, acc_keys, 2, false) : legend(ui, r, loss_keys, 1, false)) + ui->pad / 2;
}

static double x_extent(const TrainSnapshot *s) {
    double x1 = s->steps > (double)s->n_points * s->every ? s->steps : (double)s->n_points * s->every;
    if (s->n_evals > 0 && s->eval_step[s->n_evals - 1] > x1) x1 = s->eval_step[s->n_evals - 1];
    return x1 > 10 ? x1 : 10;
}

// The loss curve in r; its axes start `head` pixels down.
static void loss_plot(Ui *ui, const TrainSnapshot *s, Rect r, int head) {
    char note[64] = "";
    if (s->n_points > 0) snprintf(note, sizeof note, "   now %.3f", (double)s->loss[s->n_points - 1]);
    gfx_clip(ui->g, r);
    plot_title(ui, r, "Training loss", note, note);
    legend(ui, (Rect){r.x, r.y + lh_of(ui, FONT_BOLD, ui->small), r.w, r.h}, loss_keys, 1, true);
    float mx = 0;
    for (int k = 0; k < s->n_points; k++) mx = s->loss[k] > mx && isfinite(s->loss[k]) ? s->loss[k] : mx;
    const Axes A = axes(ui, (Rect){r.x, r.y + head, r.w, r.h - head}, "loss", mx > 0 ? mx : 1.0, false, x_extent(s));
    if (A.p.w < 8 || A.p.h < 8) return;
    gfx_clip(ui->g, rect_and(rect_inset(A.p, -3), r));
    curve(ui, &A, s->loss, s->n_points, s->every, 1.0f, ui->th->accent);
    gfx_clip(ui->g, r);
}

// Token accuracy as a curve, held-out exact match as joined markers, on 0-100%.
static void acc_plot(Ui *ui, const TrainSnapshot *s, Rect r, int head) {
    char note[64] = "", brief[32] = "";
    if (s->n_points > 0) {
        snprintf(note, sizeof note, "   now %.1f%% of tokens right", 100.0 * s->acc[s->n_points - 1]);
        snprintf(brief, sizeof brief, "   now %.1f%%", 100.0 * s->acc[s->n_points - 1]);
    }
    gfx_clip(ui->g, r);
    plot_title(ui, r, "Accuracy", note, brief);
    legend(ui, (Rect){r.x, r.y + lh_of(ui, FONT_BOLD, ui->small), r.w, r.h}, acc_keys, 2, true);
    const Axes A = axes(ui, (Rect){r.x, r.y + head, r.w, r.h - head}, "accuracy", 100.0, true, x_extent(s));
    if (A.p.w < 8 || A.p.h < 8) return;
    gfx_clip(ui->g, rect_and(rect_inset(A.p, -ui->small), r));
    curve(ui, &A, s->acc, s->n_points, s->every, 100.0f, ui->th->accent);
    const Rgba join = mix(ui->th->text, ui->th->panel, 0.35f);
    for (int i = 1; i < s->n_evals; i++)
        gfx_line(ui->g, ax_x(&A, s->eval_step[i - 1]), ax_y(&A, 100.0 * s->eval[i - 1]), ax_x(&A, s->eval_step[i]),
                 ax_y(&A, 100.0 * s->eval[i]), join);
    for (int i = 0; i < s->n_evals; i++)
        marker(ui, ax_x(&A, s->eval_step[i]), ax_y(&A, 100.0 * s->eval[i]), ui->small * 2 / 3);
    gfx_clip(ui->g, r);
}

// ---- the attention of the fixed example ----

// Identifies the example's numbers beyond `version` (which restarts with every run).
static unsigned data_hash(const float *x, size_t n) {
    unsigned h = 2166136261u;
    const unsigned char *b = (const unsigned char *)x;
    for (size_t i = 0; i < n * sizeof *x; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

typedef struct {
    int n, cols;   // heads drawn (the first n), columns of the grid
    bool compact;  // bare cells, no labels
} HeadGrid;

// The largest cell side n labelled heatmaps of T x S can have in r, and the columns for it.
static float grid_side(Ui *ui, int n, int T, int S, Rect r, int *cols) {
    const int lh = lh_of(ui, FONT_SANS, ui->small);
    const int ow = text_w(ui, FONT_SANS, ui->small, "<bos>") + ui->small * 3 +
                   text_w(ui, FONT_SANS, ui->small, "-0.0000") + ui->pad + 8;  // labels, colour bar
    const int oh = lh_of(ui, FONT_BOLD, ui->px) + 2 * lh + 8 + ui->pad;       // title, labels, readout
    float best = -1;
    for (int c = 1; c <= n; c++) {
        const int rows = (n + c - 1) / c;
        const float side = fminf((float)(r.w / c - ow) / S, (float)(r.h / rows - oh) / T);
        if (side > best) best = side, *cols = c;
    }
    return best;
}

// Every head with its labels if the cells can stay legible; else as many heads as can; if not
// even one can, every head as bare cells.
static HeadGrid head_grid(Ui *ui, int H, int T, int S, Rect r) {
    const float min = fmaxf(4.0f, ui->small * 0.5f);
    int cols = 1;
    for (int n = H; n >= 1; n--)
        if (grid_side(ui, n, T, S, r, &cols) >= min) return (HeadGrid){n, cols, false};
    const int slh = lh_of(ui, FONT_SANS, ui->small);
    float best = -1;
    for (int c = 1; c <= H; c++) {
        const int rows = (H + c - 1) / c;
        const float side = fminf((float)(r.w / c) / S, (float)(r.h / rows - slh) / T);
        if (side > best) best = side, cols = c;
    }
    return (HeadGrid){H, cols, true};
}

static void heads_grid(Ui *ui, const App *a, HeadGrid G, Rect r) {
    const TrainSnapshot *s = &a->train_snap;
    const int H = s->heads, T = s->T, S = s->S;
    const char *rows[TRAIN_TOKENS], *cols[TRAIN_TOKENS];
    for (int i = 0; i < T; i++) rows[i] = s->out_tok[i];
    for (int i = 0; i < S; i++) cols[i] = s->src_tok[i];
    const unsigned hash = data_hash(s->cross, (size_t)H * T * S);
    const int nr = (G.n + G.cols - 1) / G.cols, cw = r.w / G.cols, ch = r.h / nr;
    for (int h = 0; h < G.n; h++) {
        Rect cell = {r.x + (h % G.cols) * cw, r.y + (h / G.cols) * ch, cw - ui->pad, ch - ui->pad / 2};
        char title[32];
        snprintf(title, sizeof title, "head %d", h + 1);
        HeatSpec spec = {.title = title, .shape = {3, {H, T, S}}, .kind = TK_PROBS,
                         .data = s->cross + (size_t)h * T * S, .rows = T, .cols = S, .range = s->cross,
                         .range_n = (size_t)H * T * S, .row_labels = rows, .n_row_labels = T,
                         .col_labels = cols, .n_col_labels = S, .row_name = "decoder token", .col_name = "source",
                         .key = {s->version, (unsigned)h, 0x7A1, hash}, .compact = G.compact};
        heat_draw(ui, &spec, cell);
    }
}

static void attention(Ui *ui, const App *a, Rect r) {
    const TrainSnapshot *s = &a->train_snap;
    const int lh = lh_of(ui, FONT_BOLD, ui->px), slh = lh_of(ui, FONT_SANS, ui->small);
    char head[200], what[300];
    snprintf(head, sizeof head, LQ "%s" RQ " " ARROW " " LQ "%s" RQ "   (decoded at step %d)", s->src, s->out,
             s->example_step);
    if (!s->heads) snprintf(head, sizeof head, "The example " LQ "%s" RQ, train_example(s->task));
    int used = ui_text_wrap(ui, FONT_BOLD, ui->px, ui->th->text, (Rect){r.x, r.y, r.w, 2 * lh}, head);
    r.y += used, r.h -= used;
    const bool ok = s->heads > 0 && s->T > 0 && s->S > 0 && s->T <= TRAIN_TOKENS && s->S <= TRAIN_TOKENS &&
                    s->heads * s->T * s->S <= TRAIN_ATT;
    const HeadGrid G = ok ? head_grid(ui, s->heads, s->T, s->S, (Rect){r.x, r.y, r.w, r.h - 3 * slh - ui->pad / 2})
                          : (HeadGrid){0, 1, true};
    snprintf(what, sizeof what, "%s", ok ? "Cross-attention, last decoder layer: a row per token written so far (it "
                                           "picks the next), a column per source character."
                                         : "Nothing decoded yet: the example is decoded with the current weights "
                                           "every few steps.");
    if (ok && G.n < s->heads)
        snprintf(what + strlen(what), sizeof what - strlen(what), " Showing %d of %d heads: a larger window shows all.",
                 G.n, s->heads);
    used = ui_text_wrap(ui, FONT_SANS, ui->small, ui->th->muted, (Rect){r.x, r.y, r.w, 3 * slh}, what);
    r.y += used + ui->pad / 2, r.h -= used + ui->pad / 2;
    if (ok && r.h > 3 * slh) heads_grid(ui, a, G, r);
}

// ---- the view ----

// The two plots side by side (their axes level), or stacked when narrow.
static void plots(Ui *ui, const TrainSnapshot *s, Rect r, bool side) {
    const int w = side ? (r.w - 2 * ui->pad) / 2 : r.w;
    const int h1 = plot_head(ui, w, false), h2 = plot_head(ui, w, true), head = h1 > h2 ? h1 : h2;
    if (side) {
        loss_plot(ui, s, (Rect){r.x, r.y, w, r.h}, head);
        acc_plot(ui, s, (Rect){r.x + w + 2 * ui->pad, r.y, r.w - w - 2 * ui->pad, r.h}, head);
    } else {
        const int h = (r.h - ui->pad) / 2;
        loss_plot(ui, s, (Rect){r.x, r.y, r.w, h}, h1);
        acc_plot(ui, s, (Rect){r.x, r.y + h + ui->pad, r.w, r.h - h - ui->pad}, h2);
    }
}

void view_train(Ui *ui, const App *a, Rect r) {
    Rect in = ui_panel(ui, r, "Training: watch a Transformer learn");
    const TrainSnapshot *s = &a->train_snap;
    gfx_clip(ui->g, in);
    int h = controls(ui, a, in) + ui->pad;
    in.y += h, in.h -= h;
    const bool fresh = s->steps == 0 && !s->running;
    if (!fresh) {
        h = status(ui, a, in) + ui->pad / 2;
        in.y += h, in.h -= h;
    }
    if (s->error[0]) {
        h = error_box(ui, s->error, in) + ui->pad / 2;
        in.y += h, in.h -= h;
    }
    if (fresh) {
        explain(ui, a, in);
    } else {
        const bool side = in.w >= 2 * 13 * ui->px;
        const int slh = lh_of(ui, FONT_SANS, ui->small);
        int ph = (int)(in.h * (side ? 0.33f : 0.5f));
        ph = ph < 9 * slh ? (9 * slh < in.h ? 9 * slh : in.h) : ph;
        plots(ui, s, (Rect){in.x, in.y, in.w, ph}, side);
        gfx_clip(ui->g, in);
        const int gap = ui->pad;
        gfx_rect(ui->g, (Rect){in.x, in.y + ph + gap / 2, in.w, 1}, ui->th->grid);
        attention(ui, a, (Rect){in.x, in.y + ph + gap, in.w, in.h - ph - gap});
    }
    gfx_unclip(ui->g);
}
