/*
 * test_params.c -- the parameters shared by every exact method
 * (solver/common/params.c): the defaults, objective names, fp_ilp_params_check
 * naming the bad field (and accepting the boundary values), the objective
 * value and the limits test fp_meets_limits.
 */
#include <math.h>
#include <string.h>

#include "solver/solver.h"
#include "tests/testutil.h"

START_TEST(params_defaults_and_names) {
  fp_ilp_params p;
  fp_ilp_params_init(&p);
  ck_assert_int_eq(p.objective, FP_OBJECTIVE_TRAFFIC);
  ck_assert_uint_eq(p.limits.peak, 0);
  ck_assert(p.limits.traffic == FP_NO_LIMIT);
  ck_assert(p.lambda == 1.0);
  ck_assert(p.time_limit_s == FP_ILP_DEFAULT_TIME_LIMIT);
  ck_assert(p.mip_gap == 0.0);
  ck_assert(p.gap == FP_ILP_DEFAULT_GAP && p.gap == 0.0);
  ck_assert(p.gap2 == FP_ILP_DEFAULT_GAP2 && p.gap2 > 0 && p.gap2 <= 1e-3);
  ck_assert_int_eq(p.window, FP_ILP_DEFAULT_WINDOW);
  ck_assert_int_eq(p.levels, FP_ILP_DEFAULT_LEVELS);
  ck_assert_int_eq(p.limits.max_fusion_size, 0);
  ck_assert_ptr_null(p.warm_start);
  ck_assert_ptr_null(p.lp_out);
  ck_assert_ptr_null(p.mps_out);
  ck_assert(p.progress == NULL);
  ck_assert_ptr_null(p.progress_ctx);
  ck_assert_int_eq(fp_ilp_params_check(&p, NULL), FP_OK);
  for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++)
    ck_assert_int_eq(fp_objective_parse(fp_objective_name((fp_objective)o)), o);
  ck_assert_str_eq(fp_objective_name(FP_OBJECTIVE_WEIGHTED), "weighted");
  ck_assert_str_eq(fp_objective_name((fp_objective)99), "unknown");
  ck_assert_int_eq(fp_objective_parse("Traffic"), -1);
  ck_assert_int_eq(fp_objective_parse(""), -1);
}
END_TEST

/* Sets one bad field and expects FP_EARG naming it. */
static void expect_bad(void (*set)(fp_ilp_params *), const char *field) {
  fp_ilp_params p;
  fp_ilp_params_init(&p);
  set(&p);
  fp_error err;
  fp_error_clear(&err);
  ck_assert_int_eq(fp_ilp_params_check(&p, &err), FP_EARG);
  ck_assert_msg(strstr(err.msg, field) != NULL, "'%s' lacks '%s'", err.msg,
                field);
}

static void bad_objective(fp_ilp_params *p) {
  p->objective = FP_OBJECTIVE_COUNT_;
}
static void bad_time(fp_ilp_params *p) {
  p->time_limit_s = 0;
}
static void bad_time_nan(fp_ilp_params *p) {
  p->time_limit_s = NAN;
}
static void bad_time_inf(fp_ilp_params *p) {
  p->time_limit_s = INFINITY;
}
static void bad_gap(fp_ilp_params *p) {
  p->mip_gap = -0.1;
}
static void bad_gap_nan(fp_ilp_params *p) {
  p->mip_gap = NAN;
}
static void bad_level_gap_neg(fp_ilp_params *p) {
  p->gap = -1e-9;
}
static void bad_level_gap_nan(fp_ilp_params *p) {
  p->gap = NAN;
}
static void bad_level_gap_one(fp_ilp_params *p) {
  p->gap = 1;
}
static void bad_gap2_neg(fp_ilp_params *p) {
  p->gap2 = -0.5;
}
static void bad_gap2_nan(fp_ilp_params *p) {
  p->gap2 = NAN;
}
static void bad_gap2_inf(fp_ilp_params *p) {
  p->gap2 = INFINITY;
}
static void bad_gap2_one(fp_ilp_params *p) {
  p->gap2 = 1.0;
}
static void bad_lambda(fp_ilp_params *p) {
  p->lambda = -1;
}
static void bad_lambda_inf(fp_ilp_params *p) {
  p->lambda = INFINITY;
}
static void bad_window(fp_ilp_params *p) {
  p->window = FP_ILP_WINDOW_AUTO - 1;
}
static void bad_size(fp_ilp_params *p) {
  p->limits.max_fusion_size = -1;
}
static void bad_levels_low(fp_ilp_params *p) {
  p->levels = 0;
}
static void bad_levels_high(fp_ilp_params *p) {
  p->levels = 3;
}

START_TEST(params_check_names_the_field) {
  expect_bad(bad_objective, "objective");
  expect_bad(bad_time, "time_limit_s");
  expect_bad(bad_time_nan, "time_limit_s");
  expect_bad(bad_time_inf, "time_limit_s");
  expect_bad(bad_gap, "mip_gap");
  expect_bad(bad_gap_nan, "mip_gap");
  expect_bad(bad_level_gap_neg, "params: gap must");
  expect_bad(bad_level_gap_nan, "params: gap must");
  expect_bad(bad_level_gap_one, "params: gap must");
  expect_bad(bad_gap2_neg, "gap2");
  expect_bad(bad_gap2_nan, "gap2");
  expect_bad(bad_gap2_inf, "gap2");
  expect_bad(bad_gap2_one, "gap2");
  expect_bad(bad_lambda, "lambda");
  expect_bad(bad_lambda_inf, "lambda");
  expect_bad(bad_window, "window");
  expect_bad(bad_size, "max_fusion_size");
  expect_bad(bad_levels_low, "levels");
  expect_bad(bad_levels_high, "levels");
  fp_ilp_params p;
  fp_ilp_params_init(&p);
  p.window = 0; /* boundary values are fine */
  ck_assert_int_eq(fp_ilp_params_check(&p, NULL), FP_OK);
  p.window = FP_ILP_WINDOW_EXACT;
  ck_assert_int_eq(fp_ilp_params_check(&p, NULL), FP_OK);
  p.window = FP_ILP_WINDOW_AUTO;
  p.levels = 1;
  p.lambda = 0;
  p.limits.max_fusion_size = 1;
  p.limits.peak = 1;
  p.gap = 0.999999; /* just below 1 */
  p.gap2 = 0;
  ck_assert_int_eq(fp_ilp_params_check(&p, NULL), FP_OK);
}
END_TEST

START_TEST(objective_value_and_limits) {
  fp_ilp_params p;
  fp_ilp_params_init(&p);
  fp_metrics m;
  memset(&m, 0, sizeof m);
  m.traffic_bytes = 100;
  m.peak_bytes = 40;
  ck_assert(fp_objective_value(&p, &m) == 100.0);
  p.objective = FP_OBJECTIVE_PEAK;
  ck_assert(fp_objective_value(&p, &m) == 40.0);
  p.objective = FP_OBJECTIVE_WEIGHTED;
  p.lambda = 0.5;
  ck_assert(fp_objective_value(&p, &m) == 120.0);
  /* peak_limit 0: the eager peak */
  ck_assert_int_eq(fp_meets_limits(&p, &m, 40), 1);
  ck_assert_int_eq(fp_meets_limits(&p, &m, 39), 0);
  p.limits.peak = FP_NO_LIMIT;
  ck_assert_int_eq(fp_meets_limits(&p, &m, 1), 1);
  p.limits.peak = 40;
  ck_assert_int_eq(fp_meets_limits(&p, &m, 1), 1);
  p.limits.peak = 39;
  ck_assert_int_eq(fp_meets_limits(&p, &m, 1000), 0);
  /* the traffic limit applies to every objective */
  p.limits.peak = FP_NO_LIMIT;
  for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++) {
    p.objective = (fp_objective)o;
    p.limits.traffic = 100;
    ck_assert_int_eq(fp_meets_limits(&p, &m, 0), 1);
    p.limits.traffic = 99;
    ck_assert_int_eq(fp_meets_limits(&p, &m, 0), 0);
  }
}
END_TEST

static Suite *params_suite(void) {
  Suite *s = suite_create("solver/params");
  TCase *tc = tcase_create("params");
  tcase_add_test(tc, params_defaults_and_names);
  tcase_add_test(tc, params_check_names_the_field);
  tcase_add_test(tc, objective_value_and_limits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(params_suite());
}
