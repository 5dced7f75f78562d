/*
 * test_eval.c -- the evaluator against hand-computed figures, the legality
 * rules one by one, and a property test against a naive re-implementation
 * of docs/cost-model.md on random tiny graphs and random plans.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/peak_bound.h"
#include "tests/testutil.h"

static void expect(const fp_graph *g, const char *plan, uint64_t traffic,
                   uint64_t peak) {
  fp_plan *p = tu_plan(g, plan);
  fp_metrics m = tu_eval(g, p);
  ck_assert_msg(m.traffic_bytes == traffic, "plan '%s': traffic %llu != %llu",
                plan, (unsigned long long)m.traffic_bytes,
                (unsigned long long)traffic);
  ck_assert_msg(m.peak_bytes == peak, "plan '%s': peak %llu != %llu", plan,
                (unsigned long long)m.peak_bytes, (unsigned long long)peak);
  ck_assert_uint_eq(m.traffic_bytes, m.read_bytes + m.write_bytes);
  fp_plan_destroy(p);
}

START_TEST(vertical_fusion) {
  fp_graph *g = tu_graph(tu_chain3_json);
  /* eager: each node reads 1000 and writes 1000; live x+t1, x+t1+t2,
   * x+t2+y. */
  expect(g, "a | b | c", 6000, 3000);
  /* fused: t1, t2 never leave the kernel. */
  expect(g, "a b c", 2000, 2000);
  /* a+b fused: t1 internal, t2 materialized. */
  expect(g, "a b | c", 4000, 3000);
  expect(g, "a | b c", 4000, 3000);
  fp_plan *p = tu_plan(g, "a b c");
  fp_metrics m = tu_eval(g, p);
  ck_assert_int_eq(m.kernels, 1);
  ck_assert_int_eq(m.materialized, 1);
  ck_assert_uint_eq(m.resident_bytes, 1000);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* x read by d and e (e only partly), both writing outputs. */
static const char siblings_json[] =
    "{'format': 'fuseplan.graph', 'version': 1,"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true},"
    "  {'name': 'o1', 'bytes': 1000}, {'name': 'o2', 'bytes': 1000},"
    "  {'name': 'o3', 'bytes': 1000}],"
    " 'nodes': ["
    "  {'name': 'd', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['x'],"
    "   'writes': ['o1']},"
    "  {'name': 'e', 'kind': 'pointwise', 'iter': [250, 1],"
    "   'reads': [{'buffer': 'x', 'bytes': 100}], 'writes': ['o2']},"
    "  {'name': 'f', 'kind': 'pointwise', 'iter': [250, 1],"
    "   'reads': [{'buffer': 'x', 'bytes': 100}, 'x'], 'writes': ['o3']}],"
    " 'outputs': ['o1', 'o2', 'o3']}";

START_TEST(horizontal_fusion_and_partial_reads) {
  fp_graph *g = tu_graph(siblings_json);
  /* eager: reads 1000 + 100 + 1000 (f reads x twice: once, at the max). */
  expect(g, "d | e | f", 2100 + 3000, 4000);
  /* all fused: x read once at the largest per-read size. */
  expect(g, "d e f", 1000 + 3000, 4000);
  /* e alone reads only its 100 bytes. */
  expect(g, "d f | e", 1000 + 100 + 3000, 4000);
  fp_graph_destroy(g);
}
END_TEST

/* Outputs live to the end; dead buffers only at their own step; a
 * freeable input lives until its last reader; resident inputs always. */
static const char lifetimes_json[] =
    "{'format': 'fuseplan.graph', 'version': 1,"
    " 'buffers': [{'name': 'w', 'bytes': 7, 'input': true},"
    "  {'name': 'f', 'bytes': 500, 'input': true, 'freeable': true},"
    "  {'name': 'u', 'bytes': 300, 'input': true, 'freeable': true},"
    "  {'name': 'o', 'bytes': 50, 'input': true, 'freeable': true},"
    "  {'name': 'y', 'bytes': 10}, {'name': 'dead', 'bytes': 2000},"
    "  {'name': 'z', 'bytes': 20}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'extern', 'reads': ['f', 'w'],"
    "   'writes': ['y', 'dead']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [5, 1], 'reads': ['y'],"
    "   'writes': ['z']}],"
    " 'outputs': ['z', 'o']}";

START_TEST(lifetimes) {
  fp_graph *g = tu_graph(lifetimes_json);
  /* resident: w (7) + o (freeable but an output: never freed) = 57; u is
   * freeable and unread: never counted.
   * step 0 (a): 57 + f 500 + y 10 + dead 2000 = 2567
   * step 1 (b): 57 + y 10 + z 20 = 87
   * traffic: a reads f, w (507), writes y, dead (2010); b reads y (10),
   * writes z (20). */
  expect(g, "a | b", 507 + 2010 + 10 + 20, 2567);
  fp_plan *p = tu_plan(g, "a | b");
  fp_step tl[2];
  fp_metrics m;
  ck_assert_int_eq(fp_plan_eval(g, p, &m, tl, NULL), FP_OK);
  ck_assert_uint_eq(tl[0].live_bytes, 2567);
  ck_assert_uint_eq(tl[1].live_bytes, 87);
  ck_assert_uint_eq(tl[0].read_bytes, 507);
  ck_assert_uint_eq(tl[1].write_bytes, 20);
  ck_assert_int_eq(m.peak_step, 0);
  ck_assert_uint_eq(m.resident_bytes, 57);
  ck_assert_uint_eq(fp_graph_resident_bytes(g), 57);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* The lifetimes graph with 1000 bytes live outside it: every step, the
 * peak, the resident bytes and the peak bound gain exactly 1000; traffic
 * does not change. */
START_TEST(outside_live_bytes) {
  fp_graph *plain = tu_graph(lifetimes_json);
  fp_graph *g = fp_graph_copy_open(plain, NULL);
  ck_assert_int_eq(fp_graph_set_outside_live_bytes(g, 1000, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  ck_assert_uint_eq(fp_graph_outside_live_bytes(g), 1000);
  /* lifetimes: 2567 and 87 at the two steps, 57 resident */
  expect(g, "a | b", 507 + 2010 + 10 + 20, 1000 + 2567);
  fp_plan *p = tu_plan(g, "a | b");
  fp_step tl[2];
  fp_metrics m;
  ck_assert_int_eq(fp_plan_eval(g, p, &m, tl, NULL), FP_OK);
  ck_assert_uint_eq(tl[0].live_bytes, 1000 + 2567);
  ck_assert_uint_eq(tl[1].live_bytes, 1000 + 87);
  ck_assert_uint_eq(m.resident_bytes, 1000 + 57);
  ck_assert_uint_eq(fp_graph_resident_bytes(g), 1000 + 57);
  /* node a's step holds f, w, o, y, dead whatever the plan: 2567 */
  fp_bounds lb;
  ck_assert_int_eq(fp_graph_bounds(g, &lb, NULL), FP_OK);
  ck_assert_uint_eq(lb.peak_bytes, 1000 + 2567);
  /* a copy keeps them; a finalized graph takes no new value */
  fp_graph *c = fp_graph_copy_open(g, NULL);
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  ck_assert_uint_eq(fp_graph_resident_bytes(c), 1000 + 57);
  ck_assert_int_eq(fp_graph_set_outside_live_bytes(c, 5, NULL), FP_EARG);
  fp_graph_destroy(c);
  /* bytes at 2^53 are refused and change nothing */
  c = fp_graph_copy_open(g, NULL);
  ck_assert_int_eq(fp_graph_set_outside_live_bytes(c, (uint64_t)1 << 53, NULL),
                   FP_EINPUT);
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  ck_assert_uint_eq(fp_graph_outside_live_bytes(c), 1000);
  fp_graph_destroy(c);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  fp_graph_destroy(plain);
}
END_TEST

/* Two extern kernels with workspaces (graph format 4): conv reads the
 * freeable x and writes y with 3000 bytes of temporaries, d reads x and
 * writes the output w with 2000, b turns y into the output z. */
static const char workspace_json[] =
    "{'format': 'fuseplan.graph', 'version': 4,"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true,"
    "   'freeable': true}, {'name': 'y', 'bytes': 1000},"
    "  {'name': 'z', 'bytes': 1000}, {'name': 'w', 'bytes': 500}],"
    " 'nodes': ["
    "  {'name': 'conv', 'kind': 'extern', 'reads': ['x'], 'writes': ['y'],"
    "   'workspace': 3000},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['y'],"
    "   'writes': ['z']},"
    "  {'name': 'd', 'kind': 'extern', 'reads': ['x'], 'writes': ['w'],"
    "   'workspace': 2000}],"
    " 'outputs': ['z', 'w']}";

/* Workspaces by hand (docs/cost-model.md#workspaces): live at their
 * node's step only, beside what is live then; they change which order is
 * best (without them d first peaks lowest, at 2500; with them highest),
 * and the peak bound counts conv's.  Traffic is 5500 in every order. */
START_TEST(workspace_at_its_step) {
  fp_graph *g = tu_graph(workspace_json);
  ck_assert_uint_eq(fp_graph_workspace_total(g), 5000);
  int32_t at;
  ck_assert_uint_eq(fp_graph_workspace_max(g, &at), 3000);
  ck_assert_int_eq(at, 0);
  /* eager: x+y+3000, x+y+z, x+z+w+2000 */
  fp_plan *p = tu_plan(g, "conv | b | d");
  fp_step tl[3];
  fp_metrics m;
  ck_assert_int_eq(fp_plan_eval(g, p, &m, tl, NULL), FP_OK);
  ck_assert_uint_eq(tl[0].live_bytes, 5000);
  ck_assert_uint_eq(tl[1].live_bytes, 3000);
  ck_assert_uint_eq(tl[2].live_bytes, 4500);
  ck_assert_int_eq(m.peak_step, 0);
  /* d first: x+w+2000, x+w+y+3000, w+y+z */
  expect(g, "d | conv | b", 5500, 5500);
  expect(g, "conv | d | b", 5500, 5000);
  fp_bounds lb;
  ck_assert_int_eq(fp_graph_bounds(g, &lb, NULL), FP_OK);
  ck_assert_uint_eq(lb.peak_bytes, 5000); /* conv's step: x + y + 3000 */
  uint64_t pb; /* and so does peak_bound.c's per-node rule alone */
  ck_assert_int_eq(fp_peak_bound(g, 0, 0, &pb, NULL), FP_OK);
  ck_assert_uint_eq(pb, 5000);
  /* the same graph without them */
  fp_graph *c = fp_graph_copy_open(g, NULL);
  ck_assert_int_eq(fp_graph_set_node_workspace(c, 0, 0, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_set_node_workspace(c, 2, 0, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  expect(c, "d | conv | b", 5500, 2500);
  expect(c, "conv | b | d", 5500, 3000);
  ck_assert_int_eq(fp_graph_set_node_workspace(c, 0, 1, NULL), FP_EARG);
  fp_graph_destroy(c);
  /* 2^53 is refused and changes nothing; so is an unknown node */
  c = fp_graph_copy_open(g, NULL);
  ck_assert_int_eq(fp_graph_set_node_workspace(c, 0, (uint64_t)1 << 53, NULL),
                   FP_EINPUT);
  ck_assert_int_eq(fp_graph_set_node_workspace(c, 3, 1, NULL), FP_EINPUT);
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  ck_assert_uint_eq(fp_graph_workspace_total(c), 5000);
  fp_graph_destroy(c);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* The order of frees: a big buffer A freed earlier lowers the peak. */
static const char order_json[] =
    "{'format': 'fuseplan.graph', 'version': 1,"
    " 'buffers': [{'name': 'x', 'bytes': 1, 'input': true},"
    "  {'name': 'A', 'bytes': 5000}, {'name': 'B', 'bytes': 100},"
    "  {'name': 'C', 'bytes': 100}, {'name': 'y', 'bytes': 10}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'extern', 'reads': ['x'], 'writes': ['A']},"
    "  {'name': 'b', 'kind': 'extern', 'reads': ['x'], 'writes': ['B']},"
    "  {'name': 'c', 'kind': 'extern', 'reads': ['A'], 'writes': ['C']},"
    "  {'name': 'd', 'kind': 'extern', 'reads': ['B', 'C'],"
    "   'writes': ['y']}],"
    " 'outputs': ['y']}";

START_TEST(order_of_frees) {
  fp_graph *g = tu_graph(order_json);
  /* a b c d: step 2 holds A, B, C. */
  expect(g, "a | b | c | d", 5202 + 5210, 1 + 5200);
  /* a c b d: A is freed after c, before B is allocated. */
  expect(g, "a | c | b | d", 5202 + 5210, 1 + 5100);
  fp_graph_destroy(g);
}
END_TEST

/* A reduction fused with the pointwise node that reads its input and its
 * result (a softmax-like pattern). */
static const char reduction_json[] =
    "{'format': 'fuseplan.graph', 'version': 1,"
    " 'buffers': [{'name': 'x', 'bytes': 4000, 'input': true},"
    "  {'name': 's', 'bytes': 40}, {'name': 'y', 'bytes': 4000}],"
    " 'nodes': ["
    "  {'name': 'r', 'kind': 'reduction', 'iter': [10, 100], 'reads': ['x'],"
    "   'writes': ['s']},"
    "  {'name': 'p', 'kind': 'pointwise', 'iter': [1000, 1],"
    "   'reads': ['x', 's'], 'writes': ['y']}],"
    " 'outputs': ['y']}";

START_TEST(reduction_fusion) {
  fp_graph *g = tu_graph(reduction_json);
  expect(g, "r | p", 4000 + 40 + 4040 + 4000, 4000 + 40 + 4000);
  /* fused: x read once, s stays in the kernel. */
  expect(g, "r p", 4000 + 4000, 8000);
  ck_assert(fp_graph_compatible(g, 0, 1));
  fp_graph_destroy(g);
}
END_TEST

START_TEST(empty_graph) {
  fp_graph *g = tu_graph("{'format': 'fuseplan.graph', 'version': 1,"
                         " 'buffers': [{'name': 'w', 'bytes': 64, 'input':"
                         " true}, {'name': 'f', 'bytes': 9, 'input': true,"
                         " 'freeable': true}], 'nodes': []}");
  fp_plan *p = fp_plan_create();
  fp_metrics m = tu_eval(g, p);
  ck_assert_uint_eq(m.peak_bytes, 64);
  ck_assert_uint_eq(m.traffic_bytes, 0);
  ck_assert_int_eq(m.kernels, 0);
  ck_assert_int_eq(m.peak_step, -1);
  fp_bounds lb;
  ck_assert_int_eq(fp_graph_bounds(g, &lb, NULL), FP_OK);
  ck_assert_uint_eq(lb.peak_bytes, 64);
  ck_assert_uint_eq(lb.traffic_bytes, 0);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* ---- legality ----------------------------------------------------------- */

static const char legal_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'max_fusion_size': 3,"
    " 'buffers': [{'name': 'x', 'bytes': 400, 'input': true},"
    "  {'name': 'b0', 'bytes': 400}, {'name': 'b1', 'bytes': 400},"
    "  {'name': 'b2', 'bytes': 400}, {'name': 'b3', 'bytes': 400},"
    "  {'name': 'b4', 'bytes': 40}, {'name': 'b5', 'bytes': 400},"
    "  {'name': 'b6', 'bytes': 400}],"
    " 'nodes': ["
    "  {'name': 'n0', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['x'],"
    "   'writes': ['b0']},"
    "  {'name': 'n1', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['b0'],"
    "   'writes': ['b1']},"
    "  {'name': 'n2', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['b1'],"
    "   'writes': ['b2']},"
    "  {'name': 'n3', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['b2'],"
    "   'writes': ['b3']},"
    "  {'name': 'n4', 'kind': 'pointwise', 'iter': [10, 1], 'reads': ['b3'],"
    "   'writes': ['b4']},"
    "  {'name': 'mm', 'kind': 'extern', 'reads': ['b3'], 'writes': ['b5']},"
    "  {'name': 'n6', 'kind': 'pointwise', 'iter': [100, 1], 'reads': ['b5'],"
    "   'writes': ['b6']}],"
    " 'outputs': ['b4', 'b6'], 'unfusible': [['n2', 'n3']]}";

static void expect_illegal(const fp_graph *g, const char *plan,
                           const char *fragment) {
  fp_plan *p = tu_plan(g, plan);
  fp_error err;
  fp_error_clear(&err);
  ck_assert_int_eq(fp_plan_check(g, p, 0, &err), FP_EILLEGAL);
  ck_assert_int_eq(err.code, FP_EILLEGAL);
  ck_assert_msg(strstr(err.msg, fragment) != NULL,
                "plan '%s': message '%s' lacks '%s'", plan, err.msg, fragment);
  fp_metrics m;
  ck_assert_int_eq(fp_plan_eval(g, p, &m, NULL, NULL), FP_EILLEGAL);
  fp_plan_destroy(p);
}

START_TEST(legality_rules) {
  fp_graph *g = tu_graph(legal_json);
  fp_plan *ok = tu_plan(g, "n0 n1 | n2 | n3 | n4 | mm | n6");
  ck_assert_int_eq(fp_plan_check(g, ok, 0, NULL), FP_OK);
  fp_plan_destroy(ok);
  expect_illegal(g, "n0 | n1 | n2 | n3 | n4 | mm", "'n6' is missing");
  expect_illegal(g, "n0 | n1 | n0 | n2 | n3 | n4 | mm | n6",
                 "'n0' appears "
                 "twice");
  expect_illegal(g, "n0 n1 n2 n3 | n4 | mm | n6", "more than max_fusion_size");
  expect_illegal(g, "n0 | n1 | n2 n3 | n4 | mm | n6", "listed unfusible");
  expect_illegal(g, "n0 | n1 | n2 | n3 n4 | mm | n6",
                 "incompatible iteration spaces");
  expect_illegal(g, "n0 | n1 | n2 | n3 | n4 | mm n6", "extern node 'mm'");
  expect_illegal(g, "n1 | n0 | n2 | n3 | n4 | mm | n6", "before its writer");
  expect_illegal(g, "n0 | n1 | n2 | n3 | n4 | n6 | mm", "before its writer");
  expect_illegal(g, "n0 | | n1 | n2 | n3 | n4 | mm | n6", "group 1 is empty");
  /* an explicit limit lowers the graph's */
  fp_plan *p = tu_plan(g, "n0 n1 | n2 | n3 | n4 | mm | n6");
  ck_assert_int_eq(fp_plan_check(g, p, 1, NULL), FP_EILLEGAL);
  ck_assert_int_eq(fp_plan_check(g, p, 2, NULL), FP_OK);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Linked pairs (graph format 3): siblings_json's d and e may share a
 * group only with their linker f; the check names the group and pair. */
START_TEST(linked_pairs_need_a_linker) {
  fp_graph *s = tu_graph(siblings_json), *g = fp_graph_copy_open(s, NULL);
  int32_t f = 2;
  ck_assert_int_eq(fp_graph_add_linked(g, 1, 0, 1, &f, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_finalize(g, NULL), FP_OK);
  fp_graph_destroy(s);
  expect_illegal(g, "d e | f",
                 "group 0: nodes 'd' and 'e' are a linked pair and the group "
                 "holds none of their 1 linkers ('f')");
  expect_illegal(g, "f | e d", "group 1: nodes 'd' and 'e' are a linked pair");
  /* with the linker, or apart, or with either alone: legal */
  expect(g, "d e f", 1000 + 3000, 4000);
  expect(g, "d f | e", 1100 + 3000, 4000);
  expect(g, "d | e f", 2000 + 3000, 4000);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(out_of_range_index) {
  fp_graph *g = tu_graph(tu_chain3_json);
  fp_plan *p = fp_plan_create();
  int32_t bad[2] = {0, 7};
  ck_assert_int_eq(fp_plan_add_group(p, bad, 2, NULL), FP_OK);
  fp_error err;
  ck_assert_int_eq(fp_plan_check(g, p, 0, &err), FP_EILLEGAL);
  ck_assert_ptr_nonnull(strstr(err.msg, "out of range"));
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* ---- in-place takeovers (docs/cost-model.md, "In-place kernels") ----- */

/* Each step's live bytes of plan `plan` against want[]. */
static void expect_live(const fp_graph *g, const char *plan,
                        const uint64_t *want) {
  fp_plan *p = tu_plan(g, plan);
  fp_step tl[8];
  fp_metrics m;
  ck_assert_int_eq(fp_plan_eval(g, p, &m, tl, NULL), FP_OK);
  for (int32_t t = 0; t < fp_plan_group_count(p); t++)
    ck_assert_msg(tl[t].live_bytes == want[t], "%s step %d: %llu != %llu", plan,
                  (int)t, (unsigned long long)tl[t].live_bytes,
                  (unsigned long long)want[t]);
  fp_plan_destroy(p);
}

/* Eager, every node writes over its dying input: each step holds one
 * 1000-byte storage instead of two, so the peak drops by exactly the
 * in-place buffer's bytes (2000 without pairs, tu_chain3_json); traffic
 * does not change. */
START_TEST(inplace_lowers_the_peak) {
  fp_graph *g = tu_inplace_chain(false, false),
           *plain = tu_inplace_chain(false, true);
  expect(g, "a | b | c", 6000, 1000);
  static const uint64_t eager[] = {1000, 1000, 1000};
  expect_live(g, "a | b | c", eager);
  fp_plan *p = tu_plan(plain, "a | b | c");
  ck_assert_uint_eq(tu_eval(plain, p).peak_bytes, 2000);
  fp_plan_destroy(p);
  fp_graph_destroy(plain);
  fp_graph_destroy(g);
}
END_TEST

/* Where a pair does not apply: t1 fused away (a b: t1 never in memory,
 * so neither (x, t1) nor (t1, t2) is taken); x read again later by d (x
 * does not die at a's step). */
START_TEST(inplace_needs_a_dying_input_and_a_materialized_output) {
  fp_graph *g = tu_inplace_chain(false, false);
  static const uint64_t fused[] = {2000, 1000};
  expect_live(g, "a b | c", fused); /* step 1: (t2, y) still applies */
  expect(g, "a b | c", 4000, 2000);
  fp_graph_destroy(g);
  g = tu_inplace_chain(true, false);
  /* step 0: x + t1 (x read by d later); 1: x + t2 over t1; 2: x + y over
   * t2; 3: x + y + z */
  static const uint64_t late[] = {2000, 2000, 2000, 2010};
  expect_live(g, "a | b | c | d", late);
  /* d first: then x dies at a's step and t1 takes it over */
  static const uint64_t early[] = {1010, 1010, 1010, 1010};
  expect_live(g, "d | a | b | c", early);
  fp_graph_destroy(g);
}
END_TEST

/* One storage goes to one output, and one output takes one storage: x
 * may go to y or z, not both (the listed order decides); z may take x or
 * w, not both. */
static const char inplace_star_json[] =
    "{'format': 'fuseplan.graph', 'version': 3,"
    " 'buffers': [{'name': 'x', 'bytes': 100, 'input': true,"
    "   'freeable': true}, {'name': 'w', 'bytes': 100, 'input': true,"
    "   'freeable': true}, {'name': 'y', 'bytes': 100},"
    "  {'name': 'z', 'bytes': 100}],"
    " 'nodes': [{'name': 'n', 'kind': 'extern', 'reads': ['x', 'w'],"
    "   'writes': ['y', 'z'], 'inplace': %s}], 'outputs': ['y', 'z']}";

START_TEST(inplace_takes_each_storage_once) {
  static const char *const pairs[] = {"[['x', 'z'], ['x', 'y']]",
                                      "[['x', 'z'], ['w', 'z']]",
                                      "[['x', 'z'], ['w', 'y']]"};
  static const uint64_t peak[] = {300, 300, 200};
  for (int i = 0; i < 3; i++) {
    char doc[700];
    snprintf(doc, sizeof doc, inplace_star_json, pairs[i]);
    fp_graph *g = tu_graph(doc);
    /* x, w, y, z = 400 less 100 per takeover; traffic 200 + 200 */
    expect(g, "n", 400, peak[i]);
    fp_graph_destroy(g);
  }
}
END_TEST

/* A reader of the taken-over buffer inside the taker's own group (Inductor:
 * an ancestor is no remaining use, decide_inplace_update).  p writes i
 * (1000 B) from the resident x (10 B); a reads i and writes t; v reads i
 * and t and writes y over i; s reads i too, `sread` says how, and writes
 * the output u (1000 B).  %s: i's reader nodes' bytes. */
static const char inplace_fused_json[] =
    "{'format': 'fuseplan.graph', 'version': 3,"
    " 'buffers': [{'name': 'x', 'bytes': 10, 'input': true},"
    "  {'name': 'i', 'bytes': 1000}, {'name': 't', 'bytes': 1000},"
    "  {'name': 'y', 'bytes': 1000}, {'name': 'u', 'bytes': 1000}],"
    " 'nodes': [{'name': 'p', 'kind': 'extern', 'reads': ['x'],"
    "   'writes': ['i']},"
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [250, 1], 'reads': [%s],"
    "   'writes': ['t']},"
    "  {'name': 's', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['i'],"
    "   'writes': ['u']},"
    "  {'name': 'v', 'kind': 'pointwise', 'iter': [250, 1],"
    "   'reads': ['i', 't'], 'writes': ['y'], 'inplace': [['i', 'y']]}],"
    " 'outputs': ['y', 'u']}";

/* The graph of inplace_fused_json with a's read of i given by `aread`. */
static fp_graph *inplace_fused(const char *aread) {
  char doc[1200];
  snprintf(doc, sizeof doc, inplace_fused_json, aread);
  return tu_graph(doc);
}

/* a is an ancestor of v (v reads t): fused with v, it read each element of
 * i before v writes it, so y takes i's storage (the old rule counted both:
 * x + i + y + u = 3010 at step 2); s, in v's group too but no ancestor,
 * stops the takeover; an ancestor that reads part of i (another index)
 * does too. */
START_TEST(inplace_with_an_ancestor_in_the_group) {
  fp_graph *g = inplace_fused("'i'");
  ck_assert_int_eq(fp_graph_inplace_fused_reader(g, 3, 0, 1), true);
  ck_assert_int_eq(fp_graph_inplace_fused_reader(g, 3, 0, 2), false);
  static const uint64_t fused[] = {1010, 2010, 2010};
  expect_live(g, "p | s | a v", fused); /* step 2: x + i (= y) + u */
  /* s still needs i: no takeover (x + i + t + u + y) */
  static const uint64_t sibling[] = {1010, 2010, 4010};
  expect_live(g, "p | a | s v", sibling);
  static const uint64_t split[] = {1010, 2010, 3010, 3010};
  expect_live(g, "p | s | a | v", split); /* t materialized; y over i */
  fp_graph_destroy(g);
  g = inplace_fused("{'buffer': 'i', 'bytes': 500}");
  ck_assert_int_eq(fp_graph_inplace_fused_reader(g, 3, 0, 1), false);
  static const uint64_t partial[] = {1010, 2010, 3010};
  expect_live(g, "p | s | a v", partial);
  fp_graph_destroy(g);
}
END_TEST

/* A pair on a graph input is a mutation's: Inductor runs the mutation
 * after every reader of the old value, so an earlier reader in the
 * mutating node's group need not be its ancestor.  The same shape on a
 * produced buffer keeps the ancestor rule. */
START_TEST(inplace_mutation_of_an_input) {
  static const char doc[] =
      "{'format': 'fuseplan.graph', 'version': 3,"
      " 'buffers': [{'name': 'w', 'bytes': 1000, 'input': true,"
      "   'freeable': true}, {'name': 'm', 'bytes': 1000},"
      "  {'name': 'n', 'bytes': 1000}],"
      " 'nodes': [{'name': 'r', 'kind': 'pointwise', 'iter': [250, 1],"
      "   'reads': ['w'], 'writes': ['m']},"
      "  {'name': 'v', 'kind': 'pointwise', 'iter': [250, 1],"
      "   'reads': ['w'], 'writes': ['n'], 'inplace': [['w', 'n']]}],"
      " 'outputs': ['m', 'n']}";
  fp_graph *g = tu_graph(doc);
  ck_assert_int_eq(fp_graph_inplace_fused_reader(g, 1, 0, 0), true);
  static const uint64_t fused[] = {2000}; /* w (= n) + m */
  expect_live(g, "r v", fused);
  /* w written before the graph (a window's input): no mutation, and r,
   * no ancestor of v, keeps w alive: w + m + n */
  fp_graph *c = fp_graph_copy_open(g, NULL);
  ck_assert_int_eq(fp_graph_set_input_written_before(c, 0, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_set_input_written_before(c, 1, NULL), FP_EINPUT);
  ck_assert_int_eq(fp_graph_finalize(c, NULL), FP_OK);
  ck_assert(fp_graph_input_written_before(c, 0));
  ck_assert_int_eq(fp_graph_inplace_fused_reader(c, 1, 0, 0), false);
  static const uint64_t apart[] = {3000};
  expect_live(c, "r v", apart);
  fp_graph_destroy(c);
  fp_graph_destroy(g);
}
END_TEST

/* ---- property test against a naive evaluator ----------------------------- */

enum { MAXN = 10, MAXB = 32 };

/* A random tiny graph (3-9 nodes): see tu_random_graph. */
static fp_graph *random_graph(tu_rng *r) {
  fp_graph *g = tu_random_graph(r, 3, 9);
  ck_assert_int_le(fp_graph_buffer_count(g), MAXB);
  return g;
}

/* A random plan: mostly dependency-respecting steps with random fusion,
 * sometimes broken (swapped groups, a dropped or repeated node). */
static fp_plan *random_plan(const fp_graph *g, tu_rng *r) {
  int32_t n = fp_graph_node_count(g), step[MAXN];
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    int32_t base = 0;
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t w = fp_graph_buffer(g, nd->reads[i].buffer)->writer;
      if (w >= 0 && step[w] > base)
        base = step[w];
    }
    step[v] = base + (int32_t)tu_below(r, 3);
  }
  if (tu_below(r, 8) == 0) { /* swap two nodes' steps */
    int32_t a = (int32_t)tu_below(r, (uint32_t)n),
            b = (int32_t)tu_below(r, (uint32_t)n), t = step[a];
    step[a] = step[b];
    step[b] = t;
  }
  fp_plan *p = fp_plan_create();
  int32_t drop = tu_below(r, 12) == 0 ? (int32_t)tu_below(r, (uint32_t)n) : -1;
  int32_t twice = tu_below(r, 12) == 0 ? (int32_t)tu_below(r, (uint32_t)n) : -1;
  for (int32_t t = 0; t <= 3 * MAXN; t++) {
    int32_t grp[2 * MAXN], len = 0;
    for (int32_t v = n - 1; v >= 0; v--) /* reverse: order inside a group is
                                            irrelevant */
      if (step[v] == t && v != drop)
        grp[len++] = v;
    if (twice >= 0 && step[twice] == t)
      grp[len++] = twice;
    if (len)
      ck_assert_int_eq(fp_plan_add_group(p, grp, len, NULL), FP_OK);
  }
  return p;
}

/* The compatibility rule of docs/cost-model.md#legality, written out again
 * independently. */
static bool naive_compatible(const fp_graph *g, int32_t u, int32_t v) {
  const fp_node *a = fp_graph_node(g, u), *b = fp_graph_node(g, v);
  if (a->kind == FP_KIND_EXTERN || b->kind == FP_KIND_EXTERN)
    return false;
  for (int32_t i = 0; i < fp_graph_unfusible_count(g); i++) {
    int32_t x, y;
    fp_graph_unfusible_pair(g, i, &x, &y);
    if ((x == u && y == v) || (x == v && y == u))
      return false;
  }
  if (a->numel == b->numel && a->rnumel == b->rnumel)
    return true;
  for (int k = 0; k < 2; k++, a = fp_graph_node(g, v), b = fp_graph_node(g, u))
    if (a->kind == FP_KIND_POINTWISE &&
        (a->numel == b->numel * b->rnumel || a->numel == b->numel))
      return true;
  return false;
}

static bool naive_legal(const fp_graph *g, const fp_plan *p, int32_t *step) {
  int32_t n = fp_graph_node_count(g), seen[MAXN] = {0};
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    const int32_t *grp = fp_plan_group(p, t, &len);
    if (len == 0 || len > fp_graph_max_fusion_size(g))
      return false;
    for (int32_t i = 0; i < len; i++) {
      seen[grp[i]]++;
      step[grp[i]] = t;
      for (int32_t j = 0; j < len; j++)
        if (i != j &&
            (grp[i] == grp[j] || !naive_compatible(g, grp[i], grp[j])))
          return false;
    }
  }
  for (int32_t v = 0; v < n; v++)
    if (seen[v] != 1)
      return false;
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(g, v);
    for (int32_t i = 0; i < nd->n_reads; i++) {
      int32_t w = fp_graph_buffer(g, nd->reads[i].buffer)->writer;
      if (w >= 0 && step[w] > step[v])
        return false;
    }
  }
  return true;
}

/* Whether node u reaches node v by a path of reads (u an ancestor of v). */
static bool naive_ancestor(const fp_graph *g, int32_t u, int32_t v) {
  const fp_node *n = fp_graph_node(g, v);
  for (int32_t i = 0; i < n->n_reads; i++) {
    int32_t w = fp_graph_buffer(g, n->reads[i].buffer)->writer;
    if (w >= 0 && (w == u || naive_ancestor(g, u, w)))
      return true;
  }
  return false;
}

/* Whether reader r of buffer b, in v's step, lets v's pair on b apply: an
 * ancestor of v (or, b a graph input, any earlier node: a mutation's
 * pair) whose every read of b is v's first one (bytes and index). */
static bool naive_fused(const fp_graph *g, int32_t v, int32_t b, int32_t r) {
  const fp_node *nv = fp_graph_node(g, v), *nr = fp_graph_node(g, r);
  const fp_read *like = NULL;
  for (int32_t i = nv->n_reads - 1; i >= 0; i--)
    like = nv->reads[i].buffer == b ? &nv->reads[i] : like;
  for (int32_t i = 0; i < nr->n_reads; i++)
    if (nr->reads[i].buffer == b && (nr->reads[i].bytes != like->bytes ||
                                     nr->reads[i].index != like->index))
      return false;
  return fp_graph_buffer(g, b)->input ? r < v : naive_ancestor(g, r, v);
}

/* The in-place bytes saved at step t straight from the definition: nodes
 * of G_t in ascending order, their pairs in listed order, each storage
 * and each output taken once. */
static uint64_t naive_inplace(const fp_graph *g, const int32_t *step,
                              int32_t t) {
  bool taken_in[MAXB] = {false}, taken_out[MAXB] = {false};
  uint64_t saved = 0;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    int32_t m;
    const fp_inplace *pr = fp_graph_inplace(g, v, &m);
    for (int32_t k = 0; k < m && step[v] == t; k++) {
      const fp_buffer *i = fp_graph_buffer(g, pr[k].read);
      const fp_buffer *o = fp_graph_buffer(g, pr[k].write);
      bool dies = !i->output && (i->input ? i->freeable : step[i->writer] < t);
      for (int32_t r = 0; r < i->n_readers; r++)
        dies &= i->readers[r] == v || step[i->readers[r]] < t ||
                (step[i->readers[r]] == t &&
                 naive_fused(g, v, pr[k].read, i->readers[r]));
      bool mat = o->output || o->n_readers == 0;
      for (int32_t r = 0; r < o->n_readers; r++)
        mat |= step[o->readers[r]] != t;
      if (dies && mat && !taken_in[pr[k].read] && !taken_out[pr[k].write]) {
        taken_in[pr[k].read] = taken_out[pr[k].write] = true;
        saved += o->bytes;
      }
    }
  }
  return saved;
}

/* live(t) straight from the definition, buffer by buffer. */
static uint64_t naive_live(const fp_graph *g, const int32_t *step, int32_t T,
                           int32_t t) {
  uint64_t live = fp_graph_outside_live_bytes(g); /* live at every step */
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    int32_t last = -1;
    bool outside = false;
    for (int32_t i = 0; i < buf->n_readers; i++) {
      int32_t s = step[buf->readers[i]];
      last = s > last ? s : last;
      outside |= buf->writer < 0 || s != step[buf->writer];
    }
    if (buf->input) {
      if (!buf->freeable || buf->output || (buf->n_readers && last >= t))
        live += buf->bytes;
      continue;
    }
    if (buf->writer < 0 || !(buf->output || !buf->n_readers || outside))
      continue;
    int32_t end = buf->output      ? T - 1
                  : buf->n_readers ? last
                                   : step[buf->writer];
    if (step[buf->writer] <= t && t <= end)
      live += buf->bytes;
  }
  for (int32_t v = 0; v < fp_graph_node_count(g); v++)
    live += step[v] == t ? fp_graph_node(g, v)->workspace : 0;
  return live - naive_inplace(g, step, t);
}

/* Traffic of buffer b at step t straight from the definition. */
static uint64_t naive_buffer_traffic(const fp_graph *g, const fp_plan *p,
                                     const int32_t *step, int32_t t,
                                     int32_t b) {
  const fp_buffer *buf = fp_graph_buffer(g, b);
  uint64_t sum = 0, mx = 0;
  bool read = false;
  int32_t len;
  const int32_t *grp = fp_plan_group(p, t, &len);
  for (int32_t i = 0; i < len; i++) {
    const fp_node *nd = fp_graph_node(g, grp[i]);
    for (int32_t k = 0; k < nd->n_reads; k++)
      if (nd->reads[k].buffer == b) {
        read = true;
        mx = nd->reads[k].bytes > mx ? nd->reads[k].bytes : mx;
      }
  }
  if (read && !(buf->writer >= 0 && step[buf->writer] == t))
    sum += mx;
  if (buf->writer >= 0 && step[buf->writer] == t) {
    bool outside = buf->output || buf->n_readers == 0;
    for (int32_t i = 0; i < buf->n_readers; i++)
      outside |= step[buf->readers[i]] != t;
    sum += outside ? buf->bytes : 0;
  }
  return sum;
}

/* Traffic of step t straight from the definition. */
static uint64_t naive_traffic(const fp_graph *g, const fp_plan *p,
                              const int32_t *step, int32_t t) {
  uint64_t sum = 0;
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++)
    sum += naive_buffer_traffic(g, p, step, t, b);
  return sum;
}

/* 20 random plans of g (drawn from r) against the naive evaluator. */
static void match_naive(fp_graph *g, tu_rng *r, int _i) {
  for (int rep = 0; rep < 20; rep++) {
    fp_plan *p = random_plan(g, r);
    int32_t step[MAXN], T = fp_plan_group_count(p);
    bool legal = naive_legal(g, p, step);
    fp_step tl[3 * MAXN + 2];
    fp_metrics m;
    fp_error err;
    fp_status st = fp_plan_eval(g, p, &m, tl, &err);
    ck_assert_msg(legal == (st == FP_OK), "seed %d rep %d: naive %d, eval %s",
                  _i, rep, legal, st == FP_OK ? "ok" : err.msg);
    if (legal) {
      uint64_t peak = fp_graph_resident_bytes(g), traffic = 0;
      for (int32_t t = 0; t < T; t++) {
        uint64_t live = naive_live(g, step, T, t);
        ck_assert_uint_eq(tl[t].live_bytes, live);
        ck_assert_uint_eq(tl[t].read_bytes + tl[t].write_bytes,
                          naive_traffic(g, p, step, t));
        peak = t == 0 || live > peak ? live : peak;
        traffic += naive_traffic(g, p, step, t);
      }
      ck_assert_uint_eq(m.peak_bytes, peak);
      ck_assert_uint_eq(m.traffic_bytes, traffic);
      ck_assert_int_eq(m.kernels, T);
    }
    fp_plan_destroy(p);
  }
}

START_TEST(matches_naive_evaluator) {
  tu_rng r = {(uint64_t)_i * 7919u + 1};
  fp_graph *g = random_graph(&r);
  match_naive(g, &r, _i);
  fp_graph_destroy(g);
}
END_TEST

/* The same on optimizer-update graphs, where the pairs' readers often
 * share the taker's step (property_plans_fuse_readers counts them). */
START_TEST(matches_naive_evaluator_on_updates) {
  tu_rng r = {(uint64_t)_i * 6700417u + 5};
  fp_graph *g = tu_random_update_graph(&r, 3, 9);
  match_naive(g, &r, _i);
  fp_graph_destroy(g);
}
END_TEST

/* The same on random graphs with workspaces (docs/cost-model.md#workspaces),
 * plain and optimizer-update graphs (with in-place pairs) in turn. */
START_TEST(matches_naive_evaluator_with_workspaces) {
  tu_rng r = {(uint64_t)_i * 2147483647u + 9};
  fp_graph *g = _i % 2 ? tu_random_update_graph(&r, 3, 9) : random_graph(&r);
  g = tu_add_workspaces(g, &r);
  match_naive(g, &r, _i);
  fp_graph_destroy(g);
}
END_TEST

/* matches_naive_evaluator_on_updates's plans do put fused readers in the
 * taker's step: the pairs that apply with another reader of their buffer
 * in the same step (the rule's new case) are counted over its seeds. */
START_TEST(property_plans_fuse_readers) {
  int hits = 0, graphs = 0;
  for (int seed = 0; seed < 300; seed++) {
    tu_rng r = {(uint64_t)seed * 6700417u + 5};
    fp_graph *g = tu_random_update_graph(&r, 3, 9);
    int before = hits;
    for (int rep = 0; rep < 20; rep++) {
      fp_plan *p = random_plan(g, &r);
      int32_t step[MAXN];
      for (int32_t v = 0; naive_legal(g, p, step) && v < fp_graph_node_count(g);
           v++) {
        int32_t m;
        const fp_inplace *pr = fp_graph_inplace(g, v, &m);
        uint64_t on = fp_inplace_plan_applied(g, step, v);
        for (int32_t k = 0; k < m; k++) {
          const fp_buffer *i = fp_graph_buffer(g, pr[k].read);
          bool shared = false;
          for (int32_t j = 0; j < i->n_readers; j++)
            shared |= i->readers[j] != v && step[i->readers[j]] == step[v];
          hits += (on >> k & 1) && shared;
        }
      }
      fp_plan_destroy(p);
    }
    graphs += hits > before;
    fp_graph_destroy(g);
  }
  ck_assert_int_ge(hits, 150); /* 190 pairs in 58 graphs */
  ck_assert_int_ge(graphs, 45);
}
END_TEST

START_TEST(bounds_below_every_plan) {
  tu_rng r = {(uint64_t)_i * 104729u + 3};
  fp_graph *g = random_graph(&r);
  if (_i >= 100) /* the loop's second half: with workspaces */
    g = tu_add_workspaces(g, &r);
  fp_bounds lb;
  ck_assert_int_eq(fp_graph_bounds(g, &lb, NULL), FP_OK);
  int legal = 0;
  for (int rep = 0; rep < 200; rep++) {
    fp_plan *p = rep ? random_plan(g, &r) : fp_plan_create();
    if (!rep)
      fp_plan_make_eager(p, g, NULL);
    fp_metrics m;
    if (fp_plan_eval(g, p, &m, NULL, NULL) == FP_OK) {
      legal++;
      ck_assert_uint_le(lb.traffic_bytes, m.traffic_bytes);
      ck_assert_uint_le(lb.peak_bytes, m.peak_bytes);
    }
    fp_plan_destroy(p);
  }
  ck_assert_int_ge(legal, 1); /* at least eager */
  fp_graph_destroy(g);
}
END_TEST

/* The per-buffer terms of the traffic bound add up to it, and each is at
 * most its buffer's traffic in every legal plan (so any set of buffers
 * gets a bound on its share: the clusters of solver/bound/bound.c). */
START_TEST(buffer_bounds_below_every_plan) {
  tu_rng r = {(uint64_t)_i * 15485863u + 7};
  fp_graph *g = random_graph(&r);
  int32_t nb = fp_graph_buffer_count(g);
  uint64_t per[MAXB], total = 0, whole; /* random_graph: at most MAXB */
  ck_assert_int_eq(fp_graph_buffer_traffic_bounds(g, per, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_traffic_bound(g, &whole, NULL), FP_OK);
  for (int32_t b = 0; b < nb; b++)
    total += per[b];
  ck_assert_uint_eq(total, whole);
  for (int rep = 0; rep < 200; rep++) {
    fp_plan *p = rep ? random_plan(g, &r) : fp_plan_create();
    int32_t step[MAXN];
    if (!rep)
      fp_plan_make_eager(p, g, NULL);
    if (naive_legal(g, p, step))
      for (int32_t b = 0; b < nb; b++) {
        uint64_t share = 0;
        for (int32_t t = 0; t < fp_plan_group_count(p); t++)
          share += naive_buffer_traffic(g, p, step, t, b);
        ck_assert_msg(per[b] <= share, "seed %d buffer %d: %llu > %llu", _i, b,
                      (unsigned long long)per[b], (unsigned long long)share);
      }
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

static Suite *eval_suite(void) {
  Suite *s = suite_create("model/eval");
  TCase *tc = tcase_create("hand");
  tcase_add_test(tc, vertical_fusion);
  tcase_add_test(tc, horizontal_fusion_and_partial_reads);
  tcase_add_test(tc, lifetimes);
  tcase_add_test(tc, linked_pairs_need_a_linker);
  tcase_add_test(tc, outside_live_bytes);
  tcase_add_test(tc, workspace_at_its_step);
  tcase_add_test(tc, order_of_frees);
  tcase_add_test(tc, reduction_fusion);
  tcase_add_test(tc, empty_graph);
  tcase_add_test(tc, legality_rules);
  tcase_add_test(tc, out_of_range_index);
  tcase_add_test(tc, inplace_lowers_the_peak);
  tcase_add_test(tc, inplace_needs_a_dying_input_and_a_materialized_output);
  tcase_add_test(tc, inplace_takes_each_storage_once);
  tcase_add_test(tc, inplace_with_an_ancestor_in_the_group);
  tcase_add_test(tc, inplace_mutation_of_an_input);
  suite_add_tcase(s, tc);
  TCase *prop = tcase_create("property");
  tcase_set_timeout(prop, 120);
  tcase_add_loop_test(prop, matches_naive_evaluator, 0, 400);
  tcase_add_loop_test(prop, matches_naive_evaluator_on_updates, 0, 300);
  tcase_add_loop_test(prop, matches_naive_evaluator_with_workspaces, 0, 300);
  tcase_add_test(prop, property_plans_fuse_readers);
  tcase_add_loop_test(prop, bounds_below_every_plan, 0, 200);
  tcase_add_loop_test(prop, buffer_bounds_below_every_plan, 0, 100);
  suite_add_tcase(s, prop);
  return s;
}

int main(void) {
  return tu_run(eval_suite());
}
