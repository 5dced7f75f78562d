/*
 * params.c -- the solver parameters (fp_ilp_params): defaults, checks, the
 * objective's name and value, and the limits test shared by the ILP and
 * the exhaustive enumeration, so that both judge plans the same way.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model/util.h"
#include "solver/solver.h"

static const char *const objective_names[] = {
#define FP_OBJECTIVE_STR_(name, str) str,
    FP_OBJECTIVE_MAP(FP_OBJECTIVE_STR_)
#undef FP_OBJECTIVE_STR_
};

/* The objective's name ("traffic"), or "unknown" outside the list. */
const char *fp_objective_name(fp_objective o) {
  return fp_name_of(objective_names, FP_OBJECTIVE_COUNT_, (int)o);
}

/* The objective called `s`, or -1 (also for s == NULL). */
int fp_objective_parse(const char *s) {
  return fp_name_lookup(objective_names, FP_OBJECTIVE_COUNT_, s);
}

/* Fills every field with the defaults documented in solver.h. */
void fp_ilp_params_init(fp_ilp_params *prm) {
  if (!prm)
    return;
  memset(prm, 0, sizeof *prm);
  prm->objective = FP_OBJECTIVE_TRAFFIC;
  fp_limits_init(&prm->limits);
  prm->lambda = 1.0;
  prm->time_limit_s = FP_ILP_DEFAULT_TIME_LIMIT;
  prm->mip_gap = 0.0;
  prm->gap = FP_ILP_DEFAULT_GAP;
  prm->gap2 = FP_ILP_DEFAULT_GAP2;
  prm->window = FP_ILP_DEFAULT_WINDOW;
  prm->warm_start = NULL;
  prm->starts = NULL;
  prm->n_starts = 0;
  prm->lp_out = NULL;
  prm->mps_out = NULL;
  prm->progress = NULL;
  prm->progress_ctx = NULL;
  prm->node_limit = 0;
  prm->cancel = NULL;
  prm->jobs = FP_AUTO_DEFAULT_JOBS;
  prm->seed = FP_AUTO_DEFAULT_SEED;
  prm->known_bound = NAN;
  prm->levels = FP_ILP_DEFAULT_LEVELS;
}

/* FP_OK, or FP_EARG with a message naming the first bad field. */
fp_status fp_ilp_params_check(const fp_ilp_params *prm, fp_error *err) {
  if (!prm)
    return fp_error_set(err, FP_EARG, "solver params: NULL");
  if ((unsigned)prm->objective >= FP_OBJECTIVE_COUNT_)
    return fp_error_set(err, FP_EARG, "solver params: objective: unknown (%d)",
                        (int)prm->objective);
  if (!isfinite(prm->time_limit_s) || prm->time_limit_s <= 0)
    return fp_error_set(err, FP_EARG,
                        "solver params: time_limit_s must be finite and > 0");
  if (!isfinite(prm->mip_gap) || prm->mip_gap < 0)
    return fp_error_set(err, FP_EARG,
                        "solver params: mip_gap must be finite and >= 0");
  if (!(prm->gap >= 0 && prm->gap < 1)) /* NaN fails both */
    return fp_error_set(err, FP_EARG, "solver params: gap must be in [0, 1)");
  if (!(prm->gap2 >= 0 && prm->gap2 < 1))
    return fp_error_set(err, FP_EARG, "solver params: gap2 must be in [0, 1)");
  if (!isfinite(prm->lambda) || prm->lambda < 0)
    return fp_error_set(err, FP_EARG,
                        "solver params: lambda must be finite and >= 0");
  if (prm->window < FP_ILP_WINDOW_AUTO)
    return fp_error_set(err, FP_EARG,
                        "solver params: window must be >= 0, or "
                        "FP_ILP_WINDOW_EXACT / FP_ILP_WINDOW_AUTO");
  if (prm->levels < 1 || prm->levels > 2)
    return fp_error_set(err, FP_EARG, "solver params: levels must be 1 or 2");
  if (prm->node_limit < 0)
    return fp_error_set(err, FP_EARG, "solver params: node_limit must be >= 0");
  if (prm->jobs < 1 || prm->jobs > FP_AUTO_MAX_JOBS)
    return fp_error_set(err, FP_EARG, "solver params: jobs must be in 1..%d",
                        FP_AUTO_MAX_JOBS);
  if (fp_limits_check(&prm->limits, "solver params", err) != FP_OK)
    return FP_EARG;
  if (prm->n_starts < 0 || (prm->n_starts > 0 && !prm->starts))
    return fp_error_set(err, FP_EARG,
                        "solver params: n_starts must be >= 0, with starts "
                        "holding that many plans");
  for (int32_t i = 0; i < prm->n_starts; i++)
    if (!prm->starts[i])
      return fp_error_set(err, FP_EARG, "solver params: starts[%d] is NULL",
                          (int)i);
  return FP_OK;
}

/* traffic, peak, or traffic + lambda * peak, as a double (exact below
 * 2^53 for the first two). */
double fp_objective_value(const fp_ilp_params *prm, const fp_metrics *m) {
  if (!prm || !m)
    return NAN;
  switch (prm->objective) {
  case FP_OBJECTIVE_PEAK:
    return (double)m->peak_bytes;
  case FP_OBJECTIVE_WEIGHTED:
    return (double)m->traffic_bytes + prm->lambda * (double)m->peak_bytes;
  case FP_OBJECTIVE_TRAFFIC:
  default:
    return (double)m->traffic_bytes;
  }
}

/* 1 when peak <= the peak limit (FP_LIMITS_PEAK_EAGER standing for
 * `eager_peak`, FP_NO_LIMIT for none) and traffic <= the traffic limit,
 * whatever the objective; else 0. */
int fp_meets_limits(const fp_ilp_params *prm, const fp_metrics *m,
                    uint64_t eager_peak) {
  if (!prm || !m)
    return 0;
  uint64_t peak_limit = fp_limits_peak_cap(&prm->limits, eager_peak);
  if (peak_limit != FP_NO_LIMIT && m->peak_bytes > peak_limit)
    return 0;
  if (prm->limits.traffic != FP_NO_LIMIT &&
      m->traffic_bytes > prm->limits.traffic)
    return 0;
  return 1;
}
