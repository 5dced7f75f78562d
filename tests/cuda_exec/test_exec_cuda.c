/*
 * test_exec_cuda.c -- the CUDA code generator and NVRTC, without a GPU:
 * every kernel of several plans (eager, greedy, greedy-lowmem, random; op
 * graphs of every family and op-less surrogate graphs) compiles to a
 * CUBIN, and a kernel that does not compile gives FP_EINTERNAL with the
 * NVRTC log's error.  Built only when the CUDA toolkit is found; never
 * skipped (running on a GPU is test_exec_gpu's job).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cuda_exec/exec_util.h"

/* Compiles every kernel of p and checks the count and the CUBIN. */
static void compiles(const fp_graph *g, const fp_plan *p, const char *what) {
  int32_t kernels = -1;
  uint64_t bytes = 0;
  double secs = -1;
  fp_error err;
  fp_status st =
      fp_exec_cuda_compile_plan(g, p, NULL, &kernels, &bytes, &secs, &err);
  ck_assert_msg(st == FP_OK, "%s: %s", what, err.msg);
  ck_assert_int_eq(kernels, fp_plan_group_count(p));
  ck_assert_uint_gt(bytes, 0);
  ck_assert(secs >= 0);
  printf("%s: %d kernels, %llu CUBIN bytes, %.3f s\n", what, (int)kernels,
         (unsigned long long)bytes, secs);
}

/* _i: family.  Eager, greedy, greedy-lowmem and a random plan of a
 * 40-node graph, then the same graph with its ops stripped. */
START_TEST(plans_compile) {
  uint64_t seed = 5;
  fp_graph *g =
      eu_small_graph((fp_gen_family)_i, 40, &seed, UINT64_MAX, UINT64_MAX);
  fp_graph *bare = eu_strip_ops(g);
  tu_rng rng = {seed};
  static const fp_method methods[] = {FP_METHOD_EAGER, FP_METHOD_GREEDY,
                                      FP_METHOD_GREEDY_LOWMEM};
  char what[96];
  for (int i = 0; i < 4; i++) {
    fp_plan *p =
        i < 3 ? eu_method_plan(g, methods[i]) : eu_random_plan(g, &rng);
    snprintf(what, sizeof what, "%s %s", fp_gen_family_name((fp_gen_family)_i),
             i < 3 ? fp_method_name(methods[i]) : "random");
    compiles(g, p, what);
    fp_plan_destroy(p);
  }
  fp_plan *p = eu_method_plan(bare, FP_METHOD_GREEDY);
  snprintf(what, sizeof what, "%s surrogates greedy",
           fp_gen_family_name((fp_gen_family)_i));
  compiles(bare, p, what);
  fp_plan_destroy(p);
  fp_graph_destroy(bare);
  fp_graph_destroy(g);
}
END_TEST

/* Surrogates of odd shapes (partial reads, tails, multi-writes) inside
 * random fusions. */
START_TEST(random_surrogate_graphs_compile) {
  tu_rng rng = {77};
  for (int i = 0; i < 3; i++) {
    fp_graph *g = tu_random_graph(&rng, 8, 14);
    fp_plan *p = eu_random_plan(g, &rng);
    compiles(g, p, "random surrogate graph");
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

/* A compile error is a clean status carrying NVRTC's message. */
START_TEST(compile_error_is_clean) {
  uint64_t bytes = 1;
  fp_error err;
  fp_status st = fp_exec_cuda_compile_source(
      "extern \"C\" __global__ void k(float *x) { x[0] = undefined_name; }\n",
      "sm_90", &bytes, &err);
  ck_assert_int_eq(st, FP_EINTERNAL);
  ck_assert_uint_eq(bytes, 0);
  ck_assert_ptr_nonnull(strstr(err.msg, "undefined_name"));
  st = fp_exec_cuda_compile_source(
      "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n", "sm_90",
      &bytes, &err);
  ck_assert_int_eq(st, FP_OK);
  ck_assert_uint_gt(bytes, 0);
  /* An architecture NVRTC does not know. */
  st = fp_exec_cuda_compile_source(
      "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n", "sm_01",
      &bytes, &err);
  ck_assert_int_eq(st, FP_EINTERNAL);
}
END_TEST

/* Illegal plans and bad parameters are refused before any compile. */
START_TEST(bad_plans_refused) {
  fp_graph *g = tu_graph(tu_chain3_json);
  fp_plan *bad = tu_plan(g, "c | a b");
  int32_t kernels;
  uint64_t bytes;
  double secs;
  fp_error err;
  ck_assert_int_eq(
      fp_exec_cuda_compile_plan(g, bad, NULL, &kernels, &bytes, &secs, &err),
      FP_EILLEGAL);
  fp_exec_params prm;
  fp_exec_params_init(&prm);
  snprintf(prm.arch, sizeof prm.arch, "compute_90");
  fp_plan *ok = tu_plan(g, "a b c");
  ck_assert_int_eq(
      fp_exec_cuda_compile_plan(g, ok, &prm, &kernels, &bytes, &secs, &err),
      FP_EARG);
  fp_plan_destroy(ok);
  fp_plan_destroy(bad);
  fp_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("exec_cuda");
  TCase *tc = tcase_create("nvrtc");
  tcase_set_timeout(tc, 240);
  tcase_add_loop_test(tc, plans_compile, 0, FP_GEN_FAMILY_COUNT_);
  tcase_add_test(tc, random_surrogate_graphs_compile);
  tcase_add_test(tc, compile_error_is_clean);
  tcase_add_test(tc, bad_plans_refused);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
