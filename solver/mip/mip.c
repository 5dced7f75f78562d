/*
 * mip.c -- the MIP core (mip.h): one GLPK run with its error hook armed
 * and its terminal output swallowed (docs/solver.md, "Errors and
 * output").
 *
 * Sequence: scale the problem; simplex on the root LP; when it is
 * optimal, branch-and-bound with presolve off, during which the callback
 * is the watchdog (deadline, cancel, node limit), injects the warm start
 * at the first GLP_IHEUR, tracks the bound and reports progress.  A GLPK
 * internal error longjmps back to mip_solve, which frees the thread's
 * GLPK environment instead of letting GLPK abort the process.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>

#include "model/util.h"
#include "solver/common/solver_test.h"
#include "solver/mip/mip.h"

/* Integrality tolerance of branch-and-bound (see solve_mip). */
#define MIP_TOL_INT 1e-9

/* How GLPK's integer solution is checked before it is used: rows to 1e-7
 * of their terms' magnitude, integrality to 1e-6 (GLPK works to
 * MIP_TOL_INT).  Why: on ill-conditioned models (byte coefficients
 * spanning 1e6) GLPK 5.0 has reported GLP_OPT for a point that violates
 * rows of the original model, with an objective below its own bound --
 * seen on a window of a real backward graph. */
#define MIP_TOL_ROW 1e-7
#define MIP_TOL_CHECK_INT 1e-6

/* Longest slice of the root LP between two looks at the cancel flag: a
 * signal is answered within 1 s (README, "Guarantees"). */
#define MIP_LP_SLICE_MS 200

/* Tests only (solver_test.h): every run on this thread fails in GLPK. */
static _Thread_local int tl_fault;

void solver_test_inject_fault(int on) {
  tl_fault = on;
}

void mip_params_init(mip_params *mp) {
  mp->deadline = MIP_DEFAULT_DEADLINE;
  mp->reserve_s = MIP_DEFAULT_RESERVE;
  mp->cancel = NULL;
  mp->node_limit = MIP_DEFAULT_NODE_LIMIT;
  mp->mip_gap = MIP_DEFAULT_GAP;
  mp->warm_x = NULL;
  mp->progress = NULL;
  mp->progress_ctx = NULL;
}

/* One run: its parameters, its result, and whether the warm start went
 * in already. */
typedef struct mip_run {
  const mip_params *mp;
  mip_result *res;
  bool injected;
} mip_run;

/* Progress from inside branch-and-bound: the bound, GLPK's incumbent. */
static void report(const mip_run *R, glp_tree *T) {
  glp_prob *lp = glp_ios_get_prob(T);
  mip_progress pr = {R->res->bound, NAN, R->res->nodes};
  if (glp_mip_status(lp) == GLP_FEAS)
    pr.incumbent = glp_mip_obj_val(lp);
  R->mp->progress(&pr, R->mp->progress_ctx);
}

/* Whether the run must stop now: past the deadline, or cancelled. */
static bool must_stop(const mip_params *mp) {
  return fp_clock_now() > mp->deadline || (mp->cancel && *mp->cancel);
}

/* The branch-and-bound callback: watchdog, warm start, bound, progress. */
static void callback(glp_tree *T, void *info) {
  mip_run *R = info;
  const mip_params *mp = R->mp;
  int a, n, t;
  if (must_stop(mp) ||
      (mp->node_limit > 0 && R->res->nodes >= mp->node_limit)) {
    glp_ios_terminate(T);
    return;
  }
  switch (glp_ios_reason(T)) {
  case GLP_IHEUR:
    if (!R->injected && mp->warm_x) {
      R->injected = true;
      glp_ios_heur_sol(T, mp->warm_x);
    }
    break;
  case GLP_ISELECT:
  case GLP_IPREPRO:
  case GLP_IBINGO: {
    int b = glp_ios_best_node(T);
    /* The best active node's bound is the global bound; a node not yet
     * solved reports -DBL_MAX, and the bound never goes down. */
    double nb = b ? glp_ios_node_bound(T, b) : -HUGE_VAL;
    if (nb > -1e300 && nb > R->res->bound)
      R->res->bound = nb;
    glp_ios_tree_size(T, &a, &n, &t);
    R->res->nodes = t;
    if (mp->progress)
      report(R, T);
    break;
  }
  default:
    break;
  }
}

/* Milliseconds to the deadline less the reserve, at least 1. */
static int remaining_ms(const mip_params *mp) {
  double left = mp->deadline - fp_clock_now() - mp->reserve_s;
  if (!(left < INT_MAX / 1000.0)) /* no deadline */
    return INT_MAX;
  return left <= 0.001 ? 1 : (int)(left * 1000);
}

/* The root LP in slices of at most MIP_LP_SLICE_MS: glp_simplex has no
 * callback, so the cancel flag is looked at between slices (each resumes
 * from the basis the last one left).  GLPK's return code of the last
 * slice. */
static int root_lp(glp_prob *lp, const mip_params *mp) {
  glp_smcp sm;
  glp_init_smcp(&sm);
  sm.msg_lev = GLP_MSG_OFF;
  sm.presolve = GLP_OFF;
  int ret;
  do {
    int left = remaining_ms(mp);
    sm.tm_lim = left < MIP_LP_SLICE_MS ? left : MIP_LP_SLICE_MS;
    ret = glp_simplex(lp, &sm);
  } while (ret == GLP_ETMLIM && remaining_ms(mp) > 1 && !must_stop(mp));
  return ret;
}

/* Whether x is within [lo, up] as GLPK's column or row type reads them,
 * to eps. */
static bool in_range(int type, double lo, double up, double x, double eps) {
  if ((type == GLP_LO || type == GLP_DB || type == GLP_FX) && x < lo - eps)
    return false;
  return !((type == GLP_UP || type == GLP_DB || type == GLP_FX) &&
           x > up + eps);
}

bool mip_point_feasible(glp_prob *lp, const double *x, double tol,
                        double tol_int) {
  int nc = glp_get_num_cols(lp), nr = glp_get_num_rows(lp);
  int *ind = malloc(((size_t)nc + 1) * sizeof *ind);
  double *val = malloc(((size_t)nc + 1) * sizeof *val);
  double *mine = x ? NULL : malloc(((size_t)nc + 1) * sizeof *mine);
  bool ok = ind && val && (x || mine);
  double col_tol = tol > tol_int ? tol : tol_int;
  for (int c = 1; ok && !x && c <= nc; c++)
    mine[c] = glp_mip_col_val(lp, c);
  const double *v = x ? x : mine;
  for (int c = 1; ok && c <= nc; c++) {
    ok = in_range(glp_get_col_type(lp, c), glp_get_col_lb(lp, c),
                  glp_get_col_ub(lp, c), v[c], col_tol * (1 + fabs(v[c])));
    if (ok && glp_get_col_kind(lp, c) != GLP_CV)
      ok = tol_int == 0 ? v[c] == floor(v[c])
                        : fabs(v[c] - floor(v[c] + 0.5)) <= tol_int;
  }
  for (int r = 1; ok && r <= nr; r++) {
    int len = glp_get_mat_row(lp, r, ind, val);
    double act = 0, mag = 0;
    for (int i = 1; i <= len; i++) {
      double term = val[i] * v[ind[i]];
      act += term;
      mag += fabs(term);
    }
    ok = in_range(glp_get_row_type(lp, r), glp_get_row_lb(lp, r),
                  glp_get_row_ub(lp, r), act, tol * (1 + mag));
  }
  free(ind);
  free(val);
  free(mine);
  return ok;
}

/* Root LP, then branch-and-bound; sets R->res->status. */
static void solve(glp_prob *lp, mip_run *R) {
  glp_iocp io;
  /* Byte counts span many orders of magnitude: let GLPK equilibrate rows
   * and columns (results stay in the original units). */
  glp_scale_prob(lp, GLP_SF_AUTO);
  if (tl_fault) /* tests: a bad column index makes GLPK fail */
    glp_set_col_bnds(lp, glp_get_num_cols(lp) + 7, GLP_FX, 0, 0);
  if (root_lp(lp, R->mp) != 0 || glp_get_status(lp) != GLP_OPT) {
    R->res->status = glp_get_status(lp) == GLP_NOFEAS ? GLP_NOFEAS : GLP_UNDEF;
    return;
  }
  R->res->bound = glp_get_obj_val(lp);
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
  io.mip_gap = R->mp->mip_gap;
  /* Binaries count as integral within tol_int, and the continuous columns
   * follow them: with GLPK's default (1e-5) a y column at 0.999995 times a
   * 300 MB coefficient moved the peak objective by kilobytes, and the
   * model's optimum disagreed with the evaluator on real graphs
   * (tests/solver/test_ilp_windows.c).  Byte coefficients reach 1e8
   * model units, so integrality is asked to 1e-9. */
  io.tol_int = MIP_TOL_INT;
  io.tm_lim = remaining_ms(R->mp);
  io.cb_func = callback;
  io.cb_info = R;
  double root_bound = R->res->bound;
  int rc = glp_intopt(lp, &io);
  R->res->status = glp_mip_status(lp);
  R->res->proven = rc == 0 && R->res->status == GLP_OPT;
  if (rc == GLP_EMIPGAP && R->res->status == GLP_OPT) {
    /* Stopped at mip_gap: GLPK's test is |incumbent - bound| <= mip_gap *
     * (|incumbent| + DBL_EPSILON), so its bound is at least this. */
    double inc = glp_mip_obj_val(lp);
    double b = inc - io.mip_gap * (fabs(inc) + DBL_EPSILON);
    R->res->bound = b > R->res->bound ? b : R->res->bound;
  }
  if ((R->res->status == GLP_OPT || R->res->status == GLP_FEAS) &&
      !mip_point_feasible(lp, NULL, MIP_TOL_ROW, MIP_TOL_CHECK_INT)) {
    /* A wrong incumbent pruned the tree: neither it nor the node bounds
     * seen since can be trusted; the root LP's bound still holds. */
    R->res->status = GLP_UNDEF;
    R->res->bound = root_bound;
    R->res->rejected = true;
    R->res->proven = false;
  }
}

/* GLPK prints progress and error text to stdout; the library never
 * prints, so all of it is swallowed (a nonzero return consumes it). */
static int silent(void *info, const char *s) {
  (void)info;
  (void)s;
  return 1;
}

void mip_quiet(bool on) {
  glp_term_hook(on ? silent : NULL, NULL);
}

static _Thread_local jmp_buf *tl_glpk_jump;

static void on_glpk_error(void *info) {
  (void)info;
  longjmp(*tl_glpk_jump, 1);
}

int mip_guard(void (*fn)(void *ctx), void *ctx) {
  jmp_buf jump;
  volatile int rc = 0;
  tl_glpk_jump = &jump;
  if (setjmp(jump) == 0) {
    glp_error_hook(on_glpk_error, NULL);
    fn(ctx);
    glp_error_hook(NULL, NULL);
  } else {
    glp_free_env(); /* invalidates every glp_prob of this thread */
    rc = -1;
  }
  tl_glpk_jump = NULL;
  return rc;
}

/* One solve, as mip_guard runs it. */
typedef struct solve_ctx {
  glp_prob *lp;
  mip_run *R;
} solve_ctx;

static void guarded_solve(void *ctx) {
  solve_ctx *c = ctx;
  solve(c->lp, c->R);
}

/* The terminal hook is set here and cleared at the end: the callers
 * never nest runs, so no outer run loses its silence. */
void mip_solve(glp_prob **lp, const mip_params *mp, mip_result *res) {
  mip_run R = {mp, res, false};
  solve_ctx c = {*lp, &R};
  res->status = 0;
  res->bound = MIP_BOUND_UNKNOWN;
  res->nodes = 0;
  res->proven = false;
  res->glpk_failed = false;
  res->rejected = false;
  mip_quiet(true);
  if (mip_guard(guarded_solve, &c) != 0) {
    *lp = NULL; /* freed with the environment */
    res->glpk_failed = true;
    res->status = 0;
  }
  mip_quiet(false);
}
