/*
 * test_mip.c -- the MIP core (solver/mip/mip.c) refuses an integer solution
 * that breaks the model's rows.
 *
 * GLPK does not check a solution offered by glp_ios_heur_sol against the
 * rows, and on ill-conditioned models its own branch-and-bound has
 * returned GLP_OPT for such a point (tests/solver/test_ilp_windows.c
 * holds the real window where it happened).  A row-breaking warm start
 * whose objective beats the true optimum is a reproducible way to get
 * the same state: GLPK takes it as its incumbent, prunes every node and
 * reports it optimal.  mip_solve must then report no solution
 * (GLP_UNDEF, res.rejected) and a bound that is still valid.
 */
#include <check.h>
#include <math.h>

#include "solver/mip/mip.h"
#include "tests/testutil.h"

/* min -x1 - x2 - x3 subject to x1 + x2 <= 1, x2 + x3 <= 1 and
 * x1 + x3 <= 1, binaries: the optimum is -1 (one of them); the root LP
 * is fractional (all 1/2, -1.5), so GLPK asks for a heuristic solution. */
static glp_prob *three_binaries(void) {
  glp_prob *lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_cols(lp, 3);
  for (int c = 1; c <= 3; c++) {
    glp_set_col_kind(lp, c, GLP_BV);
    glp_set_obj_coef(lp, c, -1);
  }
  glp_add_rows(lp, 3);
  for (int r = 1; r <= 3; r++) {
    int ind[3] = {0, r, r % 3 + 1};
    double val[3] = {0, 1, 1};
    glp_set_mat_row(lp, r, 2, ind, val);
    glp_set_row_bnds(lp, r, GLP_UP, 0, 1);
  }
  return lp;
}

START_TEST(row_breaking_solution_is_refused) {
  glp_prob *lp = three_binaries();
  const double bad[4] = {0, 1, 1, 1}; /* objective -3, breaks every row */
  mip_params mp;
  mip_result res;
  mip_params_init(&mp);
  mp.warm_x = bad;
  mip_solve(&lp, &mp, &res);
  ck_assert_ptr_nonnull(lp);
  ck_assert(!res.glpk_failed);
  ck_assert(res.rejected && !res.proven);
  ck_assert_int_eq(res.status, GLP_UNDEF);
  /* the root LP's bound: at most the true optimum */
  ck_assert(res.bound <= -1 + 1e-9);
  ck_assert(res.bound > -3 + 1e-9);
  glp_delete_prob(lp);
}
END_TEST

START_TEST(feasible_warm_start_is_kept) {
  glp_prob *lp = three_binaries();
  const double good[4] = {0, 0, 1, 0}; /* an optimum */
  mip_params mp;
  mip_result res;
  mip_params_init(&mp);
  mp.warm_x = good;
  mip_solve(&lp, &mp, &res);
  ck_assert(!res.rejected);
  ck_assert_int_eq(res.status, GLP_OPT);
  ck_assert(fabs(glp_mip_obj_val(lp) + 1) < 1e-9);
  glp_delete_prob(lp);
}
END_TEST

START_TEST(no_warm_start_finds_the_optimum) {
  glp_prob *lp = three_binaries();
  mip_params mp;
  mip_result res;
  mip_params_init(&mp);
  mip_solve(&lp, &mp, &res);
  ck_assert(!res.rejected);
  ck_assert_int_eq(res.status, GLP_OPT);
  ck_assert(res.proven); /* the tree explored, not stopped at a gap */
  ck_assert(fabs(glp_mip_obj_val(lp) + 1) < 1e-9);
  ck_assert(glp_mip_col_val(lp, 1) + glp_mip_col_val(lp, 2) +
                glp_mip_col_val(lp, 3) ==
            1);
  glp_delete_prob(lp);
}
END_TEST

static Suite *mip_suite(void) {
  Suite *s = suite_create("solver/mip");
  TCase *tc = tcase_create("incumbent_check");
  tcase_add_test(tc, row_breaking_solution_is_refused);
  tcase_add_test(tc, feasible_warm_start_is_kept);
  tcase_add_test(tc, no_warm_start_finds_the_optimum);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(mip_suite());
}
