// test_tasks.c: the task generators and solvers, checked against references written here
// independently: a calendar walked one day at a time, Zeller's congruence for weekdays, a
// formatter of the eight date forms, and a classifier that tells a generated date's form.
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tasks.h"

enum { BUF = 64, N_GEN = 20000, N_FORMS = 8 };

static const char *const months[12] = {"January", "February", "March", "April", "May", "June",
                                       "July", "August", "September", "October", "November",
                                       "December"};
// Zeller's order: 0 = Saturday.
static const char *const zeller_days[7] = {"Saturday", "Sunday", "Monday", "Tuesday",
                                           "Wednesday", "Thursday", "Friday"};

// ---- the reference calendar ----

static bool ref_leap(int y) { return y % 400 == 0 || (y % 4 == 0 && y % 100 != 0); }

static int ref_month_days(int y, int m) {  // "thirty days hath September, ..."
    if (m == 2) return ref_leap(y) ? 29 : 28;
    return (m == 4 || m == 6 || m == 9 || m == 11) ? 30 : 31;
}

// Zeller's congruence: 0 = Saturday, 1 = Sunday, ..., 6 = Friday.
static int zeller(int y, int m, int d) {
    if (m < 3) m += 12, y -= 1;
    int k = y % 100, j = y / 100;
    return (d + 13 * (m + 1) / 5 + k + k / 4 + j / 4 + 5 * j) % 7;
}

static void next_day(int *y, int *m, int *d) {
    if (++*d > ref_month_days(*y, *m)) *d = 1, ++*m;
    if (*m > 12) *m = 1, ++*y;
}

// The date in form f (0..7, in the order of tasks.h), weekday w given in Zeller's order.
static void ref_format(char *s, int f, int y, int m, int d, int w) {
    const char *mo = months[m - 1];
    char ab[4] = {mo[0], mo[1], mo[2], '\0'};
    switch (f) {
    case 0: snprintf(s, BUF, "%d %s %d", d, mo, y); break;
    case 1: snprintf(s, BUF, "%s %d, %d", mo, d, y); break;
    case 2: snprintf(s, BUF, "%d %s %d", d, ab, y); break;
    case 3: snprintf(s, BUF, "%s %d, %d", ab, d, y); break;
    case 4: snprintf(s, BUF, "%02d/%02d/%d", d, m, y); break;
    case 5: snprintf(s, BUF, "%02d.%02d.%d", d, m, y); break;
    case 6: snprintf(s, BUF, "%d/%02d/%02d", y, m, d); break;
    default: snprintf(s, BUF, "%s, %d %s %d", zeller_days[w], d, mo, y); break;
    }
}

static void lower(char *s) {
    for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

static bool solves_to(Task t, const char *src, const char *want) {
    char got[BUF] = "";
    return task_solve(t, src, got, sizeof got) && strcmp(got, want) == 0;
}

// ---- tests ----

static void test_names(void) {
    for (int i = 0; i < TASK_COUNT; i++) {
        Task t;
        CHECK(task_names[i] && task_from_name(task_names[i], &t) && t == (Task)i, "name '%s'", task_names[i]);
    }
    Task t;
    CHECK(!task_from_name("Copy", &t) && !task_from_name("", &t) && !task_from_name("dates ", &t),
          "unknown names are rejected");
    CHECK(strcmp(task_names[TASK_DATES], "dates") == 0, "dates is called dates");
}

static void test_leap_and_anchors(void) {
    CHECK(task_leap_year(2000) && task_leap_year(1600) && task_leap_year(2024), "leap years");
    CHECK(!task_leap_year(1900) && !task_leap_year(2100) && !task_leap_year(2023), "common years");
    for (int y = 1950; y <= 2049; y++) {
        char s[BUF], out[BUF];
        snprintf(s, sizeof s, "29 February %d", y);
        bool ok = task_solve(TASK_DATES, s, out, sizeof out);
        CHECK(task_leap_year(y) == (y % 4 == 0) && ok == (y % 4 == 0), "29 February %d", y);
    }
    // ISO weekday numbers, 0 = Monday.
    CHECK(task_weekday(1970, 1, 1) == 3, "1970-01-01 is a Thursday");
    CHECK(task_weekday(2000, 2, 29) == 1, "2000-02-29 is a Tuesday");
    CHECK(task_weekday(2026, 11, 22) == 6, "2026-11-22 is a Sunday");
    CHECK(task_weekday(1950, 1, 1) == 6, "1950-01-01 is a Sunday");
    CHECK(task_weekday(2049, 12, 31) == 4, "2049-12-31 is a Friday");
    CHECK(task_weekday(1900, 1, 1) == 0 && task_weekday(1600, 3, 1) == 2,
          "1900-01-01 is a Monday, 1600-03-01 a Wednesday");
    CHECK(solves_to(TASK_DATES, "Thursday, 1 January 1970", "1970-01-01"), "1970 anchor");
    CHECK(solves_to(TASK_DATES, "Tuesday, 29 February 2000", "2000-02-29"), "2000 anchor");
    CHECK(solves_to(TASK_DATES, "Sunday, 1 January 1950", "1950-01-01"), "1950 anchor");
    CHECK(solves_to(TASK_DATES, "Friday, 31 December 2049", "2049-12-31"), "2049 anchor");
}

// Every day of the range, in every form and both casings, against the reference calendar: the
// weekday counter advances by one a day and agrees with Zeller and with task_weekday.
static void test_every_day(void) {
    int y = 1950, m = 1, d = 1, w = 1;  // 1950-01-01, a Sunday (Zeller's 1)
    int days = 0, bad_week = 0, bad_solve = 0, bad_wrong = 0, longest = 0;
    bool used[256] = {false};
    for (; y < 2050; next_day(&y, &m, &d), w = (w + 1) % 7, days++) {
        if (zeller(y, m, d) != w || (task_weekday(y, m, d) + 2) % 7 != w) bad_week++;
        char iso[BUF], s[BUF];
        snprintf(iso, sizeof iso, "%04d-%02d-%02d", y, m, d);
        for (const char *c = iso; *c; c++) used[(unsigned char)*c] = true;
        for (int f = 0; f < 2 * N_FORMS; f++) {
            ref_format(s, f % N_FORMS, y, m, d, w);
            if (f >= N_FORMS) lower(s);
            if ((int)strlen(s) > longest) longest = (int)strlen(s);
            for (const char *c = s; *c; c++) used[(unsigned char)*c] = true;
            if (!solves_to(TASK_DATES, s, iso) && bad_solve++ < 5)
                fprintf(stderr, "  '%s' does not solve to %s\n", s, iso);
        }
        ref_format(s, 7, y, m, d, (w + 1 + (days % 6)) % 7);  // some wrong weekday
        if (task_solve(TASK_DATES, s, iso, sizeof iso) && bad_wrong++ < 5)
            fprintf(stderr, "  '%s' was accepted\n", s);
    }
    CHECK(days == 36525 && w == 0, "the range has 36525 days, ending on a Friday (%d, %d)", days,
          w);
    CHECK(bad_week == 0, "%d days whose weekday disagrees with the reference", bad_week);
    CHECK(bad_solve == 0, "%d sources in the reference forms not solved", bad_solve);
    CHECK(bad_wrong == 0, "%d sources with a wrong weekday accepted", bad_wrong);
    CHECK(longest == task_max_src_len(TASK_DATES), "longest date %d, declared %d", longest,
          task_max_src_len(TASK_DATES));
    const char *alpha = task_alphabet(TASK_DATES);
    int n_used = 0;
    for (int c = 0; c < 256; c++) n_used += used[c];
    CHECK((int)strlen(alpha) == n_used, "alphabet has %zu characters, dates use %d", strlen(alpha),
          n_used);
    for (const char *c = alpha; *c; c++) CHECK(used[(unsigned char)*c], "'%c' is used", *c);
}

static void test_issue_example(void) {
    CHECK(solves_to(TASK_DATES, "Sunday, 22 November 2026", "2026-11-22"), "the issue's example");
    const char *forms[] = {"22 November 2026", "November 22, 2026", "22 Nov 2026", "Nov 22, 2026",
                           "22/11/2026", "22.11.2026", "2026/11/22", "Sunday, 22 November 2026",
                           "SUNDAY, 22 NOVEMBER 2026", "nOv 22, 2026"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char s[BUF];
        snprintf(s, sizeof s, "%s", forms[i]);
        CHECK(solves_to(TASK_DATES, s, "2026-11-22"), "'%s'", s);
        lower(s);
        CHECK(solves_to(TASK_DATES, s, "2026-11-22"), "'%s'", s);
    }
    CHECK(solves_to(TASK_DATES, "5 March 1999", "1999-03-05"), "word day without zero");
    CHECK(solves_to(TASK_DATES, "05/03/1999", "1999-03-05"), "numeric day with zero");
    CHECK(solves_to(TASK_DATES, "sep 9, 1999", "1999-09-09"), "abbreviated September");
}

static void test_invalid_dates(void) {
    const char *bad[] = {
        "31 February 2020", "30 February 2000", "29 February 2001", "31 April 2000", "31/04/2000",
        "Monday, 22 November 2026", "22 November 1949", "22 November 2050", "31 December 1949",
        "01/01/2050", "13/13/2000", "32/01/2000", "00/01/2000", "01/00/2000", "2026/22/11",
        "22 Novembre 2026", "22 Sept 2026", "22 Novem 2026", "05 March 1999", "March 05, 1999",
        "5/3/1999", "05/03/99", "22/11.2026", "2026-11-22", "2026.11.22", "", " 22 November 2026",
        "22 November 2026 ", "22  November 2026", "Sunday 22 November 2026",
        "Sun, 22 November 2026", "Sunday, 22 Nov 2026", "Funday, 22 November 2026",
        "November 22 2026", "November 22,2026", "22 November 02026", "0 March 2000",
        "22 November, 2026", "November 2026", "22 11 2026", "Sunday,", "x", "1234567890123/1",
        "22 November 2026x", "22 Novemberrrrrrrrrrrrrrrrr 2026"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char out[BUF] = "";
        CHECK(!task_solve(TASK_DATES, bad[i], out, sizeof out), "'%s' gave '%s'", bad[i], out);
    }
    const char *bad_letters[] = {"", "Abc", "abc1", "a b", "abcdefghijklm", "ab-c", "é"};
    for (int t = TASK_COPY; t <= TASK_SORT; t++)
        for (size_t i = 0; i < sizeof bad_letters / sizeof bad_letters[0]; i++) {
            char out[BUF];
            CHECK(!task_solve((Task)t, bad_letters[i], out, sizeof out), "%s '%s'", task_names[t],
                  bad_letters[i]);
        }
    CHECK(solves_to(TASK_SORT, "hello", "ehllo") && solves_to(TASK_REVERSE, "hello", "olleh") &&
              solves_to(TASK_COPY, "abcdefghijkl", "abcdefghijkl") &&
              solves_to(TASK_SORT, "z", "z"),
          "letter answers");
}

// ---- generated examples ----

static bool in_alphabet(const char *alpha, const char *s) {
    for (; *s; s++)
        if (!strchr(alpha, *s)) return false;
    return true;
}

static bool same_word_ci(const char *s, const char *w, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)s[i]) != w[i]) return false;
    return true;
}

// The form (0..7) of a generated date, told by its shape; -1 for "May", which the full and
// abbreviated forms write alike.
static int classify(const char *s) {
    static const char *letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if (strchr(s, '/')) return s[4] == '/' ? 6 : 4;
    if (strchr(s, '.')) return 5;
    bool month_first = isalpha((unsigned char)s[0]);
    const char *w = month_first ? s : strchr(s, ' ') + 1;
    size_t n = strspn(w, letters);
    if (month_first && w[n] == ',') return 7;
    if (n == 3 && same_word_ci(w, "may", 3)) return -1;
    return (month_first ? 1 : 0) + (n == 3 ? 2 : 0);
}

// Capitalised: a letter is upper case exactly when it starts a word.
static bool capitalised(const char *s) {
    for (size_t i = 0; s[i]; i++) {
        if (!isalpha((unsigned char)s[i])) continue;
        bool start = i == 0 || s[i - 1] == ' ';
        if (start != (bool)isupper((unsigned char)s[i])) return false;
    }
    return true;
}

static bool has_upper(const char *s) {
    for (; *s; s++)
        if (isupper((unsigned char)*s)) return true;
    return false;
}

// Word forms write the day without a leading zero; numeric forms are exactly 10 characters.
static bool day_digits_ok(const char *s, int form) {
    if (form >= 4 && form <= 6) return strlen(s) == 10;
    for (size_t i = 0; s[i]; i++)
        if (s[i] == '0' && (i == 0 || s[i - 1] == ' ') && isdigit((unsigned char)s[i + 1]) &&
            !isdigit((unsigned char)s[i + 2]))
            return false;
    return true;
}

typedef struct {
    int forms[N_FORMS][2];  // [form][lower-cased]
    bool years[100], months[12], days[31];
    int first, last;        // earliest and latest date seen, as YYYYMMDD
    int bad_style;
} DateStats;

static void date_stats_add(DateStats *st, const char *src, const char *tgt) {
    int f = classify(src), y = 0, m = 0, d = 0;
    bool low = !has_upper(src);
    if (f >= 0) st->forms[f][low]++;
    if (!(low || capitalised(src)) || (f >= 0 && !day_digits_ok(src, f))) {
        if (st->bad_style++ < 5) fprintf(stderr, "  badly written date '%s'\n", src);
    }
    if (sscanf(tgt, "%d-%d-%d", &y, &m, &d) != 3 || y < 1950 || y > 2049 || m < 1 || m > 12 ||
        d < 1 || d > 31)
        return;
    st->years[y - 1950] = st->months[m - 1] = st->days[d - 1] = true;
    int key = y * 10000 + m * 100 + d;
    if (key < st->first) st->first = key;
    if (key > st->last) st->last = key;
}

static void date_stats_check(const DateStats *st) {
    int total[2] = {0, 0};
    for (int f = 0; f < N_FORMS; f++) {
        bool numeric = f >= 4 && f <= 6;  // no letters: both casings read the same
        for (int low = numeric; low < 2; low++)
            CHECK(st->forms[f][low] > N_GEN / 40, "form %d %s: %d of %d", f,
                  low ? "lower-cased" : "capitalised", st->forms[f][low], N_GEN);
        if (f >= 4)  // forms that "May" cannot blur: about 1/8 each
            CHECK(abs(st->forms[f][0] + st->forms[f][1] - N_GEN / 8) < N_GEN / 50, "form %d: %d",
                  f, st->forms[f][0] + st->forms[f][1]);
        if (!numeric) total[0] += st->forms[f][0], total[1] += st->forms[f][1];
    }
    CHECK(abs(total[1] - total[0]) < total[0] / 10, "casing split %d / %d", total[0], total[1]);
    CHECK(st->bad_style == 0, "%d badly written dates", st->bad_style);
    bool all = true;
    for (int i = 0; i < 100; i++) all = all && st->years[i];
    for (int i = 0; i < 12; i++) all = all && st->months[i];
    for (int i = 0; i < 31; i++) all = all && st->days[i];
    CHECK(all, "every year 1950-2049, month and day number occurs");
    CHECK(st->first >= 19500101 && st->last <= 20491231 &&
              st->last / 10000 - st->first / 10000 > 95,
          "dates seen span %d .. %d", st->first, st->last);
}

typedef struct {
    int lengths[13], letters[26];
    int bad_shape;
} LetterStats;

static void letter_stats_add(LetterStats *st, Task t, const char *src, const char *tgt) {
    size_t n = strlen(src);
    st->lengths[n <= 12 ? n : 0]++;
    int count[26] = {0};
    bool ok = strlen(tgt) == n;
    for (size_t i = 0; ok && i < n; i++) {
        ok = src[i] >= 'a' && src[i] <= 'z' && tgt[i] >= 'a' && tgt[i] <= 'z';
        if (ok) count[src[i] - 'a']++, st->letters[src[i] - 'a']++;
    }
    for (size_t i = 0; ok && i < n; i++) {
        if (t == TASK_COPY) ok = tgt[i] == src[i];
        if (t == TASK_REVERSE) ok = tgt[n - 1 - i] == src[i];  // reversing twice gives the source
        if (t == TASK_SORT) ok = (i == 0 || tgt[i - 1] <= tgt[i]) && count[tgt[i] - 'a']-- > 0;
    }
    if (!ok && st->bad_shape++ < 5) fprintf(stderr, "  %s '%s' -> '%s'\n", task_names[t], src, tgt);
}

static void letter_stats_check(const LetterStats *st, Task t) {
    CHECK(st->bad_shape == 0, "%s: %d wrong targets", task_names[t], st->bad_shape);
    CHECK(st->lengths[0] == 0, "%s: no empty or over-long source", task_names[t]);
    for (int n = 1; n <= 12; n++)  // about 1/12 each
        CHECK(abs(st->lengths[n] - N_GEN / 12) < N_GEN / 60, "%s: %d sources of length %d",
              task_names[t], st->lengths[n], n);
    int total = 0;
    for (int c = 0; c < 26; c++) total += st->letters[c];
    for (int c = 0; c < 26; c++)
        CHECK(abs(st->letters[c] * 26 - total) < total / 5, "%s: letter '%c' %d times of %d",
              task_names[t], 'a' + c, st->letters[c], total);
}

// ---- the classification tasks, against references written here ----

typedef struct {
    int lengths[13], classes[6], bad, no_same_counts, no_total;
} ClassStats;

// Balance by deleting adjacent matched pairs until none is left (not the stack of tasks.c).
static bool balanced_by_deletion(const char *s) {
    char w[BUF];
    snprintf(w, sizeof w, "%s", s);
    for (bool again = true; again;) {
        again = false;
        for (char *p = w; p[0] && p[1]; p++)
            if ((p[0] == '(' && p[1] == ')') || (p[0] == '[' && p[1] == ']')) {
                memmove(p, p + 2, strlen(p + 2) + 1);
                again = true;
                break;
            }
    }
    return w[0] == '\0';
}

static void class_stats_add(ClassStats *st, Task t, const char *src, const char *tgt) {
    const size_t n = strlen(src);
    st->lengths[n <= 12 ? n : 0]++;
    const int k = task_class_of(t, tgt);
    bool ok = k >= 0;
    if (ok) st->classes[k]++;
    if (t == TASK_MAJORITY && ok) {  // tgt occurs more often than every other letter a-f
        int tgt_count = 0;
        for (size_t i = 0; i < n; i++) tgt_count += src[i] == tgt[0];
        for (char c = 'a'; c <= 'f'; c++) {
            int count = 0;
            for (size_t i = 0; i < n; i++) count += src[i] == c;
            ok = ok && (c == tgt[0] || count < tgt_count);
        }
    }
    if (t == TASK_BRACKETS && ok) {
        ok = n % 2 == 0 && balanced_by_deletion(src) == !strcmp(tgt, "yes");
        if (!strcmp(tgt, "no")) {
            int c[4] = {0};
            for (size_t i = 0; i < n; i++) c[strchr("()[]", src[i]) - "()[]"]++;
            st->no_total++, st->no_same_counts += c[0] == c[1] && c[2] == c[3];
        }
    }
    if (!ok && st->bad++ < 5) fprintf(stderr, "  %s '%s' -> '%s'\n", task_names[t], src, tgt);
}

static void class_stats_check(const ClassStats *st, Task t) {
    CHECK(st->bad == 0, "%s: %d wrong labels", task_names[t], st->bad);
    CHECK(st->lengths[0] == 0, "%s: no empty or over-long source", task_names[t]);
    const bool even = t == TASK_BRACKETS;  // 2, 4, ..., 12: 1/6 each; majority 1..12: 1/12 each
    for (int n = 1; n <= 12; n++) {
        const int want = even ? (n % 2 ? 0 : N_GEN / 6) : N_GEN / 12;
        CHECK(abs(st->lengths[n] - want) <= N_GEN / 60, "%s: %d sources of length %d", task_names[t], st->lengths[n], n);
    }
    for (int k = 0; k < task_classes(t); k++)  // every letter equally likely to win; yes as often as no
        CHECK(abs(st->classes[k] * task_classes(t) - N_GEN) < N_GEN / 10, "%s: class %s %d times of %d",
              task_names[t], task_class_name(t, k), st->classes[k], N_GEN);
    if (even)
        CHECK(st->no_same_counts == st->no_total, "brackets: %d of %d unbalanced strings have the balanced ones' "
              "counts", st->no_same_counts, st->no_total);
}

static void test_classes(void) {
    CHECK(task_classes(TASK_MAJORITY) == 6 && task_classes(TASK_BRACKETS) == 2 && task_classes(TASK_SORT) == 0 &&
              task_classes(TASK_DATES) == 0, "class counts");
    CHECK(!strcmp(task_class_name(TASK_MAJORITY, 5), "f") && !strcmp(task_class_name(TASK_BRACKETS, 1), "yes") &&
              task_class_of(TASK_BRACKETS, "no") == 0 && task_class_of(TASK_BRACKETS, "maybe") == -1 &&
              task_class_of(TASK_MAJORITY, "c") == 2 && task_class_of(TASK_MAJORITY, "g") == -1,
          "class names");
    CHECK(solves_to(TASK_MAJORITY, "cabbcb", "b") && solves_to(TASK_MAJORITY, "f", "f") &&
              solves_to(TASK_BRACKETS, "([)]", "no") && solves_to(TASK_BRACKETS, "([]())", "yes") &&
              solves_to(TASK_BRACKETS, "(((", "no"),
          "class answers");
    const char *bad_majority[] = {"", "aabb", "abcdef", "abg", "Aab", "aaaaaaaaaaaaa"};
    const char *bad_brackets[] = {"", "(a)", "{}", "(((((((((((((", "( )"};
    char out[BUF];
    for (size_t i = 0; i < sizeof bad_majority / sizeof bad_majority[0]; i++)
        CHECK(!task_solve(TASK_MAJORITY, bad_majority[i], out, sizeof out), "majority '%s'", bad_majority[i]);
    for (size_t i = 0; i < sizeof bad_brackets / sizeof bad_brackets[0]; i++)
        CHECK(!task_solve(TASK_BRACKETS, bad_brackets[i], out, sizeof out), "brackets '%s'", bad_brackets[i]);
}

static void test_generated(Task t) {
    Rng rng = {1234 + (uint64_t)t};
    DateStats ds = {.first = 99999999, .last = 0};
    LetterStats ls = {.bad_shape = 0};
    ClassStats cs = {.bad = 0};
    int bad = 0, longest = 0;
    const char *alpha = task_alphabet(t);
    for (int i = 0; i < N_GEN; i++) {
        char src[BUF], tgt[BUF], solved[BUF] = "";
        task_example(t, &rng, src, sizeof src, tgt, sizeof tgt);
        int n = (int)strlen(src);
        if (n > longest) longest = n;
        bool ok = n >= 1 && n <= task_max_src_len(t) && (int)strlen(tgt) <= task_max_tgt_len(t) &&
                  in_alphabet(alpha, src) && (task_classes(t) || in_alphabet(alpha, tgt)) &&
                  task_solve(t, src, solved, sizeof solved) && strcmp(solved, tgt) == 0;
        if (!ok && bad++ < 5)
            fprintf(stderr, "  %s: '%s' -> '%s' (solved '%s')\n", task_names[t], src, tgt, solved);
        if (t == TASK_DATES) date_stats_add(&ds, src, tgt);
        else if (task_classes(t)) class_stats_add(&cs, t, src, tgt);
        else letter_stats_add(&ls, t, src, tgt);
    }
    CHECK(bad == 0, "%s: %d of %d examples out of bounds, off the alphabet or not solved",
          task_names[t], bad, N_GEN);
    CHECK(longest == task_max_src_len(t), "%s: longest source %d, declared %d", task_names[t],
          longest, task_max_src_len(t));
    if (t == TASK_DATES) date_stats_check(&ds);
    else if (task_classes(t)) class_stats_check(&cs, t);
    else letter_stats_check(&ls, t);
}

static void test_alphabets(void) {
    for (int t = 0; t < TASK_COUNT; t++) {
        const char *a = task_alphabet((Task)t);
        bool ascending = true;
        for (size_t i = 1; a[i]; i++) ascending = ascending && a[i - 1] < a[i];
        CHECK(ascending, "%s: alphabet in ascending order with no repeats", task_names[t]);
    }
    CHECK(strcmp(task_alphabet(TASK_COPY), "abcdefghijklmnopqrstuvwxyz") == 0, "letters");
    CHECK(task_max_tgt_len(TASK_DATES) == 10 && task_max_src_len(TASK_SORT) == 12 &&
              task_max_tgt_len(TASK_REVERSE) == 12, "declared lengths");
}

static void test_reproducible(void) {
    for (int t = 0; t < TASK_COUNT; t++) {
        Rng a = {77}, b = {77}, c = {78};
        int same = 0, differ = 0;
        for (int i = 0; i < 100; i++) {
            char s1[BUF], t1[BUF], s2[BUF], t2[BUF], s3[BUF], t3[BUF];
            task_example((Task)t, &a, s1, sizeof s1, t1, sizeof t1);
            task_example((Task)t, &b, s2, sizeof s2, t2, sizeof t2);
            task_example((Task)t, &c, s3, sizeof s3, t3, sizeof t3);
            same += strcmp(s1, s2) == 0 && strcmp(t1, t2) == 0;
            differ += strcmp(s1, s3) != 0;
        }
        CHECK(same == 100, "%s: the same seed gave %d of 100 equal examples", task_names[t], same);
        CHECK(differ > 90, "%s: another seed differed in only %d of 100", task_names[t], differ);
    }
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

// A held-out set: n distinct sources with right targets, found by has(); fresh draws are
// found exactly when they are in the set.
static void check_held_out(const TaskHeldOut *h, Task t, int n) {
    CHECK(task_held_out_count(h) == n, "%s: %d held out", task_names[t], task_held_out_count(h));
    const char **srcs = malloc((size_t)n * sizeof *srcs);
    int wrong = 0, missing = 0, dups = 0;
    for (int i = 0; i < n; i++) {
        srcs[i] = task_held_out_src(h, i);
        wrong += !solves_to(t, srcs[i], task_held_out_tgt(h, i));
        missing += !task_held_out_has(h, srcs[i]);
    }
    qsort(srcs, (size_t)n, sizeof *srcs, cmp_str);
    for (int i = 1; i < n; i++) dups += strcmp(srcs[i - 1], srcs[i]) == 0;
    CHECK(wrong == 0 && missing == 0 && dups == 0, "%s: %d wrong targets, %d not found, %d repeats",
          task_names[t], wrong, missing, dups);
    Rng rng = {999};
    int disagree = 0, outside = 0;
    for (int i = 0; i < 5000; i++) {
        char src[BUF], tgt[BUF];
        const char *key = src;
        task_example(t, &rng, src, sizeof src, tgt, sizeof tgt);
        bool in = bsearch(&key, srcs, (size_t)n, sizeof *srcs, cmp_str) != NULL;
        outside += !in;
        disagree += in != task_held_out_has(h, src);
    }
    CHECK(disagree == 0 && outside > 0, "%s: has() wrong for %d fresh examples (%d outside)",
          task_names[t], disagree, outside);
    CHECK(!task_held_out_has(h, "") && !task_held_out_has(h, "not a source at all"), "junk");
    free(srcs);
}

static void test_held_out(void) {
    for (int t = 0; t < TASK_COUNT; t++) {
        Err e = {{0}};
        TaskHeldOut *h = task_held_out_new((Task)t, 5, 1000, &e);
        TaskHeldOut *again = task_held_out_new((Task)t, 5, 1000, &e);
        TaskHeldOut *other = task_held_out_new((Task)t, 6, 1000, &e);
        CHECK(h && again && other, "%s: held-out sets built: %s", task_names[t], e.msg);
        if (!h || !again || !other) return;
        check_held_out(h, (Task)t, 1000);
        int same = 0, same_other = 0;
        for (int i = 0; i < 1000; i++) {
            same += strcmp(task_held_out_src(h, i), task_held_out_src(again, i)) == 0 &&
                    strcmp(task_held_out_tgt(h, i), task_held_out_tgt(again, i)) == 0;
            same_other += task_held_out_has(h, task_held_out_src(other, i));
        }
        CHECK(same == 1000, "%s: the same seed repeated %d of 1000", task_names[t], same);
        CHECK(same_other < 500, "%s: another seed shares %d of 1000", task_names[t], same_other);
        task_held_out_free(h), task_held_out_free(again), task_held_out_free(other);
    }
    Err e = {{0}};
    TaskHeldOut *empty = task_held_out_new(TASK_SORT, 1, 0, &e);
    CHECK(empty && task_held_out_count(empty) == 0 && !task_held_out_has(empty, "abc"),
          "an empty set");
    task_held_out_free(empty);
    CHECK(task_held_out_new(TASK_COPY, 1, -1, &e) == NULL && strstr(e.msg, "negative"),
          "a negative count is refused: %s", e.msg);
    task_held_out_free(NULL);
}

// The held-out set leaves most short sources to training: at most a fifth of each length.
static void held_out_leaves_short_strings(void) {
    Err e = {{0}};
    TaskHeldOut *h = task_held_out_new(TASK_COPY, 5, 1000, &e);
    CHECK(h != NULL, "%s", e.msg);
    if (!h) return;
    int len1 = 0, len2 = 0;
    for (int i = 0; i < task_held_out_count(h); i++) {
        size_t n = strlen(task_held_out_src(h, i));
        len1 += n == 1, len2 += n == 2;
    }
    CHECK(len1 <= 26 / 5 && len2 <= 676 / 5, "held out: %d one-letter and %d two-letter strings", len1, len2);
    task_held_out_free(h);
    // The classification tasks draw from fewer strings than their alphabets make: 4 of length 2
    // and 36 of length 4 for brackets (equal counts of each kind), 6 of length 2 for majority
    // ("aa" .. "ff"). A fifth of those at most, so training sees "()" and "[]".
    h = task_held_out_new(TASK_BRACKETS, 5, 1000, &e);
    int b2 = 0, b4 = 0;
    for (int i = 0; h && i < task_held_out_count(h); i++) {
        const size_t n = strlen(task_held_out_src(h, i));
        b2 += n == 2, b4 += n == 4;
    }
    CHECK(h && b2 == 0 && b4 <= 36 / 5, "brackets held out: %d of length 2, %d of length 4", b2, b4);
    task_held_out_free(h);
    h = task_held_out_new(TASK_MAJORITY, 5, 1000, &e);
    int m2 = 0;
    for (int i = 0; h && i < task_held_out_count(h); i++) m2 += strlen(task_held_out_src(h, i)) == 2;
    CHECK(h && m2 <= 1, "majority held out: %d of the 6 two-letter strings", m2);
    task_held_out_free(h);
}

int main(void) {
    held_out_leaves_short_strings();
    test_names();
    test_alphabets();
    test_leap_and_anchors();
    test_every_day();
    test_issue_example();
    test_invalid_dates();
    test_classes();
    for (int t = 0; t < TASK_COUNT; t++) test_generated((Task)t);
    test_reproducible();
    test_held_out();
    return check_finish("test_tasks");
}
