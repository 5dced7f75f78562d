/*
 * bound.c -- a lower bound on the objective, valid for every legal plan,
 * for graphs too large for one exact model (docs/solver.md, "Bounds").
 *
 * Traffic is a sum over buffers: a buffer's share (its write when it is
 * materialized, plus one read per group that reads it from memory)
 * depends only on how its writer and readers, N(b), are grouped.  Split
 * the buffers into clusters S; the share of S depends only on the
 * grouping of N(S).  Restricting any legal plan to N(S) gives a legal
 * plan of the *cluster graph*: the nodes N(S), the buffers of S with
 * their bytes, and every other buffer that links two nodes of N(S) with
 * zero bytes (so the dependency order among them is kept, at no cost).
 * Its traffic is exactly S's share.  Hence min over cluster-graph plans
 * <= S's share in every plan, and summing over the clusters gives a
 * bound on the whole plan's traffic.  Each cluster's minimum is found
 * exactly by the search of least_traffic.c, or, when that runs out of
 * budget, bounded from below by a small exact ILP (its MIP bound, or its
 * optimum), or, when there is no time for either, by the structural bound
 * of fp_graph_bounds, which also sums over buffers.
 *
 * The cluster ILPs are built here (ilp_model.c, without cluster rows) and
 * run through the MIP core (mip.c), never through fp_ilp_solve: ilp.c
 * calls this file for its cluster cuts, so calling back would be a
 * circle.  Calls: least_traffic.c, ilp_model.c, mip.c, window.c,
 * services.c, params.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/args.h"
#include "model/peak_bound.h"
#include "model/util.h"
#include "solver/bound/bound.h"
#include "solver/bound/cluster_graph.h"
#include "solver/bound/cluster_merge.h"
#include "solver/bound/least_traffic.h"
#include "solver/bound/partition.h"
#include "solver/common/services.h"
#include "solver/common/solver_test.h"
#include "solver/mip/ilp_model.h"
#include "solver/mip/mip.h"
#include "solver/window/window.h"

/* Cluster sizes (nodes of N(S)) tried in turn, each a full partition of
 * the buffers; the best sum is the bound.  Each cluster's least traffic
 * is found exactly by the search of least_traffic.c, which takes
 * milliseconds up to 16 nodes and about a second for the hardest
 * 24-node clusters of a generated random DAG (3,000 nodes: 325 clusters,
 * 2.2e8 groups in all, 6.4 s); larger clusters see more of the
 * interactions between buffers (generated random 3,000 nodes: 1.5202e9
 * at 8 nodes, 1.5245e9 at 12, 1.5308e9 at 16, 1.5328e9 at 20, 1.5350e9 at
 * 24), so the cheap sizes come first and the deadline cuts the dear
 * ones.  The moves between clusters (cluster_merge.h) run after the
 * first MERGE_AFTER kinds, before the dearer ones: on generated random
 * DAGs they raise the 16-node partition far above the 20- and 24-node
 * ones (10,000 nodes: 4.6909e9 at 16, 4.7162e9 at 24, 4.7490e9 after the
 * moves), while the 24-node partition alone took 21.6 s of a 15 s
 * share; where the moves gain nothing they end in about a second. */
typedef struct partition_kind {
  int32_t size;
  bool ordered; /* consecutive pieces (partition.h) */
} partition_kind;
/* Partitions into consecutive pieces bound more on some small graphs (a
 * 36-node transformer: its optimum at 12 nodes, against 6 KB less for
 * every linked size). */
#define N_KINDS 7
static const partition_kind default_kinds[N_KINDS] = {
    {8, false}, {12, false}, {16, false}, {12, true},
    {16, true}, {20, false}, {24, false}};
static partition_kind kinds[N_KINDS] = {{8, false}, {12, false}, {16, false},
                                        {12, true}, {16, true},  {20, false},
                                        {24, false}};
static int n_kinds = N_KINDS;
#define MERGE_AFTER 3

void solver_test_cluster_sizes(const int32_t *sizes, int n) {
  n_kinds = n > 0 && n <= N_KINDS ? n : N_KINDS;
  for (int i = 0; i < n_kinds; i++)
    kinds[i] = n > 0 ? (partition_kind){sizes[i], false} : default_kinds[i];
}
static bool cluster_search = true;

void solver_test_cluster_search(int on) {
  cluster_search = on != 0;
}
static bool cluster_merge = true;

void solver_test_cluster_merge(int on) {
  cluster_merge = on != 0;
}

/* Groups the exact search of a cluster may examine (least_traffic.h);
 * about 0.6 s on this project's machine.  Every 24-node cluster of the
 * generated random 3,000-node graph needs at most 1.95e7. */
#define CLUSTER_SEARCH_BUDGET 30000000
/* Branch-and-bound nodes per cluster ILP, which runs only when the exact
 * search ran out of budget. */
#define CLUSTER_NODE_LIMIT 50
/* Wall-clock cap per cluster, seconds: the exact search, then the ILP
 * in what is left. */
#define CLUSTER_TIME 2.0

/* What a cluster ILP proved on the least traffic of its cluster graph,
 * into *bound (bytes, -1 when nothing): the optimum when GLPK proved the
 * MIP's plan optimal, else the smaller of the best plan's traffic (the
 * MIP's or the warm start's) and the bound of ilp_bound_value over the
 * structural one: the bound fp_ilp_solve would record for the same
 * model and run.  FP_OK (also when the MIP's solution is unusable: a model bug
 * loses only this bound), or FP_ENOMEM. */
static fp_status ilp_outcome(const ilp_model *M, const mip_result *res,
                             const fp_plan *warm, const fp_metrics *wm,
                             double *bound, fp_error *err) {
  fp_plan *q = fp_plan_create();
  fp_metrics qm;
  *bound = -1;
  if (!q)
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  fp_status st = ilp_solution_plan(M, res->status, q, &qm, err);
  fp_plan_destroy(q);
  if (st != FP_OK && st != FP_EINFEASIBLE)
    return FP_OK;
  bool mip = st == FP_OK && (!warm || fp_objective_value(M->prm, &qm) <=
                                          fp_objective_value(M->prm, wm));
  if (!mip && !warm)
    return FP_OK; /* no plan at all */
  double obj = fp_objective_value(M->prm, mip ? &qm : wm);
  if (mip && res->status == GLP_OPT) {
    *bound = obj;
    return FP_OK;
  }
  uint64_t tb;
  double b = fp_graph_traffic_bound(M->g, &tb, NULL) == FP_OK ? (double)tb : 0;
  b = ilp_bound_value(M, res->bound, b);
  *bound = b < obj ? b : obj;
  return FP_OK;
}

/* The cluster ILP of cluster graph sg: the exact model without cluster
 * rows, objective traffic, no limits (a bound without them is still
 * one), warm-started from the best heuristic plan, at most
 * CLUSTER_NODE_LIMIT nodes and time_s seconds (GLPK's own limits end 5%
 * earlier; no GLPK run when under 10% is left after building).  Its
 * bound in bytes into *bound (-1: none; see ilp_outcome).  FP_OK or
 * FP_ENOMEM. */
static fp_status cluster_ilp(const fp_graph *sg,
                             const volatile sig_atomic_t *cancel, double time_s,
                             double *bound, fp_error *err) {
  double deadline = fp_clock_now() + time_s;
  fp_ilp_params p;
  fp_ilp_params_init(&p);
  p.objective = FP_OBJECTIVE_TRAFFIC;
  p.limits.peak = FP_NO_LIMIT;
  p.window = FP_ILP_WINDOW_EXACT;
  ilp_model M;
  memset(&M, 0, sizeof M);
  mip_result res = {0, MIP_BOUND_UNKNOWN, 0, false, false, false};
  double *x = NULL;
  fp_metrics wm;
  /* No peak limit: the eager peak, which stands for limit 0, is unused. */
  fp_plan *warm = NULL;
  fp_status st = solver_best_heuristic(sg, &p, 0, FP_NO_LIMIT, &warm, &wm, err);
  *bound = -1;
  if (st != FP_OK)
    goto fail;
  p.cancel = cancel;
  int built =
      ilp_build(&M, sg, &p, warm, FP_NO_LIMIT, FP_NO_LIMIT, NULL, deadline);
  if (built == ILP_BUILD_NOMEM) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory building the model");
    goto fail;
  }
  /* A model stopped, refused or lost to a GLPK error is not solved: the
   * warm start's figure is no bound, and ilp_outcome then gives none. */
  if (built == ILP_BUILD_OK && !M.infeasible &&
      fp_clock_now() <= deadline - 0.1 * time_s) {
    mip_params mp;
    mip_params_init(&mp);
    mp.deadline = deadline;
    mp.reserve_s = 0.05 * time_s;
    mp.cancel = cancel;
    mp.node_limit = CLUSTER_NODE_LIMIT;
    mp.warm_x = x = warm ? ilp_warm_columns(&M, warm) : NULL;
    mip_solve(&M.lp, &mp, &res);
  }
  st = ilp_outcome(&M, &res, warm, &wm, bound, err);
fail:
  ilp_free(&M);
  free(x);
  fp_plan_destroy(warm);
  return st;
}

/* A lower bound on the traffic share of cluster c, when there is time
 * and the cluster is small: its least traffic, from the exact search
 * (least_traffic.h), or when that runs out of budget the cluster ILP's
 * bound in the time left of the cluster's CLUSTER_TIME; else the
 * structural bound. */
static fp_status cluster_bound(cluster_build *B, const fp_ilp_params *prm,
                               double deadline, uint64_t *lb, fp_error *err) {
  fp_status st = fp_graph_traffic_bound(B->sg, lb, err);
  double now = fp_clock_now();
  if (st != FP_OK || B->count > B->size || deadline - now < 0.02 ||
      (prm->cancel && *prm->cancel))
    return st;
  double end = now + CLUSTER_TIME < deadline ? now + CLUSTER_TIME : deadline;
  solver_lt_result exact = {0};
  if (cluster_search)
    st = cluster_least_traffic(B->sg, fp_graph_max_fusion_size(B->sg),
                               CLUSTER_SEARCH_BUDGET, end, prm->cancel, NULL,
                               &exact, err);
  if (st != FP_OK || exact.solved) {
    *lb = exact.solved && exact.traffic > *lb ? exact.traffic : *lb;
    return st;
  }
  double b, left = end - fp_clock_now();
  if (left < 0.02)
    return FP_OK;
  st = cluster_ilp(B->sg, prm->cancel, left, &b, err);
  if (st == FP_OK && b > (double)*lb)
    *lb = (uint64_t)b; /* integral already (rounded up by ilp_bound_value) */
  return st;
}

/* The sum of the whole graph's per-buffer structural bounds over cluster
 * c's buffers: a bound on its share that costs nothing to add up. */
static uint64_t buffers_bound(const solver_clusters *C, int32_t c,
                              const uint64_t *per_buffer) {
  uint64_t s = 0;
  for (int32_t i = C->start[c]; i < C->start[c + 1]; i++)
    s += per_buffer[C->list[i]];
  return s;
}

/* The bound of cluster c (its buffers: bufs[0..n)) into *lb, 0 when
 * there is no time: see cluster_bound. */
static fp_status bound_one(cluster_build *B, const fp_ilp_params *prm,
                           int32_t c, const int32_t *bufs, int32_t n, int32_t k,
                           double deadline, uint64_t *lb, fp_error *err) {
  *lb = 0;
  if (fp_clock_now() >= deadline)
    return FP_OK;
  B->bufs = bufs;
  B->n_bufs = n;
  fp_status st = cluster_build_graph(B, c, k, err);
  if (st == FP_OK)
    st = cluster_bound(B, prm, deadline, lb, err);
  fp_graph_destroy(B->sg);
  B->sg = NULL;
  return st;
}

/* One partition of that kind (clusters of at most kind.size nodes), each with
 * its traffic bound, into *part; per_buffer: fp_graph_buffer_traffic_bounds of
 * g.  Past the deadline the clusters left keep the sum of their buffers'
 * structural bounds: building them all costs a few ms each on large
 * graphs.  FP_OK or FP_ENOMEM. */
static fp_status partition_bounds(const fp_graph *g, const fp_ilp_params *prm,
                                  partition_kind kind,
                                  const uint64_t *per_buffer, double deadline,
                                  solver_partition *part, fp_error *err) {
  solver_clusters C = {0};
  cluster_build B;
  fp_status st = FP_OK;
  int32_t k = fp_limits_fusion_size(&prm->limits, g);
  if (cluster_build_init(&B, g) != 0 ||
      solver_clusters_make(g, kind.size, kind.ordered, &C) != 0 ||
      !(part->lb = calloc((size_t)C.count + 1, sizeof *part->lb))) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  B.of = C.of;
  B.size = kind.size;
  for (int32_t c = 0; st == FP_OK && c < C.count; c++) {
    uint64_t base = buffers_bound(&C, c, per_buffer), lb = 0;
    st = bound_one(&B, prm, c, C.list + C.start[c], C.start[c + 1] - C.start[c],
                   k, deadline, &lb, err);
    part->lb[c] = lb > base ? lb : base;
    part->total += part->lb[c];
  }
  part->count = C.count;
  part->size = kind.size;
  part->ordered = kind.ordered;
  part->of = C.of; /* handed over */
  C.of = NULL;
fail:
  cluster_build_free(&B);
  solver_clusters_free(&C);
  return st;
}

void solver_cuts_free(solver_cuts *cuts) {
  for (int32_t i = 0; i < cuts->n; i++) {
    free(cuts->part[i].of);
    free(cuts->part[i].lb);
  }
  memset(cuts, 0, sizeof *cuts);
}

/* Appends to cuts the best partition of clusters small enough for the
 * moves of cluster_merge.h, raised by them in the time left; nothing when
 * no move gains.  FP_OK or an error. */
static fp_status merge_best(const fp_graph *g, const fp_ilp_params *prm,
                            double deadline, solver_cuts *cuts, fp_error *err) {
  const solver_partition *best = NULL;
  for (int32_t i = 0; i < cuts->n; i++)
    if (cuts->part[i].size <= SOLVER_MERGE_PART_SIZE &&
        (!best || cuts->part[i].total > best->total))
      best = &cuts->part[i];
  if (!best || cuts->n >= SOLVER_MAX_PARTITIONS || fp_clock_now() >= deadline ||
      (prm->cancel && *prm->cancel))
    return FP_OK;
  int32_t k = fp_limits_fusion_size(&prm->limits, g);
  solver_partition merged = {0};
  fp_status st =
      solver_merge_clusters(g, k, best, deadline, prm->cancel, &merged, err);
  if (st == FP_OK && merged.count > 0) {
    cuts->part[cuts->n++] = merged;
    cuts->best = merged.total > cuts->best ? merged.total : cuts->best;
  }
  return st;
}

fp_status solver_traffic_cuts(const fp_graph *g, const fp_ilp_params *prm,
                              double time_s, solver_cuts *cuts, fp_error *err) {
  fp_error local; /* the helpers read err->code */
  err = err ? err : &local;
  memset(cuts, 0, sizeof *cuts);
  double deadline = fp_clock_now() + time_s;
  uint64_t *per_buffer =
      malloc(((size_t)fp_graph_buffer_count(g) + 1) * sizeof *per_buffer);
  fp_status st = per_buffer ? fp_graph_buffer_traffic_bounds(g, per_buffer, err)
                            : fp_error_set(err, FP_ENOMEM, "out of memory");
  bool merged = !cluster_merge;
  for (int i = 0; st == FP_OK && i < n_kinds && fp_clock_now() < deadline &&
                  !(prm->cancel && *prm->cancel);
       i++) {
    solver_partition *part = &cuts->part[cuts->n++];
    st = partition_bounds(g, prm, kinds[i], per_buffer, deadline, part, err);
    cuts->best = part->total > cuts->best ? part->total : cuts->best;
    if (st == FP_OK && !merged && i + 1 == MERGE_AFTER) {
      merged = true;
      st = merge_best(g, prm, deadline, cuts, err);
    }
  }
  if (st == FP_OK && !merged) /* fewer kinds than MERGE_AFTER */
    st = merge_best(g, prm, deadline, cuts, err);
  free(per_buffer);
  if (st != FP_OK)
    solver_cuts_free(cuts);
  return st;
}

/* The bound of fp_lower_bound on graph g, ignoring prm's peak limit. */
static fp_status plain_bound(const fp_graph *g, const fp_ilp_params *prm,
                             double time_s, double *bound, fp_error *err) {
  fp_bounds lb = {0}; /* the peak rules only when the objective has peak */
  fp_status st = prm->objective == FP_OBJECTIVE_TRAFFIC
                     ? fp_graph_traffic_bound(g, &lb.traffic_bytes, err)
                     : fp_graph_bounds(g, &lb, err);
  if (st != FP_OK)
    return st;
  if (prm->objective != FP_OBJECTIVE_PEAK && time_s > 0) {
    solver_cuts cuts;
    st = solver_traffic_cuts(g, prm, time_s, &cuts, err);
    if (st != FP_OK)
      return st;
    lb.traffic_bytes =
        cuts.best > lb.traffic_bytes ? cuts.best : lb.traffic_bytes;
    solver_cuts_free(&cuts);
  }
  fp_metrics m = {0};
  m.traffic_bytes = lb.traffic_bytes;
  m.peak_bytes = lb.peak_bytes;
  *bound = fp_objective_value(prm, &m);
  return FP_OK;
}

fp_status solver_peak_restricted(const fp_graph *g, const fp_ilp_params *prm,
                                 fp_graph **out, fp_error *err) {
  *out = NULL;
  if (prm->objective == FP_OBJECTIVE_PEAK || prm->limits.peak == FP_NO_LIMIT)
    return FP_OK; /* no limit on the plans the traffic bound covers */
  if (prm->cancel && *prm->cancel)
    return FP_OK; /* a cancelled solve answers at once (the scan takes a
                     few tenths of a second under ASan) */
  uint64_t limit = prm->limits.peak;
  fp_status st = limit ? FP_OK : solver_eager_peak(g, &limit, err);
  int32_t pairs = 0;
  if (st == FP_OK)
    st = fp_peak_restrict(g, prm->limits.max_fusion_size, limit, out, &pairs,
                          err);
  return st;
}

/* The cluster bounds depend on the time they get, so the restricted
 * graph's is not always the higher: with one, each gets half the time and
 * the higher one is kept (both hold within the limit). */
fp_status fp_lower_bound(const fp_graph *g, const fp_ilp_params *prm,
                         double time_s, double *bound, fp_error *err) {
  fp_graph *rg = NULL;
  /* Checked here, at the entry point, as glp_intopt checks its glp_iocp. */
  if (fp_arg_graph(g, "lower bound", err) != FP_OK ||
      fp_arg_ptr(bound, "lower bound", "bound", err) != FP_OK)
    return FP_EARG;
  if (fp_ilp_params_check(prm, err) != FP_OK)
    return FP_EARG;
  if (!isfinite(time_s) || time_s < 0)
    return fp_error_set(err, FP_EARG,
                        "lower bound: time_s must be finite and >= 0, got %g",
                        time_s);
  fp_status st = time_s > 0 ? solver_peak_restricted(g, prm, &rg, err) : FP_OK;
  double share = rg ? time_s / 2 : time_s, b = -HUGE_VAL;
  if (st == FP_OK)
    st = plain_bound(g, prm, share, bound, err);
  if (st == FP_OK && rg)
    st = plain_bound(rg, prm, share, &b, err);
  if (st == FP_OK && b > *bound)
    *bound = b;
  fp_graph_destroy(rg);
  return st;
}

fp_status solver_raise_bound(const fp_graph *g, const fp_ilp_params *prm,
                             double time_s, double *bound, fp_error *err) {
  fp_graph *rg = NULL;
  double b = -HUGE_VAL;
  fp_status st = time_s > 0 ? solver_peak_restricted(g, prm, &rg, err) : FP_OK;
  if (st == FP_OK && rg)
    st = plain_bound(rg, prm, time_s, &b, err);
  if (st == FP_OK && b > *bound)
    *bound = b;
  fp_graph_destroy(rg);
  return st;
}

/* The peak of every plan of g with peak < `peak` (0 when peak is 0), or
 * `peak` when none has: the peak bound of g with the pairs that no such
 * plan groups declared unfusible (fp_peak_restrict at peak - 1), which
 * holds for those plans (docs/solver.md, "The second level"). */
static fp_status peak_below(const fp_graph *g, int32_t k, uint64_t peak,
                            uint64_t *out, fp_error *err) {
  fp_graph *rg = NULL;
  int32_t pairs = 0;
  uint64_t b = 0;
  fp_status st = fp_peak_bound(g, k, 0, &b, err);
  if (st == FP_OK && peak > 0 && b < peak)
    st = fp_peak_restrict(g, k, peak - 1, &rg, &pairs, err);
  if (st == FP_OK && rg)
    st = fp_peak_bound(rg, k, b, &b, err);
  fp_graph_destroy(rg);
  *out = b > peak ? peak : b; /* past peak - 1: nothing is below `peak` */
  return st;
}

fp_status solver_second_bound(const fp_graph *g, const fp_ilp_params *prm,
                              const fp_metrics *m, double time_s,
                              double *bound2, fp_error *err) {
  *bound2 = NAN;
  if (prm->objective == FP_OBJECTIVE_TRAFFIC) {
    uint64_t b = 0;
    fp_status st =
        time_s > 0
            ? peak_below(g, prm->limits.max_fusion_size, m->peak_bytes, &b, err)
            : fp_peak_bound(g, prm->limits.max_fusion_size, 0, &b, err);
    if (st == FP_OK)
      *bound2 = (double)b;
    return st;
  }
  if (prm->objective != FP_OBJECTIVE_PEAK)
    return FP_OK; /* weighted: one level */
  /* Traffic among the plans of peak <= m's: their least traffic. */
  fp_ilp_params q = *prm;
  q.objective = FP_OBJECTIVE_TRAFFIC;
  q.limits.peak = m->peak_bytes > 0 ? m->peak_bytes : 1;
  double b = 0;
  fp_status st = fp_lower_bound(g, &q, time_s, &b, err);
  if (st == FP_OK)
    *bound2 = b;
  return st;
}

/* The step bound's partitions: linked, of these cluster sizes (plus the
 * priced node), in this order until the bound reaches the target.  Which
 * size bounds most depends on where a partition cuts the graph (at
 * efficientnet_b0.fwd's plan, before the merges of step_merge: 11,392
 * bytes under the plan at 8 nodes, 3,584 at 12, 37,632 at 16, 3,072 at
 * 20, 6,912 at 24; with them 12 reaches it, as on mobilenetv3_large_100
 * and mobilevit_s fwd).  Partitions in consecutive pieces separate the
 * batch-norm statistics from the running-mean updates that read them and
 * bound far less (168,064 bytes under at every size). */
static const int32_t step_sizes[] = {12, 8, 16, 20, 24};
#define N_STEP_SIZES 5

/* ---- in-place credit --------------------------------------------------
 *
 * A takeover (i, o) of node v (docs/cost-model.md, "In-place kernels")
 * saves o's bytes at v's step, and only when o is materialized: o is
 * then among the buffers born at that step, which the clusters' live
 * bytes count.  So the plan's live bytes at x's step are at least the
 * clusters' live bytes less the bytes of every materialized buffer born
 * there that some pair may take over, and that credit is a sum over
 * buffers: each cluster takes its own buffers' (least_traffic.h,
 * at_credit), whatever the other readers of i do, which the cluster may
 * not see.  Which pairs may ever apply is the evaluator's to say. */

/* fp_step_where at its most permissive for node v's pairs: v at the
 * step, the readers of what v writes after it, every other node before
 * (so every reader of an input of v is done).  ctx: a where_best. */
typedef struct where_best {
  const fp_graph *g;
  int32_t v;
} where_best;

static int best_where(const void *ctx, int32_t u) {
  const where_best *a = ctx;
  const fp_node *nd = fp_graph_node(a->g, a->v);
  if (u == a->v)
    return 0;
  for (int32_t j = 0; j < nd->n_writes; j++) {
    const fp_buffer *o = fp_graph_buffer(a->g, nd->writes[j]);
    for (int32_t r = 0; r < o->n_readers; r++)
      if (o->readers[r] == u)
        return 1;
  }
  return -1;
}

/* Per buffer of g, into credit (zeroed by the caller): its bytes when a
 * pair writing it may apply in some plan.  A pair that no plan applies
 * fails at the most permissive placement too (fp_inplace_node_applied);
 * one passed over there only because an earlier pair took its input or
 * output may apply elsewhere, so it is credited as well.  Never fails. */
static void inplace_credit(const fp_graph *g, uint64_t *credit) {
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    int32_t m;
    const fp_inplace *pr = fp_graph_inplace(g, v, &m);
    where_best a = {g, v};
    uint64_t used = m > 0 ? fp_inplace_node_applied(g, v, best_where, &a) : 0;
    for (int32_t k = 0; k < m && k < FP_MAX_INPLACE_PER_NODE; k++) {
      bool may = used >> k & 1;
      for (int32_t j = 0; !may && j < k; j++)
        may = (used >> j & 1) &&
              (pr[j].read == pr[k].read || pr[j].write == pr[k].write);
      if (may)
        credit[pr[k].write] = fp_graph_buffer(g, pr[k].write)->bytes;
    }
  }
}

/* B->credit of the cluster's buffers as an array over B->sg's buffers
 * (found by name: the cluster graph keeps them), into *out (caller
 * frees; NULL when B has no credit).  0, or -1 when out of memory. */
static int cluster_credit(const cluster_build *B, uint64_t **out) {
  *out = NULL;
  if (!B->credit)
    return 0;
  *out = calloc((size_t)fp_graph_buffer_count(B->sg) + 1, sizeof **out);
  if (!*out)
    return -1;
  for (int32_t i = 0; i < B->n_bufs; i++) {
    int32_t b = B->bufs[i];
    int32_t sb =
        B->credit[b]
            ? fp_graph_find_buffer(B->sg, fp_graph_buffer(B->g, b)->name)
            : -1;
    if (sb >= 0)
      (*out)[sb] = B->credit[b];
  }
  return 0;
}

/* The least of share + weight x (live bytes of its buffers at the step
 * running x, less their in-place credit) over the plans of cluster c's
 * graph with x made a member (searched when it has at most max_count
 * nodes), into *term when the search finishes and that is more (*term: a
 * bound the caller already has on the same sum).  FP_OK or an error of
 * the build or the search. */
static fp_status step_term(cluster_build *B, int32_t c, int32_t k, int32_t x,
                           uint64_t weight, int32_t max_count, double deadline,
                           const volatile sig_atomic_t *cancel, uint64_t *term,
                           fp_error *err) {
  fp_status st = cluster_build_graph(B, c, k, err);
  uint64_t *credit = NULL;
  if (st == FP_OK && cluster_credit(B, &credit) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
  solver_lt_limits lim;
  solver_lt_limits_init(&lim);
  lim.at_credit = credit;
  for (int32_t i = 0; st == FP_OK && i < B->count; i++)
    lim.at_node = B->members[i] == x ? i : lim.at_node;
  lim.at_weight = weight;
  double now = fp_clock_now();
  double end = now + CLUSTER_TIME < deadline ? now + CLUSTER_TIME : deadline;
  solver_lt_result r = {0};
  if (st == FP_OK && lim.at_node >= 0 && B->count <= max_count)
    st =
        solver_least_traffic_guided(B->sg, k, &lim, NULL, CLUSTER_SEARCH_BUDGET,
                                    end, cancel, NULL, &r, err);
  if (st == FP_OK && r.solved && r.traffic > *term)
    *term = r.traffic;
  free(credit);
  fp_graph_destroy(B->sg);
  B->sg = NULL;
  return st;
}

/* Clusters of the step bound priced as one when they share a node: up
 * to this many nodes (at 28, the limit of cluster_merge.h's moves,
 * mobilenetv3_large_100.fwd stayed 544 bytes short at the 16-node
 * partition; the 12-node one reaches its plan either way). */
#define STEP_UNION_NODES 36
/* Rounds of merges at most: each prices the pairs the last one made. */
#define STEP_MERGE_ROUNDS 8

/* Two clusters sharing a node, and what pricing them as one adds. */
typedef struct step_pair {
  int32_t a, b;
  uint64_t gain;
} step_pair;

static int by_pair(const void *x, const void *y) {
  const step_pair *p = x, *q = y;
  return p->a != q->a ? (p->a > q->a) - (p->a < q->a)
                      : (p->b > q->b) - (p->b < q->b);
}

static int by_gain_desc(const void *x, const void *y) {
  const step_pair *p = x, *q = y;
  return (p->gain < q->gain) - (p->gain > q->gain);
}

/* Appends pair (a, b) to *P (n entries, capacity *cap).  0 or -1. */
static int push_pair(step_pair **P, int32_t *n, int32_t *cap, int32_t a,
                     int32_t b) {
  if (*n == *cap) {
    int32_t nc = *cap ? 2 * *cap : 64;
    step_pair *q = realloc(*P, (size_t)nc * sizeof *q);
    if (!q)
      return -1;
    *P = q;
    *cap = nc;
  }
  (*P)[(*n)++] = (step_pair){a < b ? a : b, a < b ? b : a, 0};
  return 0;
}

/* The pairs of clusters of C that share a node (it reads or writes a
 * buffer of each), each once, into *P (caller frees), *n of them.  0, or
 * -1 when out of memory. */
static int shared_pairs(const fp_graph *g, const solver_clusters *C,
                        step_pair **P, int32_t *n) {
  int32_t cap = 0;
  *P = NULL;
  *n = 0;
  for (int32_t v = 0; v < fp_graph_node_count(g); v++) {
    const fp_node *nd = fp_graph_node(g, v);
    int32_t cl[16], m = 0;
    for (int32_t i = 0; i < nd->n_reads + nd->n_writes; i++) {
      int32_t b =
          i < nd->n_reads ? nd->reads[i].buffer : nd->writes[i - nd->n_reads];
      int32_t c = C->of[b], seen = 0;
      for (int32_t j = 0; j < m; j++)
        seen |= cl[j] == c;
      if (c >= 0 && !seen && m < 16)
        cl[m++] = c;
    }
    for (int32_t i = 0; i < m; i++)
      for (int32_t j = i + 1; j < m; j++)
        if (push_pair(P, n, &cap, cl[i], cl[j]) != 0)
          return -1;
  }
  if (*n > 1) /* qsort takes no NULL, even for nothing */
    qsort(*P, (size_t)*n, sizeof **P, by_pair);
  int32_t u = 0;
  for (int32_t i = 0; i < *n; i++)
    if (u == 0 || by_pair(&(*P)[u - 1], &(*P)[i]) != 0)
      (*P)[u++] = (*P)[i];
  *n = u;
  return 0;
}

/* The step term of clusters a and b of C priced as one cluster (their
 * buffers, merged in order into list, counted as a's in C->of while it
 * is built), into *term (in: terms[a] + terms[b], valid for the union
 * too).  FP_OK or an error of step_term. */
static fp_status union_term(cluster_build *B, solver_clusters *C, int32_t *list,
                            int32_t a, int32_t b, int32_t k, int32_t x,
                            uint64_t weight, double deadline,
                            const volatile sig_atomic_t *cancel, uint64_t *term,
                            fp_error *err) {
  int32_t i = C->start[a], j = C->start[b], n = 0;
  while (i < C->start[a + 1] || j < C->start[b + 1])
    list[n++] =
        j >= C->start[b + 1] || (i < C->start[a + 1] && C->list[i] < C->list[j])
            ? C->list[i++]
            : C->list[j++];
  for (j = C->start[b]; j < C->start[b + 1]; j++)
    C->of[C->list[j]] = a;
  B->of = C->of;
  B->bufs = list;
  B->n_bufs = n;
  fp_status st = step_term(B, a, k, x, weight, STEP_UNION_NODES + 1, deadline,
                           cancel, term, err);
  for (j = C->start[b]; j < C->start[b + 1]; j++)
    C->of[C->list[j]] = b;
  return st;
}

/* Merges the pairs of P marked used (gain > 0, disjoint) in C and terms:
 * b's buffers become a's, a's term their sum plus the gain.  0, or -1
 * when out of memory (C is then unchanged but for the labels). */
static int apply_pairs(const fp_graph *g, solver_clusters *C, uint64_t *terms,
                       const step_pair *P, int32_t n) {
  for (int32_t i = 0; i < n; i++) {
    int32_t a = P[i].a, b = P[i].b;
    for (int32_t j = C->start[b]; j < C->start[b + 1]; j++)
      C->of[C->list[j]] = a;
    C->nodes[a] += C->nodes[b]; /* at most: what the size test needs */
    C->nodes[b] = 0;
    terms[a] += terms[b] + P[i].gain;
    terms[b] = 0;
  }
  int32_t *start, *list;
  if (cluster_buffer_lists(g, C->of, C->count, &start, &list) != 0)
    return -1;
  free(C->start);
  free(C->list);
  C->start = start;
  C->list = list;
  return 0;
}

/* One round of merges: the pairs of clusters of C that share a node,
 * each priced as one cluster; the disjoint ones that gain, largest gain
 * first, are merged in C and terms (any partition's sum is a bound, and
 * merging two clusters keeps a partition), *gain what they add.  FP_OK
 * or an error. */
static fp_status step_merge(const fp_graph *g, cluster_build *B,
                            solver_clusters *C, uint64_t *terms, int32_t k,
                            int32_t x, uint64_t weight, double deadline,
                            const volatile sig_atomic_t *cancel, uint64_t *gain,
                            fp_error *err) {
  step_pair *P = NULL;
  int32_t n = 0, kept = 0;
  int32_t *list = malloc(((size_t)fp_graph_buffer_count(g) + 1) * sizeof *list);
  char *used = calloc((size_t)C->count + 1, 1);
  fp_status st = FP_OK;
  *gain = 0;
  if (!list || !used || shared_pairs(g, C, &P, &n) != 0) {
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
    goto fail;
  }
  for (int32_t i = 0; st == FP_OK && i < n && fp_clock_now() < deadline &&
                      !(cancel && *cancel);
       i++) {
    int32_t a = P[i].a, b = P[i].b;
    uint64_t t = terms[a] + terms[b];
    if (C->nodes[a] + C->nodes[b] <= STEP_UNION_NODES)
      st =
          union_term(B, C, list, a, b, k, x, weight, deadline, cancel, &t, err);
    P[i].gain = t - terms[a] - terms[b];
  }
  if (n > 1)
    qsort(P, (size_t)n, sizeof *P, by_gain_desc);
  for (int32_t i = 0; st == FP_OK && i < n && P[i].gain > 0; i++)
    if (!used[P[i].a] && !used[P[i].b]) {
      used[P[i].a] = used[P[i].b] = 1;
      *gain += P[i].gain;
      P[kept++] = P[i];
    }
  if (st == FP_OK && kept > 0 && apply_pairs(g, C, terms, P, kept) != 0)
    st = fp_error_set(err, FP_ENOMEM, "out of memory");
fail:
  B->of = C->of;
  free(P);
  free(list);
  free(used);
  return st;
}

/* The sum of step_term over the clusters of C (each at least the
 * structural bound of its buffers), raised by rounds of step_merge
 * (which merges clusters of C), into *sum; credit: inplace_credit's, or
 * NULL.  FP_OK or an error. */
static fp_status step_sum(const fp_graph *g, solver_clusters *C, int32_t k,
                          int32_t x, uint64_t weight, const uint64_t *credit,
                          double deadline, const volatile sig_atomic_t *cancel,
                          uint64_t *sum, fp_error *err) {
  cluster_build B;
  memset(&B, 0, sizeof B); /* cluster_build_free is safe on it */
  uint64_t *per_buffer =
      malloc(((size_t)fp_graph_buffer_count(g) + 1) * sizeof *per_buffer);
  uint64_t *terms = calloc((size_t)C->count + 1, sizeof *terms), gain = 0;
  fp_status st = per_buffer && terms && cluster_build_init(&B, g) == 0
                     ? fp_graph_buffer_traffic_bounds(g, per_buffer, err)
                     : fp_error_set(err, FP_ENOMEM, "out of memory");
  *sum = 0;
  B.of = C->of;
  B.size = C->size;
  B.extra = x;
  B.credit = credit;
  for (int32_t c = 0; st == FP_OK && c < C->count; c++) {
    terms[c] = buffers_bound(C, c, per_buffer);
    B.bufs = C->list + C->start[c];
    B.n_bufs = C->start[c + 1] - C->start[c];
    if (fp_clock_now() < deadline && !(cancel && *cancel))
      st = step_term(&B, c, k, x, weight, C->size + 1, deadline, cancel,
                     &terms[c], err);
    *sum += terms[c];
  }
  for (int r = 0; st == FP_OK && r < STEP_MERGE_ROUNDS; r++) {
    st =
        step_merge(g, &B, C, terms, k, x, weight, deadline, cancel, &gain, err);
    *sum += gain;
    if (gain == 0)
      break;
  }
  cluster_build_free(&B);
  free(per_buffer);
  free(terms);
  return st;
}

fp_status solver_step_bound(const fp_graph *g, const fp_ilp_params *prm,
                            int32_t x, uint64_t weight, double target,
                            double time_s, double *bound, fp_error *err) {
  double deadline = fp_clock_now() + time_s;
  uint64_t limit = prm->limits.peak, best = 0;
  *bound = 0;
  if (prm->objective != FP_OBJECTIVE_TRAFFIC || limit == FP_NO_LIMIT || x < 0 ||
      x >= fp_graph_node_count(g) || time_s <= 0)
    return FP_OK;
  /* On a graph with in-place pairs the clusters' live bytes count what a
   * takeover saves; each takes its credit (inplace_credit above). */
  uint64_t *credit = NULL;
  fp_status st = FP_OK;
  if (fp_graph_inplace_count(g) > 0 &&
      !(credit = calloc((size_t)fp_graph_buffer_count(g) + 1, sizeof *credit)))
    return fp_error_set(err, FP_ENOMEM, "out of memory");
  if (credit)
    inplace_credit(g, credit);
  if (limit == 0)
    st = solver_eager_peak(g, &limit, err);
  /* Every plan within the limit holds at most `room` bytes of the
   * clusters' buffers during the step running x, where x's workspace is
   * live too (the cluster graphs carry no workspaces: x joins every
   * cluster, so each would count it). */
  uint64_t res = fp_graph_resident_bytes(g) + fp_graph_node(g, x)->workspace;
  uint64_t room = limit - res;
  for (int i = 0; st == FP_OK && limit >= res && i < N_STEP_SIZES &&
                  !((double)best >= target) && fp_clock_now() < deadline &&
                  !(prm->cancel && *prm->cancel);
       i++) {
    solver_clusters C = {0};
    uint64_t sum = 0;
    if (solver_clusters_make(g, step_sizes[i], false, &C) != 0)
      st = fp_error_set(err, FP_ENOMEM, "out of memory");
    else
      st = step_sum(g, &C, fp_limits_fusion_size(&prm->limits, g), x, weight,
                    credit, deadline, prm->cancel, &sum, err);
    if (st == FP_OK && sum > weight * room && sum - weight * room > best)
      best = sum - weight * room;
    solver_clusters_free(&C);
  }
  free(credit);
  *bound = (double)best;
  return st;
}

/* Groups the guided search of solver_exact_traffic, and each part of its
 * guide, may examine: a few seconds each on this project's machine. */
#define EXACT_SEARCH_BUDGET 200000000
#define GUIDE_PART_BUDGET 50000000

/* The partition of cuts with the largest total (NULL when none). */
static const solver_partition *best_partition(const solver_cuts *cuts) {
  const solver_partition *best = NULL;
  for (int32_t i = 0; i < cuts->n; i++)
    if (cuts->part[i].count > 0 && (!best || cuts->part[i].total > best->total))
      best = &cuts->part[i];
  return best;
}

/* The guided search below rising limits: just above the bound first
 * (is it reached?), then an eighth of the way to `upper`, where few
 * states are worth expanding, then `upper`.  A stage that finds nothing proves
 * its limit (*lb rises to it); one that finds a plan has found the optimum, as
 * every plan under its limit was in its reach.  *out is the last stage's. */
static fp_status ladder(const fp_graph *h, int32_t k, solver_lt_limits *lim,
                        const solver_lt_guide *guide, uint64_t upper,
                        double deadline, const volatile sig_atomic_t *cancel,
                        fp_plan *plan, solver_lt_result *out, uint64_t *lb,
                        fp_error *err) {
  static const double steps[] = {0, 1.0 / 8, 1};
  fp_status st = FP_OK;
  uint64_t from = solver_lt_guide_bound(guide);
  *lb = from > *lb ? from : *lb;
  for (int i = 0; i < 3 && st == FP_OK; i++) {
    lim->upper = i == 2 || *lb >= upper
                     ? upper
                     : *lb + 1 + (uint64_t)((double)(upper - *lb) * steps[i]);
    lim->upper = lim->upper > upper ? upper : lim->upper;
    if (i < 2 && lim->upper <= *lb)
      continue;
    st = solver_least_traffic_guided(h, k, lim, guide, EXACT_SEARCH_BUDGET,
                                     deadline, cancel, plan, out, err);
    if (st != FP_OK || !out->solved || out->found)
      break;
    *lb = lim->upper > *lb ? lim->upper : *lb;
  }
  return st;
}

fp_status solver_exact_traffic(const fp_graph *g, const fp_ilp_params *prm,
                               uint64_t upper, double time_s, fp_plan *plan,
                               solver_lt_result *out, uint64_t *lb,
                               fp_error *err) {
  double deadline = fp_clock_now() + time_s;
  int32_t k = fp_limits_fusion_size(&prm->limits, g);
  solver_cuts cuts = {0};
  solver_lt_guide *guide = NULL;
  memset(out, 0, sizeof *out);
  if (fp_graph_node_count(g) > SOLVER_LT_MAX_NODES || time_s <= 0)
    return FP_OK;
  solver_lt_limits lim;
  solver_lt_limits_init(&lim);
  lim.upper = upper;
  lim.by_peak = true;
  fp_graph *rg = NULL; /* the pairs the limit keeps apart: more pruning */
  fp_status st = FP_OK;
  if (prm->limits.peak != FP_NO_LIMIT) {
    lim.peak_limit = prm->limits.peak;
    st = prm->limits.peak ? FP_OK : solver_eager_peak(g, &lim.peak_limit, err);
    if (st == FP_OK)
      st = solver_peak_restricted(g, prm, &rg, err);
  }
  const fp_graph *h = rg ? rg : g;
  if (st == FP_OK)
    st = solver_traffic_cuts(h, prm, time_s / 4, &cuts, err);
  const solver_partition *best = st == FP_OK ? best_partition(&cuts) : NULL;
  bool complete = false;
  if (best)
    st = cluster_guide(h, best->of, best->count, k, GUIDE_PART_BUDGET, deadline,
                       prm->cancel, &guide, &complete, err);
  if (st == FP_OK && fp_clock_now() < deadline)
    st = ladder(h, k, &lim, guide, upper, deadline, prm->cancel, plan, out, lb,
                err);
  solver_lt_guide_destroy(guide);
  solver_cuts_free(&cuts);
  fp_graph_destroy(rg);
  return st;
}
