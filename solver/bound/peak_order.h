/*
 * peak_order.h -- the second level's bound from a case split on the order
 * of a few nodes around the peak (peak_order.c; docs/solver.md, "The
 * second level's bound").  Not a public header.
 */
#ifndef FP_SOLVER_PEAK_ORDER_H
#define FP_SOLVER_PEAK_ORDER_H

#include "model/eval.h"
#include "model/peak_bound.h"
#include "model/plan.h"

/* Raises *best, a lower bound on the peak of every plan in some set S of
 * legal plans of g that run the two nodes of each tie at one step, to a
 * bound for S no lower: the least, over the cases of a split on the
 * relative order of a few nodes (the nodes of the plan's peak steps and
 * their neighbours, and the nodes the cuts there place against the plan),
 * of the highest tied cut at those nodes with each one's known order
 * (fp_peak_cuts_placed).  `plan` (metrics m) is a legal plan of g; h a
 * handle for g.  The split deepens while a case stays under m's peak,
 * until `deadline` (fp_clock_now).  FP_ENOMEM (then *best is as valid as
 * before). */
fp_status solver_order_peak_bound(const fp_graph *g, fp_peak_cuts *h,
                                  const fp_plan *plan, const fp_metrics *m,
                                  const fp_peak_tie *ties, int32_t n_ties,
                                  double deadline, uint64_t *best,
                                  fp_error *err);

#endif /* FP_SOLVER_PEAK_ORDER_H */
