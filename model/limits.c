/*
 * limits.c -- the limits of a planning problem (limits.h): defaults,
 * check, the resolved peak and group size, and the grammar of byte counts
 * and peak limits that the command line and the batch manifests share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/limits.h"

/* Fills every field with its default. */
void fp_limits_init(fp_limits *lim) {
  if (!lim)
    return;
  lim->peak = FP_LIMITS_DEFAULT_PEAK;
  lim->traffic = FP_LIMITS_DEFAULT_TRAFFIC;
  lim->max_fusion_size = FP_LIMITS_DEFAULT_FUSION;
}

/* Every uint64_t peak and traffic means something; only the group size
 * can be out of range. */
fp_status fp_limits_check(const fp_limits *lim, const char *who,
                          fp_error *err) {
  if (!lim)
    return fp_error_set(err, FP_EARG, "%s: limits: NULL", who);
  if (lim->max_fusion_size < 0)
    return fp_error_set(err, FP_EARG, "%s: max_fusion_size must be >= 0", who);
  return FP_OK;
}

/* lim->peak with the eager stand-in replaced. */
uint64_t fp_limits_peak_cap(const fp_limits *lim, uint64_t eager_peak) {
  if (!lim)
    return eager_peak; /* the default limit */
  return lim->peak == FP_LIMITS_PEAK_EAGER ? eager_peak : lim->peak;
}

/* lim->max_fusion_size with the graph's stand-in replaced, and capped at
 * the graph's own (fp_graph_fusion_cap). */
int32_t fp_limits_fusion_size(const fp_limits *lim, const fp_graph *g) {
  return fp_graph_fusion_cap(g, lim ? lim->max_fusion_size : 0);
}

/* A decimal integer at the start of s (a digit first, no sign or space)
 * into *v, *end after it; 0, or -1 without digits or past 2^64 - 1. */
static int leading_uint(const char *s, unsigned long long *v, char **end) {
  if (!s || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  *v = strtoull(s, end, 10);
  return errno ? -1 : 0;
}

/* The units of a byte count, and the power of two each stands for. */
static const struct {
  const char *suffix;
  unsigned shift;
} units[] = {{"", 0},     {"B", 0},   {"K", 10},   {"KB", 10}, {"KiB", 10},
             {"M", 20},   {"MB", 20}, {"MiB", 20}, {"G", 30},  {"GB", 30},
             {"GiB", 30}, {"T", 40},  {"TB", 40},  {"TiB", 40}};

/* Digits, then exactly one unit of the table (or none). */
fp_status fp_limits_parse_bytes(const char *text, uint64_t *out,
                                fp_error *err) {
  unsigned long long v;
  char *end;
  if (!out)
    return fp_error_set(err, FP_EARG, "byte count: NULL output");
  if (leading_uint(text, &v, &end) == 0)
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
      if (strcmp(end, units[i].suffix) != 0)
        continue;
      if (v > (UINT64_MAX >> units[i].shift))
        break;
      *out = (uint64_t)v << units[i].shift;
      return FP_OK;
    }
  return fp_error_set(err, FP_EARG, "'%s': expected a byte count",
                      text ? text : "(null)");
}

/* "eager", digits then a final '%', or a byte count. */
fp_status fp_limits_parse_peak(const char *text, fp_peak_spec *out,
                               fp_error *err) {
  unsigned long long v;
  char *end;
  if (!out)
    return fp_error_set(err, FP_EARG, "peak limit: NULL output");
  if (text && strcmp(text, "eager") == 0) {
    *out = (fp_peak_spec){FP_PEAK_EAGER, 0};
    return FP_OK;
  }
  if (text && strchr(text, '%')) {
    if (leading_uint(text, &v, &end) != 0 || strcmp(end, "%") != 0 ||
        v > FP_LIMITS_MAX_PERCENT)
      return fp_error_set(err, FP_EARG,
                          "peak limit '%s': expected N%% with N in 0..%d", text,
                          FP_LIMITS_MAX_PERCENT);
    *out = (fp_peak_spec){FP_PEAK_PERCENT, (uint64_t)v};
    return FP_OK;
  }
  uint64_t bytes;
  if (fp_limits_parse_bytes(text, &bytes, NULL) != FP_OK)
    return fp_error_set(err, FP_EARG,
                        "peak limit '%s': expected BYTES, eager or N%%",
                        text ? text : "(null)");
  *out = (fp_peak_spec){FP_PEAK_BYTES, bytes};
  return FP_OK;
}

/* floor(eager * pct / 100) in 64 bits, splitting eager = 100q + r so
 * that nothing overflows; FP_NO_LIMIT when the result would (no graph
 * holds that much). */
static uint64_t percent_of(uint64_t eager, uint64_t pct) {
  uint64_t q = eager / 100, r = eager % 100;
  if (pct && q > (UINT64_MAX - r * pct / 100) / pct)
    return FP_NO_LIMIT;
  return q * pct + r * pct / 100;
}

/* The bytes of the spec, never 0 (0 stands for the eager peak). */
fp_status fp_limits_resolve_peak(const fp_peak_spec *spec, uint64_t eager_peak,
                                 uint64_t *bytes, fp_error *err) {
  uint64_t v;
  if (!spec || !bytes)
    return fp_error_set(err, FP_EARG, "peak limit: NULL");
  switch (spec->kind) {
  case FP_PEAK_EAGER:
    v = eager_peak;
    break;
  case FP_PEAK_PERCENT:
    v = percent_of(eager_peak, spec->value);
    break;
  case FP_PEAK_BYTES:
    v = spec->value;
    break;
  default:
    return fp_error_set(err, FP_EARG, "peak limit: unknown kind %d",
                        (int)spec->kind);
  }
  *bytes = v ? v : 1;
  return FP_OK;
}
