/*
 * eval.h -- the evaluator: legality, traffic, peak and the live-memory
 * timeline of a plan, and structural lower bounds.
 *
 * This is the single source of truth for the cost model of
 * docs/cost-model.md.  The ILP objective, the heuristics' scores and the
 * executor's measurements are all tested against these numbers, byte for
 * byte.
 * Everything here is linear in the size of the graph plus the plan, except
 * the pairwise compatibility check inside a group (at most
 * max_fusion_size^2 / 2 pairs per group).
 */
#ifndef FP_EVAL_H
#define FP_EVAL_H

#include <stdint.h>

#include "graph.h"
#include "plan.h"
#include "status.h"

/* The figures of a legal plan. */
typedef struct fp_metrics {
  uint64_t traffic_bytes;  /* read_bytes + write_bytes */
  uint64_t read_bytes;     /* bytes groups read from memory */
  uint64_t write_bytes;    /* bytes of materialized buffers written */
  uint64_t peak_bytes;     /* max over steps of live bytes */
  int32_t peak_step;       /* first step where the peak is reached; -1: none */
  int32_t kernels;         /* number of groups */
  int32_t materialized;    /* number of materialized produced buffers */
  uint64_t resident_bytes; /* live throughout (in every step): outside
                            * bytes, resident inputs */
} fp_metrics;

/* Per-step figures (the timeline). */
typedef struct fp_step {
  uint64_t live_bytes;  /* live(t) */
  uint64_t read_bytes;  /* what G_t reads */
  uint64_t write_bytes; /* what G_t writes */
  int32_t nodes;        /* |G_t| */
} fp_step;

/* Checks the plan against docs/cost-model.md#legality (every node once; no
 * empty group; extern alone; pairwise compatible; not unfusible; every
 * linked pair with one of its linkers (graph.h, fp_graph_linked); at most
 * `max_fusion_size` nodes per group, where 0 means the graph's own value,
 * which also caps a larger one (fp_graph_fusion_cap); dependency order).
 * Returns FP_OK, or FP_EILLEGAL with a message naming the first violation
 * (group index and node names), or FP_ENOMEM. FP_EARG when g is NULL or not
 * finalized, or p is NULL. */
fp_status fp_plan_check(const fp_graph *g, const fp_plan *p,
                        int32_t max_fusion_size, fp_error *err);

/* Checks the plan (as fp_plan_check with the graph's max_fusion_size) and
 * evaluates it.  `out` is filled on success; `timeline`, if non-NULL, must
 * hold fp_plan_group_count(p) entries and gets the per-step figures.
 * Fails with FP_EILLEGAL (see fp_plan_check) or FP_ENOMEM; FP_EARG as
 * fp_plan_check, or when out is NULL. */
fp_status fp_plan_eval(const fp_graph *g, const fp_plan *p, fp_metrics *out,
                       fp_step *timeline, fp_error *err);

/* As fp_plan_eval, with an explicit fusion-size limit (0 = the graph's;
 * capped at the graph's, fp_graph_fusion_cap). */
fp_status fp_plan_eval_k(const fp_graph *g, const fp_plan *p,
                         int32_t max_fusion_size, fp_metrics *out,
                         fp_step *timeline, fp_error *err);

/* Where node u runs relative to the step being scored: negative before
 * it, 0 in it, positive after it.  ctx is the caller's. */
typedef int (*fp_step_where)(const void *ctx, int32_t u);

/* The bytes node v saves at its step by in-place kernels
 * (docs/cost-model.md, "In-place kernels"): v's pairs (i, o) in listed
 * order, each applied when i is live memory that dies at this step (a
 * freeable non-output input, or a non-output buffer written before this
 * step), every other reader of i runs before this step or is a fused
 * reader of the pair in this step (fp_graph_inplace_fused_readers: an
 * ancestor of v, which read i before v wrote it), o is materialized
 * (an output, unread, or read after this step), and neither i nor o went
 * to an earlier applied pair of v; each applied pair saves o's bytes.
 * `where` places nodes relative to v's step.  0 for a bad v or a NULL
 * where.  Never fails. */
uint64_t fp_inplace_node_saving(const fp_graph *g, int32_t v,
                                fp_step_where where, const void *ctx);

/* The pairs of node v that fp_inplace_node_saving applies, as a mask (bit
 * k: v's pair k).  Never fails. */
uint64_t fp_inplace_node_applied(const fp_graph *g, int32_t v,
                                 fp_step_where where, const void *ctx);

/* fp_inplace_node_applied for node v in a plan whose node steps are
 * step[] (one per node).  0 for a NULL graph or step, or a bad v. */
uint64_t fp_inplace_plan_applied(const fp_graph *g, const int32_t *step,
                                 int32_t v);

/* The in-place saving of the step that runs the nodes of mask `group`
 * after those of mask `done` (bit v: node v), for graphs of at most 64
 * nodes (the exact searches): the sum of fp_inplace_node_saving over the
 * group.  0 for a graph without pairs or past 64 nodes. */
uint64_t fp_inplace_mask_saving(const fp_graph *g, uint64_t done,
                                uint64_t group);

/* Lower bounds valid for every legal plan of the graph. */
typedef struct fp_bounds {
  /* Traffic that no plan avoids: every read input is read at least once
   * (its smallest per-read bytes), and every buffer that must be
   * materialized (graph output, unread, or with a reader that can never
   * share its writer's group) is written once, plus read once by such a
   * reader when it has one. */
  uint64_t traffic_bytes;
  /* Peak that no plan avoids: at the step running node v, the resident
   * inputs, the freeable inputs v reads, every must-materialize buffer v
   * reads or writes and v's workspace are all live; the max over v (or
   * the resident bytes alone when there are no nodes). */
  uint64_t peak_bytes;
} fp_bounds;

/* Computes fp_bounds for a finalized graph.  FP_ENOMEM on failure; FP_EARG
 * when g is NULL or not finalized or out is NULL (so too the two traffic
 * bounds below). */
fp_status fp_graph_bounds(const fp_graph *g, fp_bounds *out, fp_error *err);

/* fp_bounds' traffic_bytes alone, into *out: a fraction of the cost (the
 * peak rules are the dear part).  FP_ENOMEM on failure. */
fp_status fp_graph_traffic_bound(const fp_graph *g, uint64_t *out,
                                 fp_error *err);

/* The same rule buffer by buffer: per_buffer[b] (one entry per buffer of
 * g) is at most b's traffic in every legal plan, so the sum over any set
 * of buffers bounds that set's share; the sum over all is
 * fp_graph_traffic_bound's.  FP_ENOMEM on failure. */
fp_status fp_graph_buffer_traffic_bounds(const fp_graph *g,
                                         uint64_t *per_buffer, fp_error *err);

#endif /* FP_EVAL_H */
