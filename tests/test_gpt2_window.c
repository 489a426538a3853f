// test_gpt2_window.c: the window on GPT-2 small's configuration (12 layers, 12 heads, 768 wide,
// 1024 positions, 50257 tokens; random weights, F32, written as a hub folder by `stepformer init`)
// at 1023 tokens under a 512 MB trace budget: opened as the window opens a folder, traced, every
// stage stepped to in its view and drawn at 1920x1080 off screen (ui_bench_open), recomputing what
// the budget let go. Each step follows a pause, as a reader's, in which the idle window readies the
// next stage (app_warm_next): some stages are recomputed then, within the budget. The trace holds no more than its budget at the end, and the process's peak
// resident memory stays under 1.5 GB (the weights are 498 MB); the figures are printed. No time
// is asserted: `bench --only gpt2` prints those.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mem.h"
#include "window.h"

enum { LEN = 1023, BUDGET_MB = 512, PEAK_MB = 1536 };

static double peak_rss_mb(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb / 1024;
}

int main(void) {
#if defined(__SANITIZE_ADDRESS__)
    puts("test_gpt2_window: skipped under AddressSanitizer (the pass is 300 GFLOP)");
    return 0;
#endif
    mem_setup();  // as the window's process does (main.c)
    char dir[] = "/tmp/stepformer-gpt2-window-XXXXXX", cmd[512];
    if (!mkdtemp(dir)) {
        CHECK(false, "mkdtemp %s", dir);
        return check_finish("test_gpt2_window");
    }
    snprintf(cmd, sizeof cmd, "'%s' init --program '%s/gpt2.md' --config 'n_layer=12 n_head=12 n_embd=768 n_inner=3072 "
             "n_positions=1024 vocab_size=50257' --out '%s/' > /dev/null", STEPFORMER_BIN, LESSONS, dir);
    CHECK(system(cmd) == 0, "%s", cmd);
    char *ids = malloc(LEN * 7 + 1);
    for (int i = 0, k = 0; ids && i < LEN; i++) k += sprintf(ids + k, "%s%d", i ? "," : "", (i * 7919) % 50257);
    const SessionSpec spec = {.model_path = dir, .src_ids = ids, .max_len = 1, .trace_mb = BUDGET_MB};
    LongPassFigures f;
    Err e = {{0}};
    const bool ok = ids && ui_bench_open(&spec, true, &f, &e);  // as a reader steps: the window readies each next stage
    CHECK(ok, "the window on GPT-2 small at %d tokens: %s", LEN, e.msg);
    const double peak = peak_rss_mb();
    if (ok) {
        printf("GPT-2 small, %d tokens, --trace-mb %d: opened in %.0f ms, traced in %.0f ms, first frame in %.0f ms, "
               "%d stages stepped to (median %.1f ms, slowest %.1f ms; %d readied in the pause before); the trace holds "
               "%.0f MB; peak resident memory %.0f MB\n",
               LEN, BUDGET_MB, f.open_ms, f.trace_ms, f.first_ms, f.steps, f.step_median, f.step_max, f.readied,
               (double)f.trace_bytes / (1 << 20), peak);
        for (int k = 0; k < UI_BENCH_VIEWS; k++) {
            printf("  %s: a frame in %.1f ms at the median, %.1f at the slowest\n", ui_bench_view_names[k],
                   f.view_median[k], f.view_p99[k]);
            CHECK(f.view_median[k] > 0, "%s: drawn", ui_bench_view_names[k]);
        }
        CHECK(f.steps > 12 * 20, "%d stages: GPT-2 small's 12 layers have more", f.steps);
        printf("test_gpt2_window: a click on each of the map's %d blocks: median %.1f ms, slowest %.1f ms\n", f.clicks,
               f.click_median, f.click_max);
        CHECK(f.clicks >= 12 * 2 && f.click_median > 0, "%d blocks clicked on the map: GPT-2's 12 layers have two each",
              f.clicks);
        CHECK(f.readied >= 12 * 2, "%d stages readied in a pause: under %d MB every layer's feed-forward products are let go",
              f.readied, BUDGET_MB);
        CHECK(f.trace_bytes <= (size_t)BUDGET_MB << 20, "the trace holds %zu bytes, over its %d MB", f.trace_bytes, BUDGET_MB);
        CHECK(peak < PEAK_MB, "peak resident memory %.0f MB, not under %d MB", peak, PEAK_MB);
    }
    free(ids);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "%s", cmd);
    return check_finish("test_gpt2_window");
}
