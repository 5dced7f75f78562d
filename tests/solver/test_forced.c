/*
 * test_forced.c -- the second level's bound from the pairs that traffic
 * optimality forces (solver/bound/forced.c) and the min cuts at groups
 * and under ties it rests on (fp_peak_group_bounds, fp_peak_cuts_group,
 * model/peak_group.c), against every
 * legal plan of random tiny graphs: plain ones, optimizer-like ones whose
 * nodes take over their reads in place, both with linked pairs and with
 * extern workspaces.
 *
 * The enumeration here walks sets: from the nodes already run, any
 * non-empty set of the others whose producers have run or are in it is
 * the next group; the evaluator judges legality.  Every ordered grouping
 * arises once.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/peak_bound.h"
#include "model/peak_group.h"
#include "solver/bound/forced.h"
#include "solver/solver.h"
#include "tests/testutil.h"

#define MAXN 6
/* Least-traffic plans handed to the forced bound per graph, at most. */
#define MAX_FACES 6

typedef struct enum_state {
  const fp_graph *g;
  int32_t n;
  uint32_t pred[MAXN];          /* producers of each node, as a mask */
  int32_t order[MAXN * 2], len; /* groups so far: nodes, then -1 */
  void (*visit)(struct enum_state *E, const fp_plan *p, const fp_metrics *m);
  fp_plan *p;
  /* what the visits gather */
  uint64_t limit, best_traffic, best_peak;
  int32_t faces, gains, tight, plans;
  uint64_t structural;
  fp_peak_cuts *pc; /* the tie test's cuts */
  tu_rng rng;       /* which pairs the tie test ties; check_ties' places */
} enum_state;

/* Builds E->p from E->order and evaluates it; visits it when legal. */
static void enum_leaf(enum_state *E) {
  fp_plan_clear(E->p);
  ck_assert_int_eq(fp_plan_open_group(E->p, NULL), FP_OK);
  for (int32_t i = 0; i < E->len; i++) {
    if (E->order[i] >= 0)
      ck_assert_int_eq(fp_plan_append_node(E->p, E->order[i], NULL), FP_OK);
    else if (i + 1 < E->len)
      ck_assert_int_eq(fp_plan_open_group(E->p, NULL), FP_OK);
  }
  fp_metrics m;
  fp_status st = fp_plan_eval(E->g, E->p, &m, NULL, NULL);
  if (st == FP_EILLEGAL)
    return;
  ck_assert_int_eq(st, FP_OK);
  E->visit(E, E->p, &m);
}

/* Every next group out of the nodes not in `done`. */
static void enum_rec(enum_state *E, uint32_t done) {
  uint32_t all = (1u << E->n) - 1, left = all & ~done;
  if (left == 0) {
    enum_leaf(E);
    return;
  }
  for (uint32_t s = left; s; s = (s - 1) & left) {
    bool ready = true;
    for (int32_t v = 0; v < E->n && ready; v++)
      ready = !(s >> v & 1) || (E->pred[v] & ~(done | s)) == 0;
    if (!ready)
      continue;
    int32_t mark = E->len;
    for (int32_t v = 0; v < E->n; v++)
      if (s >> v & 1)
        E->order[E->len++] = v;
    E->order[E->len++] = -1;
    enum_rec(E, done | s);
    E->len = mark;
  }
}

/* Visits every legal plan of g. */
static void enumerate(enum_state *E, const fp_graph *g) {
  E->g = g;
  E->n = fp_graph_node_count(g);
  E->len = 0;
  memset(E->pred, 0, sizeof E->pred);
  for (int32_t v = 0; v < E->n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t w = fp_graph_buffer(g, nd->reads[i].buffer)->writer;
      if (w >= 0)
        E->pred[v] |= 1u << w;
    }
  }
  E->p = fp_plan_create();
  enum_rec(E, 0);
  fp_plan_destroy(E->p);
}

/* A random tiny graph of one of the eight kinds (i mod 8): plain or
 * optimizer-like, with or without linked pairs, with or without extern
 * workspaces (a bound that forgets a workspace shows up as a plan below
 * it). */
static fp_graph *tiny_graph(tu_rng *r, int i) {
  fp_graph *g =
      i % 2 ? tu_random_update_graph(r, 3, MAXN) : tu_random_graph(r, 3, MAXN);
  if (i % 4 >= 2)
    g = tu_add_linked(g, r);
  return i % 8 >= 4 ? tu_add_workspaces(g, r) : g;
}

/* The plan's groups as CSR arrays (caller frees). */
static void plan_groups(const fp_plan *p, int32_t **nodes, int32_t **start) {
  int32_t ng = fp_plan_group_count(p), at = 0;
  *nodes = malloc(((size_t)fp_plan_entry_count(p) + 1) * sizeof **nodes);
  *start = malloc(((size_t)ng + 1) * sizeof **start);
  ck_assert(*nodes && *start);
  for (int32_t i = 0; i < ng; i++) {
    int32_t m;
    const int32_t *grp = fp_plan_group(p, i, &m);
    (*start)[i] = at;
    for (int32_t j = 0; j < m; j++)
      (*nodes)[at++] = grp[j];
  }
  (*start)[ng] = at;
}

/* Each group's figure bounds the plan's own peak (it holds for every plan
 * that runs the group's nodes together, this one among them). */
static void check_groups(enum_state *E, const fp_plan *p, const fp_metrics *m) {
  int32_t *nodes, *start, ng = fp_plan_group_count(p);
  uint64_t fig[MAXN];
  plan_groups(p, &nodes, &start);
  ck_assert_int_eq(fp_peak_group_bounds(E->g, 0, nodes, start, ng, fig, NULL),
                   FP_OK);
  for (int32_t i = 0; i < ng; i++) {
    ck_assert_msg(fig[i] <= m->peak_bytes, "group %d: %llu over peak %llu", i,
                  (unsigned long long)fig[i],
                  (unsigned long long)m->peak_bytes);
    E->gains += fig[i] > E->structural;
  }
  E->plans++;
  free(nodes);
  free(start);
}

/* Visits every legal plan of 120 random tiny graphs (seeds from loop and
 * mul); *gains counts the graphs where a visit gained, *plans the plans,
 * *placed the graphs where placements raised a tied cut. */
static void visit_tiny_graphs(int loop, uint64_t mul,
                              void (*visit)(enum_state *, const fp_plan *,
                                            const fp_metrics *),
                              int32_t *gains, int32_t *plans, int32_t *placed) {
  *gains = *plans = *placed = 0;
  for (int i = 0; i < 120; i++) {
    tu_rng r = {(uint64_t)(loop * 1000 + i) * mul + 11};
    fp_graph *g = tiny_graph(&r, i);
    enum_state E;
    memset(&E, 0, sizeof E);
    ck_assert_int_eq(fp_peak_bound(g, 0, 0, &E.structural, NULL), FP_OK);
    E.visit = visit;
    E.rng = r;
    enumerate(&E, g);
    *gains += E.gains > 0;
    *plans += E.plans;
    *placed += E.tight > 0;
    fp_graph_destroy(g);
  }
}

START_TEST(group_bound_below_every_plan_with_the_group) {
  int32_t gains, plans, placed;
  visit_tiny_graphs(_i, 2654435761u, check_groups, &gains, &plans, &placed);
  ck_assert_int_gt(plans, 1000);
  ck_assert_msg(gains > 10, "above the peak bound on %d graphs", gains);
}
END_TEST

/* tie[v]: for a random half of the nodes, the first node of v's group
 * in p (p keeps every such class in one group), else v itself. */
static void random_ties(enum_state *E, const fp_plan *p, int32_t *tie) {
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t m;
    const int32_t *grp = fp_plan_group(p, t, &m);
    for (int32_t i = 0; i < m; i++)
      tie[grp[i]] = tu_below(&E->rng, 2) ? grp[0] : grp[i];
  }
}

/* Under ties the plan keeps, the min cut at each node and at each of its
 * groups stays at or under its peak. */
static void check_class_ties(enum_state *E, const fp_plan *p,
                             const fp_metrics *m) {
  int32_t tie[MAXN];
  random_ties(E, p, tie);
  for (int32_t x = 0; x < E->n; x++) {
    uint64_t with = 0, without = 0;
    ck_assert_int_eq(fp_peak_cuts_group(E->pc, &x, 1, tie, &with, NULL), FP_OK);
    ck_assert_int_eq(fp_peak_cuts_group(E->pc, &x, 1, NULL, &without, NULL),
                     FP_OK);
    ck_assert_msg(with <= m->peak_bytes, "node %d tied: %llu over peak %llu", x,
                  (unsigned long long)with, (unsigned long long)m->peak_bytes);
    E->gains += with > without;
  }
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t k;
    const int32_t *grp = fp_plan_group(p, t, &k);
    uint64_t fig = 0;
    ck_assert_int_eq(fp_peak_cuts_group(E->pc, grp, k, tie, &fig, NULL), FP_OK);
    ck_assert_msg(fig <= m->peak_bytes, "group %d tied: %llu over peak %llu", t,
                  (unsigned long long)fig, (unsigned long long)m->peak_bytes);
  }
  E->plans++;
}

START_TEST(tied_cut_below_every_plan_with_the_ties) {
  int32_t gains = 0, plans = 0;
  for (int i = 0; i < 120; i++) {
    tu_rng r = {(uint64_t)(_i * 1000 + i) * 2246822519u + 7};
    fp_graph *g = tiny_graph(&r, i);
    enum_state E;
    memset(&E, 0, sizeof E);
    E.rng = (tu_rng){(uint64_t)i * 3266489917u + 1};
    ck_assert_int_eq(fp_peak_cuts_create(g, 0, &E.pc, NULL), FP_OK);
    ck_assert_ptr_nonnull(E.pc);
    E.visit = check_class_ties;
    enumerate(&E, g);
    gains += E.gains > 0;
    plans += E.plans;
    fp_peak_cuts_destroy(E.pc);
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(plans, 1000);
  ck_assert_msg(gains > 20, "ties raised a cut on %d graphs", gains);
}
END_TEST

/* Pass 1: the least traffic within the limit, and the least peak among
 * the plans of that traffic. */
static void find_optimum(enum_state *E, const fp_plan *p, const fp_metrics *m) {
  (void)p;
  if (m->peak_bytes > E->limit)
    return;
  if (m->traffic_bytes < E->best_traffic ||
      (m->traffic_bytes == E->best_traffic && m->peak_bytes < E->best_peak)) {
    E->best_traffic = m->traffic_bytes;
    E->best_peak = m->peak_bytes;
  }
}

/* Pass 2: handed any plan of least traffic, the forced bound stays at or
 * under the least peak among them. */
static void check_face(enum_state *E, const fp_plan *p, const fp_metrics *m) {
  if (m->peak_bytes > E->limit || m->traffic_bytes != E->best_traffic ||
      E->faces >= MAX_FACES)
    return;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  double b = NAN;
  fp_error err;
  ck_assert_msg(solver_forced_peak_bound(E->g, &prm, p, m, 1.0, &b, &err) ==
                    FP_OK,
                "%s", err.msg);
  ck_assert_msg(isnan(b) || b <= (double)E->best_peak,
                "forced bound %.0f over the least peak %llu", b,
                (unsigned long long)E->best_peak);
  E->faces++;
  E->gains += !isnan(b) && b > (double)E->structural;
  E->tight += !isnan(b) && b == (double)E->best_peak;
}

START_TEST(forced_bound_below_lexicographic_optimum) {
  int32_t gains = 0, tight = 0, graphs = 0;
  for (int i = 0; i < 100; i++) {
    tu_rng r = {(uint64_t)(_i * 1000 + i) * 40503u + 3};
    fp_graph *g = tiny_graph(&r, i);
    fp_plan *eager = fp_plan_create();
    fp_metrics em;
    ck_assert_int_eq(fp_plan_make_eager(eager, g, NULL), FP_OK);
    ck_assert_int_eq(fp_plan_eval(g, eager, &em, NULL, NULL), FP_OK);
    enum_state E;
    memset(&E, 0, sizeof E);
    E.limit = em.peak_bytes; /* the default limit: the eager peak */
    E.best_traffic = E.best_peak = UINT64_MAX;
    ck_assert_int_eq(fp_peak_bound(g, 0, 0, &E.structural, NULL), FP_OK);
    E.visit = find_optimum;
    enumerate(&E, g);
    ck_assert(E.best_traffic != UINT64_MAX); /* eager meets its own peak */
    E.visit = check_face;
    enumerate(&E, g);
    gains += E.gains > 0;
    tight += E.tight > 0;
    graphs++;
    fp_plan_destroy(eager);
    fp_graph_destroy(g);
  }
  ck_assert_int_eq(graphs, 100);
  ck_assert_msg(gains > 0, "above the peak bound on %d graphs", gains);
  ck_assert_msg(tight > 0, "at the least peak on %d graphs", tight);
  /* The ties lift it on more graphs than whole forced groups did (4 and
   * 6 of 100 before the ties, 17 and 15 with them). */
  ck_assert_msg(gains >= 12, "above the peak bound on %d graphs", gains);
}
END_TEST

/* x -> a -> t1 -> b -> t2 -> c (extern) -> y, a and b each with an
 * in-place pair over what it reads.  Grouped, a and b take nothing over:
 * t1 is written at their step (b's pair) and never materialized (a's),
 * so x and t2 are live together there.  The per-node caps gave away
 * 2,000 bytes (each node's own pair and the other's). */
static const char pair_chain_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'name': 'ipgroup',"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true,"
    "   'freeable': true},"
    "  {'name': 't1', 'bytes': 1000}, {'name': 't2', 'bytes': 1000},"
    "  {'name': 'y', 'bytes': 1000}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['x'],"
    "   'writes': ['t1'], 'inplace': [['x', 't1']]},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t1'],"
    "   'writes': ['t2'], 'inplace': [['t1', 't2']]},"
    "  {'name': 'c', 'kind': 'extern', 'reads': ['t2'], 'writes': ['y']}],"
    " 'outputs': ['y']}";

START_TEST(group_cap_leaves_out_takeovers_inside_the_group) {
  fp_graph *g = tu_graph(pair_chain_json);
  int32_t nodes[2] = {0, 1}, start[2] = {0, 2};
  uint64_t fig = 0;
  ck_assert_int_eq(fp_peak_group_bounds(g, 0, nodes, start, 1, &fig, NULL),
                   FP_OK);
  /* the least peak of the plans that group a and b (the only one) */
  fp_plan *p = tu_plan(g, "a b | c");
  ck_assert_uint_eq(tu_eval(g, p).peak_bytes, 2000);
  ck_assert_uint_eq(fig, 2000);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* fp_peak_cuts_group and _precedes: bad arguments are FP_EARG,
 * destroy(NULL) is a no-op, and the order it answers is the graph's. */
START_TEST(peak_cuts_group_arguments) {
  fp_graph *g = tu_chain_graph(3, 100);
  fp_peak_cuts *pc = NULL;
  ck_assert_int_eq(fp_peak_cuts_create(g, 0, &pc, NULL), FP_OK);
  int32_t x = 1, bad = 3, tie[3] = {0, 0, 2};
  uint64_t out = 0;
  fp_error err;
  ck_assert_ptr_nonnull(pc);
  ck_assert_int_eq(fp_peak_cuts_group(NULL, &x, 1, NULL, &out, &err), FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_group(pc, NULL, 1, NULL, &out, &err), FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_group(pc, &x, 1, NULL, NULL, &err), FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_group(pc, &x, 0, NULL, &out, &err), FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_group(pc, &bad, 1, NULL, &out, &err), FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_group(pc, &x, 1, tie, &out, &err), FP_OK);
  ck_assert_uint_ge(out, fp_graph_resident_bytes(g));
  ck_assert(fp_peak_cuts_precedes(pc, 0, 2));
  ck_assert(fp_peak_cuts_precedes(pc, 1, 1));
  ck_assert(!fp_peak_cuts_precedes(pc, 2, 0));
  fp_peak_cuts_destroy(pc);
  fp_peak_cuts_destroy(NULL);
  fp_graph_destroy(g);
}
END_TEST

/* Each tied cut bounds the plan's own peak when the plan runs the ties'
 * nodes at one step: at every node x (or x's whole group), with pairs
 * of the plan's groups as ties (every pair, or one pair per group). */
static void check_ties(enum_state *E, const fp_plan *p, const fp_metrics *m) {
  int32_t n = E->n, nt = 0, step[MAXN];
  fp_peak_tie ties[MAXN * MAXN];
  tu_plan_steps(p, step);
  for (int32_t u = 0; u < n; u++)
    for (int32_t v = u + 1; v < n; v++)
      if (step[u] == step[v] && (E->plans % 2 || v == u + 1))
        ties[nt++] = (fp_peak_tie){v, u};
  fp_peak_cuts *h;
  ck_assert_int_eq(fp_peak_cuts_create(E->g, 0, &h, NULL), FP_OK);
  for (int32_t x = 0; x < n; x++) {
    int32_t m_x;
    const int32_t *grp = fp_plan_group(p, step[x], &m_x);
    uint64_t plain, tied;
    int8_t side[MAXN];
    bool whole = E->plans % 3 == 0;
    ck_assert_int_eq(fp_peak_cuts_tied(h, whole ? grp : &x, whole ? m_x : 1,
                                       NULL, 0, &plain, NULL, NULL),
                     FP_OK);
    ck_assert_int_eq(fp_peak_cuts_tied(h, whole ? grp : &x, whole ? m_x : 1,
                                       ties, nt, &tied, side, NULL),
                     FP_OK);
    ck_assert_msg(tied <= m->peak_bytes, "node %d: tied %llu over peak %llu", x,
                  (unsigned long long)tied, (unsigned long long)m->peak_bytes);
    ck_assert_int_eq(side[x], FP_PEAK_IN);
    E->gains += tied > plain;
    /* some nodes placed on their side of x's step in this plan (at it:
     * either side) */
    int8_t place[MAXN];
    uint64_t placed, bits = tu_next(&E->rng);
    for (int32_t v = 0; v < n; v++)
      place[v] = !(bits >> (2 * v) & 1)    ? 0
                 : step[v] < step[x]       ? FP_PEAK_BEFORE
                 : step[v] > step[x]       ? FP_PEAK_AFTER
                 : bits >> (2 * v + 1) & 1 ? FP_PEAK_BEFORE
                                           : FP_PEAK_AFTER;
    ck_assert_int_eq(fp_peak_cuts_placed(h, whole ? grp : &x, whole ? m_x : 1,
                                         ties, nt, place, &placed, NULL, NULL),
                     FP_OK);
    ck_assert_msg(
        placed <= m->peak_bytes, "node %d: placed %llu over peak %llu", x,
        (unsigned long long)placed, (unsigned long long)m->peak_bytes);
    E->tight += placed > tied;
  }
  E->plans++;
  fp_peak_cuts_destroy(h);
}

START_TEST(tied_cut_below_every_plan_with_its_ties) {
  int32_t gains, plans, placed;
  visit_tiny_graphs(_i, 2246822519u, check_ties, &gains, &plans, &placed);
  ck_assert_int_gt(plans, 1000);
  ck_assert_msg(gains > 10, "ties raise the cut on %d graphs", gains);
  ck_assert_msg(placed > 10, "placements raise it on %d graphs", placed);
}
END_TEST

/* r and p fuse; q, an extern, reads r's s and the input x.  Apart, p
 * would read s again (+100 bytes), so every plan of least traffic groups
 * r with p, before q: at q's step x, s, o and y are live (2200).  The
 * plain cut at q runs p after it (no o: 2100); tied to r, an ancestor of
 * q, p runs before (mobilenetv3_large_100.bwd's op11, tied to op10). */
static const char tie_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'tie',"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true,"
    "   'freeable': true}, {'name': 's', 'bytes': 100},"
    "  {'name': 'o', 'bytes': 100}, {'name': 'y', 'bytes': 1000}],"
    " 'nodes': ["
    "  {'name': 'r', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['x'],"
    "   'writes': ['s']},"
    "  {'name': 'p', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['s'],"
    "   'writes': ['o']},"
    "  {'name': 'q', 'kind': 'extern', 'reads': ['x', 's'],"
    "   'writes': ['y']}],"
    " 'outputs': ['o', 'y']}";

START_TEST(tie_keeps_a_fused_partner_before_the_step) {
  fp_graph *g = tu_graph(tie_json);
  fp_peak_cuts *h;
  int32_t q = 2;
  uint64_t plain, tied;
  int8_t side[3];
  fp_peak_tie tie = {1, 0};
  ck_assert_int_eq(fp_peak_cuts_create(g, 0, &h, NULL), FP_OK);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &q, 1, NULL, 0, &plain, side, NULL),
                   FP_OK);
  ck_assert_uint_eq(plain, 2100);
  ck_assert_int_eq(side[1], FP_PEAK_AFTER);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &q, 1, &tie, 1, &tied, side, NULL),
                   FP_OK);
  ck_assert_uint_eq(tied, 2200);
  ck_assert_int_eq(side[1], FP_PEAK_BEFORE);
  /* tied to q itself, p joins q's group: o is written at q's step */
  tie = (fp_peak_tie){1, 2};
  ck_assert_int_eq(fp_peak_cuts_tied(h, &q, 1, &tie, 1, &tied, side, NULL),
                   FP_OK);
  ck_assert_uint_eq(tied, 2200);
  ck_assert_int_eq(side[1], FP_PEAK_IN);
  /* the solver proves the tie and reaches the least peak of least traffic */
  fp_plan *p = tu_plan(g, "r p | q");
  fp_metrics m = tu_eval(g, p);
  ck_assert_uint_eq(m.peak_bytes, 2200);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  double b = NAN;
  ck_assert_int_eq(solver_forced_peak_bound(g, &prm, p, &m, 5.0, &b, NULL),
                   FP_OK);
  ck_assert_double_eq(b, 2200);
  fp_plan_destroy(p);
  fp_peak_cuts_destroy(h);
  fp_graph_destroy(g);
}
END_TEST

/* a and b are free at the extern q's step (no path to or from q).  Alone,
 * the cut at q runs a before it (the input i is freed for a 1-byte
 * output) and b after it (its output o is not yet written): x, y and r
 * live, 2001.  Tied, a and b run at one step, so one side holds both:
 * before, r and o (2101); after, i (2100).  Neither is tied to a node
 * with a side, so only the network's tie edges keep them together. */
static const char free_tie_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'free_tie',"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true,"
    "   'freeable': true}, {'name': 'i', 'bytes': 100, 'input': true,"
    "   'freeable': true}, {'name': 'r', 'bytes': 1},"
    "  {'name': 'o', 'bytes': 100}, {'name': 'y', 'bytes': 1000}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['i'],"
    "   'writes': ['r']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['x'],"
    "   'writes': ['o']},"
    "  {'name': 'q', 'kind': 'extern', 'reads': ['x'], 'writes': ['y']}],"
    " 'outputs': ['r', 'o', 'y']}";

START_TEST(tie_keeps_two_free_nodes_on_one_side) {
  fp_graph *g = tu_graph(free_tie_json);
  fp_peak_cuts *h;
  int32_t q = 2;
  uint64_t plain, tied;
  int8_t side[3];
  fp_peak_tie tie = {0, 1};
  ck_assert_int_eq(fp_peak_cuts_create(g, 0, &h, NULL), FP_OK);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &q, 1, NULL, 0, &plain, side, NULL),
                   FP_OK);
  ck_assert_uint_eq(plain, 2001);
  ck_assert_int_eq(side[0], FP_PEAK_BEFORE);
  ck_assert_int_eq(side[1], FP_PEAK_AFTER);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &q, 1, &tie, 1, &tied, side, NULL),
                   FP_OK);
  ck_assert_uint_eq(tied, 2100);
  ck_assert_int_eq(side[0], side[1]);
  fp_peak_cuts_destroy(h);
  fp_graph_destroy(g);
}
END_TEST

/* Externs only (every plan moves the same traffic): a writes b, read by
 * r (a 4-byte output), c and nothing else; c writes d for the output e.
 * The least peak is 74 (a r c d, or a c r d: b, o and d live at one
 * step).  The cut at c runs r after it (70); a plan that does so keeps
 * b live while d, or e, is (volo_d1_224.bwd's op2 after op4): the split
 * on r against c, then r against d, proves 74. */
static const char order_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'order',"
    " 'buffers': [{'name': 'x', 'bytes': 10, 'input': true,"
    "   'freeable': true}, {'name': 'b', 'bytes': 50},"
    "  {'name': 'o', 'bytes': 4}, {'name': 'd', 'bytes': 20},"
    "  {'name': 'e', 'bytes': 5}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'extern', 'reads': ['x'], 'writes': ['b']},"
    "  {'name': 'r', 'kind': 'extern', 'reads': ['b'], 'writes': ['o']},"
    "  {'name': 'c', 'kind': 'extern', 'reads': ['b'], 'writes': ['d']},"
    "  {'name': 'd', 'kind': 'extern', 'reads': ['d'], 'writes': ['e']}],"
    " 'outputs': ['o', 'e']}";

START_TEST(order_split_proves_an_early_output) {
  fp_graph *g = tu_graph(order_json);
  enum_state E;
  memset(&E, 0, sizeof E);
  E.limit = UINT64_MAX;
  E.best_traffic = E.best_peak = UINT64_MAX;
  E.visit = find_optimum;
  enumerate(&E, g);
  ck_assert_uint_eq(E.best_peak, 74);
  uint64_t structural;
  ck_assert_int_eq(fp_peak_bound(g, 0, 0, &structural, NULL), FP_OK);
  ck_assert_uint_eq(structural, 70);
  fp_plan *p = tu_plan(g, "a | r | c | d");
  fp_metrics m = tu_eval(g, p);
  ck_assert_uint_eq(m.peak_bytes, 74);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  double b = NAN;
  ck_assert_int_eq(solver_forced_peak_bound(g, &prm, p, &m, 5.0, &b, NULL),
                   FP_OK);
  ck_assert_double_eq(b, 74);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* fp_peak_cuts: bad arguments are FP_EARG; destroy(NULL) is a no-op. */
START_TEST(peak_cuts_arguments) {
  fp_graph *g = tu_chain_graph(3, 100);
  fp_peak_cuts *h;
  int32_t x = 0, bad = 3;
  uint64_t out;
  fp_peak_tie tie = {0, 7};
  fp_error err;
  ck_assert_int_eq(fp_peak_cuts_create(NULL, 0, &h, &err), FP_EARG);
  ck_assert_ptr_null(h);
  ck_assert_int_eq(fp_peak_cuts_create(g, 0, NULL, &err), FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_create(g, 0, &h, &err), FP_OK);
  ck_assert_int_eq(fp_peak_cuts_tied(NULL, &x, 1, NULL, 0, &out, NULL, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &x, 1, NULL, 0, NULL, NULL, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &x, 0, NULL, 0, &out, NULL, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &bad, 1, NULL, 0, &out, NULL, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &x, 1, &tie, 1, &out, NULL, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &x, 1, NULL, 1, &out, NULL, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_cuts_tied(h, &x, 1, NULL, 0, &out, NULL, &err),
                   FP_OK);
  ck_assert_uint_ge(out, fp_graph_resident_bytes(g));
  fp_peak_cuts_destroy(h);
  fp_peak_cuts_destroy(NULL);
  fp_graph_destroy(g);
}
END_TEST

/* Bad arguments are FP_EARG; no groups is no work. */
START_TEST(group_bound_arguments) {
  fp_graph *g = tu_chain_graph(3, 100);
  uint64_t out[1];
  int32_t nodes[1] = {0}, start[2] = {0, 1};
  fp_error err;
  ck_assert_int_eq(fp_peak_group_bounds(NULL, 0, nodes, start, 1, out, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_group_bounds(g, 0, nodes, start, 1, NULL, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_group_bounds(g, 0, NULL, start, 1, out, &err),
                   FP_EARG);
  ck_assert_int_eq(fp_peak_group_bounds(g, 0, NULL, NULL, 0, out, &err), FP_OK);
  ck_assert_int_eq(fp_peak_group_bounds(g, 0, nodes, start, 1, out, &err),
                   FP_OK);
  ck_assert_uint_ge(out[0], fp_graph_resident_bytes(g));
  fp_graph_destroy(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("forced");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, group_bound_below_every_plan_with_the_group, 0, 2);
  tcase_add_loop_test(tc, forced_bound_below_lexicographic_optimum, 0, 2);
  tcase_add_loop_test(tc, tied_cut_below_every_plan_with_the_ties, 0, 2);
  tcase_add_test(tc, group_bound_arguments);
  tcase_add_test(tc, peak_cuts_group_arguments);
  tcase_add_test(tc, group_cap_leaves_out_takeovers_inside_the_group);
  tcase_add_loop_test(tc, tied_cut_below_every_plan_with_its_ties, 0, 2);
  tcase_add_test(tc, tie_keeps_a_fused_partner_before_the_step);
  tcase_add_test(tc, tie_keeps_two_free_nodes_on_one_side);
  tcase_add_test(tc, peak_cuts_arguments);
  tcase_add_test(tc, order_split_proves_an_early_output);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(suite());
}
