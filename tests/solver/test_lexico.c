/*
 * test_lexico.c -- the lexicographic optimum and start plans.
 *
 * The ILP's answer is the lexicographic optimum (the objective, then the
 * other figure) whenever its record says both levels are proven: checked
 * against exhaustive enumeration, whose order is the same.  Start plans
 * (fp_ilp_params.starts) are checked for legality, and no answer of auto
 * or the ILP is ever beaten, in that order, by a start that meets the
 * limits.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gen/generate.h"
#include "heuristics/heuristics.h"
#include "solver/bound/bound.h"
#include "solver/solver.h"
#include "tests/testutil.h"

/* a before b in the lexicographic order of objective o. */
static int lex_less(fp_objective o, const fp_metrics *a, const fp_metrics *b) {
  uint64_t a1 = o == FP_OBJECTIVE_PEAK ? a->peak_bytes : a->traffic_bytes;
  uint64_t b1 = o == FP_OBJECTIVE_PEAK ? b->peak_bytes : b->traffic_bytes;
  uint64_t a2 = o == FP_OBJECTIVE_PEAK ? a->traffic_bytes : a->peak_bytes;
  uint64_t b2 = o == FP_OBJECTIVE_PEAK ? b->traffic_bytes : b->peak_bytes;
  return a1 != b1 ? a1 < b1 : a2 < b2;
}

/* The exact model for objective o, no peak limit, 20 s. */
static void exact_params(fp_ilp_params *prm, fp_objective o) {
  fp_ilp_params_init(prm);
  prm->objective = o;
  prm->limits.peak = FP_NO_LIMIT;
  prm->window = FP_ILP_WINDOW_EXACT;
  prm->time_limit_s = 20;
  prm->gap2 = 0; /* the exact second level, not within a tolerance */
}

START_TEST(ilp_equals_exhaustive_lexicographic_optimum) {
  int proven = 0;
  for (int i = 0; i < 60; i++) {
    tu_rng r = {(uint64_t)(_i * 1000 + i) * 2654435761u + 1};
    fp_graph *g = tu_random_graph(&r, 3, 8);
    fp_objective o = i % 2 ? FP_OBJECTIVE_PEAK : FP_OBJECTIVE_TRAFFIC;
    fp_ilp_params prm;
    exact_params(&prm, o);
    fp_plan *p = fp_plan_create(), *x = fp_plan_create();
    fp_metrics pm, xm;
    fp_error err;
    ck_assert_msg(fp_ilp_solve(g, &prm, p, &pm, &err) == FP_OK, "%s", err.msg);
    ck_assert_int_eq(fp_exhaustive(g, &prm, x, &xm, &err), FP_OK);
    ck_assert(!lex_less(o, &xm, &pm) || fp_plan_solver(p)->levels_proven < 2);
    if (fp_plan_solver(p)->levels_proven == 2) {
      proven++;
      ck_assert_msg(pm.traffic_bytes == xm.traffic_bytes &&
                        pm.peak_bytes == xm.peak_bytes,
                    "graph %d %s: ILP %llu/%llu, enumeration %llu/%llu", i,
                    fp_objective_name(o), (unsigned long long)pm.traffic_bytes,
                    (unsigned long long)pm.peak_bytes,
                    (unsigned long long)xm.traffic_bytes,
                    (unsigned long long)xm.peak_bytes);
    }
    fp_plan_destroy(p);
    fp_plan_destroy(x);
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(proven, 50); /* tiny models are proven at once */
}
END_TEST

/* The second level's bound (solver_second_bound) against enumeration on
 * random tiny graphs, objectives traffic and peak under the eager peak:
 * handed the first level's optimum with the other figure raised by
 * `slack` bytes (a plan not yet optimal at the second level), it never
 * exceeds the lexicographic optimum's second figure, nor the raised
 * figure; it reaches the optimum on most graphs (where the peak bound, or
 * the traffic bound within the peak, is tight: 68 and 95 of 100 when
 * written), and the structural bound
 * (time 0) is never above it.  Loops 2 and 3 do the same on graphs with
 * workspaces. */
START_TEST(second_bound_below_lexicographic_optimum) {
  int equal = 0, n = 0;
  for (int i = 0; i < 100; i++) {
    tu_rng r = {(uint64_t)(_i * 1000 + i) * 40503u + 7};
    fp_graph *g = tu_random_graph(&r, 3, 8);
    if (_i >= 2) /* docs/cost-model.md#workspaces */
      g = tu_add_workspaces(g, &r);
    fp_objective o = _i % 2 ? FP_OBJECTIVE_PEAK : FP_OBJECTIVE_TRAFFIC;
    fp_ilp_params prm;
    exact_params(&prm, o);
    prm.limits.peak = FP_LIMITS_PEAK_EAGER; /* the eager peak */
    fp_plan *x = fp_plan_create();
    fp_metrics xm;
    fp_error err;
    ck_assert_int_eq(fp_exhaustive(g, &prm, x, &xm, &err), FP_OK);
    uint64_t *two =
        o == FP_OBJECTIVE_TRAFFIC ? &xm.peak_bytes : &xm.traffic_bytes;
    uint64_t opt2 = *two, slack = tu_below(&r, 3) * (1 + opt2 / 4);
    *two += slack;
    double b = NAN, s0 = NAN;
    ck_assert_int_eq(solver_second_bound(g, &prm, &xm, 1.0, &b, &err), FP_OK);
    ck_assert_int_eq(solver_second_bound(g, &prm, &xm, 0, &s0, &err), FP_OK);
    ck_assert_msg(b <= (double)opt2 && b <= (double)*two && s0 <= b,
                  "graph %d %s: bound %.0f structural %.0f, optimum %llu", i,
                  fp_objective_name(o), b, s0, (unsigned long long)opt2);
    equal += b == (double)opt2;
    n++;
    fp_plan_destroy(x);
    fp_graph_destroy(g);
  }
  ck_assert_msg(equal * 2 > n, "tight on %d of %d", equal, n);
}
END_TEST

/* levels = 1 stops at the first level: the objective's optimum, proven,
 * with levels_proven 1 and the objective of two levels; the plan of two
 * levels, when both are proven, is lexicographically no worse. */
START_TEST(one_level_stops_at_the_objective) {
  int stopped = 0;
  for (int i = 0; i < 20; i++) {
    tu_rng r = {(uint64_t)(_i * 100 + i) * 2654435761u + 7};
    fp_graph *g = tu_random_graph(&r, 4, 8);
    fp_objective o = i % 2 ? FP_OBJECTIVE_PEAK : FP_OBJECTIVE_TRAFFIC;
    fp_ilp_params prm;
    exact_params(&prm, o);
    fp_plan *one = fp_plan_create(), *two = fp_plan_create();
    fp_metrics m1, m2;
    fp_error err;
    prm.levels = 1;
    ck_assert_msg(fp_ilp_solve(g, &prm, one, &m1, &err) == FP_OK, "%s",
                  err.msg);
    prm.levels = 2;
    ck_assert_msg(fp_ilp_solve(g, &prm, two, &m2, &err) == FP_OK, "%s",
                  err.msg);
    ck_assert_int_le(fp_plan_solver(one)->levels_proven, 1);
    if (strcmp(fp_plan_solver(one)->status, "optimal") == 0 &&
        strcmp(fp_plan_solver(two)->status, "optimal") == 0) {
      stopped++;
      ck_assert_int_eq(fp_plan_solver(one)->levels_proven, 1);
      ck_assert(fp_objective_value(&prm, &m1) == fp_objective_value(&prm, &m2));
      if (fp_plan_solver(two)->levels_proven == 2) /* two's is the lex. */
        ck_assert(!lex_less(o, &m1, &m2));         /* optimum */
    }
    fp_plan_destroy(one);
    fp_plan_destroy(two);
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(stopped, 15);
}
END_TEST

/* Heuristic plans in every order, and unconstrained greedy fusion: starts
 * of all sorts, some above the peak limit. */
static int make_starts(const fp_graph *g, fp_plan **starts) {
  int n = 0;
  for (int m = 0; m < FP_METHOD_COUNT_; m++)
    for (int o = 0; o < FP_ORDER_COUNT_; o++) {
      fp_fusion_params fp;
      fp_fusion_params_init(&fp, (fp_method)m);
      fp.order = (fp_order)o;
      fp.limits.peak = UINT64_MAX - 1;
      starts[n] = fp_plan_create();
      ck_assert_int_eq(fp_fuse(g, &fp, starts[n], NULL), FP_OK);
      n++;
    }
  return n;
}

START_TEST(answers_never_beaten_by_their_starts) {
  static const int families[] = {FP_GEN_TRANSFORMER, FP_GEN_CONVNET,
                                 FP_GEN_RANDOM, FP_GEN_MLP};
  fp_graph *g = tu_generated(families[_i % 4], 60 + 10 * _i, (uint64_t)_i + 3);
  fp_plan *starts[FP_METHOD_COUNT_ * FP_ORDER_COUNT_];
  int n = make_starts(g, starts);
  for (int o = 0; o < 2; o++) {
    fp_ilp_params prm;
    fp_ilp_params_init(&prm);
    prm.objective = o ? FP_OBJECTIVE_PEAK : FP_OBJECTIVE_TRAFFIC;
    prm.time_limit_s = 2;
    prm.starts = (const fp_plan *const *)starts;
    prm.n_starts = n;
    fp_plan *p = fp_plan_create();
    fp_metrics pm, e;
    fp_error err;
    fp_plan *eager = fp_plan_create();
    fp_plan_make_eager(eager, g, NULL);
    e = tu_eval(g, eager);
    ck_assert_msg(fp_auto_solve(g, &prm, p, &pm, &err) == FP_OK, "%s", err.msg);
    ck_assert_uint_le(pm.peak_bytes, e.peak_bytes); /* the default limit */
    for (int i = 0; i < n; i++) {
      fp_metrics sm = tu_eval(g, starts[i]);
      if (sm.peak_bytes <= e.peak_bytes)
        ck_assert_msg(!lex_less(prm.objective, &sm, &pm),
                      "start %d (%llu/%llu) beats auto (%llu/%llu)", i,
                      (unsigned long long)sm.traffic_bytes,
                      (unsigned long long)sm.peak_bytes,
                      (unsigned long long)pm.traffic_bytes,
                      (unsigned long long)pm.peak_bytes);
    }
    fp_plan_destroy(p);
    fp_plan_destroy(eager);
  }
  for (int i = 0; i < n; i++)
    fp_plan_destroy(starts[i]);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(illegal_start_is_refused) {
  fp_graph *g = tu_graph(tu_chain3_json);
  fp_plan *bad = tu_plan(g, "b | a | c"); /* b before its input's writer */
  const fp_plan *starts[] = {bad};
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.starts = starts;
  prm.n_starts = 1;
  fp_plan *p = fp_plan_create();
  fp_error err;
  ck_assert_int_eq(fp_ilp_solve(g, &prm, p, NULL, &err), FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "start plan 0"));
  ck_assert_int_eq(fp_auto_solve(g, &prm, p, NULL, &err), FP_EARG);
  prm.starts = NULL; /* n_starts without plans */
  ck_assert_int_eq(fp_ilp_params_check(&prm, &err), FP_EARG);
  fp_plan_destroy(p);
  fp_plan_destroy(bad);
  fp_graph_destroy(g);
}
END_TEST

/* A time limit spent by the first level is an outcome, not an error: with
 * a limit far shorter than one solve, the second level is handed no time
 * (it was once handed a negative time, which the bound refused with
 * FP_EARG), and the answer is still a legal plan. */
START_TEST(no_time_left_for_the_second_level) {
  for (int i = 0; i < 20; i++) {
    tu_rng r = {(uint64_t)(_i * 100 + i) * 2654435761u + 7};
    fp_graph *g = tu_random_graph(&r, 6, 9);
    fp_ilp_params prm;
    exact_params(&prm, i % 2 ? FP_OBJECTIVE_PEAK : FP_OBJECTIVE_TRAFFIC);
    prm.time_limit_s = 1e-6;
    fp_plan *p = fp_plan_create();
    fp_metrics pm;
    fp_error err;
    ck_assert_msg(fp_ilp_solve(g, &prm, p, &pm, &err) == FP_OK, "graph %d: %s",
                  i, err.msg);
    ck_assert_int_eq(fp_plan_check(g, p, 0, &err), FP_OK);
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("solver/lexico");
  TCase *tc = tcase_create("lexico");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, ilp_equals_exhaustive_lexicographic_optimum, 0, 3);
  tcase_add_loop_test(tc, answers_never_beaten_by_their_starts, 0, 4);
  tcase_add_test(tc, illegal_start_is_refused);
  tcase_add_loop_test(tc, one_level_stops_at_the_objective, 0, 2);
  tcase_add_loop_test(tc, second_bound_below_lexicographic_optimum, 0, 4);
  tcase_add_loop_test(tc, no_time_left_for_the_second_level, 0, 2);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
