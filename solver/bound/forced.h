/*
 * forced.h -- the second level's bound from the groups that traffic
 * optimality forces (forced.c; docs/solver.md, "The second level's
 * bound").  Not a public header.
 */
#ifndef FP_SOLVER_FORCED_H
#define FP_SOLVER_FORCED_H

#include "model/plan.h"
#include "solver/solver.h"

/* Raises *bound2 (NaN: none yet) to a lower bound on the peak of every
 * legal plan of g within prm's limits whose traffic is m->traffic_bytes,
 * for objective traffic (any other objective, or time_s <= 0, leaves it).
 * `plan` is a legal plan of g within the limits with metrics m, and m's
 * traffic must be the least traffic of every such plan (the first level
 * proven): the caller's proof is what makes the bound hold.  The bound is
 * the min cut at a node of one of `plan`'s highest steps (above *bound2,
 * a few) under ties (fp_peak_cuts_group): pairs that every plan of that
 * traffic groups, since the traffic bound with the pair declared
 * unfusible exceeds it, tested within time_s seconds.  Then, while the
 * gap is above prm->gap2, the min cuts at the few nodes of highest figure
 * with the forced pairs they split tied (fp_peak_cuts_tied), and a case
 * split on the order of the nodes around the plan's peak
 * (solver_order_peak_bound).  FP_ENOMEM, an evaluation or a
 * graph-building error (then *bound2 is as valid as before). */
fp_status solver_forced_peak_bound(const fp_graph *g, const fp_ilp_params *prm,
                                   const fp_plan *plan, const fp_metrics *m,
                                   double time_s, double *bound2,
                                   fp_error *err);

#endif /* FP_SOLVER_FORCED_H */
