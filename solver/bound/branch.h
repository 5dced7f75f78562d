/*
 * branch.h -- the first level's traffic bound under a peak limit, raised
 * by branching on fusions (branch.c; docs/solver.md, "Bounds").  Not a
 * public header.
 */
#ifndef FP_SOLVER_BRANCH_H
#define FP_SOLVER_BRANCH_H

#include <stdint.h>

#include "model/plan.h"
#include "solver/solver.h"

/* A lower bound on the traffic of every legal plan of g within prm's peak
 * limit (0: the eager peak), for objective traffic: a branch and bound
 * over the pairs that the clusters' least-traffic plans group and `plan`
 * (the plan in hand, traffic `upper`) does not.  Each pair splits the
 * plans in two: those that keep it apart (the pair unfusible) and those
 * that group it (the far rule at the pair, fp_peak_group_far, keeps more
 * pairs apart, or no plan is left); each leaf is bounded by the traffic
 * bound of its restricted graph, and the bound is the least leaf.  The
 * search stops when every leaf reaches `upper`, or after time_s seconds
 * (the open leaves then count their own bounds).  *bound rises from its
 * value (a bound the caller holds, valid for every plan within the limit)
 * and never falls.  FP_OK, FP_ENOMEM or a graph error. */
fp_status solver_branch_bound(const fp_graph *g, const fp_ilp_params *prm,
                              const fp_plan *plan, uint64_t upper,
                              double time_s, double *bound, fp_error *err);

#endif /* FP_SOLVER_BRANCH_H */
