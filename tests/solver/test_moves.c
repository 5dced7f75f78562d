/*
 * test_moves.c -- the moves of auto's search (solver/search/moves.c):
 * the candidates are every compatible pair of nodes sharing a buffer,
 * once each; a pass keeps only legal plans within the limits that beat
 * the plan before (random graphs, every objective, with and without a
 * peak limit); a late reader of an early tensor joins the early group
 * that reads it, exactly when that meets the peak limit; an expired
 * deadline tries nothing and the next pass resumes there; a whole group
 * joins another when no single node pays for moving alone; the readers of
 * a tensor are regrouped when no move of one node or group pays; the peak
 * pass moves a group past the peak step (a float32 cast of a gradient made
 * early, run just before its reader) or back before it, keeps every group
 * and the traffic, and only lowers the peak.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/generate.h"
#include "model/util.h"
#include "solver/common/services.h"
#include "solver/search/moves.h"
#include "tests/testutil.h"

/* Whether (y, u) is listed. */
static bool listed(const solver_moves *mv, int32_t y, int32_t u) {
  for (int32_t i = 0; i < mv->count; i++)
    if (mv->node[i] == y && mv->target[i] == u)
      return true;
  return false;
}

/* Every listed pair is compatible and listed once; every compatible pair
 * of a buffer's writer and readers is listed when the buffer has few
 * enough of them to be paired whole. */
static void check_candidates(const fp_graph *g) {
  solver_moves mv;
  ck_assert_int_eq(solver_moves_make(g, &mv), 0);
  for (int32_t i = 0; i < mv.count; i++) {
    ck_assert_int_ne(mv.node[i], mv.target[i]);
    ck_assert(fp_graph_compatible(g, mv.node[i], mv.target[i]));
    for (int32_t j = 0; j < i; j++)
      ck_assert(mv.node[j] != mv.node[i] || mv.target[j] != mv.target[i]);
  }
  for (int32_t b = 0; b < fp_graph_buffer_count(g); b++) {
    const fp_buffer *buf = fp_graph_buffer(g, b);
    if (buf->n_readers > 8)
      continue;
    for (int32_t i = -1; i < buf->n_readers; i++)
      for (int32_t j = -1; j < buf->n_readers; j++) {
        int32_t y = i < 0 ? buf->writer : buf->readers[i];
        int32_t u = j < 0 ? buf->writer : buf->readers[j];
        if (y >= 0 && u >= 0 && y != u && fp_graph_compatible(g, y, u))
          ck_assert_msg(listed(&mv, y, u), "buffer %d: pair %d %d missing", b,
                        y, u);
      }
  }
  solver_moves_free(&mv);
  solver_moves_free(&mv); /* twice is safe */
}

START_TEST(candidates_complete_and_unique) {
  tu_rng r = {(uint64_t)_i * 7919 + 3};
  fp_graph *g = tu_random_graph(&r, 3, 14);
  check_candidates(g);
  fp_graph_destroy(g);
}
END_TEST

START_TEST(candidates_of_generated_graphs) {
  fp_graph *g =
      tu_generated(_i % FP_GEN_FAMILY_COUNT_, 60 + 20 * _i, (uint64_t)_i + 1);
  check_candidates(g);
  fp_graph_destroy(g);
}
END_TEST

/* One pass from plan `start` on g under prm; the plan it leaves into
 * *out (caller destroys), its figures into *m.  Returns the moves kept. */
static int32_t run_pass(const fp_graph *g, const fp_ilp_params *prm,
                        const fp_plan *start, fp_plan **out, fp_metrics *m) {
  uint64_t eager_peak;
  fp_error err;
  ck_assert_int_eq(solver_eager_peak(g, &eager_peak, &err), FP_OK);
  fp_plan *cur = fp_plan_create(), *scratch = fp_plan_create();
  ck_assert_int_eq(fp_plan_copy(cur, start, &err), FP_OK);
  *m = tu_eval(g, cur);
  int32_t *step = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *step);
  solver_moves mv;
  ck_assert_int_eq(solver_moves_make(g, &mv), 0);
  solver_move_state S = {
      g, prm, fp_graph_max_fusion_size(g), eager_peak, &cur, &scratch, m, step};
  int32_t moved = -1;
  bool whole = false;
  ck_assert_int_eq(solver_move_pass(&S, &mv, HUGE_VAL, &moved, &whole, &err),
                   FP_OK);
  ck_assert(whole);
  /* the steps kept are the plan's */
  int32_t *want = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *want);
  tu_plan_steps(cur, want);
  ck_assert(memcmp(want, step, (size_t)fp_graph_node_count(g) * sizeof *step) ==
            0);
  free(want);
  free(step);
  solver_moves_free(&mv);
  fp_plan_destroy(scratch);
  *out = cur;
  return moved;
}

/* Legal, within the limits, the evaluator's figures, and better than the
 * start exactly when something moved; on random graphs, every objective,
 * with the eager-peak limit and without. */
START_TEST(pass_keeps_legal_better_plans) {
  static const fp_objective objs[] = {FP_OBJECTIVE_TRAFFIC, FP_OBJECTIVE_PEAK,
                                      FP_OBJECTIVE_WEIGHTED};
  tu_rng r = {(uint64_t)_i * 104729 + 11};
  fp_graph *g = tu_random_graph(&r, 4, 12);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.objective = objs[_i % 3];
  prm.lambda = 0.5;
  prm.limits.peak = _i % 2 ? 0 : FP_NO_LIMIT;
  fp_plan *start = fp_plan_create(), *out = NULL;
  fp_error err;
  ck_assert_int_eq(fp_plan_make_eager(start, g, &err), FP_OK);
  fp_metrics sm = tu_eval(g, start), m;
  uint64_t eager_peak = sm.peak_bytes;
  int32_t moved = run_pass(g, &prm, start, &out, &m);
  fp_metrics check = tu_eval(g, out); /* fails the test when illegal */
  ck_assert_uint_eq(check.traffic_bytes, m.traffic_bytes);
  ck_assert_uint_eq(check.peak_bytes, m.peak_bytes);
  ck_assert_int_eq(check.kernels, m.kernels);
  ck_assert(fp_meets_limits(&prm, &m, eager_peak));
  if (moved > 0)
    ck_assert(solver_better(&prm, &m, &sm));
  else
    ck_assert_int_eq(fp_plan_group_count(out), fp_plan_group_count(start));
  ck_assert(!solver_better(&prm, &sm, &m)); /* never worse */
  fp_plan_destroy(start);
  fp_plan_destroy(out);
  fp_graph_destroy(g);
}
END_TEST

/* x (4000 bytes) is read by a, first, and by z, last, with two extern
 * kernels between them: no window of neighbouring steps holds a and z,
 * one move does.  z's output w is read by the last kernel e, so running
 * z early keeps w live across b and c, next to the large t2. */
static const char far_reader_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'far',"
    " 'buffers': [{'name': 'x', 'bytes': 4000, 'input': true},"
    "  {'name': 't1', 'bytes': 400}, {'name': 't2', 'bytes': 2000},"
    "  {'name': 't3', 'bytes': 400}, {'name': 'w', 'bytes': 4000},"
    "  {'name': 'y', 'bytes': 400}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['t1']},"
    "  {'name': 'b', 'kind': 'extern', 'reads': ['t1'], 'writes': ['t2']},"
    "  {'name': 'c', 'kind': 'extern', 'reads': ['t2'], 'writes': ['t3']},"
    "  {'name': 'z', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['w']},"
    "  {'name': 'e', 'kind': 'extern', 'reads': ['t3', 'w'],"
    "   'writes': ['y']}],"
    " 'outputs': ['y']}";

START_TEST(far_reader_joins_exactly_within_limit) {
  fp_graph *g = tu_graph(far_reader_json);
  fp_plan *start = tu_plan(g, "a | b | c | z | e");
  fp_plan *moved = tu_plan(g, "a z | b | c | e");
  fp_metrics sm = tu_eval(g, start), mm = tu_eval(g, moved), m;
  ck_assert_uint_eq(mm.traffic_bytes, sm.traffic_bytes - 4000);
  ck_assert_uint_gt(mm.peak_bytes, sm.peak_bytes); /* w lives longer */
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  fp_plan *out = NULL;
  ck_assert_int_eq(run_pass(g, &prm, start, &out, &m), 1);
  ck_assert_uint_eq(m.traffic_bytes, mm.traffic_bytes);
  int32_t step[5];
  tu_plan_steps(out, step);
  ck_assert_int_eq(step[fp_graph_find_node(g, "z")],
                   step[fp_graph_find_node(g, "a")]);
  fp_plan_destroy(out);
  /* Under a limit the move exceeds, nothing moves; at its peak, it does. */
  prm.limits.peak = mm.peak_bytes - 1;
  ck_assert_int_eq(run_pass(g, &prm, start, &out, &m), 0);
  ck_assert_uint_eq(m.traffic_bytes, sm.traffic_bytes);
  fp_plan_destroy(out);
  prm.limits.peak = mm.peak_bytes;
  ck_assert_int_eq(run_pass(g, &prm, start, &out, &m), 1);
  fp_plan_destroy(out);
  fp_plan_destroy(start);
  fp_plan_destroy(moved);
  fp_graph_destroy(g);
}
END_TEST

/* Two kernels read the same 4000-byte x, each fused with the reader of
 * its own 4000-byte intermediate: moving any one node into the other
 * kernel writes and reads an intermediate again (worse), moving a whole
 * kernel saves one read of x. */
static const char two_readers_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'two',"
    " 'buffers': [{'name': 'x', 'bytes': 4000, 'input': true},"
    "  {'name': 't1', 'bytes': 4000}, {'name': 'o1', 'bytes': 400},"
    "  {'name': 't2', 'bytes': 4000}, {'name': 'o2', 'bytes': 400}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['t1']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['t1'],"
    "   'writes': ['o1']},"
    "  {'name': 'c', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['t2']},"
    "  {'name': 'd', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['t2'],"
    "   'writes': ['o2']}],"
    " 'outputs': ['o1', 'o2']}";

START_TEST(whole_group_joins_when_no_node_alone_pays) {
  fp_graph *g = tu_graph(two_readers_json);
  fp_plan *start = tu_plan(g, "a b | c d");
  fp_metrics sm = tu_eval(g, start), m;
  static const char *const singles[] = {"a b c | d", "c | a b d", "a c d | b",
                                        "a | b c d"};
  for (int i = 0; i < 4; i++) { /* every single-node move is worse */
    fp_plan *q = tu_plan(g, singles[i]);
    ck_assert_uint_gt(tu_eval(g, q).traffic_bytes, sm.traffic_bytes);
    fp_plan_destroy(q);
  }
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  fp_plan *out = NULL;
  ck_assert_int_eq(run_pass(g, &prm, start, &out, &m), 1);
  ck_assert_uint_eq(m.traffic_bytes, sm.traffic_bytes - 4000);
  ck_assert_int_eq(fp_plan_group_count(out), 1);
  fp_plan_destroy(out);
  fp_plan_destroy(start);
  fp_graph_destroy(g);
}
END_TEST

/* Six readers of x, each compatible only with the readers at most two
 * away (r0 with r1 and r2, ...), in three groups of two: no single move
 * or whole-group move saves a read of x, regrouping the readers into two
 * groups of three does (gpt2-triton.fwd's twelve readers, in small). */
static const char six_readers_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'six',"
    " 'buffers': [{'name': 'x', 'bytes': 4000, 'input': true},"
    "  {'name': 'o0', 'bytes': 400}, {'name': 'o1', 'bytes': 400},"
    "  {'name': 'o2', 'bytes': 400}, {'name': 'o3', 'bytes': 400},"
    "  {'name': 'o4', 'bytes': 400}, {'name': 'o5', 'bytes': 400}],"
    " 'nodes': ["
    "  {'name': 'r0', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['o0']},"
    "  {'name': 'r1', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['o1']},"
    "  {'name': 'r2', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['o2']},"
    "  {'name': 'r3', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['o3']},"
    "  {'name': 'r4', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['o4']},"
    "  {'name': 'r5', 'kind': 'pointwise', 'iter': [1000, 1], 'reads': ['x'],"
    "   'writes': ['o5']}],"
    " 'unfusible': [['r0', 'r3'], ['r0', 'r4'], ['r0', 'r5'], ['r1', 'r4'],"
    "  ['r1', 'r5'], ['r2', 'r5']],"
    " 'outputs': ['o0', 'o1', 'o2', 'o3', 'o4', 'o5']}";

START_TEST(readers_regroup_when_no_move_pays) {
  fp_graph *g = tu_graph(six_readers_json);
  fp_plan *start = tu_plan(g, "r0 r1 | r2 r3 | r4 r5");
  fp_metrics sm = tu_eval(g, start), m;
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  fp_plan *out = NULL;
  ck_assert_int_eq(run_pass(g, &prm, start, &out, &m), 1);
  ck_assert_uint_eq(m.traffic_bytes, sm.traffic_bytes - 4000);
  ck_assert_int_eq(fp_plan_group_count(out), 2);
  fp_metrics check = tu_eval(g, out); /* legal, the figures kept */
  ck_assert_uint_eq(check.traffic_bytes, m.traffic_bytes);
  fp_plan_destroy(out);
  fp_plan_destroy(start);
  fp_graph_destroy(g);
}
END_TEST

/* A deadline already past tries nothing and leaves the next start where
 * it was; a whole pass comes back to it. */
START_TEST(deadline_and_resume) {
  fp_graph *g = tu_generated(FP_GEN_TRANSFORMER, 80, 3);
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  uint64_t eager_peak;
  fp_error err;
  ck_assert_int_eq(solver_eager_peak(g, &eager_peak, &err), FP_OK);
  fp_plan *cur = fp_plan_create(), *scratch = fp_plan_create();
  ck_assert_int_eq(fp_plan_make_eager(cur, g, &err), FP_OK);
  fp_metrics m = tu_eval(g, cur), before = m;
  int32_t *step = malloc(((size_t)fp_graph_node_count(g) + 1) * sizeof *step);
  solver_moves mv;
  ck_assert_int_eq(solver_moves_make(g, &mv), 0);
  ck_assert_int_gt(mv.count, 2);
  mv.next = 2;
  solver_move_state S = {g,          &prm, fp_graph_max_fusion_size(g),
                         eager_peak, &cur, &scratch,
                         &m,         step};
  int32_t moved = -1;
  bool whole = true;
  ck_assert_int_eq(
      solver_move_pass(&S, &mv, fp_clock_now() - 1, &moved, &whole, &err),
      FP_OK);
  ck_assert_int_eq(moved, 0);
  ck_assert(!whole);
  ck_assert_int_eq(mv.next, 2);
  ck_assert_uint_eq(m.traffic_bytes, before.traffic_bytes);
  ck_assert_int_eq(solver_move_pass(&S, &mv, HUGE_VAL, &moved, &whole, &err),
                   FP_OK);
  ck_assert(whole);
  ck_assert_int_eq(mv.next, 2);
  ck_assert_int_gt(moved, 0); /* the eager plan of a transformer fuses */
  ck_assert_uint_lt(m.traffic_bytes, before.traffic_bytes);
  solver_moves_free(&mv);
  free(step);
  fp_plan_destroy(cur);
  fp_plan_destroy(scratch);
  fp_graph_destroy(g);
}
END_TEST

/* solver_peak_pass from `start` on g (traffic objective, no limit): the
 * plan it leaves into *out (caller destroys), its figures into *m;
 * returns the moves kept.  The steps kept are the plan's. */
static int32_t run_peak_pass(const fp_graph *g, const fp_plan *start,
                             double deadline, fp_plan **out, fp_metrics *m) {
  fp_ilp_params prm;
  fp_ilp_params_init(&prm);
  prm.limits.peak = FP_NO_LIMIT;
  fp_error err;
  fp_plan *cur = fp_plan_create(), *scratch = fp_plan_create();
  ck_assert_int_eq(fp_plan_copy(cur, start, &err), FP_OK);
  *m = tu_eval(g, cur);
  int32_t n = fp_graph_node_count(g), moved = -1;
  int32_t *step = malloc(((size_t)n + 1) * sizeof *step);
  int32_t *want = malloc(((size_t)n + 1) * sizeof *want);
  solver_move_state S = {
      g, &prm, fp_graph_max_fusion_size(g), 0, &cur, &scratch, m, step};
  ck_assert_int_eq(solver_peak_pass(&S, deadline, &moved, &err), FP_OK);
  tu_plan_steps(cur, want);
  ck_assert(memcmp(want, step, (size_t)n * sizeof *step) == 0);
  free(want);
  free(step);
  fp_plan_destroy(scratch);
  *out = cur;
  return moved;
}

/* A bfloat16 gradient s cast early to float32 f (c), then t copied to u
 * (d) while f waits for the norm n: run just before n, the cast holds s
 * (100 bytes) at d's step instead of f (200). */
static const char late_cast_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'cast',"
    " 'buffers': [{'name': 'x', 'bytes': 10, 'input': true},"
    "  {'name': 's', 'bytes': 100}, {'name': 'f', 'bytes': 200},"
    "  {'name': 't', 'bytes': 200}, {'name': 'u', 'bytes': 200},"
    "  {'name': 'y', 'bytes': 10}],"
    " 'nodes': ["
    "  {'name': 'a', 'kind': 'pointwise', 'iter': [50, 1], 'reads': ['x'],"
    "   'writes': ['s']},"
    "  {'name': 'c', 'kind': 'pointwise', 'iter': [50, 1], 'reads': ['s'],"
    "   'writes': ['f']},"
    "  {'name': 'b', 'kind': 'pointwise', 'iter': [50, 1], 'reads': ['x'],"
    "   'writes': ['t']},"
    "  {'name': 'd', 'kind': 'pointwise', 'iter': [50, 1], 'reads': ['t'],"
    "   'writes': ['u']},"
    "  {'name': 'n', 'kind': 'extern', 'reads': ['f', 'u'],"
    "   'writes': ['y']}],"
    " 'outputs': ['y']}";

/* p's big output B is last read by z after the peak (r): z hoisted to
 * just after p frees B before it. */
static const char early_reader_json[] =
    "{'format': 'fuseplan.graph', 'version': 1, 'name': 'hoist',"
    " 'buffers': [{'name': 'x', 'bytes': 10, 'input': true},"
    "  {'name': 'B', 'bytes': 300}, {'name': 'C', 'bytes': 100},"
    "  {'name': 'D', 'bytes': 100}, {'name': 'E', 'bytes': 100},"
    "  {'name': 'o', 'bytes': 10}],"
    " 'nodes': ["
    "  {'name': 'p', 'kind': 'pointwise', 'iter': [75, 1], 'reads': ['x'],"
    "   'writes': ['B']},"
    "  {'name': 'q', 'kind': 'reduction', 'iter': [25, 3], 'reads': ['B'],"
    "   'writes': ['C']},"
    "  {'name': 'r', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['C'],"
    "   'writes': ['D']},"
    "  {'name': 's', 'kind': 'pointwise', 'iter': [25, 1], 'reads': ['D'],"
    "   'writes': ['E']},"
    "  {'name': 'z', 'kind': 'reduction', 'iter': [3, 25], 'reads': ['B'],"
    "   'writes': ['o']}],"
    " 'outputs': ['E', 'o']}";

START_TEST(peak_pass_sinks_and_hoists) {
  static const char *const graphs[] = {late_cast_json, early_reader_json};
  static const char *const starts[] = {"a | c | b | d | n",
                                       "p | q | r | s | z"};
  static const char *const ends[] = {"a | b | d | c | n", "p | z | q | r | s"};
  for (int i = 0; i < 2; i++) {
    fp_graph *g = tu_graph(graphs[i]);
    fp_plan *start = tu_plan(g, starts[i]), *end = tu_plan(g, ends[i]), *out;
    fp_metrics sm = tu_eval(g, start), em = tu_eval(g, end), m;
    ck_assert_uint_lt(em.peak_bytes, sm.peak_bytes);
    ck_assert_int_eq(run_peak_pass(g, start, HUGE_VAL, &out, &m), 1);
    ck_assert_uint_eq(m.peak_bytes, em.peak_bytes);
    ck_assert_uint_eq(m.traffic_bytes, sm.traffic_bytes);
    int32_t got[5], want[5];
    tu_plan_steps(out, got);
    tu_plan_steps(end, want);
    ck_assert(memcmp(got, want, sizeof got) == 0);
    fp_plan_destroy(out);
    /* a deadline already past tries nothing */
    ck_assert_int_eq(run_peak_pass(g, start, fp_clock_now() - 1, &out, &m), 0);
    ck_assert_uint_eq(m.peak_bytes, sm.peak_bytes);
    fp_plan_destroy(out);
    fp_plan_destroy(start);
    fp_plan_destroy(end);
    fp_graph_destroy(g);
  }
}
END_TEST

/* Whether plans p and q hold the same groups (in any order). */
static bool same_groups(const fp_graph *g, const fp_plan *p, const fp_plan *q) {
  int32_t n = fp_graph_node_count(g);
  int32_t *sp = malloc(((size_t)n + 1) * sizeof *sp);
  int32_t *sq = malloc(((size_t)n + 1) * sizeof *sq);
  tu_plan_steps(p, sp);
  tu_plan_steps(q, sq);
  bool same = fp_plan_group_count(p) == fp_plan_group_count(q);
  for (int32_t u = 0; same && u < n; u++)
    for (int32_t v = 0; same && v < n; v++)
      same = (sp[u] == sp[v]) == (sq[u] == sq[v]);
  free(sp);
  free(sq);
  return same;
}

/* On random graphs from the eager plan and from a pass of fusing moves:
 * legal, the same groups and traffic, a peak never higher, lower exactly
 * when something moved; some graph gains. */
START_TEST(peak_pass_keeps_groups_lowers_peak) {
  int gained = 0;
  for (int k = 0; k < 200; k++) {
    tu_rng r = {(uint64_t)k * 7727 + 5};
    fp_graph *g =
        k % 2 ? tu_random_deep_graph(&r, 5, 14) : tu_random_graph(&r, 5, 14);
    fp_ilp_params prm;
    fp_ilp_params_init(&prm);
    prm.limits.peak = FP_NO_LIMIT;
    fp_plan *eager = fp_plan_create(), *fused = NULL, *out = NULL;
    fp_error err;
    fp_metrics fm, m;
    ck_assert_int_eq(fp_plan_make_eager(eager, g, &err), FP_OK);
    run_pass(g, &prm, eager, &fused, &fm);
    const fp_plan *starts[] = {eager, fused};
    for (int s = 0; s < 2; s++) {
      fp_metrics sm = tu_eval(g, starts[s]);
      int32_t moved = run_peak_pass(g, starts[s], HUGE_VAL, &out, &m);
      fp_metrics check = tu_eval(g, out); /* fails the test when illegal */
      ck_assert_uint_eq(check.peak_bytes, m.peak_bytes);
      ck_assert_uint_eq(m.traffic_bytes, sm.traffic_bytes);
      ck_assert(same_groups(g, starts[s], out));
      ck_assert_uint_le(m.peak_bytes, sm.peak_bytes);
      ck_assert(moved > 0 ? m.peak_bytes < sm.peak_bytes
                          : m.peak_bytes == sm.peak_bytes);
      gained += moved > 0;
      fp_plan_destroy(out);
    }
    fp_plan_destroy(eager);
    fp_plan_destroy(fused);
    fp_graph_destroy(g);
  }
  ck_assert_int_gt(gained, 0);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("solver/moves");
  TCase *tc = tcase_create("moves");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, candidates_complete_and_unique, 0, 200);
  tcase_add_loop_test(tc, candidates_of_generated_graphs, 0, 8);
  tcase_add_loop_test(tc, pass_keeps_legal_better_plans, 0, 300);
  tcase_add_test(tc, far_reader_joins_exactly_within_limit);
  tcase_add_test(tc, whole_group_joins_when_no_node_alone_pays);
  tcase_add_test(tc, readers_regroup_when_no_move_pays);
  tcase_add_test(tc, deadline_and_resume);
  tcase_add_test(tc, peak_pass_sinks_and_hoists);
  tcase_add_test(tc, peak_pass_keeps_groups_lowers_peak);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tu_run(suite());
}
