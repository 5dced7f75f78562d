/*
 * test_cluster_merge.c -- moving buffers between pairs of clusters
 * (solver/bound/cluster_merge.c): the new partition holds the same buffers,
 * its total is the sum of its clusters' bounds and above the old one,
 * every cluster's bound is at most its share in an optimum plan of the
 * exhaustive reference (so the total never exceeds the optimum), the
 * moves raise some bounds strictly, and the same holds through
 * fp_lower_bound with the moves on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/util.h"
#include "solver/bound/bound.h"
#include "solver/bound/cluster_merge.h"
#include "solver/common/solver_test.h"
#include "solver/solver.h"
#include "tests/testutil.h"

/* The traffic optimum of g and a plan reaching it (exhaustive). */
static uint64_t optimum(const fp_graph *g, fp_plan *p) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_TRAFFIC;
  prm.limits.peak = FP_NO_LIMIT;
  fp_metrics m;
  fp_error err;
  ck_assert_msg(fp_exhaustive(g, &prm, p, &m, &err) == FP_OK, "%s", err.msg);
  return m.traffic_bytes;
}

/* Each buffer's share of the traffic of plan p: the evaluator's traffic
 * of p on a copy of g where only that cluster's buffers keep their bytes
 * is the cluster's share; so sum the shares by cluster through `of`. */
static uint64_t cluster_share(const fp_graph *g, const fp_plan *p,
                              const int32_t *of, int32_t c) {
  fp_error err;
  fp_graph *h = fp_graph_create("share");
  ck_assert_ptr_nonnull(h);
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    ck_assert_int_eq(
        fp_graph_add_buffer(h, buf->name, of[b] == c ? buf->bytes : 0,
                            buf->input, buf->input && buf->freeable, &err),
        b);
  }
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *n = fp_graph_node(g, v);
    fp_read *reads = malloc(((size_t)n->n_reads + 1) * sizeof *reads);
    for (int32_t i = 0; i < n->n_reads; i++) {
      reads[i] = n->reads[i];
      reads[i].bytes = of[reads[i].buffer] == c ? reads[i].bytes : 0;
    }
    fp_node_spec spec = {n->name,     n->kind, n->numel,  n->rnumel, n->n_reads,
                         n->n_writes, reads,   n->writes, NULL};
    ck_assert_int_eq(fp_graph_add_node(h, &spec, &err), v);
    free(reads);
  }
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    if (fp_graph_buffer(g, b)->output)
      ck_assert_int_eq(fp_graph_add_output(h, b, &err), FP_OK);
  ck_assert_int_eq(
      fp_graph_set_max_fusion_size(h, fp_graph_max_fusion_size(g), &err),
      FP_OK);
  for (int32_t i = 0; i < fp_graph_unfusible_count(g); i++) {
    int32_t u, v;
    fp_graph_unfusible_pair(g, i, &u, &v);
    ck_assert_int_eq(fp_graph_add_unfusible(h, u, v, &err), FP_OK);
  }
  ck_assert_int_eq(fp_graph_finalize(h, &err), FP_OK);
  uint64_t t = tu_eval(h, p).traffic_bytes;
  fp_graph_destroy(h);
  return t;
}

/* Partitions g with clusters of `size` nodes (no moves), runs the moves,
 * and checks the result against an optimum plan of g.  Returns their
 * gain. */
static uint64_t check_merges(const fp_graph *g, int32_t size) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  fp_error err;
  solver_cuts cuts;
  solver_test_cluster_sizes(&size, 1);
  solver_test_cluster_merge(0);
  ck_assert_int_eq(solver_traffic_cuts(g, &prm, 30, &cuts, &err), FP_OK);
  solver_test_cluster_merge(1);
  solver_test_cluster_sizes(NULL, 0);
  ck_assert_int_eq(cuts.n, 1);
  const solver_partition *part = &cuts.part[0];
  solver_partition out = {0};
  ck_assert_int_eq(solver_merge_clusters(g, fp_graph_max_fusion_size(g), part,
                                         fp_clock_now() + 30, NULL, &out, &err),
                   FP_OK);
  uint64_t gain = 0;
  if (out.count > 0) {
    fp_plan *p = fp_plan_create();
    uint64_t opt = optimum(g, p);
    ck_assert_int_eq(out.count, part->count);
    uint64_t sum = 0;
    for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
      ck_assert_int_eq(out.of[b] < 0, part->of[b] < 0); /* same buffers */
    for (int32_t c = 0; c < out.count; c++) {
      sum += out.lb[c];
      ck_assert_uint_le(out.lb[c], cluster_share(g, p, out.of, c));
    }
    ck_assert_uint_eq(sum, out.total);
    ck_assert_uint_gt(out.total, part->total);
    ck_assert_uint_le(out.total, opt);
    gain = out.total - part->total;
    free(out.of);
    free(out.lb);
    fp_plan_destroy(p);
  }
  solver_cuts_free(&cuts);
  return gain;
}

START_TEST(merges_stay_below_the_optimum) {
  tu_rng r = {20261204};
  int32_t gained = 0;
  for (int i = 0; i < 300; i++) {
    fp_graph *g = tu_random_graph(&r, 6, FP_EXHAUSTIVE_MAX_NODES);
    int32_t size = 2 + (int32_t)tu_below(&r, 3);
    gained += check_merges(g, size) > 0;
    fp_graph_destroy(g);
  }
  /* the moves must do something on some of them */
  ck_assert_int_gt(gained, 0);
}
END_TEST

/* fp_lower_bound with the moves on never exceeds the optimum, and is
 * never below the bound without them. */
START_TEST(lower_bound_with_merges) {
  tu_rng r = {4121};
  int32_t raised = 0, size = 3;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  for (int i = 0; i < 200; i++) {
    fp_graph *g = tu_random_graph(&r, 6, FP_EXHAUSTIVE_MAX_NODES);
    fp_plan *p = fp_plan_create();
    fp_error err;
    double with, without;
    uint64_t opt = optimum(g, p);
    solver_test_cluster_sizes(&size, 1);
    solver_test_cluster_merge(0);
    ck_assert_int_eq(fp_lower_bound(g, &prm, 30, &without, &err), FP_OK);
    solver_test_cluster_merge(1);
    ck_assert_int_eq(fp_lower_bound(g, &prm, 30, &with, &err), FP_OK);
    solver_test_cluster_sizes(NULL, 0);
    ck_assert_double_le(with, (double)opt);
    ck_assert_double_ge(with, without);
    raised += with > without;
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(raised, 0);
}
END_TEST

/* A passed deadline moves nothing and is no error. */
START_TEST(passed_deadline_merges_nothing) {
  tu_rng r = {77};
  fp_graph *g = tu_random_graph(&r, 10, 10);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  fp_error err;
  solver_cuts cuts;
  int32_t size = 2;
  solver_test_cluster_sizes(&size, 1);
  solver_test_cluster_merge(0);
  ck_assert_int_eq(solver_traffic_cuts(g, &prm, 30, &cuts, &err), FP_OK);
  solver_test_cluster_merge(1);
  solver_test_cluster_sizes(NULL, 0);
  solver_partition out = {0};
  ck_assert_int_eq(solver_merge_clusters(g, fp_graph_max_fusion_size(g),
                                         &cuts.part[0], fp_clock_now() - 1,
                                         NULL, &out, &err),
                   FP_OK);
  ck_assert_int_eq(out.count, 0);
  ck_assert_ptr_null(out.of);
  solver_cuts_free(&cuts);
  fp_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cluster_merge");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, merges_stay_below_the_optimum);
  tcase_add_test(tc, lower_bound_with_merges);
  tcase_add_test(tc, passed_deadline_merges_nothing);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
