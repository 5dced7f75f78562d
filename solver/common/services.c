/*
 * services.c -- what every solver in solver/ shares (services.h):
 * the clock, the eager peak that a peak limit of 0 stands for, the best
 * heuristic plan meeting the limits (the warm start of the ILP and the
 * start of the large-neighbourhood search), the message for infeasible
 * limits, and the per-thread GLPK environment's peak and release.
 *
 * It calls only the model, the heuristics and GLPK's environment
 * functions, never another solver file, so that every solver can use it
 * without a call circle.
 */
#include <glpk.h>
#include <math.h>
#include <stdio.h>

#include "heuristics/heuristics.h"
#include "solver/common/services.h"

const char *fp_glpk_version(void) {
  return glp_version();
}

void solver_thread_done(void) {
  glp_free_env();
}

int64_t solver_glpk_peak(void) {
  size_t tpeak = 0;
  glp_mem_usage(NULL, NULL, NULL, &tpeak);
  return (int64_t)tpeak;
}

bool solver_better(const fp_ilp_params *prm, const fp_metrics *a,
                   const fp_metrics *b) {
  double oa = fp_objective_value(prm, a), ob = fp_objective_value(prm, b);
  if (oa != ob)
    return oa < ob;
  if (prm->objective == FP_OBJECTIVE_TRAFFIC) {
    if (a->peak_bytes != b->peak_bytes)
      return a->peak_bytes < b->peak_bytes;
  } else if (a->traffic_bytes != b->traffic_bytes) {
    return a->traffic_bytes < b->traffic_bytes;
  }
  return a->kernels < b->kernels;
}

fp_status solver_check_starts(const fp_graph *g, const fp_ilp_params *prm,
                              fp_error *err) {
  for (int32_t i = 0; i < prm->n_starts; i++) {
    fp_error e;
    fp_status st =
        fp_plan_check(g, prm->starts[i], prm->limits.max_fusion_size, &e);
    if (st == FP_ENOMEM)
      return fp_error_set(err, st, "%s", e.msg);
    if (st != FP_OK)
      return fp_error_set(err, FP_EARG, "start plan %d: %s", (int)i, e.msg);
  }
  return FP_OK;
}

/* Evaluates candidate p; keeps it in *best when it meets the limits and
 * beats what *best holds (solver_better: ties go to the earlier one).
 * FP_OK, or FP_ENOMEM: an allocation that fails here must not pass for a
 * plan that does not meet the limits. */
static fp_status offer(const fp_graph *g, const fp_ilp_params *prm,
                       uint64_t eager_peak, const fp_plan *p, fp_plan **best,
                       fp_metrics *best_m) {
  fp_metrics m;
  fp_status st =
      fp_plan_eval_k(g, p, prm->limits.max_fusion_size, &m, NULL, NULL);
  if (st != FP_OK || !fp_meets_limits(prm, &m, eager_peak))
    return st == FP_ENOMEM ? FP_ENOMEM : FP_OK;
  if (*best && !solver_better(prm, &m, best_m))
    return FP_OK;
  if (!*best && !(*best = fp_plan_create()))
    return FP_ENOMEM;
  if ((st = fp_plan_copy(*best, p, NULL)) != FP_OK)
    return st;
  *best_m = m;
  return FP_OK;
}

fp_status solver_best_heuristic(const fp_graph *g, const fp_ilp_params *prm,
                                uint64_t eager_peak, uint64_t peak_cap,
                                fp_plan **best, fp_metrics *m, fp_error *err) {
  fp_plan *p = fp_plan_create();
  fp_status st = p ? FP_OK : FP_ENOMEM;
  *best = NULL;
  if (st == FP_OK && prm->warm_start)
    st = offer(g, prm, eager_peak, prm->warm_start, best, m);
  for (int32_t i = 0; st == FP_OK && i < prm->n_starts; i++)
    st = offer(g, prm, eager_peak, prm->starts[i], best, m);
  for (int k = 0; st == FP_OK && k < FP_METHOD_COUNT_; k++) {
    fp_fusion_params fp;
    fp_fusion_params_init(&fp, (fp_method)k);
    fp.order = FP_ORDER_BEST;
    fp.limits.max_fusion_size = prm->limits.max_fusion_size;
    fp.limits.peak = peak_cap == FP_NO_LIMIT ? FP_LIMITS_PEAK_EAGER : peak_cap;
    fp_status fs = fp_fuse(g, &fp, p, NULL);
    if (fs == FP_OK)
      st = offer(g, prm, eager_peak, p, best, m);
    else if (fs == FP_ENOMEM)
      st = FP_ENOMEM;
    /* Inductor's own reorder of greedy's groups: its order can meet a peak
     * limit that `best` misses (issue 12). */
    if (st == FP_OK && fs == FP_OK && k == FP_METHOD_GREEDY) {
      fs = fp_plan_reorder(g, p, FP_ORDER_INDUCTOR, NULL, NULL);
      if (fs == FP_OK)
        st = offer(g, prm, eager_peak, p, best, m);
      else if (fs == FP_ENOMEM)
        st = FP_ENOMEM;
    }
  }
  fp_plan_destroy(p);
  if (st != FP_OK) {
    fp_plan_destroy(*best);
    *best = NULL;
    return fp_error_set(err, st, "out of memory");
  }
  return FP_OK;
}

/* Smallest peak the heuristics know (for messages about infeasible
 * limits). */
static uint64_t known_min_peak(const fp_graph *g, int32_t k) {
  fp_fusion_params fp;
  fp_metrics m;
  uint64_t best = UINT64_MAX;
  fp_plan *p = fp_plan_create();
  for (int i = 0; p && i < FP_METHOD_COUNT_; i++) {
    fp_fusion_params_init(&fp, (fp_method)i);
    fp.order = FP_ORDER_BEST;
    fp.limits.max_fusion_size = k;
    if (fp_fuse(g, &fp, p, NULL) == FP_OK &&
        fp_plan_eval_k(g, p, k, &m, NULL, NULL) == FP_OK && m.peak_bytes < best)
      best = m.peak_bytes;
  }
  fp_plan_destroy(p);
  return best;
}

fp_status solver_infeasible(const fp_graph *g, const fp_ilp_params *prm,
                            uint64_t peak_cap, fp_error *err) {
  char traffic[64] = "";
  if (prm->limits.traffic != FP_NO_LIMIT)
    snprintf(traffic, sizeof traffic, ", traffic <= %llu",
             (unsigned long long)prm->limits.traffic);
  return fp_error_set(
      err, FP_EINFEASIBLE,
      "no plan meets the limits (peak <= %llu%s); the lowest "
      "peak known is %llu",
      (unsigned long long)peak_cap, traffic,
      (unsigned long long)known_min_peak(g, prm->limits.max_fusion_size));
}

fp_status solver_eager_peak(const fp_graph *g, uint64_t *peak, fp_error *err) {
  fp_plan *e = fp_plan_create();
  fp_metrics m;
  fp_status st = e ? fp_plan_make_eager(e, g, err)
                   : fp_error_set(err, FP_ENOMEM, "out of memory");
  if (st == FP_OK)
    st = fp_plan_eval(g, e, &m, NULL, err);
  fp_plan_destroy(e);
  *peak = st == FP_OK ? m.peak_bytes : 0;
  return st;
}

double solver_rel_gap(double value, double bound) {
  if (isnan(value) || isnan(bound))
    return NAN;
  return value > bound && value > 0 ? (value - bound) / value : 0;
}

void solver_record_second(const fp_ilp_params *prm, fp_solver_info *si,
                          const fp_metrics *m, double bound2) {
  if (prm->objective == FP_OBJECTIVE_WEIGHTED || prm->levels < 2)
    return; /* one level */
  si->objective2 = prm->objective == FP_OBJECTIVE_TRAFFIC
                       ? (double)m->peak_bytes
                       : (double)m->traffic_bytes;
  /* A proven second level is its own bound. */
  if (si->levels_proven >= 2 || bound2 > si->objective2)
    bound2 = si->objective2;
  si->bound2 = bound2;
  si->gap2 = solver_rel_gap(si->objective2, bound2);
}

void solver_stop_reason(const fp_ilp_params *prm, fp_solver_info *si,
                        bool cancelled, bool timed_out) {
  bool two = prm->objective != FP_OBJECTIVE_WEIGHTED && prm->levels >= 2;
  bool p1 = si->gap == 0, w1 = p1 || si->gap <= prm->gap;
  bool p2 = !two || si->levels_proven >= 2 || si->gap2 == 0;
  bool w2 = p2 || si->gap2 <= prm->gap2; /* NaN: not within */
  if (two && p1 && p2 && si->levels_proven >= 1)
    si->levels_proven = 2;
  const char *why = p1 && p2    ? "proven"
                    : w1 && w2  ? "gap"
                    : cancelled ? "interrupted"
                    : timed_out ? "time-limit"
                                : "stalled";
  snprintf(si->stop_reason, sizeof si->stop_reason, "%s", why);
}
