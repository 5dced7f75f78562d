/*
 * test_planner.c -- the planner table (solver/planner/planner.c): lookup and
 * iteration, every row's plan is legal and labelled with its name, the
 * flags agree with the plans (peak-limited rows stay under the limit) and
 * with the masks, and the masks agree with what the run functions read:
 * changing the field of an option a row does not accept changes nothing
 * (not the plan, not the files written), while an accepted export option
 * writes its file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen/generate.h"
#include "solver/planner.h"
#include "tests/testutil.h"

/* ---- lookup ------------------------------------------------------------ */

START_TEST(every_row_is_found_by_name) {
  int32_t n = fp_planner_count();
  ck_assert_int_ge(n, 7);
  for (int32_t i = 0; i < n; i++) {
    const fp_planner *pl = fp_planner_at(i);
    ck_assert_ptr_nonnull(pl);
    ck_assert_ptr_eq(fp_planner_find(pl->name), pl);
    ck_assert_ptr_nonnull(pl->run);
    ck_assert_ptr_nonnull(pl->summary);
    ck_assert_ptr_nonnull(pl->help);
    ck_assert_msg(pl->help[0] && pl->help[strlen(pl->help) - 1] != '\n',
                  "%s: help must not end in a newline", pl->name);
    for (int32_t j = 0; j < i; j++)
      ck_assert_str_ne(fp_planner_at(j)->name, pl->name);
  }
  ck_assert_ptr_null(fp_planner_at(-1));
  ck_assert_ptr_null(fp_planner_at(n));
  /* Every method the CLI had before the table is still a row. */
  const char *const names[] = {"auto",   "greedy-peak",   "ilp",  "exhaustive",
                               "greedy", "greedy-lowmem", "eager"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    ck_assert_msg(fp_planner_find(names[i]), "%s missing", names[i]);
}
END_TEST

START_TEST(unknown_names_are_null) {
  ck_assert_ptr_null(fp_planner_find(NULL));
  ck_assert_ptr_null(fp_planner_find(""));
  ck_assert_ptr_null(fp_planner_find("AUTO"));
  ck_assert_ptr_null(fp_planner_find("greedy-"));
  ck_assert_ptr_null(fp_planner_find("ilp "));
  ck_assert_ptr_null(fp_planner_find("bogus"));
}
END_TEST

START_TEST(default_is_auto) {
  ck_assert_ptr_eq(fp_planner_default(), fp_planner_find("auto"));
  ck_assert_ptr_eq(fp_planner_default(), fp_planner_at(0));
}
END_TEST

START_TEST(option_names_round_trip) {
  for (int i = 0; i < FP_PLANNER_OPT_COUNT_; i++) {
    const char *name = fp_planner_option_name((fp_planner_option)i);
    ck_assert_ptr_nonnull(name);
    for (int j = 0; j < i; j++)
      ck_assert_str_ne(fp_planner_option_name((fp_planner_option)j), name);
  }
  ck_assert_ptr_null(fp_planner_option_name(FP_PLANNER_OPT_COUNT_));
  ck_assert_str_eq(fp_planner_option_name(FP_PLANNER_OPT_I_TIME_LIMIT),
                   "time-limit");
}
END_TEST

/* The flags and masks tell the same story: the exact rows take an
 * objective and no order, the heuristics the reverse; only anytime rows
 * have a clock; every option is taken by someone; the limits by all. */
START_TEST(masks_agree_with_flags) {
  unsigned any = 0;
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    int exact = (pl->flags & FP_PLANNER_EXACT) != 0;
    int anytime = (pl->flags & FP_PLANNER_ANYTIME) != 0;
    any |= pl->options;
    ck_assert_int_eq(fp_planner_accepts(pl, FP_PLANNER_OPT_I_OBJECTIVE), exact);
    ck_assert_int_eq(fp_planner_accepts(pl, FP_PLANNER_OPT_I_ORDER), !exact);
    ck_assert_int_eq(fp_planner_accepts(pl, FP_PLANNER_OPT_I_TIME_LIMIT),
                     anytime);
    ck_assert(fp_planner_accepts(pl, FP_PLANNER_OPT_I_PEAK_LIMIT));
    ck_assert(fp_planner_accepts(pl, FP_PLANNER_OPT_I_MAX_FUSION_SIZE));
    ck_assert(!fp_planner_accepts(pl, FP_PLANNER_OPT_COUNT_));
    if (pl->flags & (FP_PLANNER_ANYTIME | FP_PLANNER_PARETO))
      ck_assert_msg(exact, "%s: anytime and pareto rows are exact", pl->name);
  }
  ck_assert_uint_eq(any, (1u << FP_PLANNER_OPT_COUNT_) - 1);
  /* The example of the issue: no heuristic has a clock. */
  ck_assert(!fp_planner_accepts(fp_planner_find("greedy"),
                                FP_PLANNER_OPT_I_TIME_LIMIT));
  ck_assert(!fp_planner_accepts(fp_planner_find("exhaustive"),
                                FP_PLANNER_OPT_I_TIME_LIMIT));
}
END_TEST

/* ---- runs ---------------------------------------------------------------- */

/* A scratch file name for model exports: under $TMPDIR (or /tmp), unique
 * to this process and `tag`. */
static void scratch_path(char *buf, size_t n, const char *tag) {
  const char *dir = getenv("TMPDIR");
  snprintf(buf, n, "%s/test_planner_%s_%ld.model", dir && *dir ? dir : "/tmp",
           tag, (long)getpid());
}

/* The graphs of the run tests: one of each family, 10 nodes (small
 * enough for exhaustive enumeration). */
static fp_graph *graph_of(int i) {
  return tu_generated(i % FP_GEN_FAMILY_COUNT_, 10, 3 + (uint64_t)i);
}

static int same_plan(const fp_plan *a, const fp_plan *b) {
  if (fp_plan_group_count(a) != fp_plan_group_count(b))
    return 0;
  for (int32_t i = 0; i < fp_plan_group_count(a); i++) {
    int32_t na, nb;
    const int32_t *ga = fp_plan_group(a, i, &na),
                  *gb = fp_plan_group(b, i, &nb);
    if (na != nb || memcmp(ga, gb, (size_t)na * sizeof *ga) != 0)
      return 0;
  }
  return 1;
}

/* Runs pl on g with req; fails the test unless it makes a legal plan
 * whose metrics are the evaluator's and whose record names the row. */
static fp_plan *run_ok(const fp_planner *pl, const fp_graph *g,
                       const fp_plan_request *req, fp_metrics *m) {
  fp_error err;
  fp_plan *p = fp_plan_create();
  fp_metrics e;
  fp_error_clear(&err);
  fp_status st = fp_planner_run(pl, g, req, p, m, &err);
  ck_assert_msg(st == FP_OK, "%s: %s", pl->name, err.msg);
  ck_assert_msg(fp_plan_check(g, p, 0, &err) == FP_OK, "%s: %s", pl->name,
                err.msg);
  ck_assert_int_eq(fp_plan_eval(g, p, &e, NULL, &err), FP_OK);
  ck_assert_uint_eq(e.traffic_bytes, m->traffic_bytes);
  ck_assert_uint_eq(e.peak_bytes, m->peak_bytes);
  ck_assert_str_eq(fp_plan_solver_const(p)->method, pl->name);
  return p;
}

/* Every row plans every graph legally; peak-limited rows stay under the
 * eager peak (their default limit); the heuristic rows give exactly the
 * plan of their fusion method. */
START_TEST(every_row_makes_a_legal_plan) {
  fp_graph *g = graph_of(_i);
  fp_metrics eager;
  fp_error err;
  fp_plan *ep = fp_plan_create();
  ck_assert_int_eq(fp_plan_make_eager(ep, g, &err), FP_OK);
  ck_assert_int_eq(fp_plan_eval(g, ep, &eager, NULL, &err), FP_OK);
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fp_plan_request req;
    fp_metrics m;
    fp_plan_request_init(&req, pl);
    fp_plan *p = run_ok(pl, g, &req, &m);
    if (pl->flags & FP_PLANNER_PEAK_LIMITED)
      ck_assert_uint_le(m.peak_bytes, eager.peak_bytes);
    if (!(pl->flags & FP_PLANNER_EXACT)) {
      fp_plan *q = fp_plan_create();
      ck_assert_int_eq(fp_fuse(g, &req.fus, q, &err), FP_OK);
      ck_assert(same_plan(p, q));
      fp_plan_destroy(q);
    }
    fp_plan_destroy(p);
  }
  fp_plan_destroy(ep);
  fp_graph_destroy(g);
}
END_TEST

/* A request with the field of option `opt` set away from its default (to
 * values that would show if read: a 1-byte traffic cap is infeasible, a
 * 1 ms clock cuts the ILP short, a 90% gap stops it early).  False for
 * the options every row takes. */
static int perturb(fp_plan_request *r, int opt, const char *path) {
  switch (opt) {
  case FP_PLANNER_OPT_I_OBJECTIVE:
    r->ilp.objective = FP_OBJECTIVE_PEAK;
    return 1;
  case FP_PLANNER_OPT_I_TRAFFIC_LIMIT:
    r->limits.traffic = 1;
    return 1;
  case FP_PLANNER_OPT_I_LAMBDA:
    r->ilp.lambda = 1e6;
    return 1;
  case FP_PLANNER_OPT_I_WINDOW:
    r->ilp.window = 0;
    return 1;
  case FP_PLANNER_OPT_I_MIP_GAP:
    r->ilp.mip_gap = 0.9;
    return 1;
  case FP_PLANNER_OPT_I_LP_OUT:
    r->ilp.lp_out = path;
    return 1;
  case FP_PLANNER_OPT_I_MPS_OUT:
    r->ilp.mps_out = path;
    return 1;
  case FP_PLANNER_OPT_I_TIME_LIMIT:
    r->ilp.time_limit_s = 1e-3;
    return 1;
  case FP_PLANNER_OPT_I_JOBS:
    r->ilp.jobs = 4;
    return 1;
  case FP_PLANNER_OPT_I_SEED:
    r->ilp.seed = 12345;
    return 1;
  case FP_PLANNER_OPT_I_ORDER:
    r->fus.order = FP_ORDER_DFS;
    return 1;
  default:
    return 0;
  }
}

/* For every row and every option it does not accept, setting that
 * option's field changes neither the plan nor its figures, and writes no
 * file. */
START_TEST(unaccepted_options_are_not_read) {
  fp_graph *g = graph_of(_i);
  char path[512], tag[16];
  snprintf(tag, sizeof tag, "%d", _i);
  scratch_path(path, sizeof path, tag);
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fp_plan_request base;
    fp_metrics m0;
    fp_plan_request_init(&base, pl);
    fp_plan *p0 = run_ok(pl, g, &base, &m0);
    for (int opt = 0; opt < FP_PLANNER_OPT_COUNT_; opt++) {
      fp_plan_request r = base;
      fp_metrics m;
      if (fp_planner_accepts(pl, (fp_planner_option)opt) ||
          !perturb(&r, opt, path))
        continue;
      unlink(path);
      fp_plan *p = run_ok(pl, g, &r, &m);
      ck_assert_msg(same_plan(p0, p), "%s reads --%s", pl->name,
                    fp_planner_option_name((fp_planner_option)opt));
      ck_assert_uint_eq(m.traffic_bytes, m0.traffic_bytes);
      ck_assert_uint_eq(m.peak_bytes, m0.peak_bytes);
      ck_assert_msg(access(path, F_OK) != 0, "%s wrote --%s", pl->name,
                    fp_planner_option_name((fp_planner_option)opt));
      fp_plan_destroy(p);
    }
    fp_plan_destroy(p0);
  }
  unlink(path);
  fp_graph_destroy(g);
}
END_TEST

/* The other side for what can be seen cheaply: an accepted export option
 * writes its file, an accepted objective is honoured (peak objective: no
 * higher peak than the traffic objective's plan), an accepted traffic
 * cap of 1 byte is infeasible. */
START_TEST(accepted_options_are_read) {
  fp_graph *g = graph_of(1);
  char path[512];
  scratch_path(path, sizeof path, "acc");
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fp_plan_request base, r;
    fp_metrics m0, m;
    fp_error err;
    fp_plan_request_init(&base, pl);
    fp_plan *p0 = run_ok(pl, g, &base, &m0);
    for (int opt = FP_PLANNER_OPT_I_LP_OUT; opt <= FP_PLANNER_OPT_I_MPS_OUT;
         opt++) {
      if (!fp_planner_accepts(pl, (fp_planner_option)opt))
        continue;
      r = base;
      unlink(path);
      perturb(&r, opt, path);
      fp_plan_destroy(run_ok(pl, g, &r, &m));
      ck_assert_msg(access(path, F_OK) == 0, "%s ignores --%s", pl->name,
                    fp_planner_option_name((fp_planner_option)opt));
    }
    if (fp_planner_accepts(pl, FP_PLANNER_OPT_I_OBJECTIVE)) {
      r = base;
      r.ilp.objective = FP_OBJECTIVE_PEAK;
      fp_plan_destroy(run_ok(pl, g, &r, &m));
      ck_assert_uint_le(m.peak_bytes, m0.peak_bytes);
    }
    if (fp_planner_accepts(pl, FP_PLANNER_OPT_I_TRAFFIC_LIMIT)) {
      fp_plan *p = fp_plan_create();
      r = base;
      r.ilp.objective = FP_OBJECTIVE_PEAK;
      r.limits.traffic = 1;
      ck_assert_int_eq(fp_planner_run(pl, g, &r, p, &m, &err), FP_EINFEASIBLE);
      fp_plan_destroy(p);
    }
    fp_plan_destroy(p0);
  }
  unlink(path);
  fp_graph_destroy(g);
}
END_TEST

/* req->limits is the one copy of the limits every row reads: a group
 * limit of 1 there gives every row one node per group, a 1-byte peak
 * there makes the peak-limited rows infeasible; the same values in the
 * method parameters' own limits change nothing (fp_planner_run puts
 * req->limits there). */
START_TEST(request_limits_are_the_one_copy) {
  fp_graph *g = graph_of(1);
  int32_t nodes = fp_graph_node_count(g), fused = 0;
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fp_plan_request base, r;
    fp_metrics m0, m;
    fp_error err;
    fp_plan_request_init(&base, pl);
    fp_plan *p0 = run_ok(pl, g, &base, &m0), *p;
    fused += fp_plan_group_count(p0) < nodes;
    r = base;
    r.fus.limits.max_fusion_size = r.ilp.limits.max_fusion_size = 1;
    r.fus.limits.peak = r.ilp.limits.peak = r.ilp.limits.traffic = 1;
    p = run_ok(pl, g, &r, &m);
    ck_assert_msg(same_plan(p0, p), "%s reads its own limits", pl->name);
    fp_plan_destroy(p);
    r = base;
    r.limits.max_fusion_size = 1;
    p = run_ok(pl, g, &r, &m);
    ck_assert_int_eq(fp_plan_group_count(p), nodes);
    fp_plan_destroy(p);
    if (pl->flags & FP_PLANNER_PEAK_LIMITED) {
      r = base;
      r.limits.peak = 1;
      p = fp_plan_create();
      ck_assert_int_eq(fp_planner_run(pl, g, &r, p, &m, &err), FP_EINFEASIBLE);
      fp_plan_destroy(p);
    }
    fp_plan_destroy(p0);
  }
  ck_assert_int_gt(fused, 0); /* the group limit had something to stop */
  fp_graph_destroy(g);
}
END_TEST

/* fp_planner_run forces the row's fusion method, whatever the request
 * was initialized for. */
START_TEST(run_uses_the_rows_method) {
  fp_graph *g = graph_of(2);
  const fp_planner *eager = fp_planner_find("eager");
  const fp_planner *greedy = fp_planner_find("greedy");
  fp_plan_request req;
  fp_metrics m;
  fp_plan_request_init(&req, greedy);
  fp_plan *p = run_ok(eager, g, &req, &m);
  ck_assert_int_eq(fp_plan_group_count(p), fp_graph_node_count(g));
  fp_plan_destroy(p);
  fp_error err;
  fp_plan *q = fp_plan_create();
  ck_assert_int_eq(fp_planner_run(NULL, g, &req, q, &m, &err), FP_EARG);
  ck_assert_int_eq(fp_planner_run(eager, NULL, &req, q, &m, &err), FP_EARG);
  ck_assert_int_eq(fp_planner_run(eager, g, NULL, q, &m, &err), FP_EARG);
  ck_assert_int_eq(fp_planner_run(eager, g, &req, NULL, &m, &err), FP_EARG);
  fp_plan_destroy(q);
  fp_graph_destroy(g);
}
END_TEST

/* Larger graphs: every row but exhaustive (refused above its node limit)
 * still plans legally, on short clocks. */
START_TEST(rows_on_a_larger_graph) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 60, 7);
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fp_plan_request req;
    fp_metrics m;
    fp_error err;
    fp_plan_request_init(&req, pl);
    req.ilp.time_limit_s = 1;
    if (strcmp(pl->name, "exhaustive") == 0) {
      fp_plan *p = fp_plan_create();
      ck_assert_int_eq(fp_planner_run(pl, g, &req, p, &m, &err), FP_ELIMIT);
      fp_plan_destroy(p);
      continue;
    }
    fp_plan_destroy(run_ok(pl, g, &req, &m));
  }
  fp_graph_destroy(g);
}
END_TEST

/* fp_pareto takes the rows that can drive it and refuses the others. */
START_TEST(pareto_through_the_table) {
  fp_graph *g = graph_of(0);
  fp_ilp_params prm;
  fp_pareto_point pts[3];
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 5;
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fp_status st = fp_pareto(g, &prm, 3, pl, pts, &err);
    if (!(pl->flags & FP_PLANNER_PARETO)) {
      ck_assert_int_eq(st, FP_EARG);
      continue;
    }
    ck_assert_msg(st == FP_OK, "%s: %s", pl->name, err.msg);
    for (int k = 0; k < 3; k++)
      ck_assert_uint_le(pts[k].m.peak_bytes, pts[k].peak_limit);
  }
  ck_assert_int_eq(fp_pareto(g, &prm, 3, NULL, pts, &err), FP_EARG);
  fp_graph_destroy(g);
}
END_TEST

static Suite *planner_suite(void) {
  Suite *s = suite_create("solver/planner");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, every_row_is_found_by_name);
  tcase_add_test(tc, unknown_names_are_null);
  tcase_add_test(tc, default_is_auto);
  tcase_add_test(tc, option_names_round_trip);
  tcase_add_test(tc, masks_agree_with_flags);
  suite_add_tcase(s, tc);
  TCase *run = tcase_create("run");
  tcase_set_timeout(run, 300);
  tcase_add_loop_test(run, every_row_makes_a_legal_plan, 0,
                      FP_GEN_FAMILY_COUNT_);
  tcase_add_loop_test(run, unaccepted_options_are_not_read, 0,
                      FP_GEN_FAMILY_COUNT_);
  tcase_add_test(run, accepted_options_are_read);
  tcase_add_test(run, request_limits_are_the_one_copy);
  tcase_add_test(run, run_uses_the_rows_method);
  tcase_add_test(run, rows_on_a_larger_graph);
  tcase_add_test(run, pareto_through_the_table);
  suite_add_tcase(s, run);
  return s;
}

int main(void) {
  return tu_run(planner_suite());
}
