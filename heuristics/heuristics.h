/*
 * heuristics.h -- greedy fusion in the manner of PyTorch Inductor, a
 * low-memory variant, a peak-aware variant, and memory-aware orderings.
 *
 * They are the baseline users compare against ("what would Inductor's
 * greedy do?"), the warm start of the ILP, and its fallback.  Every plan
 * returned here is legal (fp_plan_check) and carries solver.method and
 * solver.time_s; metrics come from the evaluator.
 */
#ifndef FP_HEURISTICS_H
#define FP_HEURISTICS_H

#include <stdbool.h>
#include <stdint.h>

#include "../model/graph.h"
#include "../model/limits.h"
#include "../model/plan.h"
#include "../model/status.h"

/* Group orders (solve --order; docs/heuristics.md).
 * X(name, string) */
#define FP_ORDER_MAP(X)                                                        \
  X(LISTED, "listed")                                                          \
  X(LPMF, "lpmf")                                                              \
  X(BFS, "bfs")                                                                \
  X(DFS, "dfs")                                                                \
  X(BEST, "best")                                                              \
  X(INDUCTOR, "inductor")

typedef enum fp_order {
#define FP_ORDER_ENUM_(name, str) FP_ORDER_##name,
  FP_ORDER_MAP(FP_ORDER_ENUM_)
#undef FP_ORDER_ENUM_
      FP_ORDER_COUNT_
} fp_order;

const char *fp_order_name(fp_order o);
int fp_order_parse(const char *s); /* -1 if unknown */

/* Reorders the groups of a legal plan without changing the grouping:
 *   listed  a topological order of the groups that keeps each group at the
 *           earliest original position of its members where dependencies
 *           allow (a stable topological sort by smallest member index);
 *   lpmf    least-peak-memory-first (Inductor memory.py): among ready
 *           groups, prefer one that keeps memory under the peak so far,
 *           then the one that frees the most;
 *   bfs     ready groups whose predecessors ran earliest first (FIFO);
 *   dfs     depth-first from the groups with the least memory touched;
 *   best    all of the above, keeping the lowest peak (first on ties);
 *   inductor  Inductor's reorder_for_peak_memory as torch 2.15 runs it
 *           after fusion: the groups sorted by smallest member index and
 *           put in topological order as topological_sort_schedule does
 *           (the baseline), then its lpmf, bfs and dfs with Inductor's
 *           node sizes and tie-breaks, keeping the lowest peak by
 *           Inductor's own estimate (memory.py; the baseline on ties).
 * Traffic does not depend on the order, only peak does.  `chosen` (may be
 * NULL) receives the order that was applied (never BEST).  Fails with
 * FP_EILLEGAL for an illegal plan, FP_ENOMEM; FP_EARG for an order out of
 * the list, a NULL plan, or a graph that is NULL or not finalized. */
fp_status fp_plan_reorder(const fp_graph *g, fp_plan *p, fp_order order,
                          fp_order *chosen, fp_error *err);

/* Fusion methods.  X(name, string) */
#define FP_METHOD_MAP(X)                                                       \
  X(EAGER, "eager")                                                            \
  X(GREEDY, "greedy")                                                          \
  X(GREEDY_LOWMEM, "greedy-lowmem")                                            \
  X(GREEDY_PEAK, "greedy-peak")

typedef enum fp_method {
#define FP_METHOD_ENUM_(name, str) FP_METHOD_##name,
  FP_METHOD_MAP(FP_METHOD_ENUM_)
#undef FP_METHOD_ENUM_
      FP_METHOD_COUNT_
} fp_method;

const char *fp_method_name(fp_method m);
int fp_method_parse(const char *s); /* -1 if unknown */

/* Defaults, after Inductor's config (scheduler.py / config.py). */
#define FP_FUSION_DEFAULT_ROUNDS 10       /* fuse rounds until no change */
#define FP_FUSION_DEFAULT_BUCKET_PAIRS 64 /* pairs per node in a bucket */
#define FP_FUSION_DEFAULT_MAX_DISTANCE 64 /* horizontal: positions apart */
#define FP_FUSION_DEFAULT_MIN_SHARED 10   /* bytes a fused pair must share */

/* Parameters of fp_fuse, in the manner of glp_iocp: fill with
 * fp_fusion_params_init, then change what you need. */
typedef struct fp_fusion_params {
  fp_method method;     /* what to run */
  fp_order order;       /* final order; default INDUCTOR (Inductor's
                           reorder_for_peak_memory) for greedy, BEST for
                           greedy-lowmem and greedy-peak, LISTED for
                           eager */
  fp_limits limits;     /* max_fusion_size for every method, peak for
                           greedy-peak (no fusion may raise the plan's
                           peak above it; FP_LIMITS_PEAK_EAGER: the
                           eager peak); traffic is not read */
  int32_t rounds;       /* >= 1 */
  int32_t bucket_pairs; /* >= 1 */
  int32_t max_distance; /* >= 0: horizontal pairs further apart in the
                           listed order are not fused */
  uint64_t min_shared;  /* bytes */
} fp_fusion_params;

/* Fills `prm` with the defaults for `method`. */
void fp_fusion_params_init(fp_fusion_params *prm, fp_method method);

/* Checks parameters; FP_EARG with a message naming the field. */
fp_status fp_fusion_params_check(const fp_fusion_params *prm, fp_error *err);

/* Runs a fusion method on a finalized graph and writes a legal plan into
 * `out` (its groups are replaced; solver.method/status/time_s set).
 * greedy-peak returns a plan whose peak is <= limits.peak whenever some
 * order of the unfused nodes (listed, lpmf, bfs, dfs) meets the limit;
 * otherwise FP_EINFEASIBLE with a message giving the lowest peak found.
 * Fails with FP_EARG (bad or NULL params, a NULL plan, a graph that is
 * NULL or not finalized), FP_EINFEASIBLE, FP_ENOMEM. */
fp_status fp_fuse(const fp_graph *g, const fp_fusion_params *prm, fp_plan *out,
                  fp_error *err);

/* One decision of greedy fusion (fp_fusion_decisions): a candidate pair
 * of a round, as Inductor's scheduler sees it when it decides (pairs
 * whose groups were fused earlier in the round are no decision and are
 * left out).  u and v
 * are the pair's group ids at the start of the round (a group's id is its
 * first node's index), u < v. */
typedef struct fp_fusion_decision {
  int32_t round;          /* 0, 1, ...: the fuse_nodes round */
  int32_t u, v;           /* node indices */
  int32_t size_u, size_v; /* their groups' sizes now */
  uint64_t shared_bytes;  /* score_fusion_memory: bytes both groups touch
                             (0 when not scored) */
  bool vertical;          /* one group reads what the other writes */
  int32_t proximity;      /* listed-order distance (-1 when not scored) */
  int raises_peak;        /* 1 / 0: fusing raises the peak of the
                             fusion-time order; -1 when not reached */
  bool fused;             /* greedy fused the pair here */
} fp_fusion_decision;

/* Receives one decision; returns 0 to go on, nonzero to stop. */
typedef int (*fp_decision_fn)(const fp_fusion_decision *d, void *ctx);

/* Runs greedy or greedy-lowmem fusion (prm->method) on g as fp_fuse
 * does, handing every candidate pair it considers, in decision order, to
 * fn.  Makes no plan.  FP_EARG for another method, bad params or a
 * callback that stopped; FP_ENOMEM. */
fp_status fp_fusion_decisions(const fp_graph *g, const fp_fusion_params *prm,
                              fp_decision_fn fn, void *ctx, fp_error *err);

#endif /* FP_HEURISTICS_H */
