/*
 * test_fusion.c -- the heuristics: hand-built graphs with known answers
 * (chains fuse, horizontal fusion only in greedy, extern alone, fusion
 * size, cycles refused, the peak-memory situation that motivates
 * fuseplan), properties on generated graphs of every family, the orders,
 * and the incremental peak tracker held to the evaluator after every
 * fusion.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/generate.h"
#include "heuristics/fuser.h"
#include "heuristics/heuristics.h"
#include "heuristics/peak.h"
#include "tests/testutil.h"

static fp_plan *run(const fp_graph *g, fp_method m, int32_t k) {
  fp_fusion_params prm;
  fp_error err;
  fp_fusion_params_init(&prm, m);
  prm.limits.max_fusion_size = k;
  fp_plan *p = fp_plan_create();
  ck_assert_msg(fp_fuse(g, &prm, p, &err) == FP_OK, "%s: %s", fp_method_name(m),
                err.msg);
  ck_assert_int_eq(fp_plan_check(g, p, k, NULL), FP_OK);
  ck_assert_str_eq(fp_plan_solver(p)->method, fp_method_name(m));
  return p;
}

/* The group index of node `name` in p. */
static int32_t group_of(const fp_graph *g, const fp_plan *p, const char *name) {
  int32_t v = fp_graph_find_node(g, name);
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    for (int32_t i = 0; i < len; i++)
      if (grp[i] == v)
        return t;
  }
  ck_abort_msg("node %s not in plan", name);
  return -1;
}

START_TEST(chain_fuses_into_one_kernel) {
  fp_graph *g = tu_chain_graph(8, 1024);
  fp_plan *p = run(g, FP_METHOD_GREEDY, 0);
  ck_assert_int_eq(fp_plan_group_count(p), 1);
  fp_metrics m = tu_eval(g, p);
  ck_assert_uint_eq(m.traffic_bytes, 2048); /* read x, write the output */
  fp_plan_destroy(p);
  /* max_fusion_size 3: 8 nodes need at least 3 groups, none over 3 */
  p = run(g, FP_METHOD_GREEDY, 3);
  ck_assert_int_ge(fp_plan_group_count(p), 3);
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    fp_plan_group(p, t, &len);
    ck_assert_int_le(len, 3);
  }
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Two readers of x (horizontal), an extern between, and a node whose
 * fusion with its producer would close a cycle through the extern. */
static const char shapes_json[] =
    "{'format': 'fuseplan.graph', 'version': 1,"
    " 'buffers': [{'name': 'x', 'bytes': 4096, 'input': true},"
    "  {'name': 'h1', 'bytes': 4096}, {'name': 'h2', 'bytes': 4096},"
    "  {'name': 'a', 'bytes': 4096}, {'name': 'e', 'bytes': 4096},"
    "  {'name': 'c', 'bytes': 4096}],"
    " 'nodes': ["
    "  {'name': 'hz1', 'kind': 'pointwise', 'iter': [1024, 1],"
    "   'reads': ['x'], 'writes': ['h1']},"
    "  {'name': 'hz2', 'kind': 'pointwise', 'iter': [1024, 1],"
    "   'reads': ['x'], 'writes': ['h2']},"
    "  {'name': 'pa', 'kind': 'pointwise', 'iter': [1024, 1],"
    "   'reads': ['h1'], 'writes': ['a']},"
    "  {'name': 'ext', 'kind': 'extern', 'reads': ['a'], 'writes': ['e']},"
    "  {'name': 'pc', 'kind': 'pointwise', 'iter': [1024, 1],"
    "   'reads': ['a', 'e'], 'writes': ['c']}],"
    " 'outputs': ['c', 'h2']}";

START_TEST(horizontal_extern_and_cycles) {
  fp_graph *g = tu_graph(shapes_json);
  fp_plan *p = run(g, FP_METHOD_GREEDY, 0);
  ck_assert_int_eq(group_of(g, p, "hz1"), group_of(g, p, "hz2"));
  ck_assert_int_ne(group_of(g, p, "ext"), group_of(g, p, "pa"));
  /* pa -> ext -> pc: fusing pa and pc would need ext inside the kernel */
  ck_assert_int_ne(group_of(g, p, "pa"), group_of(g, p, "pc"));
  int32_t len;
  fp_plan_group(p, group_of(g, p, "ext"), &len);
  ck_assert_int_eq(len, 1);
  fp_plan_destroy(p);
  p = run(g, FP_METHOD_GREEDY_LOWMEM, 0);
  ck_assert_int_ne(group_of(g, p, "hz1"), group_of(g, p, "hz2"));
  ck_assert_int_eq(group_of(g, p, "hz1"), group_of(g, p, "pa")); /* vertical */
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* The seed's situation in miniature: two consumers of x, each producing a
 * big buffer consumed by an extern.  Unfused, the big buffers are live one
 * after the other; fused horizontally, both at once. */
static const char peak_json[] =
    "{'format': 'fuseplan.graph', 'version': 1,"
    " 'buffers': [{'name': 'x', 'bytes': 4000, 'input': true},"
    "  {'name': 'A', 'bytes': 400000}, {'name': 'a2', 'bytes': 40},"
    "  {'name': 'B', 'bytes': 400000}, {'name': 'b2', 'bytes': 40},"
    "  {'name': 'A1', 'bytes': 4000}, {'name': 'o', 'bytes': 40}],"
    " 'nodes': ["
    "  {'name': 'n0', 'kind': 'pointwise', 'iter': [1000, 1],"
    "   'reads': ['x'], 'writes': ['A1']},"
    "  {'name': 'n1', 'kind': 'pointwise', 'iter': [1000, 1],"
    "   'reads': ['x', 'A1'], 'writes': ['A']},"
    "  {'name': 'n2', 'kind': 'extern', 'reads': ['A'], 'writes': ['a2']},"
    "  {'name': 'n3', 'kind': 'pointwise', 'iter': [1000, 1],"
    "   'reads': ['x'], 'writes': ['B']},"
    "  {'name': 'n4', 'kind': 'extern', 'reads': ['B'], 'writes': ['b2']},"
    "  {'name': 'n5', 'kind': 'extern', 'reads': ['a2', 'b2'],"
    "   'writes': ['o']}],"
    " 'outputs': ['o']}";

START_TEST(horizontal_fusion_raises_peak) {
  fp_graph *g = tu_graph(peak_json);
  fp_plan *e = fp_plan_create();
  fp_plan_make_eager(e, g, NULL);
  fp_metrics me = tu_eval(g, e);
  fp_plan *pg = run(g, FP_METHOD_GREEDY, 0);
  fp_plan *pl = run(g, FP_METHOD_GREEDY_LOWMEM, 0);
  fp_plan *pp = run(g, FP_METHOD_GREEDY_PEAK, 0);
  fp_metrics mg = tu_eval(g, pg), ml = tu_eval(g, pl), mp = tu_eval(g, pp);
  ck_assert_uint_gt(mg.peak_bytes, me.peak_bytes); /* greedy: A, B together */
  ck_assert_uint_lt(ml.peak_bytes, mg.peak_bytes);
  ck_assert_uint_le(mp.peak_bytes, me.peak_bytes);
  ck_assert_uint_le(mp.traffic_bytes, ml.traffic_bytes);
  ck_assert_uint_lt(mp.traffic_bytes, me.traffic_bytes); /* n0+n1 fused */
  ck_assert_uint_lt(mg.traffic_bytes, mp.traffic_bytes);
  fp_plan_destroy(e);
  fp_plan_destroy(pg);
  fp_plan_destroy(pl);
  fp_plan_destroy(pp);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(peak_limit_infeasible_and_params) {
  fp_graph *g = tu_graph(peak_json);
  fp_fusion_params prm;
  fp_error err;
  fp_plan *p = fp_plan_create();
  fp_fusion_params_init(&prm, FP_METHOD_GREEDY_PEAK);
  prm.limits.peak = 1000; /* below the resident input alone */
  ck_assert_int_eq(fp_fuse(g, &prm, p, &err), FP_EINFEASIBLE);
  ck_assert_ptr_nonnull(strstr(err.msg, "lowest peak"));
  fp_fusion_params_init(&prm, FP_METHOD_GREEDY);
  prm.rounds = 0;
  ck_assert_int_eq(fp_fuse(g, &prm, p, &err), FP_EARG);
  prm.rounds = 1;
  prm.order = (fp_order)77;
  ck_assert_int_eq(fp_fuse(g, &prm, p, &err), FP_EARG);
  for (int m = 0; m < FP_METHOD_COUNT_; m++)
    ck_assert_int_eq(fp_method_parse(fp_method_name((fp_method)m)), m);
  for (int o = 0; o < FP_ORDER_COUNT_; o++)
    ck_assert_int_eq(fp_order_parse(fp_order_name((fp_order)o)), o);
  ck_assert_int_eq(fp_method_parse("ilp-ish"), -1);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* ---- generated graphs ---------------------------------------------------- */

START_TEST(generated_graphs_all_methods) {
  int family = _i % FP_GEN_FAMILY_COUNT_;
  int32_t size = 20 + (int32_t)(_i * 37 % 300);
  fp_graph *g = tu_generated(family, size, (uint64_t)_i + 1);
  fp_plan *e = run(g, FP_METHOD_EAGER, 0);
  fp_metrics me = tu_eval(g, e);
  fp_plan *pg = run(g, FP_METHOD_GREEDY, 0);
  fp_plan *pl = run(g, FP_METHOD_GREEDY_LOWMEM, 0);
  fp_plan *pp = run(g, FP_METHOD_GREEDY_PEAK, 0);
  fp_metrics mg = tu_eval(g, pg), ml = tu_eval(g, pl), mp = tu_eval(g, pp);
  ck_assert_uint_le(mg.traffic_bytes, me.traffic_bytes);
  ck_assert_uint_le(ml.traffic_bytes, me.traffic_bytes);
  ck_assert_uint_le(mp.traffic_bytes, me.traffic_bytes);
  ck_assert_uint_le(mp.peak_bytes, me.peak_bytes); /* the default limit */
  ck_assert_int_lt(mg.kernels, me.kernels);        /* something fused */
  fp_bounds lb;
  ck_assert_int_eq(fp_graph_bounds(g, &lb, NULL), FP_OK);
  ck_assert_uint_le(lb.traffic_bytes, mg.traffic_bytes);
  ck_assert_uint_le(lb.peak_bytes, mp.peak_bytes);
  fp_plan_destroy(e);
  fp_plan_destroy(pg);
  fp_plan_destroy(pl);
  fp_plan_destroy(pp);
  fp_graph_destroy(g);
}
END_TEST

/* d and e share the large input x, so greedy fuses them first unless the
 * linked-pair rule stops it: they may share a group only with their
 * linker f, which max_fusion_size 2 leaves no room for.  Every method's
 * plan passes fp_plan_check, and d and e stay apart. */
static const char linked_json[] =
    "{'format': 'fuseplan.graph', 'version': 3, 'max_fusion_size': 2,"
    " 'buffers': [{'name': 'x', 'bytes': 4000, 'input': true},"
    "  {'name': 'o1', 'bytes': 40}, {'name': 'o2', 'bytes': 40},"
    "  {'name': 'o3', 'bytes': 40}],"
    " 'nodes': ["
    "  {'name': 'd', 'kind': 'pointwise', 'iter': [10, 1], 'reads': ['x'],"
    "   'writes': ['o1']},"
    "  {'name': 'e', 'kind': 'pointwise', 'iter': [10, 1], 'reads': ['x'],"
    "   'writes': ['o2']},"
    "  {'name': 'f', 'kind': 'pointwise', 'iter': [10, 1],"
    "   'reads': ['o1', 'o2'], 'writes': ['o3']}],"
    " 'outputs': ['o3'], 'linked': [['d', 'e', ['f']]]}";

START_TEST(linked_pair_waits_for_its_linker) {
  fp_graph *g = tu_graph(linked_json);
  for (int meth = 0; meth < FP_METHOD_COUNT_; meth++) {
    fp_plan *p = run(g, (fp_method)meth, 0);
    fp_error err;
    ck_assert_msg(fp_plan_check(g, p, 0, &err) == FP_OK, "%s: %s",
                  fp_method_name((fp_method)meth), err.msg);
    int32_t step[3];
    tu_plan_steps(p, step);
    ck_assert_int_ne(step[0], step[1]);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

START_TEST(orders_keep_grouping_and_traffic) {
  fp_graph *g = tu_generated(_i % FP_GEN_FAMILY_COUNT_, 150, (uint64_t)_i + 7);
  fp_plan *base = run(g, FP_METHOD_GREEDY, 0);
  fp_metrics mb = tu_eval(g, base);
  uint64_t best = UINT64_MAX, peak[FP_ORDER_COUNT_];
  for (int o = 0; o < FP_ORDER_COUNT_; o++) {
    fp_plan *p = fp_plan_create();
    fp_order chosen;
    ck_assert_int_eq(fp_plan_copy(p, base, NULL), FP_OK);
    ck_assert_int_eq(fp_plan_reorder(g, p, (fp_order)o, &chosen, NULL), FP_OK);
    fp_metrics m = tu_eval(g, p);
    ck_assert_uint_eq(m.traffic_bytes, mb.traffic_bytes);
    ck_assert_int_eq(m.kernels, mb.kernels);
    ck_assert_int_ne(chosen, FP_ORDER_BEST);
    peak[o] = m.peak_bytes;
    if (o <= FP_ORDER_DFS) /* best is the lowest of listed..dfs */
      best = m.peak_bytes < best ? m.peak_bytes : best;
    fp_plan_destroy(p);
  }
  ck_assert_uint_eq(peak[FP_ORDER_BEST], best);
  fp_plan_destroy(base);
  fp_graph_destroy(g);
}
END_TEST

/* Drives the fuser by hand: random legal, acyclic fusions of groups that
 * share a buffer, each one predicted by the tracker and then checked
 * against the evaluator on the whole plan; loops 40 on with workspaces
 * (docs/cost-model.md#workspaces). */
START_TEST(peak_tracker_matches_evaluator) {
  fp_graph *g = tu_generated(_i % FP_GEN_FAMILY_COUNT_, 60 + _i % 90,
                             (uint64_t)_i * 31 + 5);
  if (_i >= 40) { /* workspaces move with their group's slot */
    tu_rng w = {(uint64_t)_i * 7 + 1};
    g = tu_add_workspaces(g, &w);
  }
  fp_plan *p = fp_plan_create();
  fp_step *tl = calloc((size_t)fp_graph_node_count(g) + 1, sizeof *tl);
  fp_metrics m;
  fp_plan_make_eager(p, g, NULL);
  fp_plan_reorder(g, p, (fp_order)(_i % 4), NULL, NULL); /* a varied start */
  ck_assert_int_eq(fp_plan_eval(g, p, &m, tl, NULL), FP_OK);
  fuser F;
  ck_assert_int_eq(fuser_init(&F, g, 8), 0);
  fuser_set_order(&F, p);
  peak_tracker *P = peak_tracker_create(&F, tl);
  ck_assert_ptr_nonnull(P);
  ck_assert_uint_eq(peak_tracker_peak(P), m.peak_bytes);
  tu_rng r = {(uint64_t)_i + 99};
  int fused = 0;
  for (int attempt = 0; attempt < 400; attempt++) {
    int32_t b = (int32_t)tu_below(&r, (uint32_t)fp_graph_buffer_count(g));
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (buf->writer < 0 || buf->n_readers == 0)
      continue;
    /* vertical (writer, reader) or horizontal (two readers) pairs */
    int32_t y = F.grp[buf->readers[tu_below(&r, (uint32_t)buf->n_readers)]];
    int32_t x =
        attempt % 2
            ? F.grp[buf->writer]
            : F.grp[buf->readers[tu_below(&r, (uint32_t)buf->n_readers)]];
    if (F.pos[x] > F.pos[y]) {
      int32_t tmp = x;
      x = y;
      y = tmp;
    }
    if (x == y || !fuser_legal(&F, x, y) || fuser_creates_cycle(&F, x, y))
      continue;
    uint64_t predicted = peak_tracker_try(P, x, y);
    fuser_merge(&F, x, y);
    peak_tracker_commit(P);
    ck_assert_int_eq(fuser_plan(&F, p, NULL), FP_OK);
    ck_assert_int_eq(fp_plan_eval_k(g, p, 8, &m, NULL, NULL), FP_OK);
    ck_assert_uint_eq(predicted, m.peak_bytes);
    ck_assert_uint_eq(peak_tracker_peak(P), m.peak_bytes);
    fused++;
  }
  ck_assert_int_gt(fused, 0);
  peak_tracker_destroy(P);
  fuser_free(&F);
  free(tl);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

static Suite *fusion_suite(void) {
  Suite *s = suite_create("heuristics/fusion");
  TCase *tc = tcase_create("hand");
  tcase_add_test(tc, chain_fuses_into_one_kernel);
  tcase_add_test(tc, linked_pair_waits_for_its_linker);
  tcase_add_test(tc, horizontal_extern_and_cycles);
  tcase_add_test(tc, horizontal_fusion_raises_peak);
  tcase_add_test(tc, peak_limit_infeasible_and_params);
  suite_add_tcase(s, tc);
  TCase *gen = tcase_create("generated");
  tcase_set_timeout(gen, 120);
  tcase_add_loop_test(gen, generated_graphs_all_methods, 0, 40);
  tcase_add_loop_test(gen, orders_keep_grouping_and_traffic, 0, 12);
  tcase_add_loop_test(gen, peak_tracker_matches_evaluator, 0, 60);
  suite_add_tcase(s, gen);
  return s;
}

int main(void) {
  return tu_run(fusion_suite());
}
