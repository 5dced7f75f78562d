/*
 * ilp_internal.h -- the integer program's model, shared by ilp_model.c
 * (building it, reading solutions back) and its users, ilp.c (the ILP)
 * and bound.c (the cluster ILPs), which solve it with the MIP core
 * (mip.h).  Only solver/ includes glpk.h.
 *
 * Steps t = 0..T-1.  Per node v a window [lo[v], hi[v]] of steps it may
 * take; the model's binaries are the prefix columns y[v,t] = "v runs at a
 * step <= t" for lo[v] <= t < hi[v] (y is 0 before lo[v], 1 from hi[v]
 * on), so x[v,t] = y[v,t] - y[v,t-1] and precedence is y[v,t] <= y[u,t].
 * Continuous columns: m[b] (b materialized), r[b,j,t] (step t reads b at
 * byte level j), l[b,t] (b live at t), P (peak above the resident inputs).
 * Bytes are divided by `scale` (their GCD) so coefficients stay small.
 */
#ifndef FP_ILP_INTERNAL_H
#define FP_ILP_INTERNAL_H

#include <glpk.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/eval.h"
#include "solver/solver.h"
#include "solver/solver_internal.h"

typedef struct ilp_model {
  const fp_graph *g;
  const fp_ilp_params *prm;
  glp_prob *lp;
  int32_t n, T, k;   /* nodes, steps, max fusion size */
  int32_t *lo, *hi;  /* node windows */
  int *ycol;         /* ycol[v] + (t - lo[v]) = column of y[v,t] */
  int *zcol;         /* zcol[t]: step t used (symmetry breaking) */
  int *mcol;         /* buffer -> column of m[b], 0 when fixed */
  int8_t *mfix;      /* buffer -> -1 free, 0/1 fixed value */
  int pcol;          /* column P (0 when no peak is modelled) */
  bool exact;        /* windows are exact (no warm-start window) */
  bool with_peak;    /* peak rows present */
  double scale;      /* bytes per model unit */
  double obj_const;  /* constant part of the objective, in units */
  uint64_t resident; /* bytes live throughout */
  uint64_t peak_cap; /* peak limit in bytes (FP_NO_LIMIT: none) */
  int *row_target;   /* row -> column a definition row bounds, or 0 */
  int cap_rows;
  bool infeasible; /* a constant row is violated: no plan fits */
  char *names;     /* sanitized node names for row/column names */
  uint64_t *reach; /* descendant bitsets (n x words), or NULL */
  size_t words;
} ilp_model;

/* Builds the model: windows (exact from the graph, narrowed around
 * `warm` when prm->window >= 0), columns, rows, objective, names, and
 * the cluster rows of `cuts` (may be NULL).  0, or -1 when out of
 * memory. */
int ilp_build(ilp_model *M, const fp_graph *g, const fp_ilp_params *prm,
              const fp_plan *warm, uint64_t peak_cap, uint64_t traffic_cap,
              const solver_cuts *cuts);

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

#endif /* FP_ILP_INTERNAL_H */
