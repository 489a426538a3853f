// tasks.c: the toy tasks: letter strings (copy, reverse, sort) and dates, drawn and solved.
//
// Dates are drawn as a day number in the range, turned into year / month / day by walking
// the calendar, then written in one of the eight forms. Solving reads a source back with a
// small hand-written parser (one function per shape: digits first, or a word first) and
// checks that the day exists and, for the weekday form, that the weekday is the right one.
#include "tasks.h"

#include <assert.h>
#include <math.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const task_names[TASK_COUNT] = {
    [TASK_COPY] = "copy",   [TASK_REVERSE] = "reverse",   [TASK_SORT] = "sort",
    [TASK_DATES] = "dates", [TASK_MAJORITY] = "majority", [TASK_BRACKETS] = "brackets"};

enum {
    LETTERS_MAX = 12,       // the longest letter-task source
    DATE_SRC_MAX = 28,      // "Wednesday, 30 September 2049"
    DATE_TGT_LEN = 10,      // "2026-11-22"
    DATE_FIRST_YEAR = 1950,
    DATE_LAST_YEAR = 2049,
    TASK_BUF = 32,          // holds any source or target of any task, with its NUL
};
static_assert(DATE_SRC_MAX < TASK_BUF && LETTERS_MAX < TASK_BUF, "TASK_BUF holds every string");

static const char letters_alphabet[] = "abcdefghijklmnopqrstuvwxyz";
static const char majority_alphabet[] = "abcdef";  // also the majority task's classes, in order
static const char brackets_alphabet[] = "()[]";
static const char *const brackets_classes[2] = {"no", "yes"};
// Digits and separators, then every letter of the month and weekday names in both cases.
static const char dates_alphabet[] = " ,-./0123456789ADFJMNOSTWabcdefghijlmnoprstuvwy";

static const char *const month_names[12] = {"January", "February", "March",     "April",
                                            "May",     "June",     "July",      "August",
                                            "September", "October", "November", "December"};
static const char *const weekday_names[7] = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                             "Friday", "Saturday", "Sunday"};

typedef enum {
    FORM_DAY_MONTH,        // 22 November 2026
    FORM_MONTH_DAY,        // November 22, 2026
    FORM_DAY_MON,          // 22 Nov 2026
    FORM_MON_DAY,          // Nov 22, 2026
    FORM_SLASH,            // 22/11/2026
    FORM_DOT,              // 22.11.2026
    FORM_YEAR_FIRST,       // 2026/11/22
    FORM_WEEKDAY,          // Sunday, 22 November 2026
    FORM_COUNT
} DateForm;

bool task_from_name(const char *name, Task *out) {
    for (int i = 0; i < TASK_COUNT; i++)
        if (task_names[i] && strcmp(task_names[i], name) == 0) {  // (a missing name: the test says)
            *out = (Task)i;
            return true;
        }
    return false;
}

const char *task_alphabet(Task t) {
    assert(t >= 0 && t < TASK_COUNT);
    switch (t) {
    case TASK_DATES: return dates_alphabet;
    case TASK_MAJORITY: return majority_alphabet;
    case TASK_BRACKETS: return brackets_alphabet;
    default: return letters_alphabet;
    }
}

int task_max_src_len(Task t) {
    assert(t >= 0 && t < TASK_COUNT);
    return t == TASK_DATES ? DATE_SRC_MAX : LETTERS_MAX;
}

int task_max_tgt_len(Task t) {
    assert(t >= 0 && t < TASK_COUNT);
    switch (t) {
    case TASK_DATES: return DATE_TGT_LEN;
    case TASK_MAJORITY: return 1;
    case TASK_BRACKETS: return 3;  // "yes"
    default: return LETTERS_MAX;
    }
}

int task_classes(Task t) {
    assert(t >= 0 && t < TASK_COUNT);
    return t == TASK_MAJORITY ? (int)strlen(majority_alphabet) : t == TASK_BRACKETS ? 2 : 0;
}

const char *task_class_name(Task t, int k) {
    assert(k >= 0 && k < task_classes(t));
    static const char *const letters[] = {"a", "b", "c", "d", "e", "f"};
    static_assert(sizeof letters / sizeof letters[0] == sizeof majority_alphabet - 1, "a name per letter");
    return t == TASK_MAJORITY ? letters[k] : brackets_classes[k];
}

int task_class_of(Task t, const char *target) {
    for (int k = 0; k < task_classes(t); k++)
        if (!strcmp(task_class_name(t, k), target)) return k;
    return -1;
}

// ---- the calendar ----

bool task_leap_year(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

static int days_in_month(int year, int month) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return month == 2 && task_leap_year(year) ? 29 : days[month - 1];
}

// Days since 1970-01-01 (negative before it): count from March so the leap day comes last,
// then whole 400-year eras (146097 days each) plus the day within the era.
static long days_from_civil(int year, int month, int day) {
    long y = month <= 2 ? year - 1 : year;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;                                          // [0, 399]
    long doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;  // [0, 365]
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                 // [0, 146096]
    return era * 146097 + doe - 719468;
}

int task_weekday(int year, int month, int day) {
    long n = days_from_civil(year, month, day);  // 1970-01-01 was a Thursday (3)
    return (int)(((n + 3) % 7 + 7) % 7);
}

static bool date_in_range(int year, int month, int day) {
    return year >= DATE_FIRST_YEAR && year <= DATE_LAST_YEAR && month >= 1 && month <= 12 &&
           day >= 1 && day <= days_in_month(year, month);
}

// The k-th day of the range (k = 0 is 1950-01-01), by walking whole years, then months.
static void date_from_index(long k, int *year, int *month, int *day) {
    int y = DATE_FIRST_YEAR, m = 1;
    while (k >= (task_leap_year(y) ? 366 : 365)) k -= task_leap_year(y++) ? 366 : 365;
    while (k >= days_in_month(y, m)) k -= days_in_month(y, m++);
    *year = y, *month = m, *day = (int)k + 1;
}

// ---- drawing examples ----

static void letters_answer(Task t, const char *src, char *tgt) {
    size_t n = strlen(src);
    if (t == TASK_COPY) {
        memcpy(tgt, src, n + 1);
    } else if (t == TASK_REVERSE) {
        for (size_t i = 0; i < n; i++) tgt[i] = src[n - 1 - i];
        tgt[n] = '\0';
    } else {  // sort: count each letter, then write the counts out in order
        int count[26] = {0};
        for (size_t i = 0; i < n; i++) count[src[i] - 'a']++;
        size_t j = 0;
        for (int c = 0; c < 26; c++)
            while (count[c]-- > 0) tgt[j++] = (char)('a' + c);
        tgt[j] = '\0';
    }
}

static void format_date(char *s, size_t cap, DateForm form, int y, int m, int d) {
    const char *month = month_names[m - 1];
    switch (form) {
    case FORM_DAY_MONTH: snprintf(s, cap, "%d %s %04d", d, month, y); break;
    case FORM_MONTH_DAY: snprintf(s, cap, "%s %d, %04d", month, d, y); break;
    case FORM_DAY_MON: snprintf(s, cap, "%d %.3s %04d", d, month, y); break;
    case FORM_MON_DAY: snprintf(s, cap, "%.3s %d, %04d", month, d, y); break;
    case FORM_SLASH: snprintf(s, cap, "%02d/%02d/%04d", d, m, y); break;
    case FORM_DOT: snprintf(s, cap, "%02d.%02d.%04d", d, m, y); break;
    case FORM_YEAR_FIRST: snprintf(s, cap, "%04d/%02d/%02d", y, m, d); break;
    case FORM_WEEKDAY:
        snprintf(s, cap, "%s, %d %s %04d", weekday_names[task_weekday(y, m, d)], d, month, y);
        break;
    default: assert(!"unknown date form");
    }
}

// Draws, in this order: the day (uniform over the range), the form, and the casing.
static void dates_example(Rng *rng, char *src, size_t src_cap, char *tgt, size_t tgt_cap) {
    long span = days_from_civil(DATE_LAST_YEAR + 1, 1, 1) - days_from_civil(DATE_FIRST_YEAR, 1, 1);
    int y, m, d;
    date_from_index(rng_below(rng, (int)span), &y, &m, &d);
    DateForm form = (DateForm)rng_below(rng, FORM_COUNT);
    format_date(src, src_cap, form, y, m, d);
    if (rng_below(rng, 2))
        for (char *c = src; *c; c++) *c = (char)tolower((unsigned char)*c);
    snprintf(tgt, tgt_cap, "%04d-%02d-%02d", y, m, d);
}

// The letter occurring most often in s (letters a-f), or 0 if two letters share the most.
static char majority_of(const char *s) {
    int count[6] = {0}, best = 0;
    for (; *s; s++) count[*s - 'a']++;
    for (int c = 1; c < 6; c++) best = count[c] > count[best] ? c : best;
    for (int c = 0; c < 6; c++)
        if (c != best && count[c] == count[best]) return 0;
    return (char)('a' + best);
}

static bool brackets_balance(const char *s) {
    char stack[TASK_BUF];
    int depth = 0;
    for (; *s; s++) {
        if (*s == '(' || *s == '[') stack[depth++] = *s == '(' ? ')' : ']';
        else if (depth == 0 || stack[--depth] != *s) return false;
    }
    return depth == 0;
}

static void brackets_example(Rng *rng, char *src, char *tgt, size_t tgt_cap) {
    const int n = 2 * (1 + rng_below(rng, LETTERS_MAX / 2));
    const bool balanced = rng_below(rng, 2);
    char open[TASK_BUF];  // the closers still owed, innermost last
    int depth = 0;
    for (int i = 0; i < n; i++) {
        const bool must_close = depth == n - i, may_close = depth > 0;
        if (must_close || (may_close && rng_below(rng, 2))) {
            src[i] = open[--depth];
        } else {
            const int kind = rng_below(rng, 2);
            src[i] = kind ? '[' : '(', open[depth++] = kind ? ']' : ')';
        }
    }
    src[n] = '\0';
    while (!balanced && brackets_balance(src))  // Fisher-Yates until the order breaks it
        for (int i = n - 1; i > 0; i--) {
            const int j = rng_below(rng, i + 1);
            const char c = src[i];
            src[i] = src[j], src[j] = c;
        }
    snprintf(tgt, tgt_cap, "%s", brackets_classes[balanced]);
}

void task_example(Task t, Rng *rng, char *src, size_t src_cap, char *tgt, size_t tgt_cap) {
    assert(t >= 0 && t < TASK_COUNT);
    assert(src_cap > (size_t)task_max_src_len(t) && tgt_cap > (size_t)task_max_tgt_len(t));
    if (t == TASK_DATES) return dates_example(rng, src, src_cap, tgt, tgt_cap);
    if (t == TASK_BRACKETS) return brackets_example(rng, src, tgt, tgt_cap);
    if (t == TASK_MAJORITY) {
        const int n = 1 + rng_below(rng, LETTERS_MAX);
        do {
            for (int i = 0; i < n; i++) src[i] = majority_alphabet[rng_below(rng, 6)];
            src[n] = '\0';
        } while (!majority_of(src));
        snprintf(tgt, tgt_cap, "%c", majority_of(src));
        return;
    }
    int n = 1 + rng_below(rng, LETTERS_MAX);  // the length, then each letter
    for (int i = 0; i < n; i++) src[i] = letters_alphabet[rng_below(rng, 26)];
    src[n] = '\0';
    letters_answer(t, src, tgt);
}

// ---- solving: a small parser over a cursor ----

// Reads up to 6 digits; returns how many (more than 6 reads as 7, which no form accepts).
static int read_digits(const char **p, int *value) {
    int n = 0, v = 0;
    while (isdigit((unsigned char)**p)) {
        if (n < 6) v = v * 10 + (**p - '0');
        if (n < 7) n++;
        (*p)++;
    }
    *value = v;
    return n;
}

// Reads a run of ASCII letters, lower-cased, into w[16]; false if none or too long.
static bool read_word(const char **p, char *w) {
    int n = 0;
    while (isalpha((unsigned char)**p)) {
        if (n == 15) return false;
        w[n++] = (char)tolower((unsigned char)*(*p)++);
    }
    w[n] = '\0';
    return n > 0;
}

static bool skip(const char **p, const char *lit) {
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0) return false;
    *p += n;
    return true;
}

// Whether lower-case w is `name` in any case, in full (n = 0) or as its first n letters.
static bool word_is(const char *w, const char *name, size_t n) {
    size_t len = n ? n : strlen(name);
    if (strlen(w) != len || strlen(name) < len) return false;
    for (size_t i = 0; i < len; i++)
        if (w[i] != tolower((unsigned char)name[i])) return false;
    return true;
}

// The month (1-12) that w names, in full or (if allowed) by its three-letter abbreviation.
static int month_from_word(const char *w, bool abbreviated) {
    for (int i = 0; i < 12; i++)
        if (word_is(w, month_names[i], 0) || (abbreviated && word_is(w, month_names[i], 3)))
            return i + 1;
    return 0;
}

// A day as the word forms write it: one or two digits, no leading zero.
static bool read_plain_day(const char **p, int *day) {
    bool lead_zero = **p == '0';
    int n = read_digits(p, day);
    return !lead_zero && (n == 1 || n == 2);
}

// "22 November 2026", "22 Nov 2026", or (after the weekday) "22 November 2026".
static bool parse_day_month_year(const char **p, bool abbreviated, int *y, int *m, int *d) {
    char w[16];
    if (!read_plain_day(p, d) || !skip(p, " ") || !read_word(p, w) || !skip(p, " ")) return false;
    *m = month_from_word(w, abbreviated);
    return *m != 0 && read_digits(p, y) == 4 && **p == '\0';
}

// "22/11/2026", "22.11.2026" or "2026/11/22": two-digit days and months, a four-digit year.
static bool parse_numeric(const char *s, int *y, int *m, int *d) {
    const char *p = s;
    int a, na = read_digits(&p, &a);
    if (na == 4 && *p == '/') {
        *y = a;
        return skip(&p, "/") && read_digits(&p, m) == 2 && skip(&p, "/") &&
               read_digits(&p, d) == 2 && *p == '\0';
    }
    if (na == 2 && (*p == '/' || *p == '.')) {
        char sep[2] = {*p, '\0'};
        *d = a;
        return skip(&p, sep) && read_digits(&p, m) == 2 && skip(&p, sep) &&
               read_digits(&p, y) == 4 && *p == '\0';
    }
    p = s;  // "22 November 2026" or "22 Nov 2026"
    return parse_day_month_year(&p, true, y, m, d);
}

// "November 22, 2026", "Nov 22, 2026" or "Sunday, 22 November 2026".
static bool parse_word_first(const char *s, int *y, int *m, int *d, int *weekday) {
    const char *p = s;
    char w[16];
    if (!read_word(&p, w)) return false;
    if (skip(&p, ", ")) {
        *weekday = -1;
        for (int i = 0; i < 7; i++)
            if (word_is(w, weekday_names[i], 0)) *weekday = i;
        return *weekday >= 0 && parse_day_month_year(&p, false, y, m, d);
    }
    *m = month_from_word(w, true);
    return *m != 0 && skip(&p, " ") && read_plain_day(&p, d) && skip(&p, ", ") &&
           read_digits(&p, y) == 4 && *p == '\0';
}

static bool dates_solve(const char *src, char *tgt, size_t cap) {
    int y = 0, m = 0, d = 0, weekday = -1;
    bool ok = isdigit((unsigned char)src[0]) ? parse_numeric(src, &y, &m, &d)
                                              : parse_word_first(src, &y, &m, &d, &weekday);
    if (!ok || !date_in_range(y, m, d)) return false;
    if (weekday >= 0 && weekday != task_weekday(y, m, d)) return false;
    snprintf(tgt, cap, "%04d-%02d-%02d", y, m, d);
    return true;
}

bool task_solve(Task t, const char *src, char *tgt, size_t cap) {
    assert(t >= 0 && t < TASK_COUNT);
    assert(cap > (size_t)task_max_tgt_len(t));
    if (t == TASK_DATES) return dates_solve(src, tgt, cap);
    size_t n = strlen(src);
    if (n < 1 || n > LETTERS_MAX || strspn(src, task_alphabet(t)) != n) return false;
    if (t == TASK_BRACKETS) {
        snprintf(tgt, cap, "%s", brackets_classes[brackets_balance(src)]);
    } else if (t == TASK_MAJORITY) {
        const char m = majority_of(src);
        if (!m) return false;
        snprintf(tgt, cap, "%c", m);
    } else {
        letters_answer(t, src, tgt);
    }
    return true;
}

// ---- the held-out set: examples in an array, indexed by an open-addressing hash table ----

typedef struct {
    char src[TASK_BUF], tgt[TASK_BUF];
} HeldExample;

struct TaskHeldOut {
    HeldExample *items;  // [n]
    int n;
    int *slots;          // [mask + 1]: an index into items, or -1 for an empty slot
    size_t mask;         // slot count - 1 (a power of two minus one)
};

static uint64_t hash_str(const char *s) {  // FNV-1a
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

// The slot holding src, or the empty slot where it would go (linear probing).
static size_t find_slot(const TaskHeldOut *h, const char *src) {
    size_t i = (size_t)hash_str(src) & h->mask;
    while (h->slots[i] >= 0 && strcmp(h->items[h->slots[i]].src, src) != 0) i = (i + 1) & h->mask;
    return i;
}

// Whether the generator can draw s: majority's letters have one most frequent letter; brackets
// are as many openers as closers of each kind (balanced, or a balanced string shuffled).
static bool drawable(Task t, const char *s) {
    if (t == TASK_MAJORITY) return majority_of(s) != 0;
    if (t != TASK_BRACKETS) return true;
    int c[4] = {0};
    for (; *s; s++) c[strchr(brackets_alphabet, *s) - brackets_alphabet]++;
    return c[0] == c[1] && c[2] == c[3];
}

// How many distinct sources of `len` characters the generator can draw: counted one by one
// where there are few (the short lengths, where the held-out share matters), else a bound.
static double source_space(Task t, int len) {
    if (t == TASK_DATES) return 1e12;
    const int k = (int)strlen(task_alphabet(t));
    const double all = pow((double)k, len);
    if (all > 300000) return all;
    char s[TASK_BUF];
    double count = 0;
    for (long i = 0; i < (long)all; i++) {
        long v = i;
        for (int j = 0; j < len; j++, v /= k) s[j] = task_alphabet(t)[v % k];
        s[len] = '\0';
        count += drawable(t, s);
    }
    return count;
}

// Draws from the seed until n distinct sources are in (or too many draws were duplicates).

// The held-out set takes at most a fifth of the sources of any one length, so training still
// sees most short strings: with all 26 one-letter strings held out, a model would never learn
// what to do with one letter.
static bool held_out_fill(TaskHeldOut *h, Task t, uint64_t seed, int n, Err *e) {
    Rng rng = {seed};
    int per_len[64] = {0};
    double space[64];
    for (int i = 0; i < 64; i++) space[i] = -1;  // counted when first needed
    long tries = 0, max_tries = 100L * n + 1000;
    while (h->n < n && tries++ < max_tries) {
        HeldExample *x = &h->items[h->n];
        task_example(t, &rng, x->src, sizeof x->src, x->tgt, sizeof x->tgt);
        const int len = (int)strlen(x->src);
        if (len < 64 && space[len] < 0) space[len] = source_space(t, len);
        if (len < 64 && per_len[len] + 1 > space[len] / 5) continue;
        size_t slot = find_slot(h, x->src);
        if (h->slots[slot] >= 0) continue;  // already drawn
        h->slots[slot] = h->n++;
        if (len < 64) per_len[len]++;
    }
    if (h->n < n)
        return err_set(e, "held-out set for '%s': found only %d distinct examples of %d in %ld "
                       "draws", task_names[t], h->n, n, max_tries);
    return true;
}

TaskHeldOut *task_held_out_new(Task t, uint64_t seed, int n, Err *e) {
    assert(t >= 0 && t < TASK_COUNT);
    if (n < 0) {
        err_set(e, "held-out set for '%s': count %d is negative", task_names[t], n);
        return NULL;
    }
    size_t slots = 16;
    while (slots < 2 * (size_t)n) slots *= 2;  // at most half full
    TaskHeldOut *h = calloc(1, sizeof *h);
    if (h) h->items = malloc(((size_t)n + 1) * sizeof *h->items);
    if (h) h->slots = malloc(slots * sizeof *h->slots);
    if (!h || !h->items || !h->slots) {
        task_held_out_free(h);
        err_set(e, "held-out set for '%s': out of memory for %d examples", task_names[t], n);
        return NULL;
    }
    h->mask = slots - 1;
    for (size_t i = 0; i < slots; i++) h->slots[i] = -1;
    if (!held_out_fill(h, t, seed, n, e)) {
        task_held_out_free(h);
        return NULL;
    }
    return h;
}

int task_held_out_count(const TaskHeldOut *h) { return h->n; }

const char *task_held_out_src(const TaskHeldOut *h, int i) {
    assert(i >= 0 && i < h->n);
    return h->items[i].src;
}

const char *task_held_out_tgt(const TaskHeldOut *h, int i) {
    assert(i >= 0 && i < h->n);
    return h->items[i].tgt;
}

bool task_held_out_has(const TaskHeldOut *h, const char *src) {
    return h->slots[find_slot(h, src)] >= 0;
}

void task_held_out_free(TaskHeldOut *h) {
    if (!h) return;
    free(h->items);
    free(h->slots);
    free(h);
}
