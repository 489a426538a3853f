// link.c: reading a link's query string (see link.h).
#include "link.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const link_view_names[] = {"stage", "attention", "decoding", "positions", "training", "compare", "patch"};
const int link_view_count = sizeof link_view_names / sizeof link_view_names[0];

// Decodes %XX and '+' of n bytes of s into out (cap bytes with the NUL); false when it does not fit.
static bool decode(char *out, size_t cap, const char *s, size_t n) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '+') c = ' ';
        else if (c == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) && isxdigit((unsigned char)s[i + 2])) {
            const char hex[3] = {s[i + 1], s[i + 2], 0};
            c = (int)strtol(hex, NULL, 16);
            i += 2;
        }
        if (k + 1 >= cap) return false;
        out[k++] = (char)c;
    }
    out[k] = '\0';
    return true;
}

// Text from the link as a message may quote it: printable ASCII, at most 40 characters.
static void quote(char *out, size_t cap, const char *s) {
    size_t k = 0;
    for (; *s && k + 4 < cap && k < 40; s++) out[k++] = isprint((unsigned char)*s) && *s != '<' && *s != '>' ? *s : '?';
    if (*s && k + 4 < cap) out[k++] = '.', out[k++] = '.', out[k++] = '.';
    out[k] = '\0';
}

static bool bad(Link *l, const char *name, const char *value, const char *why) {
    char qn[64], qv[64];
    quote(qn, sizeof qn, name), quote(qv, sizeof qv, value);
    snprintf(l->error, sizeof l->error, "link: %s='%s' %s", qn, qv, why);
    return false;
}

static bool all_of(const char *s, const char *extra) {
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s)) return false;
    return true;
}

static bool size_value(Link *l, const char *v) {
    char *end;
    const long w = strtol(v, &end, 10);
    if (end == v || (*end != 'x' && *end != 'X')) return bad(l, "size", v, "is not WIDTHxHEIGHT (for example 1280x800)");
    const char *hs = end + 1;
    const long h = strtol(hs, &end, 10);
    if (end == hs || *end) return bad(l, "size", v, "is not WIDTHxHEIGHT (for example 1280x800)");
    if (w < LINK_MIN_SIZE || h < LINK_MIN_SIZE || w > LINK_MAX_SIZE || h > LINK_MAX_SIZE) {
        char why[120];
        snprintf(why, sizeof why, "is out of range: width and height from %d to %d pixels", LINK_MIN_SIZE, LINK_MAX_SIZE);
        return bad(l, "size", v, why);
    }
    l->w = (int)w, l->h = (int)h;
    return true;
}

// A folder on the site: a relative path of letters, digits and - _ . / with no part "." or
// "..", so a link can name nothing outside the site (nor another site).
static bool model_value(Link *l, const char *v) {
    const size_t n = strlen(v);
    bool ok = n > 0 && n < sizeof l->model && v[0] != '/' && all_of(v, "-_./");
    for (const char *p = v; ok && *p;) {
        const size_t k = strcspn(p, "/");
        ok = !((k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.'));
        p += k + (p[k] == '/');
    }
    if (!ok) return bad(l, "model", v, "is not a folder of this site (a relative path such as models/gpt2/, no '..')");
    snprintf(l->model, sizeof l->model, "%s", v);
    for (size_t k = strlen(l->model); k > 0 && l->model[k - 1] == '/';) l->model[--k] = '\0';
    return true;
}

static bool one(Link *l, const char *name, const char *v) {
    if (!strcmp(name, "lesson")) {
        if (!*v || strlen(v) >= sizeof l->lesson || !all_of(v, "-_") || isupper((unsigned char)v[0]))
            return bad(l, "lesson", v, "is not a lesson's name (a file name of the course without .md, as forward-pass)");
        snprintf(l->lesson, sizeof l->lesson, "%s", v);
    } else if (!strcmp(name, "stage")) {
        if (!*v || strlen(v) >= sizeof l->stage || !all_of(v, "._-")) return bad(l, "stage", v, "is not a stage id");
        snprintf(l->stage, sizeof l->stage, "%s", v);
    } else if (!strcmp(name, "view")) {
        l->view = -1;
        for (int k = 0; k < link_view_count; k++)
            if (!strcasecmp(v, link_view_names[k])) l->view = k;
        if (l->view < 0) return bad(l, "view", v, "is not a view: stage, attention, decoding, positions, training or compare");
    } else if (!strcmp(name, "size")) {
        return size_value(l, v);
    } else if (!strcmp(name, "replay")) {
        snprintf(l->replay, sizeof l->replay, "%s", v);
        for (char *c = l->replay; *c; c++)
            if (*c == ';') *c = '\n';
    } else if (!strcmp(name, "model")) {
        return model_value(l, v);
    } else if (!strcmp(name, "input")) {
        if (strlen(v) >= sizeof l->input) return bad(l, "input", v, "is too long");
        snprintf(l->input, sizeof l->input, "%s", v);
    } else if (!strcmp(name, "ids")) {
        if (!*v || strspn(v, "0123456789,") != strlen(v))
            return bad(l, "ids", v, "is not token ids separated by commas (3,4,5)");
        snprintf(l->ids, sizeof l->ids, "%s", v);
    } else if (!strcmp(name, "bench")) {
        l->bench = strcmp(v, "0") != 0;
    } else if (!strcmp(name, "wasm")) {  // read by the page's loader (index.html), checked here
        if (strcmp(v, "madd") && strcmp(v, "plain")) return bad(l, "wasm", v, "is not madd or plain");
        l->plain_wasm = !strcmp(v, "plain");
    } else {
        return bad(l, name, v, "is not a parameter: lesson, stage, view, size, replay, model, input, ids, bench or wasm");
    }
    return true;
}

bool link_parse(const char *query, Link *l) {
    memset(l, 0, sizeof *l);
    l->view = -1;
    if (*query == '?') query++;
    while (*query) {
        const char *amp = strchr(query, '&'), *end = amp ? amp : query + strlen(query);
        const char *eq = memchr(query, '=', (size_t)(end - query));
        char name[32], value[LINK_REPLAY_MAX];
        const char *vs = eq ? eq + 1 : end;
        if (!decode(name, sizeof name, query, (size_t)((eq ? eq : end) - query)))
            return bad(l, "a parameter", "", "has too long a name");
        if (!decode(value, sizeof value, vs, (size_t)(end - vs))) return bad(l, name, "", "is too long");
        if (*name && !one(l, name, value)) return false;
        query = amp ? amp + 1 : end;
    }
    return true;
}
