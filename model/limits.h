/*
 * limits.h -- the limits a plan must meet (fp_limits: peak live bytes,
 * traffic bytes, nodes per group), and the peak limit as users write it
 * ("eager", "95%", "4GiB"): one parser and one resolver for every command
 * and the batch runner.
 *
 * Why one struct: the limits describe the problem, not a method, yet the
 * heuristics (greedy-peak's peak, the group size) and the exact solvers
 * (all three) both need them.  fp_fusion_params and fp_ilp_params each
 * embed an fp_limits so that fp_fuse and fp_ilp_solve stand alone; a
 * planner request (solver/planner.h) holds the one copy its caller sets,
 * and fp_planner_run hands it to whichever method runs, so there is
 * nothing to keep in sync.  It sits in model/ because every layer above
 * reads it.  Nothing here prints.
 */
#ifndef FP_LIMITS_H
#define FP_LIMITS_H

#include <stdint.h>

#include "graph.h"
#include "status.h"

#define FP_NO_LIMIT UINT64_MAX   /* peak or traffic: none */
#define FP_LIMITS_PEAK_EAGER 0   /* peak: the eager plan's peak */
#define FP_LIMITS_GRAPH_FUSION 0 /* max_fusion_size: the graph's own */
#define FP_LIMITS_DEFAULT_PEAK FP_LIMITS_PEAK_EAGER
#define FP_LIMITS_DEFAULT_TRAFFIC FP_NO_LIMIT
#define FP_LIMITS_DEFAULT_FUSION FP_LIMITS_GRAPH_FUSION
#define FP_LIMITS_MAX_PERCENT 100000 /* the largest N of "N%" */

/* The limits of a planning problem; fp_limits_init, then edit. */
typedef struct fp_limits {
  uint64_t peak;           /* every step holds <= this many live bytes;
                              FP_LIMITS_PEAK_EAGER (default): the eager
                              plan's peak; FP_NO_LIMIT: none */
  uint64_t traffic;        /* traffic <= this (FP_NO_LIMIT, default: none);
                              read by the exact methods only */
  int32_t max_fusion_size; /* >= 0 nodes per group; FP_LIMITS_GRAPH_FUSION
                              (default): the graph's own, which this may
                              only lower */
} fp_limits;

/* Fills *lim with the defaults above; NULL is a no-op. */
void fp_limits_init(fp_limits *lim);

/* FP_OK, or FP_EARG for NULL or a negative max_fusion_size, the message
 * prefixed with `who` ("solver params"). */
fp_status fp_limits_check(const fp_limits *lim, const char *who, fp_error *err);

/* The peak limit in bytes: lim->peak, or eager_peak where it says
 * FP_LIMITS_PEAK_EAGER (FP_NO_LIMIT stays FP_NO_LIMIT); eager_peak, the
 * default, for a NULL lim. */
uint64_t fp_limits_peak_cap(const fp_limits *lim, uint64_t eager_peak);

/* The largest group allowed in g: lim->max_fusion_size, or g's own where
 * it is FP_LIMITS_GRAPH_FUSION, above g's own, or lim is NULL (0 for a
 * NULL g). */
int32_t fp_limits_fusion_size(const fp_limits *lim, const fp_graph *g);

/* Parses a byte count: decimal digits and an optional unit, one of B,
 * K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB (all powers of 1024), nothing
 * else around them.  FP_EARG (naming the text) for NULL, bad syntax or a
 * count past 2^64 - 1; *out is then unchanged. */
fp_status fp_limits_parse_bytes(const char *text, uint64_t *out, fp_error *err);

/* How a peak limit was written. */
typedef enum fp_peak_kind {
  FP_PEAK_EAGER = 0, /* "eager": the eager plan's peak */
  FP_PEAK_PERCENT,   /* "N%": N percent of it, N in 0..FP_LIMITS_MAX_PERCENT */
  FP_PEAK_BYTES      /* a byte count (fp_limits_parse_bytes) */
} fp_peak_kind;

/* A peak limit before the eager peak is known. */
typedef struct fp_peak_spec {
  fp_peak_kind kind;
  uint64_t value; /* PERCENT: N; BYTES: the bytes; EAGER: 0 */
} fp_peak_spec;

/* Parses "eager", "N%" (N a decimal integer, 0..FP_LIMITS_MAX_PERCENT) or
 * a byte count into *out.  FP_EARG (naming the text) for NULL, an empty
 * or malformed text, or an out-of-range number; *out is then unchanged. */
fp_status fp_limits_parse_peak(const char *text, fp_peak_spec *out,
                               fp_error *err);

/* The limit of *spec in bytes given the eager plan's peak, ready for
 * fp_limits.peak: eager_peak, floor(eager_peak * N / 100) (FP_NO_LIMIT
 * when that passes 2^64 - 1), or the bytes; a result of 0 becomes 1, as
 * fp_limits.peak 0 would mean the eager peak.  FP_EARG for NULL or an
 * unknown kind. */
fp_status fp_limits_resolve_peak(const fp_peak_spec *spec, uint64_t eager_peak,
                                 uint64_t *bytes, fp_error *err);

#endif /* FP_LIMITS_H */
