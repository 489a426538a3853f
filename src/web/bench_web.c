// bench_web.c: the benchmark page (index.html?bench=1): times the two passes of pass_timing.h in
// the page, on its one thread, and reports them as JSON in the page and its title, for
// scripts/web.sh bench to print beside the native run of the same passes.
#include <cjson/cJSON.h>
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"
#include "pass_timing.h"
#include "platform.h"
#include "web_root.h"

static void report(const char *title, const char *text) {
    EM_ASM({
        document.title = UTF8ToString($0);
        const pre = document.createElement("pre");
        pre.id = "bench";
        pre.textContent = UTF8ToString($1);
        document.body.appendChild(pre);
    }, title, text);
}

static void run(void) {
    PassTiming t[PASS_TIMINGS];
    Err e = {{0}};
    if (!pass_timings(WEB_ROOT "/lessons", 10, t, &e)) {
        char title[400];
        snprintf(title, sizeof title, "stepformer: error %s", e.msg);
        report(title, e.msg);
        return;
    }
    cJSON *o = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(o, "browser");
    cJSON_AddStringToObject(o, "gemm", sgemm_kernel_name());
    for (int k = 0; k < PASS_TIMINGS; k++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "name", t[k].name);
        cJSON_AddNumberToObject(r, "median_ms", t[k].median_ms);
        cJSON_AddNumberToObject(r, "min_ms", t[k].min_ms);
        cJSON_AddNumberToObject(r, "stages", t[k].stages);
        cJSON_AddItemToArray(rows, r);
    }
    char *text = cJSON_PrintUnformatted(o);
    report("stepformer: bench done", text ? text : "{}");
    free(text);
    cJSON_Delete(o);
}

// Frames until the dates model has arrived (fetched as the lesson would fetch it), then the run.
static void wait_for_model(void) {
    double progress;
    Err e = {{0}};
    const bool ready = platform_file_ready(WEB_ROOT "/assets/models/dates.safetensors", &progress, &e);
    if (!ready && progress >= 0) return;
    emscripten_cancel_main_loop();
    if (ready) run();
    else {
        char title[400];
        snprintf(title, sizeof title, "stepformer: error %s", e.msg);
        report(title, e.msg);
    }
}

void web_bench(void) { emscripten_set_main_loop(wait_for_model, 0, 0); }
