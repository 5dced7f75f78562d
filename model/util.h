/*
 * util.h -- internal: the small helpers every layer shares (name tables
 * of enums, a monotonic clock, the splitmix64 stream).  The lowest layer
 * of the library: util.c calls nothing else in it, so any file may call
 * it without closing a call circle.
 */
#ifndef FP_UTIL_H
#define FP_UTIL_H

#include <stdint.h>

/* The index of `s` in names[0 .. count), compared as C strings; -1 when
 * s is NULL or no entry matches.  NULL entries are skipped (tables whose
 * slot 0 has no spelling).  Never fails otherwise. */
int fp_name_lookup(const char *const *names, int count, const char *s);

/* names[i], or "unknown" when i is outside [0, count) or the entry is
 * NULL.  The counterpart of fp_name_lookup for the fp_*_name functions. */
const char *fp_name_of(const char *const *names, int count, int i);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC), for measuring
 * durations and deadlines; its origin is arbitrary.  Never fails (the
 * clock exists on every POSIX system this builds on). */
double fp_clock_now(void);

/* One step of splitmix64: advances *state by the golden-ratio increment
 * and returns the mixed value.  The state is a plain counter, so a
 * stream depends on nothing but its seed, on every platform; generated
 * graphs, input values and test streams all depend on this exact
 * sequence, so it must never change.  Never fails. */
uint64_t fp_splitmix64(uint64_t *state);

#endif /* FP_UTIL_H */
