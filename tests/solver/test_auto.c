/*
 * test_auto.c -- `--method auto`: the window sub-problems (their costs
 * equal the whole plan's up to constants), the decomposed lower bound
 * (never above an optimum found by enumeration), and the search itself
 * (legal, never worse than the heuristics, limits and clock held, exact
 * on independent blocks, reproducible, cancellable).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/generate.h"
#include "heuristics/heuristics.h"
#include "model/json.h"
#include "model/util.h"
#include "solver/common/solver_test.h"
#include "solver/solver.h"
#include "solver/window/window.h"
#include "tests/testutil.h"

/* A heuristic plan of g (method by seed). */
static fp_plan *heuristic_plan(const fp_graph *g, int seed) {
  fp_fusion_params fp;
  fp_plan *p = fp_plan_create();
  fp_error err;
  fp_fusion_params_init(&fp, (fp_method)(seed % FP_METHOD_COUNT_));
  fp.limits.peak = UINT64_MAX - 1; /* greedy-peak: any plan will do here */
  ck_assert_msg(fp_fuse(g, &fp, p, &err) == FP_OK, "%s", err.msg);
  return p;
}

/* ---- windows ------------------------------------------------------------ */

/* Cuts a random window out of a heuristic plan, re-solves it exactly, and
 * checks that splicing the new window plan in changes the whole plan's
 * traffic and peak exactly as the window's constants predict. */
START_TEST(window_costs_are_the_whole_plans) {
  tu_rng r = {(uint64_t)_i * 7919 + 3};
  fp_graph *g = tu_random_graph(&r, 6, 16);
  if (_i >= 60) /* linked pairs: a window keeps those inside it */
    g = tu_add_linked(g, &r);
  fp_plan *p = heuristic_plan(g, _i), *q = fp_plan_create(),
          *out = fp_plan_create();
  int32_t n = fp_graph_node_count(g), T = fp_plan_group_count(p);
  fp_step *tl = malloc((size_t)n * sizeof *tl);
  int32_t *step = malloc((size_t)n * sizeof *step);
  fp_metrics pm, qm, om;
  fp_error err;
  sub_scratch scr;
  sub_problem S;
  ck_assert_int_eq(fp_plan_eval(g, p, &pm, tl, NULL), FP_OK);
  tu_plan_steps(p, step);
  ck_assert_int_eq(sub_scratch_init(&scr, g), 0);
  int32_t s0 = (int32_t)tu_below(&r, (uint32_t)T);
  int32_t s1 = s0 + 1 + (int32_t)tu_below(&r, (uint32_t)(T - s0));
  ck_assert_msg(sub_window(&S, &scr, g, p, step, tl, &pm, 0, s0, s1, &err) ==
                    FP_OK,
                "%s", err.msg);
  /* The window's own plan spliced back is the same plan. */
  ck_assert_int_eq(sub_splice(&S, p, s0, s1, S.current, out, &err), FP_OK);
  om = tu_eval(g, out);
  ck_assert_uint_eq(om.traffic_bytes, pm.traffic_bytes);
  ck_assert_uint_eq(om.peak_bytes, pm.peak_bytes);
  /* A different window plan: the window's optimum for traffic. */
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  fp_status st = S.n <= FP_EXHAUSTIVE_MAX_NODES
                     ? fp_exhaustive(S.g, &prm, q, &qm, &err)
                     : fp_ilp_solve(S.g, &prm, q, &qm, &err);
  ck_assert_msg(st == FP_OK, "%s", err.msg);
  ck_assert_int_eq(sub_splice(&S, p, s0, s1, q, out, &err), FP_OK);
  om = tu_eval(g, out);
  uint64_t inside = S.const_live + qm.peak_bytes;
  ck_assert_uint_eq(om.traffic_bytes, S.const_traffic + qm.traffic_bytes);
  ck_assert_uint_eq(om.peak_bytes,
                    inside > S.outside_peak ? inside : S.outside_peak);
  ck_assert_uint_le(om.traffic_bytes, pm.traffic_bytes);
  sub_free(&S);
  sub_scratch_free(&scr);
  free(tl);
  free(step);
  fp_plan_destroy(p);
  fp_plan_destroy(q);
  fp_plan_destroy(out);
  fp_graph_destroy(g);
}
END_TEST

/* A gathered window is a legal move of whole groups: the same groups (so
 * the same traffic), the seed's group inside [s0, s1), at most cap nodes
 * there, and a window whose costs are the whole plan's (sub_window checks
 * its identities on the moved plan). */
START_TEST(gathered_window_is_a_legal_move) {
  tu_rng r = {(uint64_t)_i * 4099 + 17};
  fp_graph *g = tu_random_graph(&r, 6, 30);
  fp_plan *p = heuristic_plan(g, _i), *out = fp_plan_create();
  int32_t n = fp_graph_node_count(g), T = fp_plan_group_count(p);
  int32_t *step = malloc((size_t)n * sizeof *step);
  fp_step *tl = malloc((size_t)n * sizeof *tl);
  fp_error err;
  tu_plan_steps(p, step);
  fp_metrics pm = tu_eval(g, p);
  int32_t seed = (int32_t)tu_below(&r, (uint32_t)T), s0, s1;
  int32_t max_nodes = 1 + (int32_t)tu_below(&r, (uint32_t)n);
  int32_t cap = max_nodes + (int32_t)tu_below(&r, 4);
  ck_assert_int_eq(
      sub_gather(g, p, step, seed, max_nodes, cap, out, &s0, &s1, &err), FP_OK);
  if (s0 == s1) { /* nothing gathered: only when the closure is too big */
    ck_assert_int_lt(cap, n);
  } else {
    int32_t *ostep = malloc((size_t)n * sizeof *ostep), inside = 0;
    tu_plan_steps(out, ostep);
    ck_assert_int_eq(fp_plan_check(g, out, 0, &err), FP_OK);
    ck_assert_int_eq(fp_plan_group_count(out), T);
    for (int32_t t = 0; t < T; t++) { /* each group is one of p's */
      int32_t len, plen;
      const int32_t *grp = fp_plan_group(out, t, &len);
      const int32_t *pg = fp_plan_group(p, step[grp[0]], &plen);
      ck_assert_int_eq(len, plen);
      ck_assert(memcmp(grp, pg, (size_t)len * sizeof *grp) == 0);
      inside += t >= s0 && t < s1 ? len : 0;
    }
    int32_t len;
    int32_t seed_at = ostep[fp_plan_group(p, seed, &len)[0]];
    ck_assert(seed_at >= s0 && seed_at < s1);
    ck_assert_int_le(inside, cap);
    fp_metrics om;
    ck_assert_int_eq(fp_plan_eval(g, out, &om, tl, NULL), FP_OK);
    ck_assert_uint_eq(om.traffic_bytes, pm.traffic_bytes);
    sub_scratch scr;
    sub_problem S;
    ck_assert_int_eq(sub_scratch_init(&scr, g), 0);
    ck_assert_msg(
        sub_window(&S, &scr, g, out, ostep, tl, &om, 0, s0, s1, &err) == FP_OK,
        "%s", err.msg);
    sub_free(&S);
    sub_scratch_free(&scr);
    free(ostep);
  }
  free(step);
  free(tl);
  fp_plan_destroy(p);
  fp_plan_destroy(out);
  fp_graph_destroy(g);
}
END_TEST

/* ---- the lower bound ---------------------------------------------------- */

/* The decomposed bound never exceeds the optimum that enumeration finds,
 * for every objective; and it is at least the structural bound. */
START_TEST(bound_below_exhaustive_optimum) {
  tu_rng r = {(uint64_t)_i * 104729 + 11};
  fp_graph *g = tu_random_graph(&r, 3, 8);
  fp_bounds sb;
  ck_assert_int_eq(fp_graph_bounds(g, &sb, NULL), FP_OK);
  for (int obj = 0; obj < FP_OBJECTIVE_COUNT_; obj++) {
    fp_ilp_params prm;
    fp_ilp_params_init(&prm);
    prm.objective = (fp_objective)obj;
    prm.limits.peak = FP_NO_LIMIT;
    prm.lambda = 0.25;
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    fp_error err;
    double bound;
    ck_assert_int_eq(fp_exhaustive(g, &prm, p, &m, &err), FP_OK);
    ck_assert_int_eq(fp_lower_bound(g, &prm, 5.0, &bound, &err), FP_OK);
    double opt = fp_objective_value(&prm, &m);
    ck_assert_msg(bound <= opt, "seed %d %s: bound %.17g above optimum %.17g",
                  _i, fp_objective_name(prm.objective), bound, opt);
    fp_metrics s = {0};
    s.traffic_bytes = sb.traffic_bytes;
    s.peak_bytes = sb.peak_bytes;
    ck_assert(bound >= fp_objective_value(&prm, &s));
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

/* The same with clusters of 2-5 nodes, where most paths between a
 * cluster's nodes run through the rest of the graph: the order buffers
 * and separations that bound.c adds for them must never cut off a legal
 * plan, so the bound stays at most the optimum. */
START_TEST(path_separations_never_exceed_optimum) {
  static const int32_t small[] = {2, 3, 4, 5};
  tu_rng r = {(uint64_t)_i * 7727 + 5};
  fp_graph *g = tu_random_graph(&r, 5, 9);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_error err;
  double bound;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  ck_assert_int_eq(fp_exhaustive(g, &prm, p, &m, &err), FP_OK);
  solver_test_cluster_sizes(small, 4);
  fp_status st = fp_lower_bound(g, &prm, 5.0, &bound, &err);
  solver_test_cluster_sizes(NULL, 0);
  ck_assert_int_eq(st, FP_OK);
  ck_assert_msg(bound <= (double)m.traffic_bytes,
                "seed %d: bound %.17g above the optimum %llu", _i, bound,
                (unsigned long long)m.traffic_bytes);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Over many tiny graphs the cluster ILPs must beat the structural bound
 * somewhere (else they do nothing) and reach the optimum somewhere. */
START_TEST(bound_is_stronger_than_structural) {
  int stronger = 0, tight = 0;
  for (int seed = 0; seed < 60; seed++) {
    tu_rng r = {(uint64_t)seed * 104729 + 11};
    fp_graph *g = tu_random_graph(&r, 5, 8);
    fp_ilp_params prm;
    fp_ilp_params_init(&prm);
    prm.limits.peak = FP_NO_LIMIT;
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    fp_bounds sb;
    double bound;
    ck_assert_int_eq(fp_exhaustive(g, &prm, p, &m, NULL), FP_OK);
    ck_assert_int_eq(fp_graph_bounds(g, &sb, NULL), FP_OK);
    ck_assert_int_eq(fp_lower_bound(g, &prm, 5.0, &bound, NULL), FP_OK);
    stronger += bound > (double)sb.traffic_bytes;
    tight += bound == (double)m.traffic_bytes;
    fp_plan_destroy(p);
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(stronger, 5);
  ck_assert_int_gt(tight, 10);
}
END_TEST

/* On generated graphs the bound stays below every heuristic's traffic. */
START_TEST(bound_below_heuristics_on_generated) {
  fp_graph *g = tu_generated((fp_gen_family)(_i % FP_GEN_FAMILY_COUNT_), 150,
                             (uint64_t)_i + 1);
  fp_ilp_params prm;
  double bound;
  fp_ilp_params_init(&prm);
  ck_assert_int_eq(fp_lower_bound(g, &prm, 3.0, &bound, NULL), FP_OK);
  for (int k = 0; k < FP_METHOD_COUNT_; k++) {
    fp_plan *p = heuristic_plan(g, k);
    fp_metrics m = tu_eval(g, p);
    ck_assert_msg(bound <= (double)m.traffic_bytes, "%s: %.17g > %llu",
                  fp_method_name((fp_method)k), bound,
                  (unsigned long long)m.traffic_bytes);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

/* ---- the search --------------------------------------------------------- */

/* The best heuristic objective that meets prm's limits (greedy-peak under
 * the peak limit): auto's starting point; INFINITY when there is none. */
static double best_heuristic(const fp_graph *g, const fp_ilp_params *prm,
                             uint64_t eager_peak) {
  double best = INFINITY;
  for (int k = 0; k < FP_METHOD_COUNT_; k++) {
    fp_fusion_params fp;
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    fp_fusion_params_init(&fp, (fp_method)k);
    fp.order = FP_ORDER_BEST;
    if (prm->limits.peak != FP_NO_LIMIT)
      fp.limits.peak = prm->limits.peak;
    if (fp_fuse(g, &fp, p, NULL) == FP_OK &&
        fp_plan_eval(g, p, &m, NULL, NULL) == FP_OK &&
        fp_meets_limits(prm, &m, eager_peak) &&
        fp_objective_value(prm, &m) < best)
      best = fp_objective_value(prm, &m);
    fp_plan_destroy(p);
  }
  return best;
}

/* The multiplier of wall-clock allowances (CK_TIMEOUT_MULTIPLIER, > 1
 * under sanitizers). */
static double time_slack(void) {
  const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
  return mult ? atof(mult) : 1.0;
}

/* 500-3000 generated nodes, a 1.5 s limit: legal, limits and clock held,
 * never worse than the heuristics, bound below the objective. */
START_TEST(auto_on_generated_graphs) {
  static const int32_t sizes[] = {500, 1200, 3000};
  fp_graph *g = tu_generated((fp_gen_family)(_i % FP_GEN_FAMILY_COUNT_),
                             sizes[_i % 3], (uint64_t)_i + 5);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create(), *e = fp_plan_create();
  fp_metrics m, em;
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 1.5;
  prm.objective = _i % 4 == 3 ? FP_OBJECTIVE_PEAK : FP_OBJECTIVE_TRAFFIC;
  prm.jobs = 1 + _i % 2; /* windows on two threads every other graph */
  ck_assert_int_eq(fp_plan_make_eager(e, g, NULL), FP_OK);
  em = tu_eval(g, e);
  double t0 = fp_clock_now();
  ck_assert_msg(fp_auto_solve(g, &prm, p, &m, &err) == FP_OK, "%s", err.msg);
  double took = fp_clock_now() - t0;
  /* The promise is +10%; sanitized code runs slower (CK_TIMEOUT_MULTIPLIER). */
  ck_assert_msg(took <= 1.1 * prm.time_limit_s * time_slack(), "took %.3f s",
                took);
  fp_metrics check = tu_eval(g, p);
  ck_assert_uint_eq(check.traffic_bytes, m.traffic_bytes);
  ck_assert_uint_eq(check.peak_bytes, m.peak_bytes);
  ck_assert_uint_le(m.peak_bytes, em.peak_bytes);
  ck_assert(fp_objective_value(&prm, &m) <=
            best_heuristic(g, &prm, em.peak_bytes));
  const fp_solver_info *si = fp_plan_solver_const(p);
  ck_assert_str_eq(si->method, "auto");
  ck_assert(si->objective == fp_objective_value(&prm, &m));
  ck_assert(si->bound <= si->objective && si->bound > 0);
  ck_assert(fabs(si->gap - (si->objective - si->bound) / si->objective) <
            1e-12);
  fp_plan_destroy(p);
  fp_plan_destroy(e);
  fp_graph_destroy(g);
}
END_TEST

/* Copies finalized graph `src` into `dst` with names prefixed by `pre`. */
static void append_block(fp_graph *dst, const fp_graph *src, const char *pre) {
  int32_t nb = fp_graph_buffer_count(src), n = fp_graph_node_count(src);
  int32_t *bmap = malloc((size_t)nb * sizeof *bmap), base;
  char name[256];
  fp_error err;
  for (int32_t b = 0; b < nb; b++) {
    const fp_buffer *buf = fp_graph_buffer(src, b);
    snprintf(name, sizeof name, "%s%s", pre, buf->name);
    bmap[b] = fp_graph_add_buffer(dst, name, buf->bytes, buf->input,
                                  buf->freeable, &err);
    ck_assert_msg(bmap[b] >= 0, "%s", err.msg);
  }
  base = -1;
  for (int32_t v = 0; v < n; v++) {
    const fp_node *nd = fp_graph_node(src, v);
    fp_read reads[16];
    int32_t writes[16];
    ck_assert(nd->n_reads <= 16 && nd->n_writes <= 16);
    for (int32_t i = 0; i < nd->n_reads; i++) {
      reads[i] = nd->reads[i];
      reads[i].buffer = bmap[nd->reads[i].buffer];
    }
    for (int32_t i = 0; i < nd->n_writes; i++)
      writes[i] = bmap[nd->writes[i]];
    snprintf(name, sizeof name, "%s%s", pre, nd->name);
    fp_node_spec spec = {name,       nd->kind,    nd->numel,
                         nd->rnumel, nd->n_reads, nd->n_writes,
                         reads,      writes,      &nd->op};
    int32_t id = fp_graph_add_node(dst, &spec, &err);
    ck_assert_msg(id >= 0, "%s", err.msg);
    base = base < 0 ? id : base;
  }
  for (int32_t i = 0; i < fp_graph_output_count(src); i++)
    ck_assert_int_eq(
        fp_graph_add_output(dst, bmap[fp_graph_output(src, i)], NULL), FP_OK);
  for (int32_t i = 0; i < fp_graph_unfusible_count(src); i++) {
    int32_t u, v;
    fp_graph_unfusible_pair(src, i, &u, &v);
    ck_assert_int_eq(fp_graph_add_unfusible(dst, base + u, base + v, NULL),
                     FP_OK);
  }
  free(bmap);
}

/* Independent blocks of up to 8 nodes (the smallest cluster size) fall
 * into one cluster each, so the decomposed bound is exact: the sum of the
 * blocks' optima found by enumeration. */
START_TEST(bound_exact_on_independent_blocks) {
  tu_rng r = {(uint64_t)_i * 65537 + 9};
  fp_graph *whole = fp_graph_create("blocks");
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  uint64_t sum = 0;
  int32_t k = FP_DEFAULT_MAX_FUSION_SIZE, nblocks = 2 + (int)tu_below(&r, 5);
  fp_graph *blocks[6];
  for (int i = 0; i < nblocks; i++) {
    blocks[i] = tu_random_graph(&r, 2, 8);
    int32_t bk = fp_graph_max_fusion_size(blocks[i]);
    k = bk < k ? bk : k;
  }
  ck_assert_int_eq(fp_graph_set_max_fusion_size(whole, k, NULL), FP_OK);
  prm.limits.max_fusion_size = k;
  for (int i = 0; i < nblocks; i++) {
    char pre[16];
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    snprintf(pre, sizeof pre, "k%d.", i);
    append_block(whole, blocks[i], pre);
    ck_assert_int_eq(fp_exhaustive(blocks[i], &prm, p, &m, NULL), FP_OK);
    sum += m.traffic_bytes;
    fp_plan_destroy(p);
    fp_graph_destroy(blocks[i]);
  }
  prm.limits.max_fusion_size = 0;
  ck_assert_int_eq(fp_graph_finalize(whole, NULL), FP_OK);
  double bound;
  fp_error err;
  ck_assert_msg(fp_lower_bound(whole, &prm, 30.0, &bound, &err) == FP_OK, "%s",
                err.msg);
  ck_assert_msg(bound == (double)sum, "bound %.17g, optimum %llu", bound,
                (unsigned long long)sum);
  fp_graph_destroy(whole);
}
END_TEST

/* A graph of independent blocks has the sum of the blocks' optima as its
 * optimum (no peak limit): auto must find it.  The blocks' nodes may be
 * interleaved in the heuristic plan, where no window of consecutive steps
 * holds a whole block; gathered windows do.  The search stops at the
 * bound, exact here (one cluster per block), so the 60 s cost time only
 * on a loaded machine. */
START_TEST(auto_exact_on_independent_blocks) {
  tu_rng r = {(uint64_t)_i * 31337 + 5};
  fp_graph *whole = fp_graph_create("blocks");
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  prm.time_limit_s = 60;
  uint64_t sum = 0;
  int32_t k = FP_DEFAULT_MAX_FUSION_SIZE;
  fp_graph *blocks[10];
  for (int i = 0; i < 10; i++) {
    blocks[i] = tu_random_graph(&r, 5, 7);
    int32_t bk = fp_graph_max_fusion_size(blocks[i]);
    k = bk < k ? bk : k;
  }
  ck_assert_int_eq(fp_graph_set_max_fusion_size(whole, k, NULL), FP_OK);
  for (int i = 0; i < 10; i++) {
    char pre[16];
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    snprintf(pre, sizeof pre, "k%d.", i);
    append_block(whole, blocks[i], pre);
    prm.limits.max_fusion_size = k;
    ck_assert_int_eq(fp_exhaustive(blocks[i], &prm, p, &m, NULL), FP_OK);
    sum += m.traffic_bytes;
    fp_plan_destroy(p);
    fp_graph_destroy(blocks[i]);
  }
  prm.limits.max_fusion_size = 0;
  ck_assert_int_eq(fp_graph_finalize(whole, NULL), FP_OK);
  ck_assert_int_gt(fp_graph_node_count(whole), FP_ILP_EXACT_NODES);
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  fp_error err;
  ck_assert_msg(fp_auto_solve(whole, &prm, p, &m, &err) == FP_OK, "%s",
                err.msg);
  ck_assert_uint_eq(m.traffic_bytes, sum);
  ck_assert(fp_plan_solver(p)->bound <= (double)sum);
  fp_plan_destroy(p);
  fp_graph_destroy(whole);
}
END_TEST

/* Every objective under random limits on 60-100-node graphs of random
 * blocks (so windows see every kind mix): auto answers exactly when its
 * starting point exists, meets the limits, never does worse than that
 * start, and keeps its bound below its objective. */
START_TEST(auto_any_objective_and_limits) {
  tu_rng r = {(uint64_t)_i * 7777 + 1};
  fp_graph *whole = fp_graph_create("blocks");
  int32_t k = FP_DEFAULT_MAX_FUSION_SIZE;
  fp_graph *blocks[14];
  int nb = 10 + (int)tu_below(&r, 5);
  for (int i = 0; i < nb; i++) {
    blocks[i] = tu_random_graph(&r, 5, 8);
    int32_t bk = fp_graph_max_fusion_size(blocks[i]);
    k = bk < k ? bk : k;
  }
  ck_assert_int_eq(fp_graph_set_max_fusion_size(whole, k, NULL), FP_OK);
  for (int i = 0; i < nb; i++) {
    char pre[16];
    snprintf(pre, sizeof pre, "k%d.", i);
    append_block(whole, blocks[i], pre);
    fp_graph_destroy(blocks[i]);
  }
  ck_assert_int_eq(fp_graph_finalize(whole, NULL), FP_OK);
  fp_plan *e = fp_plan_create(), *p = fp_plan_create();
  ck_assert_int_eq(fp_plan_make_eager(e, whole, NULL), FP_OK);
  fp_metrics em = tu_eval(whole, e), m;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = (fp_objective)(_i % FP_OBJECTIVE_COUNT_);
  prm.lambda = 0.5;
  prm.time_limit_s = 3;
  prm.limits.peak = em.peak_bytes / 100 * (90 + tu_below(&r, 21));
  if (_i % 4 == 1)
    prm.limits.traffic = em.traffic_bytes / 100 * (85 + tu_below(&r, 20));
  double start = best_heuristic(whole, &prm, em.peak_bytes);
  fp_error err;
  fp_status st = fp_auto_solve(whole, &prm, p, &m, &err);
  if (isinf(start)) { /* no heuristic meets the limits: auto says so */
    ck_assert_int_eq(st, FP_EINFEASIBLE);
  } else {
    ck_assert_msg(st == FP_OK, "%s", err.msg);
    fp_metrics check = tu_eval(whole, p);
    ck_assert_uint_eq(check.traffic_bytes, m.traffic_bytes);
    ck_assert_uint_eq(check.peak_bytes, m.peak_bytes);
    ck_assert(fp_meets_limits(&prm, &m, em.peak_bytes));
    ck_assert(fp_objective_value(&prm, &m) <= start);
    ck_assert(fp_plan_solver(p)->bound <= fp_plan_solver(p)->objective);
  }
  fp_plan_destroy(e);
  fp_plan_destroy(p);
  fp_graph_destroy(whole);
}
END_TEST

/* Above FP_ILP_EXACT_NODES nodes, a model small enough for the time
 * limit is tried exactly first (a 44-node generated MLP, 4,758 rows):
 * whether the try proves the optimum depends on the machine's speed
 * (BENCHMARKS.md), so this checks what must hold either way -- the answer
 * is auto's, legal, its figures the evaluator's, its bound below it and
 * at or above the structural bound, and it is no worse than the best
 * heuristic plan -- and that a proven answer says so consistently. */
START_TEST(auto_tries_the_exact_model) {
  fp_graph *g = tu_generated(FP_GEN_MLP, 44, 1);
  fp_ilp_params prm;
  fp_metrics m, em;
  fp_error err;
  fp_bounds sb;
  fp_plan *p = fp_plan_create(), *e = fp_plan_create();
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 10;
  ck_assert_int_gt(fp_graph_node_count(g), FP_ILP_EXACT_NODES);
  ck_assert_int_eq(fp_plan_make_eager(e, g, NULL), FP_OK);
  em = tu_eval(g, e);
  ck_assert_msg(fp_auto_solve(g, &prm, p, &m, &err) == FP_OK, "%s", err.msg);
  const fp_solver_info *si = fp_plan_solver_const(p);
  ck_assert_str_eq(si->method, "auto");
  fp_metrics check = tu_eval(g, p);
  ck_assert_uint_eq(check.traffic_bytes, m.traffic_bytes);
  ck_assert_uint_eq(check.peak_bytes, m.peak_bytes);
  ck_assert_uint_le(m.peak_bytes, em.peak_bytes);
  ck_assert(si->objective == (double)m.traffic_bytes);
  ck_assert(si->bound <= si->objective);
  ck_assert_int_eq(fp_graph_bounds(g, &sb, NULL), FP_OK);
  ck_assert(si->bound >= (double)sb.traffic_bytes);
  ck_assert(si->objective <= best_heuristic(g, &prm, em.peak_bytes));
  ck_assert_int_eq(strcmp(si->status, "optimal") == 0,
                   si->bound >= si->objective);
  if (strcmp(si->status, "optimal") == 0)
    ck_assert_int_ge(si->levels_proven, 1);
  fp_plan_destroy(p);
  fp_plan_destroy(e);
  fp_graph_destroy(g);
}
END_TEST

/* Passes that improve nothing raise the effort instead of ending the
 * search: with a gap left, auto works until its time limit. */
START_TEST(auto_uses_its_time) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 300, 2);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 3;
  double t0 = fp_clock_now();
  ck_assert_int_eq(fp_auto_solve(g, &prm, p, NULL, NULL), FP_OK);
  double took = fp_clock_now() - t0;
  const fp_solver_info *si = fp_plan_solver_const(p);
  ck_assert_msg(strcmp(si->status, "optimal") == 0 || took >= 0.8 * 3,
                "stopped after %.2f s of 3 with a gap of %g", took, si->gap);
  ck_assert_msg(took <= 1.1 * 3 + 0.2, "took %.2f s of 3", took);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* Same seed, one job: the same plan, group for group.  The search stops
 * when its plan reaches the bound, and the bound's cluster ILPs have
 * wall-clock caps, so under load a weaker bound would let one run search
 * longer than the other: both compared runs get the first run's figure
 * as their known bound (no valid bound exceeds the optimum it proves),
 * which leaves only the windows' node limits to decide. */
START_TEST(auto_is_reproducible) {
  fp_graph *g = tu_generated(FP_GEN_RANDOM, 50, 3);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 30; /* converges long before: no clock cut */
  prm.seed = 7;
  fp_plan *a = fp_plan_create(), *b = fp_plan_create(), *c = fp_plan_create();
  fp_metrics ma, mb, mc;
  ck_assert_int_eq(fp_auto_solve(g, &prm, a, &ma, NULL), FP_OK);
  ck_assert_str_eq(fp_plan_solver_const(a)->status, "optimal");
  prm.known_bound = fp_objective_value(&prm, &ma);
  ck_assert_int_eq(fp_auto_solve(g, &prm, b, &mb, NULL), FP_OK);
  ck_assert_int_eq(fp_auto_solve(g, &prm, c, &mc, NULL), FP_OK);
  ck_assert_uint_eq(mb.traffic_bytes, ma.traffic_bytes);
  ck_assert_uint_eq(mc.traffic_bytes, mb.traffic_bytes);
  ck_assert_uint_eq(mc.peak_bytes, mb.peak_bytes);
  ck_assert_int_eq(fp_plan_group_count(c), fp_plan_group_count(b));
  for (int32_t t = 0; t < fp_plan_group_count(b); t++) {
    int32_t lb, lc;
    const int32_t *gb = fp_plan_group(b, t, &lb),
                  *gc = fp_plan_group(c, t, &lc);
    ck_assert_int_eq(lb, lc);
    ck_assert_msg(memcmp(gb, gc, (size_t)lb * sizeof *gb) == 0,
                  "group %d differs", (int)t);
  }
  fp_plan_destroy(a);
  fp_plan_destroy(b);
  fp_plan_destroy(c);
  fp_graph_destroy(g);
}
END_TEST

/* A cancel flag raised before the call stops the search at once with a
 * legal plan: within 1 s (the start plan alone takes about 10 ms on 1000
 * nodes), times CK_TIMEOUT_MULTIPLIER under sanitizers, against a time
 * limit of 120 s. */
START_TEST(auto_cancel_returns_a_plan) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 1000, 2);
  static volatile sig_atomic_t stop = 1;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 120;
  prm.cancel = &stop;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
  double slack = mult ? atof(mult) : 1.0;
  double t0 = fp_clock_now();
  ck_assert_int_eq(fp_auto_solve(g, &prm, p, &m, NULL), FP_OK);
  double took = fp_clock_now() - t0;
  ck_assert_msg(took <= 1.0 * slack, "took %.3f s after a cancel", took);
  tu_eval(g, p);
  ck_assert_str_eq(fp_plan_solver(p)->method, "auto");
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* A limit the first phase spends whole (a tiny one, or a slow machine
 * under sanitizers) still gives a legal plan, for every objective and
 * size: the phases after it get no time, never a time <= 0 that their
 * own parameter check would refuse. */
START_TEST(auto_tiny_time_limit_returns_a_plan) {
  static const int sizes[] = {12, 40, 300};
  static const double limits[] = {1e-9, 1e-6, 1e-4};
  fp_graph *g = tu_generated(FP_GEN_CONVNET, sizes[_i % 3], _i + 1);
  fp_ilp_params prm;
  fp_error err;
  for (int o = 0; o < FP_OBJECTIVE_COUNT_; o++) {
    fp_plan *p = fp_plan_create();
    fp_metrics m;
    fp_ilp_params_init(&prm);
    prm.objective = (fp_objective)o;
    prm.time_limit_s = limits[_i / 3];
    ck_assert_msg(fp_auto_solve(g, &prm, p, &m, &err) == FP_OK,
                  "objective %d, %g s: %s", o, prm.time_limit_s, err.msg);
    fp_metrics e = tu_eval(g, p);
    ck_assert_uint_eq(e.traffic_bytes, m.traffic_bytes);
    ck_assert_uint_eq(e.peak_bytes, m.peak_bytes);
    fp_plan_destroy(p);
  }
  fp_graph_destroy(g);
}
END_TEST

/* A graph of the corpus (top_srcdir/DIR/NAME.json.gz). */
static fp_graph *corpus_graph(const char *dir, const char *name) {
  const char *top = getenv("top_srcdir");
  char path[4096];
  fp_graph *g = NULL;
  fp_error err;
  snprintf(path, sizeof path, "%s/%s/%s.json.gz", top ? top : "..", dir, name);
  ck_assert_msg(fp_graph_load_file(path, &g, &err) == FP_OK, "%s", err.msg);
  return g;
}

/* auto on g under a 60 s limit with tolerance gap2 into p; its wall
 * seconds. */
static double auto_60(const fp_graph *g, double gap2, fp_plan *p,
                      fp_metrics *m) {
  fp_ilp_params prm;
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.time_limit_s = 60;
  prm.gap2 = gap2;
  double t0 = fp_clock_now();
  ck_assert_msg(fp_auto_solve(g, &prm, p, m, &err) == FP_OK, "%s", err.msg);
  return fp_clock_now() - t0;
}

/* With a 60 s limit, auto stops once its answer is final instead of at
 * the limit: generated 36-node graphs (the exact search proves both
 * levels in milliseconds) and resmlp_12_224.fwd (126 nodes; 18.8 s of a
 * 60 s limit before the stop rule, for an answer final in 0.2 s) end
 * within 2 s, stopped because every level is proven or within its
 * tolerance. */
START_TEST(auto_stops_when_final) {
  fp_graph *g = _i < FP_GEN_FAMILY_COUNT_
                    ? tu_generated((fp_gen_family)_i, 36, 1)
                    : corpus_graph("data/exported", "resmlp_12_224.fwd");
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  double took = auto_60(g, FP_ILP_DEFAULT_GAP2, p, &m);
  const fp_solver_info *si = fp_plan_solver(p);
  ck_assert_msg(took < 2.0 * time_slack(), "case %d took %.2f s (%s)", _i, took,
                si->stop_reason);
  ck_assert_msg(strcmp(si->stop_reason, "proven") == 0 ||
                    strcmp(si->stop_reason, "gap") == 0,
                "case %d: %s", _i, si->stop_reason);
  ck_assert(si->gap == 0 && si->gap2 <= FP_ILP_DEFAULT_GAP2);
  ck_assert(si->bound2 <= si->objective2 && si->objective2 == m.peak_bytes);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* --gap2 0.5 on gpt2.bwd, whose second level (peak among least-traffic
 * plans) is not proven (0.031% above its bound): the search stops once
 * the first level is proven, with stop_reason "gap", the gap2 it reports
 * at most 0.5 and consistent with its figures, long before the limit. */
START_TEST(auto_stops_within_gap2) {
  fp_graph *g = corpus_graph("data/graphs", "gpt2.bwd");
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  double took = auto_60(g, 0.5, p, &m);
  const fp_solver_info *si = fp_plan_solver(p);
  ck_assert_str_eq(si->stop_reason, "gap");
  ck_assert_int_eq(si->levels_proven, 1);
  ck_assert(si->gap == 0 && si->gap2 > 0 && si->gap2 <= 0.5);
  ck_assert(si->objective2 == (double)m.peak_bytes);
  ck_assert(fabs(si->gap2 - (si->objective2 - si->bound2) / si->objective2) <
            1e-12);
  ck_assert_msg(took < 15 * time_slack(), "took %.1f s", took);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

/* efficientnet_b0.fwd under its eager peak: the plans of least traffic
 * exceed the limit by 84,032 bytes (running-mean updates fused early are
 * live at the peak step), so the traffic bound stayed that far under the
 * answer and auto ran to the limit (58.8 s of 60).  The step bound
 * (solver_step_bound) proves the answer: the first level proven, the
 * second within its tolerance, long before the limit. */
START_TEST(auto_proves_under_the_peak_limit) {
  fp_graph *g = corpus_graph("data/exported", "efficientnet_b0.fwd");
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  double took = auto_60(g, FP_ILP_DEFAULT_GAP2, p, &m);
  const fp_solver_info *si = fp_plan_solver(p);
  ck_assert_msg(si->gap == 0 && si->levels_proven >= 1, "gap %g (%s)", si->gap,
                si->stop_reason);
  ck_assert(strcmp(si->stop_reason, "gap") == 0 ||
            strcmp(si->stop_reason, "proven") == 0);
  ck_assert_msg(took < 15 * time_slack(), "took %.1f s", took);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(auto_bad_params_and_infeasible) {
  fp_graph *g = tu_generated(FP_GEN_MLP, 60, 1);
  fp_ilp_params prm;
  fp_plan *p = fp_plan_create();
  fp_error err;
  fp_ilp_params_init(&prm);
  prm.jobs = 0;
  ck_assert_int_eq(fp_auto_solve(g, &prm, p, NULL, &err), FP_EARG);
  ck_assert(strstr(err.msg, "jobs") != NULL);
  fp_ilp_params_init(&prm);
  prm.node_limit = -1;
  ck_assert_int_eq(fp_auto_solve(g, &prm, p, NULL, &err), FP_EARG);
  static const double bad_gaps[] = {-0.01, NAN, 1.0, INFINITY};
  for (int i = 0; i < 8; i++) { /* gap, then gap2 */
    fp_ilp_params_init(&prm);
    *(i < 4 ? &prm.gap : &prm.gap2) = bad_gaps[i % 4];
    ck_assert_int_eq(fp_auto_solve(g, &prm, p, NULL, &err), FP_EARG);
    ck_assert(strstr(err.msg, i < 4 ? "gap " : "gap2") != NULL);
    ck_assert_int_eq(fp_ilp_solve(g, &prm, p, NULL, &err), FP_EARG);
  }
  fp_ilp_params_init(&prm);
  prm.limits.peak = 1;
  ck_assert_int_eq(fp_auto_solve(g, &prm, p, NULL, &err), FP_EINFEASIBLE);
  ck_assert(strstr(err.msg, "lowest peak known") != NULL);
  fp_plan_destroy(p);
  fp_graph_destroy(g);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("auto");
  TCase *w = tcase_create("windows");
  tcase_set_timeout(w, 120);
  tcase_add_loop_test(w, window_costs_are_the_whole_plans, 0, 140);
  tcase_add_loop_test(w, gathered_window_is_a_legal_move, 0, 200);
  suite_add_tcase(s, w);
  TCase *b = tcase_create("bound");
  tcase_set_timeout(b, 300);
  tcase_add_loop_test(b, bound_below_exhaustive_optimum, 0, 150);
  tcase_add_test(b, bound_is_stronger_than_structural);
  tcase_add_loop_test(b, path_separations_never_exceed_optimum, 0, 200);
  tcase_add_loop_test(b, bound_below_heuristics_on_generated, 0, 4);
  suite_add_tcase(s, b);
  TCase *a = tcase_create("search");
  tcase_set_timeout(a, 300);
  tcase_add_loop_test(a, auto_on_generated_graphs, 0, 6);
  suite_add_tcase(s, a);
  TCase *x = tcase_create("blocks");
  tcase_set_timeout(x, 300);
  tcase_add_loop_test(x, bound_exact_on_independent_blocks, 0, 20);
  tcase_add_loop_test(x, auto_exact_on_independent_blocks, 0, 3);
  tcase_add_loop_test(x, auto_any_objective_and_limits, 0, 12);
  suite_add_tcase(s, x);
  TCase *o = tcase_create("operation");
  tcase_set_timeout(o, 300);
  tcase_add_test(o, auto_is_reproducible);
  tcase_add_test(o, auto_tries_the_exact_model);
  tcase_add_test(o, auto_uses_its_time);
  tcase_add_test(o, auto_cancel_returns_a_plan);
  tcase_add_test(o, auto_bad_params_and_infeasible);
  tcase_add_loop_test(o, auto_stops_when_final, 0, FP_GEN_FAMILY_COUNT_ + 1);
  tcase_add_test(o, auto_stops_within_gap2);
  tcase_add_test(o, auto_proves_under_the_peak_limit);
  tcase_add_loop_test(o, auto_tiny_time_limit_returns_a_plan, 0, 9);
  suite_add_tcase(s, o);
  return s;
}

int main(void) {
  return tu_run(suite());
}
