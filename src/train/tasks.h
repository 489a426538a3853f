// tasks.h: the toy tasks small models are trained on, generated and checked character by character.
//
//   copy     "hello"                     -> "hello"
//   reverse  "hello"                     -> "olleh"
//   sort     "hello"                     -> "ehllo"
//   dates    "Sunday, 22 November 2026"  -> "2026-11-22"
//
// Two classification tasks, whose target is the name of one class (one label a sequence):
//
//   majority "cabbcb"  -> "b"    which letter occurs most often (classes a..f)
//   brackets "([)]"    -> "no"   whether the brackets balance (classes no, yes)
//
// majority takes 1-12 letters drawn uniformly from a-f, drawn again until one letter occurs
// more often than every other. brackets takes 2, 4, ... or 12 brackets from ( ) [ ]: with
// probability 1/2 a balanced string (each position opens a bracket or closes the innermost open
// one, by a fair coin where both are possible), otherwise such a string shuffled until it no
// longer balances, so both answers have the same bracket counts and only the order tells.
//
// The letter tasks take 1-12 lowercase letters (length uniform in 1..12, letters uniform). The
// dates task takes a day drawn uniformly from 1950-01-01 .. 2049-12-31 written in one of eight
// forms (uniformly chosen), then, with probability 1/2, lower-cased as a whole:
//
//   22 November 2026    November 22, 2026    22 Nov 2026    Nov 22, 2026
//   22/11/2026          22.11.2026           2026/11/22     Sunday, 22 November 2026
//
// Numeric forms write two-digit days and months ("05/03/1999"); word forms write the day
// without a leading zero ("5 March 1999"); abbreviations are a month's first three letters; the
// weekday is computed from the date (proleptic Gregorian calendar). The target is "YYYY-MM-DD".
//
// Every random choice comes from the caller's Rng, so a seed reproduces every example.
// task_solve() is the other direction: it answers a source independently of how it was drawn,
// which lets the trainer score a model and the tests check the generators.
#ifndef STEPFORMER_TASKS_H
#define STEPFORMER_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rng.h"

typedef enum { TASK_COPY, TASK_REVERSE, TASK_SORT, TASK_DATES, TASK_MAJORITY, TASK_BRACKETS, TASK_COUNT } Task;

extern const char *const task_names[TASK_COUNT];  // "copy", ..., "dates", "majority", "brackets"

// How many classes a classification task has (its targets are their names); 0 for the
// sequence-to-sequence tasks.
int task_classes(Task t);
const char *task_class_name(Task t, int k);     // k in [0, task_classes(t))
int task_class_of(Task t, const char *target);  // the class a target names, or -1

// The task called `name`; false if there is none.
bool task_from_name(const char *name, Task *out);

// The characters a task's sources and targets use, in a fixed (ASCII) order. A task's
// vocabulary is the special tokens followed by these, one token per character (task_vocab).
const char *task_alphabet(Task t);

int task_max_src_len(Task t);  // the longest source in characters (12, or 28 for dates)
int task_max_tgt_len(Task t);  // the longest target in characters (12, 10 for dates, 1 or 3)

// One example, drawn from rng: NUL-terminated source and target. The buffers must hold the
// longest source / target plus the NUL (asserted).
void task_example(Task t, Rng *rng, char *src, size_t src_cap, char *tgt, size_t tgt_cap);

// The correct target for `src`; false if src is not a valid input of the task: for the letter
// tasks anything but 1-12 lowercase letters; for majority anything but 1-12 letters a-f with
// one most frequent letter; for brackets anything but 1-12 of ( ) [ ]; for dates anything but
// the eight forms above (in any letter case), an impossible day ("31 February 2020"), an
// unknown month name, a wrong weekday, or a year outside 1950-2049. Numeric forms need exactly two-digit days and months,
// word forms a day without a leading zero. `cap` must hold the longest target plus the NUL.
bool task_solve(Task t, const char *src, char *tgt, size_t cap);

// Calendar helpers behind the dates task (proleptic Gregorian, any year).
bool task_leap_year(int year);
int task_weekday(int year, int month, int day);  // 0 = Monday ... 6 = Sunday

// A held-out set that training never sees: n examples with distinct sources drawn from
// `seed`, and a membership test (exact source string match) the trainer uses to skip them.
typedef struct TaskHeldOut TaskHeldOut;

// NULL (with e set) if n < 0, memory runs out, or n distinct sources cannot be found.
TaskHeldOut *task_held_out_new(Task t, uint64_t seed, int n, Err *e);
int task_held_out_count(const TaskHeldOut *h);
const char *task_held_out_src(const TaskHeldOut *h, int i);
const char *task_held_out_tgt(const TaskHeldOut *h, int i);
bool task_held_out_has(const TaskHeldOut *h, const char *src);  // a hash-set lookup
void task_held_out_free(TaskHeldOut *h);                       // NULL is fine

#endif
