/*
 * ilp.c -- fp_ilp_solve, the integer program: limits, warm start,
 * wall-clock limit, bound and gap, fallback (docs/solver.md, "Solving").
 *
 * Sequence: resolve the limits; pick the warm start (the best heuristic
 * plan meeting them, services.c); compute the cluster cuts when traffic
 * counts (bound.c); build the model (ilp_model.c) and export it; run it
 * through the MIP core (mip.c: root LP, then branch-and-bound with the
 * warm start injected after checking it against every row ourselves,
 * since glp_ios_heur_sol does not; GLPK error recovery); keep the better
 * of the MIP's plan and the warm start, and record.  The objective
 * reported is always the evaluator's figure for the plan returned.
 *
 * Calls: ilp_model.c, mip.c, bound.c, services.c, params.c; none of them
 * calls back (bound.c runs its cluster ILPs through mip.c itself).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/args.h"
#include "model/util.h"
#include "solver/bound/bound.h"
#include "solver/common/services.h"
#include "solver/mip/ilp_model.h"
#include "solver/mip/mip.h"

/* Everything one solve tracks. */
typedef struct run {
  const fp_graph *g;
  const fp_ilp_params *prm;
  ilp_model *M;
  double t0, deadline;
  uint64_t eager_peak, peak_cap;
  fp_plan *warm; /* best heuristic plan meeting the limits */
  fp_metrics warm_m;
  double *warm_x; /* its columns, when they satisfy every row */
  mip_result mip; /* what the MIP core found; status 0 when not run */
  double last_report;
  solver_cuts cuts; /* cluster bounds: rows of the model, and a bound */
} run;

/* Share of the time limit left when building must stop: unwinding the
 * build and freeing a model of gigabytes take tenths of a second. */
#define BUILD_RESERVE 0.1

/* Share of the time limit spent on the cluster cuts (bound.c). */
#define CUTS_TIME_SHARE 0.1

/* ---- warm start -------------------------------------------------------- */

/* The heuristics (every method, best order) and the caller's plan. */
static fp_status pick_warm_start(run *R, fp_error *err) {
  return solver_best_heuristic(R->g, R->prm, R->eager_peak, R->peak_cap,
                               &R->warm, &R->warm_m, err);
}

/* ---- progress ---------------------------------------------------------- */

/* Reports progress: once before GLPK starts (mp NULL), then from the MIP
 * core at most every 0.2 s. */
static void report(run *R, const mip_progress *mp) {
  if (!R->prm->progress)
    return;
  double now = fp_clock_now();
  if (mp && now - R->last_report < 0.2)
    return;
  R->last_report = now;
  fp_ilp_progress pr = {now - R->t0, NAN, NAN, NAN, mp ? mp->nodes : 0, 0, 0};
  double bound = mp ? mp->bound : MIP_BOUND_UNKNOWN;
  if (mp && !isnan(mp->incumbent))
    pr.incumbent = mp->incumbent * R->M->scale;
  else if (R->warm)
    pr.incumbent = fp_objective_value(R->prm, &R->warm_m);
  if (isfinite(bound))
    pr.bound = bound * R->M->scale;
  if (isfinite(pr.incumbent) && isfinite(pr.bound) && pr.incumbent > 0)
    pr.gap = (pr.incumbent - pr.bound) / pr.incumbent;
  R->prm->progress(&pr, R->prm->progress_ctx);
}

/* The MIP core's progress callback (mip_params.progress). */
static void on_progress(const mip_progress *mp, void *ctx) {
  report(ctx, mp);
}

/* GLPK's relative gap for this level: the level's tolerance prm->gap, or
 * the older prm->mip_gap when larger. */
static double level_gap(const fp_ilp_params *prm) {
  return prm->gap > prm->mip_gap ? prm->gap : prm->mip_gap;
}

/* Runs the model through the MIP core under the solve's limits, leaving
 * 5% of the time limit for what follows GLPK (reading the solution,
 * evaluating, choosing): the limit is for the whole solve. */
static void solve_model(run *R) {
  mip_params mp;
  mip_params_init(&mp);
  mp.deadline = R->deadline;
  mp.reserve_s = 0.05 * R->prm->time_limit_s;
  mp.cancel = R->prm->cancel;
  mp.node_limit = R->prm->node_limit;
  mp.mip_gap = level_gap(R->prm);
  mp.warm_x = R->warm_x;
  if (R->prm->progress) {
    mp.progress = on_progress;
    mp.progress_ctx = R;
  }
  mip_solve(&R->M->lp, &mp, &R->mip);
}

/* ---- results ------------------------------------------------------------ */

/* Writes the model files asked for, with GLPK's messages about them
 * swallowed and its errors recovered (mip_guard); FP_EIO naming the file. */
typedef struct export_job {
  const ilp_model *M;
  const fp_ilp_params *prm;
  int lp_rc, mps_rc;
} export_job;

static void export_files(void *ctx) {
  export_job *J = ctx;
  if (J->prm->lp_out)
    J->lp_rc = glp_write_lp(J->M->lp, NULL, J->prm->lp_out);
  if (J->prm->mps_out && J->lp_rc == 0)
    J->mps_rc = glp_write_mps(J->M->lp, GLP_MPS_FILE, NULL, J->prm->mps_out);
}

static fp_status export_model(ilp_model *M, const fp_ilp_params *prm,
                              fp_error *err) {
  export_job J = {M, prm, 0, 0};
  fp_status st = FP_OK;
  if (!prm->lp_out && !prm->mps_out)
    return FP_OK;
  mip_quiet(true);
  if (mip_guard(export_files, &J) != 0) {
    M->lp = NULL; /* freed with GLPK's environment */
    st = fp_error_set(err, FP_EINTERNAL, "GLPK failed writing the model");
  } else if (J.lp_rc != 0) {
    st =
        fp_error_set(err, FP_EIO, "%s: cannot write the LP model", prm->lp_out);
  } else if (J.mps_rc != 0) {
    st = fp_error_set(err, FP_EIO, "%s: cannot write the MPS model",
                      prm->mps_out);
  }
  mip_quiet(false);
  return st;
}

/* A lower bound on the objective valid for every plan: the structural
 * bounds, and the MIP's bound when the model is exact.  Objectives are
 * integers in bytes for traffic and peak, so the bound is rounded up (with
 * slack for floating-point noise in the LP bound). */
static double global_bound(const run *R) {
  fp_bounds lb;
  double b = 0;
  if (fp_graph_bounds(R->g, &lb, NULL) == FP_OK) {
    fp_metrics s = {0};
    if (R->cuts.best > lb.traffic_bytes) /* valid for every plan too */
      lb.traffic_bytes = R->cuts.best;
    s.traffic_bytes = lb.traffic_bytes;
    s.peak_bytes = lb.peak_bytes;
    b = fp_objective_value(R->prm, &s);
  }
  return R->M ? ilp_bound_value(R->M, R->mip.bound, b) : b;
}

/* Fills the solver record of the plan returned. */
static void record(run *R, fp_plan *out, const fp_metrics *m,
                   const char *status) {
  fp_solver_info *si = fp_plan_solver(out);
  fp_solver_info_init(si);
  snprintf(si->method, sizeof si->method, "ilp");
  si->objective = fp_objective_value(R->prm, m);
  si->bound = strcmp(status, "optimal") == 0 ? si->objective : global_bound(R);
  si->bound = si->bound > si->objective ? si->objective : si->bound;
  /* A bound valid for every plan that reaches the objective proves it. */
  if (strcmp(status, "feasible") == 0 && si->bound >= si->objective)
    status = "optimal";
  snprintf(si->status, sizeof si->status, "%s", status);
  si->gap = si->objective > 0 ? (si->objective - si->bound) / si->objective : 0;
  si->time_s = fp_clock_now() - R->t0;
  si->nodes = R->mip.nodes;
  si->rows = R->M && R->M->lp ? glp_get_num_rows(R->M->lp) : -1;
  si->cols = R->M && R->M->lp ? glp_get_num_cols(R->M->lp) : -1;
  si->glpk_peak_bytes = solver_glpk_peak();
}

/* FP_EINFEASIBLE for this solve's limits (solver_infeasible). */
static fp_status infeasible(const run *R, fp_error *err) {
  return solver_infeasible(R->g, R->prm, R->peak_cap, err);
}

/* Limits in bytes; the eager peak stands for FP_LIMITS_PEAK_EAGER. */
static fp_status resolve_limits(run *R, fp_error *err) {
  fp_status st = solver_eager_peak(R->g, &R->eager_peak, err);
  R->peak_cap = fp_limits_peak_cap(&R->prm->limits, R->eager_peak);
  return st;
}

/* After ilp_build returned `built` (not ILP_BUILD_OK): FP_OK with no
 * MIP run (R->mip.status stays 0: the warm start is the answer) when the
 * build stopped at the deadline, on cancel, when GLPK failed in it, or
 * when the model of an automatic window is too large to stop on time;
 * else the error, with the estimated size: FP_ENOMEM when the model
 * could not fit in memory, FP_EARG when the window asked for gives a
 * model too large to stop on time. */
static fp_status build_failed(run *R, int built, fp_error *err) {
  ilp_model *M = R->M;
  if (built == ILP_BUILD_TOO_BIG)
    return fp_error_set(
        err, FP_ENOMEM,
        "the %s model is too large: about %.3g GiB (%.0f columns, %.0f rows, "
        "%.0f nonzeros at least), more than the memory available; use "
        "--window or --method auto",
        M->exact ? "exact" : "windowed", M->est_bytes / 1073741824.0,
        M->est_cols, M->est_rows, M->est_nnz);
  if (built == ILP_BUILD_TOO_SLOW &&
      (R->prm->window != FP_ILP_WINDOW_AUTO || !R->warm))
    return fp_error_set(
        err, FP_EARG,
        "the %s model is too large to stop on time: about %.0f nonzeros at "
        "least, over the %d GLPK can scale and factorize between two looks "
        "at the clock; use a smaller --window or --method auto",
        M->exact ? "exact" : "windowed", M->est_nnz, ILP_MAX_EST_NZ);
  if (built == ILP_BUILD_NOMEM)
    return fp_error_set(err, FP_ENOMEM, "out of memory building the model");
  if (M->lp) /* stopped: the half-built model is of no use */
    glp_delete_prob(M->lp);
  M->lp = NULL;
  return FP_OK;
}

/* Builds the model around the warm start, exports it, solves it. */
static fp_status build_and_solve(run *R, fp_error *err) {
  fp_ilp_params local = *R->prm;
  if (local.window == FP_ILP_WINDOW_AUTO)
    local.window = fp_graph_node_count(R->g) <= FP_ILP_EXACT_NODES || !R->warm
                       ? FP_ILP_WINDOW_EXACT
                       : FP_ILP_AUTO_WINDOW;
  /* Refused at once: before the cuts, which take a share of the time. */
  ilp_model size;
  int verdict = ilp_size(&size, R->g, &local, R->warm);
  if (verdict != ILP_BUILD_OK) {
    R->M = &size;
    fp_status st = build_failed(R, verdict, err);
    R->M = NULL;
    ilp_free(&size);
    return st;
  }
  ilp_free(&size);
  /* Cluster cuts pay only where traffic counts: in the objective, or
   * under a traffic limit. */
  if (R->prm->objective != FP_OBJECTIVE_PEAK ||
      R->prm->limits.traffic != FP_NO_LIMIT) {
    fp_status st = solver_traffic_cuts(
        R->g, R->prm, CUTS_TIME_SHARE * R->prm->time_limit_s, &R->cuts, err);
    if (st != FP_OK)
      return st;
  }
  R->M = calloc(1, sizeof *R->M);
  if (!R->M)
    return fp_error_set(err, FP_ENOMEM, "out of memory building the model");
  int built = ilp_build(R->M, R->g, &local, R->warm, R->peak_cap,
                        R->prm->limits.traffic, &R->cuts,
                        R->deadline - BUILD_RESERVE * R->prm->time_limit_s);
  R->M->prm = R->prm; /* `local` dies here; the window is already applied */
  if (built != ILP_BUILD_OK)
    return build_failed(R, built, err);
  fp_status st = export_model(R->M, R->prm, err);
  /* No time left for even the root LP: the warm start is the answer. */
  if (st != FP_OK || R->M->infeasible ||
      fp_clock_now() > R->deadline - 0.1 * R->prm->time_limit_s)
    return st;
  R->warm_x = R->warm ? ilp_warm_columns(R->M, R->warm) : NULL;
  report(R, NULL);
  solve_model(R);
  return FP_OK;
}

/* Chooses between the MIP's plan and the warm start. */
static fp_status finish(run *R, fp_plan *out, fp_metrics *m, fp_error *err) {
  fp_plan *p = fp_plan_create();
  fp_metrics pm;
  fp_status st = !p     ? FP_ENOMEM
                 : R->M ? ilp_solution_plan(R->M, R->mip.status, p, &pm, err)
                        : FP_EINFEASIBLE; /* no model was built */
  bool have = st == FP_OK && fp_meets_limits(R->prm, &pm, R->eager_peak);
  if (st != FP_OK && st != FP_EINFEASIBLE)
    goto done;
  st = FP_OK;
  /* The MIP's plan unless the warm start beats it (solver_better: at the
   * same objective, the other figure decides). */
  if (have && (!R->warm || !solver_better(R->prm, &R->warm_m, &pm))) {
    if ((st = fp_plan_copy(out, p, err)) != FP_OK)
      goto done;
    *m = pm;
    record(R, out, m,
           R->mip.status == GLP_OPT && R->M->exact &&
                   (level_gap(R->prm) == 0 || R->mip.proven)
               ? "optimal"
               : "feasible");
  } else if (R->warm) {
    if ((st = fp_plan_copy(out, R->warm, err)) != FP_OK)
      goto done;
    *m = R->warm_m;
    /* The warm start is optimal only when GLPK proved an optimum that it
     * matches; it is "feasible" when GLPK ran and found nothing better. */
    bool proved =
        have && R->mip.status == GLP_OPT && R->M->exact &&
        (level_gap(R->prm) == 0 || R->mip.proven) &&
        fp_objective_value(R->prm, &pm) == fp_objective_value(R->prm, m);
    record(R, out, m,
           proved ? "optimal"
           : R->mip.status == GLP_OPT || R->mip.status == GLP_FEAS
               ? "feasible"
               : "heuristic-fallback");
  } else {
    st = infeasible(R, err);
  }
done:
  fp_plan_destroy(p);
  return st;
}

/* One level of the lexicographic optimum: the integer program for
 * prm->objective alone.  Fails as fp_ilp_solve. */
static fp_status solve_level(const fp_graph *g, const fp_ilp_params *prm,
                             fp_plan *out, fp_metrics *m, fp_error *err) {
  fp_metrics local_m;
  run R;
  memset(&R, 0, sizeof R);
  R.g = g;
  R.prm = prm;
  R.t0 = fp_clock_now();
  R.mip.bound = MIP_BOUND_UNKNOWN;
  fp_status st = fp_ilp_params_check(prm, err);
  if (st == FP_OK)
    st = solver_check_starts(g, prm, err);
  if (st != FP_OK)
    return st;
  R.deadline = R.t0 + prm->time_limit_s;
  if ((st = resolve_limits(&R, err)) != FP_OK)
    goto done;
  if (fp_graph_node_count(g) == 0) { /* nothing to decide */
    if ((st = fp_plan_make_eager(out, g, err)) != FP_OK ||
        (st = fp_plan_eval(g, out, m ? m : &local_m, NULL, err)) != FP_OK)
      goto done;
    if (!fp_meets_limits(prm, m ? m : &local_m, R.eager_peak)) {
      st = infeasible(&R, err);
      goto done;
    }
    record(&R, out, m ? m : &local_m, "optimal");
    goto done;
  }
  if ((st = pick_warm_start(&R, err)) != FP_OK ||
      (st = build_and_solve(&R, err)) != FP_OK)
    goto done;
  st = finish(&R, out, m ? m : &local_m, err);
  if (st == FP_OK)
    st = fp_plan_set_graph_name(out, fp_graph_name(g), err);
done:
  if (R.M)
    ilp_free(R.M);
  free(R.M);
  free(R.warm_x);
  fp_plan_destroy(R.warm);
  solver_cuts_free(&R.cuts);
  return st;
}

/* A solve that ends past this share of its limit stopped on it (GLPK's
 * own limit keeps 5% for the work after it). */
#define ILP_TIMED_OUT_SHARE 0.9

/* Share of the time left that the second level's own bound may take
 * (objective peak: a traffic bound within the peak). */
#define SECOND_BOUND_SHARE 0.1

/* Share of the time limit below which the second level is not started. */
#define SECOND_LEVEL_MIN_SHARE 0.05

/* The second level: with the objective's value *m fixed as a limit
 * (traffic <= it, or peak <= it), the other figure is minimized to within
 * prm->gap2 (GLPK's gap), starting from the first level's plan.  `out`
 * and *m change only to a plan with the same objective that
 * solver_better prefers; the solve is skipped when solver_second_bound
 * already puts the plan within prm->gap2.  How many levels are proven
 * into *levels (1, or 2 when the second solve proved its optimum), the
 * best bound on the other figure into *bound2.  FP_OK, or
 * FP_ENOMEM (an out-of-memory is never taken for "no better plan"); the
 * second solve's other failures only leave one level. */
static fp_status second_level(const fp_graph *g, const fp_ilp_params *prm,
                              double t0, fp_plan *out, fp_metrics *m,
                              int64_t *levels, double *bound2, fp_error *err) {
  double left = prm->time_limit_s - (fp_clock_now() - t0);
  fp_ilp_params q = *prm;
  *levels = 1;
  /* The first level may have spent the whole limit: no time, not less. */
  left = left > 0 ? left : 0;
  /* A bound that already meets the tolerance spares the second solve. */
  fp_status st =
      solver_second_bound(g, prm, m, SECOND_BOUND_SHARE * left, bound2, err);
  double v2 = prm->objective == FP_OBJECTIVE_TRAFFIC ? (double)m->peak_bytes
                                                     : (double)m->traffic_bytes;
  if (st != FP_OK || solver_rel_gap(v2, *bound2) <= prm->gap2)
    return st;
  left = prm->time_limit_s - (fp_clock_now() - t0);
  if (left < SECOND_LEVEL_MIN_SHARE * prm->time_limit_s || m->peak_bytes == 0)
    return FP_OK;
  q.time_limit_s = left;
  q.warm_start = out;
  q.lp_out = q.mps_out = NULL;
  q.gap = prm->gap2;
  q.mip_gap = 0;
  if (prm->objective == FP_OBJECTIVE_TRAFFIC) {
    q.objective = FP_OBJECTIVE_PEAK;
    q.limits.traffic = m->traffic_bytes < prm->limits.traffic
                           ? m->traffic_bytes
                           : prm->limits.traffic;
  } else {
    q.objective = FP_OBJECTIVE_TRAFFIC;
    q.limits.peak = m->peak_bytes; /* > 0: 0 would mean the eager peak */
  }
  fp_plan *p = fp_plan_create();
  fp_metrics pm;
  st = p ? solve_level(g, &q, p, &pm, err) : FP_ENOMEM;
  if (st == FP_OK &&
      fp_objective_value(prm, &pm) == fp_objective_value(prm, m)) {
    double b = fp_plan_solver_const(p)->bound; /* every plan within q's */
    *levels = strcmp(fp_plan_solver_const(p)->status, "optimal") == 0 ? 2 : 1;
    *bound2 = b > *bound2 ? b : *bound2;
    if (solver_better(prm, &pm, m) && (st = fp_plan_copy(out, p, err)) == FP_OK)
      *m = pm;
  }
  fp_plan_destroy(p);
  if (st == FP_ENOMEM)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  return FP_OK;
}

fp_status fp_ilp_solve(const fp_graph *g, const fp_ilp_params *prm,
                       fp_plan *out, fp_metrics *m, fp_error *err) {
  fp_metrics local_m, *mm = m ? m : &local_m;
  double t0 = fp_clock_now();
  if (fp_arg_graph(g, "ilp", err) != FP_OK ||
      fp_arg_ptr(out, "ilp", "the plan", err) != FP_OK)
    return FP_EARG;
  fp_status st = solve_level(g, prm, out, mm, err);
  if (st != FP_OK)
    return st;
  fp_solver_info first = *fp_plan_solver_const(out);
  bool proved = strcmp(first.status, "optimal") == 0;
  double bound2 = NAN;
  first.levels_proven = proved ? 1 : 0;
  /* Within its tolerance the first level is done as well: the second
   * holds its value. */
  if ((proved || first.gap <= prm->gap) &&
      prm->objective != FP_OBJECTIVE_WEIGHTED && prm->levels > 1 &&
      fp_graph_node_count(g) > 0) {
    int64_t levels = 1;
    st = second_level(g, prm, t0, out, mm, &levels, &bound2, err);
    if (st != FP_OK)
      return st;
    first.levels_proven = proved ? levels : 0;
  }
  if (isnan(bound2) && prm->objective != FP_OBJECTIVE_WEIGHTED &&
      (st = solver_second_bound(g, prm, mm, 0, &bound2, err)) != FP_OK)
    return st; /* no second solve: the structural bound */
  first.time_s = fp_clock_now() - t0;
  solver_record_second(prm, &first, mm, bound2);
  solver_stop_reason(prm, &first, prm->cancel && *prm->cancel,
                     first.time_s >= ILP_TIMED_OUT_SHARE * prm->time_limit_s);
  *fp_plan_solver(out) = first; /* the record of the first level */
  return fp_plan_set_graph_name(out, fp_graph_name(g), err);
}
