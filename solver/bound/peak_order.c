/*
 * peak_order.c -- the second level's bound from a case split on the order
 * of a few nodes (peak_order.h; docs/solver.md, "The second level's
 * bound").
 *
 * Why: the min cut at a node x places every other node before or after
 * x's step as cheaply as that one step allows, and each node's cut does
 * so alone.  On volo_d1_224.bwd the cut at op4 runs op2 (a 4 KB output)
 * after op4; a plan that does so keeps op2's 50 MB input live past op4,
 * which the cut at the next step pays for.  On gpt2.bwd the cut at op4
 * grants op4's in-place takeover of its input, which needs op5 and op6
 * (weight gradients that read it) done first; they write outputs that
 * are then live.  A bound that knows the order of a few nodes sees both.
 *
 * A case is a set of facts "key a runs at or before key b" over a few key
 * nodes, closed under transitivity (the graph's own paths and the ties
 * are facts from the start).  Its figure is the highest tied cut at a key
 * x with the keys known before x placed before, those known after placed
 * after, and those known at x's step tied to it (fp_peak_cuts_placed: the
 * in-place cap drops the takeovers a late reader forbids).  Every plan of
 * the set falls in one of two cases "a <= b" and "b <= a", so the lesser
 * of their figures bounds the peak of every plan, and the split deepens
 * on the pair whose lesser child figure is the highest (strong
 * branching), while a case is under the target and time lasts.
 *
 * Calls: peak_group.c (fp_peak_cuts_placed), eval.c (the timeline),
 * graph.c, plan.c.
 */
#include "solver/bound/peak_order.h"

#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/util.h"

/* Key nodes, the depth of the split, and the nodes a cut places against
 * the plan that are weighed as keys (the nearest the cut's step), at
 * most. */
#define ORDER_KEYS 8
#define ORDER_DEPTH 6
#define ORDER_WEIGH 32

/* le[a] bit b: key a runs at or before key b. */
typedef struct order_case {
  uint8_t le[ORDER_KEYS];
} order_case;

typedef struct order_search {
  const fp_graph *g;
  fp_peak_cuts *h;
  const fp_peak_tie *ties;
  int32_t n_ties;
  fp_peak_tie *tmp; /* the ties, then the keys a case puts at one step */
  int8_t *place;    /* per node, all 0 between cuts */
  int8_t *side;
  int32_t *step; /* per node: its step in the plan */
  int32_t key[ORDER_KEYS], nk;
  uint64_t base, target;
  double deadline;
} order_search;

static void order_free(order_search *O) {
  free(O->tmp);
  free(O->place);
  free(O->side);
  free(O->step);
}

/* Closes c under transitivity. */
static void close_case(order_case *c, int32_t nk) {
  for (int32_t k = 0; k < nk; k++)
    for (int32_t i = 0; i < nk; i++)
      if (c->le[i] >> k & 1)
        c->le[i] |= c->le[k];
}

/* The tied cut at key a under case c into *fig.  FP_ENOMEM. */
static fp_status key_cut(order_search *O, const order_case *c, int32_t a,
                         uint64_t *fig, fp_error *err) {
  int32_t nt = O->n_ties;
  for (int32_t b = 0; b < O->nk; b++) {
    bool before = c->le[b] >> a & 1, after = c->le[a] >> b & 1;
    if (b == a || (!before && !after))
      continue;
    if (before && after)
      O->tmp[nt++] = (fp_peak_tie){O->key[a], O->key[b]};
    else
      O->place[O->key[b]] = before ? FP_PEAK_BEFORE : FP_PEAK_AFTER;
  }
  fp_status st = fp_peak_cuts_placed(O->h, &O->key[a], 1, O->tmp, nt, O->place,
                                     fig, NULL, err);
  for (int32_t b = 0; b < O->nk; b++)
    O->place[O->key[b]] = 0;
  return st;
}

/* The figure of case c: the highest key cut, at least O->base. */
static fp_status case_figure(order_search *O, const order_case *c,
                             uint64_t *fig, fp_error *err) {
  fp_status st = FP_OK;
  *fig = O->base;
  for (int32_t a = 0; st == FP_OK && a < O->nk && *fig < O->target; a++) {
    uint64_t f = 0;
    st = key_cut(O, c, a, &f, err);
    *fig = f > *fig ? f : *fig;
  }
  return st;
}

/* c with the fact "key a runs at or before key b", closed. */
static order_case with_fact(const order_case *c, int32_t nk, int32_t a,
                            int32_t b) {
  order_case d = *c;
  d.le[a] |= (uint8_t)(1u << b);
  close_case(&d, nk);
  return d;
}

/* The pair of keys whose split gives the highest lesser child figure,
 * then the highest greater one, into *pa, *pb (-1: no split raises either
 * child above c's figure `fig`: a case closed on one side may still open
 * the other deeper).  FP_ENOMEM. */
static fp_status pick_pair(order_search *O, const order_case *c, uint64_t fig,
                           int32_t *pa, int32_t *pb, fp_error *err) {
  uint64_t lo = 0, hi = fig;
  fp_status st = FP_OK;
  *pa = *pb = -1;
  for (int32_t a = 0; st == FP_OK && a < O->nk; a++)
    for (int32_t b = a + 1; st == FP_OK && b < O->nk; b++) {
      if ((c->le[a] >> b & 1) || (c->le[b] >> a & 1) ||
          fp_clock_now() >= O->deadline)
        continue; /* known, or out of time */
      order_case x = with_fact(c, O->nk, a, b), y = with_fact(c, O->nk, b, a);
      uint64_t fx = 0, fy = 0;
      st = case_figure(O, &x, &fx, err);
      if (st == FP_OK)
        st = case_figure(O, &y, &fy, err);
      uint64_t l = fx < fy ? fx : fy, h = fx < fy ? fy : fx;
      if (st == FP_OK && h > fig && (l > lo || (l == lo && h > hi))) {
        lo = l, hi = h;
        *pa = a, *pb = b;
      }
    }
  return st;
}

/* The bound over case c: its figure, or the lesser of its two children's
 * bounds when a split raises it.  FP_ENOMEM. */
static fp_status solve_case(order_search *O, const order_case *c, int depth,
                            uint64_t *val, fp_error *err) {
  fp_status st = case_figure(O, c, val, err);
  if (st != FP_OK || *val >= O->target || depth >= ORDER_DEPTH ||
      fp_clock_now() >= O->deadline)
    return st;
  int32_t a, b;
  st = pick_pair(O, c, *val, &a, &b, err);
  if (st != FP_OK || a < 0)
    return st;
  order_case x = with_fact(c, O->nk, a, b), y = with_fact(c, O->nk, b, a);
  uint64_t vx = 0, vy = 0;
  st = solve_case(O, &x, depth + 1, &vx, err);
  if (st == FP_OK)
    st = solve_case(O, &y, depth + 1, &vy, err);
  if (st == FP_OK && (vx < vy ? vx : vy) > *val)
    *val = vx < vy ? vx : vy;
  return st;
}

/* Whether a path of reads leads from node u to node v (u != v); queue and
 * seen are scratch of one entry per node. */
static bool reaches(const fp_graph *g, int32_t u, int32_t v, int32_t *queue,
                    bool *seen) {
  int32_t n = fp_graph_node_count(g), qh = 0, qt = 0;
  memset(seen, 0, (size_t)n * sizeof *seen);
  queue[qt++] = u;
  while (qh < qt && !seen[v]) {
    const fp_node *nd = fp_graph_node(g, queue[qh++]);
    for (int32_t i = 0; i < nd->n_writes; i++) {
      const fp_buffer *b = fp_graph_buffer(g, nd->writes[i]);
      for (int32_t r = 0; r < b->n_readers; r++)
        if (b->readers[r] <= v && !seen[b->readers[r]]) {
          seen[b->readers[r]] = true; /* listed order is topological */
          queue[qt++] = b->readers[r];
        }
    }
  }
  return seen[v];
}

/* The first case: each key before itself, the graph's paths between keys,
 * and the ties between keys both ways.  -1 out of memory, else 0. */
static int first_case(const order_search *O, order_case *c) {
  int32_t n = fp_graph_node_count(O->g);
  int32_t *queue = malloc(((size_t)n + 1) * sizeof *queue);
  bool *seen = malloc(((size_t)n + 1) * sizeof *seen);
  memset(c, 0, sizeof *c);
  for (int32_t a = 0; queue && seen && a < O->nk; a++)
    for (int32_t b = 0; b < O->nk; b++)
      if (a == b || (O->key[a] < O->key[b] &&
                     reaches(O->g, O->key[a], O->key[b], queue, seen)))
        c->le[a] |= (uint8_t)(1u << b);
  for (int32_t i = 0; i < O->n_ties; i++)
    for (int32_t a = 0; a < O->nk; a++)
      for (int32_t b = 0; b < O->nk; b++)
        if (O->key[a] == O->ties[i].u && O->key[b] == O->ties[i].v)
          c->le[a] |= (uint8_t)(1u << b), c->le[b] |= (uint8_t)(1u << a);
  close_case(c, O->nk);
  int rc = queue && seen ? 0 : -1;
  free(queue);
  free(seen);
  return rc;
}

/* Adds node v to the keys unless it is one or they are full. */
static void add_key(order_search *O, int32_t v) {
  for (int32_t i = 0; i < O->nk; i++)
    if (O->key[i] == v)
      return;
  if (O->nk < ORDER_KEYS)
    O->key[O->nk++] = v;
}

/* Among the nodes the tied cut at x places against the plan, nearest x's
 * step first (ORDER_WEIGH of them), the one whose placement on the plan's
 * side raises the cut most, into *y (-1: none).  FP_ENOMEM. */
static fp_status best_misplaced(order_search *O, int32_t x, int32_t *y,
                                fp_error *err) {
  uint64_t fig, best = 0;
  fp_status st =
      fp_peak_cuts_tied(O->h, &x, 1, O->ties, O->n_ties, &fig, O->side, err);
  int32_t n = fp_graph_node_count(O->g), ng = 0, weighed = 0;
  for (int32_t v = 0; v < n; v++)
    ng = O->step[v] + 1 > ng ? O->step[v] + 1 : ng;
  *y = -1;
  for (int32_t d = 1; st == FP_OK && d < ng && weighed < ORDER_WEIGH; d++)
    for (int32_t v = 0; st == FP_OK && v < n; v++) {
      int32_t dv = O->step[v] - O->step[x];
      int8_t want = dv < 0 ? FP_PEAK_BEFORE : FP_PEAK_AFTER;
      if ((dv != d && dv != -d) || O->side[v] == want)
        continue;
      uint64_t f;
      O->place[v] = want;
      st = fp_peak_cuts_placed(O->h, &x, 1, O->ties, O->n_ties, O->place, &f,
                               NULL, err);
      O->place[v] = 0;
      weighed++;
      if (st == FP_OK && f > fig && f - fig > best) {
        best = f - fig;
        *y = v;
      }
    }
  return st;
}

/* The keys: the nodes of the plan's peak steps, the node the best cut
 * among them places against the plan most dearly, and the nodes of the
 * steps next to the peak steps.  FP_ENOMEM. */
static fp_status pick_keys(order_search *O, const fp_plan *plan,
                           const fp_metrics *m, fp_error *err) {
  int32_t T = fp_plan_group_count(plan), x = -1;
  fp_step *tl = malloc(((size_t)T + 1) * sizeof *tl);
  fp_metrics mm;
  fp_status st = tl ? fp_plan_eval(O->g, plan, &mm, tl, err)
                    : fp_error_set(err, FP_ENOMEM, "out of memory (order)");
  uint64_t top = 0;
  for (int32_t t = 0; st == FP_OK && t < T; t++)
    for (int32_t j = 0; tl[t].live_bytes == m->peak_bytes && j < tl[t].nodes;
         j++) {
      int32_t v = fp_plan_group(plan, t, NULL)[j];
      uint64_t f = 0;
      add_key(O, v);
      st = fp_peak_cuts_tied(O->h, &v, 1, O->ties, O->n_ties, &f, NULL, err);
      x = f > top || x < 0 ? v : x;
      top = f > top ? f : top;
    }
  int32_t y = -1;
  if (st == FP_OK && x >= 0)
    st = best_misplaced(O, x, &y, err);
  if (y >= 0)
    add_key(O, y);
  for (int32_t t = 0; st == FP_OK && t < T; t++) {
    bool next = (t > 0 && tl[t - 1].live_bytes == m->peak_bytes) ||
                (t + 1 < T && tl[t + 1].live_bytes == m->peak_bytes);
    for (int32_t j = 0; next && j < tl[t].nodes; j++)
      add_key(O, fp_plan_group(plan, t, NULL)[j]);
  }
  free(tl);
  return st;
}

/* Allocates O's scratch and the plan's steps.  FP_ENOMEM. */
static fp_status order_init(order_search *O, const fp_plan *plan,
                            fp_error *err) {
  int32_t n = fp_graph_node_count(O->g);
  O->tmp = malloc(((size_t)O->n_ties + ORDER_KEYS + 1) * sizeof *O->tmp);
  O->place = calloc((size_t)n + 1, sizeof *O->place);
  O->side = malloc((size_t)n + 1);
  O->step = malloc(((size_t)n + 1) * sizeof *O->step);
  if (!O->tmp || !O->place || !O->side || !O->step)
    return fp_error_set(err, FP_ENOMEM, "out of memory (order)");
  if (O->n_ties > 0)
    memcpy(O->tmp, O->ties, (size_t)O->n_ties * sizeof *O->tmp);
  for (int32_t t = 0; t < fp_plan_group_count(plan); t++) {
    int32_t m;
    const int32_t *grp = fp_plan_group(plan, t, &m);
    for (int32_t j = 0; j < m; j++)
      O->step[grp[j]] = t;
  }
  return FP_OK;
}

fp_status solver_order_peak_bound(const fp_graph *g, fp_peak_cuts *h,
                                  const fp_plan *plan, const fp_metrics *m,
                                  const fp_peak_tie *ties, int32_t n_ties,
                                  double deadline, uint64_t *best,
                                  fp_error *err) {
  order_search O = {g,    h,   ties, n_ties, NULL,          NULL,    NULL,
                    NULL, {0}, 0,    *best,  m->peak_bytes, deadline};
  order_case c;
  uint64_t val = 0;
  fp_status st = order_init(&O, plan, err);
  if (st == FP_OK)
    st = pick_keys(&O, plan, m, err);
  if (st == FP_OK && first_case(&O, &c) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory (order)");
  if (st == FP_OK && O.nk > 1)
    st = solve_case(&O, &c, 0, &val, err);
  if (st == FP_OK && val > *best)
    *best = val;
  order_free(&O);
  return st;
}
