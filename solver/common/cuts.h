/*
 * cuts.h -- the cluster cuts: partitions of a graph's buffers into
 * clusters, each with a lower bound on its share of the traffic of every
 * legal plan.  The bounds (bound/bound.c) make them; the integer program
 * (mip/ilp_model.c) adds them as rows.  Types only, so that both can
 * name them without one including the other.
 */
#ifndef FP_SOLVER_CUTS_H
#define FP_SOLVER_CUTS_H

#include <stdbool.h>
#include <stdint.h>

/* A partition of the buffers into clusters, each with a lower bound on
 * its share of the traffic of every legal plan (bound.c). */
typedef struct solver_partition {
  int32_t count;  /* clusters */
  int32_t *of;    /* buffer -> cluster, -1 for buffers in none */
  uint64_t *lb;   /* per cluster: bytes (0 for those past the deadline) */
  uint64_t total; /* sum of lb: a lower bound on the traffic */
  int32_t size;   /* solver_clusters_make's arguments that made it */
  bool ordered;
} solver_partition;

/* The kinds of bound.c, and one more with pairs of clusters merged. */
#define SOLVER_MAX_PARTITIONS 8

/* The partitions bound.c had time for, and the best total. */
typedef struct solver_cuts {
  int32_t n;
  solver_partition part[SOLVER_MAX_PARTITIONS];
  uint64_t best;
} solver_cuts;

#endif /* FP_SOLVER_CUTS_H */
