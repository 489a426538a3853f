// app_lessons.c: opening and switching lessons in the window. The lessons are those of a folder
// in course order (course.h); N / P open the next or previous one, L opens the list. A lesson
// that cannot open leaves the window empty with its error on screen and its row marked: the
// class never watches another lesson than the one chosen.
#include <stdio.h>
#include <string.h>

#include "feature.h"
#include "hub.h"
#include "platform.h"

void app_set_course(App *a, const char *dir, const char *open_path) {
    Err e = {{0}};
    course_free(&a->course);
    memset(a->lesson_failed, 0, sizeof a->lesson_failed);
    a->lesson_at = -1;
    if (!dir) return;
    if (!course_load(&a->course, dir, &e)) return;  // no folder: N / P and L say there are no lessons
    a->lesson_at = course_find(&a->course, open_path);
    if (a->lesson_at >= 0 && !a->loaded && !a->waiting.on) a->lesson_failed[a->lesson_at] = true;
    a->lesson_pick = a->lesson_at > 0 ? a->lesson_at : 0;
}

// Whether a folder's weights can be opened now: its shards where the site has an index
// (model.safetensors.index.json), else model.safetensors; of each only the header (the tensors
// are read by range once the model is placed). *progress: the fraction of them here.
static bool weights_ready(const char *dir, double *progress, Err *e) {
    char index[600], file[700], names[4096] = "model.safetensors";
    double got = 0;
    snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir);
    if (!platform_file_settled(index, &got, e)) return *progress = e->msg[0] ? -1.0 : 0.0, false;
    if (hub_file_exists(index) && !hub_shard_names(index, names, sizeof names, e)) return *progress = -1.0, false;
    int n = 0, here = 0;
    for (const char *f = names; *f; n++) {
        const int len = (int)strcspn(f, " ");
        snprintf(file, sizeof file, "%s/%.*s", dir, len, f);
        here += platform_file_head(file, &got, e);
        if (e->msg[0]) return *progress = -1.0, false;
        f += len + (f[len] == ' ');
    }
    *progress = n ? (double)here / n : 1.0;
    return here == n;
}

// Whether a model a lesson names can be opened now: a .safetensors file, or a folder in the
// hub's layout: its config.json first, then, fetched together, its weights (weights_ready) and
// the files of its family's tokenizer (tokenizer.json, or Marian's source.spm, target.spm,
// vocab.json), which a folder may lack (it then takes ids).
static bool model_ready(const char *path, double *progress, Err *e) {
    const size_t n = strlen(path), ext = strlen(".safetensors");
    if (n >= ext && !strcmp(path + n - ext, ".safetensors")) return platform_file_ready(path, progress, e);
    char file[600];
    double got = 0;
    snprintf(file, sizeof file, "%s/config.json", path);
    if (!platform_file_ready(file, &got, e)) return *progress = e->msg[0] ? -1.0 : 0.0, false;
    HubFolder h;
    if (!hub_read_config(&h, path, e)) return *progress = -1.0, false;
    char files[200];
    snprintf(files, sizeof files, "%s", h.family->tokenizer_files ? h.family->tokenizer_files : "tokenizer.json");
    hub_free(&h);
    bool ready = weights_ready(path, progress, e);
    if (e->msg[0]) return false;
    for (const char *f = files; *f;) {
        const size_t len = strcspn(f, " ");
        snprintf(file, sizeof file, "%s/%.*s", path, (int)len, f);
        ready = platform_file_settled(file, &got, e) && ready;
        if (e->msg[0]) return *progress = -1.0, false;
        f += len + (f[len] == ' ');
    }
    return ready;
}

// Whether the files spec needs can be opened now: its model, named by the spec or by its
// lesson, and a mistake lesson's correct program's own weights (`correct_model:`, which the
// Compare view runs). In the browser one that is not there yet is fetched meanwhile
// (*progress: how far).
// A fetch that failed sets e. Where every file is on disk, the lesson is not read twice for this.
static bool files_ready(const SessionSpec *spec, double *progress, Err *e) {
    *progress = 1.0;
    if (!platform_fetches_files()) return true;
    if (spec->model_path) return model_ready(spec->model_path, progress, e);
    if (!spec->lesson_path) return true;
    Lesson l;
    Err parse = {{0}};
    if (!lesson_load(&l, spec->lesson_path, &parse)) return true;  // opening it reports what is wrong
    bool ready = !l.setup.model_path[0] || model_ready(l.setup.model_path, progress, e);
    if (ready && l.setup.correct_model[0]) ready = platform_file_ready(l.setup.correct_model, progress, e);
    lesson_free(&l);
    return ready;
}

// A session that could not open: its error, with the lesson's place, and its row marked.
static void open_failed(App *a, int k, const char *why) {
    char msg[sizeof a->error];
    char at[48];
    if (k >= 0) a->lesson_failed[k] = true;
    if (k >= 0) snprintf(msg, sizeof msg, "lesson %s, %s: %s", course_place(&a->course, k, at, sizeof at),
                         a->course.items[k].title, why);
    else snprintf(msg, sizeof msg, "%s  (L: the lesson list)", why);
    app_set_error(a, msg);
}

// The session is open and its numbers are in: the window shows it.
static void opened(App *a, const SessionSpec *spec, int k) {
    if (k >= 0) a->lesson_failed[k] = false;
    app_loaded(a, spec);
    if (k >= 0) a->card = CARD_OPENING;  // a lesson of the course opens on its introduction (the list, N, P)
    a->back.mistake = 0;                 // and with the right backward formulas
}

// Reads still going into a session's model stop, and the session closes.
static void stop_reading(App *a) {
    if (!a->reading.on) return;
    platform_read_cancel();
    session_close(&a->session);
    st_reads_free(&a->reading.reads);
    a->reading.on = false;
}

static void read_tick(App *a);

bool app_open_spec(App *a, const SessionSpec *spec, int k) {
    app_backward_free(a);  // it reads the session's model
    stop_reading(a);
    if (a->loaded) session_close(&a->session);
    a->loaded = false, a->lesson_at = a->lesson_pick = k, a->lesson_list = false;
    a->cursor = 0, a->head = 0, a->playing = false, a->editing = false;
    a->zoom = (ZoomBox){0, 0, 1, 1};
    memset(a->scroll, 0, sizeof a->scroll);
    a->generation++, a->model_serial++;
    Err e = {{0}};
    a->waiting.on = false;
    if (!files_ready(spec, &a->waiting.progress, &e) && !e.msg[0]) {
        a->waiting.on = true, a->waiting.spec = *spec, a->waiting.k = k;
        return false;
    }
    // In the browser the model is placed, and its weights read into place while frames go on.
    SessionSpec open = *spec;
    StReads *later = &a->reading.reads;
    if (platform_reads_later()) open.later = later;
    if (e.msg[0] || !session_open(&a->session, &open, &e)) {
        st_reads_free(later);
        open_failed(a, k, e.msg);
        return false;
    }
    if (later->n > 0) {
        for (int i = 0; i < later->n; i++) {
            const StRead *r = &later->reads[i];
            platform_read_queue(later->paths[r->source], r->begin, r->end, r->file_bytes, r->to);
        }
        a->reading.on = true, a->reading.spec = *spec, a->reading.k = k, a->reading.progress = 0.0;
        read_tick(a);      // files whole in the page already are read at once: it opens now
        return a->loaded;  // else on_tick opens it once the reads are in
    }
    st_reads_free(later);
    opened(a, spec, k);
    return true;
}

// The reads into an opening session's model: once in, it opens; a failed one closes it.
static void read_tick(App *a) {
    Err e = {{0}};
    const ReadsState s = platform_read_poll(&a->reading.progress, &e);
    if (s == READS_RUNNING) return;
    const int k = a->reading.k;
    if (s == READS_FAILED) {
        stop_reading(a);
        open_failed(a, k, e.msg);
        return;
    }
    st_reads_finish(&a->reading.reads);
    st_reads_free(&a->reading.reads);
    a->reading.on = false;
    const SessionSpec spec = a->reading.spec;
    opened(a, &spec, k);
    if (k < 0) a->lesson_at = a->lesson_pick = course_find(&a->course, spec.lesson_path);
}

void app_open_lesson(App *a, int k) {
    if (k < 0 || k >= a->course.n) return;
    const SessionSpec spec = {.lesson_path = a->course.items[k].path};
    app_open_spec(a, &spec, k);
}

// The keys while the list is open: Up / Down choose, Enter opens, Esc or L closes.
static bool list_act(App *a, Cmd act) {
    const int n = a->course.n;
    switch (act) {
    case CMD_PARAM_UP: a->lesson_pick = n ? (a->lesson_pick + n - 1) % n : 0; return true;
    case CMD_PARAM_DOWN: a->lesson_pick = n ? (a->lesson_pick + 1) % n : 0; return true;
    case CMD_OPEN: app_open_lesson(a, a->lesson_pick); return true;
    case CMD_QUIT:
    case CMD_LESSONS: a->lesson_list = false; return true;
    default: return false;
    }
}

static void step_lesson(App *a, int dir) {
    if (a->course.n == 0) {
        app_set_error(a, "no lessons to switch between: open a lesson from a folder of lessons "
                         "(stepformer lesson lessons/FILE.md)");
        return;
    }
    const int from = a->lesson_at >= 0 ? a->lesson_at : dir > 0 ? -1 : 0;
    app_open_lesson(a, (from + dir + a->course.n) % a->course.n);
}

void app_title(const App *a, char *out, size_t n) {
    char at[48] = "";
    if (a->lesson_at >= 0) course_place(&a->course, a->lesson_at, at, sizeof at);
    const CourseEntry *c = a->lesson_at >= 0 ? &a->course.items[a->lesson_at] : NULL;
    const char *what = a->loaded && a->source[0] ? a->source : c ? c->title : "";
    if (at[0] && c->section[0]) snprintf(out, n, "stepformer - %s %s: %s", at, c->section, what);
    else if (at[0]) snprintf(out, n, "stepformer - %s %s", at, what);
    else if (what[0]) snprintf(out, n, "stepformer - %s", what);
    else snprintf(out, n, "stepformer");
}

static Follow on_first(App *a, const Command *c) {
    return a->lesson_list && list_act(a, c->kind) ? FOLLOW_TAKEN : FOLLOW_NOTHING;
}

static Follow on_command(App *a, const Command *c) {
    switch (c->kind) {
    case CMD_NEXT_LESSON: step_lesson(a, 1); return FOLLOW_TAKEN;
    case CMD_PREV_LESSON: step_lesson(a, -1); return FOLLOW_TAKEN;
    case CMD_LESSONS: a->lesson_list = true, a->lesson_pick = a->lesson_at > 0 ? a->lesson_at : 0; return FOLLOW_TAKEN;
    case CMD_OPEN_LESSON: app_open_lesson(a, c->param); return FOLLOW_TAKEN;
    default: return FOLLOW_NOTHING;
    }
}

// A lesson waiting for its files opens once they are here, and once its reads are in.
static void on_tick(App *a) {
    if (a->reading.on) {
        read_tick(a);
        return;
    }
    if (!a->waiting.on) return;
    const SessionSpec spec = a->waiting.spec;
    if (app_open_spec(a, &spec, a->waiting.k) && a->waiting.k < 0)
        a->lesson_at = a->lesson_pick = course_find(&a->course, spec.lesson_path);
}

const Feature feature_lessons = {.name = "lessons", .on_first = on_first, .on_command = on_command, .on_tick = on_tick,
                                 .on_free = stop_reading};
