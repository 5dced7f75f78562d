/*
 * peak_bound.h -- a lower bound on the peak live memory of every legal plan
 * of a graph: the step-0, last-step and per-node rules of peak_bound.c
 * (proved in docs/cost-model.md, "The peak bound").
 */
#ifndef FP_PEAK_BOUND_H
#define FP_PEAK_BOUND_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "status.h"

/* Sets *out to the largest of `floor_bytes` (a bound the caller already
 * has; 0 for none), the resident bytes and the rules of peak_bound.c for
 * plans whose groups hold at most `max_fusion_size` nodes (0: the graph's
 * own limit, which caps a larger one: fp_graph_fusion_cap).  Every legal plan
 * of the finalized graph g has a peak >= *out.  On large graphs (past 16384
 * nodes, or too many reads) only the step-0 and last-step rules apply.  On a
 * graph with in-place pairs the rules give up fp_inplace_step_cap bytes (what
 * takeovers can save at a step), so they stay lower bounds.  FP_ENOMEM (then
 * *out holds the weaker bound computed so far, still valid). */
fp_status fp_peak_bound(const fp_graph *g, int32_t max_fusion_size,
                        uint64_t floor_bytes, uint64_t *out, fp_error *err);

/* For each group i of a legal plan of g, given as the nodes
 * nodes[start[i] .. start[i + 1]) (i < n_groups), sets out[i] to a lower
 * bound on the peak of every legal plan of g that puts that group's nodes
 * in one group: the min-cut rule of peak_bound.c with G the group (a
 * group of a legal plan is convex, as the rule needs), less what in-place
 * takeovers may save at its step.  Past the min cuts' size limit every
 * out[i] is the resident bytes.  FP_EARG (a NULL pointer, an unfinalized
 * graph, n_groups < 0, start[0] != 0 or falling, a node out of range),
 * or FP_ENOMEM (out[] then holds at least the resident bytes, still
 * valid). */
fp_status fp_peak_group_bounds(const fp_graph *g, int32_t max_fusion_size,
                               const int32_t *nodes, const int32_t *start,
                               int32_t n_groups, uint64_t *out, fp_error *err);

/* Two nodes that every plan a caller asks about runs at one step. */
typedef struct fp_peak_tie {
  int32_t u, v;
} fp_peak_tie;

/* Where fp_peak_cuts_tied's cheapest placement runs a node. */
enum { FP_PEAK_BEFORE = -1, FP_PEAK_IN = 0, FP_PEAK_AFTER = 1 };

/* The min cuts of fp_peak_group_bounds over one graph, for many groups
 * and ties (an opaque handle; peak_group.c). */
typedef struct fp_peak_cuts fp_peak_cuts;

/* Sets *out to a handle for the finalized graph g and the fusion-size
 * limit (0: the graph's), which must outlive it.  FP_EARG (NULL out, a
 * NULL or unfinalized graph), FP_ENOMEM. */
fp_status fp_peak_cuts_create(const fp_graph *g, int32_t max_fusion_size,
                              fp_peak_cuts **out, fp_error *err);

/* Frees the handle.  NULL is a no-op. */
void fp_peak_cuts_destroy(fp_peak_cuts *h);

/* Sets *out to a lower bound on the peak of every legal plan that runs
 * the ng >= 1 nodes of grp in one group (a group of some legal plan) and
 * the two nodes of each tie at one step: fp_peak_group_bounds' figure at
 * G = grp grown by the chains of ties that must run at its step, a chain
 * that holds a node placed on one side kept on that side, the free nodes
 * of every other chain kept on one side of it (peak_group.c), less the
 * group's in-place cap.  Ties that no placement meets are dropped.  side (NULL,
 * or one entry per node) gets where the cheapest placement runs each node:
 * FP_PEAK_BEFORE, FP_PEAK_IN (in the grown group) or FP_PEAK_AFTER.  Past the
 * min cuts' size limits *out is the resident bytes and every side FP_PEAK_IN.
 * FP_EARG (a NULL pointer, ng < 1, a node out of range), FP_ENOMEM (then *out
 * is still valid). */
fp_status fp_peak_cuts_tied(fp_peak_cuts *h, const int32_t *grp, int32_t ng,
                            const fp_peak_tie *ties, int32_t n_ties,
                            uint64_t *out, int8_t *side, fp_error *err);

/* fp_peak_cuts_tied over the plans that also run each node v with
 * place[v] == FP_PEAK_BEFORE at or before the group's step and each with
 * FP_PEAK_AFTER at or after it (place: one entry per node, 0 for free,
 * or NULL).  Such nodes stay on their side; a pair of the group's nodes
 * whose input is written at or after the step, or read there or later by
 * a node other than a fused reader, saves nothing (the in-place cap
 * drops it).  Fails as fp_peak_cuts_tied. */
fp_status fp_peak_cuts_placed(fp_peak_cuts *h, const int32_t *grp, int32_t ng,
                              const fp_peak_tie *ties, int32_t n_ties,
                              const int8_t *place, uint64_t *out, int8_t *side,
                              fp_error *err);

/* The most bytes in-place takeovers (docs/cost-model.md, "In-place
 * kernels") can save at any one step of a plan whose groups hold at most
 * max_fusion_size nodes (capped as fp_peak_bound's): the sum of the
 * largest per-node savings (the distinct buffers a node's pairs write)
 * over that many nodes.  0 for a graph without pairs.  Never fails (out
 * of memory it sums over every node, still an upper bound). */
uint64_t fp_inplace_step_cap(const fp_graph *g, int32_t max_fusion_size);

/* Pairs of nodes that no legal plan with peak <= limit puts in one group
 * (peak_pairs.c), found by
 * the per-node rule and repeated on the restricted graph until nothing new
 * turns up (a few rounds at most).  On a graph with in-place pairs each
 * figure gives up what takeovers may save at its step.  Sets *out to a
 * finalized copy of g with those pairs added as unfusible (the caller
 * destroys it), or to NULL when there is none or g is past the per-node
 * rule's size limits; *n_pairs to the pairs added.  Every legal plan of g
 * within the limit is a legal plan of *out with the same costs.  FP_ENOMEM, or
 * a graph-building error. */
fp_status fp_peak_restrict(const fp_graph *g, int32_t max_fusion_size,
                           uint64_t limit, fp_graph **out, int32_t *n_pairs,
                           fp_error *err);

/* The plans of g within `limit` that put the nodes of each group
 * nodes[start[i] .. start[i + 1]) (i < n_groups, as fp_peak_group_bounds
 * takes them) in one group, each: *none is set when there is none (the
 * min cut at the first group G, less what takeovers may save at its step,
 * is over the limit, or the groups order two nodes of one group apart);
 * else *pairs (the caller frees it; 2 ints a pair) holds *n_pairs pairs
 * that no such plan groups: the far rule at G, and, when the groups
 * constrain the order (a group of two nodes or more), the far rule at
 * every other node in that order, in a few rounds, each adding to the
 * order where a member of a group must run relative to a node's step
 * (peak_pairs.c).  Past the min cuts' size limits nothing is found.
 * FP_EARG (a NULL pointer, an unfinalized graph, malformed groups) or
 * FP_ENOMEM. */
fp_status fp_peak_group_far(const fp_graph *g, int32_t max_fusion_size,
                            uint64_t limit, const int32_t *nodes,
                            const int32_t *start, int32_t n_groups, bool *none,
                            int32_t **pairs, int32_t *n_pairs, fp_error *err);

/* Test hook: on == 0 turns fp_peak_restrict's second rule (far pairs: a
 * node forced to one side of a step, peak_bound.c) off from now on,
 * on != 0 back on.  For the unit
 * tests only (they show the rule adds pairs); not thread-safe. */
void fp_peak_test_far_rule(int on);

/* Test hook: on == 0 turns the min-cut rule's refunded cut (each in-place
 * takeover refunded where the cut's placement lets it apply, rather than
 * the step's whole cap, peak_bound.c) off from now on, on != 0 back on.
 * For the unit tests only (they show it raises the bound); not
 * thread-safe. */
void fp_peak_test_refunds(int on);

#endif /* FP_PEAK_BOUND_H */
