// test_reads.c: a model placed with its reads left for later (safetensors.h: StReads, what the
// page does with a file it does not hold whole), then read from the disk and finished, against
// the same model read at once: every weight the same bits, every stage of the pass too. The
// reads skip what the program does not declare (GPT-2's attn.bias), a file that changed in
// between is refused, and a model handed to a new session (SessionSpec.adopt) is the one kept.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hub.h"
#include "session.h"

static bool open_at(Session *s, const char *dir, const char *ids, bool widen, StReads *later, Model *adopt) {
    const SessionSpec spec = {.model_path = dir, .src_ids = ids, .max_len = 3, .widen_weights = widen,
                              .later = later, .adopt = adopt};
    Err e = {{0}};
    const bool ok = session_open(s, &spec, &e);
    CHECK(ok, "%s: %s", dir, e.msg);
    return ok;
}

// Whether every weight of a and b holds the same numbers the same way.
static bool same_weights(const Model *a, const Model *b, const char *what) {
    int differ = 0;
    CHECK(a->n_params == b->n_params, "%s: %d weights, then %d", what, a->n_params, b->n_params);
    for (int i = 0; i < a->n_params && i < b->n_params; i++) {
        const StEntry *x = &a->weights.entries[i], *y = &b->weights.entries[i];
        const size_t n = (size_t)shape_numel(&x->shape);
        const bool same = (x->half != NULL) == (y->half != NULL) &&
                          (x->half ? !memcmp(x->half, y->half, 2 * n) : !memcmp(x->data, y->data, 4 * n));
        if (!same && differ++ < 3) CHECK(false, "%s: %s differs", what, x->name);
    }
    return differ == 0;
}

// Whether no read takes the bytes of an entry the program does not declare.
static bool only_declared(const StReads *r, const Model *m, const char *dir) {
    HubFolder h;
    StFile f;
    bool bin, ok = true;
    Err e = {{0}};
    if (!hub_read_config(&h, dir, &e) || !hub_read_weights(&h, &f, &bin, &e)) {
        CHECK(false, "%s: %s", dir, e.msg);
        return false;
    }
    int undeclared = 0;
    for (int i = 0; i < f.n_entries; i++) {
        const StEntry *en = &f.entries[i];
        if (model_weight_index(m, en->name) >= 0) continue;
        undeclared++;
        for (int k = 0; k < r->n; k++)
            if (!strcmp(r->paths[r->reads[k].source], f.sources[en->source]) && r->reads[k].begin < en->end &&
                en->begin < r->reads[k].end)
            {
                ok = false;
                CHECK(false, "%s: %s is read, which the program does not declare", dir, en->name);
            }
    }
    for (int k = 0; k < r->n; k++)
        CHECK(r->reads[k].end > r->reads[k].begin && r->reads[k].end <= r->reads[k].file_bytes, "%s: read %d is [%llu, %llu)",
              dir, k, (unsigned long long)r->reads[k].begin, (unsigned long long)r->reads[k].end);
    printf("  %s: %d reads, %llu bytes; %d entries not declared, not read\n", dir, r->n,
           (unsigned long long)st_reads_bytes(r), undeclared);
    st_free(&f), hub_free(&h);
    return ok;
}

static bool zeros(const unsigned char *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

static void same_pass(Session *a, Session *b, const char *what) {
    Err e = {{0}};
    const bool ran = interp_run(a->it, &e) && interp_run(b->it, &e);
    CHECK(ran, "%s: %s", what, e.msg);
    const int n = interp_n_done(a->it);
    int differ = 0;
    for (int i = 0; ran && i < n && i < interp_n_done(b->it); i++) {
        const float *x = interp_output(a->it, i), *y = interp_output(b->it, i);
        const size_t k = (size_t)shape_numel(&interp_stage(a->it, i)->shape) * (size_t)interp_batch(a->it);
        differ += !x || !y || memcmp(x, y, sizeof(float) * k);
        interp_release_reads(a->it), interp_release_reads(b->it);
    }
    CHECK(ran && differ == 0 && n == interp_n_done(b->it), "%s: %d of %d stages differ", what, differ, n);
}

static void later_against_now(const char *dir, const char *ids, bool widen) {
    char what[300];
    snprintf(what, sizeof what, "%s%s", dir, widen ? " (widened)" : "");
    Session now, later;
    StReads r = {0};
    if (!open_at(&now, dir, ids, widen, NULL, NULL)) return;
    if (!open_at(&later, dir, ids, widen, &r, NULL)) return session_close(&now);
    CHECK(r.n > 0, "%s: no reads were left for later", what);
    const StRead *first = r.n ? &r.reads[0] : NULL;
    CHECK(first && zeros(first->to, (size_t)(first->end - first->begin)), "%s: a read left for later was done", what);
    only_declared(&r, &later.model, dir);
    Err e = {{0}};
    CHECK(st_reads_local(&r, &e), "%s: %s", what, e.msg);
    st_reads_finish(&r);
    if (same_weights(&now.model, &later.model, what)) same_pass(&now, &later, what);
    printf("  %s: read later, the same bits\n", what);
    st_reads_free(&r);
    session_close(&now), session_close(&later);
}

// A file that changed between its header and its reads is refused, naming it.
static void changed_file(const char *dir) {
    char tmp[] = "/tmp/stepformer-reads-XXXXXX", cmd[600], file[300];
    if (!mkdtemp(tmp)) {
        CHECK(false, "mkdtemp");
        return;
    }
    snprintf(cmd, sizeof cmd, "cp -r %s/. %s/", dir, tmp);
    CHECK(system(cmd) == 0, "%s", cmd);
    Session s;
    StReads r = {0};
    if (open_at(&s, tmp, "1,2,3", false, &r, NULL)) {
        snprintf(file, sizeof file, "%s/model.safetensors", tmp);
        FILE *f = fopen(file, "ab");
        CHECK(f && fputs("more", f) >= 0 && fclose(f) == 0, "appending to %s", file);
        Err e = {{0}};
        CHECK(!st_reads_local(&r, &e) && strstr(e.msg, file) && strstr(e.msg, "changed while it was read"),
              "a file that grew: '%s'", e.msg);
        session_close(&s);
    }
    st_reads_free(&r);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    CHECK(system(cmd) == 0, "%s", cmd);
}

// A model handed over (the window's teacher forcing opens its lesson again on other inputs) is
// the one the new session holds, and runs as one read again.
static void adopted(const char *dir) {
    Session a, b, fresh;
    if (!open_at(&a, dir, "1,2,3", false, NULL, NULL)) return;
    Err e = {{0}};
    CHECK(interp_run(a.it, &e), "%s: %s", dir, e.msg);
    int widened = 0;  // a weight held as 2 bytes read as floats: a copy the interpreter keeps
    for (int i = 0; i < interp_n_done(a.it); i++)
        for (int j = 0; j < interp_stage(a.it, i)->n_in; j++)
            if (interp_stage(a.it, i)->in[j].kind == REF_WEIGHT && interp_input(a.it, i, j)) widened++;
    interp_release_reads(a.it);
    CHECK(widened > 0, "%s: no weight read", dir);
    Model kept;
    const float *first = a.model.weights.entries[0].data;
    session_close_keeping(&a, &kept);
    if (!open_at(&b, dir, "4,5,6", false, NULL, &kept)) return model_free(&kept);
    CHECK(b.model.weights.entries[0].data == first && kept.n_params == 0, "the model was read again, not taken");
    if (open_at(&fresh, dir, "4,5,6", false, NULL, NULL)) {
        if (same_weights(&fresh.model, &b.model, "adopted")) same_pass(&fresh, &b, "adopted");
        session_close(&fresh);
    }
    session_close(&b);
    printf("  a model handed over: the same pass as one read again\n");
}

int main(void) {
    later_against_now(FIXTURES "/hub/gpt2", "1,2,3", false);
    later_against_now(FIXTURES "/hub/gpt2-prefixed-f16", "1,2,3", false);
    later_against_now(FIXTURES "/hub/gpt2-prefixed-f16", "1,2,3", true);
    later_against_now(FIXTURES "/hub/llama-gqa-bf16", "1,17,33,49", false);
    later_against_now(FIXTURES "/hub/llama-gqa-bf16", "1,17,33,49", true);
    later_against_now(FIXTURES "/hub/llama-mha-tied", "1,2,3", false);
    later_against_now(FIXTURES "/hub/marian", "5,6,7", false);
    changed_file(FIXTURES "/hub/gpt2");
    adopted(FIXTURES "/hub/gpt2-prefixed-f16");  // (under the sanitizer: the widened copies freed)
    return check_finish("test_reads");
}
