/*
 * peak_group.h -- min cuts at whole groups, for the second level's bound
 * (peak_group.c; docs/cost-model.md, "The peak bound", and
 * docs/solver.md, "The second level's bound").  Private: used by
 * solver/bound/forced.c, peak_pairs.c and the tests.
 */
#ifndef FP_PEAK_GROUP_H
#define FP_PEAK_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "peak_bound.h"
#include "status.h"

/* Whether u == v or a path of buffers leads from u to v (false past the
 * size limits). */
bool fp_peak_cuts_precedes(const fp_peak_cuts *pc, int32_t u, int32_t v);

/* Sets *out to a lower bound on the peak of every legal plan of the graph
 * that runs the ng nodes of grp (convex: every node on a path between two
 * of them is among them) in one group and, where tie is not NULL, runs
 * every two nodes u, v with tie[u] == tie[v] in one group (tie[v] in
 * [0, n): a class name per node, the caller vouches for the classes): the
 * min cut at G, grp with the classes of its nodes, with each node tied to
 * one that runs before (after) G's step placed before (after) it and the
 * other free nodes of a class on one side, less what in-place takeovers
 * may save at that step (fp_peak_cuts_placed with the classes as ties). Classes
 * that would place a node on both sides leave every node but G's as the order
 * says. FP_EARG (ng < 1, a node out of range), FP_ENOMEM (*out then the
 * resident bytes). */
fp_status fp_peak_cuts_group(fp_peak_cuts *pc, const int32_t *grp, int32_t ng,
                             const int32_t *tie, uint64_t *out, fp_error *err);

/* FP_EARG (err filled, naming fp_peak_group_bounds) unless the groups
 * nodes[start[i] .. start[i + 1]) (i < n_groups) are well formed:
 * n_groups >= 0, nodes and start not NULL when n_groups > 0, start[] from
 * 0 and never falling, every node an index of the finalized graph g;
 * else FP_OK.  Shared with fp_peak_group_far (peak_pairs.c). */
fp_status fp_peak_check_groups(const fp_graph *g, const int32_t *nodes,
                               const int32_t *start, int32_t n_groups,
                               fp_error *err);

#endif /* FP_PEAK_GROUP_H */
