/*
 * forced.c -- the second level's bound from traffic optimality
 * (forced.h; docs/solver.md, "The second level's bound").
 *
 * Why: the peak bound of peak_bound.c holds for every plan, and its
 * rule at a node x places the other nodes as cheaply as any order
 * allows, one node x at a time.  The second level only asks about the
 * plans of least traffic, and those may have to group nodes: on
 * resnet50.fwd, a reduction and a pointwise node that read the same
 * 12.8 MB activation are grouped by every plan of least traffic (apart,
 * the least traffic rises by 25.7 MB), and the min cut with both in
 * one group reaches the best peak found, where the rule at either node
 * alone stays 0.0097% under it.
 *
 * A pair (u, v) is *forced* when the traffic bound of the graph with
 * (u, v) declared unfusible, within the peak limit, exceeds the least
 * traffic: no plan of least traffic keeps them apart.  When every
 * member of a group G of the plan in hand is forced together with its
 * first member, every plan of least traffic runs G in one group, and the
 * min cut at G (fp_peak_group_bounds) bounds its peak.
 *
 * Calls: peak_bound.c, bound.c (fp_lower_bound), graph.c, plan.c.
 */
#include "solver/bound/forced.h"

#include <math.h>
#include <stdlib.h>

#include "model/peak_bound.h"
#include "model/plan.h"
#include "model/util.h"

/* Groups whose pairs are tested per call, at most: each test is one
 * traffic bound of the whole graph (about 0.1 s on the corpus). */
#define FORCED_MAX_GROUPS 8

/* A group of the plan and its figure, for ordering. */
typedef struct group_fig {
  uint64_t fig;
  int32_t group;
} group_fig;

/* Descending figure, then ascending group: deterministic. */
static int cmp_fig(const void *a, const void *b) {
  const group_fig *x = a, *y = b;
  if (x->fig != y->fig)
    return x->fig > y->fig ? -1 : 1;
  return (x->group > y->group) - (x->group < y->group);
}

/* The plan's groups as CSR arrays, into *nodes and *start (caller frees
 * both).  0, or -1 out of memory. */
static int plan_csr(const fp_plan *plan, int32_t **nodes, int32_t **start) {
  int32_t ng = fp_plan_group_count(plan), at = 0;
  *nodes = malloc(((size_t)fp_plan_entry_count(plan) + 1) * sizeof **nodes);
  *start = malloc(((size_t)ng + 1) * sizeof **start);
  if (!*nodes || !*start)
    return -1;
  for (int32_t i = 0; i < ng; i++) {
    int32_t m;
    const int32_t *grp = fp_plan_group(plan, i, &m);
    (*start)[i] = at;
    for (int32_t j = 0; j < m; j++)
      (*nodes)[at++] = grp[j];
  }
  (*start)[ng] = at;
  return 0;
}

/* Sets *forced: whether the traffic bound of g with (u, v) unfusible,
 * within prm's limits, in time_s seconds, exceeds `traffic`.
 * FP_ENOMEM or a graph-building error. */
static fp_status pair_forced(const fp_graph *g, const fp_ilp_params *prm,
                             int32_t u, int32_t v, uint64_t traffic,
                             double time_s, bool *forced, fp_error *err) {
  *forced = false;
  fp_graph *c = fp_graph_copy_open(g, err);
  fp_status st = c ? fp_graph_add_unfusible(c, u, v, err) : FP_ENOMEM;
  if (st == FP_OK)
    st = fp_graph_finalize(c, err);
  double b = 0;
  if (st == FP_OK)
    st = fp_lower_bound(c, prm, time_s, &b, err);
  *forced = st == FP_OK && b > (double)traffic;
  fp_graph_destroy(c);
  return st;
}

/* Sets *all: whether every member of grp (m nodes) is forced together
 * with grp[0], testing until the deadline.  FP_ENOMEM or a
 * graph-building error. */
static fp_status group_forced(const fp_graph *g, const fp_ilp_params *prm,
                              const int32_t *grp, int32_t m, uint64_t traffic,
                              double deadline, bool *all, fp_error *err) {
  fp_status st = FP_OK;
  *all = true;
  for (int32_t j = 1; st == FP_OK && *all && j < m; j++) {
    double left = deadline - fp_clock_now();
    if (left <= 0) {
      *all = false;
      break;
    }
    st = pair_forced(g, prm, grp[0], grp[j], traffic, left / (m - j), all, err);
  }
  return st;
}

fp_status solver_forced_peak_bound(const fp_graph *g, const fp_ilp_params *prm,
                                   const fp_plan *plan, const fp_metrics *m,
                                   double time_s, double *bound2,
                                   fp_error *err) {
  if (prm->objective != FP_OBJECTIVE_TRAFFIC || time_s <= 0 ||
      (!isnan(*bound2) && *bound2 >= (double)m->peak_bytes))
    return FP_OK;
  double deadline = fp_clock_now() + time_s;
  int32_t ng = fp_plan_group_count(plan), *nodes = NULL, *start = NULL;
  uint64_t *fig = malloc(((size_t)ng + 1) * sizeof *fig);
  group_fig *order = malloc(((size_t)ng + 1) * sizeof *order);
  fp_status st = FP_OK;
  if (!fig || !order || plan_csr(plan, &nodes, &start) != 0) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory (forced groups)");
    goto done;
  }
  st = fp_peak_group_bounds(g, prm->limits.max_fusion_size, nodes, start, ng,
                            fig, err);
  for (int32_t i = 0; i < ng; i++)
    order[i] = (group_fig){fig[i], i};
  qsort(order, (size_t)ng, sizeof *order, cmp_fig);
  /* The best group first: the first one proven forced is the bound. */
  for (int32_t i = 0, tried = 0;
       st == FP_OK && i < ng && tried < FORCED_MAX_GROUPS &&
       fp_clock_now() < deadline;
       i++) {
    int32_t k = order[i].group, mm = start[k + 1] - start[k];
    if (!isnan(*bound2) && (double)order[i].fig <= *bound2)
      break; /* sorted: nothing further can raise it */
    if (mm < 2)
      continue; /* a single node: the peak bound's own rule */
    bool all = false;
    tried++;
    st = group_forced(g, prm, nodes + start[k], mm, m->traffic_bytes, deadline,
                      &all, err);
    if (st == FP_OK && all) {
      *bound2 = (double)order[i].fig;
      break;
    }
  }
done:
  free(fig);
  free(order);
  free(nodes);
  free(start);
  return st;
}
