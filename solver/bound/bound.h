/*
 * bound.h -- the bounds of bound.c that the other solvers use: the
 * cluster cuts of the ILP, the peak-restricted graph, and the exact
 * least traffic under a peak limit (docs/solver.md, "Bounds").  The
 * public bound, fp_lower_bound, is in solver.h.  Not a public header.
 */
#ifndef FP_SOLVER_BOUND_H
#define FP_SOLVER_BOUND_H

#include <stdint.h>

#include "solver/bound/least_traffic.h"
#include "solver/common/cuts.h"
#include "solver/solver.h"

/* Computes partitions (cluster sizes 8, 12, 16 linked along fusible
 * nodes, 12 and 16 in consecutive pieces, then 20 and 24 linked) within
 * time_s seconds.  Every cluster's bound holds for every legal plan, so
 * "the cluster's traffic terms >= lb" is a valid cut for the ILP.  Fills
 * *cuts (free with solver_cuts_free); FP_ENOMEM. */
fp_status solver_traffic_cuts(const fp_graph *g, const fp_ilp_params *prm,
                              double time_s, solver_cuts *cuts, fp_error *err);
void solver_cuts_free(solver_cuts *cuts);
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

/* A lower bound on the traffic of every legal plan of g within prm's
 * peak limit (0: the eager peak), for objective traffic: a Lagrangian
 * bound on the step that runs node x (docs/solver.md, "Bounds").  Such a
 * plan holds at most limit - resident bytes at that step, so for any
 * weight w >= 0 its traffic is at least its traffic + w x (those bytes)
 * - w x (limit - resident); the first sum splits over the clusters of a
 * partition of the buffers, each bounded by the least of share + w x its
 * buffers' bytes live at x's step over the plans of its cluster graph
 * with x made a member (least_traffic.h, at_node), pairs of clusters
 * sharing a node priced as one where that gains; on a graph with
 * in-place pairs each cluster's price is less the credit of the buffers
 * a takeover may save (at_credit).  Partitions are tried
 * until the bound reaches `target` (INFINITY: all), within time_s
 * seconds (clusters past it count their structural bound).  *bound: 0
 * when there is nothing to say (no limit, another objective).  FP_OK,
 * FP_ENOMEM or FP_EINTERNAL (the evaluator disagrees with a search). */
fp_status solver_step_bound(const fp_graph *g, const fp_ilp_params *prm,
                            int32_t x, uint64_t weight, double target,
                            double time_s, double *bound, fp_error *err);

/* The lexicographic optimum (least traffic, then least peak) among the
 * legal plans of g within prm's peak limit (0: the eager peak;
 * FP_NO_LIMIT: none) and fusion limit (prm->limits.max_fusion_size, else g's),
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

#endif /* FP_SOLVER_BOUND_H */
