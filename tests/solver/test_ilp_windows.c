/*
 * test_ilp_windows.c -- the integer program against the evaluator on
 * windows of real graphs (data/graphs: PyTorch Inductor's pre-fusion
 * graphs), for every objective.
 *
 * Real graphs have what random tiny graphs lack: byte counts over eight
 * orders of magnitude (1.5 KB next to 300 MB), freeable saved activations,
 * externs and many outputs.  Model coefficients then span the same range,
 * and a solver tolerance that is harmless on small numbers shows up as a
 * model objective a few KB off the evaluator's (fp_ilp_solve reports that
 * as FP_EINTERNAL).  Each window here is cut out of a heuristic plan the
 * way --method auto cuts them, solved by the exact ILP, and, when small
 * enough, by exhaustive enumeration: an optimal ILP answer must equal the
 * enumerated optimum.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"
#include "model/json.h"
#include "solver/solver.h"
#include "solver/window/window.h"
#include "tests/testutil.h"

static const char *const graphs[] = {"deit_small_patch16_224.bwd",
                                     "convnext_tiny.bwd",
                                     "vit_base_patch16_224.bwd",
                                     "mobilenetv3_large_100.fwd",
                                     "resnet50.bwd",
                                     "gpt2.fwd",
                                     "volo_d1_224.fwd"};
#define WINDOWS_PER_GRAPH 5

/* Windows that --method auto cut from real graphs and on which the ILP
 * once failed, with the limits auto solved them under (0: none):
 * - deit, convnext: the model's objective disagreed with the evaluator
 *   (GLPK accepted binaries within 1e-5 of integral, and 1e-5 of a 300 MB
 *   coefficient is kilobytes);
 * - mobilevit_s (a graph exported with tools/export_inductor.py, not in
 *   data/graphs): the second lexicographic level, peak under auto's
 *   traffic, where GLPK 5.0 returned GLP_OPT for a point breaking 20 rows
 *   (fp_ilp_solve then failed: "model solution is not a legal plan").
 *   The answer must be the warm start, with a bound at most the optimum. */
typedef struct fixture {
  const char *name;
  fp_objective objective; /* FP_OBJECTIVE_COUNT_: every objective */
  uint64_t traffic_limit, peak_limit;
} fixture;
static const fixture fixtures[] = {
    {"deit_small_patch16_224.bwd.w1", FP_OBJECTIVE_COUNT_, 0, 0},
    {"convnext_tiny.bwd.w1", FP_OBJECTIVE_COUNT_, 0, 0},
    {"mobilevit_s.bwd.w1", FP_OBJECTIVE_PEAK, 3825351936u, 4462544576u},
};

static fp_graph *load_from(const char *dir, const char *name) {
  const char *top = getenv("top_srcdir");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/%s", top ? top : "..", dir, name);
  fp_graph *g = NULL;
  fp_error err;
  ck_assert_msg(fp_graph_load_file(path, &g, &err) == FP_OK, "%s", err.msg);
  return g;
}

/* The plan auto starts from: greedy fusion, best order. */
static fp_plan *start_plan(const fp_graph *g) {
  fp_fusion_params fp;
  fp_plan *p = fp_plan_create();
  fp_error err;
  fp_fusion_params_init(&fp, FP_METHOD_GREEDY);
  ck_assert_msg(fp_fuse(g, &fp, p, &err) == FP_OK, "%s", err.msg);
  return p;
}

/* Solves window S for objective o with the ILP (and enumeration when it
 * fits) and checks both against the evaluator. */
static void check_window(const sub_problem *S, fp_objective o,
                         const fixture *lim, const char *what) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = o;
  prm.lambda = 1;
  prm.limits.peak = lim && lim->peak_limit ? lim->peak_limit : FP_NO_LIMIT;
  prm.limits.traffic =
      lim && lim->traffic_limit ? lim->traffic_limit : FP_NO_LIMIT;
  prm.window = FP_ILP_WINDOW_EXACT;
  prm.time_limit_s = 3; /* answers cut short are still checked */
  prm.node_limit = 3000;
  fp_plan *q = fp_plan_create();
  fp_metrics qm;
  fp_error err;
  fp_status st = fp_ilp_solve(S->g, &prm, q, &qm, &err);
  ck_assert_msg(st == FP_OK, "%s, objective %s: %s", what, fp_objective_name(o),
                err.msg);
  fp_metrics em = tu_eval(S->g, q);
  const fp_solver_info *si = fp_plan_solver(q);
  ck_assert_msg(si->objective == fp_objective_value(&prm, &em),
                "%s: reported objective %.17g, evaluator %.17g", what,
                si->objective, fp_objective_value(&prm, &em));
  ck_assert_msg(fp_meets_limits(&prm, &em, 0), "%s: answer outside limits",
                what);
  if (S->n <= (lim ? 10 : 8)) {
    fp_metrics xm;
    fp_plan *x = fp_plan_create();
    ck_assert_int_eq(fp_exhaustive(S->g, &prm, x, &xm, &err), FP_OK);
    double best = fp_objective_value(&prm, &xm);
    ck_assert_msg(si->objective >= best, "%s: ILP %.17g below optimum %.17g",
                  what, si->objective, best);
    ck_assert_msg(!(si->bound > best), "%s: bound %.17g above optimum %.17g",
                  what, si->bound, best);
    if (strcmp(si->status, "optimal") == 0)
      ck_assert_msg(si->objective == best,
                    "%s, objective %s: ILP says optimal at %.17g, "
                    "enumeration finds %.17g",
                    what, fp_objective_name(o), si->objective, best);
    fp_plan_destroy(x);
  }
  fp_plan_destroy(q);
}

/* Cuts `windows` random windows of plan p of g (sub_window checks the
 * identities on p) and, with `solve`, checks each window's models against
 * the evaluator for every objective. */
static void cut_windows(const fp_graph *g, const fp_plan *p, tu_rng *r,
                        int windows, bool solve, const char *name) {
  int32_t n = fp_graph_node_count(g), T = fp_plan_group_count(p);
  fp_step *tl = malloc((size_t)n * sizeof *tl);
  int32_t *step = malloc((size_t)n * sizeof *step);
  fp_metrics pm;
  fp_error err;
  sub_scratch scr;
  ck_assert_int_eq(fp_plan_eval(g, p, &pm, tl, NULL), FP_OK);
  tu_plan_steps(p, step);
  ck_assert_int_eq(sub_scratch_init(&scr, g), 0);
  for (int w = 0; w < windows; w++) {
    int32_t len = 4 + (int32_t)tu_below(r, 6);
    int32_t s0 = (int32_t)tu_below(r, (uint32_t)(T > len ? T - len : 1));
    int32_t s1 = s0 + len < T ? s0 + len : T;
    sub_problem S;
    ck_assert_msg(sub_window(&S, &scr, g, p, step, tl, &pm, 0, s0, s1, &err) ==
                      FP_OK,
                  "%s: %s", name, err.msg);
    char what[160];
    snprintf(what, sizeof what, "%s steps [%d, %d) (%d nodes)", name, (int)s0,
             (int)s1, (int)S.n);
    for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++)
      if (S.g && solve)
        check_window(&S, (fp_objective)o, NULL, what);
    sub_free(&S);
  }
  sub_scratch_free(&scr);
  free(tl);
  free(step);
}

START_TEST(window_models_agree_with_the_evaluator) {
  char file[256];
  snprintf(file, sizeof file, "%s.json.gz", graphs[_i]);
  fp_graph *g = load_from("data/graphs", file);
  fp_plan *p = start_plan(g);
  tu_rng r = {(uint64_t)_i * 104729 + 17};
  cut_windows(g, p, &r, WINDOWS_PER_GRAPH, true, graphs[_i]);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Windows of greedy plans (which fuse siblings) on optimizer-update
 * graphs: a buffer written before the window is an input of the
 * sub-graph, yet a pair on it keeps the whole graph's fused readers (no
 * mutation's rule), so the identities hold (sub_window checks them; seed
 * 8 broke them when the sub-graph took such a pair for a mutation's). */
START_TEST(update_windows_agree_with_the_evaluator) {
  tu_rng r = {(uint64_t)_i * 2246822519u + 29};
  fp_graph *g = tu_random_update_graph(&r, 10, 24);
  fp_plan *p = start_plan(g);
  char name[64];
  snprintf(name, sizeof name, "update seed %d", _i);
  cut_windows(g, p, &r, 4, false, name);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Windows on random graphs with workspaces (docs/cost-model.md#workspaces):
 * the sub-graph carries its nodes' workspaces, so the identities hold
 * (sub_window checks them), and each window's ILP agrees with the
 * evaluator and the enumeration. */
START_TEST(workspace_windows_agree_with_the_evaluator) {
  tu_rng r = {(uint64_t)_i * 3266489917u + 31};
  fp_graph *g = tu_add_workspaces(tu_random_graph(&r, 10, 24), &r);
  fp_plan *p = start_plan(g);
  char name[64];
  snprintf(name, sizeof name, "workspace seed %d", _i);
  cut_windows(g, p, &r, 4, true, name);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(fixture_windows_agree_with_the_evaluator) {
  const fixture *f = &fixtures[_i];
  char file[256];
  snprintf(file, sizeof file, "%s.json", f->name);
  sub_problem S = {0};
  S.g = load_from("tests/data/windows", file);
  S.n = fp_graph_node_count(S.g);
  for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++)
    if (f->objective == FP_OBJECTIVE_COUNT_ || (int)f->objective == o)
      check_window(&S, (fp_objective)o, f, f->name);
  fp_graph_destroy(S.g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("solver/ilp_windows");
  TCase *tc = tcase_create("real_graph_windows");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, window_models_agree_with_the_evaluator, 0,
                      (int)(sizeof graphs / sizeof graphs[0]));
  tcase_add_loop_test(tc, fixture_windows_agree_with_the_evaluator, 0,
                      (int)(sizeof fixtures / sizeof fixtures[0]));
  tcase_add_loop_test(tc, update_windows_agree_with_the_evaluator, 0, 40);
  tcase_add_loop_test(tc, workspace_windows_agree_with_the_evaluator, 0, 30);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
