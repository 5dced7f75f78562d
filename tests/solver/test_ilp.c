/*
 * test_ilp.c -- the integer program against exhaustive enumeration on
 * random tiny graphs (traffic under the eager peak, peak, weighted), and
 * its operational promises: warm start never beaten, fallback under a
 * tiny time limit, infeasible limits, GLPK error recovery, the wall-clock
 * limit, model export.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/generate.h"
#include "heuristics/heuristics.h"
#include "model/util.h"
#include "solver/common/solver_test.h"
#include "solver/mip/ilp_model.h"
#include "solver/planner.h"
#include "solver/solver.h"
#include "tests/testutil.h"

/* Solves with the ILP (exact model) and checks the plan it returns:
 * legal, its stated objective equal to the evaluator's. */
static fp_status ilp(const fp_graph *g, const fp_ilp_params *prm, fp_plan *p,
                     fp_metrics *m, fp_error *err) {
  fp_status st = fp_ilp_solve(g, prm, p, m, err);
  if (st != FP_OK)
    return st;
  fp_metrics check;
  ck_assert_int_eq(
      fp_plan_eval_k(g, p, prm->limits.max_fusion_size, &check, NULL, NULL),
      FP_OK);
  ck_assert_uint_eq(check.traffic_bytes, m->traffic_bytes);
  ck_assert_uint_eq(check.peak_bytes, m->peak_bytes);
  const fp_solver_info *si = fp_plan_solver_const(p);
  ck_assert_str_eq(si->method, "ilp");
  ck_assert(si->objective == fp_objective_value(prm, m));
  ck_assert(si->bound <= si->objective);
  return FP_OK;
}

static void compare_with_exhaustive(int seed, fp_objective obj) {
  tu_rng r = {(uint64_t)seed * 2654435761u + 17};
  fp_graph *g = tu_random_graph(&r, 3, 8);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = obj;
  prm.window = FP_ILP_WINDOW_EXACT;
  prm.lambda = 0.5;
  prm.time_limit_s = 60;
  fp_plan *pe = fp_plan_create(), *pi = fp_plan_create();
  fp_metrics me, mi;
  fp_error err;
  fp_status se = fp_exhaustive(g, &prm, pe, &me, &err);
  fp_status si = ilp(g, &prm, pi, &mi, &err);
  ck_assert_msg(se == si, "seed %d: exhaustive %d, ilp %d (%s)", seed, se, si,
                err.msg);
  if (se == FP_OK) {
    ck_assert_str_eq(fp_plan_solver(pi)->status, "optimal");
    ck_assert_msg(
        fp_objective_value(&prm, &mi) == fp_objective_value(&prm, &me),
        "seed %d %s: ilp %.17g, exhaustive %.17g", seed, fp_objective_name(obj),
        fp_objective_value(&prm, &mi), fp_objective_value(&prm, &me));
    ck_assert(fp_plan_solver(pi)->gap == 0);
  }
  fp_plan_destroy(pe);
  fp_plan_destroy(pi);
  fp_graph_destroy(g);
}

START_TEST(traffic_matches_exhaustive) {
  compare_with_exhaustive(_i, FP_OBJECTIVE_TRAFFIC);
}
END_TEST

START_TEST(peak_matches_exhaustive) {
  compare_with_exhaustive(_i, FP_OBJECTIVE_PEAK);
}
END_TEST

START_TEST(weighted_matches_exhaustive) {
  compare_with_exhaustive(_i, FP_OBJECTIVE_WEIGHTED);
}
END_TEST

/* The best heuristic plan's traffic under the eager peak. */
static uint64_t best_heuristic(const fp_graph *g, uint64_t eager_peak) {
  uint64_t best = UINT64_MAX;
  for (int k = 0; k < FP_METHOD_COUNT_; k++) {
    fp_fusion_params fp;
    fp_metrics m;
    fp_plan *p = fp_plan_create();
    fp_fusion_params_init(&fp, (fp_method)k);
    if (fp_fuse(g, &fp, p, NULL) == FP_OK &&
        fp_plan_eval(g, p, &m, NULL, NULL) == FP_OK &&
        m.peak_bytes <= eager_peak && m.traffic_bytes < best)
      best = m.traffic_bytes;
    fp_plan_destroy(p);
  }
  return best;
}

START_TEST(never_worse_than_warm_start_and_fallback) {
  fp_graph *g = tu_generated(_i % FP_GEN_FAMILY_COUNT_, 120, (uint64_t)_i + 3);
  fp_plan *e = fp_plan_create(), *p = fp_plan_create();
  fp_metrics me, m;
  fp_error err;
  fp_plan_make_eager(e, g, NULL);
  me = tu_eval(g, e);
  uint64_t heur = best_heuristic(g, me.peak_bytes);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = _i < 2 ? 0.01 : 2; /* 0.01 s: no time to solve */
  ck_assert_int_eq(ilp(g, &prm, p, &m, &err), FP_OK);
  ck_assert_uint_le(m.traffic_bytes, heur);
  ck_assert_uint_le(m.peak_bytes, me.peak_bytes);
  const char *status = fp_plan_solver(p)->status;
  ck_assert(strcmp(status, "optimal") == 0 || strcmp(status, "feasible") == 0 ||
            strcmp(status, "heuristic-fallback") == 0);
  if (_i < 2)
    ck_assert_str_ne(status, "optimal");
  fp_plan_destroy(e);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(infeasible_limit) {
  fp_graph *g = tu_generated(FP_GEN_MLP, 30, 5);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.limits.peak = 1;
  ck_assert_int_eq(fp_ilp_solve(g, &prm, p, &m, &err), FP_EINFEASIBLE);
  ck_assert_ptr_nonnull(strstr(err.msg, "lowest peak known"));
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_PEAK;
  prm.limits.traffic = 1;
  ck_assert_int_eq(fp_ilp_solve(g, &prm, p, &m, &err), FP_EINFEASIBLE);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(glpk_error_recovered) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 40, 2);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_error err;
  fp_ilp_params_init(&prm);
  solver_test_inject_fault(1);
  ck_assert_int_eq(ilp(g, &prm, p, &m, &err), FP_OK);
  ck_assert_str_eq(fp_plan_solver(p)->status, "heuristic-fallback");
  ck_assert_int_eq(fp_plan_solver(p)->rows, -1); /* the model is gone */
  solver_test_inject_fault(0);
  /* GLPK works again afterwards: an exact model small enough that its
   * proof takes milliseconds, so a loaded machine under sanitizers cannot
   * turn it into a fallback by the clock (the 40-node model once did). */
  tu_rng r = {12345};
  fp_graph *small = tu_random_graph(&r, 6, 8);
  prm.window = FP_ILP_WINDOW_EXACT;
  prm.time_limit_s = 120;
  ck_assert_int_eq(ilp(small, &prm, p, &m, &err), FP_OK);
  ck_assert_str_eq(fp_plan_solver(p)->status, "optimal");
  fp_plan_destroy(p);
  fp_graph_destroy(small);
  fp_graph_destroy(g);
}
END_TEST

/* The cluster ILPs of the lower bound (run alone: the exact search,
 * which needs no GLPK, is off) recover from GLPK errors too: each failed
 * one keeps a bound no stronger than a working one proves, but still
 * valid (at least the structural bound), and GLPK works again afterwards
 * (the bound then beats the failed one).  The exact search bounds at
 * least as much as the ILPs. */
START_TEST(glpk_error_recovered_in_bound) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 40, 2);
  fp_ilp_params prm;
  fp_error err;
  double structural, failed, working;
  fp_ilp_params_init(&prm);
  ck_assert_int_eq(fp_lower_bound(g, &prm, 0, &structural, &err), FP_OK);
  solver_test_cluster_search(0);
  solver_test_inject_fault(1);
  fp_status st = fp_lower_bound(g, &prm, 60, &failed, &err);
  solver_test_inject_fault(0);
  ck_assert_int_eq(st, FP_OK);
  ck_assert_int_eq(fp_lower_bound(g, &prm, 60, &working, &err), FP_OK);
  solver_test_cluster_search(1);
  double exact;
  ck_assert_int_eq(fp_lower_bound(g, &prm, 60, &exact, &err), FP_OK);
  ck_assert(structural <= failed);
  ck_assert_msg(failed < working, "failed %.17g, working %.17g", failed,
                working);
  ck_assert_msg(working <= exact, "ILPs %.17g, exact %.17g", working, exact);
  fp_graph_destroy(g);
}
END_TEST

/* Hard instances under a 2 s limit: an exact model whose root LP cannot
 * finish, and windowed models where branch-and-bound runs (branching
 * start-up once overran limits 3-6x). */
START_TEST(time_limit_held) {
  static const struct {
    int family, size, window;
  } cases[] = {{FP_GEN_RANDOM, 70, FP_ILP_WINDOW_EXACT},
               {FP_GEN_RANDOM, 70, FP_ILP_WINDOW_AUTO},
               {FP_GEN_TRANSFORMER, 100, FP_ILP_WINDOW_AUTO}};
  fp_graph *g = tu_generated(cases[_i].family, cases[_i].size, 11);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_ilp_params_init(&prm);
  prm.window = cases[_i].window;
  prm.time_limit_s = 2;
  double t0 = fp_clock_now();
  ck_assert_int_eq(ilp(g, &prm, p, &m, NULL), FP_OK);
  double dt = fp_clock_now() - t0;
  /* +10%, and more under sanitizers (CK_TIMEOUT_MULTIPLIER > 1). */
  const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
  double slack = mult ? atof(mult) : 1.0;
  ck_assert_msg(dt <= 2.2 * slack, "case %d took %.2f s", _i, dt);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* A traffic limit binds every objective: weighted with a cap between the
 * least traffic and the eager traffic, against exhaustive search. */
START_TEST(traffic_limit_any_objective) {
  tu_rng r = {(uint64_t)_i * 97 + 5};
  fp_graph *g = tu_random_graph(&r, 4, 8);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics least, mi, me;
  fp_ilp_params_init(&prm);
  prm.window = FP_ILP_WINDOW_EXACT;
  prm.limits.peak = FP_NO_LIMIT;
  prm.time_limit_s = 60;
  ck_assert_int_eq(fp_exhaustive(g, &prm, p, &least, NULL), FP_OK);
  fp_plan_make_eager(p, g, NULL);
  fp_metrics eager = tu_eval(g, p);
  prm.objective = FP_OBJECTIVE_WEIGHTED;
  prm.lambda = 10;
  prm.limits.traffic =
      least.traffic_bytes + (eager.traffic_bytes - least.traffic_bytes) / 3;
  fp_status se = fp_exhaustive(g, &prm, p, &me, NULL);
  fp_status si = ilp(g, &prm, p, &mi, NULL);
  ck_assert_int_eq(se, FP_OK);
  ck_assert_int_eq(si, FP_OK);
  ck_assert_uint_le(mi.traffic_bytes, prm.limits.traffic);
  ck_assert(fp_objective_value(&prm, &mi) == fp_objective_value(&prm, &me));
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(model_export) {
  char lp[] = "/tmp/fp_ilp_XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(lp));
  char lpf[64], mpsf[64], line[256];
  snprintf(lpf, sizeof lpf, "%s/m.lp", lp);
  snprintf(mpsf, sizeof mpsf, "%s/m.mps", lp);
  fp_graph *g = tu_generated(FP_GEN_CONVNET, 20, 1);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_ilp_params_init(&prm);
  prm.lp_out = lpf;
  prm.mps_out = mpsf;
  ck_assert_int_eq(ilp(g, &prm, p, &m, NULL), FP_OK);
  FILE *f = fopen(lpf, "r");
  ck_assert_ptr_nonnull(f);
  bool minimize = false, named = false;
  while (fgets(line, sizeof line, f)) {
    minimize |= strncmp(line, "Minimize", 8) == 0;
    named |= strstr(line, "y_") != NULL;
  }
  fclose(f);
  ck_assert(minimize && named);
  f = fopen(mpsf, "r");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  prm.lp_out = "/nonexistent/dir/m.lp";
  fp_error err;
  ck_assert_int_eq(fp_ilp_solve(g, &prm, p, &m, &err), FP_EIO);
  unlink(lpf);
  unlink(mpsf);
  rmdir(lp);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* The model divides byte counts by their GCD and rounds bounds up to a
 * multiple of it.  A peak is the resident bytes plus such multiples, so
 * when the resident bytes are not one (here 1024 + 1000 against buffers
 * of 1024), rounding the optimum itself must leave it where it is. */
START_TEST(bound_rounding_keeps_the_resident_offset) {
  fp_graph *g = tu_graph(
      "{'format': 'fuseplan.graph', 'version': 1, 'name': 'offset',"
      " 'buffers': [{'name': 'x', 'bytes': 1024, 'input': true},"
      "  {'name': 'w', 'bytes': 1000, 'input': true},"
      "  {'name': 't', 'bytes': 1024}, {'name': 'y', 'bytes': 1024}],"
      " 'nodes': ["
      "  {'name': 'a', 'kind': 'pointwise', 'iter': [256, 1], 'reads': ['x'],"
      "   'writes': ['t']},"
      "  {'name': 'b', 'kind': 'extern', 'reads': ['t'], 'writes': ['y']}],"
      " 'outputs': ['y']}");
  for (int obj = 0; obj < 2; obj++) {
    fp_ilp_params prm;
    fp_ilp_params_init(&prm);
    prm.objective = obj ? FP_OBJECTIVE_PEAK : FP_OBJECTIVE_TRAFFIC;
    prm.window = FP_ILP_WINDOW_EXACT;
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    ck_assert_int_eq(fp_exhaustive(g, &prm, p, &m, NULL), FP_OK);
    double best = fp_objective_value(&prm, &m), bound;
    ilp_model M;
    ck_assert_int_eq(ilp_size(&M, g, &prm, NULL), ILP_BUILD_OK);
    ck_assert_msg(ilp_bound_value(&M, NAN, best) <= best, "%s: %.17g > %.17g",
                  fp_objective_name(prm.objective),
                  ilp_bound_value(&M, NAN, best), best);
    ilp_free(&M);
    ck_assert_int_eq(fp_lower_bound(g, &prm, 1.0, &bound, NULL), FP_OK);
    ck_assert(bound <= best);
    ck_assert_int_eq(ilp(g, &prm, p, &m, NULL), FP_OK);
    ck_assert(fp_objective_value(&prm, &m) == best);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

static Suite *ilp_suite(void) {
  Suite *s = suite_create("solver/ilp");
  TCase *tc = tcase_create("exhaustive");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, traffic_matches_exhaustive, 0, 200);
  tcase_add_loop_test(tc, peak_matches_exhaustive, 0, 200);
  tcase_add_loop_test(tc, weighted_matches_exhaustive, 0, 40);
  suite_add_tcase(s, tc);
  TCase *op = tcase_create("operations");
  tcase_set_timeout(op, 120);
  tcase_add_loop_test(op, never_worse_than_warm_start_and_fallback, 0, 6);
  tcase_add_test(op, infeasible_limit);
  tcase_add_test(op, glpk_error_recovered);
  tcase_add_test(op, glpk_error_recovered_in_bound);
  tcase_add_loop_test(op, time_limit_held, 0, 3);
  tcase_add_loop_test(op, traffic_limit_any_objective, 0, 20);
  tcase_add_test(op, model_export);
  tcase_add_test(op, bound_rounding_keeps_the_resident_offset);
  suite_add_tcase(s, op);
  return s;
}

int main(void) {
  return tu_run(ilp_suite());
}
