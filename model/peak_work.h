/*
 * peak_work.h -- the order relations and min cuts of the peak bound
 * (peak_bound.c), shared with the cuts at whole groups of peak_group.c
 * and the pairs under a peak limit of peak_pairs.c.
 * Private to model/.
 */
#ifndef FP_PEAK_WORK_H
#define FP_PEAK_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "status.h"

typedef struct pb_work {
  const fp_graph *g;
  int32_t n, k;     /* nodes; fusion-size limit */
  size_t words;     /* 64-bit words per bit row */
  uint64_t *desc;   /* row v: nodes u != v with a path v -> ... -> u */
  uint64_t *anc;    /* row v: nodes u != v with a path u -> ... -> v */
  uint64_t *strict; /* row w: nodes x with step(w) < step(x) in every plan */
  int32_t *pstart;  /* CSR: distinct producers of node x are */
  int32_t *pred;    /* pred[pstart[x] .. pstart[x + 1]) */
  bool *apart;      /* apart[i]: pred[i] never shares x's group */
} pb_work;

/* Work (network sizes and edge visits) for the min cuts of one bound, and
 * the largest graph_size that gets them (the largest corpus graph,
 * volo_d1_224.bwd, is 2.1e6; on a 3,000-node graph the cuts would double
 * the bound's time, which short solves cannot spare). */
#define PB_CUT_BUDGET 10000000.0
#define PB_MAX_CUT_SIZE 3000000.0

/* Sets bit c of row r. */
static inline void set_bit(uint64_t *rows, size_t words, int32_t r, int32_t c) {
  rows[(size_t)r * words + (size_t)c / 64] |= (uint64_t)1 << (c % 64);
}

/* a - b, or 0 when b > a. */
static inline uint64_t pb_sub_cap(uint64_t a, uint64_t b) {
  return a > b ? a - b : 0;
}

/* Bit c of row r. */
static inline bool bit(const uint64_t *rows, size_t words, int32_t r,
                       int32_t c) {
  return rows[(size_t)r * words + (size_t)c / 64] >> (c % 64) & 1;
}

/* Whether u and v may ever share a group (under the limit k). */
static inline bool may_share(const pb_work *W, int32_t u, int32_t v) {
  return W->k > 1 && fp_graph_compatible(W->g, u, v);
}

/* Whether w may run in one group with u: it may share u's group and
 * neither always runs before the other. */
static inline bool pb_may_join(const pb_work *W, int32_t w, int32_t u) {
  return may_share(W, w, u) && !bit(W->strict, W->words, w, u) &&
         !bit(W->strict, W->words, u, w);
}

/* Marks in takers (n bytes, all set here) the nodes that may run at the
 * step of G (ng nodes): its members and the nodes that may join each
 * member, not `gone` or its producers (forced strictly before the step;
 * -1 for none).  Cannot fail. */
void pb_group_takers(const pb_work *W, const int32_t *grp, int32_t ng,
                     int32_t gone, uint8_t *takers);

/* Where the min cut places a node (pb_cut_bound's side[]). */
enum {
  PB_SIDE_OPEN = 0,   /* as the dependency order says */
  PB_SIDE_BEFORE = 1, /* at or before G's step */
  PB_SIDE_AFTER = 2,  /* at or after it */
  PB_SIDE_NEVER = 4   /* flag: never at G's step */
};

/* Builds W for the finalized graph g under the fusion limit k (capped as
 * fp_peak_bound's): the order relations and the producers.  FP_ENOMEM
 * (pb_work_free all the same). */
fp_status pb_work_build(pb_work *W, const fp_graph *g, int32_t k,
                        fp_error *err);

/* Frees what pb_work_build allocated. */
void pb_work_free(pb_work *W);

/* Whether the min cuts fit the peak bound's size limits on g. */
bool pb_cuts_affordable(const fp_graph *g);

/* capx[x] (n entries): the most in-place takeovers can save at step(x)
 * (x's own plus the k - 1 largest of the nodes that may share its
 * group), or `global` where that is too dear.  0, or -1 out of memory. */
int pb_step_caps(const pb_work *W, uint64_t global, uint64_t *capx);

/* Resident bytes plus the least that is live at the step of G's group (ng
 * nodes, convex) over every placement of the other nodes, into *out: a
 * bound on the peak of every plan that runs G in one group and, where
 * side is not NULL, places each node v as side[v] says (the PB_SIDE_*
 * above; the caller vouches for them, and closes them: the ancestors of
 * a node placed before are placed before, the descendants of one placed
 * after, after) and, where tie is not NULL (node -> class in [0, n)),
 * runs the nodes of a class at one step: the nodes the placement leaves
 * free share a side.  out_side (NULL, or n entries) gets where the
 * cheapest placement runs each node (FP_PEAK_BEFORE, _IN, _AFTER).  Not
 * less the in-place savings.  *out is UINT64_MAX when no placement meets
 * the ties.  FP_ENOMEM. */
fp_status pb_cut_bound(const pb_work *W, const int32_t *grp, int32_t ng,
                       const int8_t *side, const int32_t *tie, int8_t *out_side,
                       uint64_t resident, uint64_t *out, fp_error *err);

/* A node and its cut-rule figure, for ordering nodes by it. */
typedef struct node_val {
  uint64_t val;
  int32_t node;
} node_val;

/* Descending figure, then ascending node (a total order), for qsort. */
int pb_cmp_node_val(const void *a, const void *b);

/* Descending order of uint64_t, for qsort. */
int pb_cmp_u64_desc(const void *a, const void *b);

/* The nodes x at whose step buf is live in every plan, as the bits of
 * row: words [*lo, *hi) are written, the others are not touched; *lo ==
 * *hi when the set is empty. */
void pb_live_set(const pb_work *W, const fp_buffer *buf, uint64_t *row,
                 size_t *lo, size_t *hi);

/* nodes x (nodes + buffers + reads): what one pass over every node's
 * min-cut network costs to build (compare PB_MAX_CUT_SIZE). */
double pb_graph_size(const fp_graph *g);

/* What node v's own in-place pairs can save at its step: the distinct
 * buffers they write, of the pairs that may ever apply. */
uint64_t pb_node_inplace_cap(const fp_graph *g, int32_t v);

/* pb_cut_bound with no placement or ties, where node y (-1: none),
 * neither an ancestor nor a descendant of G, runs at or before G's step
 * (strictly before it when strict; strictly after it when late) with its
 * producers (consumers); with takers (per node, or NULL), less the
 * refunds of what the takeovers of the nodes it marks (those that may run
 * at the step) save there.  Adds the cut's work to *work.  FP_ENOMEM. */
fp_status pb_cut_forced(const pb_work *W, const int32_t *grp, int32_t ng,
                        int32_t y, bool late, bool strict,
                        const uint8_t *takers, uint64_t resident, uint64_t *out,
                        double *work, fp_error *err);

#endif /* FP_PEAK_WORK_H */
