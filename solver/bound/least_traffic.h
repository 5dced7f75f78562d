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
  uint64_t touch[SOLVER_LT_MAX_NODES];  /* nodes sharing a buffer with v,
                                           or a linked pair or linker */
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
/* Whether group s holds a linker of every linked pair in it (graph.h,
 * fp_graph_linked). */
bool solver_group_linked_ok(const solver_node_sets *X, uint64_t s);

/* What one search did. */
typedef struct solver_lt_result {
  bool solved;      /* finished */
  bool found;       /* solved with a plan under the upper limit: traffic is
                       the least of any legal plan (always, without one) */
  uint64_t traffic; /* when solved: the least traffic, or the upper limit
                       when no plan is under it (then every legal plan
                       moves at least that much) */
  uint64_t peak;    /* when found with peaks tracked (solver_lt_limits):
                       the plan's peak, the evaluator's */
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

/*
 * A guide: a stronger bound on what the nodes not yet run must still
 * move, for searching a graph g below an upper limit.  Its parts are
 * cluster graphs of g (cluster_graph.h) whose buffers with bytes are
 * disjoint sets of g's buffers, each with the least traffic of
 * completing it from every set of its nodes already run (its cost to
 * go, by a backward pass over its states).  In every completion of a
 * state D of g, the groups restricted to a part's nodes complete the
 * part from D's share of it, moving exactly the traffic of the part's
 * buffers; so the sum over the parts of their costs to go bounds what
 * is left, and at D = {} it is the decomposed bound of those clusters.
 * The bound is consistent (a group's traffic is the sum of its parts'),
 * so pruning by it loses no plan under the limit.
 */
typedef struct solver_lt_guide solver_lt_guide;

/* An empty guide, or NULL when out of memory. */
solver_lt_guide *solver_lt_guide_create(void);
/* Frees G; NULL is a no-op. */
void solver_lt_guide_destroy(solver_lt_guide *G);
/* The parts G holds (0 for NULL). */
int32_t solver_lt_guide_parts(const solver_lt_guide *G);
/* Adds the cluster graph sg (finalized, at most SOLVER_LT_MAX_NODES
 * nodes, fusion limit k), whose node i is node node[i] of the graph the
 * guide is for, as a part: every state of sg is enumerated and its cost
 * to go computed, examining at most `budget` groups (twice the plain
 * search's: a forward and a backward pass) until `deadline` or *cancel.
 * *added tells whether it was (not when out of budget or time: an
 * outcome, the guide is then only weaker).  The caller keeps the parts'
 * buffers disjoint.  FP_OK or FP_ENOMEM. */
fp_status solver_lt_guide_add(solver_lt_guide *G, const fp_graph *sg,
                              const int32_t *node, int32_t k, int64_t budget,
                              double deadline,
                              const volatile sig_atomic_t *cancel, bool *added,
                              fp_error *err);
/* The guide's bound on a whole plan's traffic (its cost to go from no
 * node run): the sum of its parts' least traffic. */
uint64_t solver_lt_guide_bound(const solver_lt_guide *G);

/* What the guided search looks for.  Peaks are tracked when a peak
 * limit is set or by_peak: a plan's peak is the largest of its steps'
 * live bytes, and a step's live bytes depend only on the set of nodes
 * run before it and its group (least_traffic.c, live_base), so a limit
 * on them is a limit on the steps the search takes, and keeping, per
 * state, the path of least peak among those of least cost gives the
 * lexicographic optimum (traffic, then peak) among the plans within the
 * limit, in the order the path runs its groups. */
typedef struct solver_lt_limits {
  uint64_t upper;      /* plans of traffic under it only (UINT64_MAX) */
  uint64_t peak_limit; /* bytes every step may hold (UINT64_MAX: none) */
  bool by_peak;        /* least peak among plans of least traffic */
  /* A price on one step (the Lagrangian step bound of bound.c): with
   * at_node >= 0, a plan's cost is its traffic plus at_weight times the
   * bytes live above the resident ones during the step that runs node
   * at_node; the search then minimizes that cost (out->traffic is it),
   * and `upper` limits it.  A step's live bytes depend only on the set
   * run before it and its group, so the price is one more term of that
   * step's cost.  -1 (none). */
  int32_t at_node;
  uint64_t at_weight;
  /* In-place credit of the priced step (bound.c, the step bound on a
   * graph with in-place pairs): per buffer of the searched graph, bytes
   * the price does not count when the priced group writes the buffer and
   * it is materialized (read after the step, unread, or an output);
   * for graphs without in-place pairs of their own (the cluster graphs),
   * where those bytes are among the step's live ones.  NULL (none). */
  const uint64_t *at_credit;
} solver_lt_limits;

/* Fills lim with the defaults in parentheses above (by_peak false,
 * at_weight 0, at_credit NULL). */
void solver_lt_limits_init(solver_lt_limits *lim);

/* The least traffic of any legal plan of g within lim (a least-traffic
 * search below lim->upper, as solver_least_traffic_below, with peaks as
 * above), with the guide's bound (when not NULL) beside the per-buffer
 * one: a state is not expanded when its cost plus the larger of the two
 * reaches lim->upper.  out->found: a plan within lim exists, and `plan`
 * gets the optimum (its peak in out->peak when tracked); when solved
 * and not found, no legal plan within the peak limit moves less than
 * lim->upper.  Same outcome and errors as solver_least_traffic. */
fp_status solver_least_traffic_guided(const fp_graph *g, int32_t k,
                                      const solver_lt_limits *lim,
                                      const solver_lt_guide *guide,
                                      int64_t budget, double deadline,
                                      const volatile sig_atomic_t *cancel,
                                      fp_plan *plan, solver_lt_result *out,
                                      fp_error *err);

#endif
