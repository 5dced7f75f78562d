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
 * traffic: no plan of least traffic keeps them apart.  Forced pairs tie
 * nodes into classes that every plan of least traffic runs in one group,
 * and the min cut at a node with its class (fp_peak_cuts_group) places
 * a node tied to a later (earlier) one after (before) the step: on
 * convnext_tiny.bwd a reduction that alone reads a 9.6 MB saved
 * activation is tied to a reader of its other input that runs after the
 * peak step, which closes the 0.134% gap.  The pairs tried are those
 * that would hold a node on its plan side of the plan's highest steps,
 * priced by the cut first: each test costs a traffic bound.
 *
 * While the gap stays above its tolerance, a second search (below) ties
 * the pairs that the min cuts at the nodes of highest figure split, and
 * a case split on the order of the nodes around the plan's peak
 * (peak_order.c) prices what the ties leave.
 *
 * Calls: peak_group.c (fp_peak_cuts_tied), peak_order.c,
 * bound.c (fp_lower_bound), services.c (solver_rel_gap), eval.c,
 * graph.c, plan.c.
 */
#include "solver/bound/forced.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/peak_group.h"
#include "model/plan.h"
#include "model/util.h"
#include "solver/bound/peak_order.h"
#include "solver/common/services.h"

/* Plan steps tried per call (the highest live bytes first), pair tests
 * per step (each is one traffic bound of the whole graph, 0.1-0.25 s on
 * the corpus) and candidate pairs priced per step (each a few min cuts,
 * milliseconds). */
#define FORCED_MAX_STEPS 4
#define FORCED_MAX_TESTS 12
#define FORCED_MAX_CANDS 256

/* A pair to test: y with z, and the figure of the step if they are tied. */
typedef struct cand {
  uint64_t fig;
  int32_t y, z;
} cand;

/* Descending figure, then ascending nodes: deterministic. */
static int cmp_cand(const void *a, const void *b) {
  const cand *x = a, *y = b;
  if (x->fig != y->fig)
    return x->fig > y->fig ? -1 : 1;
  if (x->y != y->y)
    return (x->y > y->y) - (x->y < y->y);
  return (x->z > y->z) - (x->z < y->z);
}

/* One call's state. */
typedef struct forced_run {
  const fp_graph *g;
  const fp_ilp_params *prm;
  const fp_plan *plan;
  uint64_t traffic; /* the least traffic (the first level, proven) */
  double deadline;
  int32_t n;
  fp_peak_cuts *pc;
  int32_t *tie;  /* node -> class: every plan of least traffic runs the
                    nodes of one class in one group (proven pairs) */
  int32_t *keep; /* tie[] while a pair is tried */
  int32_t *step; /* node -> its step in the plan */
  cand *cands;
  int32_t nc;
} forced_run;

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

/* Joins y's class to z's. */
static void tie_join(forced_run *R, int32_t y, int32_t z) {
  int32_t from = R->tie[y], to = R->tie[z];
  for (int32_t v = 0; v < R->n; v++)
    R->tie[v] = R->tie[v] == from ? to : R->tie[v];
}

/* *fig: the min cut at step t's group under the ties, the largest over
 * its nodes (each with its class: every plan runs it in some group).
 * FP_ENOMEM. */
static fp_status step_figure(forced_run *R, int32_t t, uint64_t *fig,
                             fp_error *err) {
  int32_t m;
  const int32_t *grp = fp_plan_group(R->plan, t, &m);
  fp_status st = FP_OK;
  *fig = 0;
  for (int32_t i = 0; st == FP_OK && i < m; i++) {
    uint64_t f = 0;
    st = fp_peak_cuts_group(R->pc, &grp[i], 1, R->tie, &f, err);
    *fig = f > *fig ? f : *fig;
  }
  return st;
}

/* step_figure with y tied to z for the call (the ties restored). */
static fp_status tried_figure(forced_run *R, int32_t t, int32_t y, int32_t z,
                              uint64_t *fig, fp_error *err) {
  memcpy(R->keep, R->tie, (size_t)R->n * sizeof *R->tie);
  tie_join(R, y, z);
  fp_status st = step_figure(R, t, fig, err);
  memcpy(R->tie, R->keep, (size_t)R->n * sizeof *R->tie);
  return st;
}

/* The node of y's plan group that a tie would place on y's side of
 * step t: a descendant of the group at t when y runs later, an ancestor
 * when earlier; -1 for none (or y ordered with the group already). */
static int32_t side_partner(const forced_run *R, int32_t t, int32_t y) {
  int32_t m, mq;
  const int32_t *grp = fp_plan_group(R->plan, t, &m);
  const int32_t *q = fp_plan_group(R->plan, R->step[y], &mq);
  for (int32_t i = 0; i < m; i++)
    if (fp_peak_cuts_precedes(R->pc, y, grp[i]) ||
        fp_peak_cuts_precedes(R->pc, grp[i], y))
      return -1;
  for (int32_t j = 0; j < mq; j++)
    for (int32_t i = 0; i < m && R->tie[q[j]] != R->tie[y]; i++)
      if (R->step[y] > t ? fp_peak_cuts_precedes(R->pc, grp[i], q[j])
                         : fp_peak_cuts_precedes(R->pc, q[j], grp[i]))
        return q[j];
  return -1;
}

/* Adds (y, z) to the candidates when a tie raises the step's figure
 * above `base` (0: always, first; a group may need all its ties before
 * its figure rises).  FP_ENOMEM. */
static fp_status add_cand(forced_run *R, int32_t t, int32_t y, int32_t z,
                          uint64_t base, fp_error *err) {
  uint64_t fig = UINT64_MAX;
  if (z < 0 || R->tie[y] == R->tie[z] || R->nc >= FORCED_MAX_CANDS)
    return FP_OK;
  fp_status st = base ? tried_figure(R, t, y, z, &fig, err) : FP_OK;
  if (st == FP_OK && fig > base)
    R->cands[R->nc++] = (cand){fig, y, z};
  return st;
}

/* The candidates of step t: its group's nodes with its first, and every
 * node off the group's paths with the node of its own group that would
 * hold it on its side of t; each priced, the best first.  FP_ENOMEM. */
static fp_status collect(forced_run *R, int32_t t, uint64_t base,
                         fp_error *err) {
  int32_t m;
  const int32_t *grp = fp_plan_group(R->plan, t, &m);
  fp_status st = FP_OK;
  R->nc = 0;
  for (int32_t j = 1; st == FP_OK && j < m; j++)
    st = add_cand(R, t, grp[j], grp[0], 0, err);
  for (int32_t y = 0; st == FP_OK && y < R->n && fp_clock_now() < R->deadline;
       y++)
    if (R->step[y] != t)
      st = add_cand(R, t, y, side_partner(R, t, y), base, err);
  qsort(R->cands, (size_t)R->nc, sizeof *R->cands, cmp_cand);
  return st;
}

/* Ties the candidates of step t that traffic optimality forces, the
 * best first, and raises *best to the step's figure.  FP_ENOMEM or a
 * graph-building error. */
static fp_status tie_step(forced_run *R, int32_t t, uint64_t *best,
                          fp_error *err) {
  uint64_t base = 0;
  fp_status st = step_figure(R, t, &base, err);
  if (st == FP_OK)
    st = collect(R, t, base, err);
  for (int32_t i = 0, tests = 0;
       st == FP_OK && i < R->nc && tests < FORCED_MAX_TESTS &&
       fp_clock_now() < R->deadline;
       i++) {
    cand c = R->cands[i];
    if (R->tie[c.y] == R->tie[c.z])
      continue; /* tied through others already */
    bool forced = false;
    int32_t left = R->nc - i < FORCED_MAX_TESTS - tests
                       ? R->nc - i
                       : FORCED_MAX_TESTS - tests;
    tests++;
    st = pair_forced(R->g, R->prm, c.y, c.z, R->traffic,
                     (R->deadline - fp_clock_now()) / left, &forced, err);
    if (st == FP_OK && forced)
      tie_join(R, c.y, c.z);
  }
  if (st == FP_OK)
    st = step_figure(R, t, &base, err);
  *best = st == FP_OK && base > *best ? base : *best;
  return st;
}

/* A step of the plan and its live bytes, or a node and its cut figure,
 * for ordering. */
typedef struct ranked {
  uint64_t key;
  int32_t id;
} ranked;

/* Descending key, then ascending id: deterministic. */
static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* R's arrays and handle for g and plan; the steps of the plan by live
 * bytes into *order (caller frees).  FP_ENOMEM or an evaluation error. */
static fp_status run_open(forced_run *R, ranked **order, fp_error *err) {
  int32_t ng = fp_plan_group_count(R->plan);
  fp_step *tl = malloc(((size_t)ng + 1) * sizeof *tl);
  fp_metrics m;
  R->n = fp_graph_node_count(R->g);
  R->tie = malloc(((size_t)R->n + 1) * sizeof *R->tie);
  R->keep = malloc(((size_t)R->n + 1) * sizeof *R->keep);
  R->step = malloc(((size_t)R->n + 1) * sizeof *R->step);
  R->cands = malloc(FORCED_MAX_CANDS * sizeof *R->cands);
  *order = malloc(((size_t)ng + 1) * sizeof **order);
  fp_status st = FP_OK;
  if (!tl || !R->tie || !R->keep || !R->step || !R->cands || !*order) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory (forced groups)");
    goto done;
  }
  st = fp_plan_eval_k(R->g, R->plan, R->prm->limits.max_fusion_size, &m, tl,
                      err);
  if (st == FP_OK)
    st = fp_peak_cuts_create(R->g, R->prm->limits.max_fusion_size, &R->pc, err);
  for (int32_t t = 0; st == FP_OK && t < ng; t++) {
    int32_t k;
    const int32_t *grp = fp_plan_group(R->plan, t, &k);
    for (int32_t i = 0; i < k; i++)
      R->step[grp[i]] = t;
    (*order)[t] = (ranked){tl[t].live_bytes, t};
  }
  for (int32_t v = 0; v < R->n; v++)
    R->tie[v] = v;
  if (st == FP_OK)
    qsort(*order, (size_t)ng, sizeof **order, cmp_ranked);
done:
  free(tl);
  return st;
}

/* Frees what run_open allocated. */
static void run_close(forced_run *R, ranked *order) {
  fp_peak_cuts_destroy(R->pc);
  free(R->tie);
  free(R->keep);
  free(R->step);
  free(R->cands);
  free(order);
}

/* ---- ties the node cuts split, and the order around the peak ----------
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
  fp_peak_cuts *h;          /* the forced run's */
  const int32_t *step;      /* node -> its step in the plan (the run's) */
  int8_t *side;             /* the last cut's placement */
  fp_peak_tie *tie, *tried; /* forced pairs; every pair tested here */
  int32_t n_tie, n_tried;
  bool cuts; /* some cut says more than the resident bytes */
} tie_search;

static void tie_free(tie_search *T) {
  free(T->side);
  free(T->tie);
  free(T->tried);
}

/* Sets up T with the classes of the step search (class: node -> class,
 * a node of it) as its first ties.  FP_ENOMEM. */
static fp_status tie_init(tie_search *T, const int32_t *class, fp_error *err) {
  int32_t n = fp_graph_node_count(T->g);
  T->side = malloc((size_t)n + 1);
  T->tie = malloc(((size_t)n + TIE_TESTS + 1) * sizeof *T->tie);
  T->tried = malloc((TIE_TESTS + 1) * sizeof *T->tried);
  if (!T->side || !T->tie || !T->tried)
    return fp_error_set(err, FP_ENOMEM, "out of memory (ties)");
  for (int32_t v = 0; v < n; v++)
    if (class[v] != v)
      T->tie[T->n_tie++] = (fp_peak_tie){v, class[v]};
  return FP_OK;
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
  ranked *order = malloc(((size_t)n + 1) * sizeof *order);
  fp_status st = order ? FP_OK : fp_error_set(err, FP_ENOMEM, "out of memory");
  uint64_t resident = fp_graph_resident_bytes(T->g);
  for (int32_t x = 0; st == FP_OK && x < n; x++) {
    order[x] = (ranked){0, x}; /* past the deadline: last */
    if (fp_clock_now() < T->deadline)
      st = fp_peak_cuts_tied(T->h, &x, 1, NULL, 0, &order[x].key, NULL, err);
    T->cuts |= order[x].key > resident; /* else past the cuts' size limits */
  }
  if (st == FP_OK)
    qsort(order, (size_t)n, sizeof *order, cmp_ranked);
  for (int32_t i = 0; st == FP_OK && i < n && i < TIE_NODES; i++) {
    int32_t x = order[i].id;
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
 * traffic the least), from the step search's run R, until R's deadline.
 * FP_ENOMEM or a graph-building error. */
static fp_status tied_peak_bound(const forced_run *R, const fp_metrics *m,
                                 double *bound2, fp_error *err) {
  tie_search T = {R->g,        R->prm, R->plan, m->traffic_bytes,
                  R->deadline, R->pc,  R->step, NULL,
                  NULL,        NULL,   0,       0,
                  false};
  uint64_t best = 0;
  fp_status st = tie_init(&T, R->tie, err);
  if (st == FP_OK)
    st = tie_nodes(&T, m->peak_bytes, &best, err);
  /* what the ties leave: the order around the peak (peak_order.c) */
  bool open = T.cuts && best < m->peak_bytes;
  if (st == FP_OK && open && fp_clock_now() < R->deadline)
    st = tie_peak_groups(&T, m, err);
  if (st == FP_OK && open && fp_clock_now() < R->deadline)
    st = solver_order_peak_bound(R->g, T.h, R->plan, m, T.tie, T.n_tie,
                                 R->deadline, &best, err);
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
  forced_run R = {.g = g, .prm = prm, .plan = plan};
  R.traffic = m->traffic_bytes;
  R.deadline = fp_clock_now() + time_s;
  ranked *order = NULL;
  fp_status st = run_open(&R, &order, err);
  uint64_t best = 0;
  /* The steps of the highest live bytes first: the bound can reach the
   * plan's peak only at a step that holds it. */
  for (int32_t i = 0; st == FP_OK && i < fp_plan_group_count(plan) &&
                      i < FORCED_MAX_STEPS && fp_clock_now() < R.deadline;
       i++) {
    if ((!isnan(*bound2) && (double)order[i].key <= *bound2) ||
        best >= m->peak_bytes)
      break;
    st = tie_step(&R, order[i].id, &best, err);
  }
  if (st == FP_OK && (isnan(*bound2) || (double)best > *bound2))
    *bound2 = (double)best;
  /* The node search and the order split cost more traffic bounds: only
   * while the gap is above its tolerance. */
  if (st == FP_OK && fp_clock_now() < R.deadline &&
      solver_rel_gap((double)m->peak_bytes, *bound2) > prm->gap2)
    st = tied_peak_bound(&R, m, bound2, err);
  run_close(&R, order);
  return st;
}
