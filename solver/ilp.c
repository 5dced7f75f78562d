/*
 * ilp.c -- solving the integer program with GLPK: warm start, wall-clock
 * limit, bound and gap, fallback, error-hook recovery (NOTES-GLPK.md).
 *
 * Sequence: resolve the limits; pick the warm start (the best heuristic
 * plan meeting them); build the model (ilp_model.c); run the simplex on
 * the root LP and then branch-and-bound with presolve off (so the warm
 * start can be injected at the first GLP_IHEUR, after checking it against
 * every row ourselves: glp_ios_heur_sol does not); keep the better of the
 * MIP's plan and the warm start.  The objective reported is always the
 * evaluator's figure for the plan returned.
 */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heuristics/heuristics.h"
#include "solver/ilp_internal.h"
#include "solver/solver_internal.h"

void solver_thread_done(void) {
  glp_free_env();
}

int64_t solver_glpk_peak(void) {
  size_t tpeak = 0;
  glp_mem_usage(NULL, NULL, NULL, &tpeak);
  return (int64_t)tpeak;
}

double solver_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
  bool injected;
  double bound; /* best bound seen, model units; -inf unknown */
  int64_t nodes;
  double last_report;
  int glp_status; /* glp_mip_status, or 0 when not run */
  bool glpk_failed;
  solver_cuts cuts; /* cluster bounds: rows of the model, and a bound */
} run;

/* Share of the time limit spent on the cluster cuts (bound.c). */
#define CUTS_TIME_SHARE 0.1

/* ---- warm start -------------------------------------------------------- */

/* Evaluates candidate p; keeps it in *best when it meets the limits and
 * beats what *best holds. */
static void offer(const fp_graph *g, const fp_ilp_params *prm,
                  uint64_t eager_peak, fp_plan *p, fp_plan **best,
                  fp_metrics *best_m) {
  fp_metrics m;
  if (fp_plan_eval_k(g, p, prm->max_fusion_size, &m, NULL, NULL) != FP_OK ||
      !fp_meets_limits(prm, &m, eager_peak))
    return;
  if (*best && fp_objective_value(prm, &m) >= fp_objective_value(prm, best_m))
    return;
  if (!*best && !(*best = fp_plan_create()))
    return;
  if (fp_plan_copy(*best, p, NULL) == FP_OK)
    *best_m = m;
}

fp_plan *solver_best_heuristic(const fp_graph *g, const fp_ilp_params *prm,
                               uint64_t eager_peak, uint64_t peak_cap,
                               fp_metrics *m) {
  fp_plan *p = fp_plan_create(), *best = NULL;
  if (!p)
    return NULL;
  if (prm->warm_start && fp_plan_copy(p, prm->warm_start, NULL) == FP_OK)
    offer(g, prm, eager_peak, p, &best, m);
  for (int k = 0; k < FP_METHOD_COUNT_; k++) {
    fp_fusion_params fp;
    fp_fusion_params_init(&fp, (fp_method)k);
    fp.order = FP_ORDER_BEST;
    fp.max_fusion_size = prm->max_fusion_size;
    fp.peak_limit = peak_cap == FP_NO_LIMIT ? 0 : peak_cap;
    if (fp_fuse(g, &fp, p, NULL) == FP_OK)
      offer(g, prm, eager_peak, p, &best, m);
  }
  fp_plan_destroy(p);
  return best;
}

/* The heuristics (every method, best order) and the caller's plan. */
static fp_status pick_warm_start(run *R, fp_error *err) {
  (void)err;
  R->warm = solver_best_heuristic(R->g, R->prm, R->eager_peak, R->peak_cap,
                                  &R->warm_m);
  return FP_OK;
}

/* ---- the GLPK run ------------------------------------------------------ */

static void report(run *R, glp_tree *T) {
  if (!R->prm->progress)
    return;
  double now = solver_now();
  if (T && now - R->last_report < 0.2)
    return;
  R->last_report = now;
  fp_ilp_progress pr = {now - R->t0, NAN, NAN, NAN, R->nodes, 0, 0};
  glp_prob *lp = T ? glp_ios_get_prob(T) : NULL;
  if (lp && glp_mip_status(lp) == GLP_FEAS)
    pr.incumbent = glp_mip_obj_val(lp) * R->M->scale;
  else if (R->warm)
    pr.incumbent = fp_objective_value(R->prm, &R->warm_m);
  if (isfinite(R->bound))
    pr.bound = R->bound * R->M->scale;
  if (isfinite(pr.incumbent) && isfinite(pr.bound) && pr.incumbent > 0)
    pr.gap = (pr.incumbent - pr.bound) / pr.incumbent;
  R->prm->progress(&pr, R->prm->progress_ctx);
}

/* The branch-and-bound callback: watchdog, warm start, bound, progress. */
static void callback(glp_tree *T, void *info) {
  run *R = info;
  int a, n, t;
  if (solver_now() > R->deadline || (R->prm->cancel && *R->prm->cancel) ||
      (R->prm->node_limit > 0 && R->nodes >= R->prm->node_limit)) {
    glp_ios_terminate(T);
    return;
  }
  switch (glp_ios_reason(T)) {
  case GLP_IHEUR:
    if (!R->injected && R->warm_x) {
      R->injected = true;
      glp_ios_heur_sol(T, R->warm_x);
    }
    break;
  case GLP_ISELECT:
  case GLP_IPREPRO:
  case GLP_IBINGO: {
    int b = glp_ios_best_node(T);
    /* The best active node's bound is the global bound; a node not yet
     * solved reports -DBL_MAX, and the bound never goes down. */
    double nb = b ? glp_ios_node_bound(T, b) : -HUGE_VAL;
    if (nb > -1e300 && nb > R->bound)
      R->bound = nb;
    glp_ios_tree_size(T, &a, &n, &t);
    R->nodes = t;
    report(R, T);
    break;
  }
  default:
    break;
  }
}

/* Milliseconds left, less a 5% reserve for what follows GLPK (reading
 * the solution, evaluating, choosing): the limit is for the whole solve. */
static int remaining_ms(const run *R) {
  double left = R->deadline - solver_now() - 0.05 * R->prm->time_limit_s;
  return left <= 0.001 ? 1 : (int)(left * 1000);
}

/* Root LP, then branch-and-bound; sets R->glp_status. */
static void solve_mip(run *R) {
  glp_smcp sm;
  glp_iocp io;
  glp_prob *lp = R->M->lp;
  glp_init_smcp(&sm);
  sm.msg_lev = GLP_MSG_OFF;
  sm.presolve = GLP_OFF;
  sm.tm_lim = remaining_ms(R);
  /* Byte counts span many orders of magnitude: let GLPK equilibrate rows
   * and columns (results stay in the original units). */
  glp_scale_prob(lp, GLP_SF_AUTO);
  if (R->prm->fault) /* tests: a bad column index makes GLPK fail */
    glp_set_col_bnds(lp, glp_get_num_cols(lp) + 7, GLP_FX, 0, 0);
  if (glp_simplex(lp, &sm) != 0 || glp_get_status(lp) != GLP_OPT) {
    R->glp_status = glp_get_status(lp) == GLP_NOFEAS ? GLP_NOFEAS : GLP_UNDEF;
    return;
  }
  R->bound = glp_get_obj_val(lp);
  glp_init_iocp(&io);
  io.msg_lev = GLP_MSG_OFF;
  io.presolve = GLP_OFF; /* needed to inject the warm start */
  /* Driebeck-Tomlin branching: pseudocost branching (GLP_BR_PCH) solves
   * an LP per fractional column at start-up without calling back or
   * checking the time limit, which broke wall-clock limits by 3-6x. */
  io.br_tech = GLP_BR_DTH;
  io.bt_tech = GLP_BT_BLB;
  /* GLPK's MIR and clique cuts: with the cluster rows, 10 of 16
   * generated 36- and 50-node models proved optimal within 10 s, against
   * 7 without them (Gomory cuts and cover cuts did not help). */
  io.mir_cuts = GLP_ON;
  io.clq_cuts = GLP_ON;
  io.mip_gap = R->prm->mip_gap;
  io.tm_lim = remaining_ms(R);
  io.cb_func = callback;
  io.cb_info = R;
  glp_intopt(lp, &io);
  R->glp_status = glp_mip_status(lp);
}

/* GLPK prints progress and error text to stdout; the library never
 * prints, so all of it is swallowed (a nonzero return consumes it). */
static int silent(void *info, const char *s) {
  (void)info;
  (void)s;
  return 1;
}

static _Thread_local jmp_buf *tl_glpk_jump;
/* Nesting of fp_ilp_solve on this thread (the cluster cuts solve small
 * ILPs inside a solve): only the outermost sets and clears the terminal
 * hook, so an inner solve does not let GLPK print for the outer one. */
static _Thread_local int tl_depth;

static void on_glpk_error(void *info) {
  (void)info;
  longjmp(*tl_glpk_jump, 1);
}

/* Runs GLPK with its error hook armed: a GLPK internal error jumps back
 * here instead of aborting the process.  GLPK's environment is then
 * unusable and is freed, which frees the problem object too. */
static void guarded_solve(run *R) {
  jmp_buf jump;
  tl_glpk_jump = &jump;
  if (setjmp(jump) == 0) {
    glp_error_hook(on_glpk_error, NULL);
    solve_mip(R);
    glp_error_hook(NULL, NULL);
  } else {
    glp_free_env();              /* invalidates every glp_prob of this thread */
    glp_term_hook(silent, NULL); /* the new environment needs it again */
    R->M->lp = NULL;
    R->glpk_failed = true;
    R->glp_status = 0;
  }
  tl_glpk_jump = NULL;
}

/* ---- results ------------------------------------------------------------ */

/* Writes the model files asked for; FP_EIO naming the file. */
static fp_status export_model(const ilp_model *M, const fp_ilp_params *prm,
                              fp_error *err) {
  if (prm->lp_out && glp_write_lp(M->lp, NULL, prm->lp_out) != 0)
    return fp_error_set(err, FP_EIO, "%s: cannot write the LP model",
                        prm->lp_out);
  if (prm->mps_out && glp_write_mps(M->lp, GLP_MPS_FILE, NULL, prm->mps_out))
    return fp_error_set(err, FP_EIO, "%s: cannot write the MPS model",
                        prm->mps_out);
  return FP_OK;
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
  if (R->M && R->M->exact && isfinite(R->bound)) {
    double mip = R->bound * R->M->scale;
    if (R->prm->objective != FP_OBJECTIVE_WEIGHTED) /* whole model units */
      mip = ceil(R->bound - 1e-6 * (1 + fabs(R->bound))) * R->M->scale;
    b = mip > b ? mip : b;
  }
  /* Traffic and peak are sums of byte counts, so multiples of their GCD,
   * the model's scale: a bound rounds up to the next multiple. */
  if (R->M && R->prm->objective != FP_OBJECTIVE_WEIGHTED)
    b = ceil(b / R->M->scale - 1e-9) * R->M->scale;
  return b;
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
  si->time_s = solver_now() - R->t0;
  si->nodes = R->nodes;
  si->rows = R->M && R->M->lp ? glp_get_num_rows(R->M->lp) : -1;
  si->cols = R->M && R->M->lp ? glp_get_num_cols(R->M->lp) : -1;
  si->glpk_peak_bytes = solver_glpk_peak();
}

/* The MIP's plan, if it has one that is legal; checks that the model's
 * objective equals the evaluator's when GLPK proved optimality. */
static fp_status mip_plan(run *R, fp_plan *p, fp_metrics *m, fp_error *err) {
  if (!R->M->lp || (R->glp_status != GLP_OPT && R->glp_status != GLP_FEAS))
    return FP_EINFEASIBLE; /* no MIP solution: not an error */
  fp_status st = ilp_extract(R->M, p, err);
  if (st == FP_OK)
    st = fp_plan_eval_k(R->g, p, R->M->k, m, NULL, err);
  if (st != FP_OK)
    return fp_error_set(err, FP_EINTERNAL,
                        "ilp: model solution is not a legal "
                        "plan: %s",
                        err ? err->msg : "");
  double model = glp_mip_obj_val(R->M->lp) * R->M->scale;
  double truth = fp_objective_value(R->prm, m);
  if (R->glp_status == GLP_OPT &&
      fabs(model - truth) > 1e-6 * (1 + truth) + 0.5)
    return fp_error_set(err, FP_EINTERNAL,
                        "ilp: model objective %.17g disagrees with the "
                        "evaluator's %.17g",
                        model, truth);
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
    fp.max_fusion_size = k;
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
  if (prm->traffic_limit != FP_NO_LIMIT)
    snprintf(traffic, sizeof traffic, ", traffic <= %llu",
             (unsigned long long)prm->traffic_limit);
  return fp_error_set(
      err, FP_EINFEASIBLE,
      "no plan meets the limits (peak <= %llu%s); the lowest "
      "peak known is %llu",
      (unsigned long long)peak_cap, traffic,
      (unsigned long long)known_min_peak(g, prm->max_fusion_size));
}

static fp_status infeasible(const run *R, fp_error *err) {
  return solver_infeasible(R->g, R->prm, R->peak_cap, err);
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

/* Limits in bytes; the eager peak stands for peak_limit 0. */
static fp_status resolve_limits(run *R, fp_error *err) {
  fp_status st = solver_eager_peak(R->g, &R->eager_peak, err);
  R->peak_cap = R->prm->peak_limit == 0 ? R->eager_peak : R->prm->peak_limit;
  return st;
}

/* Builds the model around the warm start, exports it, solves it. */
static fp_status build_and_solve(run *R, fp_error *err) {
  fp_ilp_params local = *R->prm;
  if (local.window == FP_ILP_WINDOW_AUTO)
    local.window = fp_graph_node_count(R->g) <= FP_ILP_EXACT_NODES || !R->warm
                       ? FP_ILP_WINDOW_EXACT
                       : FP_ILP_AUTO_WINDOW;
  /* Cluster cuts pay only where traffic counts: in the objective, or
   * under a traffic limit. */
  if (R->prm->cluster_cuts && (R->prm->objective != FP_OBJECTIVE_PEAK ||
                               R->prm->traffic_limit != FP_NO_LIMIT)) {
    fp_status st = solver_traffic_cuts(
        R->g, R->prm, CUTS_TIME_SHARE * R->prm->time_limit_s, &R->cuts, err);
    if (st != FP_OK)
      return st;
  }
  R->M = calloc(1, sizeof *R->M);
  if (!R->M || ilp_build(R->M, R->g, &local, R->warm, R->peak_cap,
                         R->prm->traffic_limit, &R->cuts) != 0)
    return fp_error_set(err, FP_ENOMEM, "out of memory building the model");
  R->M->prm = R->prm; /* `local` dies here; the window is already applied */
  fp_status st = export_model(R->M, R->prm, err);
  /* No time left for even the root LP: the warm start is the answer. */
  if (st != FP_OK || R->M->infeasible ||
      solver_now() > R->deadline - 0.1 * R->prm->time_limit_s)
    return st;
  int nc = glp_get_num_cols(R->M->lp);
  R->warm_x = R->warm ? malloc(((size_t)nc + 1) * sizeof *R->warm_x) : NULL;
  if (R->warm_x && !(ilp_plan_columns(R->M, R->warm, R->warm_x) &&
                     ilp_check_columns(R->M, R->warm_x))) {
    free(R->warm_x); /* never inject what the rows do not accept */
    R->warm_x = NULL;
  }
  report(R, NULL);
  guarded_solve(R);
  return FP_OK;
}

/* Chooses between the MIP's plan and the warm start. */
static fp_status finish(run *R, fp_plan *out, fp_metrics *m, fp_error *err) {
  fp_plan *p = fp_plan_create();
  fp_metrics pm;
  fp_status st = p ? mip_plan(R, p, &pm, err) : FP_ENOMEM;
  bool have = st == FP_OK && fp_meets_limits(R->prm, &pm, R->eager_peak);
  if (st != FP_OK && st != FP_EINFEASIBLE)
    goto done;
  st = FP_OK;
  if (have && (!R->warm || fp_objective_value(R->prm, &pm) <=
                               fp_objective_value(R->prm, &R->warm_m))) {
    fp_plan_copy(out, p, NULL);
    *m = pm;
    record(R, out, m,
           R->glp_status == GLP_OPT && R->M->exact && R->prm->mip_gap == 0
               ? "optimal"
               : "feasible");
  } else if (R->warm) {
    fp_plan_copy(out, R->warm, NULL);
    *m = R->warm_m;
    /* The warm start is optimal only when GLPK proved an optimum that it
     * matches; it is "feasible" when GLPK ran and found nothing better. */
    bool proved =
        have && R->glp_status == GLP_OPT && R->M->exact &&
        R->prm->mip_gap == 0 &&
        fp_objective_value(R->prm, &pm) == fp_objective_value(R->prm, m);
    record(R, out, m,
           proved ? "optimal"
           : R->glp_status == GLP_OPT || R->glp_status == GLP_FEAS
               ? "feasible"
               : "heuristic-fallback");
  } else {
    st = infeasible(R, err);
  }
done:
  fp_plan_destroy(p);
  return st;
}

fp_status fp_ilp_solve(const fp_graph *g, const fp_ilp_params *prm,
                       fp_plan *out, fp_metrics *m, fp_error *err) {
  fp_metrics local_m;
  run R;
  memset(&R, 0, sizeof R);
  R.g = g;
  R.prm = prm;
  R.t0 = solver_now();
  R.bound = -HUGE_VAL;
  fp_status st = fp_ilp_params_check(prm, err);
  if (st != FP_OK)
    return st;
  R.deadline = R.t0 + prm->time_limit_s;
  if (tl_depth++ == 0) /* the outermost solve of this thread owns it */
    glp_term_hook(silent, NULL);
  if ((st = resolve_limits(&R, err)) != FP_OK)
    goto done;
  if (fp_graph_node_count(g) == 0) { /* nothing to decide */
    fp_plan_make_eager(out, g, NULL);
    fp_plan_eval(g, out, m ? m : &local_m, NULL, NULL);
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
    fp_plan_set_graph_name(out, fp_graph_name(g), NULL);
done:
  if (R.M)
    ilp_free(R.M);
  free(R.M);
  free(R.warm_x);
  fp_plan_destroy(R.warm);
  solver_cuts_free(&R.cuts);
  if (--tl_depth == 0)
    glp_term_hook(NULL, NULL);
  return st;
}
