// app.c: opening a session for the window and everything that changes the app's state.
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actions.h"
#include "handout.h"
#include "heat.h"
#include "platform.h"

const char *const view_names[VIEW_COUNT] = {"Stage", "Attention", "Decoding", "Positions", "Training", "Compare", "Patch"};

const char *const action_names[DO_COUNT] = {
    "none", "next", "prev", "play", "next_block", "prev_block", "first", "last", "head",
    "all_heads", "next_view", "prev_view", "edit", "fullscreen", "bigger", "smaller", "theme",
    "screenshot", "help", "quit", "slower", "faster", "param_up", "param_down", "param_dec",
    "param_inc", "edit_accept", "edit_cancel", "edit_backspace", "next_lesson", "prev_lesson", "lessons",
    "open", "pin", "ablate_head", "ablate_mask", "ablate_positions", "ablate_undo", "link", "backward",
    "gradient", "gradcheck", "mistake", "first_diff", "handout", "decoding"};

// Every action has its name: a missing one would be NULL (a test checks; a size check could not fail).
bool action_names_complete(void) {
    for (int i = 0; i < DO_COUNT; i++)
        if (!action_names[i]) return false;
    return true;
}

void app_notify(App *a, const char *msg) {
    snprintf(a->notice, sizeof a->notice, "%s", msg);
    a->notice_until = 0;  // the window sets the time it shows until
}

void app_set_error(App *a, const char *msg) {
    snprintf(a->error, sizeof a->error, "%s", msg);
    if (msg[0]) fprintf(stderr, "stepformer: %s\n", msg);
}

static const Interp *interp(const App *a) { return a->loaded ? a->session.it : NULL; }

static void app_defaults(App *a) {
    memset(a, 0, sizeof *a);
    a->back.step = a->back.check_stage = -1;
    a->probe.pick_row = -1;
    a->scale = 1.0f, a->play_ms = 700, a->all_heads = true;
    a->zoom = (ZoomBox){0, 0, 1, 1};
    a->train_task = TASK_DATES;
    a->lesson_at = -1;
}

// The spec's strings, in the order of OpenedSpec.text.
static void spec_texts(SessionSpec *s, const char **out[OPENED_TEXTS]) {
    const char **f[OPENED_TEXTS] = {&s->lesson_path, &s->builtin_lesson, &s->program_path, &s->model_path, &s->config,
                                    &s->input, &s->src_ids, &s->target, &s->tgt_ids};
    memcpy(out, f, sizeof f);
}

// Keeps a copy of spec whose strings live in the App (spec may point into a->opened itself).
static void remember(App *a, const SessionSpec *spec) {
    OpenedSpec aside;  // built aside first: spec's strings may be a->opened's
    aside.spec = *spec;
    const char **f[OPENED_TEXTS];
    spec_texts(&aside.spec, f);
    for (int k = 0; k < OPENED_TEXTS; k++)
        if (*f[k]) snprintf(aside.text[k], sizeof aside.text[k], "%s", *f[k]);
    a->opened = aside;
    spec_texts(&a->opened.spec, f);
    for (int k = 0; k < OPENED_TEXTS; k++)
        if (*f[k]) *f[k] = a->opened.text[k];
}

void app_loaded(App *a, const SessionSpec *spec) {
    Err e = {{0}};
    a->error[0] = '\0';  // what failed before is replaced by what opened
    remember(a, spec);
    a->loaded = true;
    snprintf(a->source, sizeof a->source, "%s", a->session.lesson.title);
    pe_free(&a->pe);  // the explorer of the model before (if any) goes
    pe_init(&a->pe, a->session.model.cfg.d_model);
    pe_from_program(&a->pe, a->session.it, &a->session.model);
    if (!pe_rebuild(&a->pe, &a->session.model, &e)) app_set_error(a, e.msg);
}

bool app_open(App *a, const SessionSpec *spec, Err *e) {
    app_defaults(a);
    if (!session_open(&a->session, spec, e)) return false;
    app_loaded(a, spec);
    return true;
}

void app_init(App *a, const SessionSpec *spec) {
    app_defaults(a);
    app_open_spec(a, spec, -1);  // on failure no other lesson instead: the error, and the list (L)
}

// K: the link of the place on screen (the browser page's query, src/web/link.h), copied to the
// clipboard and shown, so a teacher can send the class to it.
static void share_link(App *a) {
    if (!a->loaded) return app_set_error(a, "nothing is open to link to");
    const char *path = a->session.lesson.path, *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const size_t len = strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".md") ? strlen(name) - 3 : strlen(name);
    if (a->lesson_at < 0 || !course_is_lesson_name(name))
        return app_set_error(a, "this lesson is not one of the course's, so the page has no link to it");
    char query[400], view[16], msg[sizeof a->notice];
    snprintf(view, sizeof view, "%s", view_names[a->view]);
    for (char *c = view; *c; c++) *c = (char)tolower((unsigned char)*c);
    snprintf(query, sizeof query, "?lesson=%.*s&stage=%s&view=%s", (int)len, name,
             interp_stage(a->session.it, a->cursor)->id, view);
    platform_share_link(query, msg, sizeof msg);
    app_notify(a, msg);
}

void app_free(App *a) {
    app_backward_free(a);
    app_probe_free(a);
    app_against_free(a);
    app_pin_free(&a->pin);
    course_free(&a->course);
    train_job_free(a->train);
    pe_free(&a->pe);
    if (a->loaded) session_close(&a->session);
}

// Runs the pass until stage i has run (or it ends).
static void run_to(App *a, int i) {
    Err e = {{0}};
    StepStatus s = STEP_RAN;
    while (a->loaded && interp_n_done(a->session.it) <= i && (s = interp_step(a->session.it, &e)) == STEP_RAN)
        ;
    if (s == STEP_FAILED) app_set_error(a, e.msg);
}

ViewKind app_view_for(const App *a, int i) {
    const Stage *st = interp_stage(a->session.it, i);
    if (st->shape.ndim == 3 && st->axes.slot[0] == AXIS_HEADS && st->axes.slot[1] >= 0 && st->axes.slot[2] >= 0)
        return VIEW_ATTENTION;
    return st->where.part == PART_GENERATOR ? VIEW_DECODE : VIEW_STAGE;
}

bool app_place(App *a, const char *id, int view, Err *e) {
    if (!a->loaded) return err_set(e, "no lesson is open");
    if (!interp_run(a->session.it, e)) return false;
    bool by_round;
    const int k = id ? interp_find_stage(a->session.it, id, a->source, &by_round, e) : 0;
    if (k < 0) return false;
    app_goto(a, k);
    a->view = view >= 0 ? (ViewKind)view : app_view_for(a, k);
    app_quiz_placed(a);  // a place opened (a link, --to), not stepped onto: its question waits
    return true;
}

void app_goto(App *a, int i) {
    if (!a->loaded) return;
    a->back.step = -1;  // a forward stage: out of the backward pass (app_backward_goto steps back in)
    a->card = CARD_NONE;
    run_to(a, i);
    const int n = interp_n_done(a->session.it);
    if (i >= n) i = n - 1;
    if (i < 0) i = 0;
    if (n > 0 && a->cursor < n &&
        !shape_eq(&interp_stage(interp(a), i)->shape, &interp_stage(interp(a), a->cursor)->shape))
        a->zoom = (ZoomBox){0, 0, 1, 1};
    const Stage *st = interp_stage(interp(a), i);
    if (a->cursor >= 0 && a->cursor < n) {  // another paragraph or kernel starts at its top
        const Stage *was = interp_stage(interp(a), a->cursor);
        const Lesson *l = &a->session.lesson;
        if (lesson_cell_of_line(l, was->line) != lesson_cell_of_line(l, st->line)) a->scroll[SCROLL_NARRATION] = 0;
        if (strcmp(op_info[was->op].kernel, op_info[st->op].kernel)) a->scroll[SCROLL_KERNEL] = 0;
    }
    a->cursor = i;
    if (st->axes.slot[0] == AXIS_HEADS && a->head >= st->shape.dim[0]) a->head = 0;
}

static void next_block(App *a, int dir) {
    if (!a->loaded) return;
    BlockRow b = block_of(a, a->cursor);
    if (dir < 0) {
        app_goto(a, a->cursor > b.first ? b.first : b.first > 0 ? block_of(a, b.first - 1).first : 0);
        return;
    }
    run_to(a, b.last + 1);
    if (b.last + 1 < interp_n_done(a->session.it)) app_goto(a, b.last + 1);
}

static void accept_edit(App *a) {
    a->editing = false;
    if (!a->loaded) return;
    char id[STAGE_ID_MAX];
    snprintf(id, sizeof id, "%s", interp_stage(interp(a), a->cursor)->id);
    const int old = a->cursor;
    int first;
    Err e = {{0}};
    if (!session_set_input(&a->session, a->edit, &first, &e)) {
        app_set_error(a, e.msg);
        return;
    }
    a->error[0] = '\0';
    a->generation++;
    app_goto_id(a, id, old);  // keep the place
}

void app_goto_id(App *a, const char *id, int fallback) {
    Err e = {{0}};
    int k = interp_find(interp(a), id);
    if (k < 0 && !interp_run_to(a->session.it, id, &e)) k = fallback;
    else if (k < 0) k = interp_find(interp(a), id);
    app_goto(a, k);
}

static void pe_act(App *a, Action act) {
    Err e = {{0}};
    if (act == DO_PARAM_UP || act == DO_PARAM_DOWN) {
        a->pe.selected = (PeParam)((a->pe.selected + (act == DO_PARAM_UP ? PE_PARAM_COUNT - 1 : 1)) % PE_PARAM_COUNT);
    } else if (a->loaded && !pe_adjust(&a->pe, &a->session.model, a->pe.selected, act == DO_PARAM_INC ? 1 : -1, &e)) {
        app_set_error(a, e.msg);
    }
}

static void set_head(App *a, int h) {
    const Interp *it = interp(a);
    if (!it) return;
    int k = attention_stage_for(a, a->cursor);
    const Stage *st = interp_stage(it, k >= 0 ? k : a->cursor);
    if (st->axes.slot[0] == AXIS_HEADS && h >= st->shape.dim[0]) {
        char msg[96];
        snprintf(msg, sizeof msg, "this model has %d heads: keys 1-%d pick one", st->shape.dim[0], st->shape.dim[0]);
        app_set_error(a, msg);
        return;
    }
    a->head = h, a->all_heads = false;
}


bool app_reopen(App *a, const SessionSpec *spec, Err *e) {
    app_backward_free(a);  // it reads the session's model
    if (a->loaded) session_close(&a->session);  // opened once, in place (a Session cannot move)
    a->loaded = false, a->generation++, a->model_serial++, a->cursor = 0;
    memset(a->scroll, 0, sizeof a->scroll);
    if (!session_open(&a->session, spec, e)) return false;  // the window stays empty, with the error
    app_loaded(a, spec);  // the title, and the positions explorer on the new model's d_model
    return true;
}

// Steps through the forward pass of the model trained in the window, on its example, read
// back from a private temporary file (removed once read: the session holds the weights). A
// sequence task's example is teacher-forced on its right answer, so B opens the backward pass of
// the model as training left it, step by step.
static void use_trained(App *a) {
    char path[] = "/tmp/stepformer-trained-XXXXXX", msg[300], answer[128];
    Err e = {{0}};
    const int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(msg, sizeof msg, "cannot create a temporary file for the trained model: %s", strerror(errno));
        app_set_error(a, msg);
        return;
    }
    close(fd);
    SessionSpec spec = {.model_path = path, .input = train_example(a->train_snap.task)};
    if (!task_classes(a->train_snap.task) && task_solve(a->train_snap.task, spec.input, answer, sizeof answer))
        spec.target = answer;
    const bool ok = train_job_save(a->train, path, &e) && app_reopen(a, &spec, &e);
    unlink(path);
    if (!ok) {
        app_set_error(a, e.msg);
        return;
    }
    a->view = VIEW_STAGE;
    snprintf(a->source, sizeof a->source, "the %s model trained here (%d steps)", task_names[a->train_snap.task],
             a->train_snap.steps);
    snprintf(msg, sizeof msg, "now stepping through %s", a->source);
    app_notify(a, msg);
}

void app_train(App *a, UiCommand cmd, int param) {
    Err e = {{0}};
    if (!a->train && !(a->train = train_job_new())) {
        app_set_error(a, "out of memory");
        return;
    }
    const bool running = train_job_running(a->train);
    char msg[300];
    switch (cmd) {
    case CMD_TRAIN_TOGGLE:
        if (running) train_job_ask_stop(a->train);  // the window keeps drawing while it stops
        else if (!train_job_start(a->train, a->train_task, &e)) app_set_error(a, e.msg);
        break;
    case CMD_TRAIN_TASK:
        if (running) {
            app_set_error(a, "stop training before choosing another task");
            return;
        }
        a->train_task = (Task)param;
        break;
    case CMD_TRAIN_SAVE:
        snprintf(msg, sizeof msg, "stepformer-%s.safetensors", task_names[a->train_snap.task]);
        if (!train_job_save(a->train, msg, &e)) {
            app_set_error(a, e.msg);
            return;
        }
        char said[sizeof msg + 40];
        platform_deliver(msg, said, sizeof said);  // in the browser: a download
        app_notify(a, said);
        break;
    case CMD_TRAIN_USE:
        if (running) {
            app_set_error(a, "stop training first");
            return;
        }
        use_trained(a);
        break;
    default: break;
    }
}

// While the help list is open it takes the keys: only these act (they close it or change how it
// looks); the rest would change what is behind it, unseen.
static bool acts_over_help(Action act) {
    return act == DO_HELP || act == DO_QUIT || act == DO_SCREENSHOT || act == DO_FULLSCREEN ||
           act == DO_BIGGER || act == DO_SMALLER || act == DO_THEME;
}

bool app_act(App *a, Action act, int param) {
    if (a->help && !acts_over_help(act)) return false;
    if (a->lesson_list && app_lesson_list_act(a, act)) return false;
    if (!a->editing && app_card_act(a, act)) return false;
    if (!a->editing && app_backward_act(a, act)) return false;
    // An error goes with the next action, except when it left the window empty (a lesson that
    // failed): then it stays, with its file and line, until something opens (app_loaded).
    if (a->loaded && act != DO_SCREENSHOT && act != DO_HELP && act != DO_NONE) a->error[0] = '\0';
    switch (act) {
    case DO_NEXT: app_goto(a, a->cursor + 1); break;
    case DO_PREV: app_goto(a, a->cursor - 1); break;
    case DO_FIRST: app_goto(a, 0); break;
    case DO_LAST: app_goto(a, 1 << 30); break;
    case DO_NEXT_BLOCK: next_block(a, 1); break;
    case DO_PREV_BLOCK: next_block(a, -1); break;
    case DO_PLAY:
        if (a->view == VIEW_TRAIN) app_train(a, CMD_TRAIN_TOGGLE, 0);
        else a->playing = !a->playing, a->next_tick = 0;
        break;
    case DO_SLOWER: a->play_ms = a->play_ms * 3 / 2 > 5000 ? 5000 : a->play_ms * 3 / 2; break;
    case DO_FASTER: a->play_ms = a->play_ms * 2 / 3 < 50 ? 50 : a->play_ms * 2 / 3; break;
    case DO_HEAD: set_head(a, param); break;
    case DO_ALL_HEADS: a->all_heads = true, a->zoom = (ZoomBox){0, 0, 1, 1}; break;
    case DO_NEXT_VIEW: a->view = (ViewKind)((a->view + 1) % VIEW_COUNT), a->zoom = (ZoomBox){0, 0, 1, 1}; break;
    case DO_PREV_VIEW: a->view = (ViewKind)((a->view + VIEW_COUNT - 1) % VIEW_COUNT), a->zoom = (ZoomBox){0, 0, 1, 1}; break;
    case DO_EDIT:
        if (a->editing) break;  // already editing: keep what has been typed
        a->editing = a->loaded, a->edit_fresh = true;
        snprintf(a->edit, sizeof a->edit, "%s", a->loaded ? a->session.input_text : "");
        break;
    case DO_EDIT_ACCEPT: accept_edit(a); break;
    case DO_EDIT_CANCEL: a->editing = false; break;
    case DO_EDIT_BACKSPACE: {
        if (a->edit_fresh) a->edit[0] = '\0', a->edit_fresh = false;
        size_t n = strlen(a->edit);
        while (n > 0 && (a->edit[n - 1] & 0xC0) == 0x80) n--;  // a whole UTF-8 character
        if (n > 0) a->edit[n - 1] = '\0';
        break;
    }
    case DO_FULLSCREEN: a->fullscreen = !a->fullscreen; break;
    case DO_BIGGER: a->scale = fminf(a->scale * 1.15f, 4.0f); break;
    case DO_SMALLER: a->scale = fmaxf(a->scale / 1.15f, 0.5f); break;
    case DO_THEME: a->contrast = !a->contrast; break;
    case DO_SCREENSHOT: return true;
    case DO_HELP: a->help = !a->help; break;
    case DO_PIN: app_pin_toggle(a); break;
    case DO_LINK: share_link(a); break;
    case DO_FIRST_DIFF: app_against_jump(a); break;
    case DO_BACKWARD:
    case DO_GRADIENT:
    case DO_GRADCHECK:
    case DO_MISTAKE: break;  // app_backward_act's
    case DO_HANDOUT: app_handout(a); break;
    case DO_DECODING: app_switch_decoding(a); break;
    case DO_ABLATE_HEAD:
    case DO_ABLATE_MASK:
    case DO_ABLATE_POSITIONS:
    case DO_ABLATE_UNDO: app_ablate(a, act); break;
    case DO_NEXT_LESSON: app_step_lesson(a, 1); break;
    case DO_PREV_LESSON: app_step_lesson(a, -1); break;
    case DO_LESSONS: a->lesson_list = true, a->lesson_pick = a->lesson_at > 0 ? a->lesson_at : 0; break;
    case DO_OPEN: break;  // Enter outside the list
    case DO_QUIT:
        if (a->help) a->help = false;
        else if (a->editing) a->editing = false;
        else if (platform_may_quit()) a->quit = true;
        else app_notify(a, "a page stays open: close its tab to leave stepformer");
        break;
    case DO_PARAM_UP:
    case DO_PARAM_DOWN:
    case DO_PARAM_DEC:
    case DO_PARAM_INC:
        if (a->view == VIEW_PE) pe_act(a, act);
        if (a->view == VIEW_TRAIN && (act == DO_PARAM_UP || act == DO_PARAM_DOWN)) {
            int k = a->train_task;  // the next sequence task: the window trains the encoder-decoder
            do k = (k + (act == DO_PARAM_UP ? TASK_COUNT - 1 : 1)) % TASK_COUNT;
            while (task_classes((Task)k));
            app_train(a, CMD_TRAIN_TASK, k);
        }
        break;
    case DO_NONE:
    case DO_COUNT: break;
    }
    return false;
}

void app_type(App *a, const char *s) {
    if (a->edit_fresh) a->edit[0] = '\0', a->edit_fresh = false;
    size_t n = strlen(a->edit);
    snprintf(a->edit + n, sizeof a->edit - n, "%s", s);
}

void app_click(App *a, const Ui *ui, int x, int y) {
    if (a->help) {  // a click closes the help list; it does not reach what is behind it
        a->help = false;
        return;
    }
    const HotZone *z = ui_hot_at(ui, x, y);
    if (a->lesson_list && (!z || z->cmd != CMD_OPEN_LESSON)) {  // a click beside the list closes it
        a->lesson_list = false;
        return;
    }
    if (!z) return;
    Err e = {{0}};
    switch (z->cmd) {
    case CMD_GOTO_STAGE: app_goto(a, z->param); break;
    case CMD_SELECT_HEAD: set_head(a, z->param); break;
    case CMD_ALL_HEADS: a->all_heads = true; break;
    case CMD_VIEW: a->view = (ViewKind)z->param, a->zoom = (ZoomBox){0, 0, 1, 1}; break;
    case CMD_EDIT_INPUT: app_act(a, DO_EDIT, 0); break;
    case CMD_PE_PARAM:
        a->pe.selected = (PeParam)(z->param / 2);
        if (a->loaded && !pe_adjust(&a->pe, &a->session.model, a->pe.selected, z->param % 2 ? 1 : -1, &e))
            app_set_error(a, e.msg);
        break;
    case CMD_ZOOM_AREA:
        a->dragging = true, a->drag_x = x, a->drag_y = y;
        break;
    case CMD_TIMELINE: {  // the forward stages, then the backward steps when they are shown
        const int k = (int)((long)(x - z->r.x) * z->param / (z->r.w > 0 ? z->r.w : 1)), n = interp_n_stages(interp(a));
        if (k < n) app_goto(a, k);
        else app_backward_goto(a, k - n);
        break;
    }
    case CMD_TRAIN_TOGGLE:
    case CMD_TRAIN_TASK:
    case CMD_TRAIN_SAVE:
    case CMD_TRAIN_USE: app_train(a, z->cmd, z->param); break;
    case CMD_OPEN_LESSON: app_open_lesson(a, z->param); break;
    case CMD_PATCH_CELL: app_probe_pick(a, z->param >> 20, (z->param >> 10) & 1023, z->param & 1023); break;
    case CMD_NONE:
    case CMD_COUNT: break;
    }
}

void app_tick(App *a, double now, double budget_ms) {
    if (a->waiting.on) {  // its files may have arrived
        const SessionSpec spec = a->waiting.spec;
        if (app_open_spec(a, &spec, a->waiting.k) && a->waiting.k < 0)
            a->lesson_at = a->lesson_pick = course_find(&a->course, spec.lesson_path);
    }
    if (a->playing && now >= a->next_tick) {
        if (a->next_tick > 0 && app_back_step(a)) {  // playing through the backward pass
            app_backward_goto(a, a->back.step + 1);
            a->playing = a->back.step < a->back.pass.n_steps - 1;
        } else if (a->next_tick > 0) {
            app_goto(a, a->cursor + 1);
            if (a->loaded && interp_done(a->session.it) && a->cursor == interp_n_done(a->session.it) - 1)
                a->playing = false;
        }
        a->next_tick = now + a->play_ms;
    }
    if (a->loaded && a->view == VIEW_PATCH) app_probe_prepare(a);
    if (a->loaded && a->view == VIEW_COMPARE) app_against_prepare(a);
    // Run ahead of the cursor in small slices, so the timeline fills without stalling a frame.
    if (!a->loaded) return;
    Err e = {{0}};
    StepStatus s = STEP_RAN;
    for (int k = 0; k < 64 && !interp_done(a->session.it) && s == STEP_RAN; k++) s = interp_step(a->session.it, &e);
    (void)budget_ms;
    if (s == STEP_FAILED) app_set_error(a, e.msg);
}

// ---- helpers for the views ----

int stage_axis_labels(const App *a, int stage, int axis, const char **labels, int max) {
    const Interp *it = interp(a);
    if (!it) return 0;
    const Stage *st = interp_stage(it, stage);
    if (axis < 0 || axis >= st->shape.ndim) return 0;
    int slot = st->axes.slot[axis], len;
    if (slot < 0) return 0;
    const float *ids = interp_input_ids(it, slot, &len);
    const Model *m = &a->session.model;
    const Vocab *v = strcmp(a->session.lesson.program.inputs[slot], "src") == 0 ? &m->src_vocab : &m->tgt_vocab;
    int n = st->shape.dim[axis] < len ? st->shape.dim[axis] : len;
    n = n < max ? n : max;
    for (int i = 0; i < n; i++) {
        labels[i] = vocab_token(v, (int)ids[i]);
        if (!strcmp(labels[i], " ")) labels[i] = "\xe2\x90\xa3";  // a space, shown as the open box
    }
    return n;
}

// An attention step (scores, scaled, masked, weights) is shown itself; any other stage shows the
// last attention map passed (never one ahead).
int attention_stage_for(const App *a, int cursor) {
    const Interp *it = interp(a);
    if (!it || interp_n_done(it) == 0) return -1;
    const Stage *st = interp_stage(it, cursor);
    if (st->role >= ROLE_SCORES && st->role <= ROLE_WEIGHTS) return cursor;  // a step of a map: as it is
    if (st->role == ROLE_CONTEXT) return st->att_weights;
    for (int i = cursor; i >= 0; i--)
        if (interp_stage(it, i)->role == ROLE_WEIGHTS) return i;
    return -1;
}

int attention_step(const App *a, int weights, int role) {
    const Interp *it = interp(a);
    for (int i = weights; it && i >= 0 && i >= weights - 64; i--)
        if (interp_stage(it, i)->att_weights == weights && interp_stage(it, i)->role == role) return i;
    return -1;
}

const char *const attention_kind_names[ATT_COUNT] = {"Self-attention", "Masked self-attention", "Cross-attention"};

AttentionKind attention_kind(const App *a, int weights) {
    const Stage *st = interp_stage(interp(a), weights);
    const int nd = st->shape.ndim, mk = attention_step(a, weights, ROLE_MASKED);
    if (st->axes.slot[nd - 2] != st->axes.slot[nd - 1]) return ATT_CROSS;
    return mk >= 0 && interp_stage(interp(a), mk)->attr.causal ? ATT_MASKED : ATT_SELF;
}

const float *attention_mask_for(const App *a, int stage, int h) {
    const Interp *it = interp(a);
    const Stage *st = interp_stage(it, stage);
    if (st->role != ROLE_WEIGHTS) return NULL;
    const int m = attention_step(a, stage, ROLE_MASKED);
    if (m < 0 || !shape_eq(&interp_stage(it, m)->shape, &st->shape) || !interp_output(it, m)) return NULL;
    const int n = st->shape.ndim;
    return interp_output(it, m) + (size_t)h * st->shape.dim[n - 2] * st->shape.dim[n - 1];
}

void batch_title(const App *a, const char *view, const char *what, char *s, size_t n) {
    const int B = interp_batch(a->session.it);
    if (B <= 1) snprintf(s, n, "%s: %s", view, what);
    else if (a->session.run.choice.beam >= 2) snprintf(s, n, "%s: hypothesis row 1 of %d (Decoding shows all %d)", view, B, B);
    else snprintf(s, n, "%s: example 1 of the batch of %d", view, B);
}
