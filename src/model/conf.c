// conf.c: the open configuration table (see conf.h).
#include "conf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Settings written as words; their value is the word's index.
static const struct {
    const char *name;
    const char *words[3];
} word_settings[] = {
    {"norm_first", {"false", "true", NULL}},
    {"activation", {"relu", "gelu", NULL}},
    {"layer_norm", {"torch", "annotated", NULL}},
};

static const char *const numeric_settings[] = {"layer_norm_eps", "bos_id", "eos_id", "pad_id", "unk_id"};

static int word_setting(const char *name) {
    for (size_t i = 0; i < sizeof word_settings / sizeof word_settings[0]; i++)
        if (!strcmp(word_settings[i].name, name)) return (int)i;
    return -1;
}

int conf_setting_names(const char **out, int max) {
    int n = 0;
    for (size_t i = 0; i < sizeof numeric_settings / sizeof numeric_settings[0] && n < max; i++) out[n++] = numeric_settings[i];
    for (size_t i = 0; i < sizeof word_settings / sizeof word_settings[0] && n < max; i++) out[n++] = word_settings[i].name;
    return n;
}

bool conf_is_setting(const char *name) {
    for (size_t i = 0; i < sizeof numeric_settings / sizeof numeric_settings[0]; i++)
        if (!strcmp(numeric_settings[i], name)) return true;
    return word_setting(name) >= 0;
}

void conf_spec_add(ConfSpec *cs, const char *text, const char *from, bool weak) {
    if (text && cs->n < CONF_MAX_SOURCES) cs->s[cs->n++] = (ConfSource){text, from, weak};
}

void conf_spec_add_file(ConfSpec *cs, const char *text, const char *from) {
    const int n = cs->n;
    conf_spec_add(cs, text, from, false);
    if (cs->n > n) cs->s[n].file = true;
}

const ConfItem *conf_find(const Conf *c, const char *name) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->items[i].name, name)) return &c->items[i];
    return NULL;
}

bool conf_get(const Conf *c, const char *name, double *out) {
    const ConfItem *it = conf_find(c, name);
    if (it) *out = it->value;
    return it != NULL;
}

void conf_value_text(const ConfItem *it, char *buf, size_t n) {
    int w = word_setting(it->name);
    if (w >= 0 && it->value >= 0 && it->value < 2 && it->value == floor(it->value))
        snprintf(buf, n, "%s", word_settings[w].words[(int)it->value]);
    else if (it->value == floor(it->value) && fabs(it->value) < 1e15)
        snprintf(buf, n, "%lld", (long long)it->value);
    else
        snprintf(buf, n, "%.9g", it->value);
}

bool conf_set(Conf *c, const char *name, double v, const char *from, bool given, bool weak, Err *e) {
    if (strlen(name) > CONF_NAME_MAX)
        return err_set(e, "%s: the configuration name '%.40s...' is longer than %d characters", from,
                       name, CONF_NAME_MAX);
    if (!isfinite(v)) return err_set(e, "%s: %s is not a finite number", from, name);
    ConfItem *it = (ConfItem *)conf_find(c, name);
    if (it) {
        if (weak || it->value == v) return true;  // a default gives way; agreement is fine
        if (!it->weak) {
            char a[40], b[40];
            ConfItem other = *it;
            other.value = v;
            conf_value_text(it, a, sizeof a), conf_value_text(&other, b, sizeof b);
            return err_set(e, "%s is %s in %s, but %s in %s", name, a, it->from, b, from);
        }
    } else {
        if (c->n == CONF_MAX_ITEMS)  // (each name is looked for among all the others: bounded work)
            return err_set(e, "%s: more than %d configuration names", from, CONF_MAX_ITEMS);
        if (c->n == c->cap) {
            int cap = c->cap ? 2 * c->cap : 32;
            ConfItem *ni = realloc(c->items, sizeof *ni * (size_t)cap);
            if (!ni) return err_code(e, ERR_MEMORY, "out of memory");
            c->items = ni, c->cap = cap;
        }
        it = &c->items[c->n++];
    }
    memset(it, 0, sizeof *it);
    snprintf(it->name, sizeof it->name, "%s", name);
    snprintf(it->from, sizeof it->from, "%s", from);
    it->value = v, it->given = given, it->weak = weak;
    return true;
}

// The number a value's text stands for; false if it is none.
static bool value_of(const char *name, const char *val, double *out) {
    int w = word_setting(name);
    if (w >= 0) {
        for (int k = 0; word_settings[w].words[k]; k++)
            if (!strcmp(val, word_settings[w].words[k])) return *out = k, true;
        return false;
    }
    if (!strcmp(val, "true") || !strcmp(val, "false")) return *out = val[0] == 't', true;
    char *end;
    errno = 0;
    *out = strtod(val, &end);
    return end != val && !*end && !errno && isfinite(*out);
}

static bool bad_value(const char *from, const char *key, const char *val, Err *e) {
    int w = word_setting(key);
    if (w >= 0)
        return err_set(e, "%s: %s = \"%s\" is not \"%s\" or \"%s\"", from, key, val,
                       word_settings[w].words[0], word_settings[w].words[1]);
    return err_set(e, "%s: %s = \"%s\" is not a number", from, key, val);
}

bool conf_parse(Conf *c, const char *text, const char *from, bool given, bool weak, Err *e) {
    char *buf = malloc(strlen(text) + 1);
    if (!buf) return err_code(e, ERR_MEMORY, "out of memory");
    strcpy(buf, text);
    bool ok = true;
    char *rest = NULL;  // strtok_r: the window's trainer thread parses configurations too
    for (char *tok = strtok_r(buf, " \t,", &rest); tok && ok; tok = strtok_r(NULL, " \t,", &rest)) {
        char *eq = strchr(tok, '=');
        double v;
        if (!eq || eq == tok) {
            ok = err_set(e, "%s: config item '%.60s' should be key=value", from, tok);
            break;
        }
        *eq = '\0';
        if (!value_of(tok, eq + 1, &v)) ok = bad_value(from, tok, eq + 1, e);
        else ok = conf_set(c, tok, v, from, given, weak, e);
    }
    free(buf);
    return ok;
}

bool conf_apply(Conf *c, const ConfSpec *cs, Err *e) {
    for (int i = 0; i < cs->n; i++)
        if (!conf_parse(c, cs->s[i].text, cs->s[i].from, !cs->s[i].weak && !cs->s[i].file, cs->s[i].weak, e)) return false;
    return true;
}

bool conf_spec_get(const ConfSpec *cs, const char *name, double *out) {
    bool found = false;
    for (int i = 0; i < cs->n && !found; i++) {
        Conf one = {0};
        if (conf_parse(&one, cs->s[i].text, cs->s[i].from, false, false, NULL)) found = conf_get(&one, name, out);
        conf_free(&one);
    }
    return found;
}

bool conf_from_meta(Conf *c, const StFile *f, const char *path, Err *e) {
    char from[200];
    snprintf(from, sizeof from, "the metadata of %s", path);
    for (int i = 0; i < f->n_meta; i++) {
        const char *key = f->meta[i].name, *val = f->meta[i].value;
        double v;
        if (!key[0] || strlen(key) > CONF_NAME_MAX) continue;  // no name a program could use
        if (value_of(key, val, &v)) {
            if (!conf_set(c, key, v, from, true, false, e)) return false;
        } else if (conf_is_setting(key)) {
            return bad_value(from, key, val, e);
        }  // other text (vocabularies, other tools' notes) is not configuration
    }
    return true;
}

bool conf_copy(Conf *dst, const Conf *src) {
    memset(dst, 0, sizeof *dst);
    if (!src->n) return true;
    dst->items = malloc(sizeof *dst->items * (size_t)src->n);
    if (!dst->items) return false;
    memcpy(dst->items, src->items, sizeof *dst->items * (size_t)src->n);
    dst->n = dst->cap = src->n;
    return true;
}

void conf_free(Conf *c) {
    free(c->items);
    memset(c, 0, sizeof *c);
}
