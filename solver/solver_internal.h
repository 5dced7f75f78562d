/*
 * solver_internal.h -- helpers shared by the solvers in solver/ (the ILP,
 * the large-neighbourhood search, the bounds).  Not a public header.
 * The cluster cuts are bound.c's; everything else here is services.c's,
 * which calls no other solver file.
 */
#ifndef FP_SOLVER_INTERNAL_H
#define FP_SOLVER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/least_traffic.h"
#include "solver/solver.h"

/* The eager plan's peak (what peak_limit 0 stands for) into *peak.
 * FP_ENOMEM. */
fp_status solver_eager_peak(const fp_graph *g, uint64_t *peak, fp_error *err);

/* The best plan, for prm's objective, among prm->warm_start and every
 * heuristic method with the best order (greedy-peak under peak_cap),
 * keeping only plans that meet prm's limits: into *best (the caller
 * destroys it; NULL when none meets them), its metrics in *m.  FP_OK, or
 * FP_ENOMEM (then *best is NULL). */
fp_status solver_best_heuristic(const fp_graph *g, const fp_ilp_params *prm,
                                uint64_t eager_peak, uint64_t peak_cap,
                                fp_plan **best, fp_metrics *m, fp_error *err);

/* Whether metrics a beat b lexicographically: a lower objective; then,
 * at the same objective, less of the other figure (peak for objective
 * traffic, traffic otherwise); then fewer kernels.  Every choice between
 * plans in solver/ uses it, so that plans with equal figures are the same
 * answer for the same input. */
bool solver_better(const fp_ilp_params *prm, const fp_metrics *a,
                   const fp_metrics *b);

/* FP_OK when every plan of prm->starts passes fp_plan_check on g (with
 * prm->max_fusion_size); FP_EARG naming the first that does not ("start
 * plan i: " and the violation); FP_ENOMEM. */
fp_status solver_check_starts(const fp_graph *g, const fp_ilp_params *prm,
                              fp_error *err);

/* FP_EINFEASIBLE with the message users see: the limits and the lowest
 * peak the heuristics know. */
fp_status solver_infeasible(const fp_graph *g, const fp_ilp_params *prm,
                            uint64_t peak_cap, fp_error *err);

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

/* Computes partitions (cluster sizes 8, 12, 16 linked along fusible
 * nodes, 12 and 16 in consecutive pieces, then 20 and 24 linked) within
 * time_s seconds.  Every cluster's bound holds for every legal plan, so
 * "the cluster's traffic terms >= lb" is a valid cut for the ILP.  Fills
 * *cuts (free with solver_cuts_free); FP_ENOMEM. */
fp_status solver_traffic_cuts(const fp_graph *g, const fp_ilp_params *prm,
                              double time_s, solver_cuts *cuts, fp_error *err);
void solver_cuts_free(solver_cuts *cuts);

/* Frees the calling thread's GLPK environment (threads that solved ILPs
 * call it before they end; GLPK keeps one environment per thread). */
void solver_thread_done(void);

/* The most bytes GLPK's heap has held on this thread (glp_mem_usage's
 * peak since the thread's environment was created). */
int64_t solver_glpk_peak(void);

/* The graph g with every pair of nodes declared unfusible that no plan
 * within prm's peak limit (0: the eager peak) groups (fp_peak_restrict):
 * a traffic bound of it holds for every plan of g within the limit.  *out
 * is NULL when there is no such pair, or no limit to use (objective peak,
 * or FP_NO_LIMIT, or prm->cancel set); the caller destroys it.
 * FP_ENOMEM. */
fp_status solver_peak_restricted(const fp_graph *g, const fp_ilp_params *prm,
                                 fp_graph **out, fp_error *err);

/* Raises *bound to fp_lower_bound's bound on the restricted graph above,
 * when there is one (a caller that already holds a bound valid for every
 * plan, such as pareto's common one, gains what the limit adds).  Spends
 * at most time_s seconds.  FP_ENOMEM. */
fp_status solver_raise_bound(const fp_graph *g, const fp_ilp_params *prm,
                             double time_s, double *bound, fp_error *err);

/* A lower bound on the second level of prm's objective at a plan with
 * metrics m (the first level held at m's value, or better): for objective
 * traffic, the least peak of any plan with peak <= m's (the peak bound on
 * the graph with the pairs no plan below m's peak groups declared
 * unfusible; only the structural peak bound when time_s is 0); for
 * objective peak, the least traffic of any plan with peak <= m's
 * (fp_lower_bound within time_s); NaN for weighted (one level).  The
 * plans the second level chooses among are all covered.  FP_ENOMEM. */
fp_status solver_second_bound(const fp_graph *g, const fp_ilp_params *prm,
                              const fp_metrics *m, double time_s,
                              double *bound2, fp_error *err);

/* (value - bound) / value, 0 when value <= bound or value <= 0; NaN when
 * either is NaN. */
double solver_rel_gap(double value, double bound);

/* Fills si's second level (objective2, bound2, gap2) for a plan with
 * metrics m and a lower bound bound2 (NaN: none) on the second level;
 * nothing for weighted or prm->levels 1.  A proven second level
 * (levels_proven 2) gets bound2 = objective2. */
void solver_record_second(const fp_ilp_params *prm, fp_solver_info *si,
                          const fp_metrics *m, double bound2);

/* Fills si->stop_reason (and raises si->levels_proven to 2 where the
 * second level's bound reaches its value) from si's gaps against prm's
 * tolerances: "proven" when every level of prm is proven, "gap" when each
 * is proven or within its tolerance, else "interrupted" when `cancelled`,
 * "time-limit" when `timed_out`, "stalled" otherwise. */
void solver_stop_reason(const fp_ilp_params *prm, fp_solver_info *si,
                        bool cancelled, bool timed_out);

/* The lexicographic optimum (least traffic, then least peak) among the
 * legal plans of g within prm's peak limit (0: the eager peak;
 * FP_NO_LIMIT: none) and fusion limit (prm->max_fusion_size, else g's),
 * for g of at most SOLVER_LT_MAX_NODES nodes, searched below `upper`
 * (the traffic of a plan in hand + 1) in at most time_s seconds: the
 * search of least_traffic.h with peaks, on the graph with the pairs the
 * limit keeps apart (solver_peak_restricted), guided by the best
 * partition of solver_traffic_cuts, below rising limits (bound.c,
 * ladder).  out->found (with out->solved): `plan` (not NULL) is that
 * optimum, in the order it runs its groups.  *lb (in: a known lower
 * bound, or 0) rises to what the search proved: no plan within the
 * limit moves less; out->solved without found proves `upper`.  A larger
 * graph, or no time, leaves *out unsolved.  FP_OK, FP_ENOMEM or
 * FP_EINTERNAL (the evaluator disagrees with the search: a bug). */
fp_status solver_exact_traffic(const fp_graph *g, const fp_ilp_params *prm,
                               uint64_t upper, double time_s, fp_plan *plan,
                               solver_lt_result *out, uint64_t *lb,
                               fp_error *err);

#endif /* FP_SOLVER_INTERNAL_H */
