/*
 * test_branch.c -- the branch on fusions of the first level's bound under
 * a peak limit (solver/bound/branch.c) and the far rule at a forced group
 * it rests on (fp_peak_group_far, model/peak_pairs.c), against every
 * legal plan of random tiny graphs, plain and optimizer-like (in-place
 * pairs).
 *
 * The plans are enumerated as set partitions of the nodes (restricted
 * growth strings) times the orders of their blocks; the evaluator judges
 * legality, so every legal plan is met once.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/eval.h"
#include "model/peak_bound.h"
#include "solver/bound/branch.h"
#include "solver/common/services.h"
#include "solver/solver.h"
#include "tests/testutil.h"

#define MAXN 5

/* The legal plans of g within `limit`, as each node's group and step. */
typedef struct plans {
  int32_t n, count;
  int32_t (*block)[MAXN]; /* plan -> node -> its group's step */
  uint64_t *traffic;
} plans;

/* Appends the plan of blocks `blk` (node -> block) run in order `ord`
 * (step -> block) when it is legal and within the limit. */
static void try_order(const fp_graph *g, uint64_t limit, const int32_t *blk,
                      const int32_t *ord, int32_t nb, plans *P) {
  fp_plan *p = fp_plan_create();
  int32_t step_of[MAXN] = {0};
  for (int32_t s = 0; s < nb; s++) {
    int32_t grp[MAXN], m = 0;
    for (int32_t v = 0; v < P->n; v++)
      if (blk[v] == ord[s])
        grp[m++] = v, step_of[v] = s;
    ck_assert_int_eq(fp_plan_add_group(p, grp, m, NULL), FP_OK);
  }
  fp_metrics m;
  fp_status st = fp_plan_eval(g, p, &m, NULL, NULL);
  fp_plan_destroy(p);
  if (st == FP_EILLEGAL || m.peak_bytes > limit)
    return;
  ck_assert_int_eq(st, FP_OK);
  P->block = realloc(P->block, ((size_t)P->count + 1) * sizeof *P->block);
  P->traffic = realloc(P->traffic, ((size_t)P->count + 1) * sizeof *P->traffic);
  ck_assert(P->block && P->traffic);
  memcpy(P->block[P->count], step_of, sizeof step_of);
  P->traffic[P->count++] = m.traffic_bytes;
}

/* Every order of the nb blocks of blk, by swaps (Heap's algorithm). */
static void orders(const fp_graph *g, uint64_t limit, const int32_t *blk,
                   int32_t *ord, int32_t k, int32_t nb, plans *P) {
  if (k <= 1) {
    try_order(g, limit, blk, ord, nb, P);
    return;
  }
  orders(g, limit, blk, ord, k - 1, nb, P);
  for (int32_t i = 0; i + 1 < k; i++) {
    int32_t j = k % 2 ? 0 : i, t = ord[j];
    ord[j] = ord[k - 1], ord[k - 1] = t;
    orders(g, limit, blk, ord, k - 1, nb, P);
  }
}

/* Every set partition of nodes v.. (blk[0..v) fixed, nb blocks so far). */
static void partitions(const fp_graph *g, uint64_t limit, int32_t *blk,
                       int32_t v, int32_t nb, plans *P) {
  if (v == P->n) {
    int32_t ord[MAXN] = {0};
    for (int32_t i = 0; i < nb; i++)
      ord[i] = i;
    orders(g, limit, blk, ord, nb, nb, P);
    return;
  }
  for (int32_t b = 0; b <= nb; b++) {
    blk[v] = b;
    partitions(g, limit, blk, v + 1, b == nb ? nb + 1 : nb, P);
  }
}

/* The legal plans of g within limit (the caller frees them). */
static plans all_plans(const fp_graph *g, uint64_t limit) {
  plans P = {fp_graph_node_count(g), 0, NULL, NULL};
  int32_t blk[MAXN];
  partitions(g, limit, blk, 0, 0, &P);
  return P;
}

static void plans_free(plans *P) {
  free(P->block);
  free(P->traffic);
}

static uint64_t eager_peak(const fp_graph *g) {
  uint64_t peak;
  ck_assert_int_eq(solver_eager_peak(g, &peak, NULL), FP_OK);
  return peak;
}

static fp_graph *tiny_graph(tu_rng *r, int i) {
  return i % 2 ? tu_random_update_graph(r, 3, MAXN)
               : tu_random_graph(r, 3, MAXN);
}

/* fp_peak_group_far at the groups nodes/start against every plan of P
 * that runs each group in one step: none only when there is no such plan,
 * and no such plan groups a pair it names.  Returns whether it said
 * something (none, or a pair). */
static bool far_checked(const fp_graph *g, const plans *P, uint64_t limit,
                        const int32_t *nodes, const int32_t *start,
                        int32_t groups, int graph) {
  bool none;
  int32_t *far = NULL, n_far = 0;
  ck_assert_int_eq(fp_peak_group_far(g, 0, limit, nodes, start, groups, &none,
                                     &far, &n_far, NULL),
                   FP_OK);
  for (int32_t i = 0; i < P->count; i++) {
    const int32_t *step = P->block[i];
    bool all = true;
    for (int32_t k = 0; k < groups && all; k++)
      for (int32_t j = start[k]; j < start[k + 1]; j++)
        all &= step[nodes[j]] == step[nodes[start[k]]];
    if (!all)
      continue;
    ck_assert_msg(!none, "graph %d: a plan groups the groups, none said",
                  graph);
    for (int32_t j = 0; j < n_far; j++)
      ck_assert_msg(step[far[2 * j]] != step[far[2 * j + 1]],
                    "graph %d: plan %d groups far pair (%d, %d)", graph, i,
                    (int)far[2 * j], (int)far[2 * j + 1]);
  }
  free(far);
  return none || n_far > 0;
}

/* On 300 random tiny graphs (half with in-place pairs), under the eager
 * peak and one byte under it: the far rule at every node, and at every
 * pair of nodes that may share a group, alone and with a second pair
 * grouped too,
 * never contradicts a plan that runs the groups as given; it says
 * something on some. */
START_TEST(far_rule_at_groups_holds_for_every_plan) {
  tu_rng r = {20261207};
  int32_t said = 0;
  for (int i = 0; i < 300; i++) {
    fp_graph *g = tiny_graph(&r, i);
    int32_t n = fp_graph_node_count(g);
    uint64_t limits[2] = {eager_peak(g), eager_peak(g) - 1};
    for (int l = 0; l < 2; l++) {
      plans P = all_plans(g, limits[l]);
      for (int32_t x = 0; x < n; x++) { /* one node: the branch's first pass */
        int32_t one[2] = {0, 1};
        said += far_checked(g, &P, limits[l], &x, one, 1, i);
      }
      for (int32_t u = 0; u < n; u++)
        for (int32_t v = u + 1; v < n; v++) {
          if (!fp_graph_compatible(g, u, v))
            continue;
          int32_t nodes[4] = {u, v, 0, 0}, start[3] = {0, 2, 4};
          said += far_checked(g, &P, limits[l], nodes, start, 1, i);
          for (int32_t a = 0; a < n; a++)
            for (int32_t b = a + 1; b < n; b++)
              if ((a != u || b != v) && fp_graph_compatible(g, a, b)) {
                nodes[2] = a, nodes[3] = b;
                said += far_checked(g, &P, limits[l], nodes, start, 2, i);
              }
        }
      plans_free(&P);
    }
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(said, 0);
}
END_TEST

/* On 300 random tiny graphs (half with in-place pairs), under the eager
 * peak and one byte under it: handed the eager plan (the branch takes
 * its pairs from the clusters' plans), the branch's bound never exceeds
 * the least traffic within it, nor falls below what it was handed; it
 * rises above fp_lower_bound within the limit (the bound without the
 * branch) on some. */
START_TEST(branch_bound_at_most_the_optimum) {
  tu_rng r = {20261211};
  int32_t above = 0;
  for (int i = 0; i < 300; i++) {
    fp_graph *g = tiny_graph(&r, i);
    plans any = all_plans(g, UINT64_MAX);
    uint64_t free_opt = UINT64_MAX;
    for (int32_t j = 0; j < any.count; j++)
      free_opt = any.traffic[j] < free_opt ? any.traffic[j] : free_opt;
    uint64_t limits[2] = {eager_peak(g), eager_peak(g) - 1};
    for (int l = 0; l < 2; l++) {
      plans P = all_plans(g, limits[l]);
      uint64_t opt = UINT64_MAX, worst = 0;
      for (int32_t j = 0; j < P.count; j++) {
        opt = P.traffic[j] < opt ? P.traffic[j] : opt;
        worst = P.traffic[j] > worst ? P.traffic[j] : worst;
      }
      fp_ilp_params prm;
      fp_ilp_params_init(&prm); /* objective traffic */
      prm.limits.peak = limits[l];
      fp_plan *eager = fp_plan_create();
      ck_assert_int_eq(fp_plan_make_eager(eager, g, NULL), FP_OK);
      double b = (double)free_opt / 2;
      fp_error err;
      ck_assert_msg(solver_branch_bound(g, &prm, eager,
                                        P.count ? worst + 1 : UINT64_MAX, 10,
                                        &b, &err) == FP_OK,
                    "%s", err.msg);
      ck_assert_msg(b >= (double)free_opt / 2, "graph %d: fell", i);
      ck_assert_msg(P.count == 0 || b <= (double)opt,
                    "graph %d limit %d: bound %.0f > optimum %llu", i, l, b,
                    (unsigned long long)opt);
      double old = 0;
      ck_assert_int_eq(fp_lower_bound(g, &prm, 10, &old, NULL), FP_OK);
      above += P.count > 0 && b > old;
      fp_plan_destroy(eager);
      plans_free(&P);
    }
    plans_free(&any);
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(above, 0);
}
END_TEST

/* Three kernels that share one read: n0 and n1 read in0, n2 reads n0's
 * output b2.  With no limit the best plan runs all three in one group
 * (672 bytes: in0, in1, b3 and b4 once, b2 never written); its step
 * holds those four buffers, 672 bytes, one over the limit.  Each pair
 * alone fits (n0 with n2 and n1 alone: 840), so no pair is unfusible
 * within the limit, and the bound before the branch stays at 672.  The
 * conflict is between the two fusions: grouped with n1 (one branch),
 * grouping n2 too leaves no plan; kept apart from n1 (the other), n0's
 * best is 840.  The branch proves 840, the optimum. */
static const char *conflict_json =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'conflict',"
    " 'max_fusion_size': 64, 'buffers': ["
    "  {'name': 'in0', 'bytes': 168, 'input': true, 'freeable': true},"
    "  {'name': 'in1', 'bytes': 168, 'input': true, 'freeable': true},"
    "  {'name': 'b2', 'bytes': 168}, {'name': 'b3', 'bytes': 168},"
    "  {'name': 'b4', 'bytes': 168}],"
    " 'nodes': ["
    "  {'name': 'n0', 'kind': 'pointwise', 'iter': [42, 1],"
    "   'reads': ['in0', 'in0', 'in1'], 'writes': ['b2']},"
    "  {'name': 'n1', 'kind': 'pointwise', 'iter': [42, 1],"
    "   'reads': ['in0'], 'writes': ['b3']},"
    "  {'name': 'n2', 'kind': 'pointwise', 'iter': [42, 1],"
    "   'reads': [{'buffer': 'b2', 'bytes': 115}], 'writes': ['b4']}],"
    " 'outputs': ['in1', 'b3'], 'unfusible': []}";

START_TEST(two_fusion_conflict_proven) {
  fp_graph *g = tu_graph(conflict_json);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm); /* objective traffic */
  prm.limits.peak = eager_peak(g) - 1;
  plans P = all_plans(g, prm.limits.peak), any = all_plans(g, UINT64_MAX);
  uint64_t opt = UINT64_MAX, free_opt = UINT64_MAX;
  for (int32_t j = 0; j < P.count; j++)
    opt = P.traffic[j] < opt ? P.traffic[j] : opt;
  for (int32_t j = 0; j < any.count; j++)
    free_opt = any.traffic[j] < free_opt ? any.traffic[j] : free_opt;
  ck_assert_uint_eq(free_opt, 672);
  ck_assert_uint_eq(opt, 840);
  double old = 0, b = 0;
  ck_assert_int_eq(fp_lower_bound(g, &prm, 10, &old, NULL), FP_OK);
  ck_assert_double_eq(old, 672); /* no pair is unfusible within the limit */
  fp_plan *eager = fp_plan_create();
  ck_assert_int_eq(fp_plan_make_eager(eager, g, NULL), FP_OK);
  b = old;
  ck_assert_int_eq(solver_branch_bound(g, &prm, eager, opt, 10, &b, NULL),
                   FP_OK);
  ck_assert_double_eq(b, 840);
  fp_plan_destroy(eager);
  plans_free(&P);
  plans_free(&any);
  fp_graph_destroy(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("branch");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, far_rule_at_groups_holds_for_every_plan);
  tcase_add_test(tc, branch_bound_at_most_the_optimum);
  tcase_add_test(tc, two_fusion_conflict_proven);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(suite());
}
