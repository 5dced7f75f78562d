/*
 * services.h -- what several methods of solver/ need (services.c): the
 * eager peak, the best heuristic plan under the limits (warm start and
 * fallback), the one order of preference between plans, the check of
 * start plans, the infeasibility message, and the GLPK environment of
 * each thread.  Not a public header; services.c calls no other solver
 * file but params.c.
 */
#ifndef FP_SOLVER_SERVICES_H
#define FP_SOLVER_SERVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "solver/solver.h"

/* The eager plan's peak (what FP_LIMITS_PEAK_EAGER stands for) into *peak.
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
 * prm->limits.max_fusion_size); FP_EARG naming the first that does not ("start
 * plan i: " and the violation); FP_ENOMEM. */
fp_status solver_check_starts(const fp_graph *g, const fp_ilp_params *prm,
                              fp_error *err);

/* FP_EINFEASIBLE with the message users see: the limits and the lowest
 * peak the heuristics know. */
fp_status solver_infeasible(const fp_graph *g, const fp_ilp_params *prm,
                            uint64_t peak_cap, fp_error *err);
/* Frees the calling thread's GLPK environment (threads that solved ILPs
 * call it before they end; GLPK keeps one environment per thread). */
void solver_thread_done(void);

/* The most bytes GLPK's heap has held on this thread (glp_mem_usage's
 * peak since the thread's environment was created). */
int64_t solver_glpk_peak(void);

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

#endif /* FP_SOLVER_SERVICES_H */
