/*
 * cluster_merge.h -- a partition's traffic bound raised by moving buffers
 * between pairs of clusters that count one node grouped two ways
 * (cluster_merge.c; docs/solver.md, "Bounds").
 */
#ifndef FP_SOLVER_CLUSTER_MERGE_H
#define FP_SOLVER_CLUSTER_MERGE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/graph.h"
#include "solver/common/cuts.h"

/* Most nodes a cluster may reach by moves: the exact search of
 * least_traffic.c takes up to a few tenths of a second at 30. */
#define SOLVER_MERGE_MAX_NODES 28
/* Partitions of clusters of at most this many nodes get the moves. */
#define SOLVER_MERGE_PART_SIZE 16

/* Given partition `part` of finalized graph g with a valid bound per
 * cluster, searches pairs of clusters sharing a fusible node for a move
 * of buffers from one to the other (those touching the other's nodes)
 * after which the two clusters' least traffic adds up to more than their
 * bounds did, in rounds, until `deadline` (fp_clock_now seconds) or
 * *cancel (may be NULL).  When some move gains, *out receives the new
 * partition (its own of and lb, the same cluster count; a cluster may end
 * empty, bound 0); else *out is zeroed (count 0).  Fusion-size limit k.
 * FP_OK (*out zeroed on any error), FP_ENOMEM, or FP_EINTERNAL when the
 * evaluator and the search disagree (a bug). */
fp_status solver_merge_clusters(const fp_graph *g, int32_t k,
                                const solver_partition *part, double deadline,
                                const volatile sig_atomic_t *cancel,
                                solver_partition *out, fp_error *err);

#endif
