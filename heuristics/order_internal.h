/*
 * order_internal.h -- internal: the group DAG of a plan and the sorts
 * over it (order.c), shared by the orders (reorder.c) and Inductor's
 * reorder (inductor_order.c).  Not a public header.
 */
#ifndef FP_ORDER_INTERNAL_H
#define FP_ORDER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "heuristics/heuristics.h"

/* The group DAG of a plan, with what the orders need to know about memory.
 * Invariant: CSR arrays *_off have n + 1 (groups) or n_items + 1 entries. */
typedef struct gdag {
  int32_t n;                  /* groups */
  int32_t *gid;               /* node -> group */
  int32_t *minidx;            /* group -> smallest member index */
  int32_t *succ_off, *succ;   /* distinct successor groups */
  int32_t *pred_off, *pred;   /* distinct predecessor groups */
  uint64_t *alloc;            /* bytes a group allocates */
  uint64_t *dead;             /* bytes freed right after the group */
  uint64_t *ws;               /* a group's workspace, live at its step
                                 only (NULL: none; lpmf counts it) */
  int32_t n_items;            /* freeable items */
  uint64_t *item_bytes;       /* item -> bytes */
  int32_t *cons_off, *cons;   /* item -> distinct consumer groups */
  int32_t *gitem_off, *gitem; /* group -> items it consumes */
  bool *item_input;           /* item -> a freeable input */
  uint64_t start_live;        /* resident + freeable inputs in use */
  uint64_t start_peak;        /* lpmf: the peak before the first step, if
                                 above start_live (Inductor: the outputs) */
  const int32_t *tie;         /* group -> tie-break rank (minidx unless
                                 the builder says otherwise) */
  uint64_t *dfs_extra;        /* group -> bytes dfs adds to its memory
                                 touched beyond the items (NULL: none) */
  /* In-place takeovers (docs/cost-model.md): lpmf takes a group's saving
   * off its step when g is set (gdag_build sets it on graphs with pairs;
   * Inductor's own estimate, inductor_order.c, has none). */
  const fp_graph *g;
  const fp_plan *p;
} gdag;

/* Builds the group DAG of a legal plan (tie = minidx, start_peak = 0).
 * 0, or -1 when out of memory (call gdag_free either way). */
int gdag_build(const fp_graph *g, const fp_plan *p, gdag *d);

/* Frees what d owns and zeroes it. */
void gdag_free(gdag *d);

/* Turns per-row counts in off[1..n] into offsets (off[0] = 0). */
void gdag_prefix(int32_t *off, int32_t n);

/* The sorts: each writes a topological order of d's groups to out[0..n)
 * and returns 0, or -1 when out of memory.  Ties go to the smaller
 * d->tie.  order_kahn: `listed` (bfs false: smallest tie first) or `bfs`
 * (predecessors run earliest first); order_lpmf: least peak memory first;
 * order_dfs: depth-first by memory touched.  docs/heuristics.md, Orders. */
int order_kahn(const gdag *d, bool bfs, int32_t *out);
int order_lpmf(const gdag *d, int32_t *out);
int order_dfs(const gdag *d, int32_t *out);

/* A depth-first walk over n nodes: roots[0..n) in that order, each node
 * visiting adj[off[v]..off[v + 1]) in that order before it is emitted
 * (post-order) into out[0..n).  Iterative, so long chains do not overflow
 * the C stack.  0, or -1 when out of memory or not every node was
 * reached. */
int gdag_postorder(int32_t n, const int32_t *roots, const int32_t *off,
                   const int32_t *adj, int32_t *out);

/* Inductor's reorder_for_peak_memory of p's groups, written into out (its
 * groups replaced); *chosen is the method that won (FP_ORDER_INDUCTOR for
 * Inductor's baseline).  p must be legal.  Fails with FP_ENOMEM.
 * (inductor_order.c) */
fp_status inductor_reorder(const fp_graph *g, const fp_plan *p, fp_plan *out,
                           fp_order *chosen, fp_error *err);

#endif /* FP_ORDER_INTERNAL_H */
