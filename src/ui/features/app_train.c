// app_train.c: the Training view's commands: start and stop the worker, choose its task, save
// what it trained, and step through the trained model's forward pass.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feature.h"
#include "platform.h"

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

void app_train(App *a, Cmd cmd, int param) {
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

static Follow on_command(App *a, const Command *c) {
    switch (c->kind) {
    case CMD_TRAIN_TOGGLE:
    case CMD_TRAIN_TASK:
    case CMD_TRAIN_SAVE:
    case CMD_TRAIN_USE: app_train(a, c->kind, c->param); return FOLLOW_TAKEN;
    case CMD_PLAY:  // Space starts and stops training in its view
        if (a->view != VIEW_TRAIN) return FOLLOW_NOTHING;
        app_train(a, CMD_TRAIN_TOGGLE, 0);
        return FOLLOW_TAKEN;
    case CMD_PARAM_UP:
    case CMD_PARAM_DOWN: {
        if (a->view != VIEW_TRAIN) return FOLLOW_NOTHING;
        int k = a->train_task;  // the next sequence task: the window trains the encoder-decoder
        do k = (k + (c->kind == CMD_PARAM_UP ? TASK_COUNT - 1 : 1)) % TASK_COUNT;
        while (task_classes((Task)k));
        app_train(a, CMD_TRAIN_TASK, k);
        return FOLLOW_TAKEN;
    }
    default: return FOLLOW_NOTHING;
    }
}

static void on_free(App *a) { train_job_free(a->train); }

const Feature feature_train = {.name = "train", .on_command = on_command, .on_free = on_free};
