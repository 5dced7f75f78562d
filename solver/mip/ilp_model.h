/*
 * ilp_model.h -- the integer program's model (ilp_model.c: building it,
 * reading solutions back), used by ilp.c (the ILP, solver/exact/), by
 * bound.c (the cluster ILPs, solver/bound/), which solve it with the MIP
 * core (mip.h), and by lns.c (its size).  It takes the cluster cuts of
 * bound.c as rows (solver/common/cuts.h) without calling bound.c.  Only
 * solver/ includes glpk.h.
 *
 * Steps t = 0..T-1.  Per node v a window [lo[v], hi[v]] of steps it may
 * take; the model's binaries are the prefix columns y[v,t] = "v runs at a
 * step <= t" for lo[v] <= t < hi[v] (y is 0 before lo[v], 1 from hi[v]
 * on), so x[v,t] = y[v,t] - y[v,t-1] and precedence is y[v,t] <= y[u,t].
 * Continuous columns: m[b] (b materialized), r[b,j,t] (step t reads b at
 * byte level j), l[b,t] (b live at t), P (peak above the resident inputs).
 * Bytes are divided by `scale` (their GCD) so coefficients stay small.
 */
#ifndef FP_ILP_MODEL_H
#define FP_ILP_MODEL_H

#include <glpk.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/eval.h"
#include "solver/common/cuts.h"
#include "solver/solver.h"

typedef struct ilp_model {
  const fp_graph *g;
  const fp_ilp_params *prm;
  glp_prob *lp;
  int32_t n, T, k;  /* nodes, steps, max fusion size */
  int32_t *lo, *hi; /* node windows */
  int *ycol;        /* ycol[v] + (t - lo[v]) = column of y[v,t] */
  int *zcol;        /* zcol[t]: step t used (symmetry breaking) */
  int *mcol;        /* buffer -> column of m[b], 0 when fixed */
  int8_t *mfix;     /* buffer -> -1 free, 0/1 fixed value */
  int pcol;         /* column P (0 when no peak is modelled) */
  int *scol;        /* in-place pair (graph-wide, node order) -> its column s at
                       step lo[v] (then one per step), 0 when none */
  bool exact;       /* windows are exact (no warm-start window) */
  bool with_peak;   /* peak rows present */
  double scale;     /* bytes per model unit */
  double obj_const; /* constant part of the objective, in units */
  uint64_t resident; /* bytes live throughout */
  uint64_t peak_cap; /* peak limit in bytes (FP_NO_LIMIT: none) */
  int *row_target;   /* row -> column a definition row bounds, or 0 */
  int cap_rows;
  bool infeasible; /* a constant row is violated: no plan fits */
  char *names;     /* sanitized node names for row/column names */
  uint64_t *reach; /* descendant bitsets (n x words), or NULL */
  size_t words;
  double deadline; /* fp_clock_now() instant at which building stops */
  bool stopped;    /* building stopped at the deadline or on cancel */
  unsigned ticks;  /* calls since the build last looked at the clock */
  double est_cols, est_rows, est_nnz; /* the size estimate (ilp_build) */
  double est_bytes; /* bytes GLPK would hold for the model, at least */
} ilp_model;

/* What ilp_build returns. */
enum {
  ILP_BUILD_OK = 0,
  ILP_BUILD_NOMEM = -1,   /* out of memory */
  ILP_BUILD_STOPPED = -2, /* the deadline passed or prm->cancel was raised
                             while building: the model is incomplete */
  ILP_BUILD_TOO_BIG = -3, /* refused before building: est_bytes exceeds
                             the memory the process may use */
  ILP_BUILD_GLPK = -4,    /* GLPK failed (its environment was freed) */
  ILP_BUILD_TOO_SLOW = -5 /* refused before building: est_nnz exceeds
                             ILP_MAX_EST_NZ */
};

/* The most nonzeros (as estimated: the model has 3.5 times as many) a
 * model may have.  GLPK's scaling and each call of its simplex run
 * without a callback, for about 2 us per nonzero of the model (measured:
 * 0.56 s for 301,393 nonzeros, 7 s for 2,011,170); under this cap they
 * take well under 0.5 s, so a time limit and a signal are answered on
 * time (README, "Guarantees"). */
#define ILP_MAX_EST_NZ 60000

/* Builds the model: windows (exact from the graph, narrowed around
 * `warm` when prm->window >= 0), columns, rows, objective, names, and
 * the cluster rows of `cuts` (may be NULL).  Before any GLPK call the
 * model's size is estimated (M->est_*) and a model that could not fit in
 * the memory the process may use is refused; building stops at
 * `deadline` (fp_clock_now() units; HUGE_VAL: none) or on *prm->cancel.
 * Every GLPK call runs under mip_guard.  ILP_BUILD_OK, or one of the
 * other ILP_BUILD_* codes; whatever it returns, ilp_free frees M. */
int ilp_build(ilp_model *M, const fp_graph *g, const fp_ilp_params *prm,
              const fp_plan *warm, uint64_t peak_cap, uint64_t traffic_cap,
              const solver_cuts *cuts, double deadline);

/* Only the size estimate of the model ilp_build would build (M->est_*,
 * no GLPK call): ILP_BUILD_OK, ILP_BUILD_TOO_BIG, ILP_BUILD_TOO_SLOW or
 * ILP_BUILD_NOMEM.  For refusing at once, before the work that precedes
 * a build.  ilp_free frees M afterwards. */
int ilp_size(ilp_model *M, const fp_graph *g, const fp_ilp_params *prm,
             const fp_plan *warm);

/* Frees the model and its glp_prob.  Safe on a zeroed model. */
void ilp_free(ilp_model *M);

/* Column values (1-based, length glp_get_num_cols + 1) that represent a
 * legal plan exactly: y, z, and the smallest m, r, l, P its binaries
 * allow.  false when the plan does not fit the windows. */
bool ilp_plan_columns(const ilp_model *M, const fp_plan *p, double *x);

/* True when the column values satisfy every row and bound (and are
 * integral where required), within 1e-9. */
bool ilp_check_columns(const ilp_model *M, const double *x);

/* The plan encoded by a MIP solution (y columns rounded). */
fp_status ilp_extract(const ilp_model *M, fp_plan *out, fp_error *err);

/* The columns of `warm` (malloc'd, 1-based, for mip_params.warm_x) when
 * they satisfy every row and bound; NULL when they do not (never inject
 * what the rows do not accept) or out of memory. */
double *ilp_warm_columns(const ilp_model *M, const fp_plan *warm);

/* The MIP's plan into p and its evaluator metrics into *m, after a run
 * that ended with glp_mip_status `glp_status`.  FP_EINFEASIBLE (not an
 * error, err untouched) when there is no MIP solution (no GLP_OPT or
 * GLP_FEAS, or M->lp freed); FP_EINTERNAL when the solution is not a
 * legal plan, or when GLPK proved it optimal but the model's objective
 * disagrees with the evaluator's (a model bug). */
fp_status ilp_solution_plan(const ilp_model *M, int glp_status, fp_plan *p,
                            fp_metrics *m, fp_error *err);

/* A lower bound valid for every plan, in objective units: the larger of
 * b (one the caller knows, e.g. structural) and the MIP's bound
 * `mip_bound` (model units; used only when the model is exact, and
 * ignored when not finite).  For traffic and peak, whose values are whole
 * bytes, the MIP's bound rounds up to whole model units (with slack for
 * floating-point noise in the LP bound) and the result to a multiple of
 * the scale. */
double ilp_bound_value(const ilp_model *M, double mip_bound, double b);

#endif /* FP_ILP_MODEL_H */
