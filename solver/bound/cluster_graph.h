/*
 * cluster_graph.h -- the cluster graphs of the decomposed traffic bound
 * (bound.c; docs/solver.md, "Bounds").
 *
 * The cluster graph of a set S of buffers has the nodes N(S) (their
 * writers and readers), the buffers of S with their bytes, every other
 * buffer between two nodes of N(S) with zero bytes, and what paths
 * through the rest of the graph enforce: an order (a zero-byte buffer)
 * and, where no path's inner nodes could all share one group with both
 * ends, an unfusible pair.  Any legal plan of the whole graph, restricted
 * to N(S), is a legal plan of the cluster graph whose traffic is S's
 * share; so the cluster graph's least traffic bounds that share in every
 * plan.
 */
#ifndef FP_SOLVER_CLUSTER_GRAPH_H
#define FP_SOLVER_CLUSTER_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "model/graph.h"
#include "model/plan.h"
#include "solver/bound/least_traffic.h"

/* One cluster graph under construction: whole-graph indices -> its own. */
typedef struct cluster_build {
  const fp_graph *g;
  const int32_t *of;   /* buffer -> cluster: c's buffers have their bytes */
  const int32_t *bufs; /* the cluster's buffers */
  int32_t n_bufs;
  int32_t size; /* the partition's N(S) size: larger clusters get none */
  int32_t c;
  int32_t extra;          /* a node of g made a member too (-1: none; the step
                             bound of bound.c prices the step that runs it) */
  const uint64_t *credit; /* per buffer of g: the step bound's in-place
                             credit (bound.c; NULL: none) */
  int32_t *node_map;      /* -1 between calls */
  int32_t *buf_map;       /* -1 between calls */
  int32_t *members;       /* N(S), ascending */
  int32_t count;
  fp_graph *sg;
  /* Paths between members through the rest of the graph (add_paths):
   * reach[i*count+j] -- member j is a descendant of member i; fused[..]
   * -- it is reached by a path whose inner nodes may all share member i's
   * group (compatible with it).  seen/queue: a BFS over g's nodes. */
  uint8_t *reach, *fused, *bfused;
  uint8_t *edge;         /* edge[i*count+j]: j reads i's order buffer */
  int32_t *seen, *queue; /* seen: 2*gen+1 / 2*gen+2, below: not yet */
  int32_t gen;           /* one per search, so seen needs no reset */
  int32_t *order_buf;    /* member -> its order buffer in sg, or -1 */
} cluster_build;

/* Nodes one path search may visit; past it the search gives up on that
 * member (its paths are left out: the cluster graph only gets weaker,
 * never wrong). */
#define PATH_VISIT_CAP 65536

/* Scratch for cluster graphs of g, into *B (B->of, B->size are the
 * caller's to set).  0, or -1 when out of memory (then cluster_build_free
 * is still due). */
int cluster_build_init(cluster_build *B, const fp_graph *g);

/* Frees what cluster_build_init allocated (not B->sg); safe after a
 * failed init. */
void cluster_build_free(cluster_build *B);

/* Builds into B->sg (finalized; the caller destroys it) the cluster graph
 * of the buffers B->bufs[0..B->n_bufs), ascending, which must all be in
 * cluster c of B->of (buffers of other clusters become zero-byte links),
 * with fusion-size limit k.  B->members[0..B->count) are then N(S),
 * ascending, node i of sg being B->members[i].  FP_OK, FP_ENOMEM or a
 * graph error. */
fp_status cluster_build_graph(cluster_build *B, int32_t c, int32_t k,
                              fp_error *err);

/* The least traffic of cluster graph sg under fusion limit k, as
 * solver_least_traffic finds it (same budget, deadline, cancel, outcome
 * and errors), but searched only below the traffic of greedy fusion's
 * plan of sg: the search then skips every state that cannot beat it
 * (least_traffic.h).  When nothing beats it, greedy's plan is optimal:
 * out->found is set, out->traffic is its traffic, and it goes to `plan`
 * (when not NULL).  Why: on generated random DAGs this cuts the bound's
 * cluster searches by a quarter (3,000 nodes: 32.6 s to 23.7 s for
 * every partition and move, the same bound). */
fp_status cluster_least_traffic(const fp_graph *sg, int32_t k, int64_t budget,
                                double deadline,
                                const volatile sig_atomic_t *cancel,
                                fp_plan *plan, solver_lt_result *out,
                                fp_error *err);

/* The buffers of each of the `count` clusters of `of` (buffer ->
 * cluster, -1 for none), ascending, as CSR: cluster c's are
 * (*list)[(*start)[c] .. (*start)[c + 1]).  0, or -1 when out of memory
 * (nothing to free then). */
int cluster_buffer_lists(const fp_graph *g, const int32_t *of, int32_t count,
                         int32_t **start, int32_t **list);

/* A guide for searching g below an upper limit (least_traffic.h) from
 * the partition `of` of its buffers into `count` clusters: one part per
 * cluster, its cluster graph with fusion limit k, each enumerated within
 * `budget` groups, all by `deadline` (or *cancel).  *guide (the caller
 * destroys it) holds the parts made; *complete tells whether every
 * cluster got one (a cluster out of budget or time ends the building:
 * the guide is then weaker, still valid).  FP_OK, FP_ENOMEM (then *guide
 * is NULL) or a graph error. */
fp_status cluster_guide(const fp_graph *g, const int32_t *of, int32_t count,
                        int32_t k, int64_t budget, double deadline,
                        const volatile sig_atomic_t *cancel,
                        solver_lt_guide **guide, bool *complete, fp_error *err);

#endif
