/*
 * test_exec_gpu.c -- the CUDA backend on a GPU: for graphs of every family
 * (with ops, and stripped to surrogates) and eager, greedy, greedy-lowmem
 * and random plans, the run succeeds, the tracked peak and the traffic
 * equal the evaluator's, the pool's high-water mark is at least the peak,
 * and the outputs match the CPU's eager run within the tolerance.
 * Without a usable GPU it exits 77 (automake: SKIP).  No fork: CUDA state
 * does not survive fork(), so the device is touched only after Check has
 * been told not to fork.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/cuda_exec/exec_util.h"

/* Runs p on the GPU and holds the report to the evaluator and the CPU. */
static void run_gpu(const fp_graph *g, const fp_plan *p, const char *what) {
  fp_exec_params prm;
  fp_exec_report r;
  fp_error err;
  fp_metrics m = tu_eval(g, p);
  fp_exec_params_init(&prm);
  prm.backend = FP_BACKEND_CUDA;
  fp_status st = fp_exec_run(g, p, &prm, &r, &err);
  ck_assert_msg(st == FP_OK, "%s: %s", what, err.msg);
  ck_assert_uint_eq(r.peak_bytes, m.peak_bytes);
  ck_assert_uint_eq(r.traffic_bytes, m.traffic_bytes);
  ck_assert_uint_ge(r.pool_used_high, r.peak_bytes);
  ck_assert_msg(r.check == FP_CHECK_PASS,
                "%s: %llu of %llu values outside the tolerance (max rel %g)",
                what, (unsigned long long)r.mismatches,
                (unsigned long long)r.compared, r.max_rel_err);
  printf("%s: %d kernels, %d launches, %.6f s, compile %.3f s, pool high "
         "%llu (peak %llu)\n",
         what, (int)r.kernels, (int)r.launches, r.time_s, r.compile_s,
         (unsigned long long)r.pool_used_high,
         (unsigned long long)r.peak_bytes);
  fp_exec_report_free(&r);
}

START_TEST(plans_run) {
  uint64_t seed = 11;
  fp_graph *g = eu_small_graph((fp_gen_family)_i, 60, &seed,
                               (uint64_t)256 << 20, (uint64_t)1 << 30);
  fp_graph *bare = eu_strip_ops(g);
  tu_rng rng = {seed};
  char what[96];
  for (int i = 0; i < EU_PLAN_SET; i++) {
    const fp_graph *gg;
    fp_plan *p = eu_plan_in_set(g, bare, &rng, i, &gg);
    snprintf(what, sizeof what, "%s plan %d%s",
             fp_gen_family_name((fp_gen_family)_i), i,
             i == 4 ? " surrogates" : "");
    run_gpu(gg, p, what);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(bare);
  fp_graph_destroy(g);
}
END_TEST

int main(void) {
  fp_error err;
  /* Decide before touching the device: no fork from here on. */
  Suite *s = suite_create("exec_gpu");
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  if (fp_exec_cuda_available(&err) != FP_OK) {
    printf("SKIP: %s\n", err.msg);
    srunner_free(sr);
    return 77;
  }
  TCase *tc = tcase_create("gpu");
  tcase_add_loop_test(tc, plans_run, 0, FP_GEN_FAMILY_COUNT_);
  suite_add_tcase(s, tc);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
