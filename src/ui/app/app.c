// app.c: the dispatcher. The table of features (feature.h) and of the centre's views; a command
// (a key's, a click's, or one a feature asked to follow) is offered to the features' hooks in the
// table's order and otherwise applied here: stepping, views, heads, the input line, sizes.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "handout.h"
#include "platform.h"

static const Interp *interp(const App *a) { return a->loaded ? a->session.it : NULL; }

// Every feature, in the order each is offered a command: the lesson list, the cards and the
// backward pass hold the keys while they are open, so they come first.
static const Feature *const features[] = {
    &feature_lessons, &feature_cards, &feature_backward, &feature_quiz, &feature_pin,
    &feature_against, &feature_decode, &feature_ablate, &feature_train, &feature_probe,
};
enum { N_FEATURES = sizeof features / sizeof features[0] };

// Every view of the centre, by its kind (view_names[] names them, Tab goes through them in order).
const ViewDraw app_views[VIEW_COUNT] = {
    [VIEW_STAGE] = view_stage, [VIEW_ATTENTION] = view_attention, [VIEW_DECODE] = view_decode,
    [VIEW_PE] = view_pe,       [VIEW_TRAIN] = view_train,         [VIEW_COMPARE] = view_compare,
    [VIEW_PATCH] = view_patch,
};

// Every view has its function: a kind added without a line above would be NULL (a test checks).
bool app_views_complete(void) {
    for (int v = 0; v < VIEW_COUNT; v++)
        if (!app_views[v] || !view_names[v]) return false;
    return true;
}

// The first feature that takes c in this phase (first: before the app's own handling).
static Follow offer(App *a, const Command *c, bool first) {
    for (int i = 0; i < N_FEATURES; i++) {
        Follow (*hook)(App *, const Command *) = first ? features[i]->on_first : features[i]->on_command;
        const Follow f = hook ? hook(a, c) : FOLLOW_NOTHING;
        if (f & FOLLOW_TAKEN) return f;
    }
    return FOLLOW_NOTHING;
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
    for (int i = 0; i < N_FEATURES; i++)
        if (features[i]->on_free) features[i]->on_free(a);
    course_free(&a->course);
    pe_free(&a->pe);
    if (a->loaded) session_close(&a->session);
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

static void next_block(App *a, int dir) {
    if (!a->loaded) return;
    BlockRow b = block_of(a, a->cursor);
    if (dir < 0) {
        app_goto(a, a->cursor > b.first ? b.first : b.first > 0 ? block_of(a, b.first - 1).first : 0);
        return;
    }
    app_run_to(a, b.last + 1);
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

static void pe_act(App *a, Cmd act) {
    Err e = {{0}};
    if (act == CMD_PARAM_UP || act == CMD_PARAM_DOWN) {
        do  // a model's learned table has only dimension and position to pick
            a->pe.selected = (PeParam)((a->pe.selected + (act == CMD_PARAM_UP ? PE_PARAM_COUNT - 1 : 1)) % PE_PARAM_COUNT);
        while (a->pe.learned[0] && a->pe.selected != PE_DIM && a->pe.selected != PE_POSITION);
    } else if (a->loaded && !pe_adjust(&a->pe, &a->session.model, a->pe.selected, act == CMD_PARAM_INC ? 1 : -1, &e)) {
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

// View v in the centre, from its whole map (not zoomed), in place of a card.
static void show_view(App *a, int v) {
    a->view = (ViewKind)((v + VIEW_COUNT) % VIEW_COUNT), a->zoom = (ZoomBox){0, 0, 1, 1}, a->card = CARD_NONE;
}

// While the help list is open it takes the keys: only these act (they close it or change how it
// looks); the rest would change what is behind it, unseen.
static bool acts_over_help(Cmd act) {
    return act == CMD_HELP || act == CMD_QUIT || act == CMD_SCREENSHOT || act == CMD_FULLSCREEN ||
           act == CMD_BIGGER || act == CMD_SMALLER || act == CMD_THEME;
}

// Stepping, the view and the head: true when c was one of these.
static bool navigate(App *a, const Command *c) {
    switch (c->kind) {
    case CMD_NEXT: app_goto(a, a->cursor + 1); return true;
    case CMD_PREV: app_goto(a, a->cursor - 1); return true;
    case CMD_FIRST: app_goto(a, 0); return true;
    case CMD_LAST: app_goto(a, 1 << 30); return true;
    case CMD_NEXT_BLOCK: next_block(a, 1); return true;
    case CMD_PREV_BLOCK: next_block(a, -1); return true;
    case CMD_PLAY:  // from the opening card: its first stage is the first shown
        if (a->card == CARD_OPENING) a->card = CARD_NONE;
        a->playing = !a->playing, a->next_tick = 0;
        return true;
    case CMD_SLOWER: a->play_ms = a->play_ms * 3 / 2 > 5000 ? 5000 : a->play_ms * 3 / 2; return true;
    case CMD_FASTER: a->play_ms = a->play_ms * 2 / 3 < 50 ? 50 : a->play_ms * 2 / 3; return true;
    case CMD_HEAD: set_head(a, c->param); return true;
    case CMD_ALL_HEADS: a->all_heads = true, a->zoom = (ZoomBox){0, 0, 1, 1}; return true;
    case CMD_NEXT_VIEW: show_view(a, a->view + 1); return true;
    case CMD_PREV_VIEW: show_view(a, a->view - 1); return true;
    case CMD_PARAM_UP:
    case CMD_PARAM_DOWN:
    case CMD_PARAM_DEC:
    case CMD_PARAM_INC:
        if (a->view == VIEW_PE) pe_act(a, c->kind);
        return true;
    default: return false;
    }
}

// The input line (E).
static bool edit_line(App *a, const Command *c) {
    switch (c->kind) {
    case CMD_EDIT:
        if (a->editing) return true;  // already editing: keep what has been typed
        a->editing = a->loaded, a->edit_fresh = true;
        snprintf(a->edit, sizeof a->edit, "%s", a->loaded ? a->session.input_text : "");
        return true;
    case CMD_EDIT_ACCEPT: accept_edit(a); return true;
    case CMD_EDIT_CANCEL: a->editing = false; return true;
    case CMD_EDIT_BACKSPACE: {
        if (a->edit_fresh) a->edit[0] = '\0', a->edit_fresh = false;
        size_t n = strlen(a->edit);
        while (n > 0 && (a->edit[n - 1] & 0xC0) == 0x80) n--;  // a whole UTF-8 character
        if (n > 0) a->edit[n - 1] = '\0';
        return true;
    }
    default: return false;
    }
}

// How the window looks, and leaving it.
static void present(App *a, const Ui *ui, const Command *c) {
    switch (c->kind) {
    case CMD_FULLSCREEN: a->fullscreen = !a->fullscreen; break;
    case CMD_BIGGER: a->scale = fminf(a->scale * 1.15f, 4.0f); break;
    case CMD_SMALLER: a->scale = fmaxf(a->scale / 1.15f, 0.5f); break;
    case CMD_THEME: a->contrast = !a->contrast; break;
    case CMD_HELP: a->help = !a->help; break;
    case CMD_LINK: share_link(a); break;
    case CMD_HANDOUT: app_handout(a); break;
    case CMD_SCROLL_TEXT:
        if (ui) app_scroll(a, ui, a->card != CARD_NONE ? SCROLL_CARD : SCROLL_NARRATION, c->param);
        break;
    case CMD_QUIT:
        if (a->help) a->help = false;
        else if (a->editing) a->editing = false;
        else if (platform_may_quit()) a->quit = true;
        else app_notify(a, "a page stays open: close its tab to leave stepformer");
        break;
    default: break;  // CMD_OPEN: Enter outside the list; the rest are the features'
    }
}

bool app_command(App *a, const Ui *ui, Command c) {
    if (c.kind == CMD_SCROLL_TEXT) return present(a, ui, &c), false;  // the text only: nothing else changes
    if (a->help && !acts_over_help(c.kind)) return false;
    if (offer(a, &c, true) & FOLLOW_TAKEN) return false;
    // An error goes with the next command, except when it left the window empty (a lesson that
    // failed): then it stays, with its file and line, until something opens (app_loaded).
    if (a->loaded && c.kind != CMD_SCREENSHOT && c.kind != CMD_HELP && c.kind != CMD_NONE) a->error[0] = '\0';
    if (c.kind == CMD_SCREENSHOT) return true;
    if (offer(a, &c, false) & FOLLOW_TAKEN) return false;
    if (!navigate(a, &c) && !edit_line(a, &c)) present(a, ui, &c);
    return false;
}

bool app_act(App *a, Cmd cmd, int param) {
    cmd_push(&a->queue, (Command){cmd, param, false});
    return app_drain(a, NULL);  // it, and what it asks to follow
}

// A click's command, or one a feature asked to follow: it acts at once, neither clearing the
// error nor passing the cards.
static void direct(App *a, const Ui *ui, const Command *c) {
    switch (c->kind) {
    case CMD_GOTO_STAGE: app_goto(a, c->param); break;
    case CMD_GOTO_BLOCK:  // a feature may place a block otherwise (the backward pass: its step)
        if (!(offer(a, c, false) & FOLLOW_TAKEN)) app_goto(a, c->param);
        break;
    case CMD_HEAD: set_head(a, c->param); break;
    case CMD_ALL_HEADS: a->all_heads = true; break;
    case CMD_VIEW: show_view(a, c->param); break;
    case CMD_EDIT: app_command(a, ui, (Command){CMD_EDIT, 0, false}); break;
    case CMD_PE_PARAM:  // a setting's - or + button
        a->pe.selected = (PeParam)(c->param / 2);
        pe_act(a, c->param % 2 ? CMD_PARAM_INC : CMD_PARAM_DEC);
        break;
    default: offer(a, c, false); break;  // the features' zones: training, the lesson list, the Patch view
    }
}

bool app_drain(App *a, const Ui *ui) {
    Command c;
    bool shot = false;
    // A feature may queue more while its command is applied; four queues' worth at most a drain,
    // so one that keeps asking cannot hold the frame.
    for (int k = 0; k < 4 * CMD_QUEUE_MAX && cmd_pop(&a->queue, &c); k++) {
        if (c.direct) direct(a, ui, &c);
        else shot |= app_command(a, ui, c);
    }
    return shot;
}

// The command of a click at (x, y) on zone z: a click on the timeline names a stage, or a step
// of the backward pass past them.
static Command click_command(const App *a, const HotZone *z, int x) {
    if (z->cmd != CMD_TIMELINE) return (Command){z->cmd, z->param, true};
    if (!a->loaded) return (Command){CMD_NONE, 0, true};
    const int k = (int)((long)(x - z->r.x) * z->param / (z->r.w > 0 ? z->r.w : 1)), n = interp_n_stages(interp(a));
    return k < n ? (Command){CMD_GOTO_STAGE, k, true} : (Command){CMD_BACK_STEP, k - n, true};
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
    if (z && z->cmd == CMD_ZOOM_AREA) a->dragging = true, a->drag_x = x, a->drag_y = y;  // a drag starts
    else if (z && cmd_push(&a->queue, click_command(a, z, x))) app_drain(a, ui);
}

void app_type(App *a, const char *s) {
    if (a->edit_fresh) a->edit[0] = '\0', a->edit_fresh = false;
    size_t n = strlen(a->edit);
    snprintf(a->edit + n, sizeof a->edit - n, "%s", s);
}

void app_tick(App *a, double now, double budget_ms) {
    for (int i = 0; i < N_FEATURES; i++)
        if (features[i]->on_tick) features[i]->on_tick(a);
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
    // Run ahead of the cursor in small slices, so the timeline fills without stalling a frame.
    if (!a->loaded) return;
    Err e = {{0}};
    StepStatus s = STEP_RAN;
    for (int k = 0; k < 64 && !interp_done(a->session.it) && s == STEP_RAN; k++) s = interp_step(a->session.it, &e);
    (void)budget_ms;
    if (s == STEP_FAILED) app_set_error(a, e.msg);
}

Follow app_event(App *a, const Ui *ui, const Event *ev) {
    for (int i = 0; i < N_FEATURES; i++) {
        const Follow f = features[i]->on_event ? features[i]->on_event(a, ui, ev) : FOLLOW_NOTHING;
        if (f & FOLLOW_TAKEN) return f;
    }
    return FOLLOW_NOTHING;
}

void app_settle(App *a) {
    for (int i = 0; i < N_FEATURES; i++)
        if (features[i]->on_settle) features[i]->on_settle(a);
}
