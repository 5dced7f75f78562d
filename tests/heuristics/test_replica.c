/*
 * test_replica.c -- greedy and `--order inductor` against answers worked
 * out by hand from Inductor's own rules (torch 2.15, scheduler.py,
 * choices.py, memory.py; docs/heuristics.md), on graphs small enough to
 * follow: the FusionScore order (the 16x memory rule, then same kind),
 * topological_sort_schedule's baseline and its win on ties, and the
 * MultiOutput nodes of a multi-result kernel that steer
 * topological_sort_dfs, the C++ scheduling's outer-loop fusion with code
 * generation's splits, the reorder of the split scheduler groups, and
 * memory.py's sizes of inputs and mutations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"
#include "tests/testutil.h"

/* Node names of p's groups in order, as "a b | c" (tu_plan's form). */
static void plan_text(const fp_graph *g, const fp_plan *p, char *out,
                      size_t cap) {
  size_t k = 0;
  out[0] = '\0';
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++)
      k +=
          (size_t)snprintf(out + k, cap - k, "%s%s", i ? " " : (t ? " | " : ""),
                           fp_graph_node(g, grp[i])->name);
  }
}

static fp_plan *greedy(const fp_graph *g) {
  fp_fusion_params prm;
  fp_error err;
  fp_fusion_params_init(&prm, FP_METHOD_GREEDY);
  fp_plan *p = fp_plan_create();
  ck_assert_msg(fp_fuse(g, &prm, p, &err) == FP_OK, "greedy: %s", err.msg);
  return p;
}

/* Checks that greedy's plan of the graph in `json` is `want` (groups as
 * text, in order). */
static void greedy_gives(const char *json, const char *want) {
  fp_graph *g = tu_graph(json);
  fp_plan *p = greedy(g);
  char text[128];
  plan_text(g, p, text, sizeof text);
  ck_assert_str_eq(text, want);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}

/* p (groups as text) reordered with `o`, as text. */
static void reordered(const fp_graph *g, const char *groups, fp_order o,
                      char *out, size_t cap) {
  fp_plan *p = tu_plan(g, groups);
  fp_error err;
  ck_assert_msg(fp_plan_reorder(g, p, o, NULL, &err) == FP_OK, "%s", err.msg);
  ck_assert_int_eq(fp_plan_check(g, p, INT32_MAX, NULL), FP_OK);
  plan_text(g, p, out, cap);
  fp_plan_destroy(p);
}

/* p reads x with q (horizontal, 4000 shared bytes, both pointwise) and
 * writes P for the reduction r (vertical, P shared, mixed kinds).  With
 * max_fusion_size 2, the first pair tried wins p.  FusionScore: when one
 * memory score is more than 16 times the other, memory decides; otherwise
 * the same-kind pair goes first.  So with P = 8000 (2x) Inductor fuses
 * p+q, with P = 80000 (20x) p+r.  The %s is P's bytes. */
static const char score_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'score',"
    " 'max_fusion_size': 2,"
    " 'buffers': [{'name': 'x', 'bytes': 4000, 'input': true},"
    "  {'name': 'P', 'bytes': %s}, {'name': 'Q', 'bytes': 4000},"
    "  {'name': 'R', 'bytes': 40}],"
    " 'nodes': ["
    "  {'name': 'p', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['P']},"
    "  {'name': 'q', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['Q']},"
    "  {'name': 'r', 'kind': 'reduction', 'iter': [10, 100], 'reads': ['P'],"
    "   'writes': ['R']}],"
    " 'outputs': ['Q', 'R']}";

START_TEST(fusion_score_sixteen_times_rule) {
  const char *bytes[] = {"8000", "80000"};
  const char *want[] = {"p q", "p r"};
  for (int i = 0; i < 2; i++) {
    char json[sizeof score_json + 16], text[128];
    snprintf(json, sizeof json, score_json, bytes[i]);
    fp_graph *g = tu_graph(json);
    fp_plan *p = greedy(g);
    plan_text(g, p, text, sizeof text);
    ck_assert_msg(strstr(text, want[i]) != NULL, "P = %s: %s, want %s fused",
                  bytes[i], text, want[i]);
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
}
END_TEST

/* Groups A = {a, d} (listed 0 and 3), C = {c} (1), B = {b} (2); d reads
 * b's output, so A needs B.  Every buffer is an output of the same size:
 * no order has a lower estimate, so reorder_for_peak_memory keeps its
 * baseline.  That baseline is topological_sort_schedule over the groups
 * sorted by smallest member: A first, so its dependency B is emitted
 * before it, then C: B, A, C.  (A Kahn sort by smallest member, fuseplan's
 * `listed`, gives C, B, A.) */
static const char baseline_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'baseline',"
    " 'buffers': [{'name': 'x', 'bytes': 400, 'input': true},"
    "  {'name': 'A', 'bytes': 400}, {'name': 'C', 'bytes': 400},"
    "  {'name': 'B', 'bytes': 400}, {'name': 'D', 'bytes': 400}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['x'],"
    "   'writes': ['A']},"
    "  {'name': 'c', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['x'],"
    "   'writes': ['C']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['x'],"
    "   'writes': ['B']},"
    "  {'name': 'd', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['B'],"
    "   'writes': ['D']}],"
    " 'outputs': ['A', 'C', 'B', 'D']}";

START_TEST(baseline_is_topological_sort_schedule) {
  fp_graph *g = tu_graph(baseline_json);
  char text[128];
  reordered(g, "c | b | a d", FP_ORDER_INDUCTOR, text, sizeof text);
  ck_assert_str_eq(text, "b | a d | c");
  reordered(g, "b | a d | c", FP_ORDER_LISTED, text, sizeof text);
  ck_assert_str_eq(text, "c | b | a d");
  fp_graph_destroy(g);
}
END_TEST

/* k is a fallback kernel with two results, r1 and r2, that nobody reads;
 * n writes A, an output.  Inductor's node list has two MultiOutput nodes
 * after k, of size 0 and reading a 0-byte holder, so
 * topological_sort_dfs visits them first, and with them k: k, n.  Its
 * estimate is 10000 (k's results, freed at their MultiOutput steps, then
 * A), below the baseline's n, k: 1000 + 10000.  lpmf (n allocates less)
 * and bfs (n is listed first) give n, k; so Inductor runs k first.
 * fuseplan's `best` has no MultiOutput nodes and keeps n, k. */
static const char multi_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'multi',"
    " 'buffers': [{'name': 'x', 'bytes': 400, 'input': true},"
    "  {'name': 'A', 'bytes': 1000}, {'name': 'r1', 'bytes': 5000},"
    "  {'name': 'r2', 'bytes': 5000}],"
    " 'nodes': ["
    "  {'name': 'n', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['x'],"
    "   'writes': ['A']},"
    "  {'name': 'k', 'kind': 'extern', 'reads': ['x'],"
    "   'writes': ['r1', 'r2']}],"
    " 'outputs': ['A']}";

START_TEST(multi_output_nodes_steer_dfs) {
  fp_graph *g = tu_graph(multi_json);
  char text[64];
  reordered(g, "n | k", FP_ORDER_INDUCTOR, text, sizeof text);
  ck_assert_str_eq(text, "k | n");
  reordered(g, "n | k", FP_ORDER_BEST, text, sizeof text);
  ck_assert_str_eq(text, "n | k");
  fp_graph_destroy(g);
}
END_TEST

/* A layer norm as Inductor's C++ scheduling sees it (deit's op35-op39):
 * r1 (8) x (32) sums x, p1 (8) makes the mean, r2 (8) x (32) the
 * variance, p2 (8, 32) normalizes.  A reduction's consumer joins it only
 * by outer-loop fusion (depth 1, the rows), so the scheduler makes one
 * group of all four, each its own loop nest.  Code generation cannot
 * merge the loops of p1 (vectorized along its only loop) with the
 * reductions', and emits the parts, which the exporter says by listing
 * r1-p1 and p1-r2 unfusible.  Greedy, which used to fuse r2 with p2 (a
 * pointwise node over the reduction's input space), must give the four
 * kernels. */
static const char layernorm_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'name': 'layernorm',"
    " 'buffers': [{'name': 'x', 'bytes': 1024, 'input': true},"
    "  {'name': 'm', 'bytes': 32}, {'name': 'a', 'bytes': 32},"
    "  {'name': 'v', 'bytes': 32}, {'name': 'y', 'bytes': 1024}],"
    " 'nodes': ["
    "  {'name': 'r1', 'kind': 'reduction', 'iter': [8, 32],"
    "   'loop': [[8], [32]], 'reads': ['x'], 'writes': ['m']},"
    "  {'name': 'p1', 'kind': 'pointwise', 'iter': [8, 1],"
    "   'loop': [[8], []], 'reads': ['m'], 'writes': ['a']},"
    "  {'name': 'r2', 'kind': 'reduction', 'iter': [8, 32],"
    "   'loop': [[8], [32]], 'reads': ['x', 'a'], 'writes': ['v']},"
    "  {'name': 'p2', 'kind': 'pointwise', 'iter': [256, 1],"
    "   'loop': [[8, 32], []], 'reads': ['x', 'a', 'v'], 'writes': ['y']}],"
    " 'outputs': ['y']%s}";

START_TEST(outer_loop_group_split_as_code_generation) {
  char json[sizeof layernorm_json + 64];
  snprintf(json, sizeof json, layernorm_json,
           ", 'unfusible': [['r1', 'p1'], ['p1', 'r2']]");
  greedy_gives(json, "r1 | p1 | r2 | p2");
  /* r1 and p1 alone: their outer-loop group is one kernel */
  greedy_gives("{'format': 'fuseplan.graph', 'version': 3, 'name': 'sum',"
               " 'buffers': [{'name': 'x', 'bytes': 1024, 'input': true},"
               "  {'name': 'm', 'bytes': 32}, {'name': 'a', 'bytes': 32}],"
               " 'nodes': ["
               "  {'name': 'r1', 'kind': 'reduction', 'iter': [8, 32],"
               "   'loop': [[8], [32]], 'reads': ['x'], 'writes': ['m']},"
               "  {'name': 'p1', 'kind': 'pointwise', 'iter': [8, 1],"
               "   'loop': [[8], []], 'reads': ['m'], 'writes': ['a']}],"
               " 'outputs': ['a']}",
               "r1 p1");
}
END_TEST

/* Batch-norm statistics (mobilenetv3's op3-op6, op348-op352): r1, r2 sum
 * x's rows; pa (8) uses r2's result, pb (8) updates the running mean w
 * from r1's (listed last, as Inductor lowers it); n normalizes x in
 * another loop order, so it joins neither reduction.  The scheduler
 * group {r1 r2 | pa | pb} is split into three kernels (the exporter's
 * unfusible pairs), but Inductor's reorder ran on the group: pb right
 * after pa, before n.  Ordered kernel by kernel, the baseline (n before
 * pb, by smallest member) has the lower estimate; `--order inductor`
 * on the kernels finds the scheduler group again. */
static const char batchnorm_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'name': 'batchnorm',"
    " 'buffers': [{'name': 'x', 'bytes': 1024, 'input': true},"
    "  {'name': 'primals_4', 'bytes': 32, 'input': true},"
    "  {'name': 'm1', 'bytes': 32}, {'name': 'm2', 'bytes': 32},"
    "  {'name': 'a', 'bytes': 32}, {'name': 'y', 'bytes': 1024},"
    "  {'name': 's', 'bytes': 32}],"
    " 'nodes': ["
    "  {'name': 'r1', 'kind': 'reduction', 'iter': [8, 32],"
    "   'loop': [[8], [32]], 'reads': ['x'], 'writes': ['m1']},"
    "  {'name': 'r2', 'kind': 'reduction', 'iter': [8, 32],"
    "   'loop': [[8], [32]], 'reads': ['x'], 'writes': ['m2']},"
    "  {'name': 'pa', 'kind': 'pointwise', 'iter': [8, 1],"
    "   'loop': [[8], []], 'reads': ['m2'], 'writes': ['a']},"
    "  {'name': 'n', 'kind': 'pointwise', 'iter': [256, 1],"
    "   'loop': [[32, 8], []], 'reads': ['x', 'm1', 'a'], 'writes': ['y']},"
    "  {'name': 'pb', 'kind': 'pointwise', 'iter': [8, 1],"
    "   'loop': [[8], []], 'reads': ['m1', 'primals_4'], 'writes': ['s']}],"
    " 'outputs': ['y', 's'],"
    " 'unfusible': [['r1', 'pa'], ['r2', 'pa'], ['r1', 'pb'], ['r2', 'pb']]}";

START_TEST(split_group_ordered_as_one) {
  greedy_gives(batchnorm_json, "r1 r2 | pa | pb | n");
  /* the same from the kernels alone: `inductor` regroups them first */
  fp_graph *g = tu_graph(batchnorm_json);
  char text[64];
  reordered(g, "r1 r2 | pa | n | pb", FP_ORDER_INDUCTOR, text, sizeof text);
  ck_assert_str_eq(text, "r1 r2 | pa | pb | n");
  fp_graph_destroy(g);
}
END_TEST

/* A group norm (poolformer_s12's op6-op12): r1, r2 (4) x (64) take
 * statistics per sample; p (4, 4) reads them broadcast along its inner
 * loop and q (4) reads r1's; n (4, 16, 4) runs over x in another order
 * and reads r1's result along its last loop, whose 4 only matches r1's
 * rows by size (Inductor's memory dependencies do not match: the oracle
 * lists r1-n and r2-n unfusible).  Inductor's scheduler group is {r1 r2 |
 * p | q}, split by code generation (r1-q, r2-q listed), then n; q, listed
 * after n as Inductor lowers it, runs with its group. */
static const char groupnorm_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'name': 'groupnorm',"
    " 'buffers': [{'name': 'x', 'bytes': 1024, 'input': true},"
    "  {'name': 'm1', 'bytes': 16}, {'name': 'm2', 'bytes': 16},"
    "  {'name': 's', 'bytes': 64}, {'name': 'y', 'bytes': 1024},"
    "  {'name': 't', 'bytes': 16}],"
    " 'nodes': ["
    "  {'name': 'r1', 'kind': 'reduction', 'iter': [4, 64],"
    "   'loop': [[4], [64]], 'reads': ['x'], 'writes': ['m1']},"
    "  {'name': 'r2', 'kind': 'reduction', 'iter': [4, 64],"
    "   'loop': [[4], [64]], 'reads': ['x'], 'writes': ['m2']},"
    "  {'name': 'p', 'kind': 'pointwise', 'iter': [16, 1],"
    "   'loop': [[4, 4], []], 'reads': ['m1', 'm2'], 'writes': ['s']},"
    "  {'name': 'n', 'kind': 'pointwise', 'iter': [256, 1],"
    "   'loop': [[4, 16, 4], []], 'reads': ['x', 'm1'], 'writes': ['y']},"
    "  {'name': 'q', 'kind': 'pointwise', 'iter': [4, 1],"
    "   'loop': [[4], []], 'reads': ['m1'], 'writes': ['t']}],"
    " 'outputs': ['s', 'y', 't'],"
    " 'unfusible': [['r1', 'n'], ['r2', 'n'], ['r1', 'q'], ['r2', 'q']]}";

START_TEST(outer_loop_join_indexed_alike) {
  greedy_gives(groupnorm_json, "r1 r2 | p | q | n");
}
END_TEST

/* n2 updates primals_1, a running statistic, in place: the exporter
 * writes the mutation as a new version b2 that is an output and makes
 * primals_1 freeable (docs/exporter.md, "Mutations").  memory.py never
 * frees an input named primals_* and gives a mutation's new version no
 * bytes, so n2 frees and allocates nothing: every order peaks at b0 + b1
 * (16000) and the baseline, n0 n1 n2, wins the tie.  Counted with the
 * exported sizes, running n2 first would free primals_1's 10000 bytes
 * before b0 and b1, a lower estimate. */
static const char mutation_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'name': 'mutation',"
    " 'buffers': [{'name': 'x', 'bytes': 400, 'input': true},"
    "  {'name': 'primals_1', 'bytes': 10000, 'input': true,"
    "   'freeable': true},"
    "  {'name': 'b0', 'bytes': 8000}, {'name': 'b1', 'bytes': 8000},"
    "  {'name': 'b2', 'bytes': 10000}],"
    " 'nodes': ["
    "  {'name': 'n0', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['x'],"
    "   'writes': ['b0']},"
    "  {'name': 'n1', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['b0'],"
    "   'writes': ['b1']},"
    "  {'name': 'n2', 'kind': 'pointwise', 'iter': [25, 1],"
    "   'reads': ['primals_1'], 'writes': ['b2'],"
    "   'inplace': [['primals_1', 'b2']]}],"
    " 'outputs': ['b0', 'b1', 'b2']}";

START_TEST(mutation_sized_as_memory_py) {
  fp_graph *g = tu_graph(mutation_json);
  char text[64];
  reordered(g, "n2 | n0 | n1", FP_ORDER_INDUCTOR, text, sizeof text);
  ck_assert_str_eq(text, "n0 | n1 | n2");
  fp_graph_destroy(g);
}
END_TEST

/* On every generated graph, `inductor` keeps the grouping and gives a
 * legal order (the plan is checked), whatever order it starts from. */
START_TEST(inductor_order_is_legal_and_stable) {
  fp_graph *g = tu_generated(_i % 4, 120, (uint64_t)_i + 3);
  fp_plan *p = greedy(g), *q = fp_plan_create();
  fp_error err;
  ck_assert_int_eq(fp_plan_copy(q, p, &err), FP_OK);
  ck_assert_int_eq(fp_plan_reorder(g, q, FP_ORDER_DFS, NULL, &err), FP_OK);
  ck_assert_int_eq(fp_plan_reorder(g, q, FP_ORDER_INDUCTOR, NULL, &err), FP_OK);
  ck_assert_int_eq(fp_plan_check(g, q, INT32_MAX, NULL), FP_OK);
  /* greedy's default order is `inductor`: the same order from any start */
  ck_assert_int_eq(fp_plan_group_count(p), fp_plan_group_count(q));
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t n1, n2;
    const int32_t *a = fp_plan_group(p, t, &n1), *b = fp_plan_group(q, t, &n2);
    ck_assert_int_eq(n1, n2);
    ck_assert_mem_eq(a, b, (size_t)n1 * sizeof *a);
  }
  fp_plan_destroy(p);
  fp_plan_destroy(q);
  fp_graph_destroy(g);
}
END_TEST

static Suite *replica_suite(void) {
  Suite *s = suite_create("heuristics/replica");
  TCase *tc = tcase_create("hand");
  tcase_add_test(tc, fusion_score_sixteen_times_rule);
  tcase_add_test(tc, baseline_is_topological_sort_schedule);
  tcase_add_test(tc, multi_output_nodes_steer_dfs);
  tcase_add_test(tc, outer_loop_group_split_as_code_generation);
  tcase_add_test(tc, split_group_ordered_as_one);
  tcase_add_test(tc, outer_loop_join_indexed_alike);
  tcase_add_test(tc, mutation_sized_as_memory_py);
  suite_add_tcase(s, tc);
  TCase *gen = tcase_create("generated");
  tcase_add_loop_test(gen, inductor_order_is_legal_and_stable, 0, 8);
  suite_add_tcase(s, gen);
  return s;
}

int main(void) {
  return tu_run(replica_suite());
}
