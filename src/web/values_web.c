// values_web.c: a stage's numbers as the page computes them, for the tests that hold the page to
// the native program (tests/web/test_page.py calls web_stage_values through Module.ccall). The
// lesson's model must be in the page already: open the lesson first.
#include <cjson/cJSON.h>
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "web_root.h"

// JSON as interp_stage_json writes it, or {"error": ...}. The text stays valid until the next call.
// `lesson` is a course lesson's name, or "model:PATH|IDS": a model folder of the site (as a
// model= link names it, fetched already by the page), or one the user gave the page (/user/N),
// reading those ids.
EMSCRIPTEN_KEEPALIVE const char *web_stage_values(const char *lesson, const char *stage) {
    static char *last;
    free(last), last = NULL;
    char path[300], ids[2048] = "";
    SessionSpec spec = {.lesson_path = path};
    const char *bar = strchr(lesson, '|');
    if (!strncmp(lesson, "model:", 6) && bar) {  // a folder of the site, or (absolute) one the user gave the page
        snprintf(path, sizeof path, "%s%s%.*s", lesson[6] == '/' ? "" : WEB_ROOT, lesson[6] == '/' ? "" : "/",
                 (int)(bar - lesson - 6), lesson + 6);
        snprintf(ids, sizeof ids, "%s", bar + 1);
        spec = (SessionSpec){.model_path = path, .src_ids = ids};
    } else {
        snprintf(path, sizeof path, "%s/lessons/%s.md", WEB_ROOT, lesson);
    }
    Session s;
    Err e = {{0}};
    bool by_round;
    if (session_open(&s, &spec, &e)) {
        const int k = interp_run(s.it, &e) ? interp_find_stage(s.it, stage, path, &by_round, &e) : -1;
        if (k >= 0) last = interp_stage_json(s.it, k);
        session_close(&s);
    }
    if (!last) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "error", e.msg[0] ? e.msg : "out of memory");
        last = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
    }
    return last;
}
