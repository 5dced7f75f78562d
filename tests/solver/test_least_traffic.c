/*
 * test_least_traffic.c -- the exact least-traffic search (solver/
 * least_traffic.c): on random tiny graphs its figure equals the traffic
 * optimum of the exhaustive reference and its plan is legal with that
 * figure; on generated graphs no heuristic plan or ILP plan moves less;
 * an exhausted budget, a passed deadline and a graph past its size are
 * outcomes (not solved), never a wrong figure; the search below an upper
 * limit finds the optimum when it is under the limit and proves the limit
 * when it is not; the cluster search seeded by greedy (cluster_graph.h)
 * equals the plain one; with peaks (a peak limit, least peak among the
 * least-traffic plans) and with auto's guided search it equals the
 * exhaustive lexicographic optimum.  With a priced step (at_node) it
 * equals a brute-force enumeration of every legal plan, and the step
 * bound of bound.c (solver_step_bound) never exceeds the exhaustive least
 * traffic within the eager peak, while it rises above the unlimited
 * least traffic on some graphs, with in-place pairs too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gen/generate.h"
#include "heuristics/heuristics.h"
#include "model/util.h"
#include "solver/bound/bound.h"
#include "solver/bound/cluster_graph.h"
#include "solver/bound/least_traffic.h"
#include "solver/solver.h"
#include "tests/testutil.h"

/* The search with a generous budget; it must succeed.  Checks that a
 * solved search's plan is legal and evaluates to its figure. */
static solver_lt_result search(const fp_graph *g, int64_t budget,
                               double seconds) {
  fp_plan *p = fp_plan_create();
  solver_lt_result r;
  fp_error err;
  fp_status st =
      solver_least_traffic(g, fp_graph_max_fusion_size(g), budget,
                           fp_clock_now() + seconds, NULL, p, &r, &err);
  ck_assert_msg(st == FP_OK, "solver_least_traffic: %s (%s)",
                fp_status_name(st), err.msg);
  if (r.solved) {
    fp_metrics m = tu_eval(g, p);
    ck_assert_uint_eq(m.traffic_bytes, r.traffic);
  }
  fp_plan_destroy(p);
  return r;
}

/* The least traffic of any legal plan within peak limit `limit` (0: the
 * eager peak; FP_NO_LIMIT: none), by the exhaustive reference. */
static uint64_t exhaustive_traffic(const fp_graph *g, uint64_t limit) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_TRAFFIC;
  prm.limits.peak = limit;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_error err;
  ck_assert_msg(fp_exhaustive(g, &prm, p, &m, &err) == FP_OK, "%s", err.msg);
  fp_plan_destroy(p);
  return m.traffic_bytes;
}

START_TEST(equals_exhaustive_on_random_graphs) {
  tu_rng r = {20261203};
  int32_t grouped = 0;
  for (int i = 0; i < 500; i++) {
    fp_graph *g = tu_random_graph(&r, 1, FP_EXHAUSTIVE_MAX_NODES);
    solver_lt_result res = search(g, 1000000000, 60);
    ck_assert_msg(res.solved, "graph %d not solved", i);
    uint64_t want = exhaustive_traffic(g, FP_NO_LIMIT);
    ck_assert_msg(res.traffic == want, "graph %d: %llu, exhaustive %llu", i,
                  (unsigned long long)res.traffic, (unsigned long long)want);
    fp_metrics eager;
    fp_plan *e = fp_plan_create();
    fp_error err;
    ck_assert(fp_plan_make_eager(e, g, &err) == FP_OK);
    eager = tu_eval(g, e);
    grouped += res.traffic < eager.traffic_bytes;
    fp_plan_destroy(e);
    fp_graph_destroy(g);
  }
  /* The property means something only if fusion pays on many graphs. */
  ck_assert_int_gt(grouped, 150);
}
END_TEST

/* Generated graphs past the exhaustive size: no heuristic plan and no
 * plan of auto moves less than the figure the search proves. */
START_TEST(no_plan_beats_it_on_generated_graphs) {
  static const struct {
    int family;
    int32_t size;
  } cases[] = {{FP_GEN_TRANSFORMER, 20}, {FP_GEN_CONVNET, 24},
               {FP_GEN_MLP, 20},         {FP_GEN_RANDOM, 14},
               {FP_GEN_TRANSFORMER, 36}, {FP_GEN_CONVNET, 50}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fp_graph *g = tu_generated(cases[c].family, cases[c].size, 1);
    solver_lt_result res = search(g, 1000000000, 120);
    ck_assert_msg(res.solved, "case %zu not solved", c);
    for (int method = 0; method < FP_METHOD_COUNT_; method++) {
      fp_fusion_params fus;
      fp_fusion_params_init(&fus, (fp_method)method);
      fp_plan *p = fp_plan_create();
      fp_error err;
      ck_assert(fp_fuse(g, &fus, p, &err) == FP_OK);
      ck_assert_uint_ge(tu_eval(g, p).traffic_bytes, res.traffic);
      fp_plan_destroy(p);
    }
    fp_ilp_params prm;
    fp_ilp_params_init(&prm);
    prm.limits.peak = FP_NO_LIMIT;
    prm.time_limit_s = 2;
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    fp_error err;
    ck_assert_msg(fp_auto_solve(g, &prm, p, &m, &err) == FP_OK, "%s", err.msg);
    ck_assert_uint_ge(m.traffic_bytes, res.traffic);
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

START_TEST(limits_are_outcomes) {
  fp_graph *g = tu_generated(FP_GEN_RANDOM, 36, 2);
  solver_lt_result res = search(g, 1000, 60); /* far too small a budget */
  ck_assert(!res.solved);
  ck_assert_int_gt(res.work, 1000);
  res = search(g, 1000000000, -1); /* the deadline has passed */
  ck_assert(!res.solved);
  fp_graph_destroy(g);
  /* Past 64 nodes the search does not start. */
  g = tu_chain_graph(SOLVER_LT_MAX_NODES + 1, 64);
  res = search(g, 1000000000, 60);
  ck_assert(!res.solved && res.work == 0);
  fp_graph_destroy(g);
  /* At 64 it does: a chain's least traffic is its input read once and its
   * output written once, the rest fused away. */
  g = tu_chain_graph(SOLVER_LT_MAX_NODES, 64);
  res = search(g, 1000000000, 60);
  ck_assert(res.solved);
  ck_assert_uint_eq(res.traffic, 2 * 64);
  fp_graph_destroy(g);
}
END_TEST

/* The search below `upper` on g; its plan, when found, evaluates to its
 * figure and is under the limit. */
static solver_lt_result search_below(const fp_graph *g, uint64_t upper) {
  fp_plan *p = fp_plan_create();
  solver_lt_result r;
  fp_error err;
  fp_status st = solver_least_traffic_below(
      g, fp_graph_max_fusion_size(g), upper, 1000000000, fp_clock_now() + 60,
      NULL, p, &r, &err);
  ck_assert_msg(st == FP_OK, "%s", err.msg);
  ck_assert(r.solved);
  if (r.found) {
    ck_assert_uint_lt(r.traffic, upper);
    ck_assert_uint_eq(tu_eval(g, p).traffic_bytes, r.traffic);
  } else {
    ck_assert_uint_eq(r.traffic, upper);
  }
  fp_plan_destroy(p);
  return r;
}

/* Limits just above, at and below the exhaustive optimum: found with the
 * optimum above it, not found (the limit proved) at or below it; the
 * greedy-seeded cluster search finds the optimum too, with a plan. */
START_TEST(below_an_upper_limit) {
  tu_rng r = {20261205};
  for (int i = 0; i < 300; i++) {
    fp_graph *g = tu_random_graph(&r, 1, FP_EXHAUSTIVE_MAX_NODES);
    uint64_t opt = exhaustive_traffic(g, FP_NO_LIMIT);
    solver_lt_result res = search_below(g, opt + 1);
    ck_assert_msg(res.found && res.traffic == opt, "graph %d: %llu vs %llu", i,
                  (unsigned long long)res.traffic, (unsigned long long)opt);
    res = search_below(g, opt);
    ck_assert_msg(!res.found, "graph %d: found under the optimum", i);
    if (opt > 0)
      ck_assert(!search_below(g, opt - 1).found);
    fp_plan *p = fp_plan_create();
    fp_error err;
    ck_assert(cluster_least_traffic(g, fp_graph_max_fusion_size(g), 1000000000,
                                    fp_clock_now() + 60, NULL, p, &res,
                                    &err) == FP_OK);
    ck_assert(res.solved && res.found && res.traffic == opt);
    ck_assert_uint_eq(tu_eval(g, p).traffic_bytes, opt);
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

/* A generated graph past the exhaustive size: the search below the plain
 * search's optimum + 1 finds it, in fewer groups; at the optimum it
 * proves that no plan moves less. */
START_TEST(below_prunes_on_a_generated_graph) {
  fp_graph *g = tu_generated(FP_GEN_RANDOM, 30, 1);
  solver_lt_result full = search(g, 2000000000, 300);
  ck_assert(full.solved);
  solver_lt_result res = search_below(g, full.traffic + 1);
  ck_assert(res.found && res.traffic == full.traffic);
  ck_assert_int_lt(res.work, full.work);
  ck_assert(!search_below(g, full.traffic).found);
  fp_graph_destroy(g);
}
END_TEST

/* The lexicographic optimum (traffic, then peak) within peak limit
 * `limit` (FP_NO_LIMIT: none) by the exhaustive reference into *want;
 * false when no plan fits. */
static bool exhaustive_lex(const fp_graph *g, uint64_t limit,
                           fp_metrics *want) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_TRAFFIC;
  prm.limits.peak = limit;
  fp_plan *p = fp_plan_create();
  fp_error err;
  fp_status st = fp_exhaustive(g, &prm, p, want, &err);
  ck_assert_msg(st == FP_OK || st == FP_EINFEASIBLE, "%s", err.msg);
  fp_plan_destroy(p);
  return st == FP_OK;
}

/* The search with peaks (solver_lt_limits: a peak limit, least peak among
 * the plans of least traffic) equals the exhaustive lexicographic optimum
 * on random tiny graphs, under no limit, the eager peak, and a limit just
 * under the unlimited optimum's peak (often infeasible, or dearer); its
 * plan evaluates to its figures and fits the limit. */
START_TEST(lexicographic_under_peak_limits) {
  tu_rng r = {20261206};
  int32_t limited = 0, infeasible = 0;
  for (int i = 0; i < 300; i++) {
    fp_graph *g = tu_random_graph(&r, 1, FP_EXHAUSTIVE_MAX_NODES);
    fp_metrics free_opt, want;
    ck_assert(exhaustive_lex(g, FP_NO_LIMIT, &free_opt));
    fp_plan *e = fp_plan_create();
    fp_error err;
    ck_assert(fp_plan_make_eager(e, g, &err) == FP_OK);
    uint64_t limits[3] = {FP_NO_LIMIT, tu_eval(g, e).peak_bytes,
                          free_opt.peak_bytes - 1};
    fp_plan_destroy(e);
    for (int j = 0; j < 3; j++) {
      bool fits = exhaustive_lex(g, limits[j], &want);
      solver_lt_limits lim;
      solver_lt_limits_init(&lim);
      lim.peak_limit = limits[j];
      lim.by_peak = true;
      fp_plan *p = fp_plan_create();
      solver_lt_result res;
      ck_assert_msg(solver_least_traffic_guided(
                        g, fp_graph_max_fusion_size(g), &lim, NULL, 1000000000,
                        fp_clock_now() + 60, NULL, p, &res, &err) == FP_OK,
                    "%s", err.msg);
      ck_assert(res.solved);
      ck_assert_msg(res.found == fits, "graph %d limit %d: found %d, fits %d",
                    i, j, res.found, fits);
      if (fits) {
        fp_metrics m = tu_eval(g, p);
        ck_assert_msg(
            res.traffic == want.traffic_bytes && res.peak == want.peak_bytes,
            "graph %d limit %d: %llu/%llu, exhaustive %llu/%llu", i, j,
            (unsigned long long)res.traffic, (unsigned long long)res.peak,
            (unsigned long long)want.traffic_bytes,
            (unsigned long long)want.peak_bytes);
        ck_assert_uint_eq(m.traffic_bytes, res.traffic);
        ck_assert_uint_eq(m.peak_bytes, res.peak);
        ck_assert_uint_le(m.peak_bytes, limits[j]);
        limited += j > 0 && want.traffic_bytes > free_opt.traffic_bytes;
      }
      infeasible += !fits;
      fp_plan_destroy(p);
    }
    fp_graph_destroy(g);
  }
  /* Meaningful only if the limits bind on some graphs and not on all. */
  ck_assert_int_gt(limited, 10);
  ck_assert_int_gt(infeasible, 10);
}
END_TEST

/* auto's exact search (solver_exact_traffic: the guide of the best
 * partition, the graph with the pairs the limit keeps apart, rising
 * limits) on random tiny graphs, under no limit and the eager peak:
 * below the exhaustive optimum + 1 it finds the lexicographic optimum,
 * with a bound no higher; at the optimum it proves it (found nothing,
 * bound = the optimum).  Also, the guide's parts and its bound on a
 * generated graph: at most the least traffic, and they prune. */
START_TEST(exact_search_with_guide) {
  tu_rng r = {20261207};
  for (int i = 0; i < 200; i++) {
    fp_graph *g = tu_random_graph(&r, 1, FP_EXHAUSTIVE_MAX_NODES);
    for (int j = 0; j < 2; j++) {
      fp_ilp_params prm;
      fp_ilp_params_init(&prm);
      prm.limits.peak = j == 0 ? FP_NO_LIMIT : 0;
      fp_metrics want;
      uint64_t limit = FP_NO_LIMIT;
      if (j == 1) {
        fp_plan *e = fp_plan_create();
        fp_error err;
        ck_assert(fp_plan_make_eager(e, g, &err) == FP_OK);
        limit = tu_eval(g, e).peak_bytes;
        fp_plan_destroy(e);
      }
      ck_assert(exhaustive_lex(g, limit, &want)); /* eager fits */
      for (int at = 0; at < 2; at++) {
        uint64_t upper = want.traffic_bytes + (at == 0 ? 1 : 0), lb = 0;
        fp_plan *p = fp_plan_create();
        solver_lt_result res;
        fp_error err;
        ck_assert_msg(solver_exact_traffic(g, &prm, upper, 60, p, &res, &lb,
                                           &err) == FP_OK,
                      "%s", err.msg);
        ck_assert(res.solved);
        ck_assert_msg(res.found == (at == 0), "graph %d limit %d", i, j);
        ck_assert_uint_le(lb, want.traffic_bytes);
        if (at == 0) {
          fp_metrics m = tu_eval(g, p);
          ck_assert_msg(m.traffic_bytes == want.traffic_bytes &&
                            m.peak_bytes == want.peak_bytes,
                        "graph %d limit %d: %llu/%llu, exhaustive %llu/%llu", i,
                        j, (unsigned long long)m.traffic_bytes,
                        (unsigned long long)m.peak_bytes,
                        (unsigned long long)want.traffic_bytes,
                        (unsigned long long)want.peak_bytes);
        } else
          ck_assert_uint_eq(lb, want.traffic_bytes);
        fp_plan_destroy(p);
      }
    }
    fp_graph_destroy(g);
  }
}
END_TEST

/* On a generated graph past the exhaustive size: the guided search below
 * the plain optimum + 1 finds it in fewer groups than the unguided one,
 * and the guide's bound is at most the optimum. */
START_TEST(guide_prunes_on_a_generated_graph) {
  fp_graph *g = tu_generated(FP_GEN_RANDOM, 30, 1);
  solver_lt_result full = search(g, 2000000000, 300);
  ck_assert(full.solved);
  solver_lt_result plain = search_below(g, full.traffic + 1), res;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  uint64_t lb = 0;
  fp_plan *p = fp_plan_create();
  fp_error err;
  ck_assert(solver_exact_traffic(g, &prm, full.traffic + 1, 60, p, &res, &lb,
                                 &err) == FP_OK);
  ck_assert(res.solved && res.found && res.traffic == full.traffic);
  ck_assert_uint_le(lb, full.traffic);
  ck_assert_int_lt(res.work, plain.work);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Nodes of the brute force's graphs: every ordered partition is tried. */
#define BRUTE_NODES 7

/* The brute force over the legal plans of a tiny graph. */
typedef struct brute {
  const fp_graph *g;
  int32_t n, k, x;
  uint64_t weight, best;
  int32_t groups[BRUTE_NODES];
  int32_t depth;
} brute;

/* Whether the nodes of mask s can run as one group after those of done:
 * at most k, pairwise compatible, every writer of what they read run
 * before or in it. */
static bool legal_group(const brute *B, uint32_t done, uint32_t s) {
  if (__builtin_popcount(s) > B->k)
    return false;
  for (int32_t v = 0; v < B->n; v++) {
    if (!(s >> v & 1))
      continue;
    const fp_node *nd = fp_graph_node(B->g, v);
    for (int32_t a = 0; a < nd->n_reads; a++) {
      int32_t w = fp_graph_buffer(B->g, nd->reads[a].buffer)->writer;
      if (w >= 0 && !((done | s) >> w & 1))
        return false;
    }
    for (int32_t u = v + 1; u < B->n; u++)
      if ((s >> u & 1) && !fp_graph_compatible(B->g, v, u))
        return false;
  }
  return true;
}

/* The priced cost of the plan in B->groups: traffic + weight x the live
 * bytes above the resident ones at the step holding node x. */
static uint64_t priced(const brute *B) {
  fp_plan *p = fp_plan_create();
  fp_error err;
  fp_step tl[BRUTE_NODES];
  fp_metrics m;
  int32_t xs = -1;
  for (int32_t t = 0; t < B->depth; t++) {
    int32_t nodes[BRUTE_NODES], len = 0;
    for (int32_t v = 0; v < B->n; v++)
      if (B->groups[t] >> v & 1)
        nodes[len++] = v;
    xs = B->groups[t] >> B->x & 1 ? t : xs;
    ck_assert(fp_plan_add_group(p, nodes, len, &err) == FP_OK);
  }
  ck_assert_msg(fp_plan_eval(B->g, p, &m, tl, &err) == FP_OK, "%s", err.msg);
  fp_plan_destroy(p);
  return m.traffic_bytes + B->weight * (tl[xs].live_bytes - m.resident_bytes);
}

/* Every legal sequence of groups from `done` on. */
static void enumerate(brute *B, uint32_t done) {
  uint32_t all = (1u << B->n) - 1, left = all & ~done;
  if (!left) {
    uint64_t c = priced(B);
    B->best = c < B->best ? c : B->best;
    return;
  }
  for (uint32_t s = left; s; s = (s - 1) & left) /* every subset of left */
    if (legal_group(B, done, s)) {
      B->groups[B->depth++] = (int32_t)s;
      enumerate(B, done | s);
      B->depth--;
    }
}

/* The priced search (at_node, at_weight) equals the brute force on 200
 * random graphs of at most BRUTE_NODES nodes, for a random node and
 * weights 1 and 3; its plan evaluates to its figure; the price changes
 * the answer on some graphs. */
START_TEST(priced_search_equals_brute_force) {
  tu_rng r = {20261207};
  int32_t priced_more = 0;
  for (int i = 0; i < 200; i++) {
    fp_graph *g = tu_random_graph(&r, 1, BRUTE_NODES);
    if (i % 4 == 3) /* the priced step's live bytes count workspaces */
      g = tu_add_workspaces(g, &r);
    int32_t n = fp_graph_node_count(g);
    brute B = {g,
               n,
               fp_graph_max_fusion_size(g),
               (int32_t)tu_below(&r, n),
               i % 2 ? 3 : 1,
               UINT64_MAX,
               {0},
               0};
    enumerate(&B, 0);
    solver_lt_limits lim;
    solver_lt_limits_init(&lim);
    lim.at_node = B.x;
    lim.at_weight = B.weight;
    solver_lt_result res, plain;
    fp_error err;
    ck_assert_msg(solver_least_traffic_guided(g, B.k, &lim, NULL, 1000000000,
                                              fp_clock_now() + 60, NULL, NULL,
                                              &res, &err) == FP_OK,
                  "%s", err.msg);
    ck_assert(res.solved && res.found);
    ck_assert_msg(res.traffic == B.best, "graph %d: search %llu, brute %llu", i,
                  (unsigned long long)res.traffic, (unsigned long long)B.best);
    ck_assert(solver_least_traffic(g, B.k, 1000000000, fp_clock_now() + 60,
                                   NULL, NULL, &plain, &err) == FP_OK);
    priced_more += res.traffic > plain.traffic;
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(priced_more, 20);
}
END_TEST

/* The step bound of g (graph number i) within the eager peak, at every
 * node and weights 1 and 2, must be at most the exhaustive least traffic
 * within it.  Returns whether it is above the least traffic of every
 * plan (no limit) at some node, which only the limit can explain. */
static bool step_bound_checked(const fp_graph *g, int i) {
  uint64_t opt = exhaustive_traffic(g, 0);
  uint64_t free_opt = exhaustive_traffic(g, FP_NO_LIMIT);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm); /* objective traffic, the eager peak */
  bool above = false;
  for (int32_t x = 0; x < fp_graph_node_count(g); x++)
    for (uint64_t w = 1; w <= 2; w++) {
      double b = -1;
      fp_error err;
      ck_assert_msg(solver_step_bound(g, &prm, x, w, INFINITY, 10, &b, &err) ==
                        FP_OK,
                    "%s", err.msg);
      ck_assert_msg(b >= 0 && b <= (double)opt,
                    "graph %d node %d weight %llu: bound %.0f > %llu", i, x,
                    (unsigned long long)w, b, (unsigned long long)opt);
      above |= b > (double)free_opt;
    }
  return above;
}

/* step_bound_checked on 150 graphs of make(r, min_nodes, max): only
 * graphs with in-place pairs when pairs_only.  Returns on how many the
 * bound was above the unlimited least traffic. */
static int32_t step_bound_on_graphs(uint64_t seed,
                                    fp_graph *(*make)(tu_rng *, int32_t,
                                                      int32_t),
                                    int32_t min_nodes, bool pairs_only) {
  tu_rng r = {seed};
  int32_t graphs = 0, above_free = 0;
  for (int i = 0; graphs < 150; i++) {
    fp_graph *g = make(&r, min_nodes, FP_EXHAUSTIVE_MAX_NODES);
    if (!pairs_only || fp_graph_inplace_count(g) > 0) {
      graphs++;
      above_free += step_bound_checked(g, i);
    }
    fp_graph_destroy(g);
  }
  return above_free;
}

/* On 150 random tiny graphs, at every node and weights 1 and 2, the
 * step bound within the eager peak is at most the exhaustive least
 * traffic within it; on some graphs it is above the least traffic of
 * every plan (no limit), which only the limit can explain. */
START_TEST(step_bound_at_most_the_optimum) {
  ck_assert_int_gt(step_bound_on_graphs(20261208, tu_random_graph, 1, false),
                   0);
}
END_TEST

/* The step bound on random tiny graphs with in-place pairs (takeovers
 * save live bytes at the priced step; the clusters take their credit):
 * at every node and weights 1 and 2, at most the exhaustive least
 * traffic within the eager peak, and above the unlimited least traffic
 * on some graphs (before the credit it said nothing on such graphs). */
START_TEST(step_bound_with_inplace_pairs) {
  ck_assert_int_gt(step_bound_on_graphs(20261209, tu_random_graph, 2, true), 0);
}
END_TEST

/* The same on optimizer-update graphs, where a pair often applies with a
 * reader of its buffer in the taker's group (the fused-reader rule of
 * docs/cost-model.md, "In-place kernels"): the credit still keeps the
 * bound at or below the least traffic within the eager peak. */
START_TEST(step_bound_with_fused_readers) {
  step_bound_on_graphs(20261210, tu_random_update_graph, 2, false);
}
END_TEST

/* tu_random_graph's graphs with workspaces (docs/cost-model.md#workspaces). */
static fp_graph *workspace_graph(tu_rng *r, int32_t min_nodes,
                                 int32_t max_nodes) {
  return tu_add_workspaces(tu_random_graph(r, min_nodes, max_nodes), r);
}

/* The step bound on random tiny graphs with workspaces (the priced node's
 * workspace is live at its step, beside the clusters' buffers): at every
 * node and weights 1 and 2, at most the exhaustive least traffic within
 * the eager peak, and above the unlimited least traffic on some. */
START_TEST(step_bound_with_workspaces) {
  ck_assert_int_gt(step_bound_on_graphs(20261211, workspace_graph, 1, false),
                   0);
}
END_TEST

/* No limit, another objective or a node out of range: bound 0. */
START_TEST(step_bound_nothing_to_say) {
  tu_rng r = {7};
  fp_graph *g = tu_random_graph(&r, 5, 8);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  fp_error err;
  double b = -1;
  prm.limits.peak = FP_NO_LIMIT;
  ck_assert(solver_step_bound(g, &prm, 0, 1, INFINITY, 10, &b, &err) == FP_OK);
  ck_assert(b == 0);
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_PEAK;
  ck_assert(solver_step_bound(g, &prm, 0, 1, INFINITY, 10, &b, &err) == FP_OK);
  ck_assert(b == 0);
  fp_ilp_params_init(&prm);
  ck_assert(solver_step_bound(g, &prm, fp_graph_node_count(g), 1, INFINITY, 10,
                              &b, &err) == FP_OK);
  ck_assert(b == 0);
  fp_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("least_traffic");
  TCase *tc = tcase_create("exact least traffic");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, equals_exhaustive_on_random_graphs);
  tcase_add_test(tc, no_plan_beats_it_on_generated_graphs);
  tcase_add_test(tc, limits_are_outcomes);
  tcase_add_test(tc, below_an_upper_limit);
  tcase_add_test(tc, below_prunes_on_a_generated_graph);
  tcase_add_test(tc, lexicographic_under_peak_limits);
  tcase_add_test(tc, exact_search_with_guide);
  tcase_add_test(tc, guide_prunes_on_a_generated_graph);
  tcase_add_test(tc, priced_search_equals_brute_force);
  tcase_add_test(tc, step_bound_at_most_the_optimum);
  tcase_add_test(tc, step_bound_with_inplace_pairs);
  tcase_add_test(tc, step_bound_with_fused_readers);
  tcase_add_test(tc, step_bound_with_workspaces);
  tcase_add_test(tc, step_bound_nothing_to_say);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
