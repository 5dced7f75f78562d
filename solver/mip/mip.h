/*
 * mip.h -- the MIP core: one GLPK run on a model the caller built (root
 * LP, then branch-and-bound), shared by the ILP (ilp.c) and the cluster
 * bounds (bound.c).  Internal to solver/; only solver/ includes glpk.h.
 *
 * The core knows nothing about plans or graphs: it takes a glp_prob and
 * mip_params (limits, warm start, progress) and returns a mip_result
 * (GLPK's status, the bound, the nodes, whether GLPK failed).  It keeps
 * GLPK silent while it runs and survives GLPK's internal errors
 * (docs/solver.md, "Errors and output").
 */
#ifndef FP_MIP_H
#define FP_MIP_H

#include <glpk.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* What the progress callback gets: model units, as GLPK sees them. */
typedef struct mip_progress {
  double bound;     /* best bound so far; MIP_BOUND_UNKNOWN when none */
  double incumbent; /* GLPK's best integer solution's objective; NAN none */
  int64_t nodes;    /* branch-and-bound nodes so far */
} mip_progress;

#define MIP_BOUND_UNKNOWN (-HUGE_VAL)

/* Defaults of mip_params (mip_params_init). */
#define MIP_DEFAULT_DEADLINE HUGE_VAL /* no wall-clock limit */
#define MIP_DEFAULT_RESERVE 0.0
#define MIP_DEFAULT_NODE_LIMIT 0 /* no node limit */
#define MIP_DEFAULT_GAP 0.0

/* Parameters, in the manner of glp_iocp: mip_params_init, then edit. */
typedef struct mip_params {
  double deadline;  /* fp_clock_now() instant after which the search stops
                       (the callback terminates it) */
  double reserve_s; /* GLPK's own time limits (tm_lim) end this many
                       seconds before the deadline, leaving time for what
                       the caller does afterwards */
  const volatile sig_atomic_t *cancel; /* optional: stop once *cancel != 0 */
  int64_t node_limit;   /* > 0: stop after this many branch-and-bound nodes */
  double mip_gap;       /* relative gap at which GLPK stops (io.mip_gap) */
  const double *warm_x; /* optional: column values (1-based, one per
                           column) of an integer solution that satisfies
                           every row and bound, offered to GLPK once at
                           the first GLP_IHEUR (GLPK does not check it) */
  void (*progress)(const mip_progress *pr, void *ctx); /* optional: called
                           at every node selection, preprocessing and new
                           incumbent; the caller throttles it */
  void *progress_ctx;
} mip_params;

/* What a run found. */
typedef struct mip_result {
  int status;       /* glp_mip_status after branch-and-bound; GLP_NOFEAS
                       or GLP_UNDEF when the root LP found no optimum;
                       0 when GLPK failed */
  double bound;     /* best bound seen, model units: the root LP's, then
                       the best active node's (never decreasing);
                       MIP_BOUND_UNKNOWN before the root LP is solved */
  int64_t nodes;    /* branch-and-bound nodes (the tree's total) */
  bool glpk_failed; /* GLPK hit an internal error; see mip_solve */
  bool rejected;    /* GLPK's integer solution broke a row or bound of the
                       model (numerical trouble): status was set to
                       GLP_UNDEF and bound back to the root LP's */
  bool proven;      /* branch-and-bound ended with its tree explored (not at
                       mip_gap, a limit or a stop): the incumbent is the
                       model's optimum */
} mip_result;

/* Fills `mp` with the defaults above (no limits, no warm start). */
void mip_params_init(mip_params *mp);

/* Solves *lp: scales it, runs the simplex on the root LP (presolve off)
 * and, when that is optimal, branch-and-bound with presolve off (so the
 * warm start can be injected), Driebeck-Tomlin branching, best-local-bound
 * backtracking, MIR and clique cuts and mp->mip_gap, stopping at the
 * deadline, on *mp->cancel or at the node limit.  The solution stays in
 * *lp (glp_mip_col_val and friends); an integer solution that breaks a
 * row or bound of *lp is refused (res->rejected).  GLPK prints nothing
 * while it runs.
 * Never fails as a function: when GLPK hits an internal error, its
 * environment of the calling thread is freed (which frees *lp and every
 * other GLPK object of the thread), *lp is set to NULL, res->status to 0
 * and res->glpk_failed to true; res->bound and res->nodes keep what was
 * seen before the error. */
void mip_solve(glp_prob **lp, const mip_params *mp, mip_result *res);

/* Whether the point x (1-based column values; NULL: GLPK's integer
 * solution in lp) meets every column bound and row of lp, each row
 * recomputed from the columns: within tol of the magnitude of its terms
 * (columns within max(tol, tol_int) of theirs), integer columns within
 * tol_int of an integer (tol_int 0: exactly integral, as
 * glp_ios_heur_sol wants).  False also when out of memory, which makes
 * callers fall back to a plan they already trust. */
bool mip_point_feasible(glp_prob *lp, const double *x, double tol,
                        double tol_int);

/* Runs fn(ctx) with GLPK's error hook armed: a GLPK internal error or
 * bad argument inside fn jumps back here instead of aborting the process
 * (docs/glpk.md, "Errors").  Returns 0 when fn returned, -1 when GLPK
 * failed: the calling thread's GLPK environment was then freed, with
 * every glp_prob of the thread, and fn's own allocations since its last
 * GLPK call may be lost.  Guards do not nest. */
int mip_guard(void (*fn)(void *ctx), void *ctx);

/* on: GLPK's terminal output on the calling thread is swallowed (the
 * library never prints); off: back to GLPK's default.  For GLPK calls
 * outside mip_solve that print (glp_write_lp, glp_write_mps). */
void mip_quiet(bool on);

#endif /* FP_MIP_H */
