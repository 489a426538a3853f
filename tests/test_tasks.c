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
        CHECK(task_from_name(task_names[i], &t) && t == (Task)i, "name '%s'", task_names[i]);
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
        char s[BUF];
        snprintf(s, sizeof s, "29 February %d", y);
        bool ok = task_solve(TASK_DATES, s, s, sizeof s);
        CHECK(task_leap_year(y) == (y % 4 == 0) && ok == (y % 4 == 0), "29 February %d", y);
    }
    // ISO weekday numbers, 0 = Monday.
    CHECK(task_weekday(1970, 1, 1) == 3, "1970-01-01 is a Thursday");
    CHECK(task_weekday(2000, 2, 29) == 1, "2000-02-29 is a Tuesday");
    CHECK(task_weekday(2026, 11, 22) == 6, "2026-11-22 is a Sunday");
    CHECK(task_weekday(1950, 1, 1) == 6, "1950-01-01 is a Sunday");
    CHECK(task_weekday(2049, 12, 31) == 4, "2049-12-31 is a Friday");
    CHECK(task_weekday(1900, 1, 1) == 0 && task_weekday(1600, 3, 1) == 2, "1900-01-01 Mon, 1600-03-01 Wed");
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
    CHECK(days == 36525 && w == 0, "the range has 36525 days, ending on a Friday (%d, %d)", days, w);
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
              solves_to(TASK_COPY, "abcdefghijkl", "abcdefghijkl") && solves_to(TASK_SORT, "z", "z"),
          "letter answers");
}
