/*
 * test_oom.c -- out of memory on every path (issue 15, item 10): for a
 * small run of each path (load a graph, load and evaluate a plan, each
 * heuristic, the ILP, auto, exhaustive, pareto, run, the step bound on
 * a graph with in-place pairs), the k-th allocation
 * of the library fails, for every k in turn.  Each run must end with
 * FP_ENOMEM, or with FP_OK and the same answer as without the failure
 * (an allocation whose failure the code can absorb); never another
 * status (an out-of-memory reported as "infeasible" is a bug), a crash
 * or, under ASan, a leak.
 *
 * The library allocates with the C library's malloc, calloc, realloc and
 * strdup, directly.  This test links with -Wl,--wrap for them
 * (Makefile.am), which routes every call from the library's objects (and
 * from this file) to the __wrap_ functions below; the allocations made
 * inside GLPK, cJSON, zlib and the C library are not counted.  Counting
 * is on only while a path runs (tf_arm), so the test's own allocations
 * never fail.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_exec/exec.h"
#include "gen/generate.h"
#include "model/json.h"
#include "model/util.h"
#include "solver/bound/bound.h"
#include "solver/bound/least_traffic.h"
#include "solver/common/solver_test.h"
#include "solver/planner.h"
#include "tests/testutil.h"

/* ---- the failing allocator -------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

static int tf_on;     /* counting */
static long tf_count; /* allocations counted since tf_arm */
static long tf_fail;  /* the one that fails (1-based); 0: none */

/* Counts an allocation; true when it is the one to fail. */
static int tf_fails(void) {
  return tf_on && ++tf_count == tf_fail;
}

void *__wrap_malloc(size_t n) {
  return tf_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size) {
  return tf_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n) {
  return tf_fails() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s) {
  return tf_fails() ? NULL : __real_strdup(s);
}

/* Counting on, the k-th allocation from now failing (0: none). */
static void tf_arm(long k) {
  tf_count = 0;
  tf_fail = k;
  tf_on = 1;
}

/* Counting off; returns how many allocations were counted. */
static long tf_disarm(void) {
  tf_on = 0;
  return tf_count;
}

/* ---- the sweep --------------------------------------------------------- */

/* What a path computed, compared between runs. */
typedef struct answer {
  fp_metrics m[8];
  int n;
  uint32_t digest;
  fp_error err; /* the path's message when it failed */
} answer;

typedef fp_status (*path_fn)(const void *ctx, answer *a);

static void same_answer(const char *what, long k, const answer *a,
                        const answer *ref) {
  ck_assert_msg(a->n == ref->n && a->digest == ref->digest,
                "%s: allocation %ld failed, FP_OK with another answer", what,
                k);
  for (int i = 0; i < a->n; i++)
    ck_assert_msg(a->m[i].traffic_bytes == ref->m[i].traffic_bytes &&
                      a->m[i].peak_bytes == ref->m[i].peak_bytes &&
                      a->m[i].kernels == ref->m[i].kernels,
                  "%s: allocation %ld failed, FP_OK with another answer "
                  "(figure %d)",
                  what, k, i);
}

/* Runs of a path at most, unless FP_TEST_OOM_FULL is set: a path with
 * more allocations has every one of its first SWEEP_MAX failed, then
 * every stride-th (each run costs milliseconds; the ILP paths allocate
 * tens of thousands of times). */
#define SWEEP_MAX 400

/* Runs path fn once to count its allocations and get its answer, then
 * once per allocation with that one failing (see SWEEP_MAX). */
static void sweep(const char *what, path_fn fn, const void *ctx) {
  answer ref, a;
  memset(&ref, 0, sizeof ref);
  tf_arm(0);
  fp_status st = fn(ctx, &ref);
  long n = tf_disarm();
  ck_assert_msg(st == FP_OK, "%s: %s without a failure", what,
                fp_status_name(st));
  ck_assert_msg(n > 0, "%s: no allocation counted", what);
  long stride = n <= 2 * SWEEP_MAX || getenv("FP_TEST_OOM_FULL")
                    ? 1
                    : (n - SWEEP_MAX) / SWEEP_MAX + 1;
  fprintf(stderr, "%s: %ld allocations, failed in turn (stride %ld after %d)\n",
          what, n, stride, SWEEP_MAX);
  for (long k = 1; k <= n; k += k < SWEEP_MAX ? 1 : stride) {
    memset(&a, 0, sizeof a);
    tf_arm(k);
    st = fn(ctx, &a);
    tf_disarm();
    ck_assert_msg(st == FP_OK || st == FP_ENOMEM,
                  "%s: allocation %ld of %ld failed: %s, not FP_ENOMEM (%s)",
                  what, k, n, fp_status_name(st), a.err.msg);
    if (st == FP_OK)
      same_answer(what, k, &a, &ref);
  }
}

/* ---- the paths ---------------------------------------------------------- */

typedef struct fixture {
  const fp_graph *g;
  const char *graph_json, *plan_json;
  const fp_planner *pl;
} fixture;

static fp_status path_load(const void *ctx, answer *a) {
  const fixture *f = ctx;
  fp_graph *g = NULL;
  fp_plan *p = NULL;
  fp_status st = fp_graph_load_buffer(f->graph_json, strlen(f->graph_json),
                                      "g.json", &g, &a->err);
  if (st == FP_OK)
    st = fp_plan_load_buffer(f->plan_json, strlen(f->plan_json), "p.json", g,
                             &p, &a->err);
  if (st == FP_OK) {
    a->n = 1;
    st = fp_plan_eval(g, p, &a->m[0], NULL, &a->err);
  }
  fp_plan_destroy(p);
  fp_graph_destroy(g);
  return st;
}

static fp_status path_planner(const void *ctx, answer *a) {
  const fixture *f = ctx;
  fp_plan_request req;
  fp_plan *p = fp_plan_create();
  if (!p)
    return FP_ENOMEM;
  fp_plan_request_init(&req, f->pl);
  req.ilp.time_limit_s = 30; /* the graph is proved optimal long before */
  a->n = 1;
  fp_status st = fp_planner_run(f->pl, f->g, &req, p, &a->m[0], &a->err);
  fp_plan_destroy(p);
  return st;
}

static fp_status path_pareto(const void *ctx, answer *a) {
  const fixture *f = ctx;
  fp_plan_request req;
  fp_pareto_point pts[3];
  fp_plan_request_init(&req, f->pl);
  req.ilp.time_limit_s = 30;
  fp_status st = fp_pareto(f->g, &req.ilp, 2, f->pl, pts, &a->err);
  a->n = 2;
  for (int i = 0; st == FP_OK && i < 2; i++)
    a->m[i] = pts[i].m;
  return st;
}

static fp_status path_run(const void *ctx, answer *a) {
  const fixture *f = ctx;
  fp_plan *p = NULL;
  fp_exec_report rep;
  fp_status st = fp_plan_load_buffer(f->plan_json, strlen(f->plan_json),
                                     "p.json", f->g, &p, &a->err);
  memset(&rep, 0, sizeof rep);
  if (st == FP_OK)
    st = fp_exec_run(f->g, p, NULL, &rep, &a->err);
  if (st == FP_OK) {
    a->n = 1;
    a->m[0].traffic_bytes = rep.traffic_bytes;
    a->m[0].peak_bytes = rep.peak_bytes;
    a->digest = rep.output_digest ^ (uint32_t)rep.check;
  }
  fp_exec_report_free(&rep);
  fp_plan_destroy(p);
  return st;
}

/* The exact least-traffic search of the bound's clusters, on a graph
 * large enough for its state table to grow. */
static fp_status path_least_traffic(const void *ctx, answer *a) {
  const fp_graph *g = ctx;
  solver_lt_result r;
  fp_status st =
      solver_least_traffic(g, fp_graph_max_fusion_size(g), 100000000,
                           fp_clock_now() + 60, NULL, NULL, &r, &a->err);
  if (st == FP_OK && !r.solved)
    return FP_EINTERNAL; /* the budget is ample: never expected */
  a->n = 1;
  a->m[0].traffic_bytes = r.traffic;
  return st;
}

/* The exact search of auto on small graphs (solver_exact_traffic: its
 * guide, then the search with peaks under the eager peak), below the
 * traffic of the eager plan + 1, on a graph large enough for its tables
 * to grow. */
static fp_status path_exact_traffic(const void *ctx, answer *a) {
  const fp_graph *g = ctx;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = 0;
  fp_plan *p = fp_plan_create();
  if (!p)
    return FP_ENOMEM;
  solver_lt_result r;
  uint64_t lb = 0;
  fp_status st =
      solver_exact_traffic(g, &prm, UINT64_MAX, 60, p, &r, &lb, &a->err);
  if (st == FP_OK && !(r.solved && r.found))
    st = FP_EINTERNAL; /* the budget is ample: never expected */
  a->n = 1;
  a->m[0].traffic_bytes = r.traffic;
  a->m[0].peak_bytes = r.peak;
  fp_plan_destroy(p);
  return st;
}

/* The traffic bound with 3-node clusters, whose moves between clusters
 * (solver/bound/cluster_merge.c) raise it on the fixture of oom_cluster_moves.
 */
static fp_status path_cluster_moves(const void *ctx, answer *a) {
  const fp_graph *g = ctx;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  double b = 0;
  int32_t size = 3;
  solver_test_cluster_sizes(&size, 1);
  fp_status st = fp_lower_bound(g, &prm, 60, &b, &a->err);
  solver_test_cluster_sizes(NULL, 0);
  a->n = 1;
  a->m[0].traffic_bytes = (uint64_t)b;
  return st;
}

/* The step bound (solver_step_bound, weight 1, the eager peak) at the
 * node of ctx, a step_case: on a graph with in-place pairs, the credit
 * of bound.c comes on top of the cluster searches. */
typedef struct step_case {
  const fp_graph *g;
  int32_t x;
} step_case;

static fp_status path_step_bound(const void *ctx, answer *a) {
  const step_case *c = ctx;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  double b = 0;
  fp_status st =
      solver_step_bound(c->g, &prm, c->x, 1, INFINITY, 60, &b, &a->err);
  a->n = 1;
  a->m[0].traffic_bytes = (uint64_t)b;
  return st;
}

/* The fixture: a random 6-node graph, its JSON, a legal plan's. */
static fixture make_fixture(fp_graph **g, char **gj, char **pj) {
  fp_error err;
  fp_plan *p = fp_plan_create();
  fp_metrics m;
  tu_rng r = {15};
  *g = tu_random_graph(&r, 6, 6);
  fp_fusion_params fus;
  fp_fusion_params_init(&fus, FP_METHOD_GREEDY);
  ck_assert(fp_fuse(*g, &fus, p, &err) == FP_OK);
  ck_assert(fp_plan_eval(*g, p, &m, NULL, &err) == FP_OK);
  *gj = fp_graph_to_json(*g, 0, &err);
  *pj = fp_plan_to_json(p, *g, &m, 0, &err);
  ck_assert(*gj && *pj);
  fp_plan_destroy(p);
  fixture f = {*g, *gj, *pj, NULL};
  return f;
}

START_TEST(oom_load_eval) {
  fp_graph *g;
  char *gj, *pj;
  fixture f = make_fixture(&g, &gj, &pj);
  sweep("load + eval", path_load, &f);
  free(gj), free(pj);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(oom_planners) {
  fp_graph *g;
  char *gj, *pj;
  fixture f = make_fixture(&g, &gj, &pj);
  for (int32_t i = 0; i < fp_planner_count(); i++) {
    f.pl = fp_planner_at(i);
    sweep(f.pl->name, path_planner, &f);
  }
  free(gj), free(pj);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(oom_pareto) {
  fp_graph *g;
  char *gj, *pj;
  fixture f = make_fixture(&g, &gj, &pj);
  f.pl = fp_planner_find("ilp");
  sweep("pareto", path_pareto, &f);
  free(gj), free(pj);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(oom_least_traffic) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 20, 1);
  sweep("least traffic", path_least_traffic, g);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(oom_exact_traffic) {
  fp_graph *g = tu_generated(FP_GEN_RANDOM, 14, 1);
  sweep("exact traffic", path_exact_traffic, g);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(oom_cluster_moves) {
  tu_rng r = {4121};
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  int32_t size = 3;
  for (int i = 0; i < 200; i++) { /* the first graph the moves raise */
    fp_graph *g = tu_random_graph(&r, 8, 10);
    fp_error err;
    double with, without;
    solver_test_cluster_sizes(&size, 1);
    solver_test_cluster_merge(0);
    ck_assert(fp_lower_bound(g, &prm, 60, &without, &err) == FP_OK);
    solver_test_cluster_merge(1);
    ck_assert(fp_lower_bound(g, &prm, 60, &with, &err) == FP_OK);
    solver_test_cluster_sizes(NULL, 0);
    if (with > without) {
      sweep("cluster moves", path_cluster_moves, g);
      fp_graph_destroy(g);
      return;
    }
    fp_graph_destroy(g);
  }
  ck_abort_msg("no graph where the moves raise the bound");
}
END_TEST

START_TEST(oom_step_bound) {
  tu_rng r = {4122};
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  for (int i = 0; i < 400; i++) { /* the first node the bound prices */
    fp_graph *g = tu_random_graph(&r, 6, 10);
    for (int32_t x = 0;
         fp_graph_inplace_count(g) > 0 && x < fp_graph_node_count(g); x++) {
      fp_error err;
      double b = 0;
      ck_assert(solver_step_bound(g, &prm, x, 1, INFINITY, 60, &b, &err) ==
                FP_OK);
      if (b > 0) {
        step_case c = {g, x};
        sweep("step bound", path_step_bound, &c);
        fp_graph_destroy(g);
        return;
      }
    }
    fp_graph_destroy(g);
  }
  ck_abort_msg("no graph with in-place pairs where the step bound says some");
}
END_TEST

START_TEST(oom_run) {
  fp_graph *g;
  char *gj, *pj;
  fixture f = make_fixture(&g, &gj, &pj);
  sweep("run", path_run, &f);
  free(gj), free(pj);
  fp_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("oom");
  TCase *tc = tcase_create("every allocation fails in turn");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, oom_load_eval);
  tcase_add_test(tc, oom_planners);
  tcase_add_test(tc, oom_pareto);
  tcase_add_test(tc, oom_run);
  tcase_add_test(tc, oom_least_traffic);
  tcase_add_test(tc, oom_cluster_moves);
  tcase_add_test(tc, oom_exact_traffic);
  tcase_add_test(tc, oom_step_bound);
  suite_add_tcase(s, tc);
  return tu_run(s);
}
