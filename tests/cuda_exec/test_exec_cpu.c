/*
 * test_exec_cpu.c -- the CPU executor against the evaluator: for generated
 * graphs of every family and plans from every method (and random legal
 * plans), the measured peak, reads and writes equal fp_plan_eval's figures
 * to the byte and the outputs equal the eager program's bit for bit;
 * surrogate kernels on op-less graphs likewise; bad inputs give an error
 * status, never a crash.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "cuda_exec/cuda_gen.h"
#include "model/json.h"
#include "model/util.h"
#include "solver/solver.h"
#include "tests/cuda_exec/exec_util.h"

/* Seeds per family in the method test.  Sanitized builds run the matmuls
 * about five times slower; what they check (memory safety, UB) does not
 * need every seed. */
#if defined(__SANITIZE_ADDRESS__)
#define METHOD_SEEDS 1
#else
#define METHOD_SEEDS 3
#endif

/* Graphs the tests run many times: a few MiB, few matmul flops. */
#define SMALL_BYTES ((uint64_t)96 << 20)
#define SMALL_WORK ((uint64_t)256 << 20)

/* Runs p on the CPU (with the check) and holds the report to the
 * evaluator and to eager; returns the report (caller frees). */
static fp_exec_report run_exact(const fp_graph *g, const fp_plan *p,
                                const char *what) {
  fp_exec_params prm;
  fp_exec_report r;
  fp_error err;
  fp_metrics m = tu_eval(g, p);
  fp_exec_params_init(&prm);
  fp_status st = fp_exec_run(g, p, &prm, &r, &err);
  ck_assert_msg(st == FP_OK, "%s: %s", what, err.msg);
  ck_assert_msg(r.peak_bytes == m.peak_bytes, "%s: peak %llu != %llu", what,
                (unsigned long long)r.peak_bytes,
                (unsigned long long)m.peak_bytes);
  ck_assert_msg(r.read_bytes == m.read_bytes, "%s: reads %llu != %llu", what,
                (unsigned long long)r.read_bytes,
                (unsigned long long)m.read_bytes);
  ck_assert_msg(r.write_bytes == m.write_bytes, "%s: writes %llu != %llu", what,
                (unsigned long long)r.write_bytes,
                (unsigned long long)m.write_bytes);
  ck_assert_uint_eq(r.traffic_bytes, m.traffic_bytes);
  ck_assert_uint_eq(r.predicted.peak_bytes, m.peak_bytes);
  ck_assert_int_eq(r.kernels, fp_plan_group_count(p));
  ck_assert_msg(r.check == FP_CHECK_PASS,
                "%s: %llu of %llu output values differ from eager", what,
                (unsigned long long)r.mismatches,
                (unsigned long long)r.compared);
  ck_assert_uint_eq(r.mismatches, 0);
  ck_assert(r.max_abs_err == 0.0);
  return r;
}

/* Output bytes of a graph (what the check compares). */
static uint64_t output_bytes(const fp_graph *g) {
  uint64_t s = 0;
  for (int32_t i = 0; i < fp_graph_output_count(g); i++)
    s += fp_graph_buffer(g, fp_graph_output(g, i))->bytes;
  return s;
}

/* Every method's plan and two random legal plans of g: exact, and all
 * with the same outputs. */
static void all_plans_exact(const fp_graph *g, uint64_t seed) {
  char what[160];
  uint32_t digest = 0;
  tu_rng rng = {seed * 7919 + 1};
  for (int i = 0; i < FP_METHOD_COUNT_ + 2; i++) {
    fp_plan *p = i < FP_METHOD_COUNT_ ? eu_method_plan(g, (fp_method)i)
                                      : eu_random_plan(g, &rng);
    snprintf(what, sizeof what, "%s seed %llu plan %s", fp_graph_name(g),
             (unsigned long long)seed,
             i < FP_METHOD_COUNT_ ? fp_method_name((fp_method)i) : "random");
    fp_exec_report r = run_exact(g, p, what);
    /* Every output word (and tail byte) was compared. */
    ck_assert_uint_ge(r.compared, output_bytes(g) / 4);
    if (i > 0)
      ck_assert_msg(r.output_digest == digest, "%s: outputs differ", what);
    digest = r.output_digest;
    fp_exec_report_free(&r);
    fp_plan_destroy(p);
  }
}

/* _i: family; METHOD_SEEDS seeds each (one for transformers: their
 * smallest graphs still hold 1.5e8 matmul multiply-adds). */
START_TEST(generated_every_method) {
  for (int k = 0; k < (_i == FP_GEN_TRANSFORMER ? 1 : METHOD_SEEDS); k++) {
    uint64_t seed = 1 + 50 * (uint64_t)k;
    fp_graph *g = eu_small_graph((fp_gen_family)_i, 20 + 10 * k, &seed,
                                 SMALL_BYTES, SMALL_WORK);
    all_plans_exact(g, seed);
    fp_graph_destroy(g);
  }
}
END_TEST

/* The solver's plans: the ILP (a short time limit; its fallback is a
 * legal plan too) on a small graph of family _i, and exhaustive
 * enumeration on random tiny op-less graphs. */
START_TEST(solver_plans) {
  uint64_t seed = 7;
  fp_graph *g =
      eu_small_graph((fp_gen_family)_i, 16, &seed, SMALL_BYTES, SMALL_WORK);
  fp_ilp_params prm;
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 2;
  fp_plan *p = fp_plan_create();
  ck_assert_msg(fp_ilp_solve(g, &prm, p, NULL, &err) == FP_OK, "%s", err.msg);
  fp_exec_report r = run_exact(g, p, "ilp");
  fp_exec_report_free(&r);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  tu_rng rng = {(uint64_t)_i + 99};
  for (int i = 0; i < 3; i++) {
    g = tu_random_graph(&rng, 4, 8);
    p = fp_plan_create();
    fp_ilp_params_init(&prm);
    ck_assert_msg(fp_exhaustive(g, &prm, p, NULL, &err) == FP_OK, "%s",
                  err.msg);
    r = run_exact(g, p, "exhaustive");
    fp_exec_report_free(&r);
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

/* Surrogate kernels: the same graphs with their ops stripped. */
START_TEST(surrogates_generated) {
  uint64_t seed = 3;
  fp_graph *g0 =
      eu_small_graph((fp_gen_family)_i, 40, &seed, SMALL_BYTES, UINT64_MAX);
  fp_graph *g = eu_strip_ops(g0);
  all_plans_exact(g, seed);
  fp_plan *p = eu_method_plan(g, FP_METHOD_GREEDY);
  fp_exec_report r = run_exact(g, p, "stripped greedy");
  ck_assert_int_eq(r.surrogate_nodes, fp_graph_node_count(g));
  fp_exec_report_free(&r);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  fp_graph_destroy(g0);
}
END_TEST

/* Surrogates on random graphs with odd sizes, partial reads, repeated
 * reads, multi-writes, unread buffers and freeable inputs; random plans
 * (many fusions) and eager. */
START_TEST(surrogates_random_graphs) {
  tu_rng rng = {12345};
  for (int i = 0; i < 150; i++) {
    fp_graph *g = tu_random_graph(&rng, 2, 14);
    fp_plan *p = i % 4 == 0 ? eu_method_plan(g, FP_METHOD_EAGER)
                            : eu_random_plan(g, &rng);
    char what[64];
    snprintf(what, sizeof what, "random graph %d", i);
    fp_exec_report r = run_exact(g, p, what);
    fp_exec_report_free(&r);
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

/* The same with workspaces (docs/cost-model.md#workspaces): the tracking
 * allocator holds each group's workspace during its kernels, so the
 * measured peak is the evaluator's to the byte. */
START_TEST(workspaces_random_graphs) {
  tu_rng rng = {424242};
  for (int i = 0; i < 60; i++) {
    fp_graph *g = tu_add_workspaces(tu_random_graph(&rng, 2, 14), &rng);
    fp_plan *p = i % 4 == 0 ? eu_method_plan(g, FP_METHOD_EAGER)
                            : eu_random_plan(g, &rng);
    char what[64];
    snprintf(what, sizeof what, "workspace graph %d", i);
    fp_exec_report r = run_exact(g, p, what);
    fp_exec_report_free(&r);
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

/* The shipped example graph, ops stripped: every node a surrogate moving
 * real-graph-sized bytes (1.4 GiB); accounting only, no reference run. */
START_TEST(surrogates_example_graph) {
  char path[4096];
  const char *src = getenv("top_srcdir");
  snprintf(path, sizeof path, "%s/data/examples/transformer-train-400.json.gz",
           src ? src : ".");
  fp_graph *g0 = NULL;
  fp_error err;
  ck_assert_msg(fp_graph_load_file(path, &g0, &err) == FP_OK, "%s", err.msg);
  fp_graph *g = eu_strip_ops(g0);
  fp_plan *p = eu_method_plan(g, FP_METHOD_GREEDY_PEAK);
  fp_metrics m = tu_eval(g, p);
  fp_exec_params prm;
  fp_exec_report r;
  fp_exec_params_init(&prm);
  prm.check = false;
  ck_assert_int_eq(fp_exec_run(g, p, &prm, &r, &err), FP_OK);
  ck_assert_uint_eq(r.peak_bytes, m.peak_bytes);
  ck_assert_uint_eq(r.read_bytes, m.read_bytes);
  ck_assert_uint_eq(r.write_bytes, m.write_bytes);
  ck_assert_int_eq(r.check, FP_CHECK_SKIPPED);
  ck_assert_int_eq(r.surrogate_nodes, fp_graph_node_count(g));
  fp_exec_report_free(&r);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  fp_graph_destroy(g0);
}
END_TEST

/* Hand-checked figures (docs/cost-model.md, worked example 1) and plans
 * that differ only in fusion give the same outputs. */
START_TEST(chain_by_hand) {
  fp_graph *g = tu_graph(tu_chain3_json);
  static const char *const plans[] = {"a | b | c", "a b c", "a b | c",
                                      "a | b c"};
  static const uint64_t traffic[] = {6000, 2000, 4000, 4000};
  static const uint64_t peak[] = {3000, 2000, 3000, 3000};
  for (int i = 0; i < 4; i++) {
    fp_plan *p = tu_plan(g, plans[i]);
    fp_exec_report r = run_exact(g, p, plans[i]);
    ck_assert_uint_eq(r.traffic_bytes, traffic[i]);
    ck_assert_uint_eq(r.peak_bytes, peak[i]);
    /* A fused chain keeps its intermediates kernel-local. */
    ck_assert_uint_eq(r.scratch_bytes, i == 1 ? 2000 : i > 1 ? 1000 : 0);
    fp_exec_report_free(&r);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

/* The chain with in-place pairs (docs/cost-model.md, "In-place
 * kernels"): the tracking allocator counts each output in its dying
 * input's storage exactly where the evaluator does (eager: one 1000-byte
 * storage at a time), and not where fusion removes the pair. */
START_TEST(inplace_chain_by_hand) {
  fp_graph *g = tu_inplace_chain(false, false);
  static const char *const plans[] = {"a | b | c", "a b | c", "a | b c"};
  static const uint64_t peak[] = {1000, 2000, 2000};
  for (int i = 0; i < 3; i++) {
    fp_plan *p = tu_plan(g, plans[i]);
    fp_exec_report r = run_exact(g, p, plans[i]);
    ck_assert_uint_eq(r.peak_bytes, peak[i]);
    fp_exec_report_free(&r);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

/* The outputs depend on the input values (the seed) and on nothing else. */
START_TEST(seed_changes_outputs) {
  uint64_t seed = 1;
  fp_graph *g = eu_small_graph(FP_GEN_MLP, 30, &seed, SMALL_BYTES, SMALL_WORK);
  fp_plan *p = eu_method_plan(g, FP_METHOD_GREEDY);
  fp_exec_params prm;
  fp_exec_report r1, r2, r3;
  fp_exec_params_init(&prm);
  ck_assert_int_eq(fp_exec_run(g, p, &prm, &r1, NULL), FP_OK);
  ck_assert_int_eq(fp_exec_run(g, p, &prm, &r2, NULL), FP_OK);
  prm.seed = 2;
  ck_assert_int_eq(fp_exec_run(g, p, &prm, &r3, NULL), FP_OK);
  ck_assert_uint_eq(r1.output_digest, r2.output_digest);
  ck_assert_uint_ne(r1.output_digest, r3.output_digest);
  ck_assert_int_eq(r3.check, FP_CHECK_PASS);
  fp_exec_report_free(&r1);
  fp_exec_report_free(&r2);
  fp_exec_report_free(&r3);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* --repeat on a 12-node chain cut into groups of k nodes (so the plan has
 * ceil(12 / k) groups, counted here from the text, not by the library):
 * one kernel and one CPU launch per group, the same bytes as the
 * evaluator, and times that fit in the wall time the test measures around
 * the call (on fp_clock_now, the clock the backend times kernels with): each of
 * the `repeat` runs took at least the fastest run's time, and all of them ran
 * inside that interval. */
START_TEST(repeat_and_times) {
  enum { N = 12, REPEAT = 3 };
  fp_graph *g = tu_chain_graph(N, (uint64_t)1 << 16);
  static const int sizes[] = {1, 2, 5, 12};
  for (int c = 0; c < 4; c++) {
    char text[256];
    size_t len = 0;
    int groups = 0;
    for (int i = 0; i < N; i++) {
      if (i % sizes[c] == 0)
        groups++;
      len += (size_t)snprintf(text + len, sizeof text - len, "%sn%d",
                              i == 0              ? ""
                              : i % sizes[c] == 0 ? " | "
                                                  : " ",
                              i);
    }
    fp_plan *p = tu_plan(g, text);
    fp_exec_params prm;
    fp_exec_report r;
    fp_exec_params_init(&prm);
    prm.repeat = REPEAT;
    double t0 = fp_clock_now();
    ck_assert_int_eq(fp_exec_run(g, p, &prm, &r, NULL), FP_OK);
    double wall = fp_clock_now() - t0;
    ck_assert_msg(r.kernels == groups && r.launches == groups,
                  "%s: %d kernels, %d launches for %d groups", text,
                  (int)r.kernels, (int)r.launches, groups);
    ck_assert_ptr_nonnull(r.group_time_s);
    double sum = 0;
    for (int32_t t = 0; t < groups; t++) {
      ck_assert_msg(r.group_time_s[t] >= 0, "%s: group %d took %g s", text,
                    (int)t, r.group_time_s[t]);
      sum += r.group_time_s[t];
    }
    ck_assert_msg(REPEAT * sum <= wall && REPEAT * r.time_s <= wall,
                  "%s: %d runs of %g s (groups: %g s) in %g s of wall time",
                  text, REPEAT, r.time_s, sum, wall);
    ck_assert_uint_eq(r.peak_bytes, tu_eval(g, p).peak_bytes);
    ck_assert_uint_eq(r.traffic_bytes, tu_eval(g, p).traffic_bytes);
    fp_exec_report_free(&r);
    fp_exec_report_free(&r); /* a freed report frees again safely */
    fp_plan_destroy(p);
  }
  fp_exec_report_free(NULL);
  fp_graph_destroy(g);
}
END_TEST

/* A graph without nodes: the resident inputs are the peak. */
START_TEST(empty_graph) {
  fp_graph *g = tu_graph("{'format': 'fuseplan.graph', 'version': 1,"
                         " 'buffers': [{'name': 'p', 'bytes': 1000, 'input': "
                         "true}, {'name': 'q', 'bytes': 500, 'input': true, "
                         "'freeable': true}], 'nodes': [], 'outputs': []}");
  fp_plan *p = fp_plan_create();
  fp_exec_report r = run_exact(g, p, "empty");
  ck_assert_uint_eq(r.peak_bytes, 1000);
  ck_assert_uint_eq(r.traffic_bytes, 0);
  fp_exec_report_free(&r);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Runs p three times (seeds 1, 1, 2): the check passes each time and the
 * outputs are a function of the seed (issue 15, item 7: an input that is
 * an output of a graph without nodes was never filled). */
static void outputs_follow_seed(const fp_graph *g, const fp_plan *p,
                                const char *what) {
  fp_exec_params prm;
  fp_exec_report r[3];
  fp_exec_params_init(&prm);
  for (int i = 0; i < 3; i++) {
    prm.seed = i < 2 ? 1 : 2;
    ck_assert_int_eq(fp_exec_run(g, p, &prm, &r[i], NULL), FP_OK);
    ck_assert_msg(r[i].check == FP_CHECK_PASS, "%s: run %d: check failed", what,
                  i);
  }
  ck_assert_msg(r[0].output_digest == r[1].output_digest,
                "%s: same seed, other outputs", what);
  ck_assert_msg(r[0].output_digest != r[2].output_digest,
                "%s: other seed, same outputs", what);
  for (int i = 0; i < 3; i++)
    fp_exec_report_free(&r[i]);
}

/* 0 nodes with an input that is an output, and 1 node: deterministic. */
START_TEST(zero_and_one_node) {
  fp_graph *g = tu_graph("{'format': 'fuseplan.graph', 'version': 1,"
                         " 'buffers': [{'name': 'o', 'bytes': 4000, 'input': "
                         "true, 'freeable': true}], 'nodes': [], 'outputs': "
                         "['o']}");
  fp_plan *p = fp_plan_create();
  outputs_follow_seed(g, p, "0 nodes");
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  g = tu_chain_graph(1, 4000);
  p = fp_plan_create();
  ck_assert(fp_plan_make_eager(p, g, NULL) == FP_OK);
  outputs_follow_seed(g, p, "1 node");
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Illegal plans, bad parameters, limits: an error status and message. */
START_TEST(bad_inputs) {
  fp_graph *g = tu_graph(tu_chain3_json);
  fp_plan *bad = tu_plan(g, "b | a | c"), *ok = tu_plan(g, "a b c");
  fp_exec_params prm;
  fp_exec_report r;
  fp_error err;
  fp_exec_params_init(&prm);
  ck_assert_int_eq(fp_exec_run(g, bad, &prm, &r, &err), FP_EILLEGAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "before its writer"));
  ck_assert_ptr_null(r.group_time_s);
  ck_assert_int_eq(fp_exec_run(NULL, ok, &prm, &r, &err), FP_EARG);
  ck_assert_int_eq(fp_exec_run(g, ok, &prm, NULL, &err), FP_EARG);
  prm.repeat = 0;
  ck_assert_int_eq(fp_exec_run(g, ok, &prm, &r, &err), FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "repeat"));
  fp_exec_params_init(&prm);
  snprintf(prm.arch, sizeof prm.arch, "sm_9x; rm");
  ck_assert_int_eq(fp_exec_params_check(&prm, &err), FP_EARG);
  fp_exec_params_init(&prm);
  prm.rtol = NAN;
  ck_assert_int_eq(fp_exec_params_check(&prm, &err), FP_EARG);
  fp_exec_params_init(&prm);
  prm.memory_limit = 2999; /* plan peak 2000 + eager peak 3000 */
  ck_assert_int_eq(fp_exec_run(g, ok, &prm, &r, &err), FP_ELIMIT);
  prm.check = false; /* no reference run: the plan alone fits */
  ck_assert_int_eq(fp_exec_run(g, ok, &prm, &r, &err), FP_OK);
  fp_exec_report_free(&r);
  /* NULL params are the defaults. */
  ck_assert_int_eq(fp_exec_run(g, ok, NULL, &r, &err), FP_OK);
  ck_assert_int_eq(r.check, FP_CHECK_PASS);
  fp_exec_report_free(&r);
  fp_plan_destroy(bad);
  fp_plan_destroy(ok);
  fp_graph_destroy(g);
}
END_TEST

/* The CUDA backend where it may not run: a clear status, never a crash.
 * What to expect comes from configure (FP_HAVE_CUDA in config.h), not
 * from the library.  Without the toolkit every CUDA entry point says
 * FP_ENOTBUILT with a message naming CUDA.  With it, the only reason not
 * to run is FP_ENODEVICE (again naming CUDA), and a run that goes ahead
 * gives one kernel for the fused chain and passes its check. */
START_TEST(cuda_unavailable_is_clean) {
  fp_graph *g = tu_graph(tu_chain3_json);
  fp_plan *p = tu_plan(g, "a b c");
  fp_exec_params prm;
  fp_exec_report r;
  fp_error err, aerr;
  memset(&err, 0, sizeof err);
  memset(&aerr, 0, sizeof aerr);
  fp_exec_params_init(&prm);
  prm.backend = FP_BACKEND_CUDA;
  fp_status st = fp_exec_run(g, p, &prm, &r, &err);
  fp_status avail = fp_exec_cuda_available(&aerr);
#ifdef FP_HAVE_CUDA
  ck_assert(fp_exec_cuda_built());
  ck_assert_msg(avail == FP_OK || avail == FP_ENODEVICE, "available: %s",
                fp_status_name(avail));
  if (avail == FP_OK) {
    ck_assert_msg(st == FP_OK, "%s", err.msg);
    ck_assert_int_eq(r.kernels, 1);
    ck_assert_int_eq(r.check, FP_CHECK_PASS);
  } else {
    ck_assert_int_eq(st, FP_ENODEVICE);
    ck_assert_ptr_nonnull(strstr(err.msg, "CUDA"));
    ck_assert_ptr_nonnull(strstr(aerr.msg, "CUDA"));
  }
#else
  int32_t kernels = -1;
  uint64_t bytes = 0;
  double secs = -1;
  ck_assert(!fp_exec_cuda_built());
  ck_assert_int_eq(avail, FP_ENOTBUILT);
  ck_assert_int_eq(st, FP_ENOTBUILT);
  ck_assert_ptr_null(r.group_time_s);
  ck_assert_ptr_nonnull(strstr(err.msg, "CUDA"));
  ck_assert_ptr_nonnull(strstr(aerr.msg, "CUDA"));
  memset(&err, 0, sizeof err);
  ck_assert_int_eq(
      fp_exec_cuda_compile_plan(g, p, NULL, &kernels, &bytes, &secs, &err),
      FP_ENOTBUILT);
  ck_assert_ptr_nonnull(strstr(err.msg, "CUDA"));
  memset(&err, 0, sizeof err);
  ck_assert_int_eq(fp_exec_cuda_compile_source("__global__ void k() {}",
                                               "sm_90", &bytes, &err),
                   FP_ENOTBUILT);
  ck_assert_ptr_nonnull(strstr(err.msg, "CUDA"));
#endif
  fp_exec_report_free(&r);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* The CUDA generator, without CUDA: what its kernels load and store
 * equals the prediction, every group gets a kernel, and a group of
 * pointwise nodes over one iteration space is a single launch that keeps
 * every intermediate in registers (no scratch). */
START_TEST(cuda_generator_accounting) {
  uint64_t seed = 1;
  fp_graph *g =
      eu_small_graph((fp_gen_family)_i, 40, &seed, UINT64_MAX, UINT64_MAX);
  fp_graph *bare = eu_strip_ops(g);
  for (int i = 0; i < 4; i++) {
    const fp_graph *gg = i < 3 ? g : bare;
    fp_plan *p = eu_method_plan(gg, i == 0   ? FP_METHOD_EAGER
                                    : i == 2 ? FP_METHOD_GREEDY_LOWMEM
                                             : FP_METHOD_GREEDY);
    fp_metrics m = tu_eval(gg, p);
    fx_sched s;
    fx_reads reads;
    uint64_t writes = 0;
    ck_assert_int_eq(fx_sched_build(gg, p, &s, NULL), FP_OK);
    ck_assert_int_eq(fx_reads_init(&reads, s.buffers), 0);
    for (int32_t t = 0; t < s.steps; t++) {
      fx_kernel k;
      ck_assert_int_eq(fx_gen_kernel(&s, t, &k, NULL), FP_OK);
      ck_assert_ptr_nonnull(strstr(k.src, k.name));
      ck_assert_int_ge(k.n_launch, 1);
      bool pointwise = true;
      for (int32_t j = s.goff[t]; j < s.goff[t + 1]; j++) {
        const fp_node *n = fp_graph_node(gg, s.gnodes[j]);
        pointwise &= n->kind == FP_KIND_POINTWISE && !fx_is_surrogate(n) &&
                     n->numel == fp_graph_node(gg, s.gnodes[s.goff[t]])->numel;
      }
      if (pointwise) {
        ck_assert_int_eq(k.n_launch, 1);
        ck_assert_int_eq(k.n_scratch, 0);
      }
      fx_kernel_traffic(&s, t, &reads, &writes);
      fx_kernel_free(&k);
    }
    ck_assert_uint_eq(reads.total, m.read_bytes);
    ck_assert_uint_eq(writes, m.write_bytes);
    fx_reads_free(&reads);
    fx_sched_free(&s);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(bare);
  fp_graph_destroy(g);
}
END_TEST

/* One case per kind of test, so that CK_RUN_CASE can pick one. */
static TCase *tcase(Suite *s, const char *name) {
  TCase *tc = tcase_create(name);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  return tc;
}

int main(void) {
  Suite *s = suite_create("exec_cpu");
  TCase *tc = tcase(s, "methods");
  tcase_add_loop_test(tc, generated_every_method, 0, FP_GEN_FAMILY_COUNT_);
  tcase_add_loop_test(tc, solver_plans, 0, FP_GEN_FAMILY_COUNT_);
  tc = tcase(s, "surrogates");
  tcase_add_loop_test(tc, surrogates_generated, 0, FP_GEN_FAMILY_COUNT_);
  tcase_add_test(tc, surrogates_random_graphs);
  tc = tcase(s, "example");
  tcase_add_test(tc, surrogates_example_graph);
  tc = tcase(s, "generator");
  tcase_add_loop_test(tc, cuda_generator_accounting, 0, FP_GEN_FAMILY_COUNT_);
  tc = tcase(s, "api");
  tcase_add_test(tc, chain_by_hand);
  tcase_add_test(tc, inplace_chain_by_hand);
  tcase_add_test(tc, workspaces_random_graphs);
  tcase_add_test(tc, seed_changes_outputs);
  tcase_add_test(tc, repeat_and_times);
  tcase_add_test(tc, empty_graph);
  tcase_add_test(tc, zero_and_one_node);
  tcase_add_test(tc, bad_inputs);
  tcase_add_test(tc, cuda_unavailable_is_clean);
  return tu_run(s);
}
