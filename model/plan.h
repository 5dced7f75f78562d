/*
 * plan.h -- a fusion + execution-order plan: an ordered list of groups of
 * node indices, plus the metrics and solver record written with it.
 *
 * A plan is only a container: it may hold an illegal grouping (a node twice,
 * a node missing, an illegal fusion); fp_plan_check() in eval.h says whether
 * it is legal for a given graph.  Groups are stored as CSR arrays, so a plan
 * of a million nodes is two allocations.
 */
#ifndef FP_PLAN_H
#define FP_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "status.h"

typedef struct fp_plan fp_plan;

/* What produced a plan (written as the plan file's "solver" object).
 * Unset numbers are NaN / -1 and are not written. */
typedef struct fp_solver_info {
  char method[32];  /* "eager", "greedy", "ilp", ... ("" = unset) */
  char status[32];  /* "optimal", "feasible", "heuristic", ... */
  double objective; /* NaN when unset */
  double bound;     /* NaN when unset */
  double gap;       /* NaN when unset */
  double time_s;    /* NaN when unset */
  int64_t nodes;    /* branch-and-bound nodes, -1 when unset */
  int64_t rows, cols;
  int64_t glpk_peak_bytes; /* most bytes GLPK's heap held, -1 when unset */
  int64_t levels_proven;   /* of the lexicographic optimum (the objective,
                              then the other figure): 0, 1 or 2; -1 unset */
  /* The second level (the other figure among the answers of the first:
   * peak for objective traffic, traffic for objective peak): its value,
   * a lower bound on it and their relative gap; NaN when unset. */
  double objective2, bound2, gap2;
  char stop_reason[16]; /* why the solve stopped: "proven", "gap",
                           "time-limit", "interrupted", "stalled"
                           ("" = unset) */
} fp_solver_info;

/* What a plan file states about itself in "metrics", so that `verify`
 * can hold outside tools to the evaluator's figures.  NaN = absent.
 * Doubles, because that is what JSON numbers are once parsed: exact below
 * 2^53; above it a sum can only be compared after the same rounding. */
typedef struct fp_plan_claims {
  double traffic_bytes, peak_bytes, kernels;
} fp_plan_claims;

/* Fills `info` with "unset" values. */
void fp_solver_info_init(fp_solver_info *info);

/* Creates an empty plan (no groups).  NULL when out of memory. */
fp_plan *fp_plan_create(void);

/* Frees the plan.  NULL is a no-op. */
void fp_plan_destroy(fp_plan *p);

/* Appends a group of `n` node indices (copied).  n may be 0 (an empty group
 * is representable, and illegal).  FP_EARG for a NULL plan, n < 0, nodes
 * NULL with n > 0, or an index outside 0 .. FP_MAX_ITEMS - 1 (the plan
 * does not know its graph: indices past the graph's nodes are refused by
 * fp_plan_check, fp_plan_eval and the writers of json.h); FP_ENOMEM, or
 * FP_ELIMIT past FP_MAX_ITEMS entries. */
fp_status fp_plan_add_group(fp_plan *p, const int32_t *nodes, int32_t n,
                            fp_error *err);

/* Appends node v to the last group (opening one if there is none).
 * FP_EARG as fp_plan_add_group, FP_ENOMEM. */
fp_status fp_plan_append_node(fp_plan *p, int32_t v, fp_error *err);

/* Starts a new, empty group at the end. */
fp_status fp_plan_open_group(fp_plan *p, fp_error *err);

/* Removes all groups (keeps capacity and the solver record). */
void fp_plan_clear(fp_plan *p);

/* Makes `dst` an exact copy of `src` (groups, graph name, solver record). */
fp_status fp_plan_copy(fp_plan *dst, const fp_plan *src, fp_error *err);

int32_t fp_plan_group_count(const fp_plan *p);
/* Total node entries over all groups (counts repeats). */
int32_t fp_plan_entry_count(const fp_plan *p);
/* The nodes of group i and, in *n, how many (n may be NULL).  NULL with
 * *n = 0 for a NULL plan or i out of range.  The other accessors answer
 * NULL or 0 for a NULL plan. */
const int32_t *fp_plan_group(const fp_plan *p, int32_t i, int32_t *n);

/* The graph name recorded in the plan file ("" when unset). */
const char *fp_plan_graph_name(const fp_plan *p);
fp_status fp_plan_set_graph_name(fp_plan *p, const char *name, fp_error *err);

fp_solver_info *fp_plan_solver(fp_plan *p);
const fp_solver_info *fp_plan_solver_const(const fp_plan *p);

/* The claims read from the plan file (all NaN for plans built here). */
const fp_plan_claims *fp_plan_claims_get(const fp_plan *p);
void fp_plan_claims_set(fp_plan *p, const fp_plan_claims *c);

/* Builds the eager plan of `g` (every node alone, listed order) into p,
 * replacing its groups.  Sets solver.method = "eager".  FP_EARG for a NULL
 * plan or a graph that is NULL or not finalized; FP_ENOMEM. */
fp_status fp_plan_make_eager(fp_plan *p, const fp_graph *g, fp_error *err);

#endif /* FP_PLAN_H */
