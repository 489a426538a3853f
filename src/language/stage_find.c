// stage_find.c: a stage by its id, as a user types it, and its output as JSON (see interp.h).
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "interp.h"

// The id without a greedy round's "step.K." in front (the id itself when it has none).
static const char *round_rest(const char *id) {
    if (strncmp(id, "step.", 5) != 0) return id;
    const char *s = id + 5;
    while (*s >= '0' && *s <= '9') s++;
    return s > id + 5 && *s == '.' ? s + 1 : id;
}

// Whether `id` is `tail`, or ends in "." + tail.
static bool ends_in(const char *id, const char *tail) {
    const size_t n = strlen(id), k = strlen(tail);
    return n == k ? !strcmp(id, tail) : n > k && id[n - k - 1] == '.' && !strcmp(id + n - k, tail);
}

// No stage `id`: names up to four ids (without their round) that end in it, and the rounds.
static int no_stage(const Interp *it, const char *id, const char *what, int rounds, Err *e) {
    const char *near[4], *tail = round_rest(id);
    int n_near = 0;
    for (int i = 0; i < interp_n_stages(it) && n_near < 4; i++) {
        const char *rest = round_rest(interp_stage(it, i)->id);
        bool seen = !ends_in(rest, tail);
        for (int k = 0; k < n_near && !seen; k++) seen = !strcmp(near[k], rest);
        if (!seen) near[n_near++] = rest;
    }
    char list[400] = "", steps[120] = "";
    for (int k = 0, m = 0; k < n_near; k++)
        m += k ? snprintf(list + m, sizeof list - (size_t)m, ", %s", near[k])
               : snprintf(list, sizeof list, "; ids ending in '%s': %s", tail, near[k]);
    if (rounds >= 0)
        snprintf(steps, sizeof steps, "; greedy decoding names round K's stages step.K.ID, K = 0 to %d", rounds);
    err_set(e, "%s has no stage '%s'%s%s", what, id, list, steps);
    return -1;
}

int interp_find_stage(const Interp *it, const char *id, const char *what, bool *by_round, Err *e) {
    const int k = interp_find(it, id);
    *by_round = false;
    if (k >= 0) return k;
    int last = -1, rounds = -1;
    for (int i = 0; i < interp_n_stages(it); i++) {
        const Stage *st = interp_stage(it, i);
        const char *rest = round_rest(st->id);
        if (rest == st->id) continue;
        rounds = st->step > rounds ? st->step : rounds;
        if (!strcmp(rest, id)) last = i;
    }
    if (last < 0) return no_stage(it, id, what, rounds, e);
    *by_round = true;
    return last;
}

char *interp_stage_json(const Interp *it, int k) {
    const Stage *st = interp_stage(it, k);
    const float *x = interp_output(it, k);
    cJSON *o = cJSON_CreateObject(), *shape = cJSON_AddArrayToObject(o, "shape"), *values = cJSON_AddArrayToObject(o, "values");
    cJSON_AddStringToObject(o, "id", st->id);
    for (int d = 0; d < st->shape.ndim; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber(st->shape.dim[d]));
    const int64_t n = x ? shape_numel(&st->shape) : 0;
    for (int64_t i = 0; i < n; i++)  // a float as a double prints exactly; -inf (a mask) prints null
        cJSON_AddItemToArray(values, cJSON_CreateNumber(x[i]));
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}
