/*
 * test_exhaustive.c -- the exhaustive reference solver: hand-built graphs with
 * optima worked out in the comments, the errors (size limit, infeasible limits,
 * bad parameters), and properties on random tiny graphs: the answer is legal,
 * meets the limits, equals the best plan of a brute-force enumeration written
 * here independently (every ordered set partition, filtered by fp_plan_check),
 * and no heuristic plan, reordering or random legal plan beats it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heuristics/heuristics.h"
#include "model/peak_bound.h"
#include "solver/planner.h"
#include "solver/solver.h"
#include "tests/testutil.h"

enum { MAXN = 12 };

/* ck_assert for hot loops: Check records every ck_assert it passes, which
 * would dominate the run time of the brute force. */
#define REQUIRE(c)                                                             \
  do {                                                                         \
    if (!(c))                                                                  \
      ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);                       \
  } while (0)

/* ---- hand-built graphs ------------------------------------------------- */

/* Runs fp_exhaustive, which must succeed; checks the record and that the
 * plan is legal, meets the limits and has the metrics returned. */
static fp_plan *solve(const fp_graph *g, const fp_ilp_params *prm,
                      fp_metrics *m) {
  fp_plan *p = fp_plan_create();
  fp_error err;
  fp_error_clear(&err);
  fp_status st = fp_exhaustive(g, prm, p, m, &err);
  ck_assert_msg(st == FP_OK, "fp_exhaustive: %s (%s)", fp_status_name(st),
                err.msg);
  ck_assert_int_eq(fp_plan_check(g, p, prm->limits.max_fusion_size, NULL),
                   FP_OK);
  fp_metrics e;
  ck_assert_int_eq(
      fp_plan_eval_k(g, p, prm->limits.max_fusion_size, &e, NULL, NULL), FP_OK);
  ck_assert_uint_eq(e.traffic_bytes, m->traffic_bytes);
  ck_assert_uint_eq(e.peak_bytes, m->peak_bytes);
  ck_assert_int_eq(e.kernels, m->kernels);
  const fp_solver_info *si = fp_plan_solver_const(p);
  ck_assert_str_eq(si->method, "exhaustive");
  ck_assert_str_eq(si->status, "optimal");
  ck_assert(si->objective == fp_objective_value(prm, m));
  ck_assert(si->bound == si->objective);
  ck_assert(si->gap == 0.0);
  ck_assert(si->time_s >= 0);
  ck_assert_str_eq(fp_plan_graph_name(p), fp_graph_name(g));
  return p;
}

/* Solves and checks traffic, peak and the number of kernels. */
static void expect_opt(const fp_graph *g, const fp_ilp_params *prm,
                       uint64_t traffic, uint64_t peak, int32_t kernels) {
  fp_metrics m;
  fp_plan *p = solve(g, prm, &m);
  ck_assert_msg(m.traffic_bytes == traffic && m.peak_bytes == peak,
                "%s: got traffic %llu peak %llu, want %llu %llu",
                fp_objective_name(prm->objective),
                (unsigned long long)m.traffic_bytes,
                (unsigned long long)m.peak_bytes, (unsigned long long)traffic,
                (unsigned long long)peak);
  if (kernels >= 0)
    ck_assert_int_eq(m.kernels, kernels);
  fp_plan_destroy(p);
}

/* Expects FP_EINFEASIBLE with every fragment in the message. */
static void expect_infeasible(const fp_graph *g, const fp_ilp_params *prm,
                              const char *frag1, const char *frag2) {
  fp_plan *p = fp_plan_create();
  fp_error err;
  fp_error_clear(&err);
  ck_assert_int_eq(fp_exhaustive(g, prm, p, NULL, &err), FP_EINFEASIBLE);
  ck_assert_int_eq(err.code, FP_EINFEASIBLE);
  ck_assert_msg(strstr(err.msg, frag1) != NULL, "'%s' lacks '%s'", err.msg,
                frag1);
  ck_assert_msg(!frag2 || strstr(err.msg, frag2) != NULL, "'%s' lacks '%s'",
                err.msg, frag2);
  fp_plan_destroy(p);
}

START_TEST(chain_fuses_into_one_kernel) {
  fp_graph *g = tu_graph(tu_chain3_json);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  /* one kernel: read x (1000), write y (1000); live x + y = 2000, below
   * the eager peak (x + t1 + t2 = 3000). */
  expect_opt(g, &prm, 2000, 2000, 1);
  prm.objective = FP_OBJECTIVE_PEAK;
  expect_opt(g, &prm, 2000, 2000, 1);
  /* at most 2 per group: a b | c or a | b c, both 4000 and peak 3000
   * (x + t2 + y, or x + t1 + y) */
  prm.objective = FP_OBJECTIVE_TRAFFIC;
  prm.limits.max_fusion_size = 2;
  expect_opt(g, &prm, 4000, 3000, 2);
  prm.limits.max_fusion_size = 1; /* only the eager plan: 6000 */
  expect_opt(g, &prm, 6000, 3000, 3);
  fp_graph_destroy(g);
}
END_TEST

/* a, b pointwise -> mm extern -> c, d pointwise; every buffer 1000. */
static const char extern_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'ext',"
    " 'buffers': [{'name': 'x', 'bytes': 1000, 'input': true},"
    "  {'name': 't1', 'bytes': 1000}, {'name': 't2', 'bytes': 1000},"
    "  {'name': 't3', 'bytes': 1000}, {'name': 't4', 'bytes': 1000},"
    "  {'name': 'y', 'bytes': 1000}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['x'],"
    "   'writes': ['t1']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t1'],"
    "   'writes': ['t2']},"
    "  {'name': 'mm', 'kind': 'extern', 'reads': ['t2'], 'writes': ['t3']},"
    "  {'name': 'c', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t3'],"
    "   'writes': ['t4']},"
    "  {'name': 'd', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['t4'],"
    "   'writes': ['y']}],"
    " 'outputs': ['y']}";

START_TEST(extern_in_the_middle) {
  fp_graph *g = tu_graph(extern_json);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  /* a b | mm | c d: read x + write t2, read t2 + write t3, read t3 +
   * write y = 6000 (eager: 5 x 2000 = 10000).  Live: x + t2 = 2000,
   * x + t2 + t3 = 3000, x + t3 + y = 3000; the eager peak is 3000 too. */
  fp_metrics m;
  fp_plan *p = solve(g, &prm, &m);
  ck_assert_uint_eq(m.traffic_bytes, 6000);
  ck_assert_uint_eq(m.peak_bytes, 3000);
  ck_assert_int_eq(fp_plan_group_count(p), 3);
  int32_t len;
  const int32_t *grp = fp_plan_group(p, 1, &len);
  ck_assert_int_eq(len, 1);
  ck_assert_int_eq(grp[0], fp_graph_find_node(g, "mm"));
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Two branches x -> p_i -> (big) -> c_i (extern) -> r_i.  Horizontal
 * fusion of p1 and p2 reads x once but holds A and B together. */
static const char branches_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'branches',"
    " 'buffers': [{'name': 'x', 'bytes': 100, 'input': true},"
    "  {'name': 'A', 'bytes': 1000}, {'name': 'B', 'bytes': 1000},"
    "  {'name': 'r1', 'bytes': 10}, {'name': 'r2', 'bytes': 10}],"
    " 'nodes': ["
    "  {'name': 'p1', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['x'],"
    "   'writes': ['A']},"
    "  {'name': 'c1', 'kind': 'extern', 'reads': ['A'], 'writes': ['r1']},"
    "  {'name': 'p2', 'kind': 'pointwise', 'iter': [250, 1], 'reads': ['x'],"
    "   'writes': ['B']},"
    "  {'name': 'c2', 'kind': 'extern', 'reads': ['B'], 'writes': ['r2']}],"
    " 'outputs': ['r1', 'r2']}";

/* Eager p1 | c1 | p2 | c2: traffic 1100 + 1010 + 1100 + 1010 = 4220; live
 * 1100, 1110 (x A r1), 1110 (x r1 B), 1120 (x r1 B r2): eager peak 1120,
 * and no order does better (the second branch's extern step always holds
 * x, r_first, B or A, and r_second).  The only possible fusion is p1 p2:
 * traffic 100 + 2000 + 1010 + 1010 = 4120, live 2100 (x A B), then 2110
 * (x A B r1), then 1120: peak 2110 in either order of c1, c2. */
START_TEST(peak_limit_changes_the_traffic_optimum) {
  fp_graph *g = tu_graph(branches_json);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  expect_opt(g, &prm, 4220, 1120, 4); /* under the eager peak: no fusion */
  prm.limits.peak = FP_NO_LIMIT;
  expect_opt(g, &prm, 4120, 2110, 3); /* unconstrained: fuse p1 p2 */
  prm.limits.peak = 2110;
  expect_opt(g, &prm, 4120, 2110, 3);
  prm.limits.peak = 2109;
  expect_opt(g, &prm, 4220, 1120, 4);
  /* min peak: 1120 with traffic 4220; under traffic <= 4120: 2110 */
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_PEAK;
  expect_opt(g, &prm, 4220, 1120, 4);
  prm.limits.traffic = 4120;
  prm.limits.peak = FP_NO_LIMIT;
  expect_opt(g, &prm, 4120, 2110, 3);
  /* weighted, no peak limit: lambda 1: 5340 < 6230; lambda 0.05:
   * 4220 + 56 = 4276 > 4120 + 105.5 = 4225.5 */
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_WEIGHTED;
  prm.limits.peak = FP_NO_LIMIT;
  expect_opt(g, &prm, 4220, 1120, 4);
  prm.lambda = 0.05;
  expect_opt(g, &prm, 4120, 2110, 3);
  fp_metrics m;
  fp_plan *p = solve(g, &prm, &m);
  ck_assert(fp_plan_solver(p)->objective == 4225.5);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(infeasible_limits) {
  fp_graph *g = tu_graph(branches_json);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = 1;
  expect_infeasible(g, &prm, "smallest peak of any legal plan is 1120", NULL);
  prm.objective = FP_OBJECTIVE_WEIGHTED;
  expect_infeasible(g, &prm, "is 1120", NULL);
  prm.objective = FP_OBJECTIVE_PEAK;
  prm.limits.peak = 0;
  prm.limits.traffic = 4119;
  expect_infeasible(g, &prm, "smallest peak of any legal plan is 1120",
                    "smallest traffic of any legal plan is 4120");
  /* the plan passed in is left alone on failure: only the code matters */
  fp_graph_destroy(g);
}
END_TEST

START_TEST(size_limit_and_arguments) {
  fp_graph *g = tu_chain_graph(FP_EXHAUSTIVE_MAX_NODES + 1, 64);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  fp_plan *p = fp_plan_create();
  fp_error err;
  ck_assert_int_eq(fp_exhaustive(g, &prm, p, NULL, &err), FP_ELIMIT);
  ck_assert_ptr_nonnull(strstr(err.msg, "11 nodes"));
  fp_graph_destroy(g);
  /* the largest size is accepted: a chain of 10 fuses into one kernel */
  g = tu_chain_graph(FP_EXHAUSTIVE_MAX_NODES, 64);
  expect_opt(g, &prm, 128, 128, 1);
  prm.lambda = -1;
  ck_assert_int_eq(fp_exhaustive(g, &prm, p, NULL, &err), FP_EARG);
  ck_assert_ptr_nonnull(strstr(err.msg, "lambda"));
  /* NULL params: the defaults */
  fp_metrics m;
  ck_assert_int_eq(fp_exhaustive(g, NULL, p, &m, NULL), FP_OK);
  ck_assert_uint_eq(m.traffic_bytes, 128);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(empty_graph) {
  fp_graph *g = tu_graph("{'format': 'fuseplan.graph', 'version': 1,"
                         " 'buffers': [{'name': 'w', 'bytes': 64, 'input':"
                         " true}], 'nodes': []}");
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++) {
    prm.objective = (fp_objective)o;
    expect_opt(g, &prm, 0, 64, 0);
  }
  prm.limits.peak = 63;
  expect_infeasible(g, &prm, "smallest peak of any legal plan is 64", NULL);
  fp_graph_destroy(g);
}
END_TEST

/* ---- brute force --------------------------------------------------------
 */

/* A brute-force enumeration: every assignment of steps to nodes that uses
 * exactly the steps 0..T-1 for some T (an ordered set partition), kept
 * when the evaluator finds it legal under fusion limit k.  The figures of
 * every legal plan are kept, so that several parameter sets can be judged
 * against one enumeration. */
typedef struct brute {
  const fp_graph *g;
  int32_t k, n, step[MAXN];
  int32_t uses[MAXN]; /* nodes assigned to each step so far */
  fp_plan *p;         /* scratch */
  fp_metrics *legal;  /* the figures of every legal plan, in order found */
  int32_t n_legal, cap;
  uint64_t eager_peak;
} brute;

/* What the brute force says for one parameter set. */
typedef struct brute_answer {
  bool found;                     /* some legal plan met the limits */
  fp_metrics best;                /* the first best such plan */
  uint64_t min_peak, min_traffic; /* over all legal plans */
} brute_answer;

/* a better than b: objective, then peak, then traffic. */
static bool better(const fp_ilp_params *prm, const fp_metrics *a,
                   const fp_metrics *b) {
  double oa = fp_objective_value(prm, a), ob = fp_objective_value(prm, b);
  if (oa != ob)
    return oa < ob;
  if (a->peak_bytes != b->peak_bytes)
    return a->peak_bytes < b->peak_bytes;
  return a->traffic_bytes < b->traffic_bytes;
}

static void brute_leaf(brute *B) {
  int32_t T = 0;
  while (T < B->n && B->uses[T])
    T++;
  for (int32_t t = T; t < B->n; t++)
    REQUIRE(!B->uses[t]); /* brute_rec leaves no gap */
  fp_plan *p = B->p;
  fp_plan_clear(p);
  for (int32_t t = 0; t < T; t++) {
    REQUIRE(fp_plan_open_group(p, NULL) == FP_OK);
    for (int32_t v = 0; v < B->n; v++)
      if (B->step[v] == t)
        REQUIRE(fp_plan_append_node(p, v, NULL) == FP_OK);
  }
  fp_metrics m;
  fp_status st = fp_plan_eval_k(B->g, p, B->k, &m, NULL, NULL);
  if (st != FP_OK) {
    REQUIRE(st == FP_EILLEGAL);
    return;
  }
  if (B->n_legal == B->cap) {
    B->cap = B->cap ? 2 * B->cap : 64;
    B->legal = realloc(B->legal, (size_t)B->cap * sizeof *B->legal);
    REQUIRE(B->legal != NULL);
  }
  B->legal[B->n_legal++] = m;
}

/* Assigns steps to nodes v.. in every way that can still use exactly the
 * steps 0..T-1 for some T (the steps below the largest one used so far
 * that are still empty must not outnumber the nodes left). */
static void brute_rec(brute *B, int32_t v) {
  if (v == B->n) {
    brute_leaf(B);
    return;
  }
  int32_t top = -1, empty = 0;
  for (int32_t t = 0; t < B->n; t++)
    if (B->uses[t])
      top = t;
  for (int32_t t = 0; t < top; t++)
    empty += !B->uses[t];
  for (int32_t t = 0; t < B->n; t++) {
    int32_t gap = t > top ? empty + (t - top - 1) : empty - !B->uses[t];
    if (gap > B->n - v - 1)
      continue;
    B->step[v] = t;
    B->uses[t]++;
    brute_rec(B, v + 1);
    B->uses[t]--;
  }
}

static uint64_t eager_peak(const fp_graph *g, int32_t k) {
  fp_plan *p = fp_plan_create();
  ck_assert_int_eq(fp_plan_make_eager(p, g, NULL), FP_OK);
  fp_metrics m;
  ck_assert_int_eq(fp_plan_eval_k(g, p, k, &m, NULL, NULL), FP_OK);
  fp_plan_destroy(p);
  return m.peak_bytes;
}

/* Enumerates every plan of g under fusion limit k (0: the graph's); free
 * with brute_free. */
static brute brute_force(const fp_graph *g, int32_t k) {
  brute B;
  memset(&B, 0, sizeof B);
  B.g = g;
  B.k = k;
  B.n = fp_graph_node_count(g);
  B.eager_peak = eager_peak(g, k);
  B.p = fp_plan_create();
  brute_rec(&B, 0);
  fp_plan_destroy(B.p);
  B.p = NULL;
  return B;
}

static void brute_free(brute *B) {
  free(B->legal);
  B->legal = NULL;
}

/* The number of legal plans of g under fusion limit k. */
static int32_t count_plans(const fp_graph *g, int32_t k) {
  brute B = brute_force(g, k);
  int32_t n = B.n_legal;
  brute_free(&B);
  return n;
}

/* The first best legal plan meeting the limits of prm. */
static brute_answer brute_pick(const brute *B, const fp_ilp_params *prm) {
  brute_answer A;
  memset(&A, 0, sizeof A);
  for (int32_t i = 0; i < B->n_legal; i++) {
    const fp_metrics *m = &B->legal[i];
    if (!i || m->peak_bytes < A.min_peak)
      A.min_peak = m->peak_bytes;
    if (!i || m->traffic_bytes < A.min_traffic)
      A.min_traffic = m->traffic_bytes;
    if (fp_meets_limits(prm, m, B->eager_peak) &&
        (!A.found || better(prm, m, &A.best))) {
      A.found = true;
      A.best = *m;
    }
  }
  return A;
}

/* fp_exhaustive agrees with the brute force B (enumerated under
 * prm->limits.max_fusion_size): same figures (objective, peak, traffic: the
 * tie-break is the same), or both infeasible, with the same smallest
 * peak (and traffic, under a traffic limit) in the message. */
static void agrees_with_brute(const brute *B, const fp_ilp_params *prm,
                              const char *what) {
  ck_assert_int_eq(B->k, prm->limits.max_fusion_size);
  brute_answer A = brute_pick(B, prm);
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_error err;
  fp_error_clear(&err);
  fp_status st = fp_exhaustive(B->g, prm, p, &m, &err);
  if (!A.found) {
    ck_assert_msg(st == FP_EINFEASIBLE, "%s: %s, brute force: infeasible", what,
                  err.msg);
    char frag[96];
    snprintf(frag, sizeof frag, "smallest peak of any legal plan is %llu",
             (unsigned long long)A.min_peak);
    ck_assert_msg(strstr(err.msg, frag) != NULL, "%s: '%s' lacks '%s'", what,
                  err.msg, frag);
    snprintf(frag, sizeof frag, "smallest traffic of any legal plan is %llu",
             (unsigned long long)A.min_traffic);
    ck_assert_msg(prm->limits.traffic == FP_NO_LIMIT ||
                      strstr(err.msg, frag) != NULL,
                  "%s: '%s' lacks '%s'", what, err.msg, frag);
  } else {
    ck_assert_msg(st == FP_OK, "%s: %s", what, err.msg);
    ck_assert_msg(m.traffic_bytes == A.best.traffic_bytes &&
                      m.peak_bytes == A.best.peak_bytes,
                  "%s %s: exhaustive %llu/%llu, brute force %llu/%llu", what,
                  fp_objective_name(prm->objective),
                  (unsigned long long)m.traffic_bytes,
                  (unsigned long long)m.peak_bytes,
                  (unsigned long long)A.best.traffic_bytes,
                  (unsigned long long)A.best.peak_bytes);
    ck_assert_int_eq(fp_plan_check(B->g, p, prm->limits.max_fusion_size, NULL),
                     FP_OK);
  }
  fp_plan_destroy(p);
}

/* x read by three independent outputs a, b, c (compatible pointwise). */
static const char three_json[] =
    "{'format': 'fuseplan.graph', 'version': 1,"
    " 'buffers': [{'name': 'x', 'bytes': 100, 'input': true},"
    "  {'name': 'oa', 'bytes': 10}, {'name': 'ob', 'bytes': 20},"
    "  {'name': 'oc', 'bytes': 40}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [4, 1], 'reads': ['x'],"
    "   'writes': ['oa']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [4, 1], 'reads': ['x'],"
    "   'writes': ['ob']},"
    "  {'name': 'c', 'kind': 'pointwise', 'iter': [4, 1], 'reads': ['x'],"
    "   'writes': ['oc']}],"
    " 'outputs': ['oa', 'ob', 'oc']}";

START_TEST(counts_and_small_optima) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  fp_graph *g = tu_graph(three_json);
  /* ordered set partitions of 3 = 13 (1 + 6 + 6), all legal */
  ck_assert_int_eq(count_plans(g, 0), 13);
  ck_assert_int_eq(count_plans(g, 2), 12); /* minus the one group of 3 */
  ck_assert_int_eq(count_plans(g, 1), 6);  /* the 3! orders */
  /* traffic: one kernel reads x once: 100 + 70 */
  expect_opt(g, &prm, 170, 170, 1);
  brute B = brute_force(g, 0);
  for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++) {
    prm.objective = (fp_objective)o;
    agrees_with_brute(&B, &prm, "three");
  }
  brute_free(&B);
  fp_graph_destroy(g);
  /* a chain of 3: abc, ab|c, a|bc, a|b|c */
  g = tu_graph(tu_chain3_json);
  ck_assert_int_eq(count_plans(g, 0), 4);
  fp_graph_destroy(g);
  /* branches: 4! orders limited by p_i before c_i = 6, plus p1 p2 fused
   * with c1, c2 in either order = 2: 8 */
  g = tu_graph(branches_json);
  ck_assert_int_eq(count_plans(g, 0), 8);
  B = brute_force(g, 0);
  for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++) {
    fp_ilp_params_init(&prm);
    prm.objective = (fp_objective)o;
    agrees_with_brute(&B, &prm, "branches");
    prm.limits.peak = FP_NO_LIMIT;
    agrees_with_brute(&B, &prm, "branches, no peak limit");
    prm.limits.traffic = 4120;
    agrees_with_brute(&B, &prm, "branches, traffic <= 4120");
  }
  brute_free(&B);
  fp_graph_destroy(g);
}
END_TEST

/* An optimizer-like update: a reads the weight w and the gradient g
 * (freeable inputs, 1000 B each) and writes the step t; v reads w and t
 * and writes the new weight w2 (an output) over w.  Split, a's step holds
 * w + g + t (3000); fused, t stays inside and a, an ancestor of v, read w
 * before v writes it, so w2 takes w's storage: w + g = 2000, the least
 * peak (3000 under the rule that wanted a in an earlier group).  The ILP
 * over exact windows finds the same. */
static const char update_json[] =
    "{'format': 'fuseplan.graph', 'version': 3,"
    " 'buffers': [{'name': 'w', 'bytes': 1000, 'input': true,"
    "   'freeable': true}, {'name': 'g', 'bytes': 1000, 'input': true,"
    "   'freeable': true}, {'name': 't', 'bytes': 1000},"
    "  {'name': 'w2', 'bytes': 1000}],"
    " 'nodes': [{'name': 'a', 'kind': 'pointwise', 'iter': [250, 1],"
    "   'reads': ['w', 'g'], 'writes': ['t']},"
    "  {'name': 'v', 'kind': 'pointwise', 'iter': [250, 1],"
    "   'reads': ['w', 't'], 'writes': ['w2'], 'inplace': [['w', 'w2']]}],"
    " 'outputs': ['w2']}";

START_TEST(fused_update_takes_its_weight_over) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = FP_OBJECTIVE_PEAK;
  fp_graph *g = tu_graph(update_json);
  fp_metrics m, mi;
  fp_plan *p = solve(g, &prm, &m), *q = fp_plan_create();
  ck_assert_uint_eq(m.peak_bytes, 2000);
  ck_assert_int_eq(m.kernels, 1);
  prm.window = FP_ILP_WINDOW_EXACT;
  ck_assert_int_eq(fp_ilp_solve(g, &prm, q, &mi, NULL), FP_OK);
  ck_assert_uint_eq(mi.peak_bytes, 2000);
  fp_plan_destroy(p);
  fp_plan_destroy(q);
  fp_graph_destroy(g);
}
END_TEST

/* ---- random graphs ------------------------------------------------------
 */

/* A fusion-size override, once in four: 1-4 (0 = the graph's). */
static int32_t random_k(tu_rng *r) {
  return tu_below(r, 4) == 0 ? 1 + (int32_t)tu_below(r, 4) : 0;
}

/* Random parameters: any objective, sometimes a fusion-size override, a
 * peak limit (eager, none, or a random one), a traffic limit. */
static fp_ilp_params random_params(tu_rng *r, const fp_graph *g) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = (fp_objective)tu_below(r, FP_OBJECTIVE_COUNT_);
  static const double lambdas[] = {0.0, 0.01, 0.5, 1.0, 3.0};
  prm.lambda = lambdas[tu_below(r, 5)];
  prm.limits.max_fusion_size = random_k(r);
  uint64_t ep = eager_peak(g, prm.limits.max_fusion_size);
  uint32_t c = tu_below(r, 4);
  prm.limits.peak = c == 0   ? FP_NO_LIMIT
                    : c == 1 ? ep / 2 + tu_below(r, (uint32_t)(ep / 2 + 1))
                             : 0;
  if (tu_below(r, 4) == 0)
    prm.limits.traffic = 200 + tu_below(r, 8000);
  return prm;
}

START_TEST(random_matches_brute_force) {
  tu_rng r = {(uint64_t)_i * 7919u + 17};
  fp_graph *g = tu_random_deep_graph(&r, 3, 7);
  fp_ilp_params prm = random_params(&r, g);
  brute B = brute_force(g, prm.limits.max_fusion_size);
  ck_assert_int_ge(B.n_legal, 1); /* at least the eager plan */
  for (int rep = 0; rep < 8; rep++) {
    if (rep) { /* same fusion limit: the same enumeration serves */
      int32_t k = prm.limits.max_fusion_size;
      prm = random_params(&r, g);
      prm.limits.max_fusion_size = k;
    }
    char what[64];
    snprintf(what, sizeof what, "seed %d rep %d", _i, rep);
    agrees_with_brute(&B, &prm, what);
  }
  brute_free(&B);
  fp_graph_destroy(g);
}
END_TEST

/* A random legal-or-not plan: dependency-respecting steps with random
 * fusion (fp_plan_check decides). */
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
  fp_plan *p = fp_plan_create();
  for (int32_t t = 0; t <= 3 * MAXN; t++) {
    int32_t grp[MAXN], len = 0;
    for (int32_t v = 0; v < n; v++)
      if (step[v] == t)
        grp[len++] = v;
    if (len)
      REQUIRE(fp_plan_add_group(p, grp, len, NULL) == FP_OK);
  }
  return p;
}

/* p (if legal) does not beat the exhaustive optimum `opt`; under the plain
 * min-peak parameters its peak is not below opt's even when it breaks the
 * limits. */
static void not_better(const fp_graph *g, const fp_ilp_params *prm,
                       const fp_plan *p, const fp_metrics *opt, uint64_t ep,
                       const char *what) {
  fp_metrics m;
  if (fp_plan_eval_k(g, p, prm->limits.max_fusion_size, &m, NULL, NULL) !=
      FP_OK)
    return;
  if (prm->objective == FP_OBJECTIVE_PEAK && prm->limits.peak == 0 &&
      prm->limits.traffic == FP_NO_LIMIT && m.peak_bytes < opt->peak_bytes)
    ck_abort_msg("%s: peak %llu < %llu", what, (unsigned long long)m.peak_bytes,
                 (unsigned long long)opt->peak_bytes);
  if (fp_meets_limits(prm, &m, ep) && better(prm, &m, opt))
    ck_abort_msg("%s (%s) beats exhaustive: %llu/%llu vs %llu/%llu", what,
                 fp_objective_name(prm->objective),
                 (unsigned long long)m.traffic_bytes,
                 (unsigned long long)m.peak_bytes,
                 (unsigned long long)opt->traffic_bytes,
                 (unsigned long long)opt->peak_bytes);
}

/* Every heuristic, in every order, then each order applied to `best`. */
static void heuristics_not_better(const fp_graph *g, const fp_ilp_params *prm,
                                  const fp_plan *best, const fp_metrics *opt,
                                  uint64_t ep) {
  fp_plan *p = fp_plan_create();
  for (int meth = 0; meth < FP_METHOD_COUNT_; meth++)
    for (int o = 0; o < FP_ORDER_COUNT_; o++) {
      fp_fusion_params fprm;
      fp_fusion_params_init(&fprm, (fp_method)meth);
      fprm.order = (fp_order)o;
      fprm.limits.max_fusion_size = prm->limits.max_fusion_size;
      fp_error err;
      fp_status st = fp_fuse(g, &fprm, p, &err);
      if (meth == FP_METHOD_GREEDY_PEAK && st == FP_EINFEASIBLE)
        continue;
      ck_assert_msg(st == FP_OK, "%s: %s", fp_method_name((fp_method)meth),
                    err.msg);
      not_better(g, prm, p, opt, ep, fp_method_name((fp_method)meth));
    }
  for (int o = 0; o < FP_ORDER_COUNT_; o++) {
    ck_assert_int_eq(fp_plan_copy(p, best, NULL), FP_OK);
    ck_assert_int_eq(fp_plan_reorder(g, p, (fp_order)o, NULL, NULL), FP_OK);
    not_better(g, prm, p, opt, ep, fp_order_name((fp_order)o));
  }
  fp_plan_destroy(p);
}

START_TEST(random_nothing_beats_it) {
  tu_rng r = {(uint64_t)_i * 104729u + 5};
  fp_graph *g = tu_random_deep_graph(&r, 3, 8);
  for (int rep = 0; rep < 4; rep++) {
    fp_ilp_params prm = random_params(&r, g);
    if (rep == 0) { /* the plain min-peak case once per graph */
      fp_ilp_params_init(&prm);
      prm.objective = FP_OBJECTIVE_PEAK;
    }
    uint64_t ep = eager_peak(g, prm.limits.max_fusion_size);
    fp_plan *best = fp_plan_create();
    fp_metrics opt;
    fp_error err;
    fp_status st = fp_exhaustive(g, &prm, best, &opt, &err);
    if (st == FP_EINFEASIBLE) {
      ck_assert(prm.limits.peak != 0 || prm.limits.traffic != FP_NO_LIMIT);
      fp_plan_destroy(best);
      continue;
    }
    ck_assert_msg(st == FP_OK, "seed %d: %s", _i, err.msg);
    ck_assert_int_eq(fp_plan_check(g, best, prm.limits.max_fusion_size, NULL),
                     FP_OK);
    ck_assert(fp_meets_limits(&prm, &opt, ep));
    ck_assert(fp_plan_solver(best)->objective ==
              fp_objective_value(&prm, &opt));
    heuristics_not_better(g, &prm, best, &opt, ep);
    for (int k = 0; k < 200; k++) {
      fp_plan *p = random_plan(g, &r);
      not_better(g, &prm, p, &opt, ep, "random plan");
      fp_plan_destroy(p);
    }
    fp_plan_destroy(best);
  }
  fp_graph_destroy(g);
}
END_TEST

/* The exhaustive search agrees with the enumeration of fp_plan_check-legal
 * plans of g, the ILP over exact windows finds the same optimum, the lower
 * bound stays below it, and every method of the method table makes a
 * legal plan. */
static void every_method_agrees(const fp_graph *g, fp_ilp_params prm,
                                const char *what) {
  brute B = brute_force(g, prm.limits.max_fusion_size);
  agrees_with_brute(&B, &prm, what);
  brute_free(&B);
  fp_plan *p = fp_plan_create(), *q = fp_plan_create();
  fp_metrics me, mi;
  fp_error err;
  prm.window = FP_ILP_WINDOW_EXACT;
  prm.time_limit_s = 60;
  fp_status se = fp_exhaustive(g, &prm, p, &me, &err);
  fp_status si = fp_ilp_solve(g, &prm, q, &mi, &err);
  ck_assert_msg(se == si || (se != FP_OK && si != FP_OK), "%s: %d vs %d (%s)",
                what, se, si, err.msg);
  if (se == FP_OK) {
    double opt = fp_objective_value(&prm, &me), bound;
    ck_assert_msg(fp_objective_value(&prm, &mi) == opt, "%s: ilp %.17g, %.17g",
                  what, fp_objective_value(&prm, &mi), opt);
    ck_assert_int_eq(fp_lower_bound(g, &prm, 1.0, &bound, NULL), FP_OK);
    ck_assert_msg(bound <= opt, "%s: bound %.17g > %.17g", what, bound, opt);
  }
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    const fp_planner *pl = fp_planner_at(i);
    fp_plan_request req;
    fp_plan_request_init(&req, pl);
    req.ilp.time_limit_s = 5;
    fp_metrics pm, em;
    fp_status st = fp_planner_run(pl, g, &req, p, &pm, &err);
    ck_assert_msg(st == FP_OK || st == FP_EINFEASIBLE, "%s %s: %s", what,
                  pl->name, err.msg);
    ck_assert_msg(st != FP_OK || fp_plan_check(g, p, 0, &err) == FP_OK,
                  "%s %s: %s", what, pl->name, err.msg);
    /* the figures a method reports are the evaluator's */
    ck_assert_msg(st != FP_OK ||
                      (fp_plan_eval(g, p, &em, NULL, NULL) == FP_OK &&
                       em.peak_bytes == pm.peak_bytes &&
                       em.traffic_bytes == pm.traffic_bytes),
                  "%s %s: reported %llu/%llu", what, pl->name,
                  (unsigned long long)pm.traffic_bytes,
                  (unsigned long long)pm.peak_bytes);
  }
  fp_plan_destroy(p);
  fp_plan_destroy(q);
}

/* every_method_agrees on g (destroyed), with random parameters from r. */
static void random_agrees(fp_graph *g, tu_rng *r, const char *kind, int i) {
  fp_ilp_params prm = random_params(r, g);
  char what[64];
  snprintf(what, sizeof what, "%s seed %d", kind, i);
  every_method_agrees(g, prm, what);
  fp_graph_destroy(g);
}

/* Random graphs with loop nests (graph format 3). */
START_TEST(random_loops_agree) {
  tu_rng r = {(uint64_t)_i * 6151u + 3};
  random_agrees(tu_random_loop_graph(&r, 3, 7), &r, "loop", _i);
}
END_TEST

/* Random graphs with linked pairs (graph format 3): the ILP's linked rows,
 * the exhaustive and least-traffic searches, the heuristics and auto all
 * keep the rule that the brute force's fp_plan_check applies. */
START_TEST(random_linked_agree) {
  tu_rng r = {(uint64_t)_i * 7207u + 11};
  random_agrees(tu_add_linked(tu_random_deep_graph(&r, 3, 7), &r), &r, "linked",
                _i);
}
END_TEST

/* g (destroyed) with one compatible pair listed twice, each entry with a
 * linker of its own, so that the pair shares a group only with both: the
 * exporter's pairs that no single member of Inductor's group links
 * (docs/exporter.md, "Linked pairs"); g itself when no pair has two
 * linkers compatible with it. */
static fp_graph *add_linked_twice(fp_graph *g, tu_rng *r) {
  int32_t n = fp_graph_node_count(g), c[TU_RANDOM_MAX_NODES];
  for (int32_t t = 0; t < 32; t++) {
    int32_t u = (int32_t)tu_below(r, (uint32_t)n);
    int32_t v = (int32_t)tu_below(r, (uint32_t)n), k = 0;
    if (u == v || !fp_graph_compatible(g, u, v))
      continue;
    for (int32_t x = 0; x < n && x < TU_RANDOM_MAX_NODES; x++)
      if (x != u && x != v && fp_graph_compatible(g, x, u) &&
          fp_graph_compatible(g, x, v))
        c[k++] = x;
    if (k < 2)
      continue;
    int32_t a = (int32_t)tu_below(r, (uint32_t)k);
    int32_t b = (a + 1 + (int32_t)tu_below(r, (uint32_t)k - 1)) % k;
    fp_graph *o = fp_graph_copy_open(g, NULL);
    ck_assert_ptr_nonnull(o);
    ck_assert_int_eq(fp_graph_add_linked(o, u, v, 1, &c[a], NULL), FP_OK);
    ck_assert_int_eq(fp_graph_add_linked(o, u, v, 1, &c[b], NULL), FP_OK);
    ck_assert_int_eq(fp_graph_finalize(o, NULL), FP_OK);
    fp_graph_destroy(g);
    return o;
  }
  return g;
}

/* Random graphs with a pair that needs two linkers at once (one linked
 * entry per linker): every method keeps both entries. */
START_TEST(random_linked_twice_agree) {
  tu_rng r = {(uint64_t)_i * 7919u + 29};
  fp_graph *g = tu_add_linked(tu_random_deep_graph(&r, 3, 7), &r);
  random_agrees(add_linked_twice(g, &r), &r, "linked twice", _i);
}
END_TEST

/* g (destroyed) reopened with max_fusion_size k. */
static fp_graph *with_fusion_size(fp_graph *g, int32_t k) {
  fp_graph *o = fp_graph_copy_open(g, NULL);
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(fp_graph_set_max_fusion_size(o, k, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_finalize(o, NULL), FP_OK);
  fp_graph_destroy(g);
  return o;
}

/* p's largest group is at most k, and p passes the graph's own check. */
static void groups_within(const fp_graph *g, const fp_plan *p, int32_t k,
                          const char *what) {
  fp_error err;
  ck_assert_msg(fp_plan_check(g, p, 0, &err) == FP_OK, "%s: %s", what, err.msg);
  for (int32_t t = 0; t < fp_plan_group_count(p); t++) {
    int32_t len;
    fp_plan_group(p, t, &len);
    ck_assert_msg(len <= k, "%s: group %d has %d nodes, above %d", what, t, len,
                  k);
  }
}

/* Random graphs whose max_fusion_size (1 to 3) is below or above the
 * parameters' limit (1 to 4): a limit may only lower the graph's, so the
 * exhaustive search and the ILP find the same optimum of the smaller one
 * (the ILP's traffic cuts assume the graph's own: a larger limit used to
 * give "model objective disagrees with the evaluator"), and their plans
 * hold no group above it. */
START_TEST(random_fusion_caps_agree) {
  tu_rng r = {(uint64_t)_i * 7919u + 5};
  int32_t gk = 1 + (int32_t)tu_below(&r, 3);
  fp_graph *g = with_fusion_size(tu_random_deep_graph(&r, 3, 7), gk);
  fp_ilp_params prm = random_params(&r, g);
  prm.limits.max_fusion_size = 1 + (int32_t)tu_below(&r, 4);
  int32_t k = prm.limits.max_fusion_size < gk ? prm.limits.max_fusion_size : gk;
  char what[64];
  snprintf(what, sizeof what, "fusion caps seed %d (%d, %d)", _i, gk,
           prm.limits.max_fusion_size);
  every_method_agrees(g, prm, what);
  fp_plan *p = fp_plan_create(), *q = fp_plan_create();
  fp_metrics me, mi;
  prm.window = FP_ILP_WINDOW_EXACT;
  fp_status se = fp_exhaustive(g, &prm, p, &me, NULL);
  ck_assert_int_eq(fp_ilp_solve(g, &prm, q, &mi, NULL), se);
  if (se == FP_OK) {
    groups_within(g, p, k, what);
    groups_within(g, q, k, what);
  }
  fp_plan_destroy(p);
  fp_plan_destroy(q);
  fp_graph_destroy(g);
}
END_TEST

/* The least-peak plan of g into p and its figures into *opt (plain
 * min-peak parameters into *prm), after checking that both peak bounds
 * (fp_graph_bounds, fp_peak_bound) stay at or below that least peak. */
static void bounds_below_least_peak(const fp_graph *g, const char *what,
                                    fp_ilp_params *prm, fp_plan *p,
                                    fp_metrics *opt) {
  fp_bounds b;
  uint64_t lb;
  fp_ilp_params_init(prm);
  prm->objective = FP_OBJECTIVE_PEAK;
  ck_assert_int_eq(fp_exhaustive(g, prm, p, opt, NULL), FP_OK);
  ck_assert_int_eq(fp_graph_bounds(g, &b, NULL), FP_OK);
  ck_assert_int_eq(fp_peak_bound(g, 0, 0, &lb, NULL), FP_OK);
  ck_assert_msg(b.peak_bytes <= opt->peak_bytes && lb <= opt->peak_bytes,
                "%s: bounds %llu, %llu above %llu", what,
                (unsigned long long)b.peak_bytes, (unsigned long long)lb,
                (unsigned long long)opt->peak_bytes);
}

/* The same on optimizer-update graphs, whose in-place pairs often apply
 * with a reader of the taken-over buffer in the taker's group
 * (docs/cost-model.md, "In-place kernels"); and both peak bounds stay at
 * or below the lowest peak, which such takeovers can lower. */
START_TEST(random_updates_agree) {
  tu_rng r = {(uint64_t)_i * 92821u + 11};
  fp_graph *g = tu_random_update_graph(&r, 3, 7);
  char what[64];
  snprintf(what, sizeof what, "update seed %d", _i);
  every_method_agrees(g, random_params(&r, g), what);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics opt;
  bounds_below_least_peak(g, what, &prm, p, &opt);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Random graphs with workspaces (docs/cost-model.md#workspaces), plain
 * and optimizer-update ones (in-place pairs too) in turn: every method
 * agrees with the enumeration as above; the peak bounds stay at or below
 * the least peak; no heuristic, order or random plan beats the exhaustive
 * optimum. */
START_TEST(random_workspaces_agree) {
  tu_rng r = {(uint64_t)_i * 48271u + 13};
  fp_graph *g = _i % 2 ? tu_random_update_graph(&r, 3, 7)
                       : tu_random_deep_graph(&r, 3, 7);
  g = tu_add_workspaces(g, &r);
  char what[64];
  snprintf(what, sizeof what, "workspace seed %d", _i);
  every_method_agrees(g, random_params(&r, g), what);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics opt;
  bounds_below_least_peak(g, what, &prm, p, &opt);
  heuristics_not_better(g, &prm, p, &opt, eager_peak(g, 0));
  for (int k = 0; k < 100; k++) {
    fp_plan *q = random_plan(g, &r);
    not_better(g, &prm, q, &opt, eager_peak(g, 0), "random plan");
    fp_plan_destroy(q);
  }
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

static Suite *exhaustive_suite(void) {
  Suite *s = suite_create("solver/exhaustive");
  TCase *tc = tcase_create("hand");
  tcase_add_test(tc, chain_fuses_into_one_kernel);
  tcase_add_test(tc, extern_in_the_middle);
  tcase_add_test(tc, peak_limit_changes_the_traffic_optimum);
  tcase_add_test(tc, infeasible_limits);
  tcase_add_test(tc, size_limit_and_arguments);
  tcase_add_test(tc, empty_graph);
  tcase_add_test(tc, counts_and_small_optima);
  tcase_add_test(tc, fused_update_takes_its_weight_over);
  suite_add_tcase(s, tc);
  TCase *prop = tcase_create("property");
  tcase_set_timeout(prop, 300);
  tcase_add_loop_test(prop, random_matches_brute_force, 0, 150);
  tcase_add_loop_test(prop, random_nothing_beats_it, 0, 150);
  tcase_add_loop_test(prop, random_loops_agree, 0, 100);
  tcase_add_loop_test(prop, random_linked_agree, 0, 150);
  tcase_add_loop_test(prop, random_linked_twice_agree, 0, 150);
  tcase_add_loop_test(prop, random_fusion_caps_agree, 0, 120);
  tcase_add_loop_test(prop, random_updates_agree, 0, 150);
  tcase_add_loop_test(prop, random_workspaces_agree, 0, 150);
  suite_add_tcase(s, prop);
  return s;
}

int main(void) {
  return tu_run(exhaustive_suite());
}
