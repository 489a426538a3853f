// cmd_bench.c: `bench` measures every path a user waits for, stepformer and its peer side by
// side in one run (bench.h), and prints medians, peak memory and the ratio of each; --json
// gives the same as one JSON object. Figures are printed, never asserted.
#include <cjson/cJSON.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "data.h"
#include "pass_timing.h"
#include "cli.h"
#include "window.h"

static const char bench_usage[] =
    "usage: stepformer bench [--only LIST] [--repeat N] [--json]\n"
    "       stepformer bench --scale [--json]\n"
    "       stepformer bench --ui [--repeat FRAMES]\n"
    "\n"
    "Measures, in one run, each path below for stepformer and for its peer, and prints the\n"
    "median time, the peak resident memory and the ratio (stepformer's time / the peer's):\n"
    "  forward   the base model (d_model 512, 8 heads, 6+6 layers, d_ff 2048, vocab 1000, random\n"
    "            weights), batch 1, teacher forcing, source and target of 32 and of 128 tokens\n"
    "  greedy    the base model, an 87-token source, 120 tokens generated (every round runs),\n"
    "            by the plain decoder and by the cached one; PyTorch runs the tutorial's\n"
    "            greedy_decode, which re-runs the decoder over the whole prefix each round\n"
    "  train     one training step of a tiny model (d_model 64, 4 heads, 2+2 layers, d_ff 256,\n"
    "            vocab 32, length 16, batch 64): forward, loss, backward, Adam\n"
    "  matmul    every matrix-product shape of the base forward at length 32, in GFLOP/s, run\n"
    "            as the forward runs it (a product over heads: the heads side by side)\n"
    "The peer is PyTorch at its fastest thread setting (scripts/bench_torch.py, with Debian's\n"
    "python3-torch; without it, stepformer's figures are printed alone) and, for matmul shapes,\n"
    "OpenBLAS's cblas_sgemm at its best (loaded at run time if installed): each thread count\n"
    "inside a product, and for the heads also one thread a product, the heads side by side.\n"
    "Each stepformer measurement runs in a process of its own, so its peak memory is its own.\n"
    "Each path also gets the least time its work could take at this machine's fused multiply-add\n"
    "peak, measured at the start of the run and again before each path (the highest counts).\n"
    "\n"
    "  --only LIST   some of forward, greedy, train, matmul (comma-separated), or gpt2: GPT-2\n"
    "                small's configuration with random weights (a hub folder in /tmp, both sides\n"
    "                read it): the forward at 128 and 1024 tokens, 32 tokens generated after a\n"
    "                128-token prompt; or browser: the\n"
    "                three passes the browser's benchmark page times (index.html?bench=1), here on\n"
    "                one thread, to compare with the page (scripts/web.sh bench)\n"
    "  --repeat N    timed runs of each path (default: forward 20, greedy 3, train 50)\n"
    "  --json        one JSON object instead of the table\n"
    "  --no-peer     stepformer's figures alone (no PyTorch, no OpenBLAS)\n"
    "  --scale       how stepformer's forward time and memory grow: length 16 to 512, layers\n"
    "                2 to 12, d_model 256 to 1024 (docs/benchmarks.md's scale table); then the window on\n"
    "                512 tokens: every step to its frame after the pass is traced, and its memory\n"
    "  --ui          the window: frame times of the busiest views at 1920x1080, off screen; then\n"
    "                GPT-2 small's configuration at 1023 tokens under --trace-mb 512, then 2048 (the\n"
    "                default with 8 GB of memory): every step to its frame, recomputing what the budget\n"
    "                let go (at 512 MB also each after a reader's pause, in which the idle window readies\n"
    "                the next stage), a click on each block of the map, five views redrawn, and the\n"
    "                peak memory\n";

enum { SECTION_FORWARD = 1, SECTION_GREEDY = 2, SECTION_TRAIN = 4, SECTION_MATMUL = 8, SECTION_ALL = 15,
       SECTION_BROWSER = 16, SECTION_GPT2 = 32 };  // the last two only when asked for

static bool parse_only(const char *list, unsigned *out) {
    static const char *const names[] = {"forward", "greedy", "train", "matmul", "browser", "gpt2"};
    enum { N_NAMES = sizeof names / sizeof names[0] };
    *out = 0;
    for (const char *p = list; *p;) {
        const size_t n = strcspn(p, ",");
        size_t k = 0;
        while (k < N_NAMES && !(strlen(names[k]) == n && !strncmp(p, names[k], n))) k++;
        if (k == N_NAMES) return false;
        *out |= 1u << k;
        p += n + (p[n] == ',');
    }
    return *out != 0;
}

static cJSON *figure_json(const Figure *f) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "median_ms", f->median_ms);
    cJSON_AddNumberToObject(o, "min_ms", f->min_ms);
    cJSON_AddNumberToObject(o, "peak_rss_mb", f->rss_mb);
    if (f->gflop > 0) cJSON_AddNumberToObject(o, "gflop", f->gflop);
    if (f->products_ms > 0)
        cJSON_AddNumberToObject(o, "products_median_ms", f->products_ms), cJSON_AddNumberToObject(o, "products_gflop", f->products_gflop);
    cJSON_AddStringToObject(o, "setting", f->about);
    return o;
}

typedef struct {
    const char *name;    // what the row measures
    BenchCase c;
    double target;       // the bound on stepformer's time / PyTorch's (lower is better; 0: none)
    double peak_target;  // the least fraction of the machine's peak its work must run at (0: none)
    double mb_target;    // the most peak memory it may take, in MB (0: none)
} Row;

// The fraction of the machine's peak a run of `ms` reaches on `gflop` of work.
static double peak_fraction(double gflop, double ms, double peak) { return gflop / peak * 1e3 / ms; }

static double peak_again(double peak, cJSON *json);

// The peak a path's fractions use: `peak`, measured again (up to PEAK_RETRIES times, the
// highest counting) while the path's fastest run beats it, which no run can do: a neighbour
// slowed every peak loop so far. If it still beats the highest, the row gives no fraction.
enum { PEAK_RETRIES = 3 };
static double peak_for(const Figure *ours, double peak, cJSON *json) {
    for (int k = 0; k < PEAK_RETRIES && peak > 0 && peak_fraction(ours->gflop, ours->min_ms, peak) > 1; k++)
        peak = peak_again(peak, json);
    return peak;
}

// One path measured on both sides, as a row shows it.
typedef struct {
    const Row *row;
    bool have, peer;    // stepformer's figures, the peer's
    Figure ours, torch;
    char why[256], twhy[256];  // why either is missing
    double ratio;       // ours / the peer's median (0: not both)
    double peak;        // GFLOP/s on all cores the fractions use (0: none given)
    double top;         // the highest peak measured (beaten: the fastest run beat even this)
    bool beaten;
    bool reachable;     // the ratio target is within the peak: its work at the peak fits in it
} Measured;

// Whether any program could meet the row's ratio target in this run: at most 0.5x the peer's
// time means doing the work in half its time, and no program does it faster than at the
// machine's peak. Unknown (so true) without the peer, the work or a trusted peak.
static bool ratio_reachable(const Measured *m) {
    if (!m->peer || m->peak <= 0 || m->ours.gflop <= 0 || m->row->target <= 0) return true;
    return m->ours.gflop / m->peak * 1e3 <= m->row->target * m->torch.median_ms;
}

// The fraction a row's peak target is judged on, at the median: GPT-2's, whose forward is timed
// stage by stage, on its matrix products ("at least 75% of the machine's fused multiply-add peak
// in the matrix products", as the issue words it), every other on its whole work.
static double judged_fraction(const Measured *m) {
    const Figure *f = &m->ours;
    return f->products_ms > 0 ? peak_fraction(f->products_gflop, f->products_ms, m->peak)
                              : peak_fraction(f->gflop, f->median_ms, m->peak);
}

static void row_json(const Measured *m, cJSON *json) {
    const Row *row = m->row;
    const Figure *ours = &m->ours;
    const bool fractions = m->have && ours->gflop > 0 && m->peak > 0;
    cJSON *o = cJSON_AddObjectToObject(json, row->name);
    if (m->have) cJSON_AddItemToObject(o, "stepformer", figure_json(ours));
    else cJSON_AddStringToObject(o, "stepformer_error", m->why);
    if (m->peer) cJSON_AddItemToObject(o, "pytorch", figure_json(&m->torch));
    else cJSON_AddStringToObject(o, "pytorch_error", m->twhy);
    if (m->ratio > 0) cJSON_AddNumberToObject(o, "ratio", m->ratio);
    if (row->target > 0) cJSON_AddNumberToObject(o, "target_ratio", row->target);
    if (m->ratio > 0 && row->target > 0) cJSON_AddBoolToObject(o, "target_met", m->ratio <= row->target);
    if (m->ratio > 0 && row->target > 0 && fractions) cJSON_AddBoolToObject(o, "target_reachable", m->reachable);
    if (fractions) {
        cJSON_AddNumberToObject(o, "peak_gflops", m->peak);  // the highest measured so far (peak_again)
        cJSON_AddNumberToObject(o, "ms_at_peak", ours->gflop / m->peak * 1e3);
        cJSON_AddNumberToObject(o, "peak_fraction", peak_fraction(ours->gflop, ours->median_ms, m->peak));
        cJSON_AddNumberToObject(o, "peak_fraction_best", peak_fraction(ours->gflop, ours->min_ms, m->peak));
        if (ours->products_ms > 0)
            cJSON_AddNumberToObject(o, "products_peak_fraction",
                                    peak_fraction(ours->products_gflop, ours->products_ms, m->peak));
    }
    if (m->beaten) cJSON_AddStringToObject(o, "peak_error", "the fastest run beat every peak loop measured: a neighbour slowed them");
    if (row->peak_target > 0) {
        cJSON_AddNumberToObject(o, "peak_target", row->peak_target);
        cJSON_AddStringToObject(o, "peak_target_on", ours->products_ms > 0 ? "matrix products" : "the whole pass");
    }
    if (fractions && row->peak_target > 0) cJSON_AddBoolToObject(o, "peak_target_met", judged_fraction(m) >= row->peak_target);
    if (row->mb_target > 0) cJSON_AddNumberToObject(o, "memory_target_mb", row->mb_target);
    if (m->have && row->mb_target > 0) cJSON_AddBoolToObject(o, "memory_target_met", ours->rss_mb < row->mb_target);
}

// The row's 'at peak' and 'of peak' lines: what the machine could do at best.
static void row_text_peak(const Measured *m) {
    const Row *row = m->row;
    const Figure *ours = &m->ours;
    if (m->beaten)
        printf("  of peak     not given: the fastest run beat the peak at every measurement (at most %.0f GFLOP/s;\n"
               "              %d more after the run), so a neighbour slowed them all; run bench again\n", m->top,
               PEAK_RETRIES);
    if (!m->have || ours->gflop <= 0 || m->peak <= 0) return;
    const double floor_ms = ours->gflop / m->peak * 1e3, frac = peak_fraction(ours->gflop, ours->median_ms, m->peak);
    printf("  at peak     %.2f ms: its %.2f GFLOP of %s at the machine's peak", floor_ms, ours->gflop,
           row->c.path == PATH_TRAIN ? "matrix products" : "work");
    if (m->peer) printf(" (%.2fx PyTorch's time)", floor_ms / m->torch.median_ms);
    const double judged = judged_fraction(m);
    const int dec = row->peak_target > 0 && fabs(judged - row->peak_target) < 0.005 ? 1 : 0;  // not "75%: NOT met"
    char verdict[64] = "";
    if (row->peak_target > 0)
        snprintf(verdict, sizeof verdict, "; target at least %.0f%%: %s", 100 * row->peak_target,
                 judged >= row->peak_target ? "met" : "NOT met");
    const bool apart = ours->products_ms > 0;  // the same pass timed stage by stage: its products apart
    printf("\n  of peak     %.*f%% at the median, %.0f%% in the fastest run%s\n", apart ? 0 : dec, 100 * frac,
           100 * peak_fraction(ours->gflop, ours->min_ms, m->peak), apart ? "" : verdict);
    if (apart)
        printf("  products    %.2f ms at the median for its %.2f GFLOP of matrix products: %.*f%% of peak%s;\n"
               "              the other stages (norms, scale, mask, softmax, GELU, ...) about %.2f ms\n",
               ours->products_ms, ours->products_gflop, dec, 100 * judged, verdict, ours->median_ms - ours->products_ms);
}

static void row_text(const Measured *m) {
    const Row *row = m->row;
    const Figure *ours = &m->ours;
    printf("%s\n", row->name);
    char rate[48] = "";
    if (m->have && ours->gflop > 0) snprintf(rate, sizeof rate, "; %.1f GFLOP/s", ours->gflop / ours->median_ms * 1e3);
    if (m->have)
        printf("  stepformer  median %9.2f ms  peak %6.0f MB  (%s%s)\n", ours->median_ms, ours->rss_mb, ours->about, rate);
    else printf("  stepformer  could not run: %s\n", m->why);
    if (m->peer)
        printf("  PyTorch     median %9.2f ms  peak %6.0f MB  (%s)\n", m->torch.median_ms, m->torch.rss_mb, m->torch.about);
    else printf("  %s\n", m->twhy);
    if (m->ratio > 0) {
        // Three decimals where two would round onto the target (0.504x: not 0.50x, NOT met).
        const int dec = row->target > 0 && fabs(m->ratio - row->target) < 0.005 ? 3 : 2;
        printf("  ratio       %.*fx PyTorch's time (%.2fx %s)", dec, m->ratio, m->ratio < 1 ? 1 / m->ratio : m->ratio,
               m->ratio < 1 ? "faster" : "slower");
        if (row->target > 0) printf("; target at most %.2fx: %s", row->target, m->ratio <= row->target ? "met" : "NOT met");
        if (!m->reachable)  // the 'at peak' line below gives the figure
            printf(",\n              and beyond this machine: its work at the peak takes %.2fx PyTorch's time",
                   m->ours.gflop / m->peak * 1e3 / m->torch.median_ms);
        printf("\n");
    }
    if (m->have && row->mb_target > 0)
        printf("  memory      peak %.0f MB; target under %.0f MB: %s\n", ours->rss_mb, row->mb_target,
               ours->rss_mb < row->mb_target ? "met" : "NOT met");
    row_text_peak(m);
}

// One path, both sides: a line of the table, or a member of json.
// *peak: this machine's measured GFLOP/s on all cores (0: unknown), for the row's floor; it
// rises if measured again here (peak_for).
static void bench_row(const Row *row, bool no_peer, double *peak, cJSON *json) {
    Measured m = {.row = row, .twhy = "PyTorch not measured (--no-peer)"};
    m.have = bench_ours(&row->c, &m.ours, m.why, sizeof m.why);
    m.peer = !no_peer && bench_torch(&row->c, &m.torch, m.twhy, sizeof m.twhy);
    m.ratio = m.have && m.peer ? m.ours.median_ms / m.torch.median_ms : 0;
    const bool work = m.have && m.ours.gflop > 0;
    m.top = work ? peak_for(&m.ours, *peak, json) : *peak;
    m.beaten = work && m.top > 0 && peak_fraction(m.ours.gflop, m.ours.min_ms, m.top) > 1;
    m.peak = m.beaten ? 0 : m.top;
    m.reachable = ratio_reachable(&m);
    *peak = m.top;
    if (json) row_json(&m, json);
    else row_text(&m);
}

// The browser page's passes (pass_timing.h) on one thread, in a child process: v[2k] and
// v[2k + 1] are pass k's median and least time.
static void task_browser(const void *arg, BenchReply *r) {
    const int runs = *(const int *)arg;
    char dir[4352];
    PassTiming t[PASS_TIMINGS];
    Err e = {{0}};
    omp_set_num_threads(1);
    r->ok = pass_timings(data_path("lessons", dir, sizeof dir), runs, t, &e);
    if (!r->ok) snprintf(r->why, sizeof r->why, "%s", e.msg);
    for (int k = 0; k < PASS_TIMINGS && r->ok; k++) r->v[2 * k] = t[k].median_ms, r->v[2 * k + 1] = t[k].min_ms;
    snprintf(r->about, sizeof r->about, "1 thread, gemm micro-kernel %s", sgemm_kernel_name());
}

static void bench_browser(int repeat, cJSON *json) {
    const int runs = repeat ? repeat : 10;
    const char *const *names = pass_timing_names;
    BenchReply r;
    double rss;
    const bool ok = bench_in_child(task_browser, &runs, &r, &rss);
    if (!json) printf("\nthe browser page's passes, natively on one thread (%s):\n", ok ? r.about : r.why);
    double native = 0, four = 0;
    if (bench_peak_page(&native, &four) && json)
        cJSON_AddNumberToObject(json, "browser_peak_native_gflops", native), cJSON_AddNumberToObject(json, "browser_peak_4_wide_gflops", four);
    if (!json && four > 0)
        printf("  one core's peak: %.1f GFLOP/s at %s, %.1f four floats wide with fused multiply-adds (the page's\n"
               "  vectors): the page's products can at best take %.2fx the native time\n", native, sgemm_kernel_name(),
               four, native / four);
    cJSON *rows = json ? cJSON_AddArrayToObject(json, "browser") : NULL;
    for (int k = 0; k < PASS_TIMINGS && ok; k++) {
        if (!json) printf("  %-44s median %8.2f ms  least %8.2f ms\n", names[k], r.v[2 * k], r.v[2 * k + 1]);
        cJSON *o = rows ? cJSON_CreateObject() : NULL;
        if (!o) continue;
        cJSON_AddStringToObject(o, "name", names[k]);
        cJSON_AddNumberToObject(o, "median_ms", r.v[2 * k]);
        cJSON_AddNumberToObject(o, "min_ms", r.v[2 * k + 1]);
        cJSON_AddItemToArray(rows, o);
    }
}

static void bench_matmul(bool no_peer, cJSON *json) {
    GemmShape s[16];
    const int n = bench_gemm_shapes(32, s, 16);
    double ours[16];
    BlasBest blas[16];
    char why[256] = "", bwhy[256] = "OpenBLAS not measured (--no-peer)";
    const bool have = bench_gemm_ours(s, n, ours, why, sizeof why);
    const bool peer = !no_peer && bench_gemm_openblas(s, n, blas, bwhy, sizeof bwhy);
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "matmul") : NULL;
    if (!json)
        printf("matmul shapes of the base forward, length 32 (C[M,N] = A[M,K] op(B)), GFLOP/s%s\n"
               "  op      batch     M     N     K  op(B)  count  stepformer  OpenBLAS (threads)          ratio\n",
               peer ? "" : " (OpenBLAS not measured)");
    for (int i = 0; i < n; i++) {
        const double r = have && peer && blas[i].gflops > 0 ? blas[i].gflops / ours[i] : 0;  // time ratio
        if (arr) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "op", s[i].op);
            cJSON_AddNumberToObject(o, "batch", s[i].batch);
            cJSON_AddNumberToObject(o, "M", s[i].M), cJSON_AddNumberToObject(o, "N", s[i].N);
            cJSON_AddNumberToObject(o, "K", s[i].K), cJSON_AddBoolToObject(o, "b_transposed", s[i].bt);
            if (have) cJSON_AddNumberToObject(o, "stepformer_gflops", ours[i]);
            if (peer) {
                cJSON_AddNumberToObject(o, "openblas_gflops", blas[i].gflops);
                cJSON_AddNumberToObject(o, "openblas_threads", blas[i].threads);
                cJSON_AddBoolToObject(o, "openblas_side_by_side", blas[i].side_by_side);
            }
            if (r > 0) cJSON_AddNumberToObject(o, "ratio", r);
            cJSON_AddItemToArray(arr, o);
        } else {
            // A side not measured shows "-", not a rate of 0.
            char how[24] = "", mine[16] = "-", theirs[16] = "-", ratio[16] = "-";
            if (peer) snprintf(how, sizeof how, blas[i].side_by_side ? "(1, side by side)" : "(%d)", blas[i].threads);
            if (have) snprintf(mine, sizeof mine, "%.1f", ours[i]);
            if (peer) snprintf(theirs, sizeof theirs, "%.1f", blas[i].gflops);
            if (r > 0) snprintf(ratio, sizeof ratio, "%.2fx", r);
            printf("  %-7s %5d %5d %5d %5d  %5s  x%-4d %10s  %8s %-17s %6s\n", s[i].op, s[i].batch, s[i].M, s[i].N, s[i].K,
                   s[i].bt ? "B^T" : "B", s[i].count, mine, theirs, how, ratio);
        }
    }
    if (!json && !have) printf("  stepformer could not run: %s\n", why);
    if (!json && !peer) printf("  %s\n", bwhy);
}

// The window on the base model at 512 tokens, in a child process (its peak memory is the
// window's): v[0] the pass traced, v[1..3] a step's median, p99 and slowest frame, v[4] steps,
// v[5] the first frame.
enum { LONG_LEN = 512 };
static void task_long(const void *arg, BenchReply *r) {
    (void)arg;
    LongPassFigures f;
    Err e = {{0}};
    r->ok = ui_bench_long(LONG_LEN, &f, &e);
    if (!r->ok) snprintf(r->why, sizeof r->why, "%s", e.msg);
    else r->v[0] = f.trace_ms, r->v[1] = f.step_median, r->v[2] = f.step_p99, r->v[3] = f.step_max, r->v[4] = f.steps,
         r->v[5] = f.first_ms;
}

// Whether the base model at LONG_LEN tokens stays interactive: each step's frame under 100 ms
// once the pass is traced, all within 2 GB.
static void bench_long(cJSON *json) {
    BenchReply r;
    double rss = 0;
    const bool ok = bench_in_child(task_long, NULL, &r, &rss);
    const bool met = ok && r.v[3] < 100.0 && rss < 2048.0;
    if (json) {
        cJSON *o = cJSON_AddObjectToObject(json, "window_512_tokens");
        if (!ok) return (void)cJSON_AddStringToObject(o, "error", r.why);
        cJSON_AddNumberToObject(o, "trace_ms", r.v[0]), cJSON_AddNumberToObject(o, "step_median_ms", r.v[1]);
        cJSON_AddNumberToObject(o, "step_p99_ms", r.v[2]), cJSON_AddNumberToObject(o, "step_max_ms", r.v[3]);
        cJSON_AddNumberToObject(o, "steps", r.v[4]), cJSON_AddNumberToObject(o, "peak_rss_mb", rss);
        cJSON_AddNumberToObject(o, "first_frame_ms", r.v[5]);
        cJSON_AddBoolToObject(o, "target_met", met);
        return;
    }
    if (!ok) return (void)printf("\nthe window at %d tokens could not run: %s\n", LONG_LEN, r.why);
    printf("\nthe window on the base model at %d tokens (1920x1080, off screen): the pass traced in %.0f ms, its\n"
           "first frame drawn in %.0f ms; then a step to its frame, over the other %.0f stages, each in its view:\n"
           "median %.1f ms, p99 %.1f ms, slowest %.1f ms; peak memory %.0f MB. Target: every step under 100 ms,\n"
           "within 2048 MB: %s\n",
           LONG_LEN, r.v[0], r.v[5], r.v[4], r.v[1], r.v[2], r.v[3], rss, met ? "met" : "NOT met");
}

// How the forward's time and memory grow: length, layers, d_model, one at a time.
static int bench_scale(int runs, cJSON *json) {
    static const struct { int len, layers, d_model; } rows[] = {
        {16, 0, 0}, {32, 0, 0}, {64, 0, 0}, {128, 0, 0}, {256, 0, 0}, {512, 0, 0},
        {32, 2, 0}, {32, 12, 0}, {32, 0, 256}, {32, 0, 1024}};
    cJSON *arr = json ? cJSON_AddArrayToObject(json, "scale") : NULL;
    if (!json)
        printf("forward pass, teacher forcing, batch 1; base model (512/8/6+6/2048, vocab 1000) unless the row says\n"
               "   len  layers  d_model   median ms   peak MB   GFLOP   GFLOP/s\n");
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const BenchCase c = {PATH_FORWARD, rows[i].len, 0, 0, false, runs ? runs : rows[i].len >= 256 ? 5 : 10,
                             rows[i].d_model, rows[i].layers};
        Figure f;
        char why[256];
        const bool ok = bench_ours(&c, &f, why, sizeof why);
        const int layers = c.layers ? c.layers : 6, d = c.d_model ? c.d_model : 512;
        if (arr) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "len", c.len), cJSON_AddNumberToObject(o, "layers", layers);
            cJSON_AddNumberToObject(o, "d_model", d);
            if (ok) cJSON_AddItemToObject(o, "stepformer", figure_json(&f));
            else cJSON_AddStringToObject(o, "error", why);
            cJSON_AddItemToArray(arr, o);
        } else if (ok)
            printf("  %4d  %4d+%-2d  %7d  %10.2f  %8.0f  %6.2f  %8.1f\n", c.len, layers, layers, d, f.median_ms, f.rss_mb,
                   f.gflop, f.gflop / f.median_ms * 1e3);
        else printf("  %4d  %4d+%-2d  %7d  could not run: %s\n", c.len, layers, layers, d, why);
    }
    bench_long(json);
    return EXIT_OK;
}

// Process start to first frame: the window on the built-in lesson with a replay that quits at
// once, so the time is start, first frame and exit (an upper bound). Under SDL's offscreen
// driver unless a display is set.
static void bench_startup(void) {
    char path[] = "/tmp/stepformer-bench-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0 || write(fd, "0 quit\n", 7) != 7) {
        if (fd >= 0) close(fd), unlink(path);
        return (void)printf("  start to first frame: not measured (cannot write a replay file in /tmp)\n");
    }
    close(fd);
    char self[4096];
    const bool found = data_self_path(self, sizeof self);
    double t[7];
    int ok = 0;
    for (int i = 0; found && i < 7; i++) {
        fflush(stdout);
        const double t0 = bench_now();
        const pid_t pid = fork();
        if (pid == 0) {
            if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) setenv("SDL_VIDEODRIVER", "offscreen", 1);
            execl(self, self, "--replay", path, (char *)NULL);
            _exit(127);
        }
        int status = 1;
        if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
            t[ok++] = (bench_now() - t0) * 1e3;
    }
    unlink(path);
    if (ok) printf("  %-44s median %6.2f ms   (%d runs: start, built-in lesson, first frame, exit)\n",
                   "process start to first frame", bench_median(t, ok), ok);
    else printf("  start to first frame: not measured (the window could not open here)\n");
}

// The machine, and its measured peak on all cores (returned; 0 if it could not be measured).
static double print_machine(cJSON *json) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double one = 0, all = 0;
    const bool peak = bench_peak(&one, &all);
    char cpu[256];
    bench_cpu_name(cpu, sizeof cpu);
    if (json) {
        cJSON_AddStringToObject(json, "cpu", cpu);
        cJSON_AddNumberToObject(json, "cores", (double)cores);
        cJSON_AddNumberToObject(json, "openmp_threads", omp_get_max_threads());
        cJSON_AddStringToObject(json, "gemm_kernel", sgemm_kernel_name());
        if (peak) cJSON_AddNumberToObject(json, "peak_gflops_one_core", one), cJSON_AddNumberToObject(json, "peak_gflops", all);
        return peak ? all : 0;
    }
    printf("stepformer bench on %s: %ld cores, %d OpenMP threads, gemm micro-kernel %s. Ratios are\n"
           "stepformer's time over the peer's, measured in this run (lower is better; 0.5x: twice as fast).\n",
           cpu, cores, omp_get_max_threads(), sgemm_kernel_name());
    if (peak)
        printf("Peak, measured now with a loop of independent %s multiply-adds: %.0f GFLOP/s on one core, %.0f on\n"
               "all, and again before each path (the highest so far counts: a neighbour on a shared machine\n"
               "can slow the loop too); a path's 'at peak' line is its work at that rate, the least time the\n"
               "machine allows, and its 'of peak' line the fraction of that rate it ran at (neighbours slow\n"
               "some runs: the fastest run shows what the code does, the median what a user sees).\n",
               sgemm_kernel_name(), one, all);
    printf("\n");
    return peak ? all : 0;
}

// The peak on all cores measured again, if higher than `peak` (the one a path's fractions use).
static double peak_again(double peak, cJSON *json) {
    double one, all;
    if (peak <= 0 || !bench_peak(&one, &all) || all <= peak) return peak;
    if (json) cJSON_ReplaceItemInObject(json, "peak_gflops", cJSON_CreateNumber(all));
    else printf("peak measured again: %.0f GFLOP/s on all cores, higher than before (used from here on)\n", all);
    return all;
}

// GPT-2 small's configuration (random weights in a hub folder both sides read): the forward at
// 128 and 1024 tokens, and 32 tokens generated after a 128-token prompt (bench_gpt2.c).
static void bench_gpt2(const CliOptions *o, double *peak, cJSON *json) {
    char dir[64], why[256];
    if (!bench_gpt2_folder(dir, sizeof dir, why, sizeof why)) {
        if (json) cJSON_AddStringToObject(json, "gpt2_error", why);
        else printf("GPT-2 small could not be measured: %s\n", why);
        return;
    }
    const Row rows[] = {
        {"GPT-2 small forward, length 128", {PATH_GPT2_FORWARD, 128, 0, 0, false, o->repeat, 0, 0, dir}, 0.5, 0.75, 0},
        {"GPT-2 small forward, length 1024", {PATH_GPT2_FORWARD, 1024, 0, 0, false, o->repeat, 0, 0, dir}, 0.5, 0.75, 0},
        {"GPT-2 small generating 32 tokens after a 128-token prompt, cached decoder (PyTorch: its key-value cache)",
         {PATH_GPT2_GENERATE, 128, 0, 32, true, o->repeat, 0, 0, dir}, 0.5, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        *peak = peak_again(*peak, json);
        bench_row(&rows[i], o->no_peer, peak, json);
    }
    bench_gpt2_windows(dir, json);
    bench_gpt2_remove(dir);
}

// The window's frame times (ui_bench_run prints them), in a child process.
static void task_ui_frames(const void *arg, BenchReply *r) {
    r->ok = ui_bench_run(*(const int *)arg) == 0;
    if (!r->ok) snprintf(r->why, sizeof r->why, "the window's frames could not be measured (said above)");
    fflush(stdout);
}

int cmd_bench(int argc, char **argv) {
    CliOptions o;
    int code = cli_parse(argc, argv, OPT_REPEAT | OPT_JSON, bench_usage, &o);
    if (code >= 0) return code;
    if (o.ui_bench) {
        const int frames = o.repeat ? o.repeat : 60;
        BenchReply r;
        double rss;
        // In a child, as every measurement: the parent never starts OpenMP's threads, which a
        // forked child (GPT-2's below) would wait on forever (GNU libgomp does not survive fork).
        const int code_ui = bench_in_child(task_ui_frames, &frames, &r, &rss) ? 0 : 1;
        if (code_ui) fprintf(stderr, "stepformer: bench --ui: %s\n", r.why);
        bench_startup();
        char dir[64], why[256];  // then GPT-2 small's configuration at 1023 tokens, beside the base model
        if (!bench_gpt2_folder(dir, sizeof dir, why, sizeof why)) printf("\nGPT-2 small: %s\n", why);
        else bench_gpt2_windows(dir, NULL), bench_gpt2_remove(dir);
        return code_ui;
    }
    unsigned sections = SECTION_ALL;
    if (o.train_bench) sections = SECTION_TRAIN;
    if (o.only && !parse_only(o.only, &sections))
        return cli_usage_error("bench", "--only takes forward, greedy, train, matmul, browser or gpt2, comma-separated (got '%s')",
                               o.only);
    cJSON *json = o.json ? cJSON_CreateObject() : NULL;
    double peak = print_machine(json);
    if (o.scale_bench) bench_scale(o.repeat, json);
    else {
        const Row rows[] = {
            {"base forward, length 32", {PATH_FORWARD, 32, 0, 0, false, o.repeat, 0, 0}, 0.5, 0.75, 0},
            {"base forward, length 128", {PATH_FORWARD, 128, 0, 0, false, o.repeat, 0, 0}, 0.5, 0.75, 0},
            {"greedy decoding, 87-token source, 120 tokens, cached decoder (what `run` does)",
             {PATH_GREEDY, 0, 87, 120, true, o.repeat, 0, 0}, 0.2, 0, 600},
            {"greedy decoding, the same, plain decoder (`run --no-cache`)", {PATH_GREEDY, 0, 87, 120, false, o.repeat, 0, 0},
             0, 0, 0},
            {"training step, tiny model, batch 64", {PATH_TRAIN, 0, 0, 0, false, o.repeat, 0, 0}, 1.0 / 3, 0.6, 0},
        };
        const unsigned row_section[] = {SECTION_FORWARD, SECTION_FORWARD, SECTION_GREEDY, SECTION_GREEDY, SECTION_TRAIN};
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
            if (sections & row_section[i]) {
                peak = peak_again(peak, json);
                bench_row(&rows[i], o.no_peer, &peak, json);
            }
        if (sections & SECTION_MATMUL) bench_matmul(o.no_peer, json);
        if (sections & SECTION_BROWSER) bench_browser(o.repeat, json);
        if (sections & SECTION_GPT2) bench_gpt2(&o, &peak, json);
    }
    if (json) {
        char *text = cJSON_Print(json);
        if (text) puts(text);
        free(text);
        cJSON_Delete(json);
    }
    return EXIT_OK;
}
