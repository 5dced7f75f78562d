/*
 * util.c -- the helpers of util.h: name tables, the monotonic clock and
 * splitmix64.  One copy each, so that the enums' names, every timing and
 * every pseudo-random stream of the library agree by construction.
 */
#include "model/util.h"

#include <string.h>
#include <time.h>

int fp_name_lookup(const char *const *names, int count, const char *s) {
  if (!s)
    return -1;
  for (int i = 0; i < count; i++)
    if (names[i] && strcmp(s, names[i]) == 0)
      return i;
  return -1;
}

const char *fp_name_of(const char *const *names, int count, int i) {
  return i >= 0 && i < count && names[i] ? names[i] : "unknown";
}

double fp_clock_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t fp_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
