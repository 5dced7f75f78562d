/*
 * least_traffic.h -- the least traffic of any legal plan of a small graph,
 * exactly, by dynamic programming over the sets of nodes already run
 * (least_traffic.c).  bound.c uses it for its cluster graphs, where it
 * proves in milliseconds what the cluster ILP's branch and bound often
 * cannot in its budget.
 */
#ifndef FP_SOLVER_LEAST_TRAFFIC_H
#define FP_SOLVER_LEAST_TRAFFIC_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/graph.h"
#include "model/plan.h"

/* Most nodes the search takes (its sets are 64-bit masks). */
#define SOLVER_LT_MAX_NODES 64

/* A graph as sets of nodes (bit v: node v), for the exact searches of
 * this file and exhaustive.c: what each node reads from and may share a
 * group with, each buffer's readers, and the traffic of a group. */
typedef struct solver_node_sets {
  const fp_graph *g;
  int32_t n;
  uint64_t pred[SOLVER_LT_MAX_NODES];   /* writers of what node v reads */
  uint64_t compat[SOLVER_LT_MAX_NODES]; /* nodes that may share v's group */
  uint64_t touch[SOLVER_LT_MAX_NODES];  /* nodes sharing a buffer with v */
  uint64_t *readers;                    /* per buffer */
  uint64_t *stamp, *cur; /* per buffer: scratch of the traffic sums */
  uint64_t stamp_id;
} solver_node_sets;

/* Fills X for finalized graph g of at most SOLVER_LT_MAX_NODES nodes.
 * 0, or -1 when out of memory (X is then freed). */
int solver_node_sets_init(solver_node_sets *X, const fp_graph *g);
/* Frees what init allocated; safe on a zeroed struct. */
void solver_node_sets_free(solver_node_sets *X);
/* Traffic of running the nodes of s as one group: each buffer it reads
 * and does not produce once, at its largest per-read bytes, plus every
 * buffer it writes that is an output, unread, or read outside s (the
 * evaluator's rule). */
uint64_t solver_group_traffic(solver_node_sets *X, uint64_t s);

/* What one search did. */
typedef struct solver_lt_result {
  bool solved;      /* finished */
  bool found;       /* solved with a plan under the upper limit: traffic is
                       the least of any legal plan (always, without one) */
  uint64_t traffic; /* when solved: the least traffic, or the upper limit
                       when no plan is under it (then every legal plan
                       moves at least that much) */
  int64_t work;     /* groups examined (the budget's unit) */
} solver_lt_result;

/* Searches the least traffic of any legal plan of finalized graph g under
 * fusion limit k (>= 1; no peak or traffic limit), examining at most
 * `budget` candidate groups and stopping at `deadline` (fp_clock_now
 * seconds) or when *cancel (may be NULL) is set.  The plan it finds is
 * checked by the evaluator, which must agree with the search's figure;
 * when `plan` is not NULL it receives that plan.  An unfinished search,
 * or a graph of more than SOLVER_LT_MAX_NODES nodes, is an outcome
 * (out->solved false), not an error.  FP_OK, FP_ENOMEM, or FP_EINTERNAL
 * when the evaluator disagrees (a bug). */
fp_status solver_least_traffic(const fp_graph *g, int32_t k, int64_t budget,
                               double deadline,
                               const volatile sig_atomic_t *cancel,
                               fp_plan *plan, solver_lt_result *out,
                               fp_error *err);

/* The same search among the plans of traffic under `upper` only: a
 * state whose traffic so far plus a bound on what the nodes left must
 * still move (a sum over buffers) reaches `upper` is not expanded, which
 * on a graph with a good plan known (upper: its traffic) leaves a
 * fraction of the states.  out->found tells whether a plan under `upper`
 * exists; when not (out->solved, !out->found), out->traffic is `upper`
 * and no legal plan moves less; `plan` is then untouched.  Errors as
 * solver_least_traffic, which is this with upper UINT64_MAX. */
fp_status solver_least_traffic_below(const fp_graph *g, int32_t k,
                                     uint64_t upper, int64_t budget,
                                     double deadline,
                                     const volatile sig_atomic_t *cancel,
                                     fp_plan *plan, solver_lt_result *out,
                                     fp_error *err);

#endif
