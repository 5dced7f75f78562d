/*
 * pareto.c -- the traffic-vs-peak front, as a sweep of peak limits, then
 * a refinement that spends the time left where the gap is largest.
 *
 * Each point is a solve of "least traffic subject to peak <= limit".
 * Limits grow along the sweep, so the previous point's plan meets the next
 * limit and serves as its warm start: the front never gets worse from one
 * point to the next, even when a solve runs out of time.
 *
 * Invariant (after every solve, kept by propagate): points are sorted by
 * limit; plans[i] meets limit i and pts[i].m are its evaluator figures;
 * pts[i].bound is at most the traffic of every legal plan with peak <=
 * pts[i].peak_limit.  Two facts keep it and strengthen it for free:
 * a point may take the plan of any point whose peak meets its limit; and
 * the least traffic can only fall as the limit grows, so a point's bound
 * also holds for every point before it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/args.h"
#include "model/util.h"
#include "solver/planner.h"
#include "solver/solver.h"

/* Share of the budget for the first sweep (ends + points); the rest goes
 * to re-solving the points with the largest gaps. */
#define SWEEP_TIME_SHARE 0.5
/* Share of the budget for one traffic bound valid at every point (the
 * per-solve bounds get only each solve's share, and vary with it). */
#define BOUND_TIME_SHARE 0.25
/* A re-solve gets at least this many seconds (or what is left). */
#define REFINE_MIN_S 0.5
/* Re-solves of one point in a row without progress before it is left. */
#define REFINE_STALL 2

/* The sweep's state: its points, the plan of each, and the clock. */
typedef struct sweep {
  const fp_graph *g;
  const fp_planner *pl;
  fp_ilp_params p; /* per-solve parameters (objective, limit, time) */
  fp_pareto_point *pts;
  fp_plan **plans;
  int32_t n;
  double deadline;
  int *stalls;   /* re-solves in a row that changed nothing */
  double common; /* the traffic bound of common_bound (NaN: none yet) */
} sweep;

/* One solve of the sweep: the planner on parameters p (a request with
 * p as its solver parameters). */
static fp_status solve(const fp_planner *pl, const fp_graph *g,
                       const fp_ilp_params *p, fp_plan *out, fp_metrics *m,
                       fp_error *err) {
  fp_plan_request req;
  fp_plan_request_init(&req, pl);
  req.ilp = *p;
  req.limits = p->limits; /* what fp_planner_run hands the method */
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

/* Seconds for the next solve: `want`, capped by what is left of the
 * budget; 0 when nothing useful is left. */
static double slice(const sweep *S, double want) {
  double left = S->deadline - fp_clock_now();
  if (left < 0.05)
    return 0;
  return want < left ? want : left;
}

/* The two ends: lowest peak (its plan kept in `low`: the warm start of
 * the first point, which has exactly that limit), and lowest traffic with
 * no peak limit.  *p1 is that plan's peak (at least *p0). */
static fp_status ends(sweep *S, double each, fp_plan *low, fp_plan *plan,
                      uint64_t *p0, uint64_t *p1, fp_error *err) {
  fp_metrics m;
  fp_ilp_params *p = &S->p;
  p->objective = FP_OBJECTIVE_PEAK;
  p->limits.peak = FP_NO_LIMIT;
  p->known_bound = NAN; /* the common bound is on traffic */
  p->time_limit_s = each;
  fp_status st = solve(S->pl, S->g, p, low, &m, err);
  if (st != FP_OK)
    return st;
  *p0 = m.peak_bytes;
  p->objective = FP_OBJECTIVE_TRAFFIC;
  p->known_bound = S->common;
  p->time_limit_s = slice(S, each) > 0 ? slice(S, each) : 0.05;
  st = solve(S->pl, S->g, p, plan, &m, err);
  *p1 = m.peak_bytes > *p0 ? m.peak_bytes : *p0;
  return st;
}

/* Solves point i once, from `warm`, with `seconds`; keeps the result in
 * plans[i] when it is better, and the solve's bound when it is higher.
 * *progress says whether either changed. */
static fp_status solve_point(sweep *S, int32_t i, const fp_plan *warm,
                             double seconds, fp_plan *scratch, bool *progress,
                             fp_error *err) {
  fp_pareto_point *pt = &S->pts[i];
  fp_metrics m;
  double t0 = fp_clock_now();
  S->p.limits.peak = pt->peak_limit;
  S->p.warm_start = warm;
  S->p.time_limit_s = seconds;
  S->p.seed += 1; /* another window placement on every re-solve */
  fp_status st = solve(S->pl, S->g, &S->p, scratch, &m, err);
  pt->time_s += fp_clock_now() - t0;
  pt->solves++;
  *progress = false;
  if (st != FP_OK)
    return st;
  const fp_solver_info *si = fp_plan_solver_const(scratch);
  if (isfinite(si->bound) && si->bound > pt->bound) {
    pt->bound = si->bound;
    *progress = true;
  }
  if (pt->solves == 1 || m.traffic_bytes < pt->m.traffic_bytes ||
      (m.traffic_bytes == pt->m.traffic_bytes &&
       m.peak_bytes < pt->m.peak_bytes)) {
    pt->m = m;
    snprintf(pt->status, sizeof pt->status, "%s", si->status);
    *progress = true;
    return fp_plan_copy(S->plans[i], scratch, err);
  }
  return FP_OK;
}

/* Restores the invariant after a solve: a point takes the best plan of
 * any point that meets its limit, bounds flow to smaller limits; then
 * statuses and gaps follow the figures.
 * FP_OK or FP_ENOMEM. */
static fp_status propagate(sweep *S, fp_error *err) {
  fp_status st = FP_OK;
  for (int32_t i = 0; st == FP_OK && i < S->n; i++) {
    fp_pareto_point *b = &S->pts[i];
    int32_t best = i;
    for (int32_t j = 0; j < S->n; j++) {
      const fp_metrics *a = &S->pts[j].m, *c = &S->pts[best].m;
      if (a->peak_bytes <= b->peak_limit &&
          (a->traffic_bytes < c->traffic_bytes ||
           (a->traffic_bytes == c->traffic_bytes &&
            a->peak_bytes < c->peak_bytes)))
        best = j;
    }
    if (best != i) {
      b->m = S->pts[best].m;
      memcpy(b->status, S->pts[best].status, sizeof b->status);
      st = fp_plan_copy(S->plans[i], S->plans[best], err);
    }
  }
  for (int32_t i = S->n - 2; i >= 0; i--)
    if (S->pts[i + 1].bound > S->pts[i].bound)
      S->pts[i].bound = S->pts[i + 1].bound;
  for (int32_t i = 0; i < S->n; i++) {
    fp_pareto_point *pt = &S->pts[i];
    double t = (double)pt->m.traffic_bytes;
    if (!(pt->bound <= t)) /* a bound at the answer proves it */
      pt->bound = t;
    pt->gap = t > 0 ? (t - pt->bound) / t : 0;
    if (pt->bound >= t)
      snprintf(pt->status, sizeof pt->status, "optimal");
    else if (strcmp(pt->status, "optimal") == 0)
      snprintf(pt->status, sizeof pt->status, "feasible");
  }
  return st;
}

/* The first sweep: every limit once, each warm-started from the point
 * before it (the first from the lowest-peak plan `low`, the last from
 * the least-traffic plan `top`, which meets that limit exactly). */
static fp_status first_sweep(sweep *S, const fp_plan *low, const fp_plan *top,
                             uint64_t p0, uint64_t p1, double each,
                             fp_plan *scratch, fp_error *err) {
  fp_status st = FP_OK;
  S->p.objective = FP_OBJECTIVE_TRAFFIC;
  for (int32_t i = 0; st == FP_OK && i < S->n; i++) {
    fp_pareto_point *pt = &S->pts[i];
    bool progress;
    pt->peak_limit = p0 + (p1 - p0) / (uint64_t)(S->n - 1) * (uint64_t)i;
    if (i == S->n - 1)
      pt->peak_limit = p1;
    double s = slice(S, each);
    const fp_plan *warm = i == 0 ? low : i == S->n - 1 ? top : S->plans[i - 1];
    st = solve_point(S, i, warm, s > 0 ? s : 0.05, scratch, &progress, err);
  }
  return st == FP_OK ? propagate(S, err) : st;
}

/* The unproven point with the largest gap that is not stalled; -1 when
 * there is none. */
static int32_t widest_gap(const sweep *S, int32_t *unproven) {
  int32_t best = -1;
  *unproven = 0;
  for (int32_t i = 0; i < S->n; i++) {
    if (S->pts[i].gap <= S->p.gap || S->stalls[i] >= REFINE_STALL)
      continue;
    ++*unproven;
    if (best < 0 || S->pts[i].gap > S->pts[best].gap)
      best = i;
  }
  return best;
}

/* Re-solves the widest-gap point from its own plan, again and again,
 * until the budget is spent or every point is proven or stalled.  The
 * slice is the time left shared among the unproven points. */
static fp_status refine(sweep *S, fp_plan *scratch, fp_error *err) {
  fp_status st = FP_OK;
  int32_t unproven, i;
  while (st == FP_OK && (i = widest_gap(S, &unproven)) >= 0) {
    if (S->p.cancel && *S->p.cancel)
      break;
    double want = (S->deadline - fp_clock_now()) / unproven;
    double s = slice(S, want > REFINE_MIN_S ? want : REFINE_MIN_S);
    if (s <= 0)
      break;
    bool progress;
    st = solve_point(S, i, S->plans[i], s, scratch, &progress, err);
    S->stalls[i] = progress ? 0 : S->stalls[i] + 1;
    if (st == FP_OK)
      st = propagate(S, err);
  }
  return st;
}

/* Allocates the sweep's plans and counters.  FP_OK or FP_ENOMEM. */
static fp_status sweep_init(sweep *S, const fp_graph *g,
                            const fp_ilp_params *prm, int32_t n,
                            const fp_planner *pl, fp_pareto_point *out,
                            fp_error *err) {
  memset(S, 0, sizeof *S);
  S->g = g;
  S->pl = pl;
  S->p = *prm;
  S->p.lp_out = S->p.mps_out = NULL;
  S->common = NAN;
  S->pts = out;
  S->n = n;
  S->deadline = fp_clock_now() + prm->time_limit_s;
  memset(out, 0, (size_t)n * sizeof *out);
  S->plans = calloc((size_t)n, sizeof *S->plans);
  S->stalls = calloc((size_t)n, sizeof *S->stalls);
  if (!S->plans || !S->stalls)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  for (int32_t i = 0; i < n; i++) {
    out[i].bound = -HUGE_VAL;
    if (!(S->plans[i] = fp_plan_create()))
      return fp_error_set(err, FP_ENOMEM, "out of memory");
  }
  return FP_OK;
}

/* Frees what sweep_init allocated (safe after a failed init). */
static void sweep_free(sweep *S) {
  for (int32_t i = 0; S->plans && i < S->n; i++)
    fp_plan_destroy(S->plans[i]);
  free(S->plans);
  free(S->stalls);
}

/* One lower bound on traffic for all points: fp_lower_bound holds for
 * every legal plan, whatever its peak, so it starts every point's bound.
 * FP_OK or FP_ENOMEM. */
static fp_status common_bound(sweep *S, double seconds, fp_error *err) {
  fp_ilp_params p = S->p;
  double b = -HUGE_VAL;
  p.objective = FP_OBJECTIVE_TRAFFIC;
  p.limits.peak = FP_NO_LIMIT;
  fp_status st = fp_lower_bound(S->g, &p, seconds, &b, err);
  for (int32_t i = 0; st == FP_OK && i < S->n; i++)
    S->pts[i].bound = b;
  S->common = b; /* the traffic solves need not compute it again */
  return st;
}

fp_status fp_pareto(const fp_graph *g, const fp_ilp_params *prm,
                    int32_t npoints, const fp_planner *pl, fp_pareto_point *out,
                    fp_error *err) {
  if (fp_arg_graph(g, "pareto", err) != FP_OK ||
      fp_arg_ptr(out, "pareto", "out", err) != FP_OK ||
      fp_ilp_params_check(prm, err) != FP_OK)
    return FP_EARG;
  if (npoints < 2)
    return fp_error_set(err, FP_EARG, "pareto: at least 2 points");
  if (!pl || !(pl->flags & FP_PLANNER_PARETO))
    return fp_error_set(err, FP_EARG,
                        "pareto: method %s cannot drive the "
                        "sweep",
                        pl ? pl->name : "(none)");
  sweep S;
  fp_plan *low = fp_plan_create(), *top = fp_plan_create();
  fp_plan *scratch = fp_plan_create();
  uint64_t p0 = 0, p1 = 0;
  /* The window search needs the common bound; the exact solvers (auto
   * on small graphs, ilp, exhaustive) prove their own. */
  double bound_share = strcmp(pl->name, "auto") == 0 &&
                               fp_graph_node_count(g) > FP_ILP_EXACT_NODES
                           ? BOUND_TIME_SHARE
                           : 0;
  double each =
      prm->time_limit_s * (SWEEP_TIME_SHARE - bound_share) / (npoints + 2);
  fp_status st = sweep_init(&S, g, prm, npoints, pl, out, err);
  if (st == FP_OK && (!low || !top || !scratch))
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK && bound_share > 0)
    st = common_bound(&S, prm->time_limit_s * bound_share, err);
  if (st == FP_OK)
    st = ends(&S, each, low, top, &p0, &p1, err);
  if (st == FP_OK)
    st = first_sweep(&S, low, top, p0, p1, each, scratch, err);
  if (st == FP_OK)
    st = refine(&S, scratch, err);
  if (st == FP_OK)
    mark_dominated(out, npoints);
  sweep_free(&S);
  fp_plan_destroy(low);
  fp_plan_destroy(top);
  fp_plan_destroy(scratch);
  return st;
}
