/*
 * test_pareto.c -- the traffic-vs-peak front (solver/planner/pareto.c).
 *
 * On random tiny graphs the front is checked against fp_exhaustive solved
 * here at each point's limit: every point is the least traffic under its
 * limit, the first limit is the lowest peak, the last point the least
 * traffic; the exhaustive and the ILP sweeps agree; the dominated flags
 * match the points.  On a short budget (ILP) and with auto, every point
 * still meets its limit and traffic never rises along the sweep.  Bad
 * arguments are FP_EARG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/generate.h"
#include "model/util.h"
#include "solver/planner.h"
#include "solver/solver.h"
#include "tests/testutil.h"

enum { NPOINTS = 4 };

/* fp_exhaustive's metrics for `objective` under `peak_limit` (no traffic
 * limit); fails the test when it does not solve. */
static fp_metrics exhaustive_at(const fp_graph *g, fp_objective objective,
                                uint64_t peak_limit) {
  fp_ilp_params prm;
  fp_metrics m;
  fp_error err;
  fp_plan *p = fp_plan_create();
  fp_ilp_params_init(&prm);
  prm.objective = objective;
  prm.limits.peak = peak_limit;
  ck_assert_msg(fp_exhaustive(g, &prm, p, &m, &err) == FP_OK, "%s", err.msg);
  fp_plan_destroy(p);
  return m;
}

/* Point i is dominated when another point is at least as good on both
 * axes and not equal to it on both. */
static void check_dominated(const fp_pareto_point *pts, int n) {
  int kept = 0;
  for (int i = 0; i < n; i++) {
    int dom = 0;
    for (int j = 0; j < n; j++) {
      const fp_metrics *a = &pts[i].m, *b = &pts[j].m;
      int no_worse = b->peak_bytes <= a->peak_bytes &&
                     b->traffic_bytes <= a->traffic_bytes;
      int same = b->peak_bytes == a->peak_bytes &&
                 b->traffic_bytes == a->traffic_bytes;
      dom |= no_worse && !same;
    }
    ck_assert_msg(pts[i].dominated == dom, "point %d: dominated %d, not %d", i,
                  pts[i].dominated, dom);
    kept += !dom;
  }
  ck_assert_int_ge(kept, 1);
}

/* Every point meets its limit and traffic never rises as limits grow;
 * its bound is at most its traffic and never rises as limits shrink
 * (pareto.c's invariant); the gap and status follow from the two. */
static void check_sweep(const fp_pareto_point *pts, int n) {
  for (int i = 0; i < n; i++) {
    double t = (double)pts[i].m.traffic_bytes;
    ck_assert_msg(pts[i].bound <= t, "point %d: bound %.17g over traffic %.17g",
                  i, pts[i].bound, t);
    ck_assert_double_eq_tol(pts[i].gap, t > 0 ? (t - pts[i].bound) / t : 0,
                            1e-12);
    ck_assert_int_eq(strcmp(pts[i].status, "optimal") == 0, pts[i].bound >= t);
    ck_assert_int_ge(pts[i].solves, 1);
    ck_assert(pts[i].time_s >= 0);
    if (i + 1 < n)
      ck_assert_msg(pts[i].bound >= pts[i + 1].bound,
                    "point %d: bound %.17g below the next point's %.17g", i,
                    pts[i].bound, pts[i + 1].bound);
    ck_assert_msg(pts[i].m.peak_bytes <= pts[i].peak_limit,
                  "point %d: peak %llu over its limit %llu", i,
                  (unsigned long long)pts[i].m.peak_bytes,
                  (unsigned long long)pts[i].peak_limit);
    if (i > 0)
      ck_assert_msg(pts[i].m.traffic_bytes <= pts[i - 1].m.traffic_bytes,
                    "point %d: traffic %llu after %llu", i,
                    (unsigned long long)pts[i].m.traffic_bytes,
                    (unsigned long long)pts[i - 1].m.traffic_bytes);
  }
  check_dominated(pts, n);
}

/* _i: seed; even seeds sweep with fp_exhaustive, odd ones with the ILP
 * (exact model).  Both must give the exact front. */
START_TEST(front_is_exact_on_tiny_graphs) {
  tu_rng r = {(uint64_t)_i * 7919 + 3};
  fp_graph *g = tu_random_graph(&r, 3, 8);
  const fp_planner *how = fp_planner_find(_i % 2 ? "ilp" : "exhaustive");
  fp_ilp_params prm;
  fp_pareto_point pts[NPOINTS];
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.window = FP_ILP_WINDOW_EXACT;
  prm.time_limit_s = 120;
  ck_assert_msg(fp_pareto(g, &prm, NPOINTS, how, pts, &err) == FP_OK, "%s",
                err.msg);
  check_sweep(pts, NPOINTS);
  fp_metrics low = exhaustive_at(g, FP_OBJECTIVE_PEAK, FP_NO_LIMIT);
  fp_metrics least = exhaustive_at(g, FP_OBJECTIVE_TRAFFIC, FP_NO_LIMIT);
  ck_assert_uint_eq(pts[0].peak_limit, low.peak_bytes);
  ck_assert_uint_eq(pts[NPOINTS - 1].m.traffic_bytes, least.traffic_bytes);
  for (int i = 0; i < NPOINTS; i++) {
    fp_metrics best = exhaustive_at(g, FP_OBJECTIVE_TRAFFIC, pts[i].peak_limit);
    ck_assert_msg(pts[i].m.traffic_bytes == best.traffic_bytes,
                  "seed %d %s point %d (limit %llu): traffic %llu, least "
                  "%llu",
                  _i, how->name, i, (unsigned long long)pts[i].peak_limit,
                  (unsigned long long)pts[i].m.traffic_bytes,
                  (unsigned long long)best.traffic_bytes);
    ck_assert_str_eq(pts[i].status, "optimal");
    ck_assert(pts[i].bound <= (double)best.traffic_bytes);
  }
  fp_graph_destroy(g);
}
END_TEST

/* Each point's bound holds for every plan under its limit, also after
 * the refinement and the propagation between points: auto's answers on
 * tiny graphs (the exact ILP) against enumeration, on a budget too short
 * for some of them. */
START_TEST(bounds_hold_under_every_limit) {
  tu_rng r = {(uint64_t)_i * 104729 + 11};
  fp_graph *g = tu_random_graph(&r, 6, 9);
  fp_ilp_params prm;
  fp_pareto_point pts[NPOINTS];
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 0.4;
  ck_assert_msg(
      fp_pareto(g, &prm, NPOINTS, fp_planner_find("auto"), pts, &err) == FP_OK,
      "%s", err.msg);
  check_sweep(pts, NPOINTS);
  for (int i = 0; i < NPOINTS; i++) {
    fp_metrics best = exhaustive_at(g, FP_OBJECTIVE_TRAFFIC, pts[i].peak_limit);
    ck_assert_msg(pts[i].bound <= (double)best.traffic_bytes,
                  "seed %d point %d: bound %.17g over the least traffic %llu",
                  _i, i, pts[i].bound, (unsigned long long)best.traffic_bytes);
  }
  fp_graph_destroy(g);
}
END_TEST

/* With time left after the first sweep, the points with a gap are solved
 * again (largest gap first), and the whole call holds its budget. */
START_TEST(refinement_spends_the_time_left) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 400, 3);
  fp_ilp_params prm;
  fp_pareto_point pts[3];
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 4;
  double t0 = fp_clock_now();
  ck_assert_msg(fp_pareto(g, &prm, 3, fp_planner_find("auto"), pts, &err) ==
                    FP_OK,
                "%s", err.msg);
  double took = fp_clock_now() - t0;
  check_sweep(pts, 3);
  int solves = 0, open = 0;
  for (int i = 0; i < 3; i++) {
    solves += pts[i].solves;
    open += pts[i].gap > 0;
  }
  ck_assert_msg(open == 0 || solves > 3, "%d points open after %d solves", open,
                solves);
  ck_assert_msg(took < 4 * 1.1 + 0.5, "pareto took %.2f s of 4", took);
  fp_graph_destroy(g);
}
END_TEST

/* Too little time to prove anything: the warm starts still make a front
 * that meets every limit and never gets worse. */
START_TEST(front_on_a_short_budget) {
  fp_graph *g = tu_generated(FP_GEN_RANDOM, 12, 5);
  fp_ilp_params prm;
  fp_pareto_point pts[5];
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 1;
  ck_assert_msg(fp_pareto(g, &prm, 5, fp_planner_find("ilp"), pts, &err) ==
                    FP_OK,
                "%s", err.msg);
  check_sweep(pts, 5);
  for (int i = 0; i < 5; i++)
    ck_assert_msg(strcmp(pts[i].status, "optimal") == 0 ||
                      strcmp(pts[i].status, "feasible") == 0 ||
                      strcmp(pts[i].status, "heuristic-fallback") == 0,
                  "point %d: status '%s'", i, pts[i].status);
  fp_graph_destroy(g);
}
END_TEST

/* The sweep with the large-neighbourhood search on a graph too big for
 * the exact model. */
START_TEST(front_with_auto) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 300, 2);
  fp_ilp_params prm;
  fp_pareto_point pts[3];
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 1.5;
  ck_assert_msg(fp_pareto(g, &prm, 3, fp_planner_find("auto"), pts, &err) ==
                    FP_OK,
                "%s", err.msg);
  check_sweep(pts, 3);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(bad_arguments) {
  fp_graph *g = tu_graph(tu_chain3_json);
  fp_ilp_params prm;
  fp_pareto_point pts[3];
  fp_error err;
  fp_ilp_params_init(&prm);
  ck_assert_int_eq(fp_pareto(g, &prm, 1, fp_planner_find("ilp"), pts, &err),
                   FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "at least 2 points"));
  ck_assert_int_eq(fp_pareto(g, &prm, 3, NULL, pts, &err), FP_EARG);
  /* a heuristic cannot solve a point under a peak limit exactly */
  ck_assert_int_eq(fp_pareto(g, &prm, 3, fp_planner_find("greedy"), pts, &err),
                   FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "greedy"));
  fp_graph_destroy(g);
}
END_TEST

static Suite *pareto_suite(void) {
  Suite *s = suite_create("solver/pareto");
  TCase *tc = tcase_create("exact");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, front_is_exact_on_tiny_graphs, 0, 40);
  suite_add_tcase(s, tc);
  TCase *op = tcase_create("operations");
  tcase_set_timeout(op, 120);
  tcase_add_test(op, front_on_a_short_budget);
  tcase_add_test(op, front_with_auto);
  tcase_add_loop_test(op, bounds_hold_under_every_limit, 0, 12);
  tcase_add_test(op, refinement_spends_the_time_left);
  tcase_add_test(op, bad_arguments);
  suite_add_tcase(s, op);
  return s;
}

int main(void) {
  return tu_run(pareto_suite());
}
