// values_web.c: a stage's numbers as the page computes them, for the tests that hold the page to
// the native program (tests/web/test_page.py calls web_stage_values through Module.ccall). The
// lesson's model must be in the page already: open the lesson first.
#include <cjson/cJSON.h>
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"
#include "session.h"
#include "web_root.h"

// A session opened for web_stage_values, its model's reads still going (platform_read_queue).
static struct {
    bool on;
    Session s;
    StReads reads;
    char key[600];  // the lesson and stage asked
} pending;

static char *error_json(const char *msg) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", msg[0] ? msg : "out of memory");
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

// The stage's JSON from the open session, which then closes (e set on failure).
static char *stage_json(Session *s, const char *stage, const char *what, Err *e) {
    bool by_round;
    char *out = NULL;
    const int k = interp_run(s->it, e) ? interp_find_stage(s->it, stage, what, &by_round, e) : -1;
    if (k >= 0) out = interp_stage_json(s->it, k);
    session_close(s);
    return out;
}

// JSON as interp_stage_json writes it, or {"error": ...}, or {"pending": true} while the model's
// weights are read by range (a model folder's: call again with the same arguments until it is
// not pending). The text stays valid until the next call.
// `lesson` is a course lesson's name, or "model:PATH|IDS": a model folder of the site (as a
// model= link names it), or one the user gave the page (/user/N), reading those ids.
EMSCRIPTEN_KEEPALIVE const char *web_stage_values(const char *lesson, const char *stage) {
    static char *last;
    free(last), last = NULL;
    char key[sizeof pending.key];
    snprintf(key, sizeof key, "%s|%s", lesson, stage);
    Err e = {{0}};
    if (pending.on && strcmp(pending.key, key)) {  // another question: the one before is dropped
        platform_read_cancel(), session_close(&pending.s), st_reads_free(&pending.reads), pending.on = false;
    }
    if (pending.on) {
        double progress;
        const ReadsState rs = platform_read_poll(&progress, &e);
        if (rs == READS_RUNNING) return "{\"pending\": true}";
        pending.on = false;
        if (rs == READS_DONE) st_reads_finish(&pending.reads), last = stage_json(&pending.s, stage, pending.key, &e);
        else session_close(&pending.s);
        st_reads_free(&pending.reads);
        if (!last) last = error_json(e.msg);
        return last;
    }
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
    spec.later = &pending.reads;
    if (session_open(&pending.s, &spec, &e)) {
        if (pending.reads.n) {
            for (int i = 0; i < pending.reads.n; i++) {
                const StRead *r = &pending.reads.reads[i];
                platform_read_queue(pending.reads.paths[r->source], r->begin, r->end, r->file_bytes, r->to);
            }
            pending.on = true;
            snprintf(pending.key, sizeof pending.key, "%s", key);
            return web_stage_values(lesson, stage);  // files whole in the page are read at once
        }
        last = stage_json(&pending.s, stage, path, &e);
    }
    st_reads_free(&pending.reads);
    if (!last) last = error_json(e.msg);
    return last;
}
