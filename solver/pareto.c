/*
 * pareto.c -- the traffic-vs-peak front, as a sweep of peak limits.
 *
 * Each point is a solve of "least traffic subject to peak <= limit".
 * Limits grow along the sweep, so the previous point's plan meets the next
 * limit and serves as its warm start: the front never gets worse from one
 * point to the next, even when a solve runs out of time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solver/planner.h"
#include "solver/solver.h"

/* One solve of the sweep: the planner on parameters p (a request with
 * p as its solver parameters). */
static fp_status solve(const fp_planner *pl, const fp_graph *g,
                       const fp_ilp_params *p, fp_plan *out, fp_metrics *m,
                       fp_error *err) {
  fp_plan_request req;
  fp_plan_request_init(&req, pl);
  req.ilp = *p;
  return fp_planner_run(pl, g, &req, out, m, err);
}

/* Marks points that another point beats on one axis and ties or beats on
 * the other. */
static void mark_dominated(fp_pareto_point *pts, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    pts[i].dominated = 0;
    for (int32_t j = 0; j < n && !pts[i].dominated; j++) {
      const fp_metrics *a = &pts[i].m, *b = &pts[j].m;
      pts[i].dominated = (b->peak_bytes <= a->peak_bytes &&
                          b->traffic_bytes < a->traffic_bytes) ||
                         (b->peak_bytes < a->peak_bytes &&
                          b->traffic_bytes <= a->traffic_bytes);
    }
  }
}

/* The two ends: lowest peak (its plan kept in `low`: the warm start of
 * the first point, which has exactly that limit), and lowest traffic with
 * no peak limit. */
static fp_status ends(const fp_graph *g, fp_ilp_params *p, const fp_planner *pl,
                      fp_plan *low, fp_plan *plan, uint64_t *p0, uint64_t *p1,
                      fp_error *err) {
  fp_metrics m;
  p->objective = FP_OBJECTIVE_PEAK;
  p->peak_limit = FP_NO_LIMIT;
  fp_status st = solve(pl, g, p, low, &m, err);
  if (st != FP_OK)
    return st;
  *p0 = m.peak_bytes;
  p->objective = FP_OBJECTIVE_TRAFFIC;
  st = solve(pl, g, p, plan, &m, err);
  *p1 = m.peak_bytes > *p0 ? m.peak_bytes : *p0;
  return st;
}

fp_status fp_pareto(const fp_graph *g, const fp_ilp_params *prm,
                    int32_t npoints, const fp_planner *pl, fp_pareto_point *out,
                    fp_error *err) {
  if (npoints < 2)
    return fp_error_set(err, FP_EARG, "pareto: at least 2 points");
  if (!pl || !(pl->flags & FP_PLANNER_PARETO))
    return fp_error_set(err, FP_EARG,
                        "pareto: method %s cannot drive the "
                        "sweep",
                        pl ? pl->name : "(none)");
  fp_ilp_params p = *prm;
  fp_plan *plan = fp_plan_create(), *prev = fp_plan_create();
  uint64_t p0 = 0, p1 = 0;
  fp_status st =
      plan && prev ? FP_OK : fp_error_set(err, FP_ENOMEM, "out of memory");
  p.time_limit_s = prm->time_limit_s / (npoints + 2);
  p.lp_out = p.mps_out = NULL;
  if (st == FP_OK)
    st = ends(g, &p, pl, prev, plan, &p0, &p1, err);
  p.objective = FP_OBJECTIVE_TRAFFIC;
  for (int32_t i = 0; st == FP_OK && i < npoints; i++) {
    fp_pareto_point *pt = &out[i];
    pt->peak_limit = p0 + (p1 - p0) / (uint64_t)(npoints - 1) * (uint64_t)i;
    if (i == npoints - 1)
      pt->peak_limit = p1;
    p.peak_limit = pt->peak_limit;
    p.warm_start = prev; /* the lowest-peak plan, then the last point */
    st = solve(pl, g, &p, plan, &pt->m, err);
    if (st != FP_OK)
      break;
    snprintf(pt->status, sizeof pt->status, "%s", fp_plan_solver(plan)->status);
    pt->gap = fp_plan_solver(plan)->gap;
    st = fp_plan_copy(prev, plan, err);
  }
  if (st == FP_OK)
    mark_dominated(out, npoints);
  fp_plan_destroy(plan);
  fp_plan_destroy(prev);
  return st;
}
