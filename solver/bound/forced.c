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
 * Ties (below) carry the same test into the min cut at a single node:
 * the pairs the cut splits that every plan of least traffic groups are
 * kept together (fp_peak_cuts_tied).
 *
 * Calls: peak_bound.c, bound.c (fp_lower_bound), services.c
 * (solver_rel_gap), graph.c, plan.c.
 */
#include "solver/bound/forced.h"

#include <math.h>
#include <stdlib.h>

#include "model/eval.h"
#include "model/peak_bound.h"
#include "model/plan.h"
#include "model/util.h"
#include "solver/bound/peak_order.h"
#include "solver/common/services.h"

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

/* ---- ties: pairs of nodes every plan of least traffic groups ------------
 *
 * The min cut at a node x places the other nodes before or after x's step
 * as cheaply as it likes, and may split a group of the plan in hand:
 * volo_d1_224.bwd's cut at op4 runs the softmax-backward op28 early (it
 * frees two 3 KB inputs and writes its output in place of the third)
 * while its group partner op37 stays late.  When the pair is forced (a
 * plan that keeps them apart moves more), every plan of least traffic
 * runs them at one step, so the cut may not split them
 * (fp_peak_cuts_tied): the search tests the pairs the cut splits, nearest
 * x's step first, ties the forced ones, and cuts again. */

/* Nodes whose cuts the search raises (the highest figures first), and
 * pair tests per call, at most. */
#define TIE_NODES 4
#define TIE_TESTS 16

typedef struct tie_search {
  const fp_graph *g;
  const fp_ilp_params *prm;
  const fp_plan *plan;
  uint64_t traffic;
  double deadline;
  fp_peak_cuts *h;
  int32_t *step;            /* node -> its step in the plan */
  int8_t *side;             /* the last cut's placement */
  fp_peak_tie *tie, *tried; /* forced pairs; every pair tested */
  int32_t n_tie, n_tried;
  bool cuts; /* some cut says more than the resident bytes */
} tie_search;

static void tie_free(tie_search *T) {
  fp_peak_cuts_destroy(T->h);
  free(T->step);
  free(T->side);
  free(T->tie);
  free(T->tried);
}

/* Sets up T for the plan.  FP_ENOMEM. */
static fp_status tie_init(tie_search *T, fp_error *err) {
  int32_t n = fp_graph_node_count(T->g), ng = fp_plan_group_count(T->plan);
  fp_status st =
      fp_peak_cuts_create(T->g, T->prm->limits.max_fusion_size, &T->h, err);
  T->step = malloc(((size_t)n + 1) * sizeof *T->step);
  T->side = malloc((size_t)n + 1);
  T->tie = malloc((TIE_TESTS + 1) * sizeof *T->tie);
  T->tried = malloc((TIE_TESTS + 1) * sizeof *T->tried);
  if (st == FP_OK && (!T->step || !T->side || !T->tie || !T->tried))
    st = fp_error_set(err, FP_ENOMEM, "out of memory (ties)");
  for (int32_t t = 0; st == FP_OK && t < ng; t++) {
    int32_t m;
    const int32_t *grp = fp_plan_group(T->plan, t, &m);
    for (int32_t j = 0; j < m; j++)
      T->step[grp[j]] = t;
  }
  return st;
}

/* Whether pair pr was tested already. */
static bool tried(const tie_search *T, fp_peak_tie pr) {
  for (int32_t i = 0; i < T->n_tried; i++)
    if (T->tried[i].u == pr.u && T->tried[i].v == pr.v)
      return true;
  return false;
}

/* Tests pair pr (untested, a test left) on a share of the time left, and
 * ties it when forced.  FP_ENOMEM or a graph-building error. */
static fp_status test_pair(tie_search *T, fp_peak_tie pr, fp_error *err) {
  double left = T->deadline - fp_clock_now();
  bool forced = false;
  if (left <= 0)
    return FP_OK;
  T->tried[T->n_tried++] = pr;
  fp_status st = pair_forced(T->g, T->prm, pr.u, pr.v, T->traffic,
                             left / (TIE_TESTS + 1 - T->n_tried), &forced, err);
  if (st == FP_OK && forced)
    T->tie[T->n_tie++] = pr;
  return st;
}

/* The pair of plan group t that the last cut split, untested: its first
 * node and the first placed elsewhere; false when there is none. */
static bool split_pair(const tie_search *T, int32_t t, fp_peak_tie *pr) {
  int32_t m;
  const int32_t *grp = fp_plan_group(T->plan, t, &m);
  for (int32_t j = 1; j < m; j++) {
    if (T->side[grp[j]] == T->side[grp[0]])
      continue;
    *pr = (fp_peak_tie){grp[0], grp[j]};
    if (!tried(T, *pr))
      return true;
  }
  return false;
}

/* Tests the split pair nearest x's step (*found: whether there was one)
 * and ties it when forced.  FP_ENOMEM or a graph-building error. */
static fp_status tie_next(tie_search *T, int32_t x, bool *found,
                          fp_error *err) {
  int32_t ng = fp_plan_group_count(T->plan), s = T->step[x];
  fp_peak_tie pr;
  *found = false;
  for (int32_t d = 0; !*found && d < ng; d++)
    *found = (s - d >= 0 && split_pair(T, s - d, &pr)) ||
             (s + d < ng && split_pair(T, s + d, &pr));
  return *found ? test_pair(T, pr, err) : FP_OK;
}

/* The tied cut at each of the TIE_NODES nodes of highest cut figure,
 * tying split pairs while tests and time last; *best rises to the highest
 * figure.  FP_ENOMEM or a graph-building error. */
static fp_status tie_nodes(tie_search *T, uint64_t peak, uint64_t *best,
                           fp_error *err) {
  int32_t n = fp_graph_node_count(T->g);
  group_fig *order = malloc(((size_t)n + 1) * sizeof *order);
  fp_status st = order ? FP_OK : fp_error_set(err, FP_ENOMEM, "out of memory");
  uint64_t resident = fp_graph_resident_bytes(T->g);
  for (int32_t x = 0; st == FP_OK && x < n; x++) {
    order[x] = (group_fig){0, x}; /* past the deadline: last */
    if (fp_clock_now() < T->deadline)
      st = fp_peak_cuts_tied(T->h, &x, 1, NULL, 0, &order[x].fig, NULL, err);
    T->cuts |= order[x].fig > resident; /* else past the cuts' size limits */
  }
  if (st == FP_OK)
    qsort(order, (size_t)n, sizeof *order, cmp_fig);
  for (int32_t i = 0; st == FP_OK && i < n && i < TIE_NODES; i++) {
    int32_t x = order[i].group;
    for (bool found = true; st == FP_OK && found && *best < peak;) {
      uint64_t fig;
      st = fp_peak_cuts_tied(T->h, &x, 1, T->tie, T->n_tie, &fig, T->side, err);
      *best = st == FP_OK && fig > *best ? fig : *best;
      found = false;
      if (st == FP_OK && *best < peak && T->n_tried < TIE_TESTS &&
          fp_clock_now() < T->deadline)
        st = tie_next(T, x, &found, err);
    }
  }
  free(order);
  return st;
}

/* Tests the pairs of the plan's groups at its peak steps (the first node
 * with each other) and ties the forced ones: the order search (peak_order.c)
 * splits on those nodes.  FP_ENOMEM or a graph-building error. */
static fp_status tie_peak_groups(tie_search *T, const fp_metrics *m,
                                 fp_error *err) {
  int32_t ng = fp_plan_group_count(T->plan);
  fp_step *tl = malloc(((size_t)ng + 1) * sizeof *tl);
  fp_metrics mm;
  fp_status st = tl ? fp_plan_eval(T->g, T->plan, &mm, tl, err)
                    : fp_error_set(err, FP_ENOMEM, "out of memory (ties)");
  for (int32_t t = 0; st == FP_OK && t < ng; t++) {
    int32_t k;
    const int32_t *grp = fp_plan_group(T->plan, t, &k);
    for (int32_t j = 1; st == FP_OK && tl[t].live_bytes == m->peak_bytes &&
                        j < k && T->n_tried < TIE_TESTS;
         j++)
      if (!tried(T, (fp_peak_tie){grp[0], grp[j]}))
        st = test_pair(T, (fp_peak_tie){grp[0], grp[j]}, err);
  }
  free(tl);
  return st;
}

/* Raises *bound2 by the tie search at the plan (m: its metrics, m's
 * traffic the least), until the deadline.  FP_ENOMEM or a graph-building
 * error. */
static fp_status tied_peak_bound(const fp_graph *g, const fp_ilp_params *prm,
                                 const fp_plan *plan, const fp_metrics *m,
                                 double deadline, double *bound2,
                                 fp_error *err) {
  tie_search T = {
      g, prm, plan, m->traffic_bytes, deadline, NULL, NULL, NULL, NULL, NULL,
      0, 0,   false};
  uint64_t best = 0;
  fp_status st = tie_init(&T, err);
  if (st == FP_OK)
    st = tie_nodes(&T, m->peak_bytes, &best, err);
  /* what the ties leave: the order around the peak (peak_order.c) */
  bool open = T.cuts && best < m->peak_bytes;
  if (st == FP_OK && open && fp_clock_now() < deadline)
    st = tie_peak_groups(&T, m, err);
  if (st == FP_OK && open && fp_clock_now() < deadline)
    st = solver_order_peak_bound(g, T.h, plan, m, T.tie, T.n_tie, deadline,
                                 &best, err);
  if (st == FP_OK && (isnan(*bound2) || (double)best > *bound2))
    *bound2 = (double)best;
  tie_free(&T);
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
  /* Ties cost traffic bounds: only while the gap is above its tolerance. */
  if (st == FP_OK && (isnan(*bound2) || solver_rel_gap((double)m->peak_bytes,
                                                       *bound2) > prm->gap2))
    st = tied_peak_bound(g, prm, plan, m, deadline, bound2, err);
done:
  free(fig);
  free(order);
  free(nodes);
  free(start);
  return st;
}
