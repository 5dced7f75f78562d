/*
 * window.h -- sub-problems cut out of a whole graph, for the large-
 * neighbourhood search (lns.c) and the decomposed lower bound (bound.c).
 * Internal to solver/.
 *
 * A *window* is a run of consecutive steps [s0, s1) of a legal plan
 * (sub_gather first makes steps far apart but linked by the dataflow
 * consecutive).  With
 * every group outside it fixed, the rest of the plan interacts with the
 * window only through buffers that cross its edges, so the window is
 * itself a graph (its sub-graph) whose costs differ from the whole plan's
 * by constants:
 *
 *   - a buffer written before the window and read in it is an input of
 *     the sub-graph: freeable when nobody after the window reads it (its
 *     life then ends inside the window, as in the whole plan), resident
 *     otherwise;
 *   - a buffer written in the window and read after it (or a graph
 *     output) is an output of the sub-graph;
 *   - buffers live across the window but untouched by it add the same
 *     bytes at every window step (`const_live`).
 *
 * Hence, for every legal plan q of the sub-graph, spliced in place of the
 * window: traffic(whole) = const_traffic + traffic(q), and live(s0 + i) =
 * const_live + live_q(i) at every window step, while steps outside the
 * window keep their live bytes.  sub_window checks both identities on the
 * current plan and fails with FP_EINTERNAL if they do not hold.
 */
#ifndef FP_WINDOW_H
#define FP_WINDOW_H

#include <stdint.h>

#include "model/eval.h"
#include "model/graph.h"
#include "model/plan.h"
#include "model/status.h"

typedef struct sub_problem {
  fp_graph *g;            /* the finalized sub-graph (NULL when empty) */
  int32_t n;              /* its nodes */
  int32_t *to_global;     /* sub node -> node of the whole graph */
  fp_plan *current;       /* the window's groups, in sub-graph indices */
  fp_metrics current_m;   /* their figures in the sub-graph */
  uint64_t const_live;    /* bytes live at every window step outside the
                             sub-graph */
  uint64_t const_traffic; /* traffic of the groups outside the window */
  uint64_t outside_peak;  /* highest live bytes at a step outside the window
                             (0 when there is none) */
} sub_problem;

/* Scratch space shared by successive sub_window calls on one graph. */
typedef struct sub_scratch {
  int32_t *buf_map;  /* whole buffer -> sub buffer, -1 (all -1 between
                        calls) */
  int32_t *node_map; /* whole node -> sub node, -1 (likewise) */
} sub_scratch;

/* Allocates scratch for graph g; 0, or -1 out of memory. */
int sub_scratch_init(sub_scratch *s, const fp_graph *g);
void sub_scratch_free(sub_scratch *s);

/* Cuts the window [s0, s1) out of the legal plan p of g, whose per-node
 * steps are `step` and whose evaluator timeline is `tl` (with metrics
 * `pm`).  max_fusion_size k (0 or above the graph's: its) is the sub-graph's.
 * Fills
 * *S (free it with sub_free).  FP_ENOMEM; FP_EINTERNAL when the identities
 * above fail (a bug). */
fp_status sub_window(sub_problem *S, sub_scratch *scr, const fp_graph *g,
                     const fp_plan *p, const int32_t *step, const fp_step *tl,
                     const fp_metrics *pm, int32_t k, int32_t s0, int32_t s1,
                     fp_error *err);

/* Helpers for any graph built from a subset of a graph's nodes (windows
 * here, cluster graphs in bound.c). */

/* qsort order of node indices (ascending: a program order). */
int sub_cmp_node(const void *a, const void *b);

/* Declares in sg every unfusible pair of g among nodes[0..n), which are
 * sg's nodes 0..n-1 in that order.  FP_OK, or fp_graph_add_unfusible's
 * error. */
fp_status sub_copy_unfusible(fp_graph *sg, const fp_graph *g,
                             const int32_t *nodes, int32_t n, fp_error *err);

/* Resets to -1 the entries of buf_map (buffers read or written by
 * nodes[0..n)) and node_map (those nodes) that building sg set. */
void sub_clear_maps(const fp_graph *g, const int32_t *nodes, int32_t n,
                    int32_t *buf_map, int32_t *node_map);

/* Frees what sub_window allocated; safe on a zeroed struct. */
void sub_free(sub_problem *S);

/* Writes into `out` the plan p with its window [s0, s1) replaced by the
 * sub-graph plan q (mapped back to whole-graph nodes).  FP_ENOMEM. */
fp_status sub_splice(const sub_problem *S, const fp_plan *p, int32_t s0,
                     int32_t s1, const fp_plan *q, fp_plan *out, fp_error *err);

/* A gathered window: the steps of p near step `seed` along the dataflow
 * (breadth first over producer and consumer steps while their nodes fit
 * in max_nodes), closed to a convex set, made consecutive.  Writes into
 * `out` the plan p with those steps moved to [*s0, *s1) and every other
 * step in its old relative order; out holds p's groups, so it has p's
 * traffic, and it is legal when p is (its peak may differ).  *s0 == *s1
 * when there is nothing to gather (a bad seed, or the closure holds more
 * than cap_nodes nodes).  `step` is p's step of every node.  FP_ENOMEM. */
fp_status sub_gather(const fp_graph *g, const fp_plan *p, const int32_t *step,
                     int32_t seed, int32_t max_nodes, int32_t cap_nodes,
                     fp_plan *out, int32_t *s0, int32_t *s1, fp_error *err);

#endif /* FP_WINDOW_H */
